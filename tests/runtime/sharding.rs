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
    tests::sharding_scenario::assigns_hands_over_and_reassigns(&client, "default").await;
}
