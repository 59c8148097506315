//! The `cronjob` example on a real kube-apiserver (`tests::cronjob_scenario`), where a Job's `spec.template`
//! is immutable: the test plays the Job controller ([`tests::workload_controllers::play_jobs`]), and
//! kube-apiserver's own request metrics show that the create-once Job set created and deleted Jobs and wrote
//! none.

use std::collections::BTreeMap;

use operator::testing::envtest::metrics::{is_write, samples, scrape};
use operator::testing::envtest::{ControlPlane, assets_or_skip};
use tests::cronjob_scenario::{JOB_RUN_TIME, run};

/// The write requests kube-apiserver has served to Jobs themselves (not their `status`), by verb.
async fn job_writes(client: &kube::Client) -> BTreeMap<String, u64> {
    let page = scrape(client).await.expect("/metrics");
    let mut out = BTreeMap::new();
    for s in samples(&page, "apiserver_request_total") {
        let job = s.label("resource") == Some("jobs") && s.label("subresource") == Some("");
        match (job, s.label("verb")) {
            (true, Some(verb)) if is_write(verb) => {
                *out.entry(verb.to_string()).or_default() += s.value as u64
            }
            _ => {}
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_operator_creates_jobs_once_on_kube_apiserver() {
    let name = "cronjob-create-once";
    if assets_or_skip(name).is_none() {
        return;
    }
    let cp = ControlPlane::builder().name(name).start().await.unwrap();
    let client = cp.client().unwrap();
    let before = job_writes(&client).await;
    assert_eq!(before, BTreeMap::new(), "Job writes before the operator");
    let jobs = tests::workload_controllers::play_jobs(client.clone(), JOB_RUN_TIME);
    run(client.clone(), client.clone()).await;
    jobs.abort();
    let writes = job_writes(&client).await;
    assert_eq!(
        writes,
        BTreeMap::from([("DELETE".into(), 1), ("POST".into(), 2)]),
        "Job writes: two creates, one history deletion, nothing else"
    );
}
