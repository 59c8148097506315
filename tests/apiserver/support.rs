//! Fault injection, the request log, events over both APIs, user-registered kinds, and concurrency.

use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Event as CoreEvent};
use k8s_openapi::api::events::v1::Event as EventV1;
use kube::Resource;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, ListParams, PostParams};
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kubewright::testing::apiserver::{Fault, ResourceType, Verb};
use serde_json::json;

use crate::common::{api_err, cm, create_cm, server};

#[tokio::test]
async fn injected_failures_hit_only_matching_requests() {
    let (server, client) = server();
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    server.inject(
        Fault::on(Verb::Create)
            .resource("configmaps")
            .name("x")
            .fail(503, "ServiceUnavailable")
            .times(1),
    );
    let e = api_err(
        api.create(&PostParams::default(), &cm("x", &[]))
            .await
            .unwrap_err(),
    );
    assert_eq!((e.code, e.reason.as_str()), (503, "ServiceUnavailable"));
    create_cm(&client, "default", "y").await;
    create_cm(&client, "default", "x").await;
    server.inject(Fault::on(Verb::Get).fail(500, "InternalError"));
    assert_eq!(api_err(api.get("x").await.unwrap_err()).code, 500);
    server.clear_faults();
    assert!(api.get("x").await.is_ok());
}

#[tokio::test]
async fn latency_is_added() {
    let (server, client) = server();
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    server.inject(Fault::on(Verb::List).delay(Duration::from_millis(200)));
    let started = std::time::Instant::now();
    api.list(&ListParams::default()).await.unwrap();
    assert!(started.elapsed() >= Duration::from_millis(200));
}

#[tokio::test]
async fn watches_can_be_cut_short() {
    let (server, client) = server();
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    server.inject(Fault::on(Verb::Watch).end_watch_after(Duration::from_secs(1)));
    let stream = api
        .watch(&kube::api::WatchParams::default().timeout(60), "0")
        .await
        .unwrap();
    let ended = tokio::time::timeout(
        Duration::from_secs(5),
        futures::StreamExt::collect::<Vec<_>>(stream),
    )
    .await;
    assert!(ended.is_ok(), "the watch ended after the injected second");
}

#[tokio::test]
async fn the_request_log_records_every_request() {
    let (server, client) = server();
    server.clear_requests();
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    create_cm(&client, "default", "logged").await;
    let _ = api.get("logged").await;
    let _ = api.get("absent").await;
    let log = server.requests();
    let summary: Vec<_> = log
        .iter()
        .map(|r| (r.verb.map(|v| v.as_str()), r.name.clone(), r.code))
        .collect();
    assert_eq!(
        summary,
        [
            (Some("create"), None, 201),
            (Some("get"), Some("logged".into()), 200),
            (Some("get"), Some("absent".into()), 404)
        ]
    );
    assert_eq!(log[0].body.as_ref().unwrap()["metadata"]["name"], "logged");
    assert!(log[0].is_write());
    assert!(!log[1].is_write());
}

#[tokio::test]
async fn events_are_served_by_both_apis_over_one_storage() {
    let (_server, client) = server();
    let target = create_cm(&client, "default", "target").await;
    let recorder = Recorder::new(
        client.clone(),
        Reporter {
            controller: "test-ctl".into(),
            instance: None,
        },
    );
    recorder
        .publish(
            &Event {
                type_: EventType::Normal,
                reason: "Created".into(),
                note: Some("made a thing".into()),
                action: "Create".into(),
                secondary: None,
            },
            &target.object_ref(&()),
        )
        .await
        .unwrap();
    let v1: Api<EventV1> = Api::namespaced(client.clone(), "default");
    let events = v1.list(&ListParams::default()).await.unwrap().items;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].note.as_deref(), Some("made a thing"));
    let core: Api<CoreEvent> = Api::namespaced(client, "default");
    let events = core
        .list(&ListParams::default().fields("involvedObject.name=target"))
        .await
        .unwrap()
        .items;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].message.as_deref(), Some("made a thing"));
    assert_eq!(events[0].reason.as_deref(), Some("Created"));
    assert_eq!(events[0].reporting_component.as_deref(), Some("test-ctl"));
}

#[tokio::test]
async fn users_can_register_other_kinds() {
    let (server, client) = server();
    server.register(
        ResourceType::new("widgets.example.com", "v1alpha1", "Widget", "widgets", true)
            .with_status(),
    );
    let gvk = GroupVersionKind::gvk("widgets.example.com", "v1alpha1", "Widget");
    let ar = ApiResource::from_gvk_with_plural(&gvk, "widgets");
    let api: Api<DynamicObject> = Api::namespaced_with(client, "default", &ar);
    let obj: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "widgets.example.com/v1alpha1", "kind": "Widget",
        "metadata": {"name": "w"}, "spec": {"size": 3}
    }))
    .unwrap();
    let created = api.create(&PostParams::default(), &obj).await.unwrap();
    assert_eq!(created.data["spec"]["size"], 3);
    assert_eq!(
        api.list(&ListParams::default()).await.unwrap().items.len(),
        1
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_writers_never_lose_an_update() {
    let (_server, client) = server();
    create_cm(&client, "default", "counter").await;
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
        tasks.push(tokio::spawn(async move {
            for _ in 0..10 {
                loop {
                    let mut c = api.get("counter").await.unwrap();
                    let n: u32 = c
                        .data
                        .as_ref()
                        .and_then(|d| d.get("n"))
                        .and_then(|n| n.parse().ok())
                        .unwrap_or(0);
                    c.data = Some([("n".to_string(), (n + 1).to_string())].into());
                    match api.replace("counter", &PostParams::default(), &c).await {
                        Ok(_) => break,
                        Err(kube::Error::Api(s)) if s.code == 409 => continue,
                        Err(e) => panic!("{e}"),
                    }
                }
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    assert_eq!(api.get("counter").await.unwrap().data.unwrap()["n"], "80");
}

#[tokio::test]
async fn odd_requests_never_panic() {
    let (server, client) = server();
    create_cm(&client, "default", "keep").await;
    let before = server.resource_version();
    let paths = [
        "/",
        "/api",
        "/api/v2",
        "/apis/apps",
        "/apis/nope/v1",
        "/api/v1/namespaces/default/configmaps/keep/status",
        "/api/v1/namespaces/default/configmaps/keep/scale",
        "/api/v1/namespaces//configmaps",
        "/api/v1/configmaps/keep",
        "/apis/apps/v1/namespaces/default/deployments/x/y/z",
        "/api/v1/namespaces/default/configmaps?limit=abc",
        "/api/v1/namespaces/default/configmaps?continue=%%%",
        "/api/v1/namespaces/default/configmaps?resourceVersion=x",
        "/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=999999999",
        "/openapi/v3/apis/x/y",
        "/api/v1/namespaces/default/configmaps/keep?dryRun=Sometimes",
    ];
    let bodies: [&[u8]; 8] = [
        b"", b"null", b"[]", b"\"str\"", b"{\"metadata\": 5}", b"{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"keep\",\"resourceVersion\":\"1\"},\"data\":[1]}",
        b"\xff\xfe", b"- op: remove\n  path: /data\n",
    ];
    let types = [
        "application/json",
        "application/merge-patch+json",
        "application/json-patch+json",
        "application/strategic-merge-patch+json",
        "application/apply-patch+yaml",
        "application/yaml",
    ];
    let mut count = 0;
    for path in paths {
        for method in ["GET", "POST", "PUT", "PATCH", "DELETE"] {
            for body in bodies {
                for ct in types {
                    if method == "GET" && (!body.is_empty() || ct != "application/json") {
                        continue;
                    }
                    let req = http::Request::builder()
                        .method(method)
                        .uri(path)
                        .header("content-type", ct)
                        .body(bytes::Bytes::from_static(body))
                        .unwrap();
                    let resp = server.handle(req).await;
                    let status = resp.status().as_u16();
                    let text = if method == "GET" && path.contains("watch=1") {
                        String::new()
                    } else {
                        use http_body_util::BodyExt;
                        let b = resp.into_body().collect().await.unwrap().to_bytes();
                        String::from_utf8_lossy(&b).into_owned()
                    };
                    assert!(!text.contains("panicked"), "{method} {path} {ct}: {text}");
                    assert!(
                        status != 500 || text.contains("resourceVersion should not be set"),
                        "{method} {path} {ct} -> {status}: {text}"
                    );
                    count += 1;
                }
            }
        }
    }
    assert!(count > 100);
    // The server still answers normally afterwards.
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    assert!(api.list(&ListParams::default()).await.is_ok());
    assert!(server.resource_version() >= before);
}
