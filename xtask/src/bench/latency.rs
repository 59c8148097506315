//! Spec patch → workload update latencies, and the statistics the benchmark reports.

use std::time::{Duration, Instant};

use anyhow::bail;
use futures::StreamExt;
use kube::Client;
use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams};
use kube::runtime::{WatchStreamExt, watcher};
use serde_json::json;

use super::{Example, NAMESPACE};

/// The latency from a spec patch of one parent to the watch event of its workload's update, that of the patch
/// request alone, and that from the patched parent's watch event to the workload's, over `n` patches.
///
/// With `settle`, each patch waits until the operator's pass for the previous one has ended (the parent's
/// `status.observedGeneration` reached the patched generation), so each change finds the operator idle: the
/// issue's measure. Without it the patches follow each other as soon as the workload's update is seen, while the
/// pass that wrote it still publishes its event and writes the status; a patch then waits for that pass first.
pub(super) async fn patch_latencies(
    client: &Client,
    parents: &Api<DynamicObject>,
    version: &str,
    name: &str,
    patches: std::ops::Range<usize>,
    example: Example,
    settle: bool,
) -> anyhow::Result<Latencies> {
    let workload = match example {
        Example::Webapp => ApiResource::erase::<k8s_openapi::api::apps::v1::Deployment>(&()),
        Example::Database => ApiResource::erase::<k8s_openapi::api::apps::v1::StatefulSet>(&()),
    };
    let workloads: Api<DynamicObject> = Api::namespaced_with(client.clone(), NAMESPACE, &workload);
    let config = watcher::Config::default().fields(&format!("metadata.name={name}"));
    let mut updates = watcher::watcher(workloads, config.clone())
        .applied_objects()
        .boxed();
    let mut parent_updates = watcher::watcher(parents.clone(), config)
        .applied_objects()
        .boxed();
    // Each watch lists the parent first; polled once more, it opens its watch, so the first patch's events are seen
    // when they come rather than when a list answers.
    for stream in [&mut updates, &mut parent_updates] {
        let listed = tokio::time::timeout(Duration::from_secs(30), stream.next()).await;
        let Ok(Some(Ok(_))) = listed else {
            bail!("{name} was not listed");
        };
        let _ = tokio::time::timeout(Duration::from_millis(200), stream.next()).await;
    }
    let mut out = Latencies::default();
    for i in patches {
        // Each patch asks for other replicas than the one before: 2, 3, 2, ...
        let replicas = 2 + (i % 2) as i32;
        // A WebApp at `v2` holds its replicas in `spec.scale`.
        let patch = match (example, version) {
            (Example::Webapp, "v2") => json!({"spec": {"scale": {"replicas": replicas}}}),
            _ => json!({"spec": {"replicas": replicas}}),
        };
        let sent = Instant::now();
        let patched = parents
            .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await?;
        out.requests.push(ms(sent.elapsed()));
        let generation = patched.metadata.generation;
        // Both watches are read until each has shown its side: the patched parent (its generation), and the
        // workload with the patched replicas.
        let (mut seen, mut updated, mut settled) = (None, None, false);
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        while seen.is_none() || updated.is_none() {
            tokio::select! {
                next = updates.next(), if updated.is_none() => {
                    let Some(Ok(w)) = next else { bail!("the workload watch ended at patch {i}") };
                    if w.data["spec"]["replicas"].as_i64() == Some(i64::from(replicas)) {
                        updated = Some(Instant::now());
                    }
                }
                next = parent_updates.next(), if seen.is_none() => {
                    let Some(Ok(p)) = next else { bail!("the parent watch ended at patch {i}") };
                    if p.metadata.generation == generation {
                        seen = Some(Instant::now());
                        settled = p.data["status"]["observedGeneration"].as_i64() == generation;
                    }
                }
                () = tokio::time::sleep_until(deadline) => bail!("no workload update seen for patch {i}"),
            }
        }
        if let (Some(seen), Some(updated)) = (seen, updated) {
            out.patch_to_workload.push(ms(updated - sent));
            out.seen_to_workload
                .push(ms(updated.saturating_duration_since(seen)));
        }
        if !settle || settled {
            continue;
        }
        loop {
            let next = tokio::time::timeout(Duration::from_secs(30), parent_updates.next()).await;
            let Ok(Some(Ok(parent))) = next else {
                bail!("the operator did not report generation {generation:?} after patch {i}");
            };
            if parent.data["status"]["observedGeneration"].as_i64() == generation {
                break;
            }
        }
    }
    Ok(out)
}

pub(super) fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// What [`patch_latencies`] measured, in milliseconds, one value per patch.
#[derive(Default)]
pub(super) struct Latencies {
    /// From sending the patch to the workload's update on a watch.
    pub(super) patch_to_workload: Vec<f64>,
    /// The patch request alone.
    pub(super) requests: Vec<f64>,
    /// From the patched parent on a watch to the workload's update on a watch: the operator's share (its watch
    /// event, its pass, its write, the write's event), without the patch request.
    pub(super) seen_to_workload: Vec<f64>,
}

impl Latencies {
    /// The `n` slowest patches from patch to workload, each with its number and its parts: the patch request,
    /// its answer to the patched parent on the benchmark's watch, and that to the workload's update.
    pub(super) fn slowest(&self, n: usize) -> String {
        let mut order: Vec<usize> = (0..self.patch_to_workload.len()).collect();
        order.sort_by(|&a, &b| self.patch_to_workload[b].total_cmp(&self.patch_to_workload[a]));
        let parts: Vec<String> = order
            .into_iter()
            .take(n)
            .map(|i| {
                let (total, request, share) = (
                    self.patch_to_workload[i],
                    self.requests[i],
                    self.seen_to_workload[i],
                );
                format!(
                    "#{i} {total:.1} ms (request {request:.1}, to the watch {:.1}, operator {share:.1})",
                    total - request - share
                )
            })
            .collect();
        parts.join(", ")
    }
}

/// The middle value, or the mean of the two middle values of an even count.
pub(super) fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(|a, b| a.total_cmp(b));
    match sorted.len() {
        0 => 0.0,
        n if n % 2 == 1 => sorted[n / 2],
        n => (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0,
    }
}

pub(super) fn percentile(values: &[f64], p: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(|a, b| a.total_cmp(b));
    let rank = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[rank]
}
