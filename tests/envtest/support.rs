//! Helpers of the envtest suite.

use std::time::Duration;

/// Process ids of running processes whose command line contains `marker` (a control plane's directory name).
pub fn processes_named(marker: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            // A zombie (Z) has exited; it only waits for its parent to collect it.
            let zombie = state
                .rsplit(')')
                .next()
                .is_some_and(|rest| rest.trim_start().starts_with('Z'));
            !zombie && String::from_utf8_lossy(&cmdline).contains(marker)
        })
        .collect()
}

/// Waits (bounded) until no process carries `marker`; panics naming the survivors.
pub async fn wait_until_gone(marker: &str) {
    for _ in 0..200 {
        if processes_named(marker).is_empty() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("processes left behind: {:?}", processes_named(marker));
}

/// Polls `f` (bounded: about 60 s) until it returns `Some`.
pub async fn eventually<T>(what: &str, mut f: impl AsyncFnMut() -> Option<T>) -> T {
    for _ in 0..600 {
        if let Some(v) = f().await {
            return v;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("timed out waiting for: {what}");
}

/// One HTTP exchange seen by a [`recording_client`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exchange {
    /// `GET`, `PATCH`, …
    pub method: String,
    /// Path and query.
    pub path: String,
    /// The response status.
    pub status: u16,
}

/// A client for the control plane that records every request's method, path and response status.
pub fn recording_client(
    cp: &kubewright::testing::envtest::ControlPlane,
) -> (
    kube::Client,
    std::sync::Arc<std::sync::Mutex<Vec<Exchange>>>,
) {
    recording_client_for(cp.config().clone())
}

/// [`recording_client`] with a given configuration (e.g. the control plane's with another identity).
pub fn recording_client_for(
    config: kube::Config,
) -> (
    kube::Client,
    std::sync::Arc<std::sync::Mutex<Vec<Exchange>>>,
) {
    use kube::client::ConfigExt;
    let log: std::sync::Arc<std::sync::Mutex<Vec<Exchange>>> = Default::default();
    let http = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build(config.rustls_https_connector().unwrap());
    let recorder = log.clone();
    let service = tower::service_fn(move |request: http::Request<kube::client::Body>| {
        let http = http.clone();
        let log = recorder.clone();
        let method = request.method().to_string();
        let path = request
            .uri()
            .path_and_query()
            .map(|p| p.to_string())
            .unwrap_or_default();
        async move {
            let response = http.request(request).await?;
            log.lock().unwrap().push(Exchange {
                method,
                path,
                status: response.status().as_u16(),
            });
            Ok::<_, tower::BoxError>(response)
        }
    });
    let service = tower::ServiceBuilder::new()
        .layer(config.base_uri_layer())
        .option_layer(config.auth_layer().unwrap())
        .service(service);
    let namespace = config.default_namespace.clone();
    (kube::Client::new(service, namespace), log)
}

/// `GET path` on `addr` over plain HTTP/1.1: the status and the body, or `None` when nothing answers.
pub async fn http_get(addr: std::net::SocketAddr, path: &str) -> Option<(u16, String)> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.ok()?;
    let request = format!("GET {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).await.ok()?;
    let status = response.split(' ').nth(1)?.parse().ok()?;
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())?;
    Some((status, body))
}

/// A port nothing listens on now, on 127.0.0.1.
pub fn free_address() -> std::net::SocketAddr {
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    free.local_addr().unwrap()
}

/// The value of the sample `name{labels}` in a Prometheus text exposition (`None` when absent).
pub fn sample_value(exposition: &str, sample: &str) -> Option<f64> {
    exposition.lines().find_map(|line| {
        let (name, value) = line.rsplit_once(' ')?;
        (name == sample).then(|| value.parse().ok()).flatten()
    })
}

/// A TLS connection to `127.0.0.1:port` trusting only the PEM certificates in `ca_pem`.
pub async fn tls_to_localhost(
    port: u16,
    ca_pem: &str,
) -> tokio_rustls::client::TlsStream<tokio::net::TcpStream> {
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls::pki_types::CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
        roots.add(cert.unwrap()).unwrap();
    }
    let config = rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    let tcp = tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .unwrap();
    tokio_rustls::TlsConnector::from(std::sync::Arc::new(config))
        .connect(
            rustls::pki_types::ServerName::try_from("127.0.0.1").unwrap(),
            tcp,
        )
        .await
        .unwrap()
}
