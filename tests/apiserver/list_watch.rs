//! Lists, selectors, pagination, resourceVersion semantics and watches.

use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{
    Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, VersionMatch, WatchEvent,
    WatchParams,
};
use kubewright::testing::ApiServer;
use serde_json::json;

use crate::common::{api_err, cm, create_cm, rv, server};

fn labelled(name: &str, labels: &[(&str, &str)]) -> ConfigMap {
    let mut c = cm(name, &[]);
    c.metadata.labels = Some(
        labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    );
    c
}

async fn names(api: &Api<ConfigMap>, lp: &ListParams) -> Vec<String> {
    api.list(lp)
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|c| c.metadata.name)
        .collect()
}

#[tokio::test]
async fn label_and_field_selectors() {
    let (_server, client) = server();
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    for (name, labels) in [
        ("a", vec![("env", "prod"), ("tier", "web")]),
        ("b", vec![("env", "dev"), ("tier", "web")]),
        ("c", vec![("env", "prod")]),
    ] {
        api.create(&PostParams::default(), &labelled(name, &labels))
            .await
            .unwrap();
    }
    assert_eq!(
        names(&api, &ListParams::default().labels("env=prod")).await,
        ["a", "c"]
    );
    assert_eq!(
        names(&api, &ListParams::default().labels("env!=prod")).await,
        ["b"]
    );
    assert_eq!(
        names(
            &api,
            &ListParams::default().labels("env in (dev,test),tier")
        )
        .await,
        ["b"]
    );
    assert_eq!(
        names(&api, &ListParams::default().labels("!tier")).await,
        ["c"]
    );
    assert_eq!(
        names(&api, &ListParams::default().labels("env notin (dev)")).await,
        ["a", "c"]
    );
    assert_eq!(
        names(&api, &ListParams::default().fields("metadata.name=b")).await,
        ["b"]
    );
    assert_eq!(
        names(&api, &ListParams::default().fields("metadata.name!=b")).await,
        ["a", "c"]
    );
    let all: Api<ConfigMap> = Api::all(client);
    assert_eq!(
        names(
            &all,
            &ListParams::default().fields("metadata.namespace=default,metadata.name=a")
        )
        .await,
        ["a"]
    );
}

#[tokio::test]
async fn namespaces_separate_objects_and_all_lists_across() {
    let (_server, client) = server();
    create_cm(&client, "default", "x").await;
    create_cm(&client, "kube-system", "x").await;
    let all: Api<ConfigMap> = Api::all(client.clone());
    assert_eq!(
        all.list(&ListParams::default()).await.unwrap().items.len(),
        2
    );
    let one: Api<ConfigMap> = Api::namespaced(client, "kube-system");
    assert_eq!(
        one.list(&ListParams::default()).await.unwrap().items.len(),
        1
    );
}

#[tokio::test]
async fn pagination_serves_a_consistent_snapshot() {
    let (_server, client) = server();
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    for i in 0..5 {
        create_cm(&client, "default", &format!("cm-{i}")).await;
    }
    let page1 = api.list(&ListParams::default().limit(2)).await.unwrap();
    assert_eq!(page1.items.len(), 2);
    let token = page1.metadata.continue_.clone().expect("continue token");
    // Changes after the first page do not show in later pages.
    create_cm(&client, "default", "cm-9").await;
    api.delete("cm-4", &DeleteParams::default()).await.unwrap();
    let page2 = api
        .list(&ListParams::default().limit(2).continue_token(&token))
        .await
        .unwrap();
    let page3 = api
        .list(
            &ListParams::default()
                .limit(2)
                .continue_token(page2.metadata.continue_.as_deref().unwrap()),
        )
        .await
        .unwrap();
    let seen: Vec<_> = page1
        .items
        .iter()
        .chain(&page2.items)
        .chain(&page3.items)
        .filter_map(|c| c.metadata.name.clone())
        .collect();
    assert_eq!(seen, ["cm-0", "cm-1", "cm-2", "cm-3", "cm-4"]);
    assert_eq!(page3.metadata.continue_, None);
    assert_eq!(
        page2.metadata.resource_version,
        page1.metadata.resource_version
    );
}

#[tokio::test]
async fn exact_resource_version_lists_the_past() {
    let (server, client) = server();
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    create_cm(&client, "default", "old").await;
    let then = server.resource_version().to_string();
    create_cm(&client, "default", "new").await;
    api.patch(
        "old",
        &PatchParams::default(),
        &Patch::Merge(json!({"data": {"k": "changed"}})),
    )
    .await
    .unwrap();
    let past = api
        .list(
            &ListParams::default()
                .at(&then)
                .matching(VersionMatch::Exact),
        )
        .await
        .unwrap();
    assert_eq!(past.items.len(), 1);
    assert_eq!(past.items[0].data.as_ref().unwrap()["k"], "v");
    let future = (server.resource_version() + 100).to_string();
    let e = api_err(
        api.list(
            &ListParams::default()
                .at(&future)
                .matching(VersionMatch::NotOlderThan),
        )
        .await
        .unwrap_err(),
    );
    assert_eq!(e.code, 504);
    server.compact();
    let e = api_err(
        api.list(
            &ListParams::default()
                .at(&then)
                .matching(VersionMatch::Exact),
        )
        .await
        .unwrap_err(),
    );
    assert_eq!(e.code, 410);
}

async fn next_event(
    stream: &mut (impl futures::Stream<Item = kube::Result<WatchEvent<ConfigMap>>> + Unpin),
) -> WatchEvent<ConfigMap> {
    tokio::time::timeout(Duration::from_secs(5), stream.next())
        .await
        .expect("an event within 5s")
        .expect("stream open")
        .expect("no error")
}

fn describe(ev: &WatchEvent<ConfigMap>) -> String {
    match ev {
        WatchEvent::Added(o) => format!("ADDED {}", o.metadata.name.as_deref().unwrap_or("")),
        WatchEvent::Modified(o) => format!("MODIFIED {}", o.metadata.name.as_deref().unwrap_or("")),
        WatchEvent::Deleted(o) => format!("DELETED {}", o.metadata.name.as_deref().unwrap_or("")),
        WatchEvent::Bookmark(b) => format!("BOOKMARK {}", b.metadata.resource_version),
        WatchEvent::Error(e) => format!("ERROR {}", e.code),
    }
}

#[tokio::test]
async fn watch_from_a_resource_version_replays_then_follows() {
    let (_server, client) = server();
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let first = create_cm(&client, "default", "w1").await;
    create_cm(&client, "default", "w2").await;
    let wp = WatchParams::default().timeout(10);
    let stream = api
        .watch(&wp, &rv(&first.metadata).to_string())
        .await
        .unwrap();
    let mut stream = stream.boxed();
    assert_eq!(describe(&next_event(&mut stream).await), "ADDED w2");
    api.patch(
        "w1",
        &PatchParams::default(),
        &Patch::Merge(json!({"data": {"k": "2"}})),
    )
    .await
    .unwrap();
    assert_eq!(describe(&next_event(&mut stream).await), "MODIFIED w1");
    api.delete("w2", &DeleteParams::default()).await.unwrap();
    assert_eq!(describe(&next_event(&mut stream).await), "DELETED w2");
}

#[tokio::test]
async fn watch_with_selector_sees_objects_move_in_and_out() {
    let (_server, client) = server();
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let wp = WatchParams::default().labels("team=red").timeout(10);
    let start = api
        .list(&ListParams::default())
        .await
        .unwrap()
        .metadata
        .resource_version
        .unwrap();
    let mut stream = api.watch(&wp, &start).await.unwrap().boxed();
    api.create(&PostParams::default(), &labelled("m", &[("team", "blue")]))
        .await
        .unwrap();
    api.patch(
        "m",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"labels": {"team": "red"}}})),
    )
    .await
    .unwrap();
    assert_eq!(describe(&next_event(&mut stream).await), "ADDED m");
    api.patch(
        "m",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"labels": {"team": "blue"}}})),
    )
    .await
    .unwrap();
    assert_eq!(describe(&next_event(&mut stream).await), "DELETED m");
}

#[tokio::test]
async fn watch_from_zero_starts_with_synthetic_adds() {
    let (_server, client) = server();
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    create_cm(&client, "default", "z").await;
    let mut stream = api
        .watch(&WatchParams::default().timeout(10), "0")
        .await
        .unwrap()
        .boxed();
    assert_eq!(describe(&next_event(&mut stream).await), "ADDED z");
}

#[tokio::test]
async fn bookmarks_arrive_when_asked_for() {
    let server = ApiServer::builder()
        .bookmark_interval(Duration::from_millis(50))
        .build();
    let client = server.client();
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    create_cm(&client, "default", "b").await;
    let now = server.resource_version();
    let mut stream = api
        .watch(&WatchParams::default().timeout(10), &now.to_string())
        .await
        .unwrap()
        .boxed();
    match next_event(&mut stream).await {
        WatchEvent::Bookmark(b) => assert_eq!(b.metadata.resource_version, now.to_string()),
        other => panic!("expected a bookmark, got {}", describe(&other)),
    }
    let wp = WatchParams {
        bookmarks: false,
        timeout: Some(1),
        ..Default::default()
    };
    let events: Vec<_> = api
        .watch(&wp, &now.to_string())
        .await
        .unwrap()
        .collect()
        .await;
    assert!(events.is_empty(), "no bookmarks unless asked for");
}

#[tokio::test]
async fn expired_resource_version_gets_410_in_the_stream() {
    let (server, client) = server();
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let old = create_cm(&client, "default", "e").await;
    create_cm(&client, "default", "f").await;
    server.compact();
    let mut stream = api
        .watch(
            &WatchParams::default().timeout(10),
            &rv(&old.metadata).to_string(),
        )
        .await
        .unwrap()
        .boxed();
    match next_event(&mut stream).await {
        WatchEvent::Error(e) => {
            assert_eq!(e.code, 410);
            assert_eq!(e.reason, "Expired");
        }
        other => panic!("expected an error, got {}", describe(&other)),
    }
}

#[tokio::test]
async fn history_limit_expires_old_resource_versions() {
    let server = ApiServer::builder().history_limit(3).build();
    let client = server.client();
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let old = create_cm(&client, "default", "h0").await;
    for i in 1..6 {
        create_cm(&client, "default", &format!("h{i}")).await;
    }
    let mut stream = api
        .watch(
            &WatchParams::default().timeout(10),
            &rv(&old.metadata).to_string(),
        )
        .await
        .unwrap()
        .boxed();
    assert_eq!(describe(&next_event(&mut stream).await), "ERROR 410");
}

#[tokio::test]
async fn watch_ends_at_its_timeout() {
    let (_server, client) = server();
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    let stream = api
        .watch(&WatchParams::default().timeout(1), "0")
        .await
        .unwrap();
    let started = std::time::Instant::now();
    let events: Vec<_> =
        tokio::time::timeout(Duration::from_secs(10), stream.try_collect::<Vec<_>>())
            .await
            .expect("the watch ended by itself")
            .unwrap();
    assert!(events.is_empty());
    assert!(started.elapsed() >= Duration::from_millis(900));
}

#[tokio::test]
async fn streaming_list_sends_initial_events_then_a_marked_bookmark() {
    let (server, client) = server();
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    create_cm(&client, "default", "s1").await;
    let wp = WatchParams::default().initial_events().timeout(10);
    let mut stream = api.watch(&wp, "").await.unwrap().boxed();
    assert_eq!(describe(&next_event(&mut stream).await), "ADDED s1");
    match next_event(&mut stream).await {
        WatchEvent::Bookmark(b) => {
            assert_eq!(
                b.metadata
                    .annotations
                    .get("k8s.io/initial-events-end")
                    .map(String::as_str),
                Some("true")
            );
            assert_eq!(
                b.metadata.resource_version,
                server.resource_version().to_string()
            );
        }
        other => panic!(
            "expected the initial-events-end bookmark, got {}",
            describe(&other)
        ),
    }
}

#[tokio::test]
async fn partial_object_metadata_lists() {
    let (_server, client) = server();
    create_cm(&client, "default", "meta").await;
    let api: Api<ConfigMap> = Api::namespaced(client, "default");
    let list = api.list_metadata(&ListParams::default()).await.unwrap();
    assert_eq!(list.items.len(), 1);
    assert_eq!(list.items[0].metadata.name.as_deref(), Some("meta"));
}

#[tokio::test]
async fn watch_events_write_their_type_before_their_object() {
    // As kube-apiserver does: a client may decode the object knowing its event type already.
    let (_server, client) = server();
    create_cm(&client, "default", "a").await;
    let request = http::Request::get(
        "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=0&timeoutSeconds=1",
    )
    .body(Vec::new())
    .unwrap();
    let text = client.request_text(request).await.unwrap();
    let line = text.lines().next().expect("an event");
    assert!(line.starts_with(r#"{"type":"ADDED","object":{"#), "{line}");
}
