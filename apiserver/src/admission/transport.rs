//! Reaching a webhook: HTTPS to `clientConfig.url` (verified with `caBundle`), or the in-process handler
//! registered for `clientConfig.service`.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use serde_json::Value;

use super::review::Hook;

/// An in-process webhook behind a Service: the request path and AdmissionReview in, the AdmissionReview
/// answer out.
pub type WebhookHandler = Arc<dyn Fn(&str, &[u8]) -> Vec<u8> + Send + Sync>;

/// One call to a webhook.
pub(crate) struct Call<'a> {
    pub hook: &'a Hook,
    pub body: Vec<u8>,
    /// The in-process handlers, by Service namespace and name.
    pub handlers: &'a HashMap<(String, String), WebhookHandler>,
}

/// Sends the AdmissionReview and returns the answer's body; `Err` with what went wrong, as kube-apiserver
/// words it after `failed to call webhook: `.
pub(crate) async fn call(c: Call<'_>) -> Result<Vec<u8>, String> {
    let timeout = Duration::from_secs(c.hook.timeout_seconds);
    let client = &c.hook.client;
    if let Some(service) = client.get("service").filter(|s| s.is_object()) {
        let ns = service["namespace"].as_str().unwrap_or_default();
        let name = service["name"].as_str().unwrap_or_default();
        let port = service["port"].as_i64().unwrap_or(443);
        let path = service["path"].as_str().unwrap_or("/");
        let url = format!(
            "https://{name}.{ns}.svc:{port}{path}?timeout={}s",
            timeout.as_secs()
        );
        return match c.handlers.get(&(ns.to_string(), name.to_string())) {
            Some(handler) => Ok(handler(path, &c.body)),
            None => Err(format!(
                "Post \"{url}\": service \"{name}\" not found (no in-process webhook is served for it)"
            )),
        };
    }
    let Some(raw) = client["url"].as_str() else {
        return Err("the webhook has neither a url nor a service".into());
    };
    let url = format!("{raw}?timeout={}s", timeout.as_secs());
    let post = format!("Post \"{url}\"");
    let parsed = url::Url::parse(raw).map_err(|e| format!("{post}: {e}"))?;
    let host = parsed
        .host_str()
        .unwrap_or_default()
        .trim_matches(['[', ']'])
        .to_string();
    let port = parsed.port_or_known_default().unwrap_or(443);
    let target = match parsed.query() {
        Some(q) => format!("{}?{q}&timeout={}s", parsed.path(), timeout.as_secs()),
        None => format!("{}?timeout={}s", parsed.path(), timeout.as_secs()),
    };
    let exchange = async {
        let tls = tls_config(&client["caBundle"]).map_err(|e| format!("{post}: {e}"))?;
        let tcp = tokio::net::TcpStream::connect((host.as_str(), port))
            .await
            .map_err(|e| format!("{post}: dial tcp {host}:{port}: connect: {}", io_text(&e)))?;
        let _ = tcp.set_nodelay(true);
        let server_name = ServerName::try_from(host.clone()).map_err(|e| format!("{post}: {e}"))?;
        let stream = tokio_rustls::TlsConnector::from(tls)
            .connect(server_name, tcp)
            .await
            .map_err(|e| format!("{post}: tls: {e}"))?;
        let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| format!("{post}: {e}"))?;
        tokio::spawn(connection);
        let request = http::Request::post(target.as_str())
            .header(http::header::HOST, format!("{host}:{port}"))
            .header(http::header::CONTENT_TYPE, "application/json")
            .header(http::header::ACCEPT, "application/json")
            .body(Full::new(Bytes::from(c.body.clone())))
            .map_err(|e| format!("{post}: {e}"))?;
        let response = sender
            .send_request(request)
            .await
            .map_err(|e| format!("{post}: {e}"))?;
        let status = response.status();
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(|e| format!("{post}: {e}"))?
            .to_bytes();
        if !status.is_success() {
            return Err(format!("{post}: the server answered {status}"));
        }
        Ok(body.to_vec())
    };
    match tokio::time::timeout(timeout, exchange).await {
        Ok(result) => result,
        Err(_) => Err(format!(
            "{post}: context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
        )),
    }
}

/// The text Go prints for a connection error (`connection refused`, ...).
fn io_text(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::ConnectionRefused => "connection refused".into(),
        _ => e.to_string(),
    }
}

fn tls_config(ca_bundle: &Value) -> Result<Arc<rustls::ClientConfig>, String> {
    let mut roots = rustls::RootCertStore::empty();
    if let Some(b64) = ca_bundle.as_str() {
        let pem = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .map_err(|e| format!("caBundle is not base64: {e}"))?;
        for cert in CertificateDer::pem_slice_iter(&pem).filter_map(Result::ok) {
            roots.add(cert).map_err(|e| format!("caBundle: {e}"))?;
        }
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(Arc::new(config))
}
