//! `TestEnv::converge` settles a parent on the environment's clock, starting from the test's own last write,
//! and names the writes of every pass when it cannot.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use k8s_openapi::jiff::SignedDuration;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::reflector::ObjectRef;
use kube::{CustomResource, CustomResourceExt};
use kubewright::testing::table::{HarnessError, MAX_PASSES, TestEnv};
use kubewright::{Outcome, Reconciler, ReconcilerStatus, SyncReconciler};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "example.dev",
    version = "v1",
    kind = "Counter",
    namespaced,
    status = "CounterStatus"
)]
pub struct CounterSpec {
    /// Count up to this many passes, then stop writing.
    pub until: u32,
}

#[derive(
    Clone, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq, ReconcilerStatus,
)]
#[serde(rename_all = "camelCase")]
pub struct CounterStatus {
    pub observed_generation: Option<i64>,
    #[serde(default)]
    pub conditions: Vec<Condition>,
    pub count: Option<u32>,
}

/// Each pass puts a new count into the status until `until`: one status write per pass.
fn reconciler() -> Reconciler<Counter> {
    let passes = Arc::new(AtomicU32::new(0));
    Reconciler::new("counter-controller").step(SyncReconciler::new(
        "count",
        move |c: &mut Counter, _cx| {
            let n = passes.fetch_add(1, Ordering::SeqCst) + 1;
            let status = c.status.get_or_insert_with(Default::default);
            status.count = Some(n.min(c.spec.until));
            Ok(Outcome::Continue)
        },
    ))
}

async fn env_with(until: u32) -> TestEnv {
    let env = TestEnv::new();
    env.install_crd(&Counter::crd()).await.unwrap();
    let mut c = Counter::new("c", CounterSpec { until });
    c.metadata.namespace = Some("default".into());
    env.insert(&c).unwrap();
    env
}

#[tokio::test]
async fn converge_runs_passes_until_one_writes_nothing() {
    let mut env = env_with(4).await;
    let done = env
        .converge(&reconciler(), &ObjectRef::new("c").within("default"))
        .await
        .unwrap();
    // Counts 1 to 4 are written (4 passes), the fifth pass finds 4 again and writes nothing.
    assert_eq!(done.passes, 5);
    assert_eq!(done.writes.len(), 4);
    assert!(
        done.all_writes()
            .all(|w| w.to_string() == "status update counters default/c")
    );
    assert_eq!(done.parent.unwrap().status.unwrap().count, Some(4));
}

#[tokio::test]
async fn a_parent_that_never_settles_fails_with_every_pass_listed() {
    let mut env = env_with(1000).await;
    let err = env
        .converge(&reconciler(), &ObjectRef::new("c").within("default"))
        .await
        .unwrap_err();
    assert!(matches!(
        err,
        HarnessError::NotConverged {
            passes: MAX_PASSES,
            ..
        }
    ));
    let message = err.to_string();
    assert!(
        message.starts_with("Counter default/c did not converge in 10 passes"),
        "{message}"
    );
    assert_eq!(
        message.matches("status update counters default/c").count(),
        MAX_PASSES,
        "{message}"
    );
    assert!(message.contains("pass 10:"), "{message}");
}

#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "example.dev",
    version = "v1",
    kind = "Stamper",
    namespaced,
    status = "StamperStatus"
)]
pub struct StamperSpec {
    pub label: String,
}

#[derive(
    Clone, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq, ReconcilerStatus,
)]
#[serde(rename_all = "camelCase")]
pub struct StamperStatus {
    pub observed_generation: Option<i64>,
    #[serde(default)]
    pub conditions: Vec<Condition>,
    /// `<label> at <the pass's time>`.
    pub seen: Option<String>,
}

/// Writes the spec's label and the pass's time (`Context::now`) into the status: settles only when the time
/// holds still between passes. Its clock is the wall clock: no `.clock(..)`.
fn stamper() -> Reconciler<Stamper> {
    Reconciler::new("stamper-controller").step(SyncReconciler::new(
        "stamp",
        |s: &mut Stamper, cx| {
            let seen = format!("{} at {}", s.spec.label, cx.now());
            s.status.get_or_insert_with(Default::default).seen = Some(seen);
            Ok(Outcome::Continue)
        },
    ))
}

async fn stamper_env() -> TestEnv {
    let env = TestEnv::new();
    env.install_crd(&Stamper::crd()).await.unwrap();
    let mut s = Stamper::new("s", StamperSpec { label: "a".into() });
    s.metadata.namespace = Some("default".into());
    env.insert(&s).unwrap();
    env
}

fn seen(done: &kubewright::testing::table::Converged<Stamper>) -> Option<String> {
    done.parent.as_ref()?.status.as_ref()?.seen.clone()
}

#[tokio::test]
async fn converge_runs_passes_on_the_environments_clock() {
    let mut env = stamper_env().await;
    let parent = ObjectRef::new("s").within("default");
    let reconciler = stamper();
    let done = env.converge(&reconciler, &parent).await.unwrap();
    assert_eq!(done.passes, 2);
    assert_eq!(seen(&done).as_deref(), Some("a at 2025-01-01T00:00:00Z"));

    // The clock moves for the server and the passes alike.
    env.clock().advance(SignedDuration::from_mins(90));
    let patch = json!({"spec": {"label": "b"}});
    Api::<Stamper>::namespaced(env.client(), "default")
        .patch("s", &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap();
    let done = env.converge(&reconciler, &parent).await.unwrap();
    assert_eq!(seen(&done).as_deref(), Some("b at 2025-01-01T01:30:00Z"));
    assert_eq!(env.now().to_string(), "2025-01-01T01:30:00Z");
}

#[tokio::test]
async fn converge_right_after_the_tests_own_write_runs_on_it() {
    let mut env = stamper_env().await;
    let parent = ObjectRef::new("s").within("default");
    let reconciler = stamper();
    env.converge(&reconciler, &parent).await.unwrap();
    // Twenty changes, each converged at once: a pass on a cache that has not seen the change yet would find
    // nothing to write and "converge" on the old label.
    let api = Api::<Stamper>::namespaced(env.client(), "default");
    for i in 0..20 {
        let label = format!("label-{i}");
        let patch = json!({"spec": {"label": label}});
        api.patch("s", &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .unwrap();
        let done = env.converge(&reconciler, &parent).await.unwrap();
        assert_eq!(
            seen(&done),
            Some(format!("{label} at 2025-01-01T00:00:00Z")),
            "change {i}"
        );
        assert_eq!(
            done.passes, 2,
            "change {i}: one pass writes, one finds nothing"
        );
    }
}
