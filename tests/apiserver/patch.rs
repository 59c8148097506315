//! JSON, merge, strategic merge and server-side apply patches.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kubewright::testing::ApiServer;
use serde_json::json;

use crate::common::{api_err, create_cm, rv, server};
use crate::crud::deployment;

#[tokio::test]
async fn merge_and_json_patches() {
    let (_server, client) = server();
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    create_cm(&client, "default", "p").await;
    let out = api
        .patch(
            "p",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"k": null, "n": "1"}})),
        )
        .await
        .unwrap();
    assert_eq!(
        out.data.unwrap(),
        [("n".to_string(), "1".to_string())].into()
    );
    let ops: json_patch::Patch =
        serde_json::from_value(json!([{"op": "add", "path": "/data/m", "value": "2"}])).unwrap();
    let out = api
        .patch("p", &PatchParams::default(), &Patch::<()>::Json(ops))
        .await
        .unwrap();
    assert_eq!(out.data.unwrap()["m"], "2");
}

#[tokio::test]
async fn strategic_merge_merges_lists_by_key() {
    let (_server, client) = server();
    let api: Api<Deployment> = Api::namespaced(client, "default");
    api.create(&PostParams::default(), &deployment("smp", 1))
        .await
        .unwrap();
    let patch = json!({"spec": {"template": {"spec": {"containers": [
        {"name": "app", "image": "nginx:1.28"},
        {"name": "sidecar", "image": "busybox"}
    ]}}}});
    let out = api
        .patch("smp", &PatchParams::default(), &Patch::Strategic(patch))
        .await
        .unwrap();
    let containers = out.spec.unwrap().template.spec.unwrap().containers;
    let images: Vec<_> = containers
        .iter()
        .map(|c| (c.name.as_str(), c.image.as_deref()))
        .collect();
    assert!(images.contains(&("app", Some("nginx:1.28"))), "{images:?}");
    assert!(images.contains(&("sidecar", Some("busybox"))), "{images:?}");
    // A merge patch would have replaced the list wholesale.
    let merge =
        json!({"spec": {"template": {"spec": {"containers": [{"name": "only", "image": "x"}]}}}});
    let out = api
        .patch("smp", &PatchParams::default(), &Patch::Merge(merge))
        .await
        .unwrap();
    assert_eq!(out.spec.unwrap().template.spec.unwrap().containers.len(), 1);
}

fn apply_cm(data: serde_json::Value) -> serde_json::Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa"}, "data": data})
}

#[tokio::test]
async fn server_side_apply_tracks_owners_and_conflicts() {
    let (_server, client) = server();
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    let alice = PatchParams::apply("alice");
    let created = api
        .patch("ssa", &alice, &Patch::Apply(apply_cm(json!({"a": "1"}))))
        .await
        .unwrap();
    let mf = created.metadata.managed_fields.clone().unwrap();
    assert_eq!(mf.len(), 1);
    assert_eq!(mf[0].manager.as_deref(), Some("alice"));
    assert_eq!(mf[0].operation.as_deref(), Some("Apply"));
    assert_eq!(
        mf[0].fields_v1.as_ref().unwrap().0,
        json!({"f:data": {"f:a": {}}})
    );

    // Same apply again: nothing changes, not even the resourceVersion.
    let same = api
        .patch("ssa", &alice, &Patch::Apply(apply_cm(json!({"a": "1"}))))
        .await
        .unwrap();
    assert_eq!(
        same.metadata.resource_version,
        created.metadata.resource_version
    );

    // Bob agrees on a (shared ownership) and adds b.
    let bob = PatchParams::apply("bob");
    api.patch(
        "ssa",
        &bob,
        &Patch::Apply(apply_cm(json!({"a": "1", "b": "2"}))),
    )
    .await
    .unwrap();
    // Bob disagrees on a: conflict, nothing written.
    let e = api_err(
        api.patch(
            "ssa",
            &bob,
            &Patch::Apply(apply_cm(json!({"a": "9", "b": "2"}))),
        )
        .await
        .unwrap_err(),
    );
    assert_eq!((e.code, e.reason.as_str()), (409, "Conflict"));
    assert!(
        e.message.contains("conflict with \"alice\""),
        "{}",
        e.message
    );
    assert!(e.message.contains(".data.a"), "{}", e.message);
    assert_eq!(api.get("ssa").await.unwrap().data.unwrap()["a"], "1");
    // Forced, bob takes a over.
    let forced = api
        .patch(
            "ssa",
            &bob.clone().force(),
            &Patch::Apply(apply_cm(json!({"a": "9", "b": "2"}))),
        )
        .await
        .unwrap();
    assert_eq!(forced.data.as_ref().unwrap()["a"], "9");
    // Alice no longer owns a: dropping a from her config does not remove it.
    let out = api
        .patch("ssa", &alice, &Patch::Apply(apply_cm(json!({}))))
        .await
        .unwrap();
    assert_eq!(out.data.as_ref().unwrap()["a"], "9");
    // Bob drops b: he was its only owner, so it goes.
    let out = api
        .patch("ssa", &bob, &Patch::Apply(apply_cm(json!({"a": "9"}))))
        .await
        .unwrap();
    assert!(!out.data.unwrap().contains_key("b"));
}

#[tokio::test]
async fn updates_take_ownership_from_appliers() {
    let (_server, client) = server();
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    let alice = PatchParams::apply("alice");
    api.patch("ssa", &alice, &Patch::Apply(apply_cm(json!({"a": "1"}))))
        .await
        .unwrap();
    let editor = PatchParams {
        field_manager: Some("editor".into()),
        ..Default::default()
    };
    let edited = api
        .patch("ssa", &editor, &Patch::Merge(json!({"data": {"a": "2"}})))
        .await
        .unwrap();
    let managers: Vec<_> = edited
        .metadata
        .managed_fields
        .unwrap()
        .into_iter()
        .map(|m| (m.manager.unwrap(), m.operation.unwrap()))
        .collect();
    assert!(
        managers.contains(&("editor".to_string(), "Update".to_string())),
        "{managers:?}"
    );
    let e = api_err(
        api.patch("ssa", &alice, &Patch::Apply(apply_cm(json!({"a": "1"}))))
            .await
            .unwrap_err(),
    );
    assert!(
        e.message.contains("conflict with \"editor\""),
        "{}",
        e.message
    );
}

#[tokio::test]
async fn apply_requires_a_field_manager() {
    let (_server, client) = server();
    let req = http::Request::builder()
        .method("PATCH")
        .uri("/api/v1/namespaces/default/configmaps/x")
        .header("content-type", "application/apply-patch+yaml")
        .body(b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n".to_vec())
        .unwrap();
    let e = api_err(client.request::<ConfigMap>(req).await.unwrap_err());
    assert_eq!((e.code, e.reason.as_str()), (422, "Invalid"));
}

#[tokio::test]
async fn apply_on_the_status_subresource_is_tracked_separately() {
    // The server's own status semantics, without the workload controllers it plays by default.
    let server = ApiServer::builder().seed(7).workload_status(false).build();
    let client = server.client();
    let api: Api<Deployment> = Api::namespaced(client, "default");
    let pp = PatchParams::apply("ctl");
    let mut d = serde_json::to_value(deployment("st", 1)).unwrap();
    d["status"] = json!({"replicas": 7});
    let created = api.patch("st", &pp, &Patch::Apply(&d)).await.unwrap();
    assert_eq!(
        created.status.as_ref().and_then(|s| s.replicas),
        None,
        "status ignored on the main resource"
    );
    let st = api
        .patch_status(
            "st",
            &pp,
            &Patch::Apply(json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "st"}, "status": {"replicas": 7}})),
        )
        .await
        .unwrap();
    assert_eq!(st.status.unwrap().replicas, Some(7));
    let entries = st.metadata.managed_fields.clone().unwrap();
    assert!(
        entries
            .iter()
            .any(|e| e.subresource.as_deref() == Some("status")),
        "{entries:?}"
    );
    assert!(rv(&st.metadata) > rv(&created.metadata));
}
