//! The Job's status rules (`ValidateJobStatusUpdate` of `pkg/apis/batch/validation`, with the options
//! `getStatusValidationOptions` of `pkg/registry/batch/job` sets while `JobManagedBy` is on, as in 1.35), run on
//! writes to a Job's `status` in place of the spec rules.
//!
//! Most rules run only when the fields they read changed in the write (so a Job whose status a user's spec
//! change made inconsistent can still be fixed by its controller): counts not negative, no `ready` above
//! `active`, terminal conditions that contradict each other, `completionTime` only with `Complete`, no
//! active or terminating pods and a `startTime` on a finished Job, the index lists' syntax, and a terminal
//! condition, the `failed` and `succeeded` counters and `completionTime` never taken back. A CronJob's status
//! has no rules (`cronJobStatusStrategy.ValidateUpdate` finds nothing).

use std::collections::HashSet;

use jiff::Timestamp;
use serde_json::{Value, json};

use super::field::{Errors, FieldError, go_json};

const NEGATIVE: &str = "must be greater than or equal to 0";

fn conditions(status: &Value) -> &[Value] {
    status["conditions"].as_array().map_or(&[], Vec::as_slice)
}

/// `IsConditionTrue`: some condition of the type is `True`.
fn is_true(status: &Value, type_: &str) -> bool {
    conditions(status)
        .iter()
        .any(|c| c["type"] == type_ && c["status"] == "True")
}

/// `IsConditionFalse`: some condition of the type is `False`.
fn is_false(status: &Value, type_: &str) -> bool {
    conditions(status)
        .iter()
        .any(|c| c["type"] == type_ && c["status"] == "False")
}

/// `IsJobFinished`: `Complete` or `Failed` is `True`.
fn finished(status: &Value) -> bool {
    is_true(status, "Complete") || is_true(status, "Failed")
}

/// A status count as Go reads it: absent is 0.
fn count(status: &Value, name: &str) -> i64 {
    status[name].as_i64().unwrap_or(0)
}

/// A field as a `*T` or `string` compares: absent and `null` are the same.
fn field<'a>(status: &'a Value, name: &str) -> Option<&'a Value> {
    status.get(name).filter(|v| !v.is_null())
}

fn time(v: Option<&Value>) -> Option<Timestamp> {
    v?.as_str()?.parse().ok()
}

/// `validateIndexesFormat`: comma-separated indexes and `x-y` intervals below `completions`, increasing.
pub(super) fn indexes_format(indexes: &str, completions: i64) -> Result<i64, String> {
    if indexes.is_empty() {
        return Ok(0);
    }
    let mut last: Option<i64> = None;
    let mut total = 0;
    for interval in indexes.split(',') {
        let (x, y) = index_interval(interval, completions)?;
        if let Some(last) = last
            && last >= x
        {
            return Err(format!(
                "non-increasing order, previous: {last}, current: {x}"
            ));
        }
        total += y - x + 1;
        last = Some(y);
    }
    Ok(total)
}

/// Go's `strconv.Atoi`: an optional sign and decimal digits.
fn atoi(s: &str) -> Option<i64> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// `parseIndexInterval`.
fn index_interval(interval: &str, completions: i64) -> Result<(i64, i64), String> {
    let limits: Vec<&str> = interval.split('-').collect();
    if limits.len() > 2 {
        return Err(format!(
            "the fragment {} violates the requirement that an index interval can have at most two parts separated by '-'",
            super::field::go_quote(interval)
        ));
    }
    let parse = |s: &str| {
        let n = atoi(s).ok_or_else(|| {
            format!(
                "cannot convert string to integer for index: {}",
                super::field::go_quote(s)
            )
        })?;
        if n >= completions {
            return Err(format!("too large index: {}", super::field::go_quote(s)));
        }
        Ok(n)
    };
    let x = parse(limits[0])?;
    let Some(second) = limits.get(1) else {
        return Ok((x, x));
    };
    let y = parse(second)?;
    if x >= y {
        return Err(format!("non-increasing order, previous: {x}, current: {y}"));
    }
    Ok((x, y))
}

/// `validateFailedIndexesNotOverlapCompleted`: walks both interval lists, skipping those that do not parse.
fn overlap(completed: &str, failed: &str, completions: i64) -> Option<String> {
    if completed.is_empty() || failed.is_empty() {
        return None;
    }
    let completed: Vec<&str> = completed.split(',').collect();
    let failed: Vec<&str> = failed.split(',').collect();
    let (mut c_pos, mut f_pos) = (0, 0);
    let mut c = index_interval(completed[0], completions);
    let mut f = index_interval(failed[0], completions);
    while c_pos < completed.len() && f_pos < failed.len() {
        match (&c, &f) {
            (Err(_), _) => {
                c_pos += 1;
                if c_pos < completed.len() {
                    c = index_interval(completed[c_pos], completions);
                }
            }
            (_, Err(_)) => {
                f_pos += 1;
                if f_pos < failed.len() {
                    f = index_interval(failed[f_pos], completions);
                }
            }
            (Ok((cx, cy)), Ok((fx, fy))) => {
                if cx <= fy && fx <= cy {
                    return Some(format!(
                        "failedIndexes and completedIndexes overlap at index: {}",
                        cx.max(fx)
                    ));
                }
                if cx <= fx {
                    c_pos += 1;
                    if c_pos < completed.len() {
                        c = index_interval(completed[c_pos], completions);
                    }
                } else {
                    f_pos += 1;
                    if f_pos < failed.len() {
                        f = index_interval(failed[f_pos], completions);
                    }
                }
            }
        }
    }
    None
}

/// `UncountedTerminatedPods` as Go's `json.Marshal` prints the internal struct (no JSON tags).
fn uncounted_printed(uncounted: &Value) -> String {
    let list = |name: &str| match &uncounted[name] {
        Value::Array(items) => Value::Array(items.clone()),
        _ => Value::Null,
    };
    format!(
        "{{\"Succeeded\":{},\"Failed\":{}}}",
        go_json(&list("succeeded")),
        go_json(&list("failed"))
    )
}

fn uncounted_len(status: &Value) -> usize {
    ["succeeded", "failed"]
        .iter()
        .map(|k| {
            status["uncountedTerminatedPods"][k]
                .as_array()
                .map_or(0, Vec::len)
        })
        .sum()
}

/// Which fields a write changed: the strategy turns most rules on only for them.
struct Changed {
    finished: bool,
    complete: bool,
    failed: bool,
    failure_target: bool,
    success_criteria_met: bool,
    completed_indexes: bool,
    failed_indexes: bool,
    active: bool,
    start_time: bool,
    completion_time: bool,
    uncounted: bool,
    ready: bool,
    terminating: bool,
}

impl Changed {
    fn of(status: &Value, old: &Value) -> Self {
        let cond = |t: &str| is_true(status, t) != is_true(old, t);
        let differs = |name: &str| field(status, name) != field(old, name);
        Changed {
            finished: finished(status) != finished(old),
            complete: cond("Complete"),
            failed: cond("Failed"),
            failure_target: cond("FailureTarget"),
            success_criteria_met: cond("SuccessCriteriaMet"),
            completed_indexes: status["completedIndexes"].as_str().unwrap_or("")
                != old["completedIndexes"].as_str().unwrap_or(""),
            failed_indexes: differs("failedIndexes"),
            active: count(status, "active") != count(old, "active"),
            start_time: differs("startTime"),
            completion_time: differs("completionTime"),
            uncounted: uncounted_differs(status, old),
            ready: differs("ready"),
            terminating: differs("terminating"),
        }
    }
}

/// `apiequality.Semantic.DeepEqual` of the `*UncountedTerminatedPods`: nil differs from an empty struct, an
/// empty list equals a missing one only when both are nil... the typed round trip leaves no empty lists, so
/// absent and empty are the same here.
fn uncounted_differs(status: &Value, old: &Value) -> bool {
    let norm = |v: &Value| -> Option<(Vec<Value>, Vec<Value>)> {
        let u = field(v, "uncountedTerminatedPods")?;
        let list = |k: &str| u[k].as_array().cloned().unwrap_or_default();
        Some((list("succeeded"), list("failed")))
    };
    norm(status) != norm(old)
}

/// The errors of a write to a Job's `status` (`obj` the Job written, its spec the stored one).
pub(super) fn job_status_update(obj: &Value, old: &Value) -> Errors {
    let (spec, status, old_status) = (&obj["spec"], &obj["status"], &old["status"]);
    let changed = Changed::of(status, old_status);
    let indexed = spec["completionMode"] == "Indexed";
    let completions = spec["completions"].as_i64();
    let mut errs = Errors::new();

    // `validateJobStatus`.
    for name in ["active", "succeeded", "failed"] {
        if count(status, name) < 0 {
            errs.push(FieldError::invalid_value(
                format!("status.{name}"),
                &json!(count(status, name)),
                NEGATIVE,
            ));
        }
    }
    for name in ["ready", "terminating"] {
        if let Some(n) = field(status, name).and_then(Value::as_i64)
            && n < 0
        {
            errs.push(FieldError::invalid_value(
                format!("status.{name}"),
                &json!(n),
                NEGATIVE,
            ));
        }
    }
    if let Some(uncounted) = field(status, "uncountedTerminatedPods") {
        let mut seen = HashSet::new();
        for list in ["succeeded", "failed"] {
            for (i, uid) in uncounted[list].as_array().into_iter().flatten().enumerate() {
                let uid = uid.as_str().unwrap_or("");
                let path = format!("status.uncountedTerminatedPods.{list}[{i}]");
                if uid.is_empty() {
                    errs.push(FieldError::invalid(path, uid, "must not be empty"));
                } else if !seen.insert(uid.to_string()) {
                    errs.push(FieldError::duplicate(path, uid));
                }
            }
        }
    }
    let complete = is_true(status, "Complete");
    let failed = is_true(status, "Failed");
    let failure_target = is_true(status, "FailureTarget");
    let success_criteria_met = is_true(status, "SuccessCriteriaMet");
    let conditions_invalid =
        |detail: &str| FieldError::invalid_omitted("status.conditions", detail);
    if (changed.complete || changed.failed) && complete && failed {
        errs.push(conditions_invalid(
            "cannot set Complete=True and Failed=true conditions",
        ));
    }
    if (changed.complete || changed.failure_target) && complete && failure_target {
        errs.push(conditions_invalid(
            "cannot set Complete=True and FailureTarget=true conditions",
        ));
    }
    let completion_time = field(status, "completionTime");
    let start_time = field(status, "startTime");
    let printed_time = |v: Option<&Value>| v.map_or_else(|| "null".to_string(), go_json);
    if (changed.complete || changed.completion_time) && completion_time.is_some() && !complete {
        errs.push(FieldError::invalid_printed(
            "status.completionTime",
            printed_time(completion_time),
            "cannot set completionTime when there is no Complete=True condition",
        ));
    }
    if (changed.complete || changed.completion_time) && completion_time.is_none() && complete {
        errs.push(FieldError::required(
            "status.completionTime",
            "completionTime is required for Complete jobs",
        ));
    }
    if (changed.start_time || changed.completion_time)
        && let (Some(start), Some(end)) = (time(start_time), time(completion_time))
        && end < start
    {
        errs.push(FieldError::invalid_printed(
            "status.completionTime",
            printed_time(completion_time),
            "must be equal to or after `startTime`",
        ));
    }
    if (changed.failed || changed.failed_indexes) && failed && !failure_target {
        errs.push(conditions_invalid(
            "cannot set Failed=True condition without the FailureTarget=true condition",
        ));
    }
    if (changed.complete || changed.success_criteria_met) && complete && !success_criteria_met {
        errs.push(conditions_invalid(
            "cannot set Complete=True condition without the SuccessCriteriaMet=true condition",
        ));
    }
    let is_finished = finished(status);
    if (changed.finished || changed.active) && count(status, "active") > 0 && is_finished {
        errs.push(FieldError::invalid_value(
            "status.active",
            &json!(count(status, "active")),
            "active>0 is invalid for finished job",
        ));
    }
    let suspended_with_zero_completions = spec["suspend"] == true && completions == Some(0);
    if (changed.finished || changed.start_time)
        && !suspended_with_zero_completions
        && start_time.is_none()
        && is_finished
    {
        errs.push(FieldError::required(
            "status.startTime",
            "startTime is required for finished job",
        ));
    }
    if (changed.finished || changed.uncounted) && is_finished && uncounted_len(status) > 0 {
        errs.push(FieldError::invalid_printed(
            "status.uncountedTerminatedPods",
            uncounted_printed(&status["uncountedTerminatedPods"]),
            "must be empty for finished job",
        ));
    }
    let completed_indexes = status["completedIndexes"].as_str().unwrap_or("");
    let failed_indexes = field(status, "failedIndexes").and_then(Value::as_str);
    if changed.completed_indexes
        && let Some(completions) = completions
        && let Err(e) = indexes_format(completed_indexes, completions)
    {
        errs.push(FieldError::invalid(
            "status.completedIndexes",
            completed_indexes,
            format!("error parsing completedIndexes: {e}"),
        ));
    }
    let per_index = field(spec, "backoffLimitPerIndex").is_some();
    if changed.failed_indexes
        && let (Some(completions), true, Some(failed_indexes)) =
            (completions, per_index, failed_indexes)
        && let Err(e) = indexes_format(failed_indexes, completions)
    {
        errs.push(FieldError::invalid(
            "status.failedIndexes",
            failed_indexes,
            format!("error parsing failedIndexes: {e}"),
        ));
    }
    if changed.completed_indexes && !completed_indexes.is_empty() && !indexed {
        errs.push(FieldError::invalid(
            "status.completedIndexes",
            completed_indexes,
            "cannot set non-empty completedIndexes when non-indexed completion mode",
        ));
    }
    if changed.failed_indexes
        && !per_index
        && let Some(failed_indexes) = failed_indexes
    {
        errs.push(FieldError::invalid(
            "status.failedIndexes",
            failed_indexes,
            "cannot set non-null failedIndexes when backoffLimitPerIndex is null",
        ));
    }
    if (changed.failed_indexes || changed.completed_indexes)
        && let (Some(completions), Some(failed_indexes)) = (completions, failed_indexes)
        && let Some(e) = overlap(completed_indexes, failed_indexes, completions)
    {
        errs.push(FieldError::invalid(
            "status.failedIndexes",
            failed_indexes,
            e,
        ));
    }
    let terminating = field(status, "terminating").and_then(Value::as_i64);
    if (changed.finished || changed.terminating)
        && terminating.is_some_and(|n| n > 0)
        && is_finished
    {
        errs.push(FieldError::invalid_value(
            "status.terminating",
            &json!(terminating),
            "terminating>0 is invalid for finished job",
        ));
    }
    let ready = field(status, "ready").and_then(Value::as_i64);
    if (changed.ready || changed.active)
        && let Some(ready) = ready
        && ready > count(status, "active")
    {
        errs.push(FieldError::invalid_value(
            "status.ready",
            &json!(ready),
            "cannot set more ready pods than active",
        ));
    }
    if success_criteria_met && failed {
        errs.push(conditions_invalid(
            "cannot set SuccessCriteriaMet=True and Failed=true conditions",
        ));
    }
    if success_criteria_met && failure_target {
        errs.push(conditions_invalid(
            "cannot set SuccessCriteriaMet=True and FailureTarget=true conditions",
        ));
    }
    if field(spec, "successPolicy").is_some() && !success_criteria_met && complete {
        errs.push(conditions_invalid(
            "cannot set Complete=True for Job with SuccessPolicy unless SuccessCriteriaMet=True",
        ));
    }

    // `ValidateJobStatusUpdate`'s transitions.
    for type_ in ["Failed", "Complete", "FailureTarget"] {
        if is_true(old_status, type_) && !is_true(status, type_) {
            errs.push(conditions_invalid(&format!(
                "cannot disable the terminal {type_}=True condition"
            )));
        }
    }
    if count(status, "failed") < count(old_status, "failed") {
        errs.push(FieldError::invalid_value(
            "status.failed",
            &json!(count(status, "failed")),
            "cannot decrease the failed counter",
        ));
    }
    let scalable = indexed && spec["completions"] == spec["parallelism"];
    if !scalable && count(status, "succeeded") < count(old_status, "succeeded") {
        errs.push(FieldError::invalid_value(
            "status.succeeded",
            &json!(count(status, "succeeded")),
            "cannot decrease the succeeded counter",
        ));
    }
    let old_completion_time = field(old_status, "completionTime");
    if completion_time.is_some()
        && old_completion_time.is_some()
        && time(completion_time) != time(old_completion_time)
    {
        errs.push(FieldError::invalid_printed(
            "status.completionTime",
            printed_time(completion_time),
            "field is immutable",
        ));
    }
    let resuming = is_true(old_status, "Suspended") && is_false(status, "Suspended");
    if changed.start_time
        && !resuming
        && field(old_status, "startTime").is_some()
        && spec["suspend"] != true
    {
        errs.push(FieldError::required(
            "status.startTime",
            "startTime cannot be removed for unsuspended job",
        ));
    }
    if is_true(old_status, "SuccessCriteriaMet") && !success_criteria_met {
        errs.push(conditions_invalid(
            "cannot disable the SuccessCriteriaMet=True condition",
        ));
    }
    if is_true(old_status, "Complete")
        && !is_true(old_status, "SuccessCriteriaMet")
        && success_criteria_met
    {
        errs.push(conditions_invalid(
            "cannot set SuccessCriteriaMet=True for Job already has Complete=true conditions",
        ));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::super::field::messages;
    use super::*;

    fn job(status: Value) -> Value {
        json!({"spec": {"completions": 3, "parallelism": 1}, "status": status})
    }

    #[test]
    fn the_statuses_the_job_controller_writes_pass() {
        let started = json!({"startTime": "2026-01-01T00:00:00Z", "active": 1, "ready": 1});
        let done = json!({"startTime": "2026-01-01T00:00:00Z", "completionTime": "2026-01-01T00:00:10Z",
            "succeeded": 3, "ready": 0, "conditions": [
                {"type": "SuccessCriteriaMet", "status": "True"}, {"type": "Complete", "status": "True"}]});
        assert!(job_status_update(&job(started.clone()), &job(json!({}))).is_empty());
        assert!(job_status_update(&job(done.clone()), &job(started)).is_empty());
        // An unrelated write to a finished Job passes.
        let mut later = done.clone();
        later["ready"] = json!(0);
        assert!(job_status_update(&job(later), &job(done)).is_empty());
    }

    #[test]
    fn a_complete_condition_alone_is_refused_with_every_cause() {
        let bare = json!({"conditions": [{"type": "Complete", "status": "True"}], "active": 1});
        assert_eq!(
            messages(&job_status_update(&job(bare), &job(json!({"active": 1})))),
            [
                "status.completionTime: Required value: completionTime is required for Complete jobs",
                "status.conditions: Invalid value: cannot set Complete=True condition without the SuccessCriteriaMet=true condition",
                "status.active: Invalid value: 1: active>0 is invalid for finished job",
                "status.startTime: Required value: startTime is required for finished job",
            ]
        );
    }

    #[test]
    fn transitions_are_one_way() {
        let old = json!({"failed": 2, "succeeded": 1, "startTime": "2026-01-01T00:00:00Z",
            "conditions": [{"type": "FailureTarget", "status": "True"}]});
        let new = json!({"failed": 1, "succeeded": 0});
        assert_eq!(
            messages(&job_status_update(&job(new), &job(old))),
            [
                "status.conditions: Invalid value: cannot disable the terminal FailureTarget=True condition",
                "status.failed: Invalid value: 1: cannot decrease the failed counter",
                "status.succeeded: Invalid value: 0: cannot decrease the succeeded counter",
                "status.startTime: Required value: startTime cannot be removed for unsuspended job",
            ]
        );
    }

    #[test]
    fn indexes_parse_as_go_parses_them() {
        assert_eq!(indexes_format("0,2-4,6", 7), Ok(5));
        assert_eq!(
            indexes_format("1,1", 3),
            Err("non-increasing order, previous: 1, current: 1".into())
        );
        assert_eq!(
            indexes_format("a", 3),
            Err("cannot convert string to integer for index: \"a\"".into())
        );
        assert_eq!(indexes_format("5", 3), Err("too large index: \"5\"".into()));
        assert_eq!(
            overlap("0-2", "2", 3),
            Some("failedIndexes and completedIndexes overlap at index: 2".into())
        );
        assert_eq!(overlap("0", "1-2", 3), None);
    }
}
