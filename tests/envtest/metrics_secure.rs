//! `--metrics-secure` on the real kube-apiserver: `/metrics` over HTTPS answers 401 without a token or with
//! one the API server does not accept, 403 to a ServiceAccount not allowed to `get /metrics`, and 200 to one
//! bound to the manifests' `metrics-reader` ClusterRole.

use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
use k8s_openapi::api::core::v1::ServiceAccount;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, RoleRef, Subject};
use kube::api::{Api, ObjectMeta, PostParams};
use kubewright::admission::Certificates;
use kubewright::manifests::Manifests;
use kubewright::testing::envtest::ControlPlane;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// `GET /metrics` over HTTPS with `token`, trusting `ca_pem`: the status code.
async fn get(port: u16, ca_pem: &str, token: Option<&str>) -> u16 {
    let mut tls = crate::support::tls_to_localhost(port, ca_pem).await;
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    let request =
        format!("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n{auth}Connection: close\r\n\r\n");
    tls.write_all(request.as_bytes()).await.unwrap();
    let mut answer = String::new();
    let _ = tls.read_to_string(&mut answer).await;
    answer
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0)
}

async fn token_of(accounts: &Api<ServiceAccount>, name: &str) -> String {
    accounts
        .create(
            &PostParams::default(),
            &ServiceAccount {
                metadata: ObjectMeta {
                    name: Some(name.into()),
                    ..Default::default()
                },
                ..Default::default()
            },
        )
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
    accounts
        .create_token_request(name, &PostParams::default(), &request)
        .await
        .unwrap()
        .status
        .expect("a token")
        .token
}

#[tokio::test]
async fn secured_metrics_answer_401_403_and_200_as_the_cluster_decides() {
    let Some(cp) = ControlPlane::shared_or_skip("secured metrics on kube-apiserver").await else {
        return;
    };
    let ns = cp.namespace().await.unwrap();
    let admin = cp.client().unwrap();
    let accounts: Api<ServiceAccount> = Api::namespaced(admin.clone(), &ns);
    let allowed = token_of(&accounts, "scraper").await;
    let denied = token_of(&accounts, "stranger").await;
    // The manifests' reader role, bound to the scraper.
    let reader = Manifests::new(format!("op-{ns}"))
        .metrics(8080)
        .metrics_secure(true)
        .metrics_reader_role()
        .unwrap();
    let reader_name = reader.metadata.name.clone().unwrap();
    Api::<ClusterRole>::all(admin.clone())
        .create(&PostParams::default(), &reader)
        .await
        .unwrap();
    Api::<ClusterRoleBinding>::all(admin.clone())
        .create(
            &PostParams::default(),
            &ClusterRoleBinding {
                metadata: ObjectMeta {
                    name: Some(reader_name.clone()),
                    ..Default::default()
                },
                role_ref: RoleRef {
                    api_group: "rbac.authorization.k8s.io".into(),
                    kind: "ClusterRole".into(),
                    name: reader_name,
                },
                subjects: Some(vec![Subject {
                    kind: "ServiceAccount".into(),
                    name: "scraper".into(),
                    namespace: Some(ns.clone()),
                    ..Default::default()
                }]),
            },
        )
        .await
        .unwrap();

    let certs = Certificates::generate(["127.0.0.1"]).unwrap();
    let ca = certs.ca_bundle().to_string();
    let addr = crate::support::free_address();
    let server = kubewright::metrics::serve_secure(
        addr,
        kubewright::metrics::Metrics::global(),
        admin.clone(),
        certs,
    )
    .await
    .unwrap();
    let serving = tokio::spawn(server);
    let port = addr.port();
    assert_eq!(get(port, &ca, None).await, 401);
    assert_eq!(get(port, &ca, Some("not-a-token")).await, 401);
    assert_eq!(get(port, &ca, Some(&denied)).await, 403);
    assert_eq!(get(port, &ca, Some(&allowed)).await, 200);
    // Answered from the review cache the second time.
    assert_eq!(get(port, &ca, Some(&allowed)).await, 200);
    serving.abort();
}

/// `--metrics-secure` on the embedded cluster: its API server answers the TokenReview (it knows no token, so
/// every scraper gets 401) instead of failing the review with 404.
#[tokio::test]
async fn secured_metrics_review_tokens_on_the_embedded_cluster() {
    let server = kubewright::testing::apiserver::ApiServer::new();
    let certs = Certificates::generate(["127.0.0.1"]).unwrap();
    let ca = certs.ca_bundle().to_string();
    let addr = crate::support::free_address();
    let serving = tokio::spawn(
        kubewright::metrics::serve_secure(
            addr,
            kubewright::metrics::Metrics::global(),
            server.client(),
            certs,
        )
        .await
        .unwrap(),
    );
    assert_eq!(get(addr.port(), &ca, None).await, 401);
    assert_eq!(get(addr.port(), &ca, Some("a-token")).await, 401);
    let reviews: Vec<u16> = server
        .requests()
        .iter()
        .filter(|r| r.resource == "tokenreviews")
        .map(|r| r.code)
        .collect();
    assert_eq!(reviews, [201], "the token is reviewed once, and answered");
    serving.abort();
}
