//! The WebApp operator written twice, by hand (`examples::webapp`) and with the derive
//! (`examples::webapp_derive`): one CRD, one scenario, the same outcomes.
//!
//! The scenario runs each operator on its own in-memory server: create a WebApp with its ConfigMap, scale it,
//! edit the ConfigMap, point it at a missing ConfigMap. After each step, once the operator is quiet, it takes a
//! snapshot of the WebApp and its children (without uids, times and resource versions), of the events on the
//! WebApp and of the kinds of writes the operator made; the two runs must take the same snapshots, and a quiet
//! operator writes nothing. Creating the WebApp makes one event per child, each published once.

use std::collections::BTreeSet;
use std::time::Duration;

use examples::webapp::cli::{SAMPLE_CONFIG_MAP, SAMPLE_NAME, ensure_crd};
use examples::webapp::{WebApp, sample, sample_config_map};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Service};
use k8s_openapi::api::events::v1::Event;
use kube::CustomResourceExt;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kubewright::Operator;
use kubewright::testing::ApiServer;
use serde_json::{Value, json};
use tests::webapp_snapshot::{config_hash, observed, ready};

#[test]
fn both_operators_install_the_same_crd() {
    assert_eq!(
        serde_json::to_value(examples::webapp::WebApp::crd()).unwrap(),
        serde_json::to_value(examples::webapp_derive::WebApp::crd()).unwrap()
    );
    // Both versions, v2 stored, v1 deprecated with the same warning.
    assert_eq!(
        serde_json::to_value(examples::webapp::versions().crd().unwrap()).unwrap(),
        serde_json::to_value(examples::webapp_derive::WebApp::versions().crd().unwrap()).unwrap()
    );
}

#[test]
fn both_reconcilers_have_the_same_name_and_wiring() {
    let by_hand = examples::webapp::reconciler();
    let derived = examples::webapp_derive::WebApp::reconciler();
    assert_eq!(by_hand.name(), derived.name());
    let wiring =
        |w: kubewright::reconcilers::Wiring| -> Vec<(String, kubewright::reconcilers::Role)> {
            w.kinds().iter().map(|k| (k.kind.clone(), k.role)).collect()
        };
    assert_eq!(wiring(by_hand.wiring()), wiring(derived.wiring()));
}

/// One step's result: the objects, normalized, the events so far (note and how many times each was published),
/// and the kinds of writes made during the step.
#[derive(Debug, PartialEq)]
struct Snapshot {
    step: &'static str,
    objects: Value,
    events: BTreeSet<(String, i32)>,
    writes: BTreeSet<String>,
}

/// Drops what differs between two runs of the same scenario: identities, times, versions, managed fields.
fn normalize(mut v: Value) -> Value {
    tests::normalize::strip_run_identity(&mut v);
    if let Some(meta) = v.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("managedFields");
    }
    v
}

struct Run {
    server: ApiServer,
    apps: Api<WebApp>,
    deployments: Api<Deployment>,
    services: Api<Service>,
    configmaps: Api<ConfigMap>,
    events: Api<Event>,
}

impl Run {
    async fn objects(&self) -> Value {
        let get = |v: Option<Value>| normalize(v.unwrap_or(Value::Null));
        json!({
            "webapp": get(self.apps.get_opt(SAMPLE_NAME).await.unwrap().map(|o| serde_json::to_value(o).unwrap())),
            "deployment": get(self.deployments.get_opt(SAMPLE_NAME).await.unwrap().map(|o| serde_json::to_value(o).unwrap())),
            "service": get(self.services.get_opt(SAMPLE_NAME).await.unwrap().map(|o| serde_json::to_value(o).unwrap())),
        })
    }

    /// Waits until `done` holds and nothing has been written for a while; returns the step's snapshot.
    async fn settle(&self, step: &'static str, done: impl Fn(&Value) -> bool) -> Snapshot {
        let mut objects = Value::Null;
        for _ in 0..400 {
            objects = self.objects().await;
            if done(&objects) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        assert!(done(&objects), "{step}: not reached: {objects:#}");
        // Quiet: no write for 500ms.
        let mut writes: BTreeSet<String> = BTreeSet::new();
        loop {
            let before = self.server.resource_version();
            tokio::time::sleep(Duration::from_millis(500)).await;
            for r in self
                .server
                .take_requests()
                .into_iter()
                .filter(|r| r.is_write())
            {
                let sub = r.subresource.map(|s| format!("/{s}")).unwrap_or_default();
                writes.insert(format!("{:?} {}{sub}", r.verb, r.resource));
            }
            if self.server.resource_version() == before {
                break;
            }
        }
        let events = self
            .events
            .list(&Default::default())
            .await
            .unwrap()
            .into_iter()
            .map(|e| {
                let count = e.series.map_or(1, |s| s.count);
                (e.note.unwrap_or_default(), count)
            })
            .collect();
        Snapshot {
            step,
            objects: self.objects().await,
            events,
            writes,
        }
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

async fn scenario(controller: fn(Operator) -> Operator) -> Vec<Snapshot> {
    let server = ApiServer::new();
    let client = server.client();
    ensure_crd(&client).await.unwrap();
    let run = Run {
        apps: Api::namespaced(client.clone(), "default"),
        deployments: Api::namespaced(client.clone(), "default"),
        services: Api::namespaced(client.clone(), "default"),
        configmaps: Api::namespaced(client.clone(), "default"),
        events: Api::namespaced(client.clone(), "default"),
        server,
    };
    run.configmaps
        .create(
            &PostParams::default(),
            &sample_config_map(SAMPLE_CONFIG_MAP),
        )
        .await
        .unwrap();
    run.apps
        .create(
            &PostParams::default(),
            &sample(SAMPLE_NAME, Some(SAMPLE_CONFIG_MAP)),
        )
        .await
        .unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let operator = tokio::spawn(controller(Operator::new(client)).run_until(async move {
        let _ = stopped.await;
    }));
    let mut snapshots = Vec::new();
    snapshots.push(
        run.settle("created", |o| {
            observed(o) == Some(1) && ready(o) == Some(("True", "Ready")) && !o["service"].is_null()
        })
        .await,
    );
    run.patch_app(json!({ "scale": { "replicas": 3 } })).await;
    snapshots.push(
        run.settle("scaled", |o| {
            observed(o) == Some(2) && o.pointer("/deployment/spec/replicas") == Some(&json!(3))
        })
        .await,
    );
    let before = config_hash(&run.objects().await);
    run.configmaps
        .patch(
            SAMPLE_CONFIG_MAP,
            &PatchParams::default(),
            &Patch::Merge(json!({ "data": { "index.html": "<h1>changed</h1>" } })),
        )
        .await
        .unwrap();
    snapshots.push(
        run.settle("configmap edited", |o| config_hash(o) != before)
            .await,
    );
    run.patch_app(json!({ "configMap": "missing" })).await;
    snapshots.push(
        run.settle("configmap missing", |o| {
            observed(o) == Some(3) && ready(o) == Some(("False", "ConfigMapNotFound"))
        })
        .await,
    );
    let _ = stop.send(());
    tokio::time::timeout(Duration::from_secs(10), operator)
        .await
        .expect("the operator stops")
        .unwrap()
        .unwrap();
    snapshots
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn both_operators_behave_the_same() {
    let by_hand = scenario(|op| examples::webapp::cli::by_hand().operator(op)).await;
    let derived = scenario(|op| examples::webapp_derive::app().operator(op)).await;
    for (h, d) in by_hand.iter().zip(&derived) {
        assert_eq!(h.step, d.step);
        assert_eq!(
            h.objects, d.objects,
            "objects differ after step `{}`",
            h.step
        );
        assert_eq!(h.writes, d.writes, "writes differ during step `{}`", h.step);
        assert_eq!(h.events, d.events, "events differ after step `{}`", h.step);
    }
    assert_eq!(by_hand.len(), derived.len());
    // The scenario did something: children, a status, and writes of each kind.
    let first = &derived[0];
    assert_eq!(
        first.objects["deployment"]["metadata"]["ownerReferences"][0]["kind"],
        "WebApp"
    );
    assert!(
        first.writes.iter().any(|w| w.contains("deployments")),
        "{:?}",
        first.writes
    );
    // Each child was created once, and told once.
    for run in [&by_hand, &derived] {
        let created: BTreeSet<(String, i32)> = [
            ("Created Deployment default/sample".to_string(), 1),
            ("Created Service default/sample".to_string(), 1),
        ]
        .into();
        assert_eq!(run[0].events, created);
    }
}
