//! The Job controller as the server plays it: a `batch/v1` Job's pods start at once, run for a set time, and
//! the Job then completes, or fails when told to, with the status kube-controller-manager writes on a real
//! cluster (Kubernetes 1.31 and later).
//!
//! Each step is a write of its own, as `kube-controller-manager`, made after the write or the clock tick that
//! caused it:
//!
//! - **Started**, right after the Job is created (or resumed): `startTime`, `active` and `ready` (every pod
//!   starts at once and is ready: `parallelism`, at most the `completions` still to run), `terminating: 0`,
//!   `uncountedTerminatedPods: {}`.
//! - **Complete**, once the clock reaches `startTime` plus the run time: `succeeded` (`completions`, or
//!   `parallelism` for a work-queue Job), `completedIndexes` for an `Indexed` one, `completionTime`, and the
//!   conditions `SuccessCriteriaMet` then `Complete` (reason `CompletionsReached`); `active` gone, `ready: 0`.
//! - **Failed**, at the same time for a Job told to fail: `failed` (`backoffLimit + 1`, one pod per try, the
//!   tries not played one by one), conditions `FailureTarget` then `Failed` (reason `BackoffLimitExceeded`),
//!   no `completionTime`. A Job whose `activeDeadlineSeconds` is shorter than its run time fails at the
//!   deadline instead (reason `DeadlineExceeded`, its active pods counted as failed).
//! - **Suspended** (`spec.suspend: true`): never started, or its pods stopped; the condition `Suspended`
//!   (`True`, reason `JobSuspended`). Resumed, the condition turns `False` (reason `JobResumed`) and the Job
//!   starts again with a new `startTime`, as on a real cluster.
//!
//! The times written are the clock's at the step, except that a Job finishes at its due time (`startTime`
//! plus the run time), even when the clock was moved well past it: a Job's duration is its run time. Times
//! are whole seconds, as Kubernetes writes them, so a run time is rounded up to whole seconds.
//!
//! The run time is [`ApiServerBuilder::job_run_time`](crate::ApiServerBuilder::job_run_time) (10 seconds by
//! default), or the Job's annotation [`RUN_TIME_ANNOTATION`]; whether it fails is
//! [`ApiServerBuilder::jobs_fail`](crate::ApiServerBuilder::jobs_fail) (no by default), or the Job's
//! annotation [`FAIL_ANNOTATION`]. No pods are stored: the counts are the Job's alone.

use std::collections::BTreeSet;
use std::time::Duration;

use k8s_openapi::jiff::{SignedDuration, Timestamp};
use serde_json::{Map, Value, json};

use crate::store::key::ObjKey;

/// The annotation that sets one Job's run time on the in-memory server, overriding
/// [`ApiServerBuilder::job_run_time`](crate::ApiServerBuilder::job_run_time): a duration such as `"30s"`,
/// `"1m30s"`, `"2h"` (or a number of seconds, `"30"`). An unreadable value is ignored (logged once per write
/// of the Job), and the server's run time applies.
///
/// ```
/// # use serde_json::json;
/// use kubewright_apiserver::RUN_TIME_ANNOTATION;
///
/// let job = json!({
///     "apiVersion": "batch/v1", "kind": "Job",
///     "metadata": {"name": "backup", "annotations": {RUN_TIME_ANNOTATION: "2m"}},
/// });
/// # assert_eq!(job["metadata"]["annotations"]["kubewright-apiserver.dev/run-time"], "2m");
/// ```
pub const RUN_TIME_ANNOTATION: &str = "kubewright-apiserver.dev/run-time";

/// The annotation that makes one Job fail (`"true"`) or succeed (`"false"`) on the in-memory server when its
/// run time is over, overriding [`ApiServerBuilder::jobs_fail`](crate::ApiServerBuilder::jobs_fail). Any
/// other value is ignored. A Job copies it from a CronJob's `jobTemplate.metadata.annotations` like any
/// annotation, so one template can make every Job of a schedule fail.
pub const FAIL_ANNOTATION: &str = "kubewright-apiserver.dev/fail";

/// The run time of a Job when neither the builder nor the Job sets one: long enough for `kubectl get jobs` to
/// show a Job `Running` before it is `Complete` (about what a small Job takes on a real cluster, from
/// scheduling to exit), short against a CronJob's shortest schedule period, one minute.
pub(crate) const DEFAULT_RUN_TIME: Duration = Duration::from_secs(10);

/// How the server plays Jobs: the defaults the annotations override.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    /// How long a Job's pods run.
    pub run_time: Duration,
    /// Whether Jobs fail rather than complete.
    pub fail: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            run_time: DEFAULT_RUN_TIME,
            fail: false,
        }
    }
}

/// The Jobs that are running, by the time they finish. An entry is a reminder, not a record: when it comes due
/// the Job is read again (it may have been deleted, suspended, re-timed or finished since) and put back if it
/// is not due after all.
#[derive(Debug, Default)]
pub(crate) struct Timers {
    due: BTreeSet<(Timestamp, ObjKey)>,
}

impl Timers {
    /// Remembers that the Job at `key` finishes at `at`.
    pub fn insert(&mut self, at: Timestamp, key: ObjKey) {
        self.due.insert((at, key));
    }

    /// The earliest time a Job finishes, if any is running.
    pub fn next(&self) -> Option<Timestamp> {
        self.due.first().map(|(at, _)| *at)
    }

    /// The Jobs due at `now`, forgotten.
    pub fn take_due(&mut self, now: Timestamp) -> Vec<ObjKey> {
        let mut keys = Vec::new();
        while self.due.first().is_some_and(|(at, _)| *at <= now) {
            if let Some((_, key)) = self.due.pop_first() {
                keys.push(key);
            }
        }
        keys
    }
}

/// The Job controller's state on the server: its settings and the running Jobs' due times.
#[derive(Debug, Default)]
pub(crate) struct Jobs {
    /// The defaults of every Job.
    pub settings: Settings,
    /// The running Jobs.
    pub timers: Timers,
}

/// The status the Job controller writes next for `job` (a `batch/v1` Job as JSON) at `now`, as the in-memory
/// server plays it with a run time of `run_time` and Jobs that complete (the Job's annotations
/// [`RUN_TIME_ANNOTATION`] and [`FAIL_ANNOTATION`] override both); `None` when it has nothing to write (finished, or running and not
/// due: see [`job_finishes_at`]). Public so that tests on a bare kube-apiserver, which runs no controllers,
/// can play the same one.
///
/// ```
/// # use std::time::Duration;
/// # use serde_json::json;
/// use kubewright_apiserver::{job_finishes_at, job_status};
///
/// let mut job = json!({"metadata": {"name": "once"}, "spec": {}});
/// let start = "2026-01-01T00:00:00Z".parse().unwrap();
/// job["status"] = job_status(&job, Duration::from_secs(10), start).unwrap();
/// assert_eq!(job["status"]["active"], 1);
/// let due = job_finishes_at(&job, Duration::from_secs(10)).unwrap();
/// assert_eq!(due.to_string(), "2026-01-01T00:00:10Z");
/// let done = job_status(&job, Duration::from_secs(10), due).unwrap();
/// assert_eq!(done["conditions"][1]["type"], "Complete");
/// ```
pub fn job_status(job: &Value, run_time: Duration, now: Timestamp) -> Option<Value> {
    let settings = Settings {
        run_time,
        fail: false,
    };
    next_status(job, &settings, now)
}

/// When a running Job (as JSON) finishes with `run_time` (or its [`RUN_TIME_ANNOTATION`]), counted from its
/// `status.startTime`; `None` when it is not running (not started, suspended, finished, `parallelism: 0`).
/// The time to call [`job_status`] again.
pub fn job_finishes_at(job: &Value, run_time: Duration) -> Option<Timestamp> {
    let settings = Settings {
        run_time,
        fail: false,
    };
    finishes_at(job, &settings)
}

/// How a running Job ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    Complete,
    BackoffLimitExceeded,
    DeadlineExceeded,
}

/// The status the Job controller writes next for `job` at `now`, or `None` when it has nothing to write (the
/// Job finished, or runs and is not due).
pub(crate) fn next_status(job: &Value, settings: &Settings, now: Timestamp) -> Option<Value> {
    let status = &job["status"];
    if condition_true(status, "Complete") || condition_true(status, "Failed") {
        return None;
    }
    let suspended = condition_true(status, "Suspended");
    if job["spec"]["suspend"].as_bool() == Some(true) {
        return (!suspended).then(|| suspend(job, now));
    }
    if suspended || status.get("startTime").is_none_or(Value::is_null) {
        return Some(start(job, now));
    }
    let (at, end) = due(job, settings)?;
    (at <= now).then(|| finish(job, at, end))
}

/// When a started Job finishes, or `None` when it is not running (not started, suspended, finished, or with
/// `parallelism: 0`).
pub(crate) fn finishes_at(job: &Value, settings: &Settings) -> Option<Timestamp> {
    let status = &job["status"];
    if job["spec"]["suspend"].as_bool() == Some(true)
        || ["Complete", "Failed", "Suspended"]
            .iter()
            .any(|c| condition_true(status, c))
    {
        return None;
    }
    due(job, settings).map(|(at, _)| at)
}

/// The time a running Job finishes and how.
fn due(job: &Value, settings: &Settings) -> Option<(Timestamp, End)> {
    let start: Timestamp = job["status"]["startTime"].as_str()?.parse().ok()?;
    // Whole seconds, as Kubernetes writes times.
    let start = Timestamp::from_second(start.as_second()).ok()?;
    if parallelism(job) == 0 {
        return None;
    }
    let annotations = &job["metadata"]["annotations"];
    let run = match annotations[RUN_TIME_ANNOTATION].as_str() {
        Some(text) => parse_run_time(text).unwrap_or_else(|| {
            tracing::warn!(
                job = job["metadata"]["name"].as_str().unwrap_or_default(),
                value = text,
                "an unreadable {RUN_TIME_ANNOTATION}; the server's run time applies"
            );
            whole_seconds(settings.run_time)
        }),
        None => whole_seconds(settings.run_time),
    };
    let fail = match annotations[FAIL_ANNOTATION].as_str() {
        Some("true") => true,
        Some("false") => false,
        _ => settings.fail,
    };
    let deadline = job["spec"]["activeDeadlineSeconds"].as_i64();
    let (after, end) = match deadline {
        Some(d) if d >= 0 && d < run => (d, End::DeadlineExceeded),
        _ if fail => (run, End::BackoffLimitExceeded),
        _ => (run, End::Complete),
    };
    let at = start.checked_add(SignedDuration::from_secs(after)).ok()?;
    Some((at, end))
}

/// A run time in the annotation's forms, in whole seconds (rounded up); `None` when unreadable or negative.
fn parse_run_time(text: &str) -> Option<i64> {
    let text = text.trim();
    if let Ok(secs) = text.parse::<i64>() {
        return (secs >= 0).then_some(secs);
    }
    let d: SignedDuration = text.parse().ok()?;
    let d = Duration::try_from(d).ok()?;
    Some(whole_seconds(d))
}

/// A duration in whole seconds, rounded up.
fn whole_seconds(d: Duration) -> i64 {
    let secs = d.as_secs() + u64::from(d.subsec_nanos() > 0);
    i64::try_from(secs).unwrap_or(i64::MAX / 2)
}

/// `spec.parallelism`, defaulted to 1.
fn parallelism(job: &Value) -> i64 {
    job["spec"]["parallelism"].as_i64().unwrap_or(1).max(0)
}

/// `spec.completions`: as given, or 1 when neither it nor `parallelism` is (a work-queue Job has none).
fn completions(job: &Value) -> Option<i64> {
    let spec = &job["spec"];
    match (spec["completions"].as_i64(), spec["parallelism"].as_i64()) {
        (None, None) => Some(1),
        (c, _) => c.map(|c| c.max(0)),
    }
}

/// The pods that run at once.
fn active(job: &Value) -> i64 {
    let p = parallelism(job);
    completions(job).map_or(p, |c| p.min(c))
}

/// The status as the Job starts (or resumes).
fn start(job: &Value, now: Timestamp) -> Value {
    let mut status = base(job);
    let n = active(job);
    status.insert("startTime".into(), json!(now.to_string()));
    set_count(&mut status, "active", n);
    status.insert("ready".into(), json!(n));
    if has_condition(&job["status"], "Suspended") {
        set_condition(
            &mut status,
            condition("Suspended", "False", "JobResumed", "Job resumed", now),
        );
    }
    Value::Object(status)
}

/// The status as the Job is suspended: no pods, the `Suspended` condition.
fn suspend(job: &Value, now: Timestamp) -> Value {
    let mut status = base(job);
    status.remove("active");
    status.insert("ready".into(), json!(0));
    set_condition(
        &mut status,
        condition("Suspended", "True", "JobSuspended", "Job suspended", now),
    );
    Value::Object(status)
}

/// The status as the Job ends at `at`.
fn finish(job: &Value, at: Timestamp, end: End) -> Value {
    let mut status = base(job);
    let was_active = status
        .remove("active")
        .and_then(|v| v.as_i64())
        .unwrap_or(0);
    status.insert("ready".into(), json!(0));
    let (reason, message) = match end {
        End::Complete => {
            let done = completions(job).unwrap_or_else(|| parallelism(job));
            set_count(&mut status, "succeeded", done);
            if job["spec"]["completionMode"].as_str() == Some("Indexed") && done > 0 {
                let indexes = if done == 1 {
                    "0".to_string()
                } else {
                    format!("0-{}", done - 1)
                };
                status.insert("completedIndexes".into(), json!(indexes));
            }
            status.insert("completionTime".into(), json!(at.to_string()));
            for type_ in ["SuccessCriteriaMet", "Complete"] {
                set_condition(
                    &mut status,
                    condition(
                        type_,
                        "True",
                        "CompletionsReached",
                        "Reached expected number of succeeded pods",
                        at,
                    ),
                );
            }
            return Value::Object(status);
        }
        End::BackoffLimitExceeded => {
            let limit = job["spec"]["backoffLimit"].as_i64().unwrap_or(6).max(0);
            set_count(&mut status, "failed", limit + 1);
            (
                "BackoffLimitExceeded",
                "Job has reached the specified backoff limit",
            )
        }
        End::DeadlineExceeded => {
            let failed = status.get("failed").and_then(Value::as_i64).unwrap_or(0);
            set_count(&mut status, "failed", failed + was_active);
            (
                "DeadlineExceeded",
                "Job was active longer than specified deadline",
            )
        }
    };
    for type_ in ["FailureTarget", "Failed"] {
        set_condition(&mut status, condition(type_, "True", reason, message, at));
    }
    Value::Object(status)
}

/// The Job's status as it is, with the fields the controller always writes.
fn base(job: &Value) -> Map<String, Value> {
    let mut status = job["status"].as_object().cloned().unwrap_or_default();
    status.insert("terminating".into(), json!(0));
    status
        .entry("uncountedTerminatedPods")
        .or_insert_with(|| json!({}));
    status
}

/// Sets a count, leaving it out when zero (Go's `omitempty` on an `int32`).
fn set_count(status: &mut Map<String, Value>, field: &str, n: i64) {
    if n > 0 {
        status.insert(field.into(), json!(n));
    } else {
        status.remove(field);
    }
}

fn condition(type_: &str, status: &str, reason: &str, message: &str, at: Timestamp) -> Value {
    let at = at.to_string();
    json!({
        "type": type_,
        "status": status,
        "lastProbeTime": at,
        "lastTransitionTime": at,
        "reason": reason,
        "message": message,
    })
}

/// Replaces the condition of the same type, or appends it.
fn set_condition(status: &mut Map<String, Value>, new: Value) {
    let conditions = status.entry("conditions").or_insert_with(|| json!([]));
    if !conditions.is_array() {
        *conditions = json!([]);
    }
    let Some(list) = conditions.as_array_mut() else {
        return;
    };
    match list.iter_mut().find(|c| c["type"] == new["type"]) {
        Some(old) => *old = new,
        None => list.push(new),
    }
}

fn has_condition(status: &Value, type_: &str) -> bool {
    status["conditions"]
        .as_array()
        .is_some_and(|cs| cs.iter().any(|c| c["type"] == type_))
}

fn condition_true(status: &Value, type_: &str) -> bool {
    status["conditions"].as_array().is_some_and(|cs| {
        cs.iter()
            .any(|c| c["type"] == type_ && c["status"] == "True")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    fn job(spec: Value) -> Value {
        json!({"metadata": {"name": "once", "namespace": "default"}, "spec": spec})
    }

    #[test]
    fn a_job_starts_then_completes_at_its_due_time() {
        let settings = Settings::default();
        let mut j = job(json!({"completions": 2, "parallelism": 3}));
        let started = next_status(&j, &settings, at("2026-01-01T00:00:00Z")).unwrap();
        assert_eq!(
            started,
            json!({"startTime": "2026-01-01T00:00:00Z", "active": 2, "ready": 2, "terminating": 0,
                   "uncountedTerminatedPods": {}})
        );
        j["status"] = started;
        assert_eq!(next_status(&j, &settings, at("2026-01-01T00:00:09Z")), None);
        assert_eq!(finishes_at(&j, &settings), Some(at("2026-01-01T00:00:10Z")));
        let done = next_status(&j, &settings, at("2026-01-01T01:00:00Z")).unwrap();
        assert_eq!(done["succeeded"], 2);
        assert!(done.get("active").is_none());
        assert_eq!(done["completionTime"], "2026-01-01T00:00:10Z");
        let types: Vec<_> = done["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["type"].as_str().unwrap())
            .collect();
        assert_eq!(types, ["SuccessCriteriaMet", "Complete"]);
        j["status"] = done;
        assert_eq!(next_status(&j, &settings, at("2026-01-02T00:00:00Z")), None);
        assert_eq!(finishes_at(&j, &settings), None);
    }

    #[test]
    fn run_times_read_as_durations_or_seconds_rounded_up() {
        assert_eq!(parse_run_time("30s"), Some(30));
        assert_eq!(parse_run_time("1m30s"), Some(90));
        assert_eq!(parse_run_time("2h"), Some(7200));
        assert_eq!(parse_run_time("500ms"), Some(1));
        assert_eq!(parse_run_time("45"), Some(45));
        assert_eq!(parse_run_time("-5"), None);
        assert_eq!(parse_run_time("soon"), None);
    }

    #[test]
    fn a_deadline_shorter_than_the_run_time_fails_the_job() {
        let settings = Settings::default();
        let mut j = job(json!({"activeDeadlineSeconds": 3}));
        j["status"] = next_status(&j, &settings, at("2026-01-01T00:00:00Z")).unwrap();
        let failed = next_status(&j, &settings, at("2026-01-01T00:00:03Z")).unwrap();
        assert_eq!(failed["failed"], 1);
        assert_eq!(failed["conditions"][1]["reason"], "DeadlineExceeded");
        assert!(failed.get("completionTime").is_none());
    }
}
