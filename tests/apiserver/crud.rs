//! Create, read, update, delete and the metadata the server maintains.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::core::ObjectMeta;
use kubewright::testing::ApiServer;
use serde_json::json;

use crate::common::{api_err, cm, create_cm, rv, server};

pub fn deployment(name: &str, replicas: i32) -> Deployment {
    serde_json::from_value(json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": { "name": name },
        "spec": {
            "replicas": replicas,
            "selector": { "matchLabels": { "app": name } },
            "template": {
                "metadata": { "labels": { "app": name } },
                "spec": { "containers": [{ "name": "app", "image": "nginx:1.27" }] }
            }
        }
    }))
    .expect("deployment")
}

#[tokio::test]
async fn create_sets_system_metadata_and_one_counter_orders_everything() {
    let (_server, client) = server();
    let a = create_cm(&client, "default", "a").await;
    let secrets: Api<Secret> = Api::namespaced(client.clone(), "default");
    let mut s = Secret::default();
    s.metadata.name = Some("s".into());
    let s = secrets.create(&PostParams::default(), &s).await.unwrap();
    let b = create_cm(&client, "default", "b").await;
    assert!(a.metadata.uid.is_some());
    assert!(a.metadata.creation_timestamp.is_some());
    assert_ne!(a.metadata.uid, b.metadata.uid);
    assert!(rv(&a.metadata) < rv(&s.metadata));
    assert!(rv(&s.metadata) < rv(&b.metadata));
    // ConfigMaps have no generation; workloads do.
    assert_eq!(a.metadata.generation, None);
    let got: Api<ConfigMap> = Api::namespaced(client, "default");
    let fetched = got.get("a").await.unwrap();
    assert_eq!(
        fetched.metadata.resource_version,
        a.metadata.resource_version
    );
    assert_eq!(fetched.data, a.data);
}

#[tokio::test]
async fn errors_come_back_as_kube_status_errors() {
    let (_server, client) = server();
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    create_cm(&client, "default", "dup").await;
    let e = api_err(
        api.create(&PostParams::default(), &cm("dup", &[]))
            .await
            .unwrap_err(),
    );
    assert_eq!((e.code, e.reason.as_str()), (409, "AlreadyExists"));
    assert_eq!(e.message, "configmaps \"dup\" already exists");
    let e = api_err(api.get("missing").await.unwrap_err());
    assert_eq!((e.code, e.reason.as_str()), (404, "NotFound"));
    assert_eq!(e.message, "configmaps \"missing\" not found");
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "default");
    let e = api_err(deployments.get("nope").await.unwrap_err());
    assert_eq!(e.message, "deployments.apps \"nope\" not found");
    let elsewhere: Api<ConfigMap> = Api::namespaced(client, "no-such-namespace");
    let e = api_err(
        elsewhere
            .create(&PostParams::default(), &cm("x", &[]))
            .await
            .unwrap_err(),
    );
    assert_eq!((e.code, e.reason.as_str()), (404, "NotFound"));
    assert_eq!(e.message, "namespaces \"no-such-namespace\" not found");
}

#[tokio::test]
async fn stale_resource_version_is_a_conflict() {
    let (_server, client) = server();
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let first = create_cm(&client, "default", "c").await;
    let mut newer = first.clone();
    newer.data = Some([("k".to_string(), "2".to_string())].into());
    let newer = api
        .replace("c", &PostParams::default(), &newer)
        .await
        .unwrap();
    assert!(rv(&newer.metadata) > rv(&first.metadata));
    let mut stale = first.clone();
    stale.data = Some([("k".to_string(), "3".to_string())].into());
    let e = api_err(
        api.replace("c", &PostParams::default(), &stale)
            .await
            .unwrap_err(),
    );
    assert_eq!((e.code, e.reason.as_str()), (409, "Conflict"));
    assert!(
        e.message.contains("the object has been modified"),
        "{}",
        e.message
    );
    assert_eq!(api.get("c").await.unwrap().data.unwrap()["k"], "2");
}

#[tokio::test]
async fn generate_name_appends_a_random_suffix() {
    let (_server, client) = server();
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    let mut obj = ConfigMap::default();
    obj.metadata.generate_name = Some("gen-".into());
    let a = api.create(&PostParams::default(), &obj).await.unwrap();
    let b = api.create(&PostParams::default(), &obj).await.unwrap();
    let name = a.metadata.name.unwrap();
    assert!(name.starts_with("gen-") && name.len() == 9, "{name}");
    assert_ne!(Some(name), b.metadata.name);
    let e = api_err(
        api.create(&PostParams::default(), &ConfigMap::default())
            .await
            .unwrap_err(),
    );
    assert_eq!((e.code, e.reason.as_str()), (422, "Invalid"));
    assert!(
        e.message.contains("name or generateName is required"),
        "{}",
        e.message
    );
}

#[tokio::test]
async fn generation_moves_only_with_the_spec() {
    // The server's own semantics, without the workload controllers it plays by default.
    let server = ApiServer::builder().seed(7).workload_status(false).build();
    let client = server.client();
    let api: Api<Deployment> = Api::namespaced(client, "default");
    let d = api
        .create(&PostParams::default(), &deployment("web", 1))
        .await
        .unwrap();
    assert_eq!(d.metadata.generation, Some(1));
    let pp = PatchParams::default();
    let d = api
        .patch(
            "web",
            &pp,
            &Patch::Merge(json!({"metadata": {"labels": {"x": "y"}}})),
        )
        .await
        .unwrap();
    assert_eq!(d.metadata.generation, Some(1), "labels are metadata");
    let d = api
        .patch_status(
            "web",
            &pp,
            &Patch::Merge(json!({"status": {"replicas": 3}})),
        )
        .await
        .unwrap();
    assert_eq!(d.metadata.generation, Some(1), "status is not spec");
    assert_eq!(d.status.unwrap().replicas, Some(3));
    let d = api
        .patch("web", &pp, &Patch::Merge(json!({"spec": {"replicas": 2}})))
        .await
        .unwrap();
    assert_eq!(d.metadata.generation, Some(2));
    // An identical write changes nothing at all, not even the resourceVersion.
    let again = api
        .patch("web", &pp, &Patch::Merge(json!({"spec": {"replicas": 2}})))
        .await
        .unwrap();
    assert_eq!(again.metadata.resource_version, d.metadata.resource_version);
}

#[tokio::test]
async fn status_subresource_splits_writes() {
    // The server's own status semantics, without the workload controllers it plays by default.
    let server = ApiServer::builder().seed(7).workload_status(false).build();
    let client = server.client();
    let api: Api<Deployment> = Api::namespaced(client, "default");
    let mut d = deployment("split", 1);
    d.status = Some(serde_json::from_value(json!({"replicas": 9})).unwrap());
    let created = api.create(&PostParams::default(), &d).await.unwrap();
    assert_eq!(
        created.status.as_ref().and_then(|s| s.replicas),
        None,
        "status is dropped on create"
    );
    // A write to the main resource ignores status.
    let mut main = created.clone();
    main.status = Some(serde_json::from_value(json!({"replicas": 5})).unwrap());
    main.spec.as_mut().unwrap().replicas = Some(4);
    let after_main = api
        .replace("split", &PostParams::default(), &main)
        .await
        .unwrap();
    assert_eq!(after_main.spec.as_ref().unwrap().replicas, Some(4));
    assert_eq!(after_main.status.as_ref().and_then(|s| s.replicas), None);
    // A write to /status ignores everything else.
    let mut status = after_main.clone();
    status.status = Some(serde_json::from_value(json!({"replicas": 4})).unwrap());
    status.spec.as_mut().unwrap().replicas = Some(100);
    status.metadata.labels = Some([("ignored".to_string(), "yes".to_string())].into());
    let after_status = api
        .replace_status("split", &PostParams::default(), &status)
        .await
        .unwrap();
    assert_eq!(
        after_status.status.as_ref().and_then(|s| s.replicas),
        Some(4)
    );
    assert_eq!(after_status.spec.as_ref().unwrap().replicas, Some(4));
    assert_eq!(after_status.metadata.labels, None);
    assert_eq!(after_status.metadata.generation, Some(2));
}

#[tokio::test]
async fn finalizers_hold_deletion_until_removed() {
    let (_server, client) = server();
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    let mut obj = cm("held", &[]);
    obj.metadata.finalizers = Some(vec!["example.dev/hold".into()]);
    api.create(&PostParams::default(), &obj).await.unwrap();
    let pending = api.delete("held", &DeleteParams::default()).await.unwrap();
    let pending = pending.left().expect("object still there");
    assert!(pending.metadata.deletion_timestamp.is_some());
    // Deleting again changes nothing.
    let again = api
        .delete("held", &DeleteParams::default())
        .await
        .unwrap()
        .left()
        .unwrap();
    assert_eq!(
        again.metadata.resource_version,
        pending.metadata.resource_version
    );
    // No new finalizers while deleting.
    let e = api_err(
        api.patch(
            "held",
            &PatchParams::default(),
            &Patch::Merge(
                json!({"metadata": {"finalizers": ["example.dev/hold", "example.dev/more"]}}),
            ),
        )
        .await
        .unwrap_err(),
    );
    assert_eq!((e.code, e.reason.as_str()), (422, "Invalid"));
    assert!(
        e.message.contains("no new finalizers can be added"),
        "{}",
        e.message
    );
    // Removing the last finalizer deletes it.
    api.patch(
        "held",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"finalizers": null}})),
    )
    .await
    .unwrap();
    assert_eq!(api_err(api.get("held").await.unwrap_err()).code, 404);
}

#[tokio::test]
async fn delete_returns_status_for_builtins_and_checks_preconditions() {
    let (_server, client) = server();
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let c = create_cm(&client, "default", "gone").await;
    let mut dp = DeleteParams {
        preconditions: Some(kube::api::Preconditions {
            uid: Some("not-the-uid".into()),
            resource_version: None,
        }),
        ..Default::default()
    };
    let e = api_err(api.delete("gone", &dp).await.unwrap_err());
    assert_eq!((e.code, e.reason.as_str()), (409, "Conflict"));
    dp.preconditions = Some(kube::api::Preconditions {
        uid: c.metadata.uid.clone(),
        resource_version: c.metadata.resource_version.clone(),
    });
    let status = api
        .delete("gone", &dp)
        .await
        .unwrap()
        .right()
        .expect("a Status");
    assert_eq!(status.details.unwrap().name, "gone");
    assert_eq!(
        api_err(
            api.delete("gone", &DeleteParams::default())
                .await
                .unwrap_err()
        )
        .code,
        404
    );
}

#[tokio::test]
async fn delete_collection_honours_selectors() {
    let (_server, client) = server();
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    for (name, team) in [("a", "red"), ("b", "red"), ("c", "blue")] {
        let mut c = cm(name, &[]);
        c.metadata.labels = Some([("team".to_string(), team.to_string())].into());
        api.create(&PostParams::default(), &c).await.unwrap();
    }
    api.delete_collection(
        &DeleteParams::default(),
        &ListParams::default().labels("team=red"),
    )
    .await
    .unwrap();
    let left: Vec<String> = api
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|c| c.metadata.name)
        .collect();
    assert_eq!(left, vec!["c"]);
}

#[tokio::test]
async fn dry_run_stores_nothing() {
    let (server, client) = server();
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    let before = server.resource_version();
    let pp = PostParams {
        dry_run: true,
        ..Default::default()
    };
    let out = api.create(&pp, &cm("dry", &[])).await.unwrap();
    assert_eq!(out.metadata.name.as_deref(), Some("dry"));
    assert_eq!(server.resource_version(), before);
    assert_eq!(api_err(api.get("dry").await.unwrap_err()).code, 404);
}

#[tokio::test]
async fn bad_input_gets_the_real_status_and_changes_nothing() {
    let (server, client) = server();
    create_cm(&client, "default", "keep").await;
    let before = server.resource_version();
    let send = |method: &str, path: &str, ct: &str, body: &str| {
        let req = http::Request::builder()
            .method(method)
            .uri(path)
            .header("content-type", ct)
            .body(body.as_bytes().to_vec())
            .unwrap();
        let client = client.clone();
        async move {
            let err = client.request::<serde_json::Value>(req).await.unwrap_err();
            api_err(err)
        }
    };
    let e = send(
        "POST",
        "/api/v1/namespaces/default/configmaps",
        "application/json",
        "{not json",
    )
    .await;
    assert_eq!((e.code, e.reason.as_str()), (400, "BadRequest"));
    let e = send(
        "POST",
        "/api/v1/namespaces/default/configmaps",
        "application/json",
        r#"{"apiVersion":"apps/v1","kind":"ConfigMap","metadata":{"name":"x"}}"#,
    )
    .await;
    assert_eq!(e.code, 400);
    assert_eq!(
        e.message,
        r#"ConfigMap in version "v1" cannot be handled as a ConfigMap: no kind "ConfigMap" is registered for version "apps/v1" in scheme "pkg/runtime/scheme.go:111""#
    );
    let e = send(
        "POST",
        "/api/v1/namespaces/default/widgets",
        "application/json",
        "{}",
    )
    .await;
    assert_eq!((e.code, e.reason.as_str()), (404, "NotFound"));
    let e = send(
        "POST",
        "/api/v1/namespaces/default/configmaps",
        "application/json",
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"Bad_Name"}}"#,
    )
    .await;
    assert_eq!((e.code, e.reason.as_str()), (422, "Invalid"));
    assert!(
        e.message
            .starts_with("ConfigMap \"Bad_Name\" is invalid: metadata.name: Invalid value"),
        "{}",
        e.message
    );
    let e = send(
        "POST",
        "/api/v1/namespaces/default/configmaps",
        "application/json",
        r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"typed"},"data":{"k":1}}"#,
    )
    .await;
    assert_eq!((e.code, e.reason.as_str()), (400, "BadRequest"));
    let e = send(
        "GET",
        "/api/v1/namespaces/default/configmaps?labelSelector=a%20in%20(",
        "application/json",
        "",
    )
    .await;
    assert_eq!((e.code, e.reason.as_str()), (400, "BadRequest"));
    let e = send(
        "GET",
        "/api/v1/namespaces/default/configmaps?fieldSelector=spec.x%3D1",
        "application/json",
        "",
    )
    .await;
    // ConfigMaps have no field selectors of their own: apimachinery's default conversion answers (checked
    // against kube-apiserver by tests/differential).
    assert_eq!(
        e.message,
        "\"spec.x\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
    );
    let e = send(
        "PATCH",
        "/api/v1/namespaces/default/configmaps/keep",
        "application/json-patch+json",
        r#"[{"op":"test","path":"/data/k","value":"other"}]"#,
    )
    .await;
    assert_eq!((e.code, e.reason.as_str()), (422, "Invalid"));
    let e = send(
        "PATCH",
        "/api/v1/namespaces/default/configmaps/keep",
        "application/merge-patch+json",
        "[1",
    )
    .await;
    assert_eq!(e.code, 400);
    let e = send(
        "PATCH",
        "/api/v1/namespaces/default/configmaps/keep",
        "text/plain",
        "{}",
    )
    .await;
    assert_eq!((e.code, e.reason.as_str()), (415, "UnsupportedMediaType"));
    assert_eq!(
        server.resource_version(),
        before,
        "no failed request may change state"
    );
}

#[tokio::test]
async fn yaml_bodies_are_accepted() {
    let (_server, client) = server();
    let req = http::Request::builder()
        .method("POST")
        .uri("/api/v1/namespaces/default/configmaps")
        .header("content-type", "application/yaml")
        .body(
            b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-yaml\ndata:\n  a: b\n"
                .to_vec(),
        )
        .unwrap();
    let created: ConfigMap = client.request(req).await.unwrap();
    assert_eq!(created.data.unwrap()["a"], "b");
}

#[tokio::test]
async fn namespaces_and_other_builtins_work() {
    let (_server, client) = server();
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let names: Vec<String> = namespaces
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|n| n.metadata.name)
        .collect();
    for ns in ["default", "kube-system", "kube-public", "kube-node-lease"] {
        assert!(names.iter().any(|n| n == ns), "{names:?}");
    }
    let mut ns = Namespace::default();
    ns.metadata.name = Some("team-a".into());
    let ns = namespaces
        .create(&PostParams::default(), &ns)
        .await
        .unwrap();
    assert_eq!(ns.status.unwrap().phase.as_deref(), Some("Active"));
    let leases: Api<Lease> = Api::namespaced(client, "team-a");
    let lease = Lease {
        metadata: ObjectMeta {
            name: Some("leader".into()),
            ..Default::default()
        },
        spec: Some(
            serde_json::from_value(json!({"holderIdentity": "me", "leaseDurationSeconds": 15}))
                .unwrap(),
        ),
    };
    let lease = leases.create(&PostParams::default(), &lease).await.unwrap();
    assert_eq!(lease.spec.unwrap().holder_identity.as_deref(), Some("me"));
}

#[tokio::test]
async fn scale_subresource_reads_and_writes_replicas() {
    let (_server, client) = server();
    let api: Api<Deployment> = Api::namespaced(client, "default");
    api.create(&PostParams::default(), &deployment("scaled", 2))
        .await
        .unwrap();
    let scale = api.get_scale("scaled").await.unwrap();
    assert_eq!(scale.spec.unwrap().replicas, Some(2));
    assert_eq!(
        scale.status.unwrap().selector.as_deref(),
        Some("app=scaled")
    );
    api.patch_scale(
        "scaled",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"replicas": 5}})),
    )
    .await
    .unwrap();
    let d = api.get("scaled").await.unwrap();
    assert_eq!(d.spec.unwrap().replicas, Some(5));
    assert_eq!(d.metadata.generation, Some(2));
}

#[tokio::test]
async fn builtin_defaults_are_filled_in() {
    let (_server, client) = server();
    let api: Api<Deployment> = Api::namespaced(client, "default");
    let d = api
        .create(&PostParams::default(), &deployment("defaults", 1))
        .await
        .unwrap();
    let spec = d.spec.unwrap();
    assert_eq!(spec.revision_history_limit, Some(10));
    let c = &spec.template.spec.unwrap().containers[0];
    assert_eq!(c.image_pull_policy.as_deref(), Some("IfNotPresent"));
    assert_eq!(
        c.termination_message_path.as_deref(),
        Some("/dev/termination-log")
    );
}
