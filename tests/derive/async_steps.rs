//! Async steps through the derive: a `Relay` whose `#[sync]` step is an `async fn` that awaits a read through
//! the client (a ConfigMap the caches do not hold) before its `async` desired function writes the child from
//! what it read; the `#[finalize]` step is async too.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta};
use kube::api::{Api, DeleteParams, PostParams};
use kube::runtime::wait::{await_condition, conditions};
use kube::{CustomResource, CustomResourceExt, ResourceExt};
use kubewright::testing::ApiServer;
use kubewright::{Context, Operator, Outcome, Reconciler, ReconcilerStatus};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(CustomResource, Reconciler, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "example.dev",
    version = "v1",
    kind = "Relay",
    namespaced,
    status = "RelayStatus"
)]
#[reconciler(finalizer = "example.dev/relay")]
#[sync(fetch_source)]
#[child(desired = desired_copy)]
#[finalize(release)]
#[stash(source: String)]
pub struct RelaySpec {
    /// The ConfigMap whose `value` the relay copies.
    pub source: String,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct RelayStatus {
    pub observed_generation: Option<i64>,
    #[serde(default)]
    pub conditions: Vec<Condition>,
}

impl ReconcilerStatus for RelayStatus {
    fn conditions(&self) -> &[Condition] {
        &self.conditions
    }
    fn conditions_mut(&mut self) -> &mut Vec<Condition> {
        &mut self.conditions
    }
    fn observed_generation(&self) -> Option<i64> {
        self.observed_generation
    }
    fn set_observed_generation(&mut self, g: Option<i64>) {
        self.observed_generation = g;
    }
}

static RELEASED: AtomicUsize = AtomicUsize::new(0);

/// Reads the source through the API (not a cache), awaiting, and stashes its value.
async fn fetch_source(relay: &mut Relay, cx: &mut Context) -> kubewright::Result<Outcome> {
    tokio::task::yield_now().await;
    let api: Api<ConfigMap> = Api::namespaced(cx.client(), &relay.namespace().unwrap_or_default());
    let value = api
        .get_opt(&relay.spec.source)
        .await
        .map_err(|e| kubewright::Error::kube("reading the source", e))?
        .and_then(|cm| cm.data?.get("value").cloned())
        .unwrap_or_default();
    cx.stash_mut().store(&Relay::SOURCE, value);
    Ok(Outcome::Continue)
}

async fn desired_copy(relay: &Relay, cx: &mut Context) -> kubewright::Result<Option<ConfigMap>> {
    let value = cx.stash().get(&Relay::SOURCE)?.clone();
    tokio::task::yield_now().await;
    Ok(Some(ConfigMap {
        metadata: ObjectMeta {
            name: Some(format!("{}-copy", relay.name_any())),
            ..Default::default()
        },
        data: Some([("value".to_string(), value)].into()),
        ..Default::default()
    }))
}

async fn release(_relay: &mut Relay, _cx: &mut Context) -> kubewright::Result<Outcome> {
    tokio::time::sleep(Duration::from_millis(10)).await;
    RELEASED.fetch_add(1, Ordering::SeqCst);
    Ok(Outcome::Continue)
}

async fn eventually<T>(what: &str, mut f: impl AsyncFnMut() -> Option<T>) -> T {
    for _ in 0..400 {
        if let Some(v) = f().await {
            return v;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("timed out waiting for {what}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn async_steps_await_before_the_children_are_written() {
    let server = ApiServer::new();
    let client = server.client();
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    crds.create(&PostParams::default(), &Relay::crd())
        .await
        .unwrap();
    await_condition(crds, "relays.example.dev", conditions::is_crd_established())
        .await
        .unwrap();
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let source = ConfigMap {
        metadata: ObjectMeta {
            name: Some("source".into()),
            ..Default::default()
        },
        data: Some([("value".to_string(), "hello".to_string())].into()),
        ..Default::default()
    };
    cms.create(&PostParams::default(), &source).await.unwrap();

    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(
        Operator::new(client.clone())
            .controller(Relay::reconciler())
            .run_until(async move {
                let _ = stop_rx.await;
            }),
    );
    let relays: Api<Relay> = Api::namespaced(client.clone(), "default");
    let mut relay = Relay::new(
        "r",
        RelaySpec {
            source: "source".into(),
        },
    );
    relay.metadata.namespace = Some("default".into());
    relays.create(&PostParams::default(), &relay).await.unwrap();

    let copy = eventually("the copy", async || cms.get_opt("r-copy").await.unwrap()).await;
    assert_eq!(
        copy.data.unwrap().get("value").map(String::as_str),
        Some("hello"),
        "the async sync step's read, through the async desired function"
    );

    relays.delete("r", &DeleteParams::default()).await.unwrap();
    eventually("the relay gone", async || {
        relays.get_opt("r").await.unwrap().is_none().then_some(())
    })
    .await;
    assert_eq!(
        RELEASED.load(Ordering::SeqCst),
        1,
        "the async cleanup ran once"
    );

    let _ = stop_tx.send(());
    running.await.unwrap().unwrap();
}
