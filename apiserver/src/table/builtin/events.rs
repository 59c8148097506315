//! Events, core (`v1`) and `events.k8s.io/v1` alike: both are stored (and printed) as core Events.

use serde_json::{Value, json};

use super::cells::{int, text};
use crate::table::row::Row;
use crate::table::time::{self, Now};

/// A time that is set (not absent, null or empty).
fn set(v: &Value) -> bool {
    v.as_str().is_some_and(|s| !s.is_empty())
}

/// A core Event's row.
pub(super) fn core_event(obj: &Value, now: Now) -> Row {
    let first = if set(&obj["firstTimestamp"]) {
        time::since(&obj["firstTimestamp"], now)
    } else {
        time::since(&obj["eventTime"], now)
    };
    let mut last = if set(&obj["lastTimestamp"]) {
        time::since(&obj["lastTimestamp"], now)
    } else {
        first.clone()
    };
    let mut count = int(&obj["count"]);
    if obj["series"].is_object() {
        last = time::since(&obj["series"]["lastObservedTime"], now);
        count = int(&obj["series"]["count"]);
    } else if count == 0 {
        count = 1;
    }
    let involved = &obj["involvedObject"];
    let kind = text(&involved["kind"]).to_lowercase();
    let name = text(&involved["name"]);
    let target = if name.is_empty() {
        kind
    } else {
        format!("{kind}/{name}")
    };
    let component = Some(text(&obj["source"]["component"]))
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| text(&obj["reportingComponent"]));
    let instance = Some(text(&obj["source"]["host"]))
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| text(&obj["reportingInstance"]));
    let source = if instance.is_empty() {
        component
    } else {
        format!("{component}, {instance}")
    };
    vec![
        json!(last),
        json!(text(&obj["type"])),
        json!(text(&obj["reason"])),
        json!(target),
        json!(text(&involved["fieldPath"])),
        json!(source),
        json!(text(&obj["message"]).trim()),
        json!(first),
        json!(count),
        obj["metadata"]["name"].clone(),
    ]
    .into()
}
