//! The `teams` example's operator: a child set follows the members, and the `watches` mapper brings a change
//! of the (untracked) settings ConfigMap to the team.

use std::time::Duration;

use examples::teams::{ROLE_ANNOTATION, Team, reconciler, sample, sample_settings};
use k8s_openapi::api::core::v1::{ConfigMap, ServiceAccount};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kube::runtime::wait::{await_condition, conditions};
use kube::{CustomResourceExt, ResourceExt};
use kubewright::Operator;
use kubewright::reconcilers::Role;
use kubewright::testing::ApiServer;
use serde_json::json;

#[test]
fn configmaps_are_watched_and_accounts_owned() {
    let wiring = reconciler().wiring();
    let roles: Vec<(String, Role)> = wiring
        .kinds()
        .iter()
        .map(|k| (k.kind.clone(), k.role))
        .collect();
    assert_eq!(
        roles,
        [
            ("ServiceAccount".to_string(), Role::Owned),
            ("ConfigMap".to_string(), Role::Watched)
        ]
    );
}

async fn accounts_are(api: &Api<ServiceAccount>, want: &[(&str, &str)]) {
    let want: Vec<(String, String)> = want
        .iter()
        .map(|(n, r)| (n.to_string(), r.to_string()))
        .collect();
    let mut got = Vec::new();
    for _ in 0..400 {
        let list = api
            .list(&ListParams::default().labels(examples::teams::MEMBER_LABEL))
            .await
            .unwrap();
        got = list
            .items
            .iter()
            .map(|a| {
                (
                    a.name_any(),
                    a.annotations()
                        .get(ROLE_ANNOTATION)
                        .cloned()
                        .unwrap_or_default(),
                )
            })
            .collect::<Vec<_>>();
        if got == want {
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("accounts {got:?}, want {want:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accounts_follow_members_and_settings() {
    let server = ApiServer::new();
    let client = server.client();
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    crds.create(&PostParams::default(), &Team::crd())
        .await
        .unwrap();
    await_condition(crds, "teams.example.dev", conditions::is_crd_established())
        .await
        .unwrap();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(
        Operator::new(client.clone())
            .controller(reconciler())
            .run_until(async move {
                let _ = stopped.await;
            }),
    );
    let teams: Api<Team> = Api::namespaced(client.clone(), "default");
    let settings: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let accounts: Api<ServiceAccount> = Api::namespaced(client, "default");

    teams
        .create(&PostParams::default(), &sample("core", &["ada", "linus"]))
        .await
        .unwrap();
    accounts_are(
        &accounts,
        &[("core-ada", "developer"), ("core-linus", "developer")],
    )
    .await;

    // A settings ConfigMap appears: only the mapper can bring it to the team.
    settings
        .create(&PostParams::default(), &sample_settings("core", "admin"))
        .await
        .unwrap();
    accounts_are(&accounts, &[("core-ada", "admin"), ("core-linus", "admin")]).await;

    let members = |m: serde_json::Value| Patch::Merge(json!({ "spec": { "members": m } }));
    teams
        .patch(
            "core",
            &PatchParams::default(),
            &members(json!(["ada", "grace"])),
        )
        .await
        .unwrap();
    accounts_are(&accounts, &[("core-ada", "admin"), ("core-grace", "admin")]).await;
    // The status is written at the end of the pass that changed the accounts.
    let mut status = Default::default();
    for _ in 0..400 {
        status = teams.get("core").await.unwrap().status.unwrap_or_default();
        if status.accounts == ["ada", "grace"] {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert_eq!(status.accounts, ["ada", "grace"], "{status:?}");

    let _ = stop.send(());
    running.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edited_member_label_is_put_back_and_every_created_account_has_its_event() {
    tests::teams_scenario::edited_id_label_is_put_back(ApiServer::new().client()).await;
}
