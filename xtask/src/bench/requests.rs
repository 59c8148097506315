//! What kube-apiserver's own metrics say of the operator's requests: counts by verb, and the server's time per
//! write.

use std::collections::BTreeMap;

use kube::Client;
use kubewright_envtest::metrics::{requests, samples, scrape};

pub(super) use kubewright_envtest::metrics::is_write;

/// Requests kube-apiserver served on the operators' resources, by verb, from its own metrics.
pub(super) async fn request_counts(client: &Client) -> anyhow::Result<BTreeMap<String, u64>> {
    let page = scrape(client).await?;
    let mut out = BTreeMap::new();
    for ((verb, _), count) in requests(&page, |_| true) {
        *out.entry(verb).or_default() += count;
    }
    Ok(out)
}

/// LIST requests kube-apiserver served on the operators' resources, by resource.
pub(super) async fn list_counts(client: &Client) -> anyhow::Result<BTreeMap<String, u64>> {
    let page = scrape(client).await?;
    Ok(requests(&page, |verb| verb == "LIST")
        .into_iter()
        .map(|((_, resource), count)| (resource, count))
        .collect())
}

/// The API server's time serving writes to `resource` so far, by verb: seconds in all and requests
/// (`apiserver_request_duration_seconds`, the main resource only).
pub(super) async fn write_durations(
    client: &Client,
    resource: &str,
) -> anyhow::Result<BTreeMap<String, (f64, f64)>> {
    let page = scrape(client).await?;
    let mut out: BTreeMap<String, (f64, f64)> = BTreeMap::new();
    for (sum, name) in [
        (true, "apiserver_request_duration_seconds_sum"),
        (false, "apiserver_request_duration_seconds_count"),
    ] {
        for sample in samples(&page, name) {
            let (Some(verb), Some(r), Some(sub)) = (
                sample.label("verb"),
                sample.label("resource"),
                sample.label("subresource"),
            ) else {
                continue;
            };
            if r != resource || !sub.is_empty() || !is_write(verb) {
                continue;
            }
            let entry = out.entry(verb.to_string()).or_default();
            if sum {
                entry.0 += sample.value;
            } else {
                entry.1 += sample.value;
            }
        }
    }
    Ok(out)
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
