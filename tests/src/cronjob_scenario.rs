//! The `cronjob` example's scenario, shared by the embedded cluster (`tests/derive/cronjob.rs`) and a real
//! kube-apiserver (`tests/envtest/cronjob.rs`), which enforces a Job's immutable `spec.template`.
//!
//! The operator runs on a clock of the scenario's (the servers keep wall time): it starts at a schedule time and
//! is moved a period at a time, so a `* * * * *` schedule runs its Jobs in seconds. A pass is asked for after
//! each move by annotating the CronJob. Jobs finish [`JOB_RUN_TIME`] after they start (played by the caller: the
//! in-memory server's Job controller, or [`crate::workload_controllers::play_jobs`]).
//!
//! The steps: a due run creates its Job; a new `jobTemplate` while it runs (still desired) leaves that Job as
//! it is (the caller counts that no Job is written but created and deleted), and it completes; the next period's Job has the new template;
//! a lower `successfulJobsHistoryLimit` deletes the older Job; suspended, a due run creates nothing.
//!
//! [`run_on_cluster`] is the shorter scenario of a whole cluster, where nothing is played: kube-controller-manager's
//! Job controller runs each Job's Pod, kwok's simulated node completes it, the Job controller marks the Job
//! `Complete`, and the CronJob's status follows; the history limit's deletion is finished by the garbage collector.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use examples::cronjob::{CronJob, sample};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kube::{Client, CustomResourceExt};
use kubewright::Operator;
use serde_json::json;

use crate::tenants_scenario::{eventually, eventually_within};

/// The CronJob's name (in `default`).
pub const NAME: &str = "hello";

/// How long a Job runs (wall clock): long enough for the scenario to change the CronJob while one runs.
pub const JOB_RUN_TIME: Duration = Duration::from_secs(5);

/// The image of the changed template.
pub const NEW_IMAGE: &str = "busybox:1.37";

/// The name of the Job of the run at `t`.
pub fn job_name(t: Timestamp) -> String {
    format!("{NAME}-{}", t.as_second())
}

/// The first container's image of a Job's template.
fn image(job: &Job) -> Option<String> {
    let spec = job.spec.as_ref()?.template.spec.as_ref()?;
    spec.containers.first()?.image.clone()
}

/// Waits until the CronJob's status describes its generation, is `Ready=True` with no active Job and reports
/// `last` as the last schedule time.
async fn settled(cronjobs: &Api<CronJob>, last: Timestamp) {
    eventually(&format!("Ready with last schedule {last}"), async || {
        let cj = cronjobs.get(NAME).await.expect("get the CronJob");
        let status = cj.status.clone().unwrap_or_default();
        let ready = status
            .conditions
            .iter()
            .any(|c| c.type_ == "Ready" && c.status == "True");
        let current = status.observed_generation == cj.metadata.generation;
        let at = status.last_schedule_time.as_ref().map(|t| t.0);
        match ready && current && status.active.is_empty() && at == Some(last) {
            true => Ok(()),
            false => Err(status),
        }
    })
    .await;
}

/// Waits until the CronJob's status describes its generation and lists `jobs` as running: a pass of the
/// current spec ran while they ran (they must run long enough: see [`JOB_RUN_TIME`]).
async fn running_jobs(cronjobs: &Api<CronJob>, jobs: &[String]) {
    eventually(&format!("{jobs:?} running"), async || {
        let cj = cronjobs.get(NAME).await.expect("get the CronJob");
        let status = cj.status.clone().unwrap_or_default();
        let current = status.observed_generation == cj.metadata.generation;
        let active: Vec<String> = status
            .active
            .iter()
            .filter_map(|r| r.name.clone())
            .collect();
        match current && active == jobs {
            true => Ok(()),
            false => Err(status),
        }
    })
    .await;
}

/// Asks for a pass: an annotation is no spec change, and the pass runs at the operator's clock.
async fn poke(cronjobs: &Api<CronJob>, round: u32) {
    let patch = json!({"metadata": {"annotations": {"example.dev/poke": round.to_string()}}});
    cronjobs
        .patch(NAME, &PatchParams::default(), &Patch::Merge(patch))
        .await
        .expect("annotate the CronJob");
}

/// Changes the CronJob's spec with the merge patch `spec`.
async fn change(cronjobs: &Api<CronJob>, spec: serde_json::Value) {
    cronjobs
        .patch(
            NAME,
            &PatchParams::default(),
            &Patch::Merge(json!({ "spec": spec })),
        )
        .await
        .expect("change the CronJob");
}

/// The names of the Jobs in `default` not being deleted.
async fn job_names(jobs: &Api<Job>) -> Vec<String> {
    let list = jobs.list(&Default::default()).await.expect("list Jobs");
    let live = list
        .items
        .into_iter()
        .filter(|j| j.metadata.deletion_timestamp.is_none());
    live.filter_map(|j| j.metadata.name).collect()
}

/// Runs the scenario: `admin` installs the CRD and plays the user, the operator runs with `operator`.
pub async fn run(admin: Client, operator: Client) {
    kubewright::cli::ensure_crd(&admin, CronJob::crd())
        .await
        .expect("install the CronJob CRD");
    let cronjobs: Api<CronJob> = Api::namespaced(admin.clone(), "default");
    let jobs: Api<Job> = Api::namespaced(admin.clone(), "default");

    // The operator's clock starts at a whole minute at least a minute ahead: the CronJob, created before it,
    // is due then (its starting deadline, 60 s, looks back no further than its creation).
    let wall = Timestamp::now().as_second();
    let t0 = Timestamp::from_second((wall / 60 + 2) * 60).expect("a time");
    let clock = Arc::new(Mutex::new(t0));
    let advance = |by: i64| {
        let mut t = clock.lock().expect("the clock");
        *t += SignedDuration::from_mins(by);
        *t
    };
    let reconciler = {
        let clock = clock.clone();
        CronJob::reconciler().clock(move || *clock.lock().expect("the clock"))
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(Operator::new(operator).controller(reconciler).run_until(
        async move {
            let _ = stopped.await;
        },
    ));

    // Due at once: the Job of t0, which runs.
    cronjobs
        .create(&PostParams::default(), &sample(NAME, "* * * * *"))
        .await
        .expect("create the CronJob");
    running_jobs(&cronjobs, &[job_name(t0)]).await;
    let first = jobs.get(&job_name(t0)).await.expect("the first Job");
    assert_eq!(image(&first).as_deref(), Some("busybox"));

    // A new template while that Job runs, so it is still desired: the pass leaves it as it is (its template is
    // immutable), and it completes.
    let containers =
        json!([{"name": "hello", "image": NEW_IMAGE, "args": ["/bin/sh", "-c", "date"]}]);
    change(
        &cronjobs,
        json!({"jobTemplate": {"spec": {"template": {"spec": {"containers": containers}}}}}),
    )
    .await;
    running_jobs(&cronjobs, &[job_name(t0)]).await;
    settled(&cronjobs, t0).await;
    let kept = jobs.get(&job_name(t0)).await.expect("the first Job");
    assert_eq!(image(&kept).as_deref(), Some("busybox"), "{kept:#?}");
    assert_eq!(job_names(&jobs).await, [job_name(t0)]);

    // A period later: the next Job, from the new template.
    let t1 = advance(1);
    poke(&cronjobs, 1).await;
    settled(&cronjobs, t1).await;
    let second = jobs.get(&job_name(t1)).await.expect("the second Job");
    assert_eq!(image(&second).as_deref(), Some(NEW_IMAGE));
    assert_eq!(job_names(&jobs).await, [job_name(t0), job_name(t1)]);

    // One succeeded Job kept as history: the older goes.
    change(&cronjobs, json!({"successfulJobsHistoryLimit": 1})).await;
    eventually("the older Job deleted", async || {
        let names = job_names(&jobs).await;
        match names == [job_name(t1)] {
            true => Ok(()),
            false => Err(names),
        }
    })
    .await;
    settled(&cronjobs, t1).await;

    // Suspended: a due run creates nothing.
    change(&cronjobs, json!({"suspend": true})).await;
    settled(&cronjobs, t1).await;
    advance(1);
    poke(&cronjobs, 2).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    settled(&cronjobs, t1).await;
    assert_eq!(job_names(&jobs).await, [job_name(t1)]);

    let _ = stop.send(());
    running
        .await
        .expect("the operator stops")
        .expect("the operator ran");
}

/// Whether a Job's status has the condition `type_` at `True`.
fn has_condition(job: &Job, type_: &str) -> bool {
    let conditions = job.status.as_ref().and_then(|s| s.conditions.as_ref());
    conditions.is_some_and(|cs| cs.iter().any(|c| c.type_ == type_ && c.status == "True"))
}

/// The phases of the Pods of the Job `job`, by the label the Job controller gives them.
async fn pod_phases(pods: &Api<Pod>, job: &str) -> Vec<String> {
    let selector = format!("batch.kubernetes.io/job-name={job}");
    let list = pods
        .list(&ListParams::default().labels(&selector))
        .await
        .expect("list Pods");
    list.items
        .into_iter()
        .map(|p| p.status.and_then(|s| s.phase).unwrap_or_default())
        .collect()
}

/// Waits until the real Job controller has marked the Job `name` `Complete` with one Pod succeeded, and its one
/// Pod ran on a simulated node to `Succeeded`.
async fn completed(jobs: &Api<Job>, pods: &Api<Pod>, name: &str) {
    eventually(&format!("Job {name} Complete"), async || {
        let job = jobs.get_opt(name).await.expect("get the Job");
        let done = job.as_ref().is_some_and(|j| {
            has_condition(j, "Complete") && j.status.as_ref().and_then(|s| s.succeeded) == Some(1)
        });
        match done {
            true => Ok(()),
            false => Err(job.and_then(|j| j.status)),
        }
    })
    .await;
    assert_eq!(
        pod_phases(pods, name).await,
        ["Succeeded"],
        "the Pod of {name}"
    );
}

/// The scenario on a whole cluster, in `namespace`: with a history of one successful Job, the run due at the
/// operator's first clock time creates a Job that the cluster runs to completion, and the CronJob is `Ready` with
/// it as its last schedule and nothing active; a period later the next Job completes the same way, the older is
/// deleted and the garbage collector removes its Pod. `admin` installs the CRD and plays the user, the operator
/// runs with `operator`; returns the Jobs' names.
pub async fn run_on_cluster(admin: Client, operator: Client, namespace: &str) -> [String; 2] {
    kubewright::cli::ensure_crd(&admin, CronJob::crd())
        .await
        .expect("install the CronJob CRD");
    let cronjobs: Api<CronJob> = Api::namespaced(admin.clone(), namespace);
    let jobs: Api<Job> = Api::namespaced(admin.clone(), namespace);
    let pods: Api<Pod> = Api::namespaced(admin.clone(), namespace);

    let wall = Timestamp::now().as_second();
    let t0 = Timestamp::from_second((wall / 60 + 2) * 60).expect("a time");
    let clock = Arc::new(Mutex::new(t0));
    let reconciler = {
        let clock = clock.clone();
        CronJob::reconciler().clock(move || *clock.lock().expect("the clock"))
    };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(Operator::new(operator).controller(reconciler).run_until(
        async move {
            let _ = stopped.await;
        },
    ));

    let mut cj = sample(NAME, "* * * * *");
    cj.metadata.namespace = Some(namespace.into());
    cj.spec.successful_jobs_history_limit = 1;
    cronjobs
        .create(&PostParams::default(), &cj)
        .await
        .expect("create the CronJob");
    completed(&jobs, &pods, &job_name(t0)).await;
    settled(&cronjobs, t0).await;

    let t1 = {
        let mut t = clock.lock().expect("the clock");
        *t += SignedDuration::from_mins(1);
        *t
    };
    poke(&cronjobs, 1).await;
    completed(&jobs, &pods, &job_name(t1)).await;
    settled(&cronjobs, t1).await;
    // One successful Job kept: the older is deleted, and the garbage collector takes its Pod.
    eventually_within(
        "the older Job and its Pod gone",
        crate::tenants_scenario::GARBAGE_COLLECTION_BOUND,
        async || {
            let names = job_names(&jobs).await;
            let pods = pod_phases(&pods, &job_name(t0)).await;
            match names == [job_name(t1)] && pods.is_empty() {
                true => Ok(()),
                false => Err((names, pods)),
            }
        },
    )
    .await;
    settled(&cronjobs, t1).await;

    let _ = stop.send(());
    running
        .await
        .expect("the operator task")
        .expect("the operator ran");
    [job_name(t0), job_name(t1)]
}
