//! The harness itself: a write nobody expected, an expected write that did not happen, and a write that
//! differs each fail the case, with the case, the write and a YAML diff named.

use kubewright::testing::table::EventExpectation;
use serde_json::json;

use super::*;

#[tokio::test]
async fn unexpected_missing_and_different_writes_fail_the_case_readably() {
    let failure = case("wrong on purpose")
        .given(note("hi"))
        .expect_create(json!({"data": {"text": "not what is created"}}))
        .expect_delete::<k8s_openapi::api::core::v1::ConfigMap>(Some(NS), "never-deleted")
        .expect_event(EventExpectation::normal("Created"))
        .run(reconciler())
        .await
        .unwrap_err();
    assert_eq!(failure.case(), "wrong on purpose");
    let problems = failure.problems();
    assert_eq!(problems.len(), 3, "{failure}");
    assert!(
        problems[0].starts_with("create #0 (write #"),
        "{}",
        problems[0]
    );
    assert!(
        problems[0].contains("-  text: not what is created"),
        "{}",
        problems[0]
    );
    assert!(problems[0].contains("+  text: hi"), "{}", problems[0]);
    assert!(
        problems[1].starts_with("missing delete #0"),
        "{}",
        problems[1]
    );
    assert!(
        problems[1].contains("configmaps default/never-deleted"),
        "{}",
        problems[1]
    );
    assert!(
        problems[2].starts_with("unexpected status update #0"),
        "{}",
        problems[2]
    );
    let shown = failure.to_string();
    assert!(
        shown.starts_with("case `wrong on purpose` failed (3 problems):"),
        "{shown}"
    );
    assert_eq!(format!("{failure:?}").trim(), shown.trim());
}

#[tokio::test]
async fn a_parent_missing_from_the_given_objects_fails_the_case() {
    let failure = case("typo in the parent")
        .run(reconciler())
        .await
        .unwrap_err();
    assert!(
        failure.problems()[0].contains("is not in the cache"),
        "{failure}"
    );
}

async fn watches_become(server: &kubewright::testing::ApiServer, n: usize) {
    for _ in 0..500 {
        if server.watcher_count() == n {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    panic!("{} watches open, expected {n}", server.watcher_count());
}

#[tokio::test]
async fn an_environment_leaves_no_watch_behind() {
    let mut env = kubewright::testing::table::TestEnv::new();
    env.cache::<k8s_openapi::api::core::v1::ConfigMap>();
    env.cache::<k8s_openapi::api::core::v1::Secret>();
    env.start().await.unwrap();
    let server = env.server().clone();
    watches_become(&server, 2).await;
    env.shutdown().await;
    watches_become(&server, 0).await;
}

/// A step that reads from the API server instead of the cache: what `expect_no_reads` catches.
struct ListsConfigMaps(kube::Client);

impl kubewright::SubReconciler<Note> for ListsConfigMaps {
    fn name(&self) -> &str {
        "lists"
    }

    fn reconcile<'a>(
        &'a self,
        _parent: &'a mut Note,
        _cx: &'a mut kubewright::Context,
    ) -> futures::future::BoxFuture<'a, kubewright::Result<kubewright::Outcome>> {
        Box::pin(async move {
            let cms: kube::Api<k8s_openapi::api::core::v1::ConfigMap> =
                kube::Api::namespaced(self.0.clone(), NS);
            cms.list(&Default::default())
                .await
                .map_err(|e| kubewright::Error::kube("list", e))?;
            Ok(kubewright::Outcome::Continue)
        })
    }
}

#[tokio::test]
async fn reads_from_the_api_server_are_reported() {
    use kube::CustomResourceExt;
    let mut env = kubewright::testing::table::TestEnv::new();
    env.install_crd(&Note::crd()).await.unwrap();
    env.insert(&note("hi")).unwrap();
    let reconciler = kubewright::Reconciler::new("notes").step(ListsConfigMaps(env.client()));
    env.cache::<Note>();
    env.start().await.unwrap();
    let report = env.pass(&reconciler, &parent_ref()).await.unwrap();
    let reads: Vec<String> = report.reads().iter().map(|r| r.path.clone()).collect();
    assert_eq!(reads, vec!["/api/v1/namespaces/default/configmaps"]);
    env.shutdown().await;
}

const NOT_FOUND: &str = "404 NotFound: the server could not find the requested resource";

#[tokio::test]
async fn a_cache_that_cannot_sync_names_its_kind_and_the_servers_answer() {
    use kubewright::cache::{Caches, Unsynced};
    let server = kubewright::testing::ApiServer::new();
    let caches = Caches::new(server.client());
    caches.ensure::<Note>();
    caches.ensure::<ConfigMap>();
    let watches: Vec<_> = caches
        .take_watches()
        .into_iter()
        .map(tokio::spawn)
        .collect();
    let e = caches
        .ready_within(std::time::Duration::from_secs(2))
        .await
        .expect_err("Note is not served");
    for w in watches {
        w.abort();
    }
    assert_eq!(
        e.unsynced,
        [Unsynced {
            kind: "Note".into(),
            last_error: Some(NOT_FOUND.into()),
        }]
    );
    assert_eq!(
        e.to_string(),
        format!("the caches of Note (the server answered: {NOT_FOUND}) did not sync within 2s")
    );
}

#[tokio::test]
async fn a_case_whose_kind_is_not_served_says_so() {
    let failure = ReconcilerTestCase::<Note>::new("no CRD", parent_ref())
        .parent_absent()
        .run(reconciler())
        .await
        .unwrap_err();
    assert_eq!(
        failure.problems(),
        [format!(
            "setup: the caches of Note (the server answered: {NOT_FOUND}) did not sync within 10s"
        )]
    );
}

#[tokio::test]
async fn cases_can_register_kinds_the_server_does_not_know() {
    use kubewright::testing::apiserver::ResourceType;
    ReconcilerTestCase::new("registered, no CRD", parent_ref())
        .register(
            ResourceType::new("example.dev", "v1", "Note", "notes", true)
                .with_status()
                .with_generation(),
        )
        .given(note("hi"))
        .expect_create(json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": NAME, "namespace": NS, "ownerReferences": [owner()]},
            "data": {"text": "hi"},
        }))
        .expect_event(EventExpectation::normal("Created").note("ConfigMap default/hello"))
        .expect_status_update(converged())
        .run(reconciler())
        .await
        .unwrap();
}
