//! `plan` on the embedded cluster (`kubewright::plan`): the WebApp upgrade scenario (`tests::plan_scenario`),
//! every request of the plans a dry run; and the `plan` subcommand as a user runs it, against the served
//! embedded cluster's kubeconfig, with its exit codes.

use examples::webapp::cli::ensure_crd;
use kubewright::testing::ApiServer;
use kubewright::testing::apiserver::Verb;
use tests::plan_scenario::{app, release_one, release_two, upgrade};

/// Writes the server stored or was asked to (events included) that were not dry runs.
fn real_writes(server: &ApiServer) -> usize {
    server
        .requests()
        .iter()
        .filter(|r| {
            matches!(
                r.verb,
                Some(Verb::Create | Verb::Update | Verb::Patch | Verb::Delete)
            ) && !r.query.contains("dryRun")
        })
        .count()
}

#[tokio::test]
async fn an_upgrade_plans_exactly_the_changed_field_on_the_embedded_cluster() {
    let server = ApiServer::new();
    let client = server.client();
    ensure_crd(&client).await.unwrap();
    upgrade(client, "default", &|| real_writes(&server)).await;
}

/// `plan --kubeconfig F [--parent NS/NAME]`, the exit code of its result.
async fn plan_command(
    kubeconfig: &str,
    release: kubewright::Reconciler<examples::webapp::WebApp>,
    parent: Option<&str>,
) -> u8 {
    let app = app(release);
    let mut args = vec!["webapp", "--kubeconfig", kubeconfig, "plan"];
    if let Some(p) = parent {
        args.extend(["--parent", p]);
    }
    let cli = app.try_parse_from(args).unwrap();
    match app.run_with(cli, std::future::pending()).await {
        Ok(()) => 0,
        Err(e) => e.exit_code(),
    }
}

#[tokio::test]
async fn the_plan_subcommand_exits_0_or_2_on_the_served_embedded_cluster() {
    let server = ApiServer::new();
    let client = server.client();
    ensure_crd(&client).await.unwrap();
    let serving = server.serve("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let dir = std::env::temp_dir().join(format!("plan-embedded-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let kubeconfig = dir.join("kubeconfig");
    serving.write_kubeconfig(&kubeconfig).unwrap();
    let kubeconfig = kubeconfig.to_str().unwrap().to_string();
    let installed = real_writes(&server);

    // No parent yet: nothing to plan.
    assert_eq!(plan_command(&kubeconfig, release_one(), None).await, 0);
    let apps: kube::Api<examples::webapp::WebApp> =
        kube::Api::namespaced(client.clone(), "default");
    apps.create(&Default::default(), &examples::webapp::sample("web", None))
        .await
        .unwrap();
    assert_eq!(plan_command(&kubeconfig, release_one(), None).await, 2);
    assert_eq!(
        plan_command(&kubeconfig, release_two(), Some("default/web")).await,
        2
    );
    // A parent that does not exist: the plan cannot be made.
    assert_eq!(
        plan_command(&kubeconfig, release_one(), Some("default/nope")).await,
        1
    );
    assert_eq!(
        real_writes(&server),
        installed + 1,
        "only the WebApp's create was stored"
    );
    serving.shutdown(std::time::Duration::from_secs(1)).await;
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn plan_embedded_plans_the_first_passes_over_the_samples() {
    let app = examples::webapp::cli::by_hand();
    let cli = app
        .try_parse_from(["webapp", "--embedded", "plan"])
        .unwrap();
    let err = app
        .run_with(cli, std::future::pending())
        .await
        .expect_err("the sample WebApp's first pass writes");
    assert_eq!(err.exit_code(), kubewright::plan::EXIT_CHANGES, "{err}");
    let app = examples::webapp::cli::by_hand();
    let cli = app
        .try_parse_from(["webapp", "--embedded", "plan", "--parent", "default/nope"])
        .unwrap();
    let err = app.run_with(cli, std::future::pending()).await.unwrap_err();
    assert_eq!(err.exit_code(), kubewright::plan::EXIT_FAILED);
    assert!(err.to_string().contains("cannot plan"), "{err}");
}

/// A finalizer added and a status written are writes: the plan lists both, and stores neither.
#[tokio::test]
async fn a_finalizer_add_and_a_status_write_are_planned() {
    use examples::database::{Database, app, sample};
    use kube::CustomResourceExt;
    let server = ApiServer::new();
    let client = server.client();
    kubewright::cli::ensure_crd(&client, Database::crd())
        .await
        .unwrap();
    let dbs: kube::Api<Database> = kube::Api::namespaced(client.clone(), "default");
    dbs.create(&Default::default(), &sample("db", "16"))
        .await
        .unwrap();
    let plan = app()
        .plan(client.clone(), &kubewright::cli::RunFlags::default(), None)
        .await
        .unwrap();
    let writes = &plan.parents[0].writes;
    let finalizer = writes
        .iter()
        .find(|w| w.target.kind == "Database" && w.verb != "status")
        .unwrap_or_else(|| panic!("no finalizer write\n{plan}"));
    assert!(
        finalizer
            .diff
            .contains("+  finalizers:\n+  - example.dev/database"),
        "{plan}"
    );
    assert!(
        writes
            .iter()
            .any(|w| w.verb == "status" && w.target.kind == "Database"),
        "{plan}"
    );
    let db = dbs.get("db").await.unwrap();
    assert!(
        db.metadata.finalizers.is_none() && db.status.is_none(),
        "{db:?}"
    );
}
