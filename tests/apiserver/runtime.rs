//! kube-runtime's watcher, reflector and Controller running unchanged on the in-memory server.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::WatchStreamExt;
use kube::runtime::controller::{Action, Controller};
use kube::runtime::reflector::{self, ObjectRef};
use kube::runtime::watcher::{self, Event};

use crate::common::{create_cm, server};

async fn wait_for(mut check: impl FnMut() -> bool) {
    for _ in 0..200 {
        if check() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("condition not met within 5s");
}

#[tokio::test]
async fn reflector_follows_changes_and_survives_dropped_watches() {
    for streaming in [false, true] {
        let (server, client) = server();
        create_cm(&client, "default", "before").await;
        let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
        let (reader, writer) = reflector::store();
        let config = if streaming {
            watcher::Config::default().streaming_lists()
        } else {
            watcher::Config::default().page_size(1)
        };
        let stream = reflector::reflector(writer, watcher::watcher(api.clone(), config))
            .default_backoff()
            .applied_objects();
        let task = tokio::spawn(stream.for_each(|_| async {}));
        reader.wait_until_ready().await.unwrap();
        assert!(
            reader
                .get(&ObjectRef::new("before").within("default"))
                .is_some()
        );
        create_cm(&client, "default", "after").await;
        wait_for(|| reader.state().len() == 2).await;
        // A dropped connection makes the watcher re-watch; changes made meanwhile still arrive.
        assert!(server.drop_watches() >= 1, "streaming={streaming}");
        create_cm(&client, "default", "during").await;
        wait_for(|| {
            reader
                .get(&ObjectRef::new("during").within("default"))
                .is_some()
        })
        .await;
        // After compaction a re-watch gets 410 and the watcher re-lists.
        server.compact();
        server.drop_watches();
        create_cm(&client, "default", "after-compaction").await;
        wait_for(|| reader.state().len() == 4).await;
        task.abort();
    }
}

#[tokio::test]
async fn watcher_reports_init_and_deletes() {
    let (_server, client) = server();
    create_cm(&client, "default", "a").await;
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let mut events = watcher::watcher(api.clone(), watcher::Config::default()).boxed();
    let mut seen = Vec::new();
    while let Some(ev) = tokio::time::timeout(Duration::from_secs(5), events.next())
        .await
        .unwrap()
    {
        match ev.unwrap() {
            Event::Init => seen.push("init".to_string()),
            Event::InitApply(o) => seen.push(format!("init-apply {}", o.metadata.name.unwrap())),
            Event::InitDone => {
                seen.push("init-done".into());
                break;
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(seen, ["init", "init-apply a", "init-done"]);
    api.delete("a", &Default::default()).await.unwrap();
    match tokio::time::timeout(Duration::from_secs(5), events.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap()
    {
        Event::Delete(o) => assert_eq!(o.metadata.name.as_deref(), Some("a")),
        other => panic!("expected a delete, got {other:?}"),
    }
}

#[tokio::test]
async fn a_controller_reconciles_to_a_fixed_point() {
    let (server, client) = server();
    for name in ["one", "two"] {
        create_cm(&client, "default", name).await;
    }
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    async fn reconcile(
        cm: Arc<ConfigMap>,
        api: Arc<Api<ConfigMap>>,
    ) -> Result<Action, kube::Error> {
        let seen = cm.data.as_ref().and_then(|d| d.get("reconciled")).is_some();
        if !seen {
            let name = cm.metadata.name.clone().unwrap_or_default();
            let patch = serde_json::json!({"data": {"reconciled": "yes"}});
            api.patch(&name, &PatchParams::apply("test-controller"), &Patch::Apply(serde_json::json!({
                "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": patch["data"],
            })))
            .await?;
        }
        Ok(Action::await_change())
    }
    fn error_policy(_: Arc<ConfigMap>, _: &kube::Error, _: Arc<Api<ConfigMap>>) -> Action {
        Action::requeue(Duration::from_millis(100))
    }
    let ctx = Arc::new(api.clone());
    let controller = Controller::new(api.clone(), watcher::Config::default())
        .shutdown_on_signal()
        .run(reconcile, error_policy, ctx)
        .for_each(|_| async {});
    let task = tokio::spawn(controller);
    let check = api.clone();
    for _ in 0..200 {
        let list = check.list(&Default::default()).await.unwrap();
        if list.items.iter().all(|c| {
            c.data
                .as_ref()
                .is_some_and(|d| d.contains_key("reconciled"))
        }) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let list = check.list(&Default::default()).await.unwrap();
    assert!(list.items.iter().all(|c| {
        c.data
            .as_ref()
            .is_some_and(|d| d.contains_key("reconciled"))
    }));
    // Converged: a few more passes write nothing.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let rv = server.resource_version();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(server.resource_version(), rv, "no writes once converged");
    task.abort();
}
