//! A fight over a child's field (`kubewright::reconcilers::fights`): a second writer, as a person with
//! `kubectl edit` would, sets a WebApp's Deployment to 5 replicas each time the operator set it back to the
//! WebApp's 2. After the third correction the WebApp gets a `Warning` event `Contested` and its Deployment
//! step's condition says `Contested`, both naming `spec.replicas` and the writer's field manager, and the
//! operator's corrections back off instead of following the writer. A spec change still reaches the
//! Deployment at once. Run on the embedded cluster and on kube-apiserver.

use std::time::{Duration, Instant};

use examples::webapp::{WebApp, reconciler, sample};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Event;
use kube::Client;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kubewright::Operator;
use serde_json::json;

/// The second writer's field manager.
pub const WRITER: &str = "kubectl-edit";

async fn replicas(deployments: &Api<Deployment>, name: &str) -> Option<i32> {
    deployments
        .get_opt(name)
        .await
        .unwrap()
        .and_then(|d| d.spec?.replicas)
}

async fn eventually<T>(what: &str, mut f: impl AsyncFnMut() -> Option<T>) -> T {
    for _ in 0..300 {
        if let Some(v) = f().await {
            return v;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("timed out waiting for {what}");
}

/// Runs the scenario in `ns` (the WebApp CRD installed): the operator with `operator_client`, the second
/// writer and the checks with `client`.
pub async fn a_second_writer_is_reported_and_backed_off(
    operator_client: &Client,
    client: &Client,
    ns: &str,
) {
    let apps: Api<WebApp> = Api::namespaced(client.clone(), ns);
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), ns);
    let mut app = sample("contested", None);
    app.metadata.namespace = None;
    apps.create(&PostParams::default(), &app).await.unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let operator = Operator::for_namespaces(operator_client.clone(), [ns]).controller(reconciler());
    let task = tokio::spawn(operator.run_until(async move {
        let _ = stopped.await;
    }));
    eventually("the Deployment at 2 replicas", async || {
        (replicas(&deployments, "contested").await == Some(2)).then_some(())
    })
    .await;

    // The writer sets 5 whenever it sees another value, for twelve seconds; each time it has to is one
    // correction by the operator.
    let params = PatchParams {
        field_manager: Some(WRITER.into()),
        ..PatchParams::default()
    };
    let set_five = async || {
        deployments
            .patch(
                "contested",
                &params,
                &Patch::Merge(json!({"spec": {"replicas": 5}})),
            )
            .await
            .unwrap();
    };
    set_five().await;
    let started = Instant::now();
    let mut corrections = 0;
    while started.elapsed() < Duration::from_secs(12) {
        tokio::time::sleep(Duration::from_millis(150)).await;
        if replicas(&deployments, "contested").await != Some(5) {
            corrections += 1;
            set_five().await;
        }
    }
    // Three corrections make the fight; the next waits ten seconds; without the back-off the operator would
    // have followed the writer about every 150 ms, dozens of times.
    assert!(
        (3..=6).contains(&corrections),
        "{corrections} corrections in twelve seconds of fighting"
    );

    // The condition and the event name the field and the writer.
    let app = apps.get("contested").await.unwrap();
    let conditions = app
        .status
        .as_ref()
        .map(|s| s.conditions.clone())
        .unwrap_or_default();
    let contested = conditions
        .iter()
        .find(|c| c.reason == "Contested")
        .unwrap_or_else(|| panic!("no Contested condition in {conditions:#?}"));
    assert_eq!(contested.status, "False");
    assert!(
        contested.message.contains("\"spec.replicas\"") && contested.message.contains(WRITER),
        "{}",
        contested.message
    );
    let ready = conditions.iter().find(|c| c.type_ == "Ready").unwrap();
    assert_eq!(ready.status, "False", "the desired state does not hold");
    let events: Api<Event> = Api::namespaced(client.clone(), ns);
    let warnings: Vec<Event> = eventually("the Contested event", async || {
        let found: Vec<Event> = events
            .list(&ListParams::default())
            .await
            .unwrap()
            .into_iter()
            .filter(|e| e.reason.as_deref() == Some("Contested"))
            .collect();
        (!found.is_empty()).then_some(found)
    })
    .await;
    assert_eq!(warnings.len(), 1, "one event when the fight begins");
    assert_eq!(warnings[0].type_.as_deref(), Some("Warning"));
    assert_eq!(
        warnings[0].involved_object.name.as_deref(),
        Some("contested")
    );
    assert!(
        warnings[0]
            .message
            .as_deref()
            .is_some_and(|m| m.contains("spec.replicas") && m.contains(WRITER))
    );

    // A spec change is no correction: it reaches the Deployment at once, fight or not.
    apps.patch(
        "contested",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"scale": {"replicas": 3}}})),
    )
    .await
    .unwrap();
    let changed = Instant::now();
    eventually("the spec change on the Deployment", async || {
        (replicas(&deployments, "contested").await == Some(3)).then_some(())
    })
    .await;
    assert!(
        changed.elapsed() < Duration::from_secs(15),
        "the spec change waited {:?} (the fight's next correction is twenty seconds away)",
        changed.elapsed()
    );
    let _ = stop.send(());
    task.await.unwrap().unwrap();
}
