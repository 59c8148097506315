//! `TestEnv::converge` settles a parent, and names the writes of every pass when it cannot.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::runtime::reflector::ObjectRef;
use kube::{CustomResource, CustomResourceExt};
use operator::testing::table::{HarnessError, MAX_PASSES, TestEnv};
use operator::{Outcome, Reconciler, ReconcilerStatus, SyncReconciler};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

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
