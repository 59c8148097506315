//! Fights over a child's fields: another writer (a controller, a person with `kubectl edit`) keeps changing
//! what a child step sets, and the step keeps correcting it.
//!
//! A **correction** is a write to a child whose desired state did not change since the step last wrote it
//! (the desired-state hash the runtime stamps on the child is the same), but whose live fields differ: someone
//! else changed them. [`FIGHT_THRESHOLD`] corrections of one child within [`FIGHT_WINDOW`] make a **fight**:
//!
//! - the parent gets one `Warning` event `Contested` naming the fields and the other field managers (those
//!   that own the fields in the child's `managedFields`), and the step's condition says `False`, reason
//!   `Contested`, with the same names, for as long as the fight lasts (so `Ready` is `False` too: the desired
//!   state does not hold);
//! - further corrections back off: each waits [`FIGHT_BACKOFF`] doubled for every correction past the
//!   threshold, at most [`FIGHT_BACKOFF_MAX`], after the previous one; a pass that comes earlier (the other
//!   writer's change queues one) leaves the child as it is and requeues for the rest of the wait;
//! - a change of the parent that changes the desired state is no correction: it is written at once, whatever
//!   the fight;
//! - the fight ends once no correction was needed for [`FIGHT_WINDOW`]: the step's condition says what it
//!   said before, and `operator_child_fights_total` counts fights begun.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ObjectReference;
use serde_json::Value;

use crate::command::Target;
use crate::conditions::ConditionUpdate;
use crate::context::Context;
use crate::error::Result;

/// The reason of a child step's condition, and of the event, while another writer fights over the child.
pub const CONTESTED: &str = "Contested";

/// Corrections of one child within [`FIGHT_WINDOW`] that make a fight.
pub const FIGHT_THRESHOLD: usize = 3;
/// How long corrections are remembered, and how long without one ends a fight.
pub const FIGHT_WINDOW: Duration = Duration::from_secs(10 * 60);
/// The wait before the first correction past the threshold.
pub const FIGHT_BACKOFF: Duration = Duration::from_secs(10);
/// The longest wait between two corrections in a fight.
pub const FIGHT_BACKOFF_MAX: Duration = Duration::from_secs(5 * 60);

/// A fight in progress over one child.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fight {
    /// The fields corrected last, as dotted paths (`spec.replicas`).
    pub(crate) fields: Vec<String>,
    /// The other field managers that own them.
    pub(crate) managers: Vec<String>,
    /// Corrections within the window.
    pub(crate) corrections: usize,
    /// How long the next correction waits after the last.
    pub(crate) backoff: Duration,
    /// Whether this fight began with the correction just recorded.
    pub(crate) began: bool,
    /// How long until it ends if no correction is needed meanwhile.
    pub(crate) ends_in: Duration,
}

impl Fight {
    /// What the condition and the event say.
    pub(crate) fn message(&self, child: &str) -> String {
        let managers = if self.managers.is_empty() {
            "another writer".to_string()
        } else {
            format!("field manager {}", quoted(&self.managers))
        };
        format!(
            "{child}: {} changed by {managers} again and again ({} corrections in {} min); correcting at most every {} s",
            quoted(&self.fields),
            self.corrections,
            FIGHT_WINDOW.as_secs() / 60,
            self.backoff.as_secs()
        )
    }
}

fn quoted(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("{n:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The corrections of each child (by uid) of one reconciler.
#[derive(Debug, Default)]
pub(crate) struct Fights {
    children: Mutex<HashMap<String, Record>>,
}

#[derive(Debug, Default)]
struct Record {
    /// When each correction within the window was made.
    at: Vec<Instant>,
    fields: Vec<String>,
    managers: Vec<String>,
}

impl Record {
    fn prune(&mut self, now: Instant) {
        self.at
            .retain(|t| now.saturating_duration_since(*t) < FIGHT_WINDOW);
    }

    fn fight(&self, began: bool, now: Instant) -> Option<Fight> {
        let last = *self.at.last()?;
        (self.at.len() >= FIGHT_THRESHOLD).then(|| Fight {
            fields: self.fields.clone(),
            managers: self.managers.clone(),
            corrections: self.at.len(),
            backoff: backoff(self.at.len()),
            began,
            ends_in: FIGHT_WINDOW.saturating_sub(now.saturating_duration_since(last)),
        })
    }
}

/// The wait after the `n`-th correction within the window (none below the threshold).
fn backoff(n: usize) -> Duration {
    if n < FIGHT_THRESHOLD {
        return Duration::ZERO;
    }
    let doublings = u32::try_from(n - FIGHT_THRESHOLD)
        .unwrap_or(u32::MAX)
        .min(16);
    FIGHT_BACKOFF
        .saturating_mul(2u32.saturating_pow(doublings))
        .min(FIGHT_BACKOFF_MAX)
}

impl Fights {
    /// How long a correction of `child` must still wait (`None`: correct now).
    pub(crate) fn wait(&self, child: &str, now: Instant) -> Option<Duration> {
        let mut children = self.children.lock().unwrap_or_else(|e| e.into_inner());
        let record = children.get_mut(child)?;
        record.prune(now);
        let last = *record.at.last()?;
        let due = last + backoff(record.at.len());
        (due > now).then(|| due - now)
    }

    /// Records a correction of `child` of `fields`, which `managers` own; answers the fight, if this makes
    /// one or one goes on.
    pub(crate) fn corrected(
        &self,
        child: &str,
        now: Instant,
        fields: Vec<String>,
        managers: Vec<String>,
    ) -> Option<Fight> {
        let mut children = self.children.lock().unwrap_or_else(|e| e.into_inner());
        // Children whose corrections all left the window (deleted ones among them) are forgotten here.
        children.retain(|_, r| {
            r.prune(now);
            !r.at.is_empty()
        });
        let record = children.entry(child.to_string()).or_default();
        let before = record.at.len();
        record.at.push(now);
        record.fields = fields;
        record.managers = managers;
        record.fight(before + 1 == FIGHT_THRESHOLD, now)
    }

    /// The fight over `child` in progress, if any.
    pub(crate) fn active(&self, child: &str, now: Instant) -> Option<Fight> {
        let mut children = self.children.lock().unwrap_or_else(|e| e.into_inner());
        let record = children.get_mut(child)?;
        record.prune(now);
        if record.at.is_empty() {
            children.remove(child);
            return None;
        }
        record.fight(false, now)
    }
}

/// The step's condition during a fight.
pub(crate) fn contested(condition: &str, fight: &Fight, child: &str) -> ConditionUpdate {
    ConditionUpdate::false_(condition, CONTESTED, fight.message(child))
}

/// A correction a child step is about to make.
pub(crate) struct Correction<'a> {
    /// The step's condition type.
    pub(crate) condition: &'a str,
    /// `Kind namespace/name`.
    pub(crate) child: String,
    pub(crate) child_ref: ObjectReference,
    pub(crate) kind: String,
    pub(crate) uid: String,
    /// Where to read the child's `managedFields`.
    pub(crate) target: Target,
    /// The step's own field manager.
    pub(crate) manager: String,
}

/// Before correcting another writer's change: how long to wait first, when a fight over the child is backing
/// off (the step's condition then says so); otherwise records the correction, and when it makes a fight,
/// tells the parent with a `Warning` event.
pub(crate) async fn before_correction(
    cx: &mut Context,
    c: Correction<'_>,
    desired: &Value,
    live: &Value,
) -> Result<Option<Duration>> {
    let now = Instant::now();
    let written = cx.written();
    if let Some(wait) = written.fights().wait(&c.uid, now) {
        if let Some(fight) = written.fights().active(&c.uid, now) {
            cx.set_condition(contested(c.condition, &fight, &c.child));
        }
        tracing::debug!(child = %c.child, ?wait, "a fight over the child's fields: the correction waits");
        return Ok(Some(wait));
    }
    let fields = drifted_fields(desired, live);
    let managers = match cx.read_value(&c.target).await? {
        Some(value) => owners_of(&value["metadata"]["managedFields"], &fields, &c.manager),
        None => Vec::new(),
    };
    if let Some(fight) = written.fights().corrected(&c.uid, now, fields, managers)
        && fight.began
    {
        let message = fight.message(&c.child);
        tracing::warn!(child = %c.child, "{message}");
        crate::metrics::Metrics::global().fight(cx.controller_name(), &c.kind);
        cx.event_about(c.child_ref, true, CONTESTED, "Correct", message)
            .await;
    }
    Ok(None)
}

/// The dotted paths of the fields `desired` sets that `live` holds otherwise (an array as a whole).
pub(crate) fn drifted_fields(desired: &Value, live: &Value) -> Vec<String> {
    let mut out = Vec::new();
    walk(desired, live, &mut Vec::new(), &mut out);
    out
}

fn walk(desired: &Value, live: &Value, path: &mut Vec<String>, out: &mut Vec<String>) {
    match (desired, live) {
        (Value::Object(d), Value::Object(l)) => {
            for (key, value) in d {
                if path.is_empty() && matches!(key.as_str(), "apiVersion" | "kind" | "status") {
                    continue;
                }
                path.push(key.clone());
                match l.get(key) {
                    Some(live) => walk(value, live, path, out),
                    None if value.is_null() => {}
                    None => out.push(path.join(".")),
                }
                path.pop();
            }
        }
        (d, l) if d == l => {}
        _ => out.push(path.join(".")),
    }
}

/// The field managers other than `ours` that own one of `fields` (dotted paths) in `managed_fields` (a
/// child's `metadata.managedFields`), sorted.
pub(crate) fn owners_of(managed_fields: &Value, fields: &[String], ours: &str) -> Vec<String> {
    let mut owners: Vec<String> = managed_fields
        .as_array()
        .into_iter()
        .flatten()
        .filter(|entry| entry["manager"].as_str().is_some_and(|m| m != ours))
        .filter(|entry| {
            fields.iter().any(|f| {
                let mut at = &entry["fieldsV1"];
                for key in f.split('.') {
                    at = &at[format!("f:{key}")];
                    if at.is_null() {
                        return false;
                    }
                }
                true
            })
        })
        .filter_map(|entry| entry["manager"].as_str().map(str::to_string))
        .collect();
    owners.sort();
    owners.dedup();
    owners
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn three_corrections_in_the_window_make_a_fight_that_backs_off_and_ends() {
        let fights = Fights::default();
        let t0 = Instant::now();
        let f = |n: &str| vec![n.to_string()];
        assert_eq!(
            fights.corrected("c", t0, f("spec.replicas"), f("kubectl-edit")),
            None
        );
        assert_eq!(fights.wait("c", t0), None, "no wait below the threshold");
        let t1 = t0 + Duration::from_secs(1);
        assert_eq!(
            fights.corrected("c", t1, f("spec.replicas"), f("kubectl-edit")),
            None
        );
        let t2 = t1 + Duration::from_secs(1);
        let fight = fights
            .corrected("c", t2, f("spec.replicas"), f("kubectl-edit"))
            .expect("the third correction makes a fight");
        assert!(fight.began);
        assert_eq!((fight.corrections, fight.backoff), (3, FIGHT_BACKOFF));
        assert!(
            fight
                .message("Deployment default/web")
                .contains(r#""spec.replicas" changed by field manager "kubectl-edit""#)
        );
        // The next correction waits the backoff after the last one; then doubles.
        assert_eq!(
            fights.wait("c", t2 + Duration::from_secs(4)),
            Some(Duration::from_secs(6))
        );
        let t3 = t2 + FIGHT_BACKOFF;
        assert_eq!(fights.wait("c", t3), None);
        let fight = fights
            .corrected("c", t3, f("spec.replicas"), f("kubectl-edit"))
            .unwrap();
        assert!(!fight.began);
        assert_eq!(fight.backoff, FIGHT_BACKOFF * 2);
        assert!(fights.active("c", t3).is_some());
        // Quiet for the window: over, and forgotten.
        assert_eq!(fights.active("c", t3 + FIGHT_WINDOW), None);
        assert_eq!(fights.wait("c", t3 + FIGHT_WINDOW), None);
        // Another child is another story.
        assert_eq!(fights.active("d", t3), None);
    }

    #[test]
    fn the_backoff_is_capped() {
        assert_eq!(backoff(2), Duration::ZERO);
        assert_eq!(backoff(3), FIGHT_BACKOFF);
        assert_eq!(backoff(4), FIGHT_BACKOFF * 2);
        assert_eq!(backoff(40), FIGHT_BACKOFF_MAX);
    }

    #[test]
    fn the_drifted_fields_and_who_owns_them() {
        let desired = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "labels": {"app": "web"}},
            "spec": {"replicas": 2, "template": {"spec": {"containers": [{"name": "c", "image": "a"}]}}}});
        let live = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "labels": {"app": "web", "extra": "x"}},
            "spec": {"replicas": 5, "template": {"spec": {"containers": [{"name": "c", "image": "b"}]}}},
            "status": {"replicas": 5}});
        let fields = drifted_fields(&desired, &live);
        assert_eq!(fields, ["spec.replicas", "spec.template.spec.containers"]);
        let managed = json!([
            {"manager": "webapp-controller", "operation": "Apply",
             "fieldsV1": {"f:spec": {"f:replicas": {}, "f:template": {}}}},
            {"manager": "kubectl-edit", "operation": "Update", "fieldsV1": {"f:spec": {"f:replicas": {}}}},
            {"manager": "hpa", "operation": "Update", "fieldsV1": {"f:status": {"f:replicas": {}}}}
        ]);
        assert_eq!(
            owners_of(&managed, &fields, "webapp-controller"),
            ["kubectl-edit"]
        );
    }
}
