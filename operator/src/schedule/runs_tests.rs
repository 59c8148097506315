use k8s_openapi::api::batch::v1::{Job, JobCondition, JobStatus};
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::*;

const AT: &str = "example.dev/scheduled-at";

fn at(text: &str) -> Timestamp {
    text.parse().expect("a timestamp")
}

/// The runs of a parent created at 00:00:30 on `schedule`.
fn runs(schedule: &str) -> Runs {
    let mut parent = ConfigMap::default();
    parent.metadata.name = Some("hello".into());
    parent.metadata.creation_timestamp = Some(Time(at("2025-01-01T00:00:30Z")));
    Runs::new(&parent, Schedule::parse(schedule).expect("a schedule"), AT)
}

/// A Job of `runs` for `scheduled`, finished with the condition `type_` when given.
fn job(runs: &Runs, scheduled: &str, type_: Option<&str>) -> Job {
    let mut job = runs.stamp(Job::default(), at(scheduled));
    let conditions = type_.map(|type_| {
        let status = "True".to_string();
        vec![JobCondition {
            type_: type_.into(),
            status,
            ..Default::default()
        }]
    });
    job.status = Some(JobStatus {
        conditions,
        ..Default::default()
    });
    job
}

#[test]
fn nothing_is_due_before_the_first_schedule_time_after_the_parents_creation() -> Result<()> {
    let runs = runs("* * * * *");
    assert_eq!(runs.due(None, at("2025-01-01T00:00:59Z"))?, None);
    assert_eq!(
        runs.due(None, at("2025-01-01T00:01:00Z"))?,
        Some(at("2025-01-01T00:01:00Z"))
    );
    Ok(())
}

#[test]
fn the_latest_missed_time_is_due_once() -> Result<()> {
    let runs = runs("*/10 * * * *");
    let now = at("2025-01-01T00:35:00Z");
    assert_eq!(runs.due(None, now)?, Some(at("2025-01-01T00:30:00Z")));
    assert_eq!(runs.due(Some(at("2025-01-01T00:30:00Z")), now)?, None);
    Ok(())
}

#[test]
fn a_run_older_than_the_starting_deadline_is_skipped() -> Result<()> {
    let runs = runs("*/10 * * * *").starting_deadline_seconds(Some(60));
    assert_eq!(runs.due(None, at("2025-01-01T00:15:00Z"))?, None);
    assert_eq!(
        runs.due(None, at("2025-01-01T00:10:30Z"))?,
        Some(at("2025-01-01T00:10:00Z"))
    );
    Ok(())
}

#[test]
fn more_than_100_missed_times_is_an_invalid_spec_unless_a_deadline_bounds_them() -> Result<()> {
    let now = at("2025-01-01T01:41:00Z");
    let err = runs("* * * * *").due(None, now).expect_err("101 missed");
    assert_eq!(err.reason(), Some("TooManyMissedStarts"));
    let bounded = runs("* * * * *").starting_deadline_seconds(Some(300));
    assert_eq!(bounded.due(None, now)?, Some(now));
    Ok(())
}

#[test]
fn nothing_is_due_while_suspended_and_no_pass_is_queued() -> Result<()> {
    let runs = runs("* * * * *").suspend(true);
    assert_eq!(runs.due(None, at("2025-01-01T00:05:00Z"))?, None);
    assert_eq!(runs.requeue(at("2025-01-01T00:05:00Z")), Outcome::Continue);
    Ok(())
}

#[test]
fn the_next_pass_is_queued_at_the_next_schedule_time() {
    let runs = runs("*/10 * * * *");
    let wait = std::time::Duration::from_secs(150);
    assert_eq!(
        runs.requeue(at("2025-01-01T00:17:30Z")),
        Outcome::RequeueAfter(wait)
    );
}

#[test]
fn a_run_is_named_by_its_unix_time_and_annotated_with_it() {
    let runs = runs("* * * * *");
    let job = job(&runs, "2025-01-01T00:01:00Z", None);
    assert_eq!(job.name_any(), "hello-1735689660");
    assert_eq!(
        job.annotations().get(AT).map(String::as_str),
        Some("2025-01-01T00:01:00Z")
    );
    assert_eq!(runs.scheduled_at(&job), Some(at("2025-01-01T00:01:00Z")));
}

#[test]
fn the_policy_decides_between_running_runs_and_the_one_due() -> Result<()> {
    let now = at("2025-01-01T00:02:10Z");
    let running = job(&runs("* * * * *"), "2025-01-01T00:01:00Z", None);
    let (first, second) = (at("2025-01-01T00:01:00Z"), at("2025-01-01T00:02:00Z"));
    let desired = |policy| {
        runs("* * * * *")
            .policy(policy)
            .desired([&running], None, now)
    };
    assert_eq!(desired(ConcurrencyPolicy::Allow)?, [first, second]);
    assert_eq!(desired(ConcurrencyPolicy::Forbid)?, [first]);
    assert_eq!(desired(ConcurrencyPolicy::Replace)?, [second]);
    let done = job(&runs("* * * * *"), "2025-01-01T00:01:00Z", Some("Complete"));
    let forbid = runs("* * * * *").policy(ConcurrencyPolicy::Forbid);
    assert_eq!(
        forbid.desired([&done], None, now)?,
        [second],
        "a finished run does not hold the next back"
    );
    Ok(())
}

#[test]
fn the_latest_run_counts_whether_the_status_or_a_run_shows_it() -> Result<()> {
    let runs = runs("* * * * *");
    let now = at("2025-01-01T00:02:10Z");
    let last = Some(at("2025-01-01T00:02:00Z"));
    assert_eq!(runs.desired(Vec::<Job>::new().iter(), last, now)?, []);
    let done = job(&runs, "2025-01-01T00:02:00Z", Some("Complete"));
    assert_eq!(runs.desired([&done], None, now)?, []);
    Ok(())
}

#[test]
fn finished_runs_are_history_by_schedule_time_and_running_ones_kept_unless_replaced() {
    let runs = runs("* * * * *").history(5, 2);
    let t = "2025-01-01T00:01:00Z";
    let history = |class, limit| Retention::History {
        class: Cow::Borrowed(class),
        limit,
        at: at(t),
    };
    assert_eq!(
        runs.retain(&job(&runs, t, Some("Complete"))),
        history("Succeeded", 5)
    );
    assert_eq!(
        runs.retain(&job(&runs, t, Some("Failed"))),
        history("Failed", 2)
    );
    let running = job(&runs, t, None);
    assert_eq!(runs.retain(&running), Retention::Keep);
    let runs = runs.policy(ConcurrencyPolicy::Replace);
    assert_eq!(runs.retain(&running), Retention::Delete);
}

#[test]
fn running_runs_not_being_deleted_are_active_and_the_latest_time_is_seen() {
    let runs = runs("* * * * *");
    let old = job(&runs, "2025-01-01T00:01:00Z", Some("Complete"));
    let running = job(&runs, "2025-01-01T00:02:00Z", None);
    let replaced = job(&runs, "2025-01-01T00:03:00Z", None);
    let outcomes = BTreeMap::from([
        ("a".to_string(), ChildOutcome::Unchanged(old)),
        ("b".to_string(), ChildOutcome::Created(running.clone())),
        ("c".to_string(), ChildOutcome::Terminating(replaced)),
    ]);
    let seen = observe(AT, &outcomes);
    assert_eq!(seen.active, [running.object_ref(&())]);
    assert_eq!(seen.last, Some(at("2025-01-01T00:03:00Z")));
}
