//! The built-in kinds of Kubernetes 1.35 on the in-memory server: a minimal object of each kind added
//! beyond the first few is created, read, listed and deleted through a real client.

use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams, PostParams,
};
use tests::builtin_objects;

use crate::common::server;

#[tokio::test]
async fn a_minimal_object_of_each_kind_round_trips() {
    let (_server, client) = server();
    let all = builtin_objects::all();
    assert!(all.len() >= 20, "a representative set");
    for minimal in all {
        let object: DynamicObject =
            serde_json::from_value(minimal.object.clone()).expect("a dynamic object");
        let types = object.types.clone().expect("apiVersion and kind");
        let (group, version) = match types.api_version.split_once('/') {
            Some((g, v)) => (g.to_string(), v.to_string()),
            None => (String::new(), types.api_version.clone()),
        };
        let plural = minimal
            .collection
            .rsplit('/')
            .next()
            .expect("a plural")
            .to_string();
        let resource = ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk(&group, &version, &types.kind),
            &plural,
        );
        let api: Api<DynamicObject> = if minimal.collection.contains("{ns}") {
            Api::namespaced_with(client.clone(), "default", &resource)
        } else {
            Api::all_with(client.clone(), &resource)
        };
        let name = minimal.name().to_string();
        let kind = &types.kind;
        api.create(&PostParams::default(), &object)
            .await
            .unwrap_or_else(|e| panic!("create {kind}: {e}"));
        let got = api
            .get(&name)
            .await
            .unwrap_or_else(|e| panic!("get {kind}: {e}"));
        assert_eq!(got.types.map(|t| t.kind).as_deref(), Some(kind.as_str()));
        let listed = api
            .list(&ListParams::default())
            .await
            .unwrap_or_else(|e| panic!("list {kind}: {e}"));
        assert!(
            listed
                .items
                .iter()
                .any(|o| o.metadata.name.as_deref() == Some(name.as_str())),
            "{kind} listed"
        );
        api.delete(&name, &DeleteParams::default())
            .await
            .unwrap_or_else(|e| panic!("delete {kind}: {e}"));
        assert!(
            api.get_opt(&name).await.expect("get").is_none(),
            "{kind} deleted"
        );
    }
}

#[tokio::test]
async fn hpa_v1_reads_the_v2_object() {
    use k8s_openapi::api::autoscaling::{v1, v2};
    let (_server, client) = server();
    let v2_api: Api<v2::HorizontalPodAutoscaler> = Api::namespaced(client.clone(), "default");
    let v1_api: Api<v1::HorizontalPodAutoscaler> = Api::namespaced(client, "default");
    let hpa: v2::HorizontalPodAutoscaler = serde_json::from_value(serde_json::json!({
        "metadata": { "name": "h" },
        "spec": { "maxReplicas": 3, "scaleTargetRef": { "apiVersion": "apps/v1", "kind": "Deployment", "name": "d" },
                  "metrics": [{ "type": "Resource", "resource": { "name": "cpu",
                      "target": { "type": "Utilization", "averageUtilization": 60 } } }] },
    }))
    .expect("an HPA");
    v2_api
        .create(&PostParams::default(), &hpa)
        .await
        .expect("created");
    let read = v1_api.get("h").await.expect("read through v1");
    let spec = read.spec.expect("a spec");
    assert_eq!(spec.target_cpu_utilization_percentage, Some(60));
    assert_eq!(spec.max_replicas, 3);
}

#[tokio::test]
async fn namespaces_refuse_deletecollection_as_discovery_says() {
    use k8s_openapi::api::core::v1::Namespace;
    let (_server, client) = server();
    let api: Api<Namespace> = Api::all(client);
    let e = api
        .delete_collection(&DeleteParams::default(), &ListParams::default())
        .await
        .expect_err("refused");
    let kube::Error::Api(status) = e else {
        panic!("an API error: {e}");
    };
    assert_eq!(
        (status.code, status.reason.as_str()),
        (405, "MethodNotAllowed")
    );
}
