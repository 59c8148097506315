//! A fight over a child's field on the embedded cluster (`tests::fights_scenario`).

use kubewright::testing::ApiServer;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_writer_is_reported_and_backed_off() {
    let server = ApiServer::new();
    let client = server.client();
    examples::webapp::cli::ensure_crd(&client).await.unwrap();
    tests::fights_scenario::a_second_writer_is_reported_and_backed_off(&client, &client, "default")
        .await;
}
