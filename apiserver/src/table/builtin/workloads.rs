//! Workload controllers: Deployment, ReplicaSet, StatefulSet, DaemonSet (apps), Job and CronJob (batch).

use serde_json::{Value, json};

use super::cells::{containers, format_labels, format_selector, int, len, selector, text};
use crate::table::row::Row;
use crate::table::time::{self, Now};

/// `spec.replicas`, defaulted to 1.
fn replicas(obj: &Value) -> i64 {
    obj["spec"]["replicas"].as_i64().unwrap_or(1)
}

/// A Deployment's row.
pub(super) fn deployment(obj: &Value, now: Now) -> Row {
    let status = &obj["status"];
    let (names, images) = containers(&obj["spec"]["template"]["spec"]);
    vec![
        obj["metadata"]["name"].clone(),
        json!(format!(
            "{}/{}",
            int(&status["readyReplicas"]),
            replicas(obj)
        )),
        json!(int(&status["updatedReplicas"])),
        json!(int(&status["availableReplicas"])),
        time::age(obj, now),
        json!(names),
        json!(images),
        json!(selector(&obj["spec"]["selector"])),
    ]
    .into()
}

/// A ReplicaSet's row.
pub(super) fn replica_set(obj: &Value, now: Now) -> Row {
    let status = &obj["status"];
    let (names, images) = containers(&obj["spec"]["template"]["spec"]);
    vec![
        obj["metadata"]["name"].clone(),
        json!(replicas(obj)),
        json!(int(&status["replicas"])),
        json!(int(&status["readyReplicas"])),
        time::age(obj, now),
        json!(names),
        json!(images),
        json!(format_selector(&obj["spec"]["selector"])),
    ]
    .into()
}

/// A StatefulSet's row.
pub(super) fn stateful_set(obj: &Value, now: Now) -> Row {
    let (names, images) = containers(&obj["spec"]["template"]["spec"]);
    vec![
        obj["metadata"]["name"].clone(),
        json!(format!(
            "{}/{}",
            int(&obj["status"]["readyReplicas"]),
            replicas(obj)
        )),
        time::age(obj, now),
        json!(names),
        json!(images),
    ]
    .into()
}

/// A DaemonSet's row.
pub(super) fn daemon_set(obj: &Value, now: Now) -> Row {
    let status = &obj["status"];
    let template = &obj["spec"]["template"]["spec"];
    let (names, images) = containers(template);
    vec![
        obj["metadata"]["name"].clone(),
        json!(int(&status["desiredNumberScheduled"])),
        json!(int(&status["currentNumberScheduled"])),
        json!(int(&status["numberReady"])),
        json!(int(&status["updatedNumberScheduled"])),
        json!(int(&status["numberAvailable"])),
        json!(format_labels(&template["nodeSelector"])),
        time::age(obj, now),
        json!(names),
        json!(images),
        json!(format_selector(&obj["spec"]["selector"])),
    ]
    .into()
}

/// Whether a Job has a condition of this type with status `True` (the first of the type decides).
fn job_condition(obj: &Value, type_: &str) -> bool {
    obj["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == type_)
        .is_some_and(|c| c["status"] == "True")
}

/// A Job's row.
pub(super) fn job(obj: &Value, now: Now) -> Row {
    let (spec, status) = (&obj["spec"], &obj["status"]);
    let succeeded = int(&status["succeeded"]);
    // Without either, both default to 1.
    let (completions, parallelism) =
        match (spec["completions"].as_i64(), spec["parallelism"].as_i64()) {
            (None, None) => (Some(1), 1),
            (c, p) => (c, p.unwrap_or(1)),
        };
    let completions = match completions {
        Some(c) => format!("{succeeded}/{c}"),
        None if parallelism > 1 => format!("{succeeded}/1 of {parallelism}"),
        None => format!("{succeeded}/1"),
    };
    let duration = match (status.get("startTime"), status.get("completionTime")) {
        (None, _) => String::new(),
        (Some(start), None) => time::since(start, now),
        (Some(start), Some(end)) => time::between(start, end).unwrap_or_default(),
    };
    let state = if job_condition(obj, "Complete") {
        "Complete"
    } else if job_condition(obj, "Failed") {
        "Failed"
    } else if !obj["metadata"]["deletionTimestamp"].is_null() {
        "Terminating"
    } else if job_condition(obj, "Suspended") {
        "Suspended"
    } else if job_condition(obj, "FailureTarget") {
        "FailureTarget"
    } else if job_condition(obj, "SuccessCriteriaMet") {
        "SuccessCriteriaMet"
    } else {
        "Running"
    };
    let (names, images) = containers(&spec["template"]["spec"]);
    vec![
        obj["metadata"]["name"].clone(),
        json!(state),
        json!(completions),
        json!(duration),
        time::age(obj, now),
        json!(names),
        json!(images),
        json!(format_selector(&spec["selector"])),
    ]
    .into()
}

/// A CronJob's row.
pub(super) fn cron_job(obj: &Value, now: Now) -> Row {
    let (spec, status) = (&obj["spec"], &obj["status"]);
    let last_schedule = match status.get("lastScheduleTime") {
        Some(t) if !t.is_null() => time::since(t, now),
        _ => "<none>".into(),
    };
    let suspend = match spec["suspend"].as_bool() {
        Some(true) => "True",
        // Defaulted to false.
        _ => "False",
    };
    let job_spec = &spec["jobTemplate"]["spec"];
    let (names, images) = containers(&job_spec["template"]["spec"]);
    vec![
        obj["metadata"]["name"].clone(),
        json!(text(&spec["schedule"])),
        json!(spec["timeZone"].as_str().unwrap_or("<none>")),
        json!(suspend),
        json!(len(&status["active"])),
        json!(last_schedule),
        time::age(obj, now),
        json!(names),
        json!(images),
        json!(format_selector(&job_spec["selector"])),
    ]
    .into()
}

/// A ReplicationController's row.
pub(super) fn replication_controller(obj: &Value, now: Now) -> Row {
    let (names, images) = containers(&obj["spec"]["template"]["spec"]);
    vec![
        obj["metadata"]["name"].clone(),
        json!(replicas(obj)),
        json!(int(&obj["status"]["replicas"])),
        json!(int(&obj["status"]["readyReplicas"])),
        time::age(obj, now),
        json!(names),
        json!(images),
        json!(format_labels(&obj["spec"]["selector"])),
    ]
    .into()
}

/// A PodTemplate's row.
pub(super) fn pod_template(obj: &Value, _now: Now) -> Row {
    let (names, images) = containers(&obj["template"]["spec"]);
    vec![
        obj["metadata"]["name"].clone(),
        json!(names),
        json!(images),
        json!(format_labels(&obj["template"]["metadata"]["labels"])),
    ]
    .into()
}

/// A ControllerRevision's row.
pub(super) fn controller_revision(obj: &Value, now: Now) -> Row {
    let controller = obj["metadata"]["ownerReferences"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["controller"] == true)
        .map_or_else(
            || "<none>".to_string(),
            |r| {
                let api_version = text(&r["apiVersion"]);
                let kind = text(&r["kind"]);
                let group_kind = match api_version.split_once('/') {
                    Some((group, _)) => format!("{kind}.{group}"),
                    None => kind,
                };
                format!("{}/{}", group_kind.to_lowercase(), text(&r["name"]))
            },
        );
    vec![
        obj["metadata"]["name"].clone(),
        json!(controller),
        json!(int(&obj["revision"])),
        time::age(obj, now),
    ]
    .into()
}
