//! The sharding assigner on the embedded cluster (`tests::sharding_scenario`).

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::CustomResourceExt;
use kube::api::{Api, PostParams};
use kube::runtime::wait::{await_condition, conditions};
use kubewright::testing::ApiServer;
use tests::priority_scenario::Backlog;

#[tokio::test]
async fn the_assigner_assigns_hands_over_and_reassigns() {
    let server = ApiServer::new();
    let client = server.client();
    install_backlogs(&client).await;
    tests::sharding_scenario::assigns_hands_over_and_reassigns(&client, "default").await;
}

/// Three sharded replicas of one operator on the embedded cluster: a join during a converge, a graceful stop
/// and a kill, with no parent ever reconciled by two replicas at once (`tests::sharded_operators`).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sharded_replicas_share_the_parents_and_hand_them_over() {
    let server = ApiServer::new();
    let client = server.client();
    install_backlogs(&client).await;
    tests::sharded_operators::replicas_share_join_leave_and_die(&client, "default", 40).await;
}

/// Installs the Backlog CRD and waits until it is established.
async fn install_backlogs(client: &kube::Client) {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    crds.create(&PostParams::default(), &Backlog::crd())
        .await
        .unwrap();
    await_condition(
        crds,
        "backlogs.priority.example.dev",
        conditions::is_crd_established(),
    )
    .await
    .unwrap();
}
