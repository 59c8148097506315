//! The operator process under measurement: started on a kubeconfig, stopped with SIGTERM, its metrics
//! scraped and its CPU and memory read from `/proc`.

use std::path::Path;
use std::process::{Child, Command, Stdio};

use anyhow::{Context, bail};

/// The operator process, killed when dropped while it runs: a run that fails (a converge that does not finish,
/// say) leaves no operator behind it.
pub(super) struct Operator(pub(super) Child);

impl std::ops::Deref for Operator {
    type Target = Child;

    fn deref(&self) -> &Child {
        &self.0
    }
}

impl std::ops::DerefMut for Operator {
    fn deref_mut(&mut self) -> &mut Child {
        &mut self.0
    }
}

impl Drop for Operator {
    fn drop(&mut self) {
        if let Ok(None) = self.0.try_wait() {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}

/// Starts the operator on `kubeconfig`, serving its metrics on `metrics_port` when given.
pub(super) fn spawn(
    binary: &Path,
    kubeconfig: &Path,
    metrics_port: Option<u16>,
) -> anyhow::Result<Operator> {
    let mut command = Command::new(binary);
    command.arg("--kubeconfig").arg(kubeconfig);
    if let Some(port) = metrics_port {
        command.arg(format!("--metrics-bind-address=127.0.0.1:{port}"));
    }
    command
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .map(Operator)
        .context("starting the operator")
}

/// A local TCP port free now.
pub(super) fn free_port() -> anyhow::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}

/// The time passes waited in the operator's work queue and how many, and the time passes took and how many:
/// the metrics controller-runtime and this framework both expose.
pub(super) const QUEUE_WAIT: [&str; 4] = [
    "workqueue_queue_duration_seconds_sum",
    "workqueue_queue_duration_seconds_count",
    "controller_runtime_reconcile_time_seconds_sum",
    "controller_runtime_reconcile_time_seconds_count",
];

/// The passes the operator ran so far, all controllers and results together, from its own metrics
/// (`controller_runtime_reconcile_total`), and how many of them wrote nothing where the operator says
/// (`operator_passes_without_writes_total`, this framework's: controller-runtime has no such metric).
pub(super) async fn passes(port: u16) -> anyhow::Result<(u64, Option<u64>)> {
    passes_in(&metrics_page(port).await?)
}

/// [`passes`] as the metrics page `page` tells them.
pub(super) fn passes_in(page: &str) -> anyhow::Result<(u64, Option<u64>)> {
    const WITHOUT_WRITES: &str = "operator_passes_without_writes_total";
    let [total, without_writes] =
        sums_in(page, ["controller_runtime_reconcile_total", WITHOUT_WRITES])?;
    let reported = page.lines().any(|l| l.starts_with(WITHOUT_WRITES));
    Ok((total as u64, reported.then_some(without_writes as u64)))
}

/// The operator's metrics page.
pub(super) async fn metrics_page(port: u16) -> anyhow::Result<String> {
    use http_body_util::BodyExt;
    let client = hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
        .build_http::<http_body_util::Empty<bytes::Bytes>>();
    let uri: http::Uri = format!("http://127.0.0.1:{port}/metrics").parse()?;
    let response = client
        .get(uri)
        .await
        .context("reading the operator's metrics")?;
    let body = response.into_body().collect().await?.to_bytes();
    Ok(String::from_utf8_lossy(&body).into_owned())
}

/// The sum over every series of each named metric of the operator's (`name{...} value` or `name value`).
pub(super) async fn metric_sums<const N: usize>(
    port: u16,
    names: [&str; N],
) -> anyhow::Result<[f64; N]> {
    sums_in(&metrics_page(port).await?, names)
}

/// The sum over every series of each named metric on the metrics page `text`.
pub(super) fn sums_in<const N: usize>(text: &str, names: [&str; N]) -> anyhow::Result<[f64; N]> {
    let mut sums = [0.0; N];
    for line in text.lines() {
        for (name, sum) in names.iter().zip(sums.iter_mut()) {
            let Some(rest) = line.strip_prefix(name) else {
                continue;
            };
            if (rest.starts_with('{') || rest.starts_with(' '))
                && let Some(value) = line.rsplit(' ').next()
            {
                *sum += value.parse::<f64>().context("a metric's value")?;
            }
        }
    }
    Ok(sums)
}

/// SIGTERM, then wait for the process to end.
pub(super) fn stop(child: &mut Child) -> anyhow::Result<()> {
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()?;
    if !status.success() {
        bail!("kill -TERM {} failed", child.id());
    }
    child.wait()?;
    Ok(())
}

/// CPU seconds and memory of a process, from `/proc`.
pub(super) struct Usage {
    pub(super) cpu: f64,
    pub(super) peak_mib: f64,
    pub(super) rss_mib: f64,
}

pub(super) fn usage(pid: u32) -> anyhow::Result<Usage> {
    let process = procfs::process::Process::new(pid as i32)?;
    let stat = process.stat()?;
    let ticks = procfs::ticks_per_second() as f64;
    let status = process.status()?;
    let kib = |v: Option<u64>| v.unwrap_or(0) as f64 / 1024.0;
    Ok(Usage {
        cpu: (stat.utime + stat.stime) as f64 / ticks,
        peak_mib: kib(status.vmhwm),
        rss_mib: kib(status.vmrss),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_operator_dropped_while_it_runs_is_killed() {
        let operator = Operator(Command::new("sleep").arg("30").spawn().unwrap());
        let pid = operator.id();
        drop(operator);
        assert!(
            procfs::process::Process::new(pid as i32).is_err(),
            "process {pid} still runs"
        );
    }
}
