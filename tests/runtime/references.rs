//! `Reconciler::references`: a change to a referenced object reconciles exactly the parents whose spec names
//! it, found through a field index of the parent cache (no mapper, no tracking by reads).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::runtime::wait::{await_condition, conditions};
use kube::{CustomResource, CustomResourceExt, ResourceExt};
use kubewright::testing::ApiServer;
use kubewright::{Operator, Outcome, Reconciler, ReconcilerStatus, SyncReconciler};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "example.dev",
    version = "v1",
    kind = "Link",
    namespaced,
    status = "LinkStatus"
)]
pub struct LinkSpec {
    pub source: Option<String>,
}

#[derive(
    Clone, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq, ReconcilerStatus,
)]
#[serde(rename_all = "camelCase")]
pub struct LinkStatus {
    pub observed_generation: Option<i64>,
    #[serde(default)]
    pub conditions: Vec<Condition>,
}

type Passes = Arc<Mutex<HashMap<String, usize>>>;

fn reconciler(passes: Passes) -> Reconciler<Link> {
    Reconciler::new("link-controller")
        .references::<ConfigMap>(|l: &Link| l.spec.source.iter().cloned().collect())
        // Counts passes and reads nothing through the context, so no read tracks the ConfigMap: only the
        // reference can bring a parent back.
        .step(SyncReconciler::new("count", move |l: &mut Link, _cx| {
            *passes.lock().unwrap().entry(l.name_any()).or_default() += 1;
            Ok(Outcome::Continue)
        }))
}

fn count(passes: &Passes, name: &str) -> usize {
    passes.lock().unwrap().get(name).copied().unwrap_or(0)
}

async fn eventually(what: &str, f: impl Fn() -> bool) {
    for _ in 0..400 {
        if f() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("timed out waiting for {what}");
}

fn link(name: &str, source: Option<&str>) -> Link {
    Link::new(
        name,
        LinkSpec {
            source: source.map(str::to_string),
        },
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_referenced_object_reconciles_exactly_the_parents_that_name_it() {
    let server = ApiServer::new();
    let client = server.client();
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    crds.create(&PostParams::default(), &Link::crd())
        .await
        .unwrap();
    await_condition(crds, "links.example.dev", conditions::is_crd_established())
        .await
        .unwrap();
    let passes = Passes::default();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let op = Operator::new(client.clone()).controller(reconciler(passes.clone()));
    let running = tokio::spawn(op.run_until(async move {
        let _ = stop_rx.await;
    }));

    let links: Api<Link> = Api::namespaced(client.clone(), "default");
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let pp = PostParams::default();
    for l in [
        link("a", Some("cm-a")),
        link("b", Some("cm-b")),
        link("c", None),
    ] {
        links.create(&pp, &l).await.unwrap();
    }
    // Each is reconciled for its creation, then again for its own status write; let that settle.
    eventually("every link reconciled", || {
        ["a", "b", "c"].iter().all(|n| count(&passes, n) >= 1)
    })
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let before: Vec<usize> = ["a", "b", "c"].iter().map(|n| count(&passes, n)).collect();

    // cm-a appears: only a names it.
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some("cm-a".into());
    cms.create(&pp, &cm).await.unwrap();
    eventually("a reconciled for cm-a", || count(&passes, "a") > before[0]).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(count(&passes, "b"), before[1], "b does not name cm-a");
    assert_eq!(count(&passes, "c"), before[2], "c names nothing");

    // a now names cm-b too (moved): a change to cm-b reconciles a and b, and a change to cm-a nobody.
    let patch = json!({"spec": {"source": "cm-b"}});
    links
        .patch("a", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    eventually("a reconciled for its spec", || {
        count(&passes, "a") > before[0] + 1
    })
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let before: Vec<usize> = ["a", "b", "c"].iter().map(|n| count(&passes, n)).collect();
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some("cm-b".into());
    cms.create(&pp, &cm).await.unwrap();
    eventually("a and b reconciled for cm-b", || {
        count(&passes, "a") > before[0] && count(&passes, "b") > before[1]
    })
    .await;
    let data = json!({"data": {"k": "v"}});
    cms.patch("cm-a", &PatchParams::default(), &Patch::Merge(&data))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(count(&passes, "a"), before[0] + 1, "a no longer names cm-a");
    assert_eq!(count(&passes, "c"), before[2], "c names nothing");

    let _ = stop_tx.send(());
    running.await.unwrap().unwrap();
}
