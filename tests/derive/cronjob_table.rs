//! Table tests of the `cronjob` example: one pass of the derived reconciler over given state at the harness's
//! default time, 2025-01-01T00:00:00Z (unix 1735689600), the Jobs in place built from the operator's own
//! `job_for` as the runtime creates them (`Fixtures`).

use std::time::Duration;

use examples::cronjob::{CronJob, CronJobSpec, CronJobStatus, SCHEDULED_AT, job_for, runs, sample};
use k8s_openapi::api::batch::v1::{Job, JobCondition, JobStatus};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use k8s_openapi::jiff::Timestamp;
use kube::runtime::reflector::ObjectRef;
use kube::{CustomResourceExt, ResourceExt};
use kubewright::schedule::ConcurrencyPolicy;
use kubewright::testing::table::{EventExpectation, Fixtures, ReconcilerTestCase};
use kubewright::{Context, Outcome, WriteStrategy};
use serde_json::json;

/// The harness's default time: the pass runs at it.
const T0: &str = "2025-01-01T00:00:00Z";

fn at(text: &str) -> Timestamp {
    text.parse().unwrap_or_default()
}

fn case(name: &str) -> ReconcilerTestCase<CronJob> {
    ReconcilerTestCase::new(name, ObjectRef::new("hello").within("default")).crd(CronJob::crd())
}

/// The CronJob `hello` on `schedule`, created at `created`, changed by `edit`.
fn cron_job(schedule: &str, created: &str, edit: impl FnOnce(&mut CronJob)) -> Fixtures<CronJob> {
    let mut cj = sample("hello", schedule);
    cj.metadata.creation_timestamp = Some(Time(at(created)));
    edit(&mut cj);
    Fixtures::new(cj)
}

/// The Job of the run at `scheduled` as the runtime created it, finished as `ended` says (`Complete`,
/// `Failed`) or running, with the status the Job controller writes for that (the API server refuses a
/// finished Job without a start time or without the condition that precedes its terminal one).
async fn job(fx: &Fixtures<CronJob>, scheduled: &str, ended: Option<&str>) -> anyhow::Result<Job> {
    let t = at(scheduled);
    let desired = move |cj: &CronJob, _: &mut Context| {
        // Named and annotated as the runs of a valid schedule would be (the schedule does not name them).
        let valid = CronJob::new(
            &cj.name_any(),
            CronJobSpec {
                schedule: "@yearly".into(),
                ..cj.spec.clone()
            },
        );
        Ok(Some(job_for(cj, &runs(&valid)?, t)))
    };
    let mut job: Job = fx.child_written(desired, WriteStrategy::CreateOnly).await?;
    let condition = |type_: &str| JobCondition {
        type_: type_.into(),
        status: "True".into(),
        ..Default::default()
    };
    let started = Some(Time(t));
    job.status = Some(match ended {
        // Running: no start time, which the embedded Job controller would read as due to finish.
        None => JobStatus {
            active: Some(1),
            ..Default::default()
        },
        Some("Complete") => JobStatus {
            start_time: started,
            completion_time: Some(Time(t + std::time::Duration::from_secs(10))),
            succeeded: Some(1),
            conditions: Some(vec![condition("SuccessCriteriaMet"), condition("Complete")]),
            ..Default::default()
        },
        Some(other) => JobStatus {
            start_time: started,
            failed: Some(1),
            conditions: Some(vec![condition("FailureTarget"), condition(other)]),
            ..Default::default()
        },
    });
    Ok(job)
}

/// The parent with a last schedule time reported.
fn last_scheduled(fx: &Fixtures<CronJob>, last: &str) -> CronJob {
    fx.parent_with_status(CronJobStatus {
        last_schedule_time: Some(Time(at(last))),
        ..Default::default()
    })
}

#[tokio::test]
async fn a_due_run_creates_its_job_named_by_its_unix_time_and_annotated() -> anyhow::Result<()> {
    let fx = cron_job("* * * * *", "2024-12-31T23:59:30Z", |_| {});
    case("due")
        .given(fx.parent())
        .expect_create(json!({
            "metadata": {"name": "hello-1735689600", "annotations": {SCHEDULED_AT: T0}},
            "spec": {"template": {"spec": {"containers": [{"name": "hello", "image": "busybox"}]}}},
        }))
        .expect_event(EventExpectation::normal("Created").note("Job default/hello-1735689600"))
        .expect_status_update(json!({
            "lastScheduleTime": T0,
            "active": [{"kind": "Job", "apiVersion": "batch/v1", "name": "hello-1735689600"}],
        }))
        .expect_outcome(Outcome::RequeueAfter(Duration::from_secs(60)))
        .run(CronJob::reconciler())
        .await?;
    Ok(())
}

#[tokio::test]
async fn nothing_runs_before_the_schedule_and_the_pass_requeues_at_the_next_time()
-> anyhow::Result<()> {
    // Created at T0 on a five-minute schedule: the first run is at 00:05, 300 s away.
    let fx = cron_job("*/5 * * * *", T0, |_| {});
    case("before the schedule")
        .given(fx.parent())
        .expect_status_update(json!({"active": []}))
        .expect_outcome(Outcome::RequeueAfter(Duration::from_secs(300)))
        .run(CronJob::reconciler())
        .await?;
    Ok(())
}

#[tokio::test]
async fn a_suspended_cron_job_runs_nothing_and_waits_for_its_spec() -> anyhow::Result<()> {
    let fx = cron_job("* * * * *", "2024-12-31T23:59:30Z", |cj| {
        cj.spec.suspend = true
    });
    case("suspended")
        .given(fx.parent())
        .expect_status_update(json!({"active": []}))
        .expect_outcome(Outcome::Continue)
        .run(CronJob::reconciler())
        .await?;
    Ok(())
}

#[tokio::test]
async fn forbid_skips_a_due_run_while_a_job_runs() -> anyhow::Result<()> {
    let fx = cron_job("* * * * *", "2024-12-31T23:58:30Z", |cj| {
        cj.spec.concurrency_policy = ConcurrencyPolicy::Forbid;
    });
    case("forbid, one running")
        .given(last_scheduled(&fx, "2024-12-31T23:59:00Z"))
        .given(job(&fx, "2024-12-31T23:59:00Z", None).await?)
        .expect_status_update(json!({
            "lastScheduleTime": "2024-12-31T23:59:00Z",
            "active": [{"name": "hello-1735689540"}],
        }))
        .expect_outcome(Outcome::RequeueAfter(Duration::from_secs(60)))
        .run(CronJob::reconciler())
        .await?;
    Ok(())
}

#[tokio::test]
async fn replace_deletes_the_running_job_and_creates_the_due_one() -> anyhow::Result<()> {
    let fx = cron_job("* * * * *", "2024-12-31T23:58:30Z", |cj| {
        cj.spec.concurrency_policy = ConcurrencyPolicy::Replace;
    });
    case("replace, one running")
        .given(last_scheduled(&fx, "2024-12-31T23:59:00Z"))
        .given(job(&fx, "2024-12-31T23:59:00Z", None).await?)
        .expect_create(json!({"metadata": {"name": "hello-1735689600"}}))
        .expect_delete::<Job>(Some("default"), "hello-1735689540")
        .expect_event(EventExpectation::normal("Created").note("Job default/hello-1735689600"))
        .expect_event(EventExpectation::normal("Deleted").note("Job default/hello-1735689540"))
        .expect_status_update(json!({
            "lastScheduleTime": T0,
            "active": [{"name": "hello-1735689600"}],
        }))
        .expect_outcome(Outcome::RequeueAfter(Duration::from_secs(60)))
        .run(CronJob::reconciler())
        .await?;
    Ok(())
}

#[tokio::test]
async fn allow_runs_side_by_side_and_the_status_lists_the_running_jobs() -> anyhow::Result<()> {
    let fx = cron_job("* * * * *", "2024-12-31T23:57:30Z", |_| {});
    case("allow, one running, one succeeded")
        .given(fx.parent())
        .given(job(&fx, "2024-12-31T23:58:00Z", Some("Complete")).await?)
        .given(job(&fx, "2024-12-31T23:59:00Z", None).await?)
        .expect_create(json!({"metadata": {"name": "hello-1735689600"}}))
        .expect_event(EventExpectation::normal("Created").note("Job default/hello-1735689600"))
        .expect_status_update(json!({
            "lastScheduleTime": T0,
            "active": [{"name": "hello-1735689540"}, {"name": "hello-1735689600"}],
        }))
        .expect_outcome(Outcome::RequeueAfter(Duration::from_secs(60)))
        .run(CronJob::reconciler())
        .await?;
    Ok(())
}

/// One pass over the given finished Jobs (minute of 23:xx, `Complete` or `Failed`) when nothing is due: the
/// Job expected to go is deleted with its event, the others are kept.
async fn history(jobs: &[(&str, &str)], deleted: &str, note: &str) -> anyhow::Result<()> {
    // The last run was at T0: nothing is due, and the finished Jobs are history.
    let fx = cron_job("* * * * *", "2024-12-31T23:50:30Z", |_| {});
    let mut case = case("history").given(last_scheduled(&fx, T0));
    for (minute, ended) in jobs {
        let scheduled = format!("2024-12-31T23:{minute}:00Z");
        case = case.given(job(&fx, &scheduled, Some(ended)).await?);
    }
    case.expect_delete::<Job>(Some("default"), deleted)
        .expect_event(EventExpectation::normal("Deleted").note(note))
        .expect_status_update(json!({"lastScheduleTime": T0, "active": []}))
        .expect_outcome(Outcome::RequeueAfter(Duration::from_secs(60)))
        .run(CronJob::reconciler())
        .await?;
    Ok(())
}

#[tokio::test]
async fn the_history_keeps_three_succeeded_and_one_failed_job() -> anyhow::Result<()> {
    let succeeded = [("56", "Complete"), ("57", "Complete"), ("58", "Complete")];
    // A fourth succeeded Job: the oldest succeeded one (23:55) goes, the failed one stays.
    let mut jobs = vec![("54", "Failed"), ("55", "Complete")];
    jobs.extend(succeeded);
    let note = "Deleted Job default/hello-1735689300: history Succeeded keeps the newest 3";
    history(&jobs, "hello-1735689300", note).await?;
    // A second failed Job: the older failed one (23:54) goes, the three succeeded ones stay.
    let mut jobs = vec![("54", "Failed"), ("55", "Failed")];
    jobs.extend(succeeded);
    let note = "Deleted Job default/hello-1735689240: history Failed keeps the newest 1";
    history(&jobs, "hello-1735689240", note).await
}

#[tokio::test]
async fn more_than_100_missed_starts_is_an_invalid_spec_and_no_job_is_touched() -> anyhow::Result<()>
{
    // Created two hours before, never run, no starting deadline: 120 missed times.
    let fx = cron_job("* * * * *", "2024-12-31T22:00:00Z", |cj| {
        cj.spec.starting_deadline_seconds = None;
    });
    case("too many missed starts")
        .given(fx.parent())
        .given(job(&fx, "2024-12-31T21:00:00Z", Some("Complete")).await?)
        .expect_event(EventExpectation::warning("TooManyMissedStarts").note("more than 100"))
        .expect_status_update(json!({
            "conditions": [{"type": "Ready", "status": "False", "reason": "TooManyMissedStarts"}],
        }))
        .expect_err("the invalid spec", |e| {
            e.to_string().contains("TooManyMissedStarts")
        })
        .run(CronJob::reconciler())
        .await?;
    Ok(())
}

#[tokio::test]
async fn an_unparsable_schedule_is_an_invalid_spec_and_no_job_is_touched() -> anyhow::Result<()> {
    let fx = cron_job("every minute", "2024-12-31T23:58:30Z", |_| {});
    case("unparsable schedule")
        .given(fx.parent())
        .given(job(&fx, "2024-12-31T23:59:00Z", None).await?)
        .expect_event(EventExpectation::warning("InvalidSchedule").note("every minute"))
        .expect_status_update(json!({
            "conditions": [{"type": "Ready", "status": "False", "reason": "InvalidSchedule"}],
        }))
        .expect_err("the invalid spec", |e| {
            e.to_string().contains("InvalidSchedule")
        })
        .run(CronJob::reconciler())
        .await?;
    Ok(())
}

#[test]
fn the_schema_refuses_a_negative_history_limit() -> anyhow::Result<()> {
    let crd = serde_json::to_value(CronJob::crd())?;
    let spec = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"];
    for field in ["successfulJobsHistoryLimit", "failedJobsHistoryLimit"] {
        assert_eq!(spec["properties"][field]["minimum"], json!(0.0), "{field}");
    }
    assert_eq!(
        spec["properties"]["successfulJobsHistoryLimit"]["default"],
        json!(3)
    );
    assert_eq!(
        spec["properties"]["failedJobsHistoryLimit"]["default"],
        json!(1)
    );
    Ok(())
}
