//! The `CronJob` operator: the kubebuilder book's CronJob tutorial, written declaratively with
//! `#[derive(Reconciler)]`.
//!
//! A `CronJob` (`batch.tutorial.kubebuilder.io/v1`) runs its `jobTemplate` as a Job at each time of its
//! `schedule` (five cron fields, as the tutorial's `cron.ParseStandard` reads them, and the `@hourly` kind of
//! names). The Job for the schedule time `t` is `<cronjob>-<unix seconds of t>`, annotated [`SCHEDULED_AT`]
//! with `t` in RFC 3339, with the template's labels and annotations.
//!
//! - Only the latest schedule time missed since the last run is run, and only while it is at most
//!   `startingDeadlineSeconds` old (when set); more than 100 missed times is an invalid spec (reason
//!   `TooManyMissedStarts`), as the tutorial refuses them.
//! - `suspend` runs nothing new; `concurrencyPolicy` `Forbid` runs nothing while a Job runs, `Replace`
//!   deletes the running Jobs when a new one starts, `Allow` (the default) runs them side by side.
//! - Finished Jobs are kept as history, the newest `successfulJobsHistoryLimit` (default 3) succeeded and
//!   `failedJobsHistoryLimit` (default 1) failed ones by their schedule time; older ones are deleted.
//! - `status.active` references the running Jobs, `status.lastScheduleTime` is the latest schedule time run;
//!   `Ready` is `False` while a Job runs (a Job of a create-once set is ready once it has finished).
//! - The pass is queued again at the next schedule time (not while suspended).
//!
//! An unparsable schedule or a negative history limit is `Ready=False` with a reason naming the field
//! (`InvalidSchedule`, `InvalidSuccessfulJobsHistoryLimit`, `InvalidFailedJobsHistoryLimit`) and a Warning
//! event, and no Job is touched (the schema refuses negative limits already).
//!
//! The schedule's rules (which run is due, overlap, history, the next pass) are the runtime's
//! [`kubewright::schedule`], shared by every operator that starts run-once children on a schedule; this module
//! gives them the CronJob's spec ([`runs`]). Time is the pass's ([`Context::now`]), never the wall clock, so
//! tests move it at will.
//!
//! `cargo run --example cronjob` runs it on the embedded cluster with a sample CronJob that runs every minute.

use k8s_openapi::api::{batch::v1::Job, batch::v1::JobTemplateSpec, core::v1::ObjectReference};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kubewright::schedule::{ConcurrencyPolicy, Runs, Schedule, observe};
use kubewright::{Error, Result, prelude::*};

/// The annotation holding the schedule time a Job runs for, in RFC 3339.
pub const SCHEDULED_AT: &str = "batch.tutorial.kubebuilder.io/scheduled-at";

/// A Job run on a schedule.
#[derive(
    CustomResource, Reconciler, Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema,
)]
#[kube(group = "batch.tutorial.kubebuilder.io", version = "v1")]
#[kube(kind = "CronJob", namespaced, status = "CronJobStatus")]
#[sync(requeue_at_next_run)]
#[children(
    desired = desired_jobs, id = ResourceExt::name_any, strategy = "create", retain = retain_job,
    reflect = reflect_jobs
)]
#[serde(rename_all = "camelCase")]
pub struct CronJobSpec {
    /// When to run, in cron format (`minute hour day-of-month month day-of-week`, or `@hourly` and the like).
    pub schedule: String,
    /// How late a missed run may still start, in seconds; a run missed by longer is skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 0))]
    pub starting_deadline_seconds: Option<i64>,
    /// What to do when a run is due while others run (`Allow`, `Forbid`, `Replace`).
    #[serde(default)]
    pub concurrency_policy: ConcurrencyPolicy,
    /// Start no new runs (those running go on).
    #[serde(default)]
    pub suspend: bool,
    /// The Job each run creates.
    pub job_template: JobTemplateSpec,
    /// How many succeeded Jobs to keep.
    #[serde(default = "limit::<3>")]
    #[schemars(range(min = 0))]
    pub successful_jobs_history_limit: i32,
    /// How many failed Jobs to keep.
    #[serde(default = "limit::<1>")]
    #[schemars(range(min = 0))]
    pub failed_jobs_history_limit: i32,
}

fn limit<const N: i32>() -> i32 {
    N
}

/// What the operator observed of a CronJob.
#[derive(
    Clone, Debug, Default, PartialEq, ReconcilerStatus, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "camelCase", default)]
pub struct CronJobStatus {
    /// The generation this status describes.
    pub observed_generation: Option<i64>,
    /// `Ready`, rolled up from `JobsReady` (`False` while a Job runs), and why not.
    pub conditions: Vec<Condition>,
    /// The running Jobs.
    pub active: Vec<ObjectReference>,
    /// The latest schedule time a Job was started for.
    pub last_schedule_time: Option<Time>,
}

/// The CronJob's runs as its spec says; an invalid spec for an unreadable schedule (`InvalidSchedule`), more
/// than 100 missed start times (`TooManyMissedStarts`) or a negative history limit
/// (`Invalid<Successful|Failed>JobsHistoryLimit`).
pub fn runs(cj: &CronJob) -> Result<Runs> {
    let spec = &cj.spec;
    let succeeded = history_limit("Successful", spec.successful_jobs_history_limit)?;
    let failed = history_limit("Failed", spec.failed_jobs_history_limit)?;
    let runs = Runs::new(cj, Schedule::parse(&spec.schedule)?, SCHEDULED_AT)
        .history(succeeded, failed)
        .policy(spec.concurrency_policy)
        .suspend(spec.suspend)
        .starting_deadline_seconds(spec.starting_deadline_seconds);
    Ok(runs)
}

/// A history limit, or an invalid spec (`Invalid<Kind>JobsHistoryLimit`) when it is below 0.
fn history_limit(kind: &str, limit: i32) -> Result<usize> {
    let reason = format!("Invalid{kind}JobsHistoryLimit");
    usize::try_from(limit).map_err(|_| Error::invalid_spec(reason, format!("{limit} is below 0")))
}

/// The Job of the run at `at`: the template's spec, labels and annotations, named and annotated by `runs`.
pub fn job_for(cj: &CronJob, runs: &Runs, at: Timestamp) -> Job {
    let meta = cj.spec.job_template.metadata.clone().unwrap_or_default();
    let (labels, annotations) = (meta.labels, meta.annotations);
    let spec = cj.spec.job_template.spec.clone();
    runs.stamp(object!(Job { metadata: { labels, annotations }, spec }), at)
}

/// The Jobs a CronJob has at `now`: those running and the one due, as `concurrencyPolicy` allows.
pub fn desired_jobs(cj: &CronJob, cx: &mut Context) -> Result<Vec<Job>> {
    let runs = runs(cj)?;
    let jobs = cx.cache::<Job>()?.owned_by(&cj.uid().unwrap_or_default());
    let last = cj.status.clone().unwrap_or_default().last_schedule_time;
    let times = runs.desired(jobs, last.map(|t| t.0), cx.now())?;
    Ok(times.into_iter().map(|at| job_for(cj, &runs, at)).collect())
}

/// A Job no longer desired: history when finished, kept while running unless a `Replace` run replaced it.
pub fn retain_job(cj: &CronJob, job: &Job) -> Retention {
    runs(cj).map_or(Retention::Keep, |runs| runs.retain(job))
}

/// Checks the spec, and queues the next pass at the next schedule time (none while suspended).
pub fn requeue_at_next_run(cj: &mut CronJob, cx: &mut Context) -> Result<Outcome> {
    Ok(runs(cj)?.requeue(cx.now()))
}

/// Reports the running Jobs and the latest schedule time run (kept when no Job is left to show it).
pub fn reflect_jobs(status: &mut CronJobStatus, jobs: &BTreeMap<String, ChildOutcome<Job>>) {
    let seen = observe(SCHEDULED_AT, jobs);
    status.active = seen.active;
    status.last_schedule_time = status.last_schedule_time.take().max(seen.last.map(Time));
}

/// The CronJob operator's command line ([`kubewright::cli`]); the embedded cluster gets a sample CronJob that runs
/// every minute.
pub fn app() -> App {
    App::new("cronjob-operator")
        .namespace("cronjob-system")
        .image("example.dev/cronjob-operator:latest")
        .operate::<CronJob>()
        .sample(sample(SAMPLE_NAME, "* * * * *"))
        .kubectl_hint("get cronjobs.batch.tutorial.kubebuilder.io,jobs")
}
/// The name of the sample CronJob created on the embedded cluster.
pub const SAMPLE_NAME: &str = "hello";

/// A CronJob `name` in `default` on `schedule`, whose Jobs print the date (the tutorial's sample).
pub fn sample(name: &str, schedule: &str) -> CronJob {
    let job_template = object!(JobTemplateSpec {
        spec: {
            template: {
                spec: {
                    containers: [{
                        name: "hello",
                        image: "busybox",
                        args: ["/bin/sh", "-c", "date; echo Hello from the Kubernetes cluster"],
                    }],
                    restart_policy: "OnFailure",
                },
            },
        },
    });
    let spec = CronJobSpec {
        schedule: schedule.into(),
        starting_deadline_seconds: Some(60),
        concurrency_policy: ConcurrencyPolicy::Allow,
        suspend: false,
        job_template,
        successful_jobs_history_limit: 3,
        failed_jobs_history_limit: 1,
    };
    let mut cj = CronJob::new(name, spec);
    cj.metadata.namespace = Some("default".into());
    cj
}
