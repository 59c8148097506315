//! The WebApp operator (both examples: by hand and derived) on a real kube-apiserver, started through the
//! examples' own command line with `--kubeconfig`, as a user would run it against a cluster.
//!
//! Each run gets its own control plane, a whole cluster (kube-controller-manager, kube-scheduler and kwok's
//! simulated nodes): the WebApp's Ready waits for its Deployment, which the real Deployment controller rolls out
//! to Pods that kwok makes Ready. An operator watches every namespace, so two operators on one control plane
//! would reconcile each other's WebApps.

use std::time::Duration;

use clap::Parser;
use examples::webapp::cli::{Cli, SAMPLE_CONFIG_MAP, SAMPLE_NAME, by_hand, on_embedded};
use examples::webapp::{WebApp, sample, sample_config_map};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Service};
use kube::api::{Api, Patch, PatchParams, PostParams};
use kubewright::cli::{App, CliError};
use kubewright::testing::envtest::ControlPlane;
use serde_json::{Value, json};
use tests::webapp_snapshot::{config_hash, observed, ready};

use crate::support::{eventually, eventually_read};
use kubewright::testing::envtest::assets_or_skip;

/// The derived operator with the samples of `webapp-by-hand`, as `cargo run --example webapp` runs it.
fn derived() -> App {
    on_embedded(examples::webapp_derive::app())
}

/// One step's objects, without what differs between runs (uids, times, versions, cluster IPs, namespace).
#[derive(Debug, PartialEq)]
struct Snapshot {
    step: &'static str,
    objects: Value,
}

struct Run {
    apps: Api<WebApp>,
    deployments: Api<Deployment>,
    services: Api<Service>,
    configmaps: Api<ConfigMap>,
}

impl Run {
    async fn objects(&self) -> Value {
        let json = |o: Option<Value>| o.unwrap_or(Value::Null);
        json!({
            "webapp": json(self.apps.get_opt(SAMPLE_NAME).await.unwrap().map(|o| serde_json::to_value(o).unwrap())),
            "deployment": json(self.deployments.get_opt(SAMPLE_NAME).await.unwrap().map(|o| serde_json::to_value(o).unwrap())),
            "service": json(self.services.get_opt(SAMPLE_NAME).await.unwrap().map(|o| serde_json::to_value(o).unwrap())),
        })
    }

    /// Waits until `done` holds, then until no object changes for a while; returns the objects.
    async fn settle(&self, step: &'static str, done: impl Fn(&Value) -> bool) -> Value {
        let objects = eventually_read(step, async || self.objects().await, done).await;
        quiet(self, objects).await
    }

    async fn patch_app(&self, spec: Value) {
        self.apps
            .patch(
                SAMPLE_NAME,
                &PatchParams::default(),
                &Patch::Merge(json!({ "spec": spec })),
            )
            .await
            .unwrap();
    }
}

/// Waits until two looks a second apart see the same resource versions (bounded); returns the last look.
async fn quiet(run: &Run, mut objects: Value) -> Value {
    for _ in 0..30 {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let again = run.objects().await;
        if versions(&again) == versions(&objects) {
            return again;
        }
        objects = again;
    }
    panic!("the operator keeps writing: {objects:#}");
}

fn versions(objects: &Value) -> Vec<Value> {
    ["webapp", "deployment", "service"]
        .iter()
        .map(|k| objects[k]["metadata"]["resourceVersion"].clone())
        .collect()
}

/// Drops what differs between two runs: identities, times, versions, allocated IPs, the namespace.
fn normalize(v: Value) -> Value {
    // The owner's uid also appears inside managed fields (`k:{"uid":"…"}`), the namespace in messages.
    let mut text = v.to_string();
    for (pointer, placeholder) in [
        ("/webapp/metadata/uid", "<owner-uid>"),
        ("/webapp/metadata/namespace", "<namespace>"),
    ] {
        if let Some(value) = v.pointer(pointer).and_then(Value::as_str) {
            text = text.replace(value, placeholder);
        }
    }
    let mut v: Value = serde_json::from_str(&text).unwrap();
    for object in ["webapp", "deployment", "service"] {
        let o = &mut v[object];
        tests::normalize::strip_run_identity(o);
        if let Some(meta) = o.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.remove("namespace");
            // Entries of one second are ordered by manager, so two runs may list them either way.
            if let Some(entries) = meta.get_mut("managedFields").and_then(Value::as_array_mut) {
                let key = |e: &Value| {
                    ["manager", "operation", "subresource"]
                        .map(|k| e[k].as_str().unwrap_or("").to_owned())
                };
                entries.sort_by_key(key);
            }
        }
        if let Some(spec) = o.get_mut("spec").and_then(Value::as_object_mut) {
            spec.remove("clusterIP");
            spec.remove("clusterIPs");
        }
        // The Deployment controller's conditions say when it last looked.
        for condition in o
            .pointer_mut("/status/conditions")
            .and_then(Value::as_array_mut)
            .into_iter()
            .flatten()
        {
            if let Some(condition) = condition.as_object_mut() {
                condition.remove("lastUpdateTime");
            }
        }
    }
    v
}

/// Starts the example's command line with `--kubeconfig` for the control plane; returns a stop handle.
fn start_operator(
    variant: fn() -> App,
    kubeconfig: &std::path::Path,
) -> (
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<Result<(), CliError>>,
) {
    // The test's control plane has no CRD yet, and the admin kubeconfig may create one. The CRD has two
    // versions: installing it needs the conversion webhook served (the admission webhooks are served with it).
    let cli = Cli::try_parse_from([
        "webapp".as_ref(),
        "--kubeconfig".as_ref(),
        kubeconfig.as_os_str(),
        "--install-crds".as_ref(),
        "--webhook-bind-address".as_ref(),
        "127.0.0.1:0".as_ref(),
    ])
    .unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(variant().run_with(cli, async move {
        let _ = stopped.await;
    }));
    (stop, task)
}

async fn stop_operator(
    (stop, task): (
        tokio::sync::oneshot::Sender<()>,
        tokio::task::JoinHandle<Result<(), CliError>>,
    ),
) {
    let _ = stop.send(());
    tokio::time::timeout(Duration::from_secs(30), task)
        .await
        .expect("the operator stops")
        .unwrap()
        .unwrap();
}

async fn scenario(name: &str, variant: fn() -> App) -> Vec<Snapshot> {
    let cp = ControlPlane::builder()
        .name(name)
        .cluster()
        .start()
        .await
        .unwrap();
    let client = cp.client().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    cp.write_kubeconfig(&kubeconfig).unwrap();

    // The operator installs its CRD itself (as on a fresh cluster) and waits until it is established.
    let operator = start_operator(variant, &kubeconfig);
    let crds: Api<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition> =
        Api::all(client.clone());
    eventually("the operator installs its CRD", async || {
        crds.get_opt("webapps.example.dev").await.unwrap()
    })
    .await;
    let ns = cp.namespace().await.unwrap();
    let apps: Api<WebApp> = Api::namespaced(client.clone(), &ns);
    eventually("the CRD served at v2", async || {
        apps.list(&Default::default()).await.ok()
    })
    .await;
    let run = Run {
        apps: Api::namespaced(client.clone(), &ns),
        deployments: Api::namespaced(client.clone(), &ns),
        services: Api::namespaced(client.clone(), &ns),
        configmaps: Api::namespaced(client.clone(), &ns),
    };
    // The samples name the namespace `default`; here they go to the test's namespace.
    let mut config_map = sample_config_map(SAMPLE_CONFIG_MAP);
    config_map.metadata.namespace = None;
    run.configmaps
        .create(&PostParams::default(), &config_map)
        .await
        .unwrap();
    let mut app = sample(SAMPLE_NAME, Some(SAMPLE_CONFIG_MAP));
    app.metadata.namespace = None;
    run.apps.create(&PostParams::default(), &app).await.unwrap();

    let mut snapshots = Vec::new();
    let created = run
        .settle("created", |o| {
            observed(o) == Some(1)
                && ready(o) == Some(("True", "Ready"))
                && !o["service"].is_null()
                && !o["deployment"].is_null()
        })
        .await;
    // Children are owned by the WebApp and applied by the operator's field manager.
    let managers = |o: &Value| -> Vec<(String, String, String)> {
        o["metadata"]["managedFields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                let s = |k: &str| f[k].as_str().unwrap_or("").to_string();
                (s("manager"), s("operation"), s("subresource"))
            })
            .collect()
    };
    // The status is written through the status subresource under the controller's name.
    assert!(
        managers(&created["webapp"]).contains(&(
            "webapp-controller".into(),
            "Update".into(),
            "status".into()
        )),
        "{:?}",
        managers(&created["webapp"])
    );
    for child in ["deployment", "service"] {
        let owner = &created[child]["metadata"]["ownerReferences"][0];
        assert_eq!(owner["kind"], "WebApp", "{child}");
        assert_eq!(owner["controller"], true, "{child}");
        assert_eq!(owner["blockOwnerDeletion"], true, "{child}");
        assert_eq!(
            owner["uid"], created["webapp"]["metadata"]["uid"],
            "{child}"
        );
        // Created with a POST (create only: no read of the name first); the first apply moves these
        // fields into the controller's Apply entry (checked after the scaling below).
        let mut expected = vec![("webapp-controller".into(), "Update".into(), String::new())];
        if child == "deployment" {
            // The Deployment controller reports the rollout through the status subresource.
            expected.push((
                "kube-controller-manager".into(),
                "Update".into(),
                "status".into(),
            ));
        }
        // Two Update entries are ordered by time, then manager: either may come first within a second.
        let mut found = managers(&created[child]);
        found.sort();
        expected.sort();
        assert_eq!(found, expected, "{child}");
    }
    // The real server defaulted fields the operator never set, and the operator left them alone.
    assert_eq!(
        created["deployment"]["spec"]["strategy"]["type"],
        "RollingUpdate"
    );
    assert!(created["service"]["spec"]["clusterIP"].is_string());
    assert!(config_hash(&created).is_some());
    snapshots.push(Snapshot {
        step: "created",
        objects: normalize(created),
    });

    run.patch_app(json!({ "scale": { "replicas": 3 } })).await;
    let scaled = run
        .settle("scaled", |o| {
            observed(o) == Some(2) && o.pointer("/deployment/spec/replicas") == Some(&json!(3))
        })
        .await;
    assert_eq!(scaled["webapp"]["metadata"]["generation"], 2);
    // The change moved what the creation owned into the controller's Apply entry (reconcilers/created.rs).
    let deployment_managers = managers(&scaled["deployment"]);
    let entry = |operation: &str| ("webapp-controller".into(), operation.into(), String::new());
    assert!(
        deployment_managers.contains(&entry("Apply"))
            && !deployment_managers.contains(&entry("Update")),
        "{deployment_managers:?}"
    );
    snapshots.push(Snapshot {
        step: "scaled",
        objects: normalize(scaled.clone()),
    });

    // The port changes, the Service's first apply since its `POST`: the port the `POST` set moves into the
    // controller's Apply entry (reconcilers/created.rs), so the apply replaces it rather than keeping it beside
    // the new one, both named `http`, which kube-apiserver refuses (`spec.ports[1].name: Duplicate value`).
    run.patch_app(json!({ "ports": [{ "name": "http", "port": 9090 }] }))
        .await;
    let ported = run
        .settle("port changed", |o| {
            observed(o) == Some(3)
                && ready(o) == Some(("True", "Ready"))
                && o.pointer("/service/spec/ports/0/port") == Some(&json!(9090))
        })
        .await;
    let ports = &ported["service"]["spec"]["ports"];
    assert_eq!(ports.as_array().map(Vec::len), Some(1), "{ports}");
    assert_eq!(ports[0]["name"], "http");
    assert_eq!(ports[0]["targetPort"], 9090);
    let container_ports =
        &ported["deployment"]["spec"]["template"]["spec"]["containers"][0]["ports"];
    assert_eq!(
        container_ports,
        &json!([{"name": "http", "containerPort": 9090, "protocol": "TCP"}])
    );
    snapshots.push(Snapshot {
        step: "port changed",
        objects: normalize(ported.clone()),
    });

    run.configmaps
        .patch(
            SAMPLE_CONFIG_MAP,
            &PatchParams::default(),
            &Patch::Merge(json!({ "data": { "index.html": "<h1>changed</h1>" } })),
        )
        .await
        .unwrap();
    let before = config_hash(&ported);
    let edited = run
        .settle("configmap edited", |o| config_hash(o) != before)
        .await;
    snapshots.push(Snapshot {
        step: "configmap edited",
        objects: normalize(edited),
    });

    run.patch_app(json!({ "configMap": "missing" })).await;
    let missing = run
        .settle("configmap missing", |o| {
            observed(o) == Some(4) && ready(o) == Some(("False", "ConfigMapNotFound"))
        })
        .await;
    snapshots.push(Snapshot {
        step: "configmap missing",
        objects: normalize(missing.clone()),
    });

    // A restarted operator finds everything converged and writes nothing.
    stop_operator(operator).await;
    let operator = start_operator(variant, &kubeconfig);
    let after_restart = quiet(&run, run.objects().await).await;
    assert_eq!(
        versions(&after_restart),
        versions(&missing),
        "a restarted operator rewrote converged objects"
    );
    stop_operator(operator).await;
    snapshots
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_webapp_operators_converge_the_same_way_on_a_real_apiserver() {
    if assets_or_skip("webapp on a real control plane").is_none() {
        return;
    }
    let by_hand = scenario("webapp-by-hand", by_hand).await;
    let derived = scenario("webapp-derived", derived).await;
    assert_eq!(by_hand.len(), derived.len());
    for (h, d) in by_hand.iter().zip(&derived) {
        assert_eq!(h.step, d.step);
        assert_eq!(
            h.objects, d.objects,
            "objects differ after step `{}`",
            h.step
        );
    }
}
