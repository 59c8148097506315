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

/// Reads a value (bounded: about 60 s) until `done` holds for it; the panic on timeout shows the value last
/// read, so that a failure says where the objects stopped.
pub async fn eventually_read<V: std::fmt::Display>(
    what: &str,
    mut read: impl AsyncFnMut() -> V,
    done: impl Fn(&V) -> bool,
) -> V {
    let mut last = None;
    for _ in 0..600 {
        let value = read().await;
        if done(&value) {
            return value;
        }
        last = Some(value);
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let last = last.map_or_else(|| "nothing".to_string(), |v| format!("{v:#}"));
    panic!("timed out waiting for: {what}; last read: {last}");
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

/// Installs `manifests`' ServiceAccount (in its namespace, created here), ClusterRole and binding through
/// `admin`, and returns the control plane's configuration as that account and nothing else (a TokenRequest
/// token), so an operator run with it has exactly the RBAC its manifests derive.
pub async fn own_account(
    cp: &kubewright::testing::envtest::ControlPlane,
    admin: &kube::Client,
    manifests: &kubewright::manifests::Manifests,
) -> kube::Config {
    use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
    use k8s_openapi::api::core::v1::{Namespace, ServiceAccount};
    use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding};
    use kube::api::{Api, PostParams};
    let pp = PostParams::default();
    let account = manifests.service_account();
    let namespace = account.metadata.namespace.clone().expect("a namespace");
    let name = account.metadata.name.clone().expect("a name");
    let mut ns = Namespace::default();
    ns.metadata.name = Some(namespace.clone());
    let namespaces: Api<Namespace> = Api::all(admin.clone());
    if namespaces.get_opt(&namespace).await.unwrap().is_none() {
        namespaces.create(&pp, &ns).await.unwrap();
    }
    let accounts: Api<ServiceAccount> = Api::namespaced(admin.clone(), &namespace);
    accounts.create(&pp, &account).await.unwrap();
    Api::<ClusterRole>::all(admin.clone())
        .create(&pp, &manifests.cluster_role())
        .await
        .unwrap();
    Api::<ClusterRoleBinding>::all(admin.clone())
        .create(&pp, &manifests.cluster_role_binding())
        .await
        .unwrap();
    let request = TokenRequest {
        spec: TokenRequestSpec {
            audiences: Vec::new(),
            expiration_seconds: Some(3600),
            ..Default::default()
        },
        ..Default::default()
    };
    let token = accounts
        .create_token_request(&name, &pp, &request)
        .await
        .unwrap()
        .status
        .expect("a token")
        .token;
    let mut config = cp.config().clone();
    config.auth_info = kube::config::AuthInfo {
        token: Some(token.into()),
        ..Default::default()
    };
    config
}

/// Whether the user `user` may `verb` the `resource` (with `subresource`, `""` for none) of the core group in
/// `namespace`, as the API server's authorizer answers a SubjectAccessReview.
pub async fn may(
    admin: &kube::Client,
    user: &str,
    verb: &str,
    resource: &str,
    subresource: &str,
    namespace: &str,
) -> bool {
    use k8s_openapi::api::authorization::v1::{
        ResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
    };
    let review = SubjectAccessReview {
        spec: SubjectAccessReviewSpec {
            user: Some(user.into()),
            resource_attributes: Some(ResourceAttributes {
                verb: Some(verb.into()),
                resource: Some(resource.into()),
                subresource: (!subresource.is_empty()).then(|| subresource.into()),
                namespace: Some(namespace.into()),
                ..Default::default()
            }),
            ..Default::default()
        },
        ..Default::default()
    };
    kube::Api::<SubjectAccessReview>::all(admin.clone())
        .create(&Default::default(), &review)
        .await
        .unwrap()
        .status
        .expect("a review status")
        .allowed
}
