//! The `cronjob` example on a real kube-apiserver (`tests::cronjob_scenario`), where a Job's `spec.template`
//! is immutable: the test plays the Job controller ([`tests::workload_controllers::play_jobs`]), and
//! kube-apiserver's own request metrics show that the create-once Job set created and deleted Jobs and wrote
//! none. On a whole cluster (`run_on_cluster`) nothing is played: kube-controller-manager's Job controller and
//! kwok's simulated nodes run the Jobs to completion.

use std::collections::BTreeMap;

use kubewright::testing::envtest::metrics::{is_write, samples, scrape};
use kubewright::testing::envtest::{ControlPlane, assets_or_skip};
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

/// A job template kube-apiserver refuses (no containers): the CronJob is `Ready=False` with reason
/// `JobInvalid` and the server's message naming the field, one Warning event, no Job, and no retry storm (one
/// refused `POST` while nothing changes).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_template_kube_apiserver_refuses_is_an_invalid_spec() {
    use examples::cronjob::{CronJob, sample};
    use k8s_openapi::api::events::v1::Event;
    use k8s_openapi::jiff::Timestamp;
    use kube::CustomResourceExt;
    use kube::api::{Api, PostParams};
    use std::time::Duration;

    let name = "cronjob-invalid-template";
    if assets_or_skip(name).is_none() {
        return;
    }
    let cp = ControlPlane::builder().name(name).start().await.unwrap();
    let client = cp.client().unwrap();
    kubewright::cli::ensure_crd(&client, CronJob::crd())
        .await
        .expect("install the CronJob CRD");
    // Due at once: the operator's clock is at the next whole minute, within the starting deadline.
    let t0 = Timestamp::from_second((Timestamp::now().as_second() / 60 + 1) * 60).expect("a time");
    let reconciler = CronJob::reconciler().clock(move || t0);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(
        kubewright::Operator::new(client.clone())
            .controller(reconciler)
            .run_until(async move {
                let _ = stopped.await;
            }),
    );
    let mut cj = sample("broken", "* * * * *");
    if let Some(pod) = cj
        .spec
        .job_template
        .spec
        .as_mut()
        .and_then(|s| s.template.spec.as_mut())
    {
        pod.containers.clear();
    }
    let cronjobs: Api<CronJob> = Api::namespaced(client.clone(), "default");
    cronjobs
        .create(&PostParams::default(), &cj)
        .await
        .expect("the CRD's schema takes it");
    let ready = tests::tenants_scenario::eventually("Ready=False (JobInvalid)", async || {
        let cj = cronjobs.get("broken").await.expect("get");
        let status = cj.status.clone().unwrap_or_default();
        match status.conditions.iter().find(|c| c.type_ == "Ready") {
            Some(c) if c.reason == "JobInvalid" => Ok(c.clone()),
            other => Err(other.cloned()),
        }
    })
    .await;
    assert_eq!(ready.status, "False");
    assert!(
        ready.message.contains("spec.template.spec.containers"),
        "{}",
        ready.message
    );
    // No retry while nothing changes: backoff would have tried again within these seconds.
    tokio::time::sleep(Duration::from_secs(4)).await;
    let writes = job_writes(&client).await;
    assert_eq!(
        writes,
        BTreeMap::from([("POST".into(), 1)]),
        "one refused POST"
    );
    let jobs: Api<k8s_openapi::api::batch::v1::Job> = Api::namespaced(client.clone(), "default");
    assert!(
        jobs.list(&Default::default())
            .await
            .unwrap()
            .items
            .is_empty()
    );
    let events: Api<Event> = Api::namespaced(client.clone(), "default");
    let warnings = events
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter(|e| e.reason.as_deref() == Some("JobInvalid"))
        .count();
    assert_eq!(warnings, 1, "one Warning event");
    let _ = stop.send(());
    let _ = tokio::time::timeout(Duration::from_secs(10), running).await;
}

/// On a whole cluster: the real Job controller runs each Job's Pod on a simulated node to completion, the CronJob's
/// status follows (`Ready`, its last schedule, nothing active), and the operator's only Job writes are its two
/// creations and the history limit's one deletion.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cluster_runs_the_cronjobs_jobs_to_completion() {
    let Some(cp) = ControlPlane::shared_cluster_or_skip("cronjob on the cluster").await else {
        return;
    };
    let admin = cp.client().unwrap();
    let namespace = cp.namespace().await.unwrap();
    let (operator, log) = crate::support::recording_client_for(cp.config().clone());
    let [first, second] =
        tests::cronjob_scenario::run_on_cluster(admin, operator, &namespace).await;
    let scope = format!("/apis/batch/v1/namespaces/{namespace}/jobs");
    let job_writes: Vec<String> = log
        .lock()
        .unwrap()
        .iter()
        .filter(|e| e.method != "GET" && e.path.contains(&scope))
        .map(|e| {
            format!(
                "{} {}",
                e.method,
                e.path.split('?').next().unwrap_or_default()
            )
        })
        .collect();
    assert_eq!(
        job_writes,
        [
            format!("POST {scope}"),
            format!("POST {scope}"),
            format!("DELETE {scope}/{first}"),
        ],
        "the operator's Job writes (the second is {second})"
    );
}
