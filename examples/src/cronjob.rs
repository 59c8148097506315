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
//! Time is the pass's ([`Context::now`]), never the wall clock, so tests move it at will.
//!
//! `cargo run --example cronjob` runs it on the embedded cluster with a sample CronJob that runs every minute.

use ConcurrencyPolicy::{Forbid, Replace};
use croner::Cron;
use croner::parser::{CronParser, Seconds, Year};
use k8s_openapi::api::{batch::v1::Job, batch::v1::JobTemplateSpec, core::v1::ObjectReference};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::{SignedDuration, Timestamp, tz::TimeZone};
use kubewright::readiness::{builtin, finished};
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
    /// What to do when a run is due while others run.
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

/// How the runs of one CronJob may overlap.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum ConcurrencyPolicy {
    /// Runs may overlap.
    #[default]
    Allow,
    /// A run due while others run is skipped.
    Forbid,
    /// A run due while others run replaces them (they are deleted).
    Replace,
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

/// The schedule, read as the tutorial's `cron.ParseStandard` reads it (five fields); an invalid spec
/// (`InvalidSchedule`) when it cannot be read.
pub fn schedule(cj: &CronJob) -> Result<Cron> {
    let (standard, text) = (CronParser::builder(), &cj.spec.schedule);
    let standard = standard.seconds(Seconds::Disallowed).year(Year::Disallowed);
    let invalid = |e| Error::invalid_spec("InvalidSchedule", format!("{text:?}: {e}"));
    standard.build().parse(text).map_err(invalid)
}

/// The schedule's times after `t`.
pub fn times_after(cron: &Cron, t: Timestamp) -> impl Iterator<Item = Timestamp> + use<> {
    cron.iter_after(t.to_zoned(TimeZone::UTC))
        .map(|z| z.timestamp())
}

/// The run due at `now` (none while suspended): the latest schedule time after `last` (the last run, else the
/// CronJob's creation) and at most `startingDeadlineSeconds` old; past 100 such times, an invalid spec
/// (`TooManyMissedStarts`).
pub fn due(cj: &CronJob, last: Option<Timestamp>, now: Timestamp) -> Result<Option<Timestamp>> {
    if cj.spec.suspend {
        return Ok(None);
    }
    let created = cj.metadata.creation_timestamp.as_ref().map(|t| t.0);
    let oldest = |s| now.checked_sub(SignedDuration::from_secs(s)).ok();
    let deadline = cj.spec.starting_deadline_seconds.and_then(oldest);
    let start = last.or(created).max(deadline).unwrap_or(now);
    let times = times_after(&schedule(cj)?, start);
    let missed: Vec<_> = times.take_while(|t| *t <= now).take(101).collect();
    if missed.len() > 100 {
        let message = "more than 100 missed start times: set or decrease spec.startingDeadlineSeconds or check clock skew";
        return Err(Error::invalid_spec("TooManyMissedStarts", message));
    }
    Ok(missed.last().copied())
}

/// The schedule time a Job runs for, from its [`SCHEDULED_AT`] annotation.
pub fn scheduled_at(job: &Job) -> Option<Timestamp> {
    job.metadata.annotation(SCHEDULED_AT)?.parse().ok()
}

/// Whether a Job runs: neither its `Complete` nor its `Failed` condition is `True`.
pub fn is_running(job: &Job) -> bool {
    !finished(job).is_ready()
}

/// The Job of the run at `at`: the template's spec, labels and annotations, named `<cronjob>-<unix seconds>`,
/// annotated with `at`.
pub fn job_for(cj: &CronJob, at: Timestamp) -> Job {
    let template = cj.spec.job_template.metadata.clone().unwrap_or_default();
    let mut annotations = template.annotations.unwrap_or_default();
    annotations.insert(SCHEDULED_AT.into(), at.to_string());
    let name = format!("{}-{}", cj.name_any(), at.as_second());
    let (labels, spec) = (template.labels, cj.spec.job_template.spec.clone());
    object!(Job { metadata: { name, labels, annotations }, spec })
}

/// The Jobs a CronJob has at `now`: those running and the one due, as `concurrencyPolicy` allows (with
/// `Forbid` none due while one runs, with `Replace` the one due instead of those running).
pub fn desired_jobs(cj: &CronJob, cx: &mut Context) -> Result<Vec<Job>> {
    let status = cj.status.clone().unwrap_or_default();
    let (mut last, mut running) = (status.last_schedule_time.map(|t| t.0), vec![]);
    for job in cx.cache::<Job>()?.owned_by(&cj.uid().unwrap_or_default()) {
        last = last.max(scheduled_at(&job));
        running.extend(scheduled_at(&job).filter(|_| is_running(&job)));
    }
    let runs = match (due(cj, last, cx.now())?, cj.spec.concurrency_policy) {
        (Some(_), Forbid) if !running.is_empty() => running,
        (Some(at), Replace) => vec![at],
        (due, _) => running.into_iter().chain(due).collect(),
    };
    Ok(runs.into_iter().map(|at| job_for(cj, at)).collect())
}

/// A Job no longer desired: a finished one is history (the newest by schedule time kept, as many as the
/// limits say), a running one is kept, or deleted when a `Replace` run replaced it.
pub fn retain_job(cj: &CronJob, job: &Job) -> Retention {
    let (spec, at) = (&cj.spec, scheduled_at(job).unwrap_or_default());
    let (class, limit) = match (is_running(job), builtin(job).is_ready()) {
        (true, _) if spec.concurrency_policy == Replace => return Retention::Delete,
        (true, _) => return Retention::Keep,
        (false, true) => ("Succeeded", spec.successful_jobs_history_limit),
        (false, false) => ("Failed", spec.failed_jobs_history_limit),
    };
    let (class, limit) = (class.into(), usize::try_from(limit).unwrap_or(0));
    Retention::History { class, limit, at }
}

/// An invalid spec (`Invalid<Kind>JobsHistoryLimit`) when a history limit is below 0.
fn history_limit(kind: &str, limit: i32) -> Result<()> {
    let reason = format!("Invalid{kind}JobsHistoryLimit");
    let below = |_| Error::invalid_spec(reason, format!("{limit} is below 0"));
    usize::try_from(limit).map(drop).map_err(below)
}

/// Checks the history limits and the schedule, and queues the next pass at the next schedule time (none while
/// suspended).
pub fn requeue_at_next_run(cj: &mut CronJob, cx: &mut Context) -> Result<Outcome> {
    history_limit("Successful", cj.spec.successful_jobs_history_limit)?;
    history_limit("Failed", cj.spec.failed_jobs_history_limit)?;
    let next = times_after(&schedule(cj)?, cx.now()).next();
    let wait = next.map(|t| cx.now().duration_until(t).unsigned_abs());
    let wait = wait.filter(|_| !cj.spec.suspend);
    Ok(wait.map_or(Outcome::Continue, Outcome::RequeueAfter))
}

/// Reports the running Jobs (not being deleted) and the latest schedule time run (kept when no Job is left to
/// show it).
pub fn reflect_jobs(status: &mut CronJobStatus, jobs: &BTreeMap<String, ChildOutcome<Job>>) {
    status.active.clear();
    for (job, outcome) in jobs.values().filter_map(|o| Some((o.child()?, o))) {
        let last = status.last_schedule_time.take();
        status.last_schedule_time = last.max(scheduled_at(job).map(Time));
        if is_running(job) && !outcome.is_terminating() {
            status.active.push(job.object_ref(&()));
        }
    }
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

#[cfg(test)]
mod tests {
    use k8s_openapi::api::batch::v1::{JobCondition, JobStatus};

    use super::*;

    fn at(text: &str) -> Timestamp {
        text.parse().expect("a timestamp")
    }

    fn cron_job(schedule: &str) -> CronJob {
        let mut cj = sample("hello", schedule);
        cj.spec.starting_deadline_seconds = None;
        cj.metadata.creation_timestamp = Some(Time(at("2025-01-01T00:00:30Z")));
        cj
    }

    #[test]
    fn five_fields_and_names_are_a_schedule_six_fields_are_not() {
        assert!(schedule(&cron_job("*/5 * * * *")).is_ok());
        assert!(schedule(&cron_job("@hourly")).is_ok());
        for bad in ["0 * * * * *", "not a schedule", "61 * * * *", ""] {
            let err = schedule(&cron_job(bad)).err().map(|e| e.to_string());
            assert!(
                err.is_some_and(|e| e.contains("InvalidSchedule")),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn nothing_is_due_before_the_first_schedule_time() -> Result<()> {
        let cj = cron_job("* * * * *");
        assert_eq!(due(&cj, None, at("2025-01-01T00:00:59Z"))?, None);
        assert_eq!(
            due(&cj, None, at("2025-01-01T00:01:00Z"))?,
            Some(at("2025-01-01T00:01:00Z"))
        );
        Ok(())
    }

    #[test]
    fn the_latest_missed_time_is_due_once() -> Result<()> {
        let cj = cron_job("*/10 * * * *");
        let now = at("2025-01-01T00:35:00Z");
        assert_eq!(due(&cj, None, now)?, Some(at("2025-01-01T00:30:00Z")));
        assert_eq!(due(&cj, Some(at("2025-01-01T00:30:00Z")), now)?, None);
        Ok(())
    }

    #[test]
    fn a_run_older_than_the_starting_deadline_is_skipped() -> Result<()> {
        let mut cj = cron_job("*/10 * * * *");
        cj.spec.starting_deadline_seconds = Some(60);
        assert_eq!(due(&cj, None, at("2025-01-01T00:15:00Z"))?, None);
        assert_eq!(
            due(&cj, None, at("2025-01-01T00:10:30Z"))?,
            Some(at("2025-01-01T00:10:00Z"))
        );
        Ok(())
    }

    #[test]
    fn more_than_100_missed_times_is_an_invalid_spec_unless_a_deadline_bounds_them() -> Result<()> {
        let mut cj = cron_job("* * * * *");
        let ok = due(&cj, None, at("2025-01-01T01:40:59Z"))?;
        assert_eq!(
            ok,
            Some(at("2025-01-01T01:40:00Z")),
            "100 missed times are caught up"
        );
        let err = due(&cj, None, at("2025-01-01T01:41:00Z"))
            .err()
            .map(|e| e.to_string());
        assert!(err.is_some_and(|e| e.contains("TooManyMissedStarts")));
        cj.spec.starting_deadline_seconds = Some(300);
        assert_eq!(
            due(&cj, None, at("2025-01-01T01:41:00Z"))?,
            Some(at("2025-01-01T01:41:00Z"))
        );
        Ok(())
    }

    #[test]
    fn nothing_is_due_while_suspended() -> Result<()> {
        let mut cj = cron_job("* * * * *");
        cj.spec.suspend = true;
        assert_eq!(due(&cj, None, at("2025-01-01T05:00:00Z"))?, None);
        Ok(())
    }

    #[test]
    fn a_run_is_named_by_its_unix_time_and_annotated_with_it() {
        let mut cj = cron_job("* * * * *");
        let labels = BTreeMap::from([("app".to_string(), "hello".to_string())]);
        cj.spec.job_template.metadata = Some(object!(ObjectMeta { labels }));
        let job = job_for(&cj, at("2025-01-01T00:01:00Z"));
        assert_eq!(job.name_any(), "hello-1735689660");
        assert_eq!(
            job.metadata.annotation(SCHEDULED_AT).map(String::as_str),
            Some("2025-01-01T00:01:00Z")
        );
        assert_eq!(job.metadata.label("app").map(String::as_str), Some("hello"));
        assert_eq!(scheduled_at(&job), Some(at("2025-01-01T00:01:00Z")));
        assert_eq!(job.spec, cj.spec.job_template.spec);
    }

    fn ended(cj: &CronJob, scheduled: &str, type_: Option<&str>) -> Job {
        let mut job = job_for(cj, at(scheduled));
        let conditions = type_.map(|type_| {
            let condition = object!(JobCondition {
                type_,
                status: "True"
            });
            vec![condition]
        });
        job.status = Some(object!(JobStatus { conditions }));
        job
    }

    #[test]
    fn finished_jobs_are_history_by_schedule_time_and_running_ones_kept_unless_replaced() {
        let mut cj = cron_job("* * * * *");
        let history = |class: &str, limit, scheduled| Retention::History {
            class: class.to_string().into(),
            limit,
            at: at(scheduled),
        };
        let t = "2025-01-01T00:01:00Z";
        let succeeded = ended(&cj, t, Some("Complete"));
        assert_eq!(retain_job(&cj, &succeeded), history("Succeeded", 3, t));
        let failed = ended(&cj, t, Some("Failed"));
        assert_eq!(retain_job(&cj, &failed), history("Failed", 1, t));
        let running = ended(&cj, t, None);
        assert_eq!(retain_job(&cj, &running), Retention::Keep);
        cj.spec.concurrency_policy = ConcurrencyPolicy::Replace;
        assert_eq!(retain_job(&cj, &running), Retention::Delete);
        cj.spec.failed_jobs_history_limit = -1;
        assert_eq!(retain_job(&cj, &failed), history("Failed", 0, t));
    }

    #[test]
    fn a_negative_history_limit_is_an_invalid_spec_naming_the_field() {
        assert!(history_limit("Failed", 0).is_ok());
        let err = history_limit("Failed", -1).err().map(|e| e.to_string());
        assert!(err.is_some_and(|e| e.contains("InvalidFailedJobsHistoryLimit")));
    }
}
