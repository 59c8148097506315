//! Waiting for readiness: etcd's `/health`, kube-apiserver's `/readyz`, a CRD's `Established` condition.

use std::net::{Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use hyper_util::rt::TokioIo;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::Api;
use kube::{Client, Config};

use super::Error;
use super::process::Process;

const POLL: Duration = Duration::from_millis(100);

/// Polls `GET /health` on etcd's client port until it answers `"health":"true"`.
pub(crate) async fn wait_for_etcd(
    etcd: &mut Process,
    port: u16,
    timeout: Duration,
) -> Result<(), Error> {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let deadline = Instant::now() + timeout;
    loop {
        etcd.check_running()?;
        if let Some(body) = http_get(addr, "/health").await
            && body.contains(r#""health":"true""#)
        {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(etcd.not_ready(timeout, format!("GET http://{addr}/health")));
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Polls `GET /readyz` with the admin credentials until it answers `ok`.
pub(crate) async fn wait_for_apiserver(
    apiserver: &mut Process,
    config: &Config,
    timeout: Duration,
) -> Result<(), Error> {
    let client = quiet_client(config).map_err(|source| Error::Kube {
        context: "building a client to wait for kube-apiserver".into(),
        source,
    })?;
    let deadline = Instant::now() + timeout;
    loop {
        apiserver.check_running()?;
        let last = match http::Request::get("/readyz").body(Vec::new()) {
            Ok(request) => match client.request_text(request).await {
                Ok(body) if body.trim() == "ok" => return Ok(()),
                Ok(body) => body,
                Err(e) => e.to_string(),
            },
            Err(e) => e.to_string(),
        };
        if Instant::now() >= deadline {
            let binary = apiserver.binary();
            tracing::debug!(binary, %last, "not ready");
            return Err(apiserver.not_ready(timeout, format!("GET /readyz; last answer: {last}")));
        }
        tokio::time::sleep(POLL).await;
    }
}

/// A client without kube's request tracing, which logs every refused connection and 500 of a starting
/// server as an error.
pub(crate) fn quiet_client(config: &Config) -> Result<Client, kube::Error> {
    use kube::client::ConfigExt;
    let https = config.rustls_https_connector()?;
    let http = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build(https);
    let service = tower::ServiceBuilder::new()
        .layer(config.base_uri_layer())
        .option_layer(config.auth_layer()?)
        .map_err(|e: hyper_util::client::legacy::Error| -> tower::BoxError { e.into() })
        .service(http);
    Ok(Client::new(service, "default"))
}

/// Waits until the CRD is `Established` and the API server's discovery lists each of its served versions.
pub(crate) async fn wait_for_crd(
    client: &Client,
    crd: &CustomResourceDefinition,
    timeout: Duration,
) -> Result<(), Error> {
    let name = crd.metadata.name.clone().unwrap_or_default();
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    let deadline = Instant::now() + timeout;
    let mut conditions = String::from("none");
    loop {
        let current = api.get_opt(&name).await.ok().flatten();
        let established = current
            .as_ref()
            .and_then(|c| c.status.as_ref())
            .and_then(|s| s.conditions.as_ref())
            .map(|cs| {
                conditions = cs
                    .iter()
                    .map(|c| {
                        format!(
                            "{}={} ({})",
                            c.type_,
                            c.status,
                            c.message.as_deref().unwrap_or("")
                        )
                    })
                    .collect::<Vec<_>>()
                    .join(", ");
                cs.iter()
                    .any(|c| c.type_ == "Established" && c.status == "True")
            })
            .unwrap_or(false);
        if established && served(client, crd).await {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(Error::CrdNotEstablished {
                name,
                timeout,
                conditions,
            });
        }
        tokio::time::sleep(POLL).await;
    }
}

/// Whether discovery lists the CRD's plural under every served version.
async fn served(client: &Client, crd: &CustomResourceDefinition) -> bool {
    let spec = &crd.spec;
    for version in spec.versions.iter().filter(|v| v.served) {
        let path = format!("/apis/{}/{}", spec.group, version.name);
        let Ok(list) = client
            .list_api_group_resources(&format!("{}/{}", spec.group, version.name))
            .await
        else {
            tracing::trace!(%path, "not yet served");
            return false;
        };
        if !list.resources.iter().any(|r| r.name == spec.names.plural) {
            return false;
        }
    }
    true
}

/// A plain HTTP GET; the body when the answer is 200.
async fn http_get(addr: SocketAddr, path: &str) -> Option<String> {
    let stream = tokio::net::TcpStream::connect(addr).await.ok()?;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .ok()?;
    let connection = tokio::spawn(connection);
    let request = http::Request::get(path)
        .header(http::header::HOST, addr.to_string())
        .body(Empty::<Bytes>::new())
        .ok()?;
    let answer = async {
        let response = tokio::time::timeout(Duration::from_secs(2), sender.send_request(request))
            .await
            .ok()?
            .ok()?;
        if response.status() != http::StatusCode::OK {
            return None;
        }
        let body = response.into_body().collect().await.ok()?.to_bytes();
        Some(String::from_utf8_lossy(&body).into_owned())
    }
    .await;
    connection.abort();
    answer
}
