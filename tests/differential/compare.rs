//! Normalizing two transcripts (what differs between any two runs) and comparing them, with the named
//! deviations accepted.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use crate::support::{Deviation, Exchange};

/// An exchange after normalization: what is compared.
#[derive(Debug, Clone)]
pub struct Normalized {
    pub label: String,
    pub request: String,
    pub status: u16,
    pub body: Value,
}

const TIME_KEYS: [&str; 5] = [
    "creationTimestamp",
    "deletionTimestamp",
    "time",
    "lastTransitionTime",
    "lastUpdateTime",
];

/// The characters of a generated name suffix (`k8s.io/apimachinery/pkg/util/rand`).
const SUFFIX_ALPHABET: &str = "bcdfghjklmnpqrstvwxz2456789";

/// Replaces what differs between any two runs: the namespace, generated name suffixes (when they look like
/// kube-apiserver's five characters), uids and resourceVersions (by ordinal of first appearance), a list's
/// own resourceVersion, continue tokens and timestamps; uids inside other strings too.
pub fn normalize(exchanges: &[Exchange], ns: &str) -> Vec<Normalized> {
    let mut generated = BTreeMap::new();
    for e in exchanges {
        collect_generated(&e.body, &mut generated);
    }
    let mut replacements: Vec<(String, String)> = generated.into_iter().collect();
    replacements.sort_by_key(|(from, _)| std::cmp::Reverse(from.len()));
    replacements.push((ns.to_string(), "<ns>".to_string()));

    let mut ids = Ordinals::default();
    let walked: Vec<(Value, String)> = exchanges
        .iter()
        .map(|e| {
            let mut body = e.body.clone();
            walk(&mut body, None, &mut ids);
            let mut path = e.path.clone();
            for (from, to) in &replacements {
                path = path.replace(from, to);
            }
            (body, normalize_query(&path, &mut ids))
        })
        .collect();
    // uids also appear inside messages (a failed uid precondition names both).
    replacements.extend(
        ids.uids
            .iter()
            .map(|(uid, n)| (uid.clone(), format!("<uid-{n}>"))),
    );
    exchanges
        .iter()
        .zip(walked)
        .map(|(e, (mut body, path))| {
            rewrite_strings(&mut body, &replacements);
            Normalized {
                label: e.label.clone(),
                request: format!("{} {}", e.method, path),
                status: e.status,
                body,
            }
        })
        .collect()
}

#[derive(Default)]
struct Ordinals {
    uids: BTreeMap<String, usize>,
    rvs: BTreeMap<String, usize>,
}

impl Ordinals {
    fn uid(&mut self, v: &str) -> String {
        let n = self.uids.len() + 1;
        format!("<uid-{}>", self.uids.entry(v.to_string()).or_insert(n))
    }
    fn rv(&mut self, v: &str) -> String {
        let n = self.rvs.len() + 1;
        format!("<rv-{}>", self.rvs.entry(v.to_string()).or_insert(n))
    }
}

fn collect_generated(v: &Value, out: &mut BTreeMap<String, String>) {
    match v {
        Value::Object(m) => {
            if let (Some(Value::String(prefix)), Some(Value::String(name))) =
                (m.get("generateName"), m.get("name"))
                && let Some(suffix) = name.strip_prefix(prefix.as_str())
                && suffix.len() == 5
                && suffix.chars().all(|c| SUFFIX_ALPHABET.contains(c))
            {
                out.insert(name.clone(), format!("{prefix}<suffix>"));
            }
            m.values().for_each(|v| collect_generated(v, out));
        }
        Value::Array(a) => a.iter().for_each(|v| collect_generated(v, out)),
        _ => {}
    }
}

fn is_list(m: &Map<String, Value>) -> bool {
    m.get("kind")
        .and_then(Value::as_str)
        .is_some_and(|k| k.ends_with("List") || k == "Table")
        || m.get("items").is_some_and(Value::is_array)
}

/// An age as kube-apiserver's printers write it (`0s`, `3m20s`, `2d3h`, `3y5d`).
fn is_age(s: &str) -> bool {
    let mut digits = false;
    for c in s.chars() {
        match c {
            '0'..='9' => digits = true,
            's' | 'm' | 'h' | 'd' | 'y' if digits => digits = false,
            _ => return false,
        }
    }
    !s.is_empty() && !digits
}

/// An RFC 3339 time in UTC as Kubernetes writes it (`2026-11-25T10:05:42Z`).
fn is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 20
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'T'
        && b[13] == b':'
        && s.ends_with('Z')
        && s[..4].chars().all(|c| c.is_ascii_digit())
}

/// The cells of a Table that depend on the clock: ages (also in `2 (5s ago)`) become `<age>`, timestamps
/// (the Created At column) `<time>`.
fn normalize_cells(rows: &mut Value) {
    let cells = rows
        .as_array_mut()
        .into_iter()
        .flatten()
        .filter_map(|row| row.get_mut("cells").and_then(Value::as_array_mut))
        .flatten();
    for cell in cells {
        let Value::String(s) = cell else { continue };
        if is_age(s) {
            *s = "<age>".into();
        } else if is_timestamp(s) {
            *s = "<time>".into();
        } else if let Some((count, ago)) = s.split_once(" (")
            && ago.strip_suffix(" ago)").is_some_and(is_age)
        {
            *s = format!("{count} (<age> ago)");
        }
    }
}

fn walk(v: &mut Value, key: Option<&str>, ids: &mut Ordinals) {
    match v {
        Value::Object(m) => {
            if is_list(m)
                && let Some(Value::Object(meta)) = m.get_mut("metadata")
            {
                if meta.contains_key("resourceVersion") {
                    meta.insert("resourceVersion".into(), json!("<list-rv>"));
                }
                if meta
                    .get("continue")
                    .and_then(Value::as_str)
                    .is_some_and(|c| !c.is_empty())
                {
                    meta.insert("continue".into(), json!("<continue>"));
                }
            }
            if m.get("kind").and_then(Value::as_str) == Some("Table")
                && let Some(rows) = m.get_mut("rows")
            {
                normalize_cells(rows);
            }
            if let Some(Value::Array(entries)) = m.get_mut("managedFields") {
                sort_managed_fields(entries);
            }
            for (k, v) in m.iter_mut() {
                walk(v, Some(k), ids);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|v| walk(v, None, ids)),
        Value::String(s) => match key {
            // Protobuf answers read back field by field carry empty strings where Go writes zero values.
            Some("uid") if !s.is_empty() => *s = ids.uid(s),
            Some("resourceVersion") if !s.starts_with('<') && !s.is_empty() => *s = ids.rv(s),
            Some(k) if TIME_KEYS.contains(&k) => *s = "<time>".into(),
            _ => {}
        },
        _ => {}
    }
}

/// Both servers order `managedFields` entries by operation, then by their time in seconds, then by manager,
/// apiVersion and subresource. Times differ between runs: a run whose writes fall on either side of a second
/// boundary orders two entries the other way. They are compared in the order without the time.
fn sort_managed_fields(entries: &mut [Value]) {
    let key = |e: &Value| {
        ["operation", "manager", "apiVersion", "subresource"]
            .map(|k| e[k].as_str().unwrap_or_default().to_string())
    };
    entries.sort_by_key(key);
}

fn rewrite_strings(v: &mut Value, replacements: &[(String, String)]) {
    match v {
        Value::Object(m) => m
            .values_mut()
            .for_each(|v| rewrite_strings(v, replacements)),
        Value::Array(a) => a.iter_mut().for_each(|v| rewrite_strings(v, replacements)),
        Value::String(s) => {
            for (from, to) in replacements {
                if s.contains(from.as_str()) {
                    *s = s.replace(from.as_str(), to);
                }
            }
        }
        _ => {}
    }
}

fn normalize_query(path: &str, ids: &mut Ordinals) -> String {
    let Some((base, query)) = path.split_once('?') else {
        return path.to_string();
    };
    let params: Vec<String> = query
        .split('&')
        .map(|p| match p.split_once('=') {
            Some(("resourceVersion", v)) => format!("resourceVersion={}", ids.rv(v)),
            Some(("continue", _)) => "continue=<continue>".to_string(),
            _ => p.to_string(),
        })
        .collect();
    format!("{base}?{}", params.join("&"))
}

/// Every difference between two normalized transcripts, minus the accepted deviations, as a readable report
/// (empty when they agree). Deviations that accepted nothing are reported too.
pub fn compare(memory: &[Normalized], real: &[Normalized], deviations: &[Deviation]) -> String {
    let mut differences = Vec::new();
    if memory.len() != real.len() {
        differences.push((
            "/exchanges".to_string(),
            format!("{} exchanges", memory.len()),
            format!("{} exchanges", real.len()),
        ));
    }
    for (m, r) in memory.iter().zip(real) {
        let at = m.label.clone();
        if m.label != r.label || m.request != r.request {
            differences.push((
                format!("{at}:/request"),
                format!("{} {}", m.label, m.request),
                format!("{} {}", r.label, r.request),
            ));
            continue;
        }
        if m.status != r.status {
            differences.push((
                format!("{at}:/status"),
                m.status.to_string(),
                r.status.to_string(),
            ));
        }
        diff(&format!("{at}:/body"), &m.body, &r.body, &mut differences);
    }
    let mut used = vec![false; deviations.len()];
    let mut report = String::new();
    for (path, m, r) in &differences {
        let accepted = deviations
            .iter()
            .position(|d| d.paths.iter().any(|p| glob(p, path)));
        match accepted {
            Some(i) => used[i] = true,
            None => report.push_str(&format!(
                "  {path}\n      in-memory: {m}\n      real:      {r}\n"
            )),
        }
    }
    for (d, used) in deviations.iter().zip(used) {
        if !used {
            report.push_str(&format!(
                "  deviation {:?} no longer observed; remove it from the scenario and the docs\n",
                d.name
            ));
        }
    }
    if !report.is_empty() {
        report.push_str("\nrequests (normalized, in-memory):\n");
        for m in memory {
            report.push_str(&format!("  {}: {} -> {}\n", m.label, m.request, m.status));
        }
    }
    report
}

fn show(v: Option<&Value>) -> String {
    match v {
        None => "(absent)".into(),
        Some(v) => {
            let s = v.to_string();
            if s.chars().count() > 400 {
                format!("{}…", s.chars().take(400).collect::<String>())
            } else {
                s
            }
        }
    }
}

fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

fn diff(path: &str, m: &Value, r: &Value, out: &mut Vec<(String, String, String)>) {
    match (m, r) {
        (Value::Object(a), Value::Object(b)) => {
            let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for k in keys {
                let at = format!("{path}/{}", escape(k));
                match (a.get(k), b.get(k)) {
                    (Some(x), Some(y)) => diff(&at, x, y, out),
                    (x, y) => out.push((at, show(x), show(y))),
                }
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            for i in 0..a.len().max(b.len()) {
                let at = format!("{path}/{i}");
                match (a.get(i), b.get(i)) {
                    (Some(x), Some(y)) => diff(&at, x, y, out),
                    (x, y) => out.push((at, show(x), show(y))),
                }
            }
        }
        (a, b) if a == b => {}
        (a, b) => out.push((path.to_string(), show(Some(a)), show(Some(b)))),
    }
}

/// `*` matches any run of characters.
fn glob(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let Some(rest) = text.strip_prefix(parts[0]) else {
        return false;
    };
    let mut rest = rest;
    let last = parts[parts.len() - 1];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

#[test]
fn ages_are_recognized() {
    for age in ["0s", "45s", "3m20s", "2d3h", "3y5d"] {
        assert!(is_age(age), "{age}");
    }
    for other in ["", "5", "s", "1/1", "Running", "10.0.0.1", "3m2"] {
        assert!(!is_age(other), "{other}");
    }
}

#[test]
fn managed_fields_are_compared_in_the_order_without_their_time() {
    let entry = |manager: &str, subresource: &str, time: &str| {
        json!({"manager": manager, "operation": "Update", "apiVersion": "v1", "subresource": subresource,
            "time": time})
    };
    // The status write came a second before the spec's on one server, in the same second on the other.
    let mut one = json!({"metadata": {"managedFields": [
        entry("m", "status", "2026-11-26T10:00:00Z"), entry("m", "", "2026-11-26T10:00:01Z")]}});
    let mut other = json!({"metadata": {"managedFields": [
        entry("m", "", "2026-11-26T10:00:05Z"), entry("m", "status", "2026-11-26T10:00:05Z")]}});
    walk(&mut one, None, &mut Ordinals::default());
    walk(&mut other, None, &mut Ordinals::default());
    assert_eq!(one, other);
}

#[test]
fn globs_match_runs_of_characters() {
    assert!(glob("a:/body/*/x", "a:/body/items/0/x"));
    assert!(glob(
        "a:/body/metadata/managedFields*",
        "a:/body/metadata/managedFields/0/time"
    ));
    assert!(!glob("a:/body/*/x", "b:/body/items/0/x"));
    assert!(glob("exact", "exact"));
    assert!(!glob("exa", "exact"));
}
