//! Pausing a parent with its annotation (`kubewright::pause`) on the in-memory server: while `example.dev/paused`
//! is `"true"`, a spec change writes nothing to the WebApp's children, the status says `Paused` (Ready and
//! observedGeneration untouched) with one `Paused` event; removing the annotation reconciles the change in one
//! go, clears the condition and records `Resumed`.

use std::time::Duration;

use examples::webapp::cli::ensure_crd;
use examples::webapp::{WebApp, reconciler, sample};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::events::v1::Event;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kubewright::Operator;
use kubewright::testing::ApiServer;
use kubewright::testing::apiserver::Verb;

/// Writes recorded by the server, events left out.
fn writes(server: &ApiServer) -> usize {
    server
        .requests()
        .iter()
        .filter(|r| {
            matches!(
                r.verb,
                Some(Verb::Create | Verb::Update | Verb::Patch | Verb::Delete)
            ) && r.resource != "events"
        })
        .count()
}
use serde_json::json;

async fn until<T>(what: &str, mut f: impl AsyncFnMut() -> Option<T>) -> T {
    for _ in 0..400 {
        if let Some(v) = f().await {
            return v;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("timed out waiting for {what}");
}

fn condition(app: &WebApp, type_: &str) -> Option<(String, String, Option<i64>)> {
    app.status
        .as_ref()?
        .conditions
        .iter()
        .find(|c| c.type_ == type_)
        .map(|c| (c.status.clone(), c.reason.clone(), c.observed_generation))
}

async fn reasons(events: &Api<Event>) -> Vec<String> {
    events
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|e| e.reason)
        .collect()
}

#[tokio::test]
async fn a_paused_webapp_writes_nothing_until_the_annotation_goes() {
    let server = ApiServer::new();
    let client = server.client();
    ensure_crd(&client).await.unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(
        Operator::new(client.clone())
            .controller(reconciler())
            .run_until(async move {
                let _ = stopped.await;
            }),
    );
    let apps: Api<WebApp> = Api::namespaced(client.clone(), "default");
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "default");
    let events: Api<Event> = Api::namespaced(client.clone(), "default");
    apps.create(&PostParams::default(), &sample("web", None))
        .await
        .unwrap();
    let observed_1 = async || {
        let app = apps.get("web").await.ok()?;
        (app.status.as_ref()?.observed_generation == Some(1)).then_some(app)
    };
    let before = until("the first pass", observed_1).await;
    let ready_before = condition(&before, "Ready");

    let annotate = |value: serde_json::Value| json!({"metadata": {"annotations": {"example.dev/paused": value}}});
    apps.patch(
        "web",
        &PatchParams::default(),
        &Patch::Merge(annotate(json!("true"))),
    )
    .await
    .unwrap();
    let paused = until("the Paused condition", async || {
        let app = apps.get("web").await.ok()?;
        (condition(&app, "Paused")?.0 == "True").then_some(app)
    })
    .await;
    assert_eq!(
        condition(&paused, "Ready"),
        ready_before,
        "Ready changed while paused"
    );
    until("the Paused event", async || {
        reasons(&events)
            .await
            .contains(&"Paused".to_string())
            .then_some(())
    })
    .await;

    // A spec change while paused: nothing is written to the children, the generation is not observed.
    let writes_before = writes(&server);
    apps.patch(
        "web",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"scale": {"replicas": 5}}})),
    )
    .await
    .unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let app = apps.get("web").await.unwrap();
    assert_eq!(app.status.as_ref().unwrap().observed_generation, Some(1));
    assert_eq!(
        deployments.get("web").await.unwrap().spec.unwrap().replicas,
        Some(2)
    );
    assert_eq!(
        writes(&server),
        writes_before + 1,
        "only the test's own patch was written while paused"
    );
    let paused_events = reasons(&events)
        .await
        .iter()
        .filter(|r| *r == "Paused")
        .count();
    assert_eq!(paused_events, 1);

    // Resumed: one pass applies the change and clears the condition.
    apps.patch(
        "web",
        &PatchParams::default(),
        &Patch::Merge(annotate(serde_json::Value::Null)),
    )
    .await
    .unwrap();
    let resumed = until("the resumed pass", async || {
        let app = apps.get("web").await.ok()?;
        (app.status.as_ref()?.observed_generation == Some(2)).then_some(app)
    })
    .await;
    assert!(
        condition(&resumed, "Paused").is_none(),
        "{:?}",
        resumed.status
    );
    assert_eq!(
        deployments.get("web").await.unwrap().spec.unwrap().replicas,
        Some(5)
    );
    until("the Resumed event", async || {
        reasons(&events)
            .await
            .contains(&"Resumed".to_string())
            .then_some(())
    })
    .await;
    let _ = stop.send(());
    task.await.unwrap().unwrap();
}

/// The explorer knows pausing: a WebApp paused, changed, and resumed, under a crash before and after each
/// write, API faults, lost watches and stale caches, settles where the unperturbed run does.
#[tokio::test]
async fn a_paused_and_resumed_webapp_survives_every_perturbation() {
    use examples::webapp::sample_config_map;
    use kube::CustomResourceExt;
    use kubewright::testing::explore::{Explore, Scenario};
    let paused = |value: serde_json::Value| json!({"metadata": {"annotations": {"example.dev/paused": value}}});
    let scenario = Scenario::new()
        .apply(&sample_config_map("web-config"))
        .apply(&sample("web", Some("web-config")))
        .settle()
        .patch::<WebApp>(Some("default"), "web", paused(json!("true")))
        .settle()
        .patch::<WebApp>(
            Some("default"),
            "web",
            json!({"spec": {"scale": {"replicas": 3}}}),
        )
        .settle()
        .patch::<WebApp>(Some("default"), "web", paused(serde_json::Value::Null))
        .settle();
    let explored = Explore::new(reconciler)
        .crd(WebApp::crd())
        .scenario(scenario)
        .run()
        .await
        .unwrap();
    println!("paused webapp: {explored:#}");
}
