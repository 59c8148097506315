//! The WebApp operator upgraded from `v1` to `v2`, as kubectl sees it, the same on the embedded cluster and on
//! a real kube-apiserver: WebApps written at `v1` while the CRD had only `v1` and the previous release (a
//! reconciler of `v1` WebApps, [`previous_release`]) ran; the new release (`examples::webapp_derive::app()`)
//! installs the CRD with both versions, `v2` stored, pointed at its conversion webhook; kubectl reads and
//! patches the WebApps at both versions; the storage migration moves every object to `v2` and drops `v1`
//! from `status.storedVersions`; the children follow every change.

use std::future::Future;
use std::time::Duration;

use examples::webapp::{self, v1};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::Api;
use kube::{Client, CustomResourceExt};
use kubewright::cli::CliError;
use kubewright::{ChildReconciler, Context, Error, Operator, Reconciler};
use serde_json::{Value, json};

use crate::kubectl::Kubectl;

/// The CRD's name.
pub const CRD: &str = "webapps.example.dev";

/// What kubectl prints for every request at `v1`.
pub const WARNING: &str = "Warning: example.dev/v1 WebApp is deprecated; use example.dev/v2";

/// The previous release of the operator: the same children, from `v1` WebApps (each read as `v2` to build
/// them, so that they are the children the new release wants for the same WebApp).
pub fn previous_release() -> Reconciler<v1::WebApp> {
    fn hub(app: &v1::WebApp) -> kubewright::Result<webapp::WebApp> {
        webapp::WebApp::try_from(app.clone())
            .map_err(|e| Error::invalid_spec("Unconvertible", e.to_string()))
    }
    Reconciler::new(webapp::CONTROLLER_NAME)
        .step(ChildReconciler::new(
            "deployment",
            |app: &v1::WebApp, cx: &mut Context| webapp::desired_deployment(&hub(app)?, cx),
        ))
        .step(ChildReconciler::new(
            "service",
            |app: &v1::WebApp, cx: &mut Context| webapp::desired_service(&hub(app)?, cx),
        ))
}

/// Runs the upgrade in namespace `ns` of a cluster without the WebApp CRD. `upgrade` runs the new release until
/// the future it is given resolves (e.g. `App::run_on_cluster` with `--install-crds` and a webhook address).
pub async fn upgrade<R>(
    k: &Kubectl,
    client: &Client,
    ns: &str,
    upgrade: impl FnOnce(tokio::sync::oneshot::Receiver<()>) -> R,
) where
    R: Future<Output = Result<(), CliError>> + Send + 'static,
{
    // Before: the v1 CRD alone, the previous release running, WebApps written at v1.
    kubewright::cli::ensure_crd(client, v1::WebApp::crd())
        .await
        .unwrap();
    let (stop_old, stopped) = tokio::sync::oneshot::channel::<()>();
    let old = tokio::spawn(
        Operator::new(client.clone())
            .controller(previous_release())
            .run_until(async move {
                let _ = stopped.await;
            }),
    );
    let apps = "apiVersion: example.dev/v1\nkind: WebApp\nmetadata:\n  name: shop\nspec:\n  image: nginx:1.27\n  replicas: 2\n  port: 9000\n---\napiVersion: example.dev/v1\nkind: WebApp\nmetadata:\n  name: blog\nspec:\n  image: nginx:1.27\n";
    k.ok_with(&["apply", "-n", ns, "-f", "-"], Some(apps)).await;
    children_become(client, ns, "shop", 2, &[("http", 9000)], None).await;
    children_become(client, ns, "blog", 1, &[("http", 8080)], None).await;
    let _ = stop_old.send(());
    old.await.unwrap().unwrap();

    // The upgrade: the new release installs v1 and v2, v2 stored, converted by its webhook.
    let (stop_new, stopped) = tokio::sync::oneshot::channel::<()>();
    let new = tokio::spawn(upgrade(stopped));
    let shop = eventually("the WebApps served at v2", async || {
        let (ok, out, _) = k
            .run(
                &[
                    "get",
                    "webapps.v2.example.dev",
                    "shop",
                    "-n",
                    ns,
                    "-o",
                    "json",
                ],
                None,
            )
            .await;
        ok.then(|| serde_json::from_str::<Value>(&out).unwrap())
    })
    .await;
    assert_eq!(
        shop["spec"],
        json!({"image": "nginx:1.27", "scale": {"replicas": 2}, "ports": [{"name": "http", "port": 9000}]})
    );
    let (ok, out, err) = k
        .run(
            &[
                "get",
                "webapps.v1.example.dev",
                "blog",
                "-n",
                ns,
                "-o",
                "json",
            ],
            None,
        )
        .await;
    assert!(ok, "{err}");
    assert!(err.contains(WARNING), "no deprecation warning: {err}");
    let blog: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(blog["apiVersion"], "example.dev/v1");
    assert_eq!(blog["spec"], json!({"image": "nginx:1.27", "replicas": 1}));

    // A patch at v2 of what only v2 expresses: the children follow, v1 reads it in its annotation.
    let patch = json!({"spec": {
        "scale": {"maxSurge": "50%"},
        "ports": [{"name": "http", "port": 9000}, {"name": "metrics", "port": 9090}],
    }});
    k.ok(&[
        "patch",
        "webapps.v2.example.dev",
        "shop",
        "-n",
        ns,
        "--type",
        "merge",
        "-p",
        &patch.to_string(),
    ])
    .await;
    let both = [("http", 9000), ("metrics", 9090)];
    children_become(client, ns, "shop", 2, &both, Some("50%")).await;
    let shop = get(k, ns, "v1", "shop").await;
    assert_eq!(shop["spec"]["port"], 9000);
    assert_eq!(
        shop["metadata"]["annotations"][v1::V2_FIELDS],
        r#"{"maxSurge":"50%","morePorts":[{"name":"metrics","port":9090}]}"#
    );

    // A patch at the deprecated v1: what only v2 holds is kept.
    let (ok, _, err) = k
        .run(
            &[
                "patch",
                "webapps.v1.example.dev",
                "shop",
                "-n",
                ns,
                "--type",
                "merge",
                "-p",
                r#"{"spec":{"replicas":3}}"#,
            ],
            None,
        )
        .await;
    assert!(ok, "{err}");
    assert!(err.contains(WARNING), "no deprecation warning: {err}");
    let shop = get(k, ns, "v2", "shop").await;
    assert_eq!(
        shop["spec"]["scale"],
        json!({"replicas": 3, "maxSurge": "50%"})
    );
    assert!(
        shop["metadata"]["annotations"].get(v1::V2_FIELDS).is_none(),
        "{shop}"
    );
    children_become(client, ns, "shop", 3, &both, Some("50%")).await;

    // The storage migration: every WebApp stored at v2, v1 dropped from storedVersions.
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let stored = async || {
        crds.get(CRD)
            .await
            .unwrap()
            .status
            .and_then(|s| s.stored_versions)
            .unwrap_or_default()
    };
    assert_eq!(stored().await, ["v1", "v2"]);
    let first = kubewright::conversion::migrate(client, CRD).await.unwrap();
    assert_eq!(
        (first.objects, first.storage.as_str()),
        (2, "v2"),
        "{first:?}"
    );
    assert_eq!(first.stored_before, ["v1", "v2"]);
    assert_eq!(stored().await, ["v2"]);
    // The operator's `migrate` subcommand, as a user runs it, then once more: nothing left to rewrite.
    let migrate = examples::webapp_derive::app();
    let kubeconfig = k.kubeconfig.to_string_lossy().into_owned();
    let cli = migrate
        .try_parse_from(["webapp", "--kubeconfig", &kubeconfig, "migrate"])
        .unwrap();
    migrate.run_with(cli, std::future::pending()).await.unwrap();
    assert_eq!(stored().await, ["v2"]);
    let again = kubewright::conversion::migrate(client, CRD).await.unwrap();
    assert_eq!((again.objects, again.rewritten), (2, 0), "{again:?}");

    // The children are still right, and the WebApps still read at both versions.
    children_become(client, ns, "blog", 1, &[("http", 8080)], None).await;
    children_become(client, ns, "shop", 3, &both, Some("50%")).await;
    assert_eq!(get(k, ns, "v1", "blog").await["spec"]["replicas"], 1);
    assert_eq!(
        get(k, ns, "v2", "shop").await["spec"]["scale"]["replicas"],
        3
    );

    let _ = stop_new.send(());
    tokio::time::timeout(Duration::from_secs(30), new)
        .await
        .expect("the new release stops")
        .unwrap()
        .unwrap();
}

/// The WebApp `name` at `version`, as JSON.
async fn get(k: &Kubectl, ns: &str, version: &str, name: &str) -> Value {
    let resource = format!("webapps.{version}.example.dev");
    serde_json::from_str(
        &k.ok(&["get", &resource, name, "-n", ns, "-o", "json"])
            .await,
    )
    .unwrap()
}

/// Waits (about 60 s) until the WebApp `name`'s Deployment runs `replicas` pods with `ports` and `max_surge`,
/// and its Service exposes `ports`.
async fn children_become(
    client: &Client,
    ns: &str,
    name: &str,
    replicas: i32,
    ports: &[(&str, i32)],
    max_surge: Option<&str>,
) {
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), ns);
    let services: Api<Service> = Api::namespaced(client.clone(), ns);
    let want: Vec<Value> = ports.iter().map(|(n, p)| json!([n, p])).collect();
    let mut last = (Value::Null, Value::Null);
    for _ in 0..300 {
        let d = deployments
            .get_opt(name)
            .await
            .unwrap()
            .map(|d| serde_json::to_value(d).unwrap());
        let s = services
            .get_opt(name)
            .await
            .unwrap()
            .map(|s| serde_json::to_value(s).unwrap());
        if let (Some(d), Some(s)) = (d, s) {
            let container_ports: Vec<Value> =
                d["spec"]["template"]["spec"]["containers"][0]["ports"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|p| json!([p["name"], p["containerPort"]]))
                    .collect();
            let service_ports: Vec<Value> = s["spec"]["ports"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|p| json!([p["name"], p["targetPort"]]))
                .collect();
            let surge = d["spec"]["strategy"]["rollingUpdate"]["maxSurge"].as_str();
            if d["spec"]["replicas"] == replicas
                && container_ports == want
                && service_ports == want
                && (max_surge.is_none() || surge == max_surge)
            {
                return;
            }
            last = (d["spec"].clone(), s["spec"].clone());
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!("the children of {name} never had {replicas} replicas and ports {ports:?}: {last:?}");
}

async fn eventually<T>(what: &str, mut f: impl AsyncFnMut() -> Option<T>) -> T {
    for _ in 0..300 {
        if let Some(v) = f().await {
            return v;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!("timed out waiting for: {what}");
}
