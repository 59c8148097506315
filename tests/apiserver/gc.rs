//! Garbage collection through ownerReferences, and namespace termination.

use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::Resource;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use kubewright::testing::ApiServer;
use serde_json::json;

use crate::common::{api_err, cm, create_cm, server};

async fn owned_by(
    client: &kube::Client,
    owner: &ConfigMap,
    name: &str,
    block: bool,
    finalizer: Option<&str>,
) -> ConfigMap {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let mut c = cm(name, &[]);
    let mut oref: OwnerReference = owner.controller_owner_ref(&()).unwrap();
    oref.block_owner_deletion = Some(block);
    c.metadata.owner_references = Some(vec![oref]);
    c.metadata.finalizers = finalizer.map(|f| vec![f.to_string()]);
    api.create(&PostParams::default(), &c).await.unwrap()
}

#[tokio::test]
async fn background_deletion_collects_dependents() {
    let (_server, client) = server();
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let owner = create_cm(&client, "default", "owner").await;
    owned_by(&client, &owner, "child", true, None).await;
    api.delete("owner", &DeleteParams::background())
        .await
        .unwrap();
    assert_eq!(api_err(api.get("child").await.unwrap_err()).code, 404);
}

#[tokio::test]
async fn foreground_deletion_waits_for_blocking_dependents() {
    let (_server, client) = server();
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let owner = create_cm(&client, "default", "owner").await;
    owned_by(&client, &owner, "child", true, Some("example.dev/slow")).await;
    let pending = api
        .delete("owner", &DeleteParams::foreground())
        .await
        .unwrap()
        .left()
        .expect("owner waits");
    assert!(
        pending
            .metadata
            .finalizers
            .unwrap()
            .contains(&"foregroundDeletion".to_string())
    );
    let child = api.get("child").await.unwrap();
    assert!(
        child.metadata.deletion_timestamp.is_some(),
        "the dependent is being deleted"
    );
    api.patch(
        "child",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"finalizers": null}})),
    )
    .await
    .unwrap();
    assert_eq!(api_err(api.get("child").await.unwrap_err()).code, 404);
    assert_eq!(api_err(api.get("owner").await.unwrap_err()).code, 404);
}

#[tokio::test]
async fn orphan_deletion_keeps_dependents_without_the_reference() {
    let (_server, client) = server();
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let owner = create_cm(&client, "default", "owner").await;
    owned_by(&client, &owner, "child", true, None).await;
    api.delete("owner", &DeleteParams::orphan()).await.unwrap();
    assert_eq!(api_err(api.get("owner").await.unwrap_err()).code, 404);
    let child = api.get("child").await.unwrap();
    assert_eq!(child.metadata.owner_references, None);
}

#[tokio::test]
async fn without_controllers_nothing_is_collected() {
    let server = ApiServer::builder().controllers(false).build();
    let client = server.client();
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let owner = create_cm(&client, "default", "owner").await;
    owned_by(&client, &owner, "child", true, None).await;
    api.delete("owner", &DeleteParams::background())
        .await
        .unwrap();
    assert!(
        api.get("child").await.is_ok(),
        "a bare API server has no garbage collector"
    );
}

#[tokio::test]
async fn deleting_a_namespace_removes_its_contents() {
    let (_server, client) = server();
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let mut ns = Namespace::default();
    ns.metadata.name = Some("doomed".into());
    namespaces
        .create(&PostParams::default(), &ns)
        .await
        .unwrap();
    create_cm(&client, "doomed", "inside").await;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "doomed");
    let mut held = cm("held", &[]);
    held.metadata.finalizers = Some(vec!["example.dev/hold".into()]);
    api.create(&PostParams::default(), &held).await.unwrap();
    namespaces
        .delete("doomed", &DeleteParams::default())
        .await
        .unwrap();
    // Terminating while an object still has a finalizer; no new content allowed.
    let ns = namespaces.get("doomed").await.unwrap();
    assert_eq!(ns.status.unwrap().phase.as_deref(), Some("Terminating"));
    assert_eq!(api_err(api.get("inside").await.unwrap_err()).code, 404);
    let e = api_err(
        api.create(&PostParams::default(), &cm("late", &[]))
            .await
            .unwrap_err(),
    );
    assert_eq!((e.code, e.reason.as_str()), (403, "Forbidden"));
    api.patch(
        "held",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"finalizers": null}})),
    )
    .await
    .unwrap();
    assert_eq!(
        api_err(namespaces.get("doomed").await.unwrap_err()).code,
        404
    );
}

#[tokio::test]
async fn dry_runs_collect_nothing_and_take_no_resource_version() {
    let (server, client) = server();
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let owner = create_cm(&client, "default", "owner").await;
    owned_by(&client, &owner, "child", true, None).await;
    owned_by(&client, &owner, "held", true, Some("example.dev/hold")).await;
    let before = server.resource_version();
    let dry = || DeleteParams {
        dry_run: true,
        ..Default::default()
    };
    use kube::api::PropagationPolicy::{Background, Foreground, Orphan};
    for (name, policy) in [
        ("owner", Foreground),
        ("owner", Background),
        ("held", Orphan),
    ] {
        let params = DeleteParams {
            propagation_policy: Some(policy),
            ..dry()
        };
        api.delete(name, &params).await.unwrap();
    }
    api.delete_collection(&dry(), &Default::default())
        .await
        .unwrap();
    let pp = PatchParams {
        dry_run: true,
        ..Default::default()
    };
    api.patch("child", &pp, &Patch::Merge(json!({"data": {"k": "v"}})))
        .await
        .unwrap();
    api.patch(
        "child",
        &PatchParams::apply("dry").dry_run(),
        &Patch::Apply(json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "b"}})),
    )
    .await
    .unwrap();
    api.create(
        &PostParams {
            dry_run: true,
            ..Default::default()
        },
        &cm("new", &[]),
    )
    .await
    .unwrap();
    assert_eq!(
        server.resource_version(),
        before,
        "no resourceVersion taken"
    );
    let names: Vec<String> = api
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .map(|c| c.metadata.name.unwrap_or_default())
        .collect();
    assert_eq!(names, ["child", "held", "owner"]);
    let held = api.get("held").await.unwrap();
    assert_eq!(held.metadata.deletion_timestamp, None);
    assert_eq!(
        held.metadata.finalizers,
        Some(vec!["example.dev/hold".into()])
    );
    let child = api.get("child").await.unwrap();
    assert!(child.data.unwrap_or_default().is_empty(), "no patch stored");
}
