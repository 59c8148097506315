//! The `cronjob` example's operator on the embedded cluster (`tests::cronjob_scenario`): the create-once Job
//! set creates and deletes Jobs and writes none, as the server's request log shows.

use std::collections::BTreeMap;

use kubewright::testing::ApiServer;
use tests::cronjob_scenario::{JOB_RUN_TIME, run};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_operator_creates_jobs_once_on_the_embedded_cluster() {
    // The server's Job controller, on the wall clock: a Job completes `JOB_RUN_TIME` after it starts.
    let server = ApiServer::builder()
        .request_log(true)
        .job_run_time(JOB_RUN_TIME)
        .build();
    run(server.client(), server.client()).await;
    // Requests to Jobs themselves (not their status, which the server's Job controller writes), by method.
    let mut job_requests = BTreeMap::<String, u64>::new();
    for r in server.requests() {
        let path = r.path.split('?').next().unwrap_or_default();
        let is_job = path.starts_with("/apis/batch/v1/namespaces/default/jobs/")
            || path == "/apis/batch/v1/namespaces/default/jobs";
        if is_job && !path.ends_with("/status") && !["GET"].contains(&r.method.as_str()) {
            *job_requests.entry(r.method.to_string()).or_default() += 1;
        }
    }
    assert_eq!(
        job_requests,
        BTreeMap::from([("DELETE".into(), 1), ("POST".into(), 2)]),
        "Job writes: two creates, one history deletion, nothing else"
    );
}
