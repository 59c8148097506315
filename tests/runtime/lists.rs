//! Caches stream their first lists by default where the API server can (one watch per kind with
//! `sendInitialEvents`, no LIST request), as client-go does; a cache whose streamed list is refused lists in
//! pages, and `Operator::list_strategy(ListStrategy::Paged)` always lists in pages.

use std::time::Duration;

use examples::webapp::{WebApp, reconciler, sample, sample_config_map};
use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, PostParams};
use kube::{Client, CustomResourceExt};
use kubewright::testing::ApiServer;
use kubewright::testing::apiserver::{Fault, Verb};
use kubewright::{ListStrategy, Operator};

async fn server_with_a_webapp() -> ApiServer {
    let server = ApiServer::new();
    let client = server.client();
    let crds = Api::all(client.clone());
    crds.create(&PostParams::default(), &WebApp::crd())
        .await
        .unwrap();
    kube::runtime::wait::await_condition(
        crds,
        "webapps.example.dev",
        kube::runtime::wait::conditions::is_crd_established(),
    )
    .await
    .unwrap();
    Api::namespaced(client.clone(), "default")
        .create(&PostParams::default(), &sample_config_map("web-config"))
        .await
        .unwrap();
    Api::namespaced(client.clone(), "default")
        .create(&PostParams::default(), &sample("web", Some("web-config")))
        .await
        .unwrap();
    server
}

/// Runs the WebApp operator until its Deployment exists; returns the requests it made.
async fn run(server: &ApiServer, strategy: Option<ListStrategy>) -> Vec<(Verb, String, String)> {
    let client: Client = server.client();
    server.clear_requests();
    let mut operator = Operator::new(client.clone()).controller(reconciler());
    if let Some(s) = strategy {
        operator = operator.list_strategy(s);
    }
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(operator.run_until(async move {
        let _ = stopped.await;
    }));
    let deployments: Api<Deployment> = Api::namespaced(client, "default");
    for _ in 0..400 {
        if deployments.get_opt("web").await.unwrap().is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    let _ = stop.send(());
    tokio::time::timeout(Duration::from_secs(10), task)
        .await
        .expect("stopped")
        .unwrap()
        .unwrap();
    server
        .requests()
        .into_iter()
        .filter_map(|r| Some((r.verb?, r.resource, r.query)))
        .collect()
}

fn count(requests: &[(Verb, String, String)], verb: Verb, query: &str) -> usize {
    requests
        .iter()
        .filter(|(v, _, q)| *v == verb && q.contains(query))
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn caches_stream_their_first_lists_by_default_where_the_server_can() {
    let server = server_with_a_webapp().await;
    let requests = run(&server, None).await;
    assert_eq!(count(&requests, Verb::List, ""), 0, "{requests:#?}");
    // WebApps, Deployments, Services, ConfigMaps: each cache's watch sent its objects first.
    assert!(
        count(&requests, Verb::Watch, "sendInitialEvents=true") >= 4,
        "{requests:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn caches_list_in_pages_when_asked() {
    let server = server_with_a_webapp().await;
    let requests = run(&server, Some(ListStrategy::Paged)).await;
    assert!(count(&requests, Verb::List, "limit=") >= 4, "{requests:#?}");
    assert_eq!(
        count(&requests, Verb::Watch, "sendInitialEvents=true"),
        0,
        "{requests:#?}"
    );
}

/// kube-apiserver answers a streamed watch with 429 while its resource's watch cache (re)initializes (after
/// a CRD is created, or when the cache fell behind etcd), where a paged LIST is served from etcd: the cache
/// lists in pages then, as client-go's reflector does, instead of retrying the streamed watch with a backoff.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cache_whose_streamed_list_is_refused_lists_in_pages() {
    let server = server_with_a_webapp().await;
    server.inject(
        Fault::on(Verb::Watch)
            .resource("deployments")
            .fail(429, "TooManyRequests")
            .times(1),
    );
    let requests = run(&server, None).await;
    let lists: Vec<&String> = requests
        .iter()
        .filter(|(v, _, q)| *v == Verb::List && q.contains("limit="))
        .map(|(_, resource, _)| resource)
        .collect();
    assert_eq!(lists, ["deployments"], "{requests:#?}");
    assert!(
        count(&requests, Verb::Watch, "sendInitialEvents=true") >= 4,
        "{requests:#?}"
    );
}

#[tokio::test]
async fn the_probe_finds_streaming_on_the_embedded_server_and_paged_where_the_kind_is_not_served() {
    let server = server_with_a_webapp().await;
    let client = server.client();
    assert_eq!(
        kubewright::cache::probe_list_strategy::<WebApp>(&client, None).await,
        ListStrategy::Streaming
    );
    assert_eq!(
        kubewright::cache::probe_list_strategy::<WebApp>(&client, Some("default")).await,
        ListStrategy::Streaming
    );
    let empty = ApiServer::new();
    assert_eq!(
        kubewright::cache::probe_list_strategy::<WebApp>(&empty.client(), None).await,
        ListStrategy::Paged
    );
}
