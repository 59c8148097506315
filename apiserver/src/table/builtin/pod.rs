//! A Pod's row: ready containers, the status kubectl shows (from the phase, the init containers and the
//! containers' states), restarts with the time of the last one, and the `-o wide` cells.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::cells::{int, text};
use crate::table::row::Row;
use crate::table::time::{self, Now};

fn items(v: &Value) -> &[Value] {
    v.as_array().map(Vec::as_slice).unwrap_or(&[])
}

/// Whether the pod has a condition of this type with status `True`.
fn condition_true(status: &Value, type_: &str) -> bool {
    items(&status["conditions"])
        .iter()
        .any(|c| c["type"] == type_ && c["status"] == "True")
}

/// A sidecar: an init container that keeps running (`restartPolicy: Always`).
fn restartable(init: Option<&&Value>) -> bool {
    init.is_some_and(|c| c["restartPolicy"] == "Always")
}

/// The later of two optional times.
fn later(current: Option<Value>, candidate: &Value) -> Option<Value> {
    match (
        time::parse(candidate),
        current.as_ref().and_then(time::parse),
    ) {
        (Some(c), Some(cur)) if c > cur => Some(candidate.clone()),
        (Some(_), None) => Some(candidate.clone()),
        _ => current,
    }
}

/// Restarts, the last time a container (re)started, ready containers and the status, as `printPod`.
struct Tally {
    restarts: i64,
    last_restart: Option<Value>,
    ready: i64,
    reason: String,
}

fn terminated_reason(state: &Value, prefix: &str) -> String {
    match state["reason"].as_str().filter(|r| !r.is_empty()) {
        Some(r) => format!("{prefix}{r}"),
        None if int(&state["signal"]) != 0 => format!("{prefix}Signal:{}", int(&state["signal"])),
        None => format!("{prefix}ExitCode:{}", int(&state["exitCode"])),
    }
}

fn tally(pod: &Value) -> (Tally, i64) {
    let (spec, status) = (&pod["spec"], &pod["status"]);
    // kube-apiserver sets `Pending` on every new Pod.
    let phase = status["phase"].as_str().unwrap_or("Pending").to_string();
    let mut reason = status["reason"]
        .as_str()
        .filter(|r| !r.is_empty())
        .map(str::to_string)
        .unwrap_or_else(|| phase.clone());
    if items(&status["conditions"])
        .iter()
        .any(|c| c["type"] == "PodScheduled" && c["reason"] == "SchedulingGated")
    {
        reason = "SchedulingGated".into();
    }
    let inits: BTreeMap<String, &Value> = items(&spec["initContainers"])
        .iter()
        .map(|c| (text(&c["name"]), c))
        .collect();
    let init_count = items(&spec["initContainers"]).len();
    let mut total = items(&spec["containers"]).len() as i64;
    total += inits.values().filter(|c| restartable(Some(c))).count() as i64;

    let mut t = Tally {
        restarts: 0,
        last_restart: None,
        ready: 0,
        reason,
    };
    let (mut sidecar_restarts, mut sidecar_last) = (0, None);
    let mut initializing = false;
    for (i, c) in items(&status["initContainerStatuses"]).iter().enumerate() {
        let finished = &c["lastState"]["terminated"]["finishedAt"];
        t.restarts += int(&c["restartCount"]);
        t.last_restart = later(t.last_restart.take(), finished);
        let sidecar = restartable(inits.get(&text(&c["name"])));
        if sidecar {
            sidecar_restarts += int(&c["restartCount"]);
            sidecar_last = later(sidecar_last, finished);
        }
        let (terminated, waiting) = (&c["state"]["terminated"], &c["state"]["waiting"]);
        if terminated.is_object() && int(&terminated["exitCode"]) == 0 {
            continue;
        }
        if sidecar && c["started"] == true {
            if c["ready"] == true {
                t.ready += 1;
            }
            continue;
        }
        if terminated.is_object() {
            t.reason = terminated_reason(terminated, "Init:");
        } else if let Some(r) = waiting["reason"]
            .as_str()
            .filter(|r| !r.is_empty() && *r != "PodInitializing")
        {
            t.reason = format!("Init:{r}");
        } else {
            t.reason = format!("Init:{i}/{init_count}");
        }
        initializing = true;
        break;
    }

    if !initializing || condition_true(status, "Initialized") {
        t.restarts = sidecar_restarts;
        t.last_restart = sidecar_last;
        let mut running = false;
        for c in items(&status["containerStatuses"]).iter().rev() {
            t.restarts += int(&c["restartCount"]);
            t.last_restart = later(
                t.last_restart.take(),
                &c["lastState"]["terminated"]["finishedAt"],
            );
            let (state, waiting, terminated) = (
                &c["state"],
                &c["state"]["waiting"],
                &c["state"]["terminated"],
            );
            if let Some(r) = waiting["reason"].as_str().filter(|r| !r.is_empty()) {
                t.reason = r.to_string();
            } else if terminated.is_object() {
                t.reason = terminated_reason(terminated, "");
            } else if c["ready"] == true && state["running"].is_object() {
                running = true;
                t.ready += 1;
            }
        }
        if t.reason == "Completed" && running {
            t.reason = if condition_true(status, "Ready") {
                "Running".into()
            } else {
                "NotReady".into()
            };
        }
    }

    let deleting = !pod["metadata"]["deletionTimestamp"].is_null();
    if deleting && status["reason"] == "NodeLost" {
        t.reason = "Unknown".into();
    } else if deleting && phase != "Succeeded" && phase != "Failed" {
        t.reason = "Terminating".into();
    }
    (t, total)
}

/// `n/m` of the readiness gates whose condition is `True`, `<none>` without gates.
fn readiness_gates(pod: &Value) -> String {
    let gates = items(&pod["spec"]["readinessGates"]);
    if gates.is_empty() {
        return "<none>".into();
    }
    let conditions = items(&pod["status"]["conditions"]);
    let met = gates
        .iter()
        .filter(|g| {
            conditions
                .iter()
                .find(|c| c["type"] == g["conditionType"])
                .is_some_and(|c| c["status"] == "True")
        })
        .count();
    format!("{met}/{}", gates.len())
}

fn or_none(s: &Value) -> Value {
    match s.as_str() {
        Some(s) if !s.is_empty() => json!(s),
        _ => json!("<none>"),
    }
}

/// A Pod's row.
pub(super) fn pod(obj: &Value, now: Now) -> Row {
    let (t, total) = tally(obj);
    let restarts = match &t.last_restart {
        Some(last) if t.restarts != 0 => format!("{} ({} ago)", t.restarts, time::since(last, now)),
        _ => t.restarts.to_string(),
    };
    let status = &obj["status"];
    let conditions = match status["phase"].as_str() {
        Some("Succeeded") => Some(completed(
            "Succeeded",
            "The pod has completed successfully.",
        )),
        Some("Failed") => Some(completed("Failed", "The pod failed.")),
        _ => None,
    };
    let cells = vec![
        obj["metadata"]["name"].clone(),
        json!(format!("{}/{total}", t.ready)),
        json!(t.reason),
        json!(restarts),
        time::age(obj, now),
        or_none(&status["podIPs"][0]["ip"]),
        or_none(&obj["spec"]["nodeName"]),
        or_none(&status["nominatedNodeName"]),
        json!(readiness_gates(obj)),
    ];
    Row { cells, conditions }
}

/// The row condition of a finished pod.
fn completed(reason: &str, message: &str) -> Value {
    json!([{ "type": "Completed", "status": "True", "reason": reason, "message": message }])
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn status_of(pod: Value) -> (String, String, String) {
        let row = super::pod(&pod, chrono::Utc::now());
        let s = |i: usize| row.cells[i].as_str().unwrap_or("").to_string();
        (s(1), s(2), s(3))
    }

    #[test]
    fn running_waiting_and_terminated_containers() {
        let pod = json!({
            "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "a"}, {"name": "b"}]},
            "status": {"phase": "Running", "containerStatuses": [
                {"name": "a", "ready": true, "restartCount": 0, "state": {"running": {}}},
                {"name": "b", "ready": false, "restartCount": 2,
                 "state": {"waiting": {"reason": "CrashLoopBackOff"}}},
            ]},
        });
        assert_eq!(
            status_of(pod),
            ("1/2".into(), "CrashLoopBackOff".into(), "2".into())
        );
        let pending = json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "a"}]},
                             "status": {"phase": "Pending"}});
        assert_eq!(
            status_of(pending),
            ("0/1".into(), "Pending".into(), "0".into())
        );
    }

    #[test]
    fn init_containers_show_progress() {
        let pod = json!({
            "metadata": {"name": "p"},
            "spec": {"initContainers": [{"name": "i1"}, {"name": "i2"}], "containers": [{"name": "a"}]},
            "status": {"phase": "Pending", "initContainerStatuses": [
                {"name": "i1", "restartCount": 0, "state": {"terminated": {"exitCode": 0}}},
                {"name": "i2", "restartCount": 0, "state": {"running": {}}},
            ]},
        });
        assert_eq!(
            status_of(pod),
            ("0/1".into(), "Init:1/2".into(), "0".into())
        );
    }

    #[test]
    fn finished_pods_carry_a_row_condition() {
        let pod = json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "a"}]},
                         "status": {"phase": "Succeeded"}});
        let row = super::pod(&pod, chrono::Utc::now());
        assert_eq!(
            row.conditions.expect("a condition")[0]["reason"],
            "Succeeded"
        );
    }
}
