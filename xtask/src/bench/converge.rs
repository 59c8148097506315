//! Waiting for the operator to converge, and what it had spent when it did not within the bound.

use std::time::{Duration, Instant};

use anyhow::bail;
use futures::StreamExt;
use kube::api::{Api, DynamicObject};
use kube::runtime::watcher;

use super::Example;
use super::cluster;
use super::process::{metrics_page, passes_in, usage};

/// Prints what an operator that did not converge had spent by then (its CPU, peak memory, passes and the 409s
/// its requests met), so that a side that does not converge within the bound still says what it cost. A figure
/// that cannot be read is left out.
pub(super) async fn report_unconverged(pid: u32, metrics_port: u16, after: Duration) {
    let mut figures = Vec::new();
    if let Ok(u) = usage(pid) {
        figures.push(format!("CPU {:.2} s, peak {:.1} MiB", u.cpu, u.peak_mib));
    }
    if let Ok(page) = metrics_page(metrics_port).await {
        if let Ok((passes, _)) = passes_in(&page) {
            figures.push(format!("{passes} passes"));
        }
        let conflicts: u64 = cluster::conflicts(&cluster::client_requests(&page))
            .values()
            .sum();
        figures.push(format!("{conflicts} 409 answers to its requests"));
    }
    eprintln!(
        "bench-cluster: not converged after {:.0} s; the operator by then: {}",
        after.as_secs_f64(),
        figures.join(", ")
    );
}

/// Waits until every parent's status describes its generation and names its children, following the parents
/// with one watch (a list of every parent every few milliseconds would cost the API server, on the same cores,
/// more than the operator does at 10,000 parents); returns the lists and watches that took (the benchmark's own
/// requests, not the operator's).
pub(super) async fn wait_converged(
    parents: &Api<DynamicObject>,
    n: usize,
    example: Example,
    cluster: bool,
) -> anyhow::Result<(u64, u64)> {
    // 20 minutes, or three tenths of a second per parent past 4,000 (at 3,000 on a whole cluster of two shared
    // cores one operator took 422 s, and the time grows faster than the count: 10,000 took 1,541 s once and
    // had 6,863 converged at 2,000 s another time).
    let bound = Duration::from_secs(1200)
        .max(Duration::from_millis(300) * u32::try_from(n).unwrap_or(u32::MAX));
    let deadline = Instant::now() + bound;
    let mut converged = std::collections::HashSet::new();
    let mut lists = 0;
    // One page per list, so that each of its lists is one LIST request (with kube's default pages of 500, the
    // 20 requests of a list of 10,000 were counted as one and left as the operator's).
    let page = u32::try_from(n + 1).unwrap_or(u32::MAX);
    let mut events =
        watcher::watcher(parents.clone(), watcher::Config::default().page_size(page)).boxed();
    while converged.len() < n {
        let left = deadline.saturating_duration_since(Instant::now());
        let event = match tokio::time::timeout(left, events.next()).await {
            Ok(Some(event)) => event?,
            Ok(None) => bail!("the watch of the parents ended"),
            Err(_) => bail!(
                "{} of {n} converged after {} s",
                converged.len(),
                bound.as_secs()
            ),
        };
        match event {
            watcher::Event::Init => lists += 1,
            watcher::Event::InitApply(p) | watcher::Event::Apply(p) => {
                let name = p.metadata.name.clone().unwrap_or_default();
                if example.converged(&p, cluster) {
                    converged.insert(name);
                } else {
                    converged.remove(&name);
                }
            }
            watcher::Event::Delete(p) => {
                converged.remove(&p.metadata.name.clone().unwrap_or_default());
            }
            watcher::Event::InitDone => {}
        }
    }
    Ok((lists, lists))
}
