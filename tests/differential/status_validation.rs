//! Writes to the `status` of the `apps` workloads, validated as kube-apiserver validates them: a valid status,
//! negative counts, counts above `status.replicas` and `availableReplicas` above `readyReplicas` (every cause
//! in one 422), a decremented `collisionCount`, and a spec sent through `/status` (ignored), on Deployments,
//! ReplicaSets, StatefulSets and DaemonSets.

use kube::Client;
use serde_json::{Value, json};

use crate::deviations::EMPTY_BUILTIN_STATUS;
use crate::support::{MERGE, Transcript, run};

fn workload(kind: &str, name: &str) -> Value {
    json!({"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": name},
        "spec": {"selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}}})
}

/// Keeps of a successful answer only what the status rules decide: its status and the spec field sent
/// through `/status` (the defaults and managedFields of these kinds are compared elsewhere, with their own
/// deviations); a refusal is compared whole.
fn keep_status(t: &mut Transcript) {
    if let Some(answer) = t.last_answer_mut()
        && answer["kind"] != "Status"
    {
        *answer = json!({
            "status": answer["status"],
            "minReadySeconds": answer["spec"]["minReadySeconds"],
        });
    }
}

async fn scenario(client: Client, ns: String) -> Transcript {
    let mut t = Transcript::new(client);
    let counts = json!({"replicas": 2, "readyReplicas": 2, "availableReplicas": 1});
    let bad = json!({"replicas": 1, "readyReplicas": 2, "availableReplicas": 3, "updatedReplicas": -1,
        "observedGeneration": -1, "fullyLabeledReplicas": 4, "currentReplicas": -2});
    let daemon_counts = json!({"currentNumberScheduled": 1, "numberMisscheduled": 0,
        "desiredNumberScheduled": 1, "numberReady": 1});
    let daemon_bad = json!({"currentNumberScheduled": -1, "numberMisscheduled": -1,
        "desiredNumberScheduled": -1, "numberReady": -1, "numberAvailable": -3, "observedGeneration": -1});
    for (kind, plural, good, wrong) in [
        ("Deployment", "deployments", &counts, &bad),
        ("ReplicaSet", "replicasets", &counts, &bad),
        ("StatefulSet", "statefulsets", &counts, &bad),
        ("DaemonSet", "daemonsets", &daemon_counts, &daemon_bad),
    ] {
        let collection = format!("/apis/apps/v1/namespaces/{ns}/{plural}");
        let status = format!("{collection}/w/status");
        t.post(
            &format!("{kind}: create"),
            &collection,
            &workload(kind, "w"),
        )
        .await;
        keep_status(&mut t);
        t.patch(
            &format!("{kind}: a valid status"),
            &status,
            MERGE,
            &json!({ "status": good }),
        )
        .await;
        keep_status(&mut t);
        t.patch(
            &format!("{kind}: invalid counts"),
            &status,
            MERGE,
            &json!({ "status": wrong }),
        )
        .await;
        keep_status(&mut t);
        if kind != "ReplicaSet" {
            t.patch(
                &format!("{kind}: a collision count"),
                &status,
                MERGE,
                &json!({"status": {"collisionCount": 2}}),
            )
            .await;
            keep_status(&mut t);
            t.patch(
                &format!("{kind}: a collision count decremented"),
                &status,
                MERGE,
                &json!({"status": {"collisionCount": 1}}),
            )
            .await;
            keep_status(&mut t);
            t.patch(
                &format!("{kind}: a collision count removed"),
                &status,
                MERGE,
                &json!({"status": {"collisionCount": null}}),
            )
            .await;
            keep_status(&mut t);
        }
        t.patch(
            &format!("{kind}: a spec through status"),
            &status,
            MERGE,
            &json!({"spec": {"minReadySeconds": 5}, "status": {"observedGeneration": 1}}),
        )
        .await;
        keep_status(&mut t);
    }
    t
}

#[tokio::test]
async fn workload_status_writes_are_validated_alike() {
    run(
        "workload_status_writes_are_validated_alike",
        &[EMPTY_BUILTIN_STATUS],
        scenario,
    )
    .await;
}
