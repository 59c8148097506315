//! Quantities in canonical form: both servers store `1024Mi` as `1Gi`, `0.5` as `500m`, `1000m` as `1`, and a
//! server-side apply of the same values in their written form changes nothing.

use kube::Client;
use serde_json::json;

use crate::deviations::{BUILTIN_MANAGED_FIELDS_SHAPE, EMPTY_BUILTIN_STATUS};
use crate::support::{APPLY, MERGE, Transcript, deployment, deployments, run};

async fn canonical(client: Client, ns: String) -> Transcript {
    let mut t = Transcript::new(client);
    let mut d = deployment("q");
    d["spec"]["template"]["spec"]["containers"][0]["resources"] = json!({
        "limits": {"memory": "1024Mi", "cpu": "1000m"},
        "requests": {"memory": "0.5Gi", "cpu": "0.5", "ephemeral-storage": "1000"},
    });
    t.post("create with quantities", &deployments(&ns), &d)
        .await;
    let path = format!("{}/q", deployments(&ns));
    t.get("get", &path).await;
    t.patch(
        "merge patch with a quantity",
        &path,
        MERGE,
        &json!({"spec": {"template": {"spec": {"containers": [{
            "name": "app", "image": "nginx:1",
            "resources": {"limits": {"memory": "2048Mi", "cpu": "1.5"}},
        }]}}}}),
    )
    .await;
    let mut applied = deployment("q");
    applied["spec"]["template"]["spec"]["containers"][0]["resources"] = json!({
        "limits": {"memory": "2048Mi", "cpu": "1.5"},
        "requests": {"memory": "0.5Gi", "cpu": "0.5", "ephemeral-storage": "1000"},
    });
    t.patch(
        "apply the same values in written form",
        &format!("{path}?fieldManager=ctl&force=true"),
        APPLY,
        &applied,
    )
    .await;
    t
}

#[tokio::test]
async fn quantities_are_stored_in_canonical_form() {
    run(
        "quantities_are_stored_in_canonical_form",
        &[BUILTIN_MANAGED_FIELDS_SHAPE, EMPTY_BUILTIN_STATUS],
        canonical,
    )
    .await;
}
