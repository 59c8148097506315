//! `#[children(Job, .., strategy = "create", retain = ..)]`: the derived set creates each Job once, writes none
//! again when the template changes, and trims the finished Jobs to the history the spec asks for.

use std::borrow::Cow;

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use k8s_openapi::jiff::Timestamp;
use kube::runtime::reflector::ObjectRef;
use kube::{CustomResource, CustomResourceExt, ResourceExt};
use kubewright::testing::table::{Category, EventExpectation, ReconcilerTestCase};
use kubewright::{Context, Reconciler, ReconcilerStatus, Retention};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[derive(CustomResource, Reconciler, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "example.dev",
    version = "v1",
    kind = "Runs",
    namespaced,
    status = "RunsStatus"
)]
#[children(Job, desired = desired_jobs, id = job_id, strategy = "create", retain = retention)]
pub struct RunsSpec {
    pub image: String,
    pub runs: Vec<String>,
    pub history: usize,
}

#[derive(
    Clone, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq, ReconcilerStatus,
)]
#[serde(rename_all = "camelCase")]
pub struct RunsStatus {
    pub observed_generation: Option<i64>,
    #[serde(default)]
    pub conditions: Vec<Condition>,
}

fn desired_jobs(runs: &Runs, _cx: &mut Context) -> kubewright::Result<Vec<Job>> {
    Ok(runs
        .spec
        .runs
        .iter()
        .map(|run| {
            serde_json::from_value(json!({
                "metadata": {"name": format!("{}-{run}", runs.name_any())},
                "spec": {"template": {"spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "run", "image": runs.spec.image}],
                }}},
            }))
            .expect("a Job")
        })
        .collect())
}

fn job_id(job: &Job) -> String {
    job.name_any()
}

/// Finished Jobs are a history as long as the spec says, newest by name (`runs-1` before `runs-2`).
fn retention(runs: &Runs, job: &Job) -> Retention {
    let finished = job
        .status
        .as_ref()
        .is_some_and(|s| s.completion_time.is_some());
    let n: i64 = job
        .name_any()
        .rsplit('-')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    match (finished, Timestamp::from_second(n)) {
        (true, Ok(at)) => Retention::History {
            class: Cow::Borrowed("Finished"),
            limit: runs.spec.history,
            at,
        },
        _ => Retention::Keep,
    }
}

const UID: &str = "6d3c2a8e-5b1f-4c2e-9a47-00000000000a";

fn job(n: u32, image: &str, finished: bool) -> Value {
    let mut job = json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": format!("runs-{n}"),
            "namespace": "default",
            "labels": {kubewright::OWNER_LABEL: UID},
            "ownerReferences": [{
                "apiVersion": "example.dev/v1", "kind": "Runs", "name": "runs", "uid": UID,
                "controller": true, "blockOwnerDeletion": true,
            }],
        },
        "spec": {"template": {"spec": {
            "restartPolicy": "Never",
            "containers": [{"name": "run", "image": image}],
        }}},
    });
    if finished {
        // As the Job controller leaves a Job that succeeded (the API server refuses a `Complete` Job without
        // a start time or `SuccessCriteriaMet`).
        job["status"] = json!({
            "startTime": "2024-12-31T23:59:00Z",
            "completionTime": "2025-01-01T00:00:00Z",
            "succeeded": 1,
            "conditions": [{"type": "SuccessCriteriaMet", "status": "True"},
                {"type": "Complete", "status": "True"}],
        });
    }
    job
}

#[tokio::test]
async fn the_derived_set_creates_once_and_trims_its_history() {
    let parent = json!({
        "apiVersion": "example.dev/v1",
        "kind": "Runs",
        "metadata": {"name": "runs", "namespace": "default", "uid": UID, "generation": 1},
        "spec": {"image": "v2", "runs": ["3"], "history": 1},
    });
    let reconciler: Reconciler<Runs> = Runs::reconciler();
    ReconcilerTestCase::new(
        "derived create once",
        ObjectRef::new("runs").within("default"),
    )
    .crd(Runs::crd())
    .given(parent)
    .given(job(1, "v1", true))
    .given(job(2, "v1", true))
    .given(job(3, "v1", true))
    // `runs-3` is desired (with another image now) and stays as it is; of the finished `runs-1` and
    // `runs-2`, the history of 1 keeps the newer.
    .expect_delete::<Job>(Some("default"), "runs-1")
    .expect_event(
        EventExpectation::normal("Deleted")
            .note("Deleted Job default/runs-1: history Finished keeps the newest 1"),
    )
    .ignore(Category::Status)
    .run(reconciler)
    .await
    .unwrap();
}
