//! What kube-apiserver's own metrics say of the operator's requests: counts by verb, and the server's time per
//! write.

use std::collections::BTreeMap;

use kube::Client;

/// The resources the operators read and write (the API server's own leases and endpoints are not theirs).
const OPERATOR_RESOURCES: [&str; 8] = [
    "webapps",
    "databases",
    "deployments",
    "statefulsets",
    "services",
    "secrets",
    "configmaps",
    "events",
];
/// Requests kube-apiserver served on the operator's resources, by verb, from its own metrics.
pub(super) async fn request_counts(client: &Client) -> anyhow::Result<BTreeMap<String, u64>> {
    let request = http::Request::get("/metrics").body(Vec::new())?;
    let text = client.request_text(request).await?;
    let mut out = BTreeMap::new();
    for line in text
        .lines()
        .filter(|l| l.starts_with("apiserver_request_total{"))
    {
        let (Some(verb), Some(resource)) = (label(line, "verb"), label(line, "resource")) else {
            continue;
        };
        if !OPERATOR_RESOURCES.contains(&resource.as_str()) {
            continue;
        }
        let count = sample(line) as u64;
        *out.entry(verb).or_default() += count;
    }
    Ok(out)
}

/// The API server's time serving writes to `resource` so far, by verb: seconds in all and requests
/// (`apiserver_request_duration_seconds`, the main resource only).
pub(super) async fn write_durations(
    client: &Client,
    resource: &str,
) -> anyhow::Result<BTreeMap<String, (f64, f64)>> {
    let request = http::Request::get("/metrics").body(Vec::new())?;
    let text = client.request_text(request).await?;
    let mut out: BTreeMap<String, (f64, f64)> = BTreeMap::new();
    for line in text.lines() {
        let (sum, rest) = match line.strip_prefix("apiserver_request_duration_seconds_sum{") {
            Some(rest) => (true, rest),
            None => match line.strip_prefix("apiserver_request_duration_seconds_count{") {
                Some(rest) => (false, rest),
                None => continue,
            },
        };
        let (Some(verb), Some(r), Some(sub)) = (
            label(rest, "verb"),
            label(rest, "resource"),
            label(rest, "subresource"),
        ) else {
            continue;
        };
        if r != resource || !sub.is_empty() || !is_write(&verb) {
            continue;
        }
        let value = sample(line);
        let entry = out.entry(verb).or_default();
        if sum {
            entry.0 += value;
        } else {
            entry.1 += value;
        }
    }
    Ok(out)
}

/// A Prometheus sample's label value (`name="value"`).
fn label(line: &str, name: &str) -> Option<String> {
    line.split(&format!("{name}=\""))
        .nth(1)?
        .split('"')
        .next()
        .map(str::to_string)
}

/// A Prometheus sample's value (0 where it does not parse).
fn sample(line: &str) -> f64 {
    line.rsplit(' ')
        .next()
        .and_then(|v| v.parse::<f64>().ok())
        .unwrap_or(0.0)
}

pub(super) fn is_write(verb: &str) -> bool {
    !["GET", "LIST", "WATCH", "WATCHLIST"].contains(&verb)
}

pub(super) fn delta(
    before: &BTreeMap<String, u64>,
    after: &BTreeMap<String, u64>,
    keep: impl Fn(&str) -> bool,
) -> BTreeMap<String, u64> {
    after
        .iter()
        .filter(|(verb, _)| keep(verb))
        .map(|(verb, n)| (verb.clone(), n - before.get(verb).copied().unwrap_or(0)))
        .filter(|(_, n)| *n > 0)
        .collect()
}

pub(super) fn describe(counts: &BTreeMap<String, u64>) -> String {
    if counts.is_empty() {
        return "0".into();
    }
    let total: u64 = counts.values().sum();
    let parts: Vec<String> = counts.iter().map(|(v, n)| format!("{v} {n}")).collect();
    format!("{total} ({})", parts.join(", "))
}
