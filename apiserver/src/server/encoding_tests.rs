//! Responses encoded as `Accept` asks, through the whole server.

use bytes::Bytes;
use http_body_util::BodyExt;

use crate::ApiServer;

async fn send(
    server: &ApiServer,
    method: &str,
    path: &str,
    accept: &str,
    body: &str,
) -> (u16, String, Bytes) {
    let body = Bytes::from(body.to_string());
    send_as(server, method, path, accept, "application/json", body).await
}

/// [`send`] with a body of any content type.
async fn send_as(
    server: &ApiServer,
    method: &str,
    path: &str,
    accept: &str,
    content_type: &str,
    body: Bytes,
) -> (u16, String, Bytes) {
    let req = ::http::Request::builder()
        .method(method)
        .uri(path)
        .header("accept", accept)
        .header("content-type", content_type)
        .body(body)
        .expect("a request");
    let resp = server.handle(req).await;
    let status = resp.status().as_u16();
    let ct = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    let bytes = resp
        .into_body()
        .collect()
        .await
        .map(|c| c.to_bytes())
        .unwrap_or_default();
    (status, ct, bytes)
}

#[tokio::test]
async fn kubectls_create_configmap_is_answered_in_protobuf() {
    let server = ApiServer::new();
    let body: &[u8] = b"k8s\0\x0a\x0f\x0a\x02v1\x12\x09ConfigMap\x12\x22\x0a\x18\x0a\x08answered\x12\x00\x1a\x00\x22\x00\x2a\x00\x32\x00\x38\x00\x42\x00\x12\x06\x0a\x01a\x12\x01b\x1a\x00\x22\x00";
    let (_, ct, bytes) = send_as(
        &server,
        "POST",
        "/api/v1/namespaces/default/configmaps?fieldManager=kubectl-create&fieldValidation=Strict",
        "application/vnd.kubernetes.protobuf,application/json",
        "application/vnd.kubernetes.protobuf",
        Bytes::from_static(body),
    )
    .await;
    assert_eq!(
        ct,
        "application/vnd.kubernetes.protobuf",
        "{}",
        String::from_utf8_lossy(&bytes)
    );
}

#[tokio::test]
async fn built_in_kinds_answer_protobuf_when_asked() {
    let server = ApiServer::builder().controllers(false).build();
    let cms = "/api/v1/namespaces/default/configmaps";
    let cm = r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"x":"1"}}"#;
    let pb = "application/vnd.kubernetes.protobuf, application/json";
    let (status, ct, bytes) = send(&server, "POST", cms, pb, cm).await;
    assert_eq!(
        (status, ct.as_str()),
        (201, "application/vnd.kubernetes.protobuf")
    );
    assert!(bytes.starts_with(b"k8s\0"));
    let (status, ct, _) = send(
        &server,
        "GET",
        &format!("{cms}?watch=true&timeoutSeconds=1"),
        pb,
        "",
    )
    .await;
    assert_eq!(
        (status, ct.as_str()),
        (200, "application/vnd.kubernetes.protobuf;stream=watch")
    );
}
