//! The `plan` of a WebApp operator upgrade, on any cluster (`tests/runtime/plan.rs` on the embedded one,
//! `tests/envtest/plan.rs` on kube-apiserver): before the operator ran, the plan lists every write of the first
//! pass (the Deployment, the Service, the status); once release 1 converged, release 1 plans nothing (exit code
//! 0); release 2, whose desired Deployment differs in one field, plans exactly that field of that Deployment
//! (exit code 2). No plan stores anything or sends an event.

use std::time::Duration;

use examples::webapp::{
    CONTROLLER_NAME, WebApp, desired_deployment, desired_service, reflect_deployment,
    reflect_service, sample,
};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Service};
use kube::api::{Api, PostParams};
use kube::{Client, ResourceExt};
use kubewright::cli::{App, RunFlags};
use kubewright::plan::{EXIT_CHANGES, EXIT_UNCHANGED, ParentSelector, Plan};
use kubewright::{ChildReconciler, Context, Operator, Reconciler};

/// The field release 2 sets on every WebApp's Deployment, and its value.
pub const RELEASE_TWO_REVISION_HISTORY: i32 = 3;

/// Release 1: the WebApp example's reconciler.
pub fn release_one() -> Reconciler<WebApp> {
    examples::webapp::reconciler()
}

/// Release 2: release 1 with `spec.revisionHistoryLimit` set on the desired Deployment.
pub fn release_two() -> Reconciler<WebApp> {
    Reconciler::new(CONTROLLER_NAME)
        .references::<ConfigMap>(|app: &WebApp| app.spec.config_map.iter().cloned().collect())
        .step(
            ChildReconciler::new("deployment", |app: &WebApp, cx: &mut Context| {
                let mut desired = desired_deployment(app, cx)?;
                if let Some(spec) = desired.as_mut().and_then(|d| d.spec.as_mut()) {
                    spec.revision_history_limit = Some(RELEASE_TWO_REVISION_HISTORY);
                }
                Ok(desired)
            })
            .reflect(reflect_deployment),
        )
        .step(ChildReconciler::new("service", desired_service).reflect(reflect_service))
}

/// An operator binary of `release` watching `namespace`.
pub fn app(release: Reconciler<WebApp>) -> App {
    App::new("webapp-operator").reconciler(release)
}

/// The flags of a plan of `namespace`.
pub fn flags(namespace: &str) -> RunFlags {
    RunFlags {
        namespaces: vec![namespace.to_string()],
        ..RunFlags::default()
    }
}

/// The lines a diff adds or removes (headers left out).
pub fn changed_lines(diff: &str) -> Vec<String> {
    diff.lines()
        .filter(|l| !l.starts_with("---") && !l.starts_with("+++"))
        .filter(|l| l.starts_with('-') || l.starts_with('+'))
        .map(str::to_string)
        .collect()
}

/// What the cluster holds of the WebApp `web`, its children and the events of `namespace`, to compare before
/// and after a plan.
async fn stored(client: &Client, namespace: &str) -> Vec<Option<String>> {
    let apps: Api<WebApp> = Api::namespaced(client.clone(), namespace);
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), namespace);
    let services: Api<Service> = Api::namespaced(client.clone(), namespace);
    let events: Api<k8s_openapi::api::events::v1::Event> =
        Api::namespaced(client.clone(), namespace);
    let rv = |o: Option<String>| o;
    vec![
        rv(apps
            .get_opt("web")
            .await
            .unwrap()
            .and_then(|a| a.resource_version())),
        rv(deployments
            .get_opt("web")
            .await
            .unwrap()
            .and_then(|d| d.resource_version())),
        rv(services
            .get_opt("web")
            .await
            .unwrap()
            .and_then(|s| s.resource_version())),
        Some(
            events
                .list(&Default::default())
                .await
                .unwrap()
                .items
                .len()
                .to_string(),
        ),
    ]
}

/// `plan` of `release` on `namespace`, checking that it stores nothing, sends no event and makes no write that
/// is not a dry run (`writes` counts the writes the cluster received that were not dry runs, events included).
async fn plan(
    client: &Client,
    namespace: &str,
    release: Reconciler<WebApp>,
    selector: Option<ParentSelector>,
    writes: &(dyn Fn() -> usize + Sync),
) -> Plan {
    let (before, sent) = (stored(client, namespace).await, writes());
    let plan = app(release)
        .plan(client.clone(), &flags(namespace), selector)
        .await
        .unwrap();
    // A write that landed would show in a watch first: give it time.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        stored(client, namespace).await,
        before,
        "the plan changed the cluster\n{plan}"
    );
    assert_eq!(
        writes(),
        sent,
        "the plan sent a write that is not a dry run\n{plan}"
    );
    plan
}

/// Waits until the WebApp `web` and its Deployment stay unchanged for a second after their first pass.
async fn converged(client: &Client, namespace: &str) {
    let apps: Api<WebApp> = Api::namespaced(client.clone(), namespace);
    let mut last = Vec::new();
    let mut still = 0;
    for _ in 0..600 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let first_pass = apps
            .get_opt("web")
            .await
            .unwrap()
            .and_then(|a| a.status)
            .is_some_and(|s| s.observed_generation == Some(1));
        let now = stored(client, namespace).await;
        if first_pass && now == last {
            still += 1;
            if still == 10 {
                return;
            }
        } else {
            still = 0;
        }
        last = now;
    }
    panic!("the WebApp did not converge");
}

/// The whole scenario on the cluster of `client` (with `namespace` existing and empty).
pub async fn upgrade(client: Client, namespace: &str, writes: &(dyn Fn() -> usize + Sync)) {
    let apps: Api<WebApp> = Api::namespaced(client.clone(), namespace);
    let mut web = sample("web", None);
    web.metadata.namespace = Some(namespace.to_string());
    apps.create(&PostParams::default(), &web).await.unwrap();

    // Before the operator ran: the first pass's writes, none stored.
    let first = plan(&client, namespace, release_one(), None, writes).await;
    assert_eq!(first.exit_code(), EXIT_CHANGES, "{first}");
    assert_eq!(first.parents.len(), 1, "{first}");
    let planned: Vec<String> = first.parents[0]
        .writes
        .iter()
        .map(|w| format!("{} {}", w.verb, w.target.kind))
        .collect();
    assert!(planned.len() >= 3, "{first}");
    for kind in ["Deployment", "Service", "WebApp"] {
        assert!(
            planned.iter().any(|w| w.ends_with(kind)),
            "no write to a {kind}: {planned:?}\n{first}"
        );
    }
    assert!(planned.contains(&"status WebApp".to_string()), "{first}");
    let deployment = first.parents[0]
        .writes
        .iter()
        .find(|w| w.target.kind == "Deployment")
        .unwrap();
    assert!(deployment.live.is_none(), "{first}");
    assert!(deployment.diff.contains("+  replicas: 2"), "{first}");

    // Release 1 converges.
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(
        Operator::for_namespaces(client.clone(), [namespace.to_string()])
            .controller(release_one())
            .run_until(async move {
                let _ = stopped.await;
            }),
    );
    converged(&client, namespace).await;
    let _ = stop.send(());
    running.await.unwrap().unwrap();

    // The same release: nothing to do.
    let same = plan(&client, namespace, release_one(), None, writes).await;
    assert_eq!(same.exit_code(), EXIT_UNCHANGED, "{same}");
    assert_eq!(same.parents.len(), 1, "{same}");
    assert!(same.to_string().contains("WebApp "), "{same}");
    assert!(same.to_string().contains("/web: no change"), "{same}");

    // Release 2: exactly the one field of the one Deployment. The runtime's first apply to a child it created
    // with a POST moves the POST's managed fields into the apply's entry (a patch that changes nothing else) and
    // applies again; the WebApp's status may follow what the dry-run answer says of the Deployment (its new
    // generation not observed yet), as it would after a real upgrade. Nothing else is written.
    let selector = ParentSelector::parse(&format!("{namespace}/web"), Some("webapps"));
    let upgrade = plan(&client, namespace, release_two(), Some(selector), writes).await;
    println!("release 2's plan:\n{upgrade}");
    assert_eq!(upgrade.exit_code(), EXIT_CHANGES, "{upgrade}");
    assert_eq!(upgrade.parents.len(), 1, "{upgrade}");
    let writes_of_web = &upgrade.parents[0].writes;
    let mut field_changed = false;
    for write in writes_of_web {
        let changed = changed_lines(&write.diff);
        match (write.verb, write.target.kind.as_str()) {
            (_, "Deployment") => {
                assert_eq!(write.target.name, "web");
                assert!(
                    changed.iter().all(|l| l.contains("revisionHistoryLimit:")),
                    "only revisionHistoryLimit changes: {changed:?}\n{upgrade}"
                );
                field_changed |= changed.contains(&format!(
                    "+  revisionHistoryLimit: {RELEASE_TWO_REVISION_HISTORY}"
                ));
            }
            ("status", "WebApp") => {}
            _ => panic!(
                "an unexpected write: {} {}\n{upgrade}",
                write.verb, write.target
            ),
        }
    }
    assert!(
        field_changed,
        "the plan does not show the changed field\n{upgrade}"
    );
    let live: Api<Deployment> = Api::namespaced(client.clone(), namespace);
    let live = live.get("web").await.unwrap();
    assert_ne!(
        live.spec.unwrap().revision_history_limit,
        Some(RELEASE_TWO_REVISION_HISTORY),
        "the plan wrote the Deployment"
    );

    // A parent no controller has.
    let missing = ParentSelector::parse(&format!("{namespace}/nope"), None);
    let err = app(release_two())
        .plan(client.clone(), &flags(namespace), Some(missing))
        .await
        .unwrap_err();
    assert!(format!("{err:?}").contains("no parent"), "{err:?}");
}
