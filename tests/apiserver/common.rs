//! Shared helpers.

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, PostParams};
use kube::core::ObjectMeta;
use kubewright::testing::ApiServer;

pub fn server() -> (ApiServer, kube::Client) {
    let server = ApiServer::builder().seed(7).build();
    let client = server.client();
    (server, client)
}

pub fn cm(name: &str, data: &[(&str, &str)]) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        data: Some(
            data.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        ),
        ..Default::default()
    }
}

pub async fn create_cm(client: &kube::Client, ns: &str, name: &str) -> ConfigMap {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    api.create(&PostParams::default(), &cm(name, &[("k", "v")]))
        .await
        .expect("create configmap")
}

/// The API error inside a kube error.
pub fn api_err(e: kube::Error) -> kube::core::Status {
    match e {
        kube::Error::Api(s) => *s,
        other => panic!("expected an API error, got {other:?}"),
    }
}

pub fn rv(meta: &ObjectMeta) -> u64 {
    meta.resource_version
        .as_deref()
        .expect("resourceVersion")
        .parse()
        .expect("numeric resourceVersion")
}
