//! What a case expects a pass to write, and how it is compared with what the pass did.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde_json::Value;

use crate::command::Command;
use crate::testing::apiserver::{RequestRecord, Verb};

/// The content type of a server-side apply request.
const APPLY_PATCH: &str = "application/apply-patch+yaml";

/// The kinds of writes a case compares, each in order of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Category {
    /// `POST` of an object (not an event).
    Create,
    /// Server-side apply: `PATCH` with content type `application/apply-patch+yaml`.
    Apply,
    /// `PUT` of an object (not its status).
    Update,
    /// Any other `PATCH` of an object (not its status).
    Patch,
    /// `DELETE` of an object or a collection.
    Delete,
    /// A write through the `status` subresource.
    Status,
    /// A write of an `events` resource (an event recorded).
    Event,
}

impl Category {
    /// Every category, in the order failures are reported.
    pub const ALL: [Category; 7] = [
        Category::Create,
        Category::Apply,
        Category::Update,
        Category::Patch,
        Category::Delete,
        Category::Status,
        Category::Event,
    ];

    /// The lowercase name used in failure reports.
    pub fn as_str(&self) -> &'static str {
        match self {
            Category::Create => "create",
            Category::Apply => "apply",
            Category::Update => "update",
            Category::Patch => "patch",
            Category::Delete => "delete",
            Category::Status => "status update",
            Category::Event => "event",
        }
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One write a pass made: a successful mutating request to the API server, or (with no server) a command.
#[derive(Debug, Clone, PartialEq)]
pub struct Write {
    /// What kind of write.
    pub category: Category,
    /// Plural resource name, e.g. `configmaps`.
    pub resource: String,
    /// Namespace, for namespaced objects.
    pub namespace: Option<String>,
    /// Object name (`None` for a create with `generateName`, or a collection delete).
    pub name: Option<String>,
    /// What was sent: the object (create, apply, update), the patch, the status alone (status updates) or the
    /// event; `null` for deletes.
    pub body: Value,
    /// Position of the write among the pass's requests (or commands), from 0.
    pub position: usize,
}

impl Write {
    /// The write a recorded request made, if it is a successful mutating request.
    pub fn from_request(position: usize, r: &RequestRecord) -> Option<Write> {
        if !r.is_write() {
            return None;
        }
        let verb = r.verb?;
        let mut body = r.body.clone().unwrap_or(Value::Null);
        let category = if r.resource == "events" {
            Category::Event
        } else if r.subresource.as_deref() == Some("status") {
            if let Some(status) = body.get("status") {
                body = status.clone();
            }
            Category::Status
        } else {
            match verb {
                Verb::Create => Category::Create,
                Verb::Update => Category::Update,
                Verb::Patch if r.content_type.as_deref() == Some(APPLY_PATCH) => Category::Apply,
                Verb::Patch => Category::Patch,
                _ => {
                    body = Value::Null;
                    Category::Delete
                }
            }
        };
        let name = r.name.clone().or_else(|| {
            (verb == Verb::Create)
                .then(|| body["metadata"]["name"].as_str().map(str::to_string))
                .flatten()
        });
        Some(Write {
            category,
            resource: r.resource.clone(),
            namespace: r.namespace.clone(),
            name,
            body,
            position,
        })
    }

    /// The write a command asks for.
    pub fn from_command(position: usize, c: &Command) -> Write {
        let (category, target, body) = match c {
            Command::Create { target, object, .. } => {
                (Category::Create, Some(target), object.clone())
            }
            Command::Apply { target, object, .. } => {
                (Category::Apply, Some(target), object.value().clone())
            }
            Command::Update { target, object } => (Category::Update, Some(target), object.clone()),
            Command::Patch { target, patch } => (Category::Patch, Some(target), patch.clone()),
            Command::Delete { target, .. } => (Category::Delete, Some(target), Value::Null),
            Command::UpdateStatus { target, status, .. } => {
                (Category::Status, Some(target), status.clone())
            }
            Command::Event(ev) => (
                Category::Event,
                None,
                serde_json::json!({
                    "type": if ev.warning { "Warning" } else { "Normal" },
                    "reason": ev.reason,
                    "note": ev.note,
                    "action": ev.action,
                }),
            ),
        };
        match (target, c) {
            (Some(t), _) => Write {
                category,
                resource: t.plural.clone(),
                namespace: t.namespace.clone(),
                name: Some(t.name.clone()).filter(|n| !n.is_empty()),
                body,
                position,
            },
            (None, Command::Event(ev)) => Write {
                category,
                resource: "events".into(),
                namespace: ev.regarding.namespace.clone(),
                name: None,
                body,
                position,
            },
            (None, _) => Write {
                category,
                resource: String::new(),
                namespace: None,
                name: None,
                body,
                position,
            },
        }
    }

    fn target(&self) -> String {
        let name = self.name.as_deref().unwrap_or("(generated)");
        match &self.namespace {
            Some(ns) => format!("{} {ns}/{name}", self.resource),
            None => format!("{} {name}", self.resource),
        }
    }
}

impl fmt::Display for Write {
    /// `apply deployments default/web`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.category, self.target())
    }
}

/// The writes among recorded requests, in order.
pub fn writes_of_requests(requests: &[RequestRecord]) -> Vec<Write> {
    requests
        .iter()
        .enumerate()
        .filter_map(|(i, r)| Write::from_request(i, r))
        .collect()
}

/// The writes a list of commands asks for, in order.
pub fn writes_of_commands(commands: &[Command]) -> Vec<Write> {
    commands
        .iter()
        .enumerate()
        .map(|(i, c)| Write::from_command(i, c))
        .collect()
}

/// An expected event: its type, its reason and (optionally) a part of its note.
///
/// ```
/// use kubewright::testing::table::EventExpectation;
/// let created = EventExpectation::normal("Created").note("ConfigMap hello");
/// let failed = EventExpectation::warning("InvalidText");
/// # let _ = (created, failed);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventExpectation {
    warning: bool,
    reason: String,
    note: Option<String>,
}

impl EventExpectation {
    /// A `Normal` event with this reason.
    pub fn normal(reason: impl Into<String>) -> Self {
        Self {
            warning: false,
            reason: reason.into(),
            note: None,
        }
    }

    /// A `Warning` event with this reason.
    pub fn warning(reason: impl Into<String>) -> Self {
        Self {
            warning: true,
            ..Self::normal(reason)
        }
    }

    /// The event's note must contain `part`.
    pub fn note(mut self, part: impl Into<String>) -> Self {
        self.note = Some(part.into());
        self
    }

    fn matches(&self, body: &Value) -> bool {
        let type_ = if self.warning { "Warning" } else { "Normal" };
        body["type"].as_str() == Some(type_)
            && body["reason"].as_str() == Some(self.reason.as_str())
            && self.note.as_ref().is_none_or(|n| {
                body["note"]
                    .as_str()
                    .or(body["message"].as_str())
                    .is_some_and(|note| note.contains(n.as_str()))
            })
    }

    fn as_value(&self) -> Value {
        let mut v = serde_json::json!({
            "type": if self.warning { "Warning" } else { "Normal" },
            "reason": self.reason,
        });
        if let Some(n) = &self.note {
            v["note"] = Value::String(format!("…{n}…"));
        }
        v
    }
}

/// One expected write.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Expected {
    /// The write's body must contain these fields (see [`is_subset`]).
    Body(Value),
    /// A delete of this object.
    Delete {
        resource: String,
        namespace: Option<String>,
        name: String,
    },
    /// An event.
    Event(EventExpectation),
}

impl Expected {
    fn render(&self) -> String {
        match self {
            Expected::Body(v) => yaml(v),
            Expected::Delete {
                resource,
                namespace,
                name,
            } => match namespace {
                Some(ns) => format!("{resource} {ns}/{name}\n"),
                None => format!("{resource} {name}\n"),
            },
            Expected::Event(e) => yaml(&e.as_value()),
        }
    }

    /// `None` when the write matches; otherwise what differs.
    fn mismatch(&self, write: &Write) -> Option<String> {
        match self {
            Expected::Body(v) => (!is_subset(v, &write.body)).then(|| yaml_diff(v, &write.body)),
            Expected::Delete {
                resource,
                namespace,
                name,
            } => {
                let same = &write.resource == resource
                    && &write.namespace == namespace
                    && write.name.as_deref() == Some(name.as_str());
                (!same).then(|| diff_text(&self.render(), &format!("{}\n", write.target())))
            }
            Expected::Event(e) => {
                (!e.matches(&write.body)).then(|| yaml_diff(&e.as_value(), &write.body))
            }
        }
    }
}

/// The writes a case expects, by category, and the categories it does not check.
#[derive(Debug, Clone, Default)]
pub(crate) struct Expectations {
    pub(crate) writes: BTreeMap<Category, Vec<Expected>>,
    pub(crate) ignored: BTreeSet<Category>,
}

impl Expectations {
    pub(crate) fn push(&mut self, category: Category, expected: Expected) {
        self.writes.entry(category).or_default().push(expected);
    }

    /// Compares the writes of a pass with the expectations, category by category and in order; returns every
    /// problem found.
    pub(crate) fn compare(&self, writes: &[Write]) -> Vec<String> {
        let mut problems = Vec::new();
        for category in Category::ALL {
            if self.ignored.contains(&category) {
                continue;
            }
            let actual: Vec<&Write> = writes.iter().filter(|w| w.category == category).collect();
            let expected = self.writes.get(&category).map(Vec::as_slice).unwrap_or(&[]);
            for i in 0..actual.len().max(expected.len()) {
                match (expected.get(i), actual.get(i)) {
                    (Some(e), Some(a)) => {
                        if let Some(diff) = e.mismatch(a) {
                            problems.push(format!(
                                "{category} #{i} (write #{} of the pass, {}) differs from the expectation:\n{}",
                                a.position,
                                a.target(),
                                indent(&diff)
                            ));
                        }
                    }
                    (Some(e), None) => problems.push(format!(
                        "missing {category} #{i}; expected:\n{}",
                        indent(&e.render())
                    )),
                    (None, Some(a)) => problems.push(format!(
                        "unexpected {category} #{i} (write #{} of the pass, {}):\n{}",
                        a.position,
                        a.target(),
                        indent(&yaml(&a.body))
                    )),
                    (None, None) => {}
                }
            }
        }
        problems
    }
}

/// Whether `actual` has every field `expected` sets, with the same value: maps key by key (an expected
/// `null` means absent or `null`), lists item by item and of the same length, numbers by value.
///
/// ```
/// use kubewright::testing::table::is_subset;
/// use serde_json::json;
/// let actual = json!({"metadata": {"name": "a", "uid": "1"}, "data": {"k": "v"}});
/// assert!(is_subset(&json!({"metadata": {"name": "a"}}), &actual));
/// assert!(!is_subset(&json!({"data": {"k": "w"}}), &actual));
/// assert!(is_subset(&json!({"status": null}), &actual));
/// ```
pub fn is_subset(expected: &Value, actual: &Value) -> bool {
    match (expected, actual) {
        (Value::Null, a) => a.is_null(),
        (Value::Object(e), Value::Object(a)) => e.iter().all(|(k, ev)| match a.get(k) {
            Some(av) => is_subset(ev, av),
            None => ev.is_null(),
        }),
        (Value::Array(e), Value::Array(a)) => {
            e.len() == a.len() && e.iter().zip(a).all(|(ev, av)| is_subset(ev, av))
        }
        (Value::Number(e), Value::Number(a)) => e.as_f64() == a.as_f64(),
        (e, a) => e == a,
    }
}

/// `actual` cut down to the fields `expected` sets (list items beyond the expected ones are kept), so that a
/// diff shows only what the expectation is about.
fn project(actual: &Value, expected: &Value) -> Value {
    match (actual, expected) {
        (Value::Object(a), Value::Object(e)) => Value::Object(
            e.iter()
                .filter_map(|(k, ev)| a.get(k).map(|av| (k.clone(), project(av, ev))))
                .collect(),
        ),
        (Value::Array(a), Value::Array(e)) => Value::Array(
            a.iter()
                .enumerate()
                .map(|(i, av)| match e.get(i) {
                    Some(ev) => project(av, ev),
                    None => av.clone(),
                })
                .collect(),
        ),
        (a, _) => a.clone(),
    }
}

/// A value as YAML (JSON if it cannot be rendered as YAML).
pub(crate) fn yaml(v: &Value) -> String {
    serde_yaml::to_string(v)
        .or_else(|_| serde_json::to_string_pretty(v).map(|s| s + "\n"))
        .unwrap_or_else(|_| format!("{v}\n"))
}

/// A unified diff of the YAML renderings of `expected` and of the part of `actual` it is about.
pub fn yaml_diff(expected: &Value, actual: &Value) -> String {
    let projected = project(actual, expected);
    let (e, a) = (yaml(expected), yaml(&projected));
    if e == a {
        // The renderings agree (e.g. 1 and 1.0): show the whole actual value.
        return format!(
            "expected:\n{}actual:\n{}",
            indent(&e),
            indent(&yaml(actual))
        );
    }
    diff_text(&e, &a)
}

fn diff_text(expected: &str, actual: &str) -> String {
    similar::TextDiff::from_lines(expected, actual)
        .unified_diff()
        .context_radius(3)
        .header("expected", "actual")
        .to_string()
}

pub(crate) fn indent(s: &str) -> String {
    s.lines().map(|l| format!("    {l}\n")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn subsets_follow_the_expectation_shape() {
        let actual = json!({"a": {"b": 1, "c": [1, {"d": 2, "e": 3}]}, "f": null});
        assert!(is_subset(&json!({"a": {"c": [1, {"d": 2.0}]}}), &actual));
        assert!(!is_subset(&json!({"a": {"c": [1]}}), &actual));
        assert!(is_subset(&json!({"f": null, "g": null}), &actual));
        assert!(!is_subset(&json!({"a": null}), &actual));
        assert!(!is_subset(&json!({"a": {"x": 1}}), &actual));
    }

    #[test]
    fn diffs_show_only_what_the_expectation_names() {
        let actual = json!({"metadata": {"name": "a", "uid": "u"}, "data": {"k": "v"}});
        let diff = yaml_diff(&json!({"data": {"k": "w"}}), &actual);
        assert!(diff.contains("-  k: w"), "{diff}");
        assert!(diff.contains("+  k: v"), "{diff}");
        assert!(!diff.contains("uid"), "{diff}");
    }

    #[test]
    fn writes_are_compared_per_category_in_order() {
        let write = |category, body| Write {
            category,
            resource: "configmaps".into(),
            namespace: Some("ns".into()),
            name: Some("a".into()),
            body,
            position: 0,
        };
        let mut e = Expectations::default();
        e.push(Category::Apply, Expected::Body(json!({"data": {"k": "v"}})));
        assert!(
            e.compare(&[write(Category::Apply, json!({"data": {"k": "v"}}))])
                .is_empty()
        );
        let problems = e.compare(&[
            write(Category::Apply, json!({"data": {"k": "x"}})),
            write(Category::Delete, Value::Null),
        ]);
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert!(problems[0].starts_with("apply #0"), "{}", problems[0]);
        assert!(
            problems[1].starts_with("unexpected delete #0"),
            "{}",
            problems[1]
        );
        assert_eq!(e.compare(&[]).len(), 1);
    }
}
