//! One scenario of the `teams` operator (a child set), run on the embedded cluster and on a real kube-apiserver:
//! one event per created child, and a child whose id label is edited by hand is put back, never deleted.

use std::time::Duration;

use examples::teams::{MEMBER_LABEL, Team, reconciler, sample};
use k8s_openapi::api::core::v1::ServiceAccount;
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kube::runtime::wait::{await_condition, conditions};
use kube::{Client, CustomResourceExt, ResourceExt};
use kubewright::Operator;
use serde_json::json;

/// Polls `f` (bounded: about 30 s) until it returns `Some`; panics naming `what` and the last value seen.
async fn eventually<T, L: std::fmt::Debug>(
    what: &str,
    mut f: impl AsyncFnMut() -> Result<T, L>,
) -> T {
    let mut last = None;
    for _ in 0..300 {
        match f().await {
            Ok(v) => return v,
            Err(l) => last = Some(l),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("timed out waiting for {what}; last seen: {last:#?}");
}

/// The events in `default` regarding the team `core`, as (reason, related name, note, series count).
async fn team_events(events: &Api<Event>) -> Vec<(String, String, String, i32)> {
    let mut out: Vec<_> = events
        .list(&ListParams::default())
        .await
        .expect("list events")
        .items
        .into_iter()
        .filter(|e| e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some("core"))
        .map(|e| {
            (
                e.reason.clone().unwrap_or_default(),
                e.related
                    .as_ref()
                    .and_then(|r| r.name.clone())
                    .unwrap_or_default(),
                e.note.clone().unwrap_or_default(),
                e.series.as_ref().map_or(1, |s| s.count),
            )
        })
        .collect();
    out.sort();
    out
}

/// Runs the teams operator on `client` (the Team CRD not yet installed) and checks, in namespace `default`:
/// creating a team of two makes two `Created` events, one per account, each naming its account; editing an
/// account's member label by hand makes the operator put it back on the same object (same uid), with one
/// `Updated` event and no delete.
pub async fn edited_id_label_is_put_back(client: Client) {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    crds.create(&PostParams::default(), &Team::crd())
        .await
        .expect("install the Team CRD");
    await_condition(crds, "teams.example.dev", conditions::is_crd_established())
        .await
        .expect("the CRD is established");
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(
        Operator::new(client.clone())
            .controller(reconciler())
            .run_until(async move {
                let _ = stopped.await;
            }),
    );
    let teams: Api<Team> = Api::namespaced(client.clone(), "default");
    let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), "default");
    let events: Api<Event> = Api::namespaced(client, "default");

    teams
        .create(&PostParams::default(), &sample("core", &["ada", "linus"]))
        .await
        .expect("create the team");
    let created = vec![
        (
            "Created".to_string(),
            "core-ada".to_string(),
            "Created ServiceAccount default/core-ada".to_string(),
            1,
        ),
        (
            "Created".to_string(),
            "core-linus".to_string(),
            "Created ServiceAccount default/core-linus".to_string(),
            1,
        ),
    ];
    eventually("one Created event per account", async || {
        let got = team_events(&events).await;
        if got == created { Ok(()) } else { Err(got) }
    })
    .await;
    let before = accounts.get("core-ada").await.expect("core-ada exists");

    // As `kubectl label sa core-ada example.dev/member=zzz --overwrite` does.
    accounts
        .patch(
            "core-ada",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {MEMBER_LABEL: "zzz"}}})),
        )
        .await
        .expect("edit the label");
    let restored = eventually("the member label put back", async || {
        let sa = accounts.get("core-ada").await.expect("core-ada exists");
        if sa.labels().get(MEMBER_LABEL).map(String::as_str) == Some("ada") {
            Ok(sa)
        } else {
            Err(sa.labels().clone())
        }
    })
    .await;
    assert_eq!(restored.uid(), before.uid(), "the account was replaced");
    assert!(
        restored.metadata.deletion_timestamp.is_none(),
        "the account is being deleted: {restored:?}"
    );
    // A wrong delete would follow the apply in the same pass; give a further pass time to happen.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after = accounts
        .get("core-ada")
        .await
        .expect("core-ada still exists");
    assert_eq!(after.uid(), before.uid(), "the account was replaced");
    assert!(after.metadata.deletion_timestamp.is_none());
    let got = team_events(&events).await;
    assert!(
        got.iter().all(|(reason, ..)| reason != "Deleted"),
        "{got:#?}"
    );
    assert!(
        got.iter()
            .any(|(reason, related, note, _)| reason == "Updated"
                && related == "core-ada"
                && note == "Updated ServiceAccount default/core-ada"),
        "{got:#?}"
    );

    let _ = stop.send(());
    running
        .await
        .expect("the operator stops")
        .expect("the operator ran");
}
