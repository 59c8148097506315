//! What the benchmark adds on a whole cluster (`--cluster`: kube-controller-manager, kube-scheduler and kwok's
//! nodes beside kube-apiserver): the operator's own requests from its client metrics (the API server's count
//! holds the controllers' too), the 409 conflicts by writer, and whether the simulated nodes kept up.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use kube::Client;
use kube::api::{Api, DynamicObject, ListParams};
use kubewright_envtest::metrics::{is_write, samples, scrape};

/// Requests by method and response code, from a client's `rest_client_requests_total` (the metric both this
/// framework and controller-runtime expose for their clients).
pub(super) type ClientRequests = BTreeMap<(String, String), u64>;

/// The operator's own requests so far, from its metrics page.
pub(super) fn client_requests(page: &str) -> ClientRequests {
    let mut out = ClientRequests::new();
    for sample in samples(page, "rest_client_requests_total") {
        let (Some(method), Some(code)) = (sample.label("method"), sample.label("code")) else {
            continue;
        };
        *out.entry((method.to_string(), code.to_string()))
            .or_default() += sample.value as u64;
    }
    out
}

/// `after - before`, per method and code.
pub(super) fn client_delta(before: &ClientRequests, after: &ClientRequests) -> ClientRequests {
    after
        .iter()
        .map(|(k, n)| (k.clone(), n - before.get(k).copied().unwrap_or(0)))
        .filter(|(_, n)| *n > 0)
        .collect()
}

/// Requests by method (all codes), `GET` included (lists and watches are `GET`s on a client).
pub(super) fn by_method(requests: &ClientRequests) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for ((method, _), n) in requests {
        *out.entry(method.clone()).or_default() += n;
    }
    out
}

/// The writes (every method but `GET`), all codes.
pub(super) fn client_writes(requests: &ClientRequests) -> u64 {
    requests
        .iter()
        .filter(|((method, _), _)| method != "GET")
        .map(|(_, n)| n)
        .sum()
}

/// The writes (every method but `GET`), by method and code.
pub(super) fn client_writes_by_code(requests: &ClientRequests) -> ClientRequests {
    requests
        .iter()
        .filter(|((method, _), _)| method != "GET")
        .map(|(k, n)| (k.clone(), *n))
        .collect()
}

/// The 409 answers, by method.
pub(super) fn conflicts(requests: &ClientRequests) -> BTreeMap<String, u64> {
    requests
        .iter()
        .filter(|((_, code), _)| code == "409")
        .map(|((method, _), n)| (method.clone(), *n))
        .collect()
}

/// The 409 answers kube-apiserver gave so far, by verb, resource and subresource, whoever asked: the
/// operator's writes are `PATCH`es (and `POST`s of children that exist), kube-controller-manager's are `PUT`s
/// (updates guarded by the `resourceVersion` it read).
pub(super) async fn server_conflicts(
    client: &Client,
) -> anyhow::Result<BTreeMap<(String, String), u64>> {
    server_requests(client, |_, code| code == "409").await
}

/// The writes kube-apiserver served so far, by verb, resource and subresource, whoever asked (on a quiet
/// cluster, the controllers' are their leader leases and kwok's node heartbeats: the rest are the operator's).
pub(super) async fn server_writes(
    client: &Client,
) -> anyhow::Result<BTreeMap<(String, String), u64>> {
    server_requests(client, |verb, _| is_write(verb)).await
}

/// kube-apiserver's `apiserver_request_total` by verb and `resource[/subresource]`, for the verbs and codes
/// `keep` admits.
async fn server_requests(
    client: &Client,
    keep: impl Fn(&str, &str) -> bool,
) -> anyhow::Result<BTreeMap<(String, String), u64>> {
    let page = scrape(client).await?;
    let mut out = BTreeMap::new();
    for sample in samples(&page, "apiserver_request_total") {
        let verb = sample.label("verb").unwrap_or_default();
        if !keep(verb, sample.label("code").unwrap_or_default()) {
            continue;
        }
        let resource = match sample.label("subresource") {
            Some(sub) if !sub.is_empty() => {
                format!("{}/{sub}", sample.label("resource").unwrap_or_default())
            }
            _ => sample.label("resource").unwrap_or_default().to_string(),
        };
        *out.entry((verb.to_string(), resource)).or_default() += sample.value as u64;
    }
    Ok(out)
}

/// The server's 409s between two looks.
pub(super) fn server_delta(
    before: &BTreeMap<(String, String), u64>,
    after: &BTreeMap<(String, String), u64>,
) -> BTreeMap<(String, String), u64> {
    after
        .iter()
        .map(|(k, n)| (k.clone(), n - before.get(k).copied().unwrap_or(0)))
        .filter(|(_, n)| *n > 0)
        .collect()
}

/// `PATCH deployments 3, PUT deployments/status 1`, or `0`.
pub(super) fn describe_pairs<K: std::fmt::Display, L: std::fmt::Display>(
    counts: &BTreeMap<(K, L), u64>,
) -> String {
    if counts.is_empty() {
        return "0".into();
    }
    let total: u64 = counts.values().sum();
    let parts: Vec<String> = counts
        .iter()
        .map(|((a, b), n)| format!("{a} {b} {n}"))
        .collect();
    format!("{total} ({})", parts.join(", "))
}

/// Pods by phase in `namespace`: whether kwok's nodes kept up with the workloads (all `Running` at converge).
pub(super) async fn pod_phases(
    client: &Client,
    namespace: &str,
) -> anyhow::Result<BTreeMap<String, u64>> {
    let pods: Api<k8s_openapi::api::core::v1::Pod> = Api::namespaced(client.clone(), namespace);
    let mut out = BTreeMap::new();
    for pod in pods.list(&ListParams::default()).await?.items {
        let phase = pod
            .status
            .and_then(|s| s.phase)
            .unwrap_or_else(|| "Unknown".into());
        *out.entry(phase).or_default() += 1;
    }
    Ok(out)
}

/// Waits until the status of each parent of `names` describes its generation and reports its workload rolled
/// out (`Ready=True`, and `status.availableReplicas` equal to `spec.replicas` where the status has it), at most
/// `limit` in all; returns how long that took, or `None` when it did not happen. On a whole cluster a patched
/// workload keeps rolling out after the patch's write: an operator stopped before its status caught up has that
/// change to reflect when restarted, which is no write of an idle operator's.
pub(super) async fn settle(
    parents: &Api<DynamicObject>,
    names: &[&str],
    limit: Duration,
) -> anyhow::Result<Option<Duration>> {
    let started = Instant::now();
    let mut waiting: Vec<&str> = names.to_vec();
    while started.elapsed() < limit {
        let mut still = Vec::new();
        for name in waiting {
            if !rolled_out(&parents.get(name).await?) {
                still.push(name);
            }
        }
        waiting = still;
        if waiting.is_empty() {
            return Ok(Some(started.elapsed()));
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    Ok(None)
}

/// Whether `parent`'s status describes its generation and reports its workload rolled out.
fn rolled_out(parent: &DynamicObject) -> bool {
    let status = &parent.data["status"];
    let ready = status["conditions"].as_array().is_some_and(|cs| {
        cs.iter()
            .any(|c| c["type"] == "Ready" && c["status"] == "True")
    });
    ready
        && status["observedGeneration"].as_i64() == parent.metadata.generation
        && (status.get("availableReplicas").is_none()
            || status["availableReplicas"].as_i64() == spec_replicas(&parent.data["spec"]))
}

/// A parent's replicas: `spec.replicas`, or `spec.scale.replicas` of a WebApp at `v2`.
fn spec_replicas(spec: &serde_json::Value) -> Option<i64> {
    spec["replicas"]
        .as_i64()
        .or_else(|| spec["scale"]["replicas"].as_i64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_metrics_are_read_by_method_and_code() {
        let page = "\
rest_client_requests_total{code=\"200\",host=\"127.0.0.1:6443\",method=\"GET\"} 4
rest_client_requests_total{code=\"201\",host=\"127.0.0.1:6443\",method=\"POST\"} 2000
rest_client_requests_total{code=\"409\",method=\"PATCH\"} 3
rest_client_requests_total{code=\"200\",method=\"PATCH\"} 1000";
        let requests = client_requests(page);
        assert_eq!(client_writes(&requests), 3003);
        assert_eq!(conflicts(&requests), BTreeMap::from([("PATCH".into(), 3)]));
        assert_eq!(by_method(&requests)["PATCH"], 1003);
        let later = client_requests(&page.replace("} 3", "} 5"));
        assert_eq!(
            conflicts(&client_delta(&requests, &later)),
            BTreeMap::from([("PATCH".into(), 2)])
        );
    }
}
