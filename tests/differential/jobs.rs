//! The Job statuses the in-memory server plays as kube-controller-manager (`kubewright_apiserver::job_status`),
//! written through `/status` on both servers: kube-apiserver validates a Job's status transitions (a
//! `Complete` Job needs `completionTime` and `SuccessCriteriaMet` first, a `Failed` one `FailureTarget`), so
//! the same answers show that what the in-memory server writes is what kube-apiserver accepts and stores.

use std::time::Duration;

use k8s_openapi::jiff::Timestamp;
use kube::Client;
use kubewright::testing::apiserver::{FAIL_ANNOTATION, job_finishes_at, job_status};
use serde_json::{Value, json};

use crate::support::{Transcript, run};

const RUN_TIME: Duration = Duration::from_secs(10);

fn jobs(ns: &str) -> String {
    format!("/apis/batch/v1/namespaces/{ns}/jobs")
}

/// Keeps only the status of the last answer: the rest of a Job (its defaults, its uid in the generated
/// selector) is not what this scenario is about. A new Job's empty status is absent in memory
/// and `{}` on kube-apiserver (`EMPTY_BUILTIN_STATUS`): both are recorded as `{}`, so every played status is
/// still compared whole.
fn status_only(t: &mut Transcript) {
    if let Some(body) = t.last_answer_mut() {
        let status = body.get("status").cloned().unwrap_or(Value::Null);
        let status = if status.is_null() { json!({}) } else { status };
        *body = json!({ "status": status });
    }
}

async fn played_statuses(client: Client, ns: String) -> Transcript {
    let mut t = Transcript::new(client);
    let start: Timestamp = "2026-01-01T00:00:00Z".parse().expect("a time");
    for (name, fail) in [("succeeds", false), ("fails", true)] {
        let mut job = json!({
            "apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
            "spec": {"backoffLimit": 2, "template": {"spec": {
                "restartPolicy": "Never", "containers": [{"name": "app", "image": "busybox:1"}],
            }}},
        });
        if fail {
            job["metadata"]["annotations"] = json!({ FAIL_ANNOTATION: "true" });
        }
        t.post(&format!("create {name}"), &jobs(&ns), &job).await;
        status_only(&mut t);
        let path = format!("{}/{name}/status", jobs(&ns));
        // Started, then finished at its due time: each as the played controller writes it.
        for step in ["started", "finished"] {
            let mut current = t.get(&format!("get {name} before {step}"), &path).await;
            status_only(&mut t);
            let now = job_finishes_at(&current, RUN_TIME).unwrap_or(start);
            let Some(status) = job_status(&current, RUN_TIME, now) else {
                panic!("the played controller writes a status when {name} is {step}");
            };
            current["status"] = status;
            t.put(&format!("{name} {step}"), &path, &current).await;
            status_only(&mut t);
        }
    }
    t
}

#[tokio::test]
async fn the_job_statuses_played_in_memory_are_what_kube_apiserver_stores() {
    run(
        "the_job_statuses_played_in_memory_are_what_kube_apiserver_stores",
        &[],
        played_statuses,
    )
    .await;
}
