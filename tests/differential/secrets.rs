//! A Secret's `stringData` is write-only on both servers: merged into `data` (base64, winning over `data`'s
//! keys) on create, update, merge patch and server-side apply, and never stored.

use kube::Client;
use serde_json::json;

use crate::support::{APPLY, MERGE, Transcript, run};

async fn string_data(client: Client, ns: String) -> Transcript {
    let mut t = Transcript::new(client);
    let secrets = format!("/api/v1/namespaces/{ns}/secrets");
    let secret = json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "creds"},
        "data": {"username": "YWRtaW4=", "password": "b2xk"},
        "stringData": {"password": "s3cret", "host": "db"},
    });
    t.post("create with stringData", &secrets, &secret).await;
    let path = format!("{secrets}/creds");
    t.get("get", &path).await;
    t.patch(
        "merge patch with stringData",
        &path,
        MERGE,
        &json!({"stringData": {"password": "n3w"}}),
    )
    .await;
    t.patch(
        "apply with stringData",
        &format!("{path}?fieldManager=ctl&force=true"),
        APPLY,
        &json!({
            "apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "creds"},
            "stringData": {"token": "abc"},
        }),
    )
    .await;
    t.get("get again", &path).await;
    t
}

#[tokio::test]
async fn string_data_is_merged_into_data_and_never_stored() {
    run(
        "string_data_is_merged_into_data_and_never_stored",
        &[],
        string_data,
    )
    .await;
}
