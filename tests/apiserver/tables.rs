//! `kubectl get` tables of the in-memory server: ages are counted on the server's clock.

use k8s_openapi::jiff::{SignedDuration, Timestamp};

use kubewright::testing::ApiServer;
use kubewright::testing::apiserver::Clock;
use serde_json::{Value, json};

const TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io";

async fn send(client: &kube::Client, method: &str, path: &str, body: Option<&Value>) -> Value {
    let request = http::Request::builder()
        .method(method)
        .uri(path)
        .header("accept", TABLE)
        .header("content-type", "application/json")
        .body(
            body.map(|b| serde_json::to_vec(b).unwrap())
                .unwrap_or_default(),
        )
        .unwrap();
    serde_json::from_str(&client.request_text(request).await.unwrap()).unwrap()
}

#[tokio::test]
async fn ages_are_counted_on_the_servers_clock() {
    let start: Timestamp = "2020-01-01T00:00:00Z".parse().unwrap();
    let clock = Clock::fixed(start);
    let server = ApiServer::builder().clock(clock.clone()).build();
    let client = server.client();
    let cms = "/api/v1/namespaces/default/configmaps";
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}});
    send(&client, "POST", cms, Some(&cm)).await;
    clock.advance(SignedDuration::from_secs(200));
    let table = send(&client, "GET", &format!("{cms}/c"), None).await;
    assert_eq!(table["rows"][0]["cells"], json!(["c", 1, "3m20s"]));
}
