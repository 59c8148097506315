//! CustomResourceDefinitions: registration, schema enforcement, subresources and cleanup.

use std::time::Duration;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, ListParams, Patch,
    PatchParams, PostParams,
};
use kube::runtime::wait::{await_condition, conditions};
use kube::{CustomResource, CustomResourceExt, Resource};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::common::{api_err, server};

fn default_replicas() -> i32 {
    1
}

/// The WebApp of the examples, as a test fixture.
#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "example.dev",
    version = "v1",
    kind = "WebApp",
    namespaced,
    status = "WebAppStatus",
    shortname = "wa"
)]
#[serde(rename_all = "camelCase")]
pub struct WebAppSpec {
    pub image: String,
    #[serde(default = "default_replicas")]
    #[schemars(range(min = 0))]
    pub replicas: i32,
    #[serde(default)]
    pub config_map: Option<String>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WebAppStatus {
    pub observed_generation: Option<i64>,
}

pub async fn install_crd(client: &kube::Client) {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    crds.create(&PostParams::default(), &WebApp::crd())
        .await
        .expect("create CRD");
    let establish = await_condition(
        crds,
        "webapps.example.dev",
        conditions::is_crd_established(),
    );
    tokio::time::timeout(Duration::from_secs(5), establish)
        .await
        .expect("CRD established in time")
        .expect("watch works");
}

fn raw(
    client: &kube::Client,
    method: &str,
    path: &str,
    body: serde_json::Value,
) -> http::Request<Vec<u8>> {
    let _ = client;
    http::Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", "application/json")
        .body(serde_json::to_vec(&body).unwrap())
        .unwrap()
}

#[tokio::test]
async fn a_created_crd_is_established_and_served() {
    let (_server, client) = server();
    install_crd(&client).await;
    let apps: Api<WebApp> = Api::namespaced(client.clone(), "default");
    let app = WebApp::new(
        "shop",
        WebAppSpec {
            image: "nginx".into(),
            replicas: 2,
            config_map: None,
        },
    );
    let created = apps.create(&PostParams::default(), &app).await.unwrap();
    assert_eq!(created.metadata.generation, Some(1));
    // Discovery finds it like kubectl would.
    let discovery = kube::Discovery::new(client.clone()).run().await.unwrap();
    let (ar, caps) = discovery
        .resolve_gvk(&GroupVersionKind::gvk("example.dev", "v1", "WebApp"))
        .expect("discovered");
    assert_eq!(ar.plural, "webapps");
    assert!(
        caps.subresources
            .iter()
            .any(|(s, _)| s.plural == "webapps/status" || s.plural == "status"),
        "{:?}",
        caps.subresources
    );
    let dynamic: Api<DynamicObject> =
        Api::namespaced_with(client, "default", &ApiResource::erase::<WebApp>(&()));
    let got = dynamic.get("shop").await.unwrap();
    assert_eq!(got.data["spec"]["image"], "nginx");
}

#[tokio::test]
async fn schema_defaults_prunes_and_rejects() {
    let (_server, client) = server();
    install_crd(&client).await;
    let path = "/apis/example.dev/v1/namespaces/default/webapps";
    // Defaults and pruning.
    let created: WebApp = client
        .request(raw(
            &client,
            "POST",
            path,
            json!({
                "apiVersion": "example.dev/v1", "kind": "WebApp", "metadata": {"name": "d"},
                "spec": {"image": "x", "unknown": true}
            }),
        ))
        .await
        .unwrap();
    assert_eq!(created.spec.replicas, 1);
    let stored: serde_json::Value = client
        .request(
            http::Request::get(format!("{path}/d"))
                .body(Vec::new())
                .unwrap(),
        )
        .await
        .unwrap();
    assert!(
        stored["spec"].get("unknown").is_none(),
        "unknown fields are pruned: {stored}"
    );
    // Minimum.
    let e = api_err(
        client
            .request::<WebApp>(raw(
                &client,
                "POST",
                path,
                json!({
                    "apiVersion": "example.dev/v1", "kind": "WebApp", "metadata": {"name": "neg"},
                    "spec": {"image": "x", "replicas": -1}
                }),
            ))
            .await
            .unwrap_err(),
    );
    assert_eq!((e.code, e.reason.as_str()), (422, "Invalid"));
    assert_eq!(
        e.message,
        "WebApp.example.dev \"neg\" is invalid: spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0"
    );
    // Required and type errors together.
    let e = api_err(
        client
            .request::<WebApp>(raw(
                &client,
                "POST",
                path,
                json!({
                    "apiVersion": "example.dev/v1", "kind": "WebApp", "metadata": {"name": "bad"},
                    "spec": {"replicas": "three"}
                }),
            ))
            .await
            .unwrap_err(),
    );
    assert_eq!(e.code, 422);
    assert!(
        e.message.contains("spec.image: Required value"),
        "{}",
        e.message
    );
    assert!(e.message.contains("spec.replicas"), "{}", e.message);
    // Strict field validation rejects unknown fields instead of pruning them.
    let e = api_err(
        client
            .request::<WebApp>(raw(&client, "POST", &format!("{path}?fieldValidation=Strict"), json!({
                "apiVersion": "example.dev/v1", "kind": "WebApp", "metadata": {"name": "strict"},
                "spec": {"image": "x", "unknown": true}
            })))
            .await
            .unwrap_err(),
    );
    assert_eq!(e.code, 400);
    assert!(
        e.message.contains("unknown field \"spec.unknown\""),
        "{}",
        e.message
    );
    let apps: Api<WebApp> = Api::namespaced(client, "default");
    let left: Vec<_> = apps
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|a| a.metadata.name)
        .collect();
    assert_eq!(left, ["d"]);
}

#[tokio::test]
async fn custom_resource_status_subresource() {
    let (_server, client) = server();
    install_crd(&client).await;
    let apps: Api<WebApp> = Api::namespaced(client, "default");
    apps.create(
        &PostParams::default(),
        &WebApp::new(
            "s",
            WebAppSpec {
                image: "x".into(),
                replicas: 1,
                config_map: None,
            },
        ),
    )
    .await
    .unwrap();
    let pp = PatchParams::default();
    let out = apps
        .patch_status(
            "s",
            &pp,
            &Patch::Merge(
                json!({"status": {"observedGeneration": 1}, "spec": {"image": "ignored"}}),
            ),
        )
        .await
        .unwrap();
    assert_eq!(out.status.unwrap().observed_generation, Some(1));
    assert_eq!(out.spec.image, "x");
    assert_eq!(out.metadata.generation, Some(1));
    let out = apps
        .patch(
            "s",
            &pp,
            &Patch::Merge(json!({"spec": {"image": "y"}, "status": {"observedGeneration": 5}})),
        )
        .await
        .unwrap();
    assert_eq!(out.metadata.generation, Some(2));
    assert_eq!(out.status.unwrap().observed_generation, Some(1));
    // Custom resources do not take strategic merge patches.
    let e = api_err(
        apps.patch("s", &pp, &Patch::Strategic(json!({"spec": {"image": "z"}})))
            .await
            .unwrap_err(),
    );
    assert_eq!(e.code, 415);
    // Custom resources need a resourceVersion on PUT.
    let mut current = apps.get("s").await.unwrap();
    current.metadata.resource_version = None;
    let e = api_err(
        apps.replace("s", &PostParams::default(), &current)
            .await
            .unwrap_err(),
    );
    assert_eq!(e.code, 422);
}

#[tokio::test]
async fn deleting_a_crd_deletes_its_objects_and_the_resource() {
    let (_server, client) = server();
    install_crd(&client).await;
    let apps: Api<WebApp> = Api::namespaced(client.clone(), "default");
    apps.create(
        &PostParams::default(),
        &WebApp::new(
            "x",
            WebAppSpec {
                image: "x".into(),
                replicas: 1,
                config_map: None,
            },
        ),
    )
    .await
    .unwrap();
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    crds.delete("webapps.example.dev", &DeleteParams::default())
        .await
        .unwrap();
    assert_eq!(
        api_err(crds.get("webapps.example.dev").await.unwrap_err()).code,
        404
    );
    assert_eq!(
        api_err(apps.list(&ListParams::default()).await.unwrap_err()).code,
        404
    );
    let _ = WebApp::api_version(&());
}

#[tokio::test]
async fn invalid_crds_are_rejected() {
    let (_server, client) = server();
    let crds: Api<CustomResourceDefinition> = Api::all(client);
    let mut crd = WebApp::crd();
    crd.metadata.name = Some("wrong.example.dev".into());
    let e = api_err(crds.create(&PostParams::default(), &crd).await.unwrap_err());
    assert_eq!(e.code, 422);
    assert!(
        e.message
            .contains("must be spec.names.plural+\".\"+spec.group"),
        "{}",
        e.message
    );
}

/// A custom resource's watches start, as its watch cache does on kube-apiserver, at the first request to it,
/// after that request's own write: a watch from an earlier version gets 410 Expired, one from the first write's
/// version its later events.
#[tokio::test]
async fn a_custom_resources_watches_start_at_its_first_request() {
    use futures::StreamExt;
    use kube::api::{WatchEvent, WatchParams};

    let (_server, client) = server();
    install_crd(&client).await;
    let apps: Api<WebApp> = Api::namespaced(client.clone(), "default");
    let app = |name: &str| {
        WebApp::new(
            name,
            WebAppSpec {
                image: "nginx:1".into(),
                replicas: 1,
                config_map: None,
            },
        )
    };
    let first = apps
        .create(&PostParams::default(), &app("a"))
        .await
        .unwrap();
    let first_rv: u64 = first
        .meta()
        .resource_version
        .as_deref()
        .unwrap()
        .parse()
        .unwrap();
    apps.create(&PostParams::default(), &app("b"))
        .await
        .unwrap();
    let params = WatchParams::default().timeout(5);

    let mut before = apps
        .watch(&params, &(first_rv - 1).to_string())
        .await
        .unwrap()
        .boxed();
    match before.next().await {
        Some(Ok(WatchEvent::Error(e))) => {
            assert_eq!((e.code, e.reason.as_str()), (410, "Expired"));
            assert_eq!(
                e.message,
                format!("too old resource version: {} ({first_rv})", first_rv - 1)
            );
        }
        other => panic!("expected 410, got {other:?}"),
    }

    let mut from_first = apps
        .watch(&params, &first_rv.to_string())
        .await
        .unwrap()
        .boxed();
    match from_first.next().await {
        Some(Ok(WatchEvent::Added(b))) => assert_eq!(b.metadata.name.as_deref(), Some("b")),
        other => panic!("expected b's creation, got {other:?}"),
    }
}
