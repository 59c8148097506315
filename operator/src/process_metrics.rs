//! The process metrics every Prometheus dashboard expects, with the standard names the Go and Python clients
//! export: `process_cpu_seconds_total`, `process_resident_memory_bytes`, `process_virtual_memory_bytes`,
//! `process_open_fds`, `process_max_fds` and `process_start_time_seconds`, read from `/proc` at each scrape
//! (on Linux; elsewhere none are exported).

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;

/// Reads the process's figures on each scrape.
#[derive(Debug, Default)]
pub(crate) struct ProcessCollector;

/// One scrape's figures.
#[derive(Debug, Default, PartialEq)]
struct Figures {
    cpu_seconds: f64,
    resident_bytes: f64,
    virtual_bytes: f64,
    open_fds: Option<f64>,
    max_fds: Option<f64>,
    start_time_seconds: Option<f64>,
}

#[cfg(target_os = "linux")]
fn figures() -> Option<Figures> {
    let me = procfs::process::Process::myself().ok()?;
    let stat = me.stat().ok()?;
    let ticks = procfs::ticks_per_second() as f64;
    let start_time_seconds = procfs::boot_time_secs()
        .ok()
        .map(|boot| boot as f64 + stat.starttime as f64 / ticks);
    let max_fds = me
        .limits()
        .ok()
        .and_then(|l| match l.max_open_files.soft_limit {
            procfs::process::LimitValue::Value(v) => Some(v as f64),
            procfs::process::LimitValue::Unlimited => None,
        });
    Some(Figures {
        cpu_seconds: (stat.utime + stat.stime) as f64 / ticks,
        resident_bytes: (stat.rss * procfs::page_size()) as f64,
        virtual_bytes: stat.vsize as f64,
        open_fds: me.fd_count().ok().map(|n| n as f64),
        max_fds,
        start_time_seconds,
    })
}

#[cfg(not(target_os = "linux"))]
fn figures() -> Option<Figures> {
    None
}

impl Collector for ProcessCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let Some(f) = figures() else {
            return Ok(());
        };
        let cpu = ConstCounter::new(f.cpu_seconds);
        // The encoder adds `_total` to a counter's name.
        cpu.encode(encoder.encode_descriptor(
            "process_cpu_seconds",
            "Total user and system CPU time spent in seconds.",
            None,
            cpu.metric_type(),
        )?)?;
        let gauges = [
            (
                "process_resident_memory_bytes",
                "Resident memory size in bytes.",
                Some(f.resident_bytes),
            ),
            (
                "process_virtual_memory_bytes",
                "Virtual memory size in bytes.",
                Some(f.virtual_bytes),
            ),
            (
                "process_open_fds",
                "Number of open file descriptors.",
                f.open_fds,
            ),
            (
                "process_max_fds",
                "Maximum number of open file descriptors.",
                f.max_fds,
            ),
            (
                "process_start_time_seconds",
                "Start time of the process since unix epoch in seconds.",
                f.start_time_seconds,
            ),
        ];
        for (name, help, value) in gauges {
            if let Some(v) = value {
                let gauge = ConstGauge::new(v);
                gauge.encode(encoder.encode_descriptor(
                    name,
                    help,
                    None,
                    gauge.metric_type(),
                )?)?;
            }
        }
        Ok(())
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    #[test]
    fn the_process_figures_are_read_and_plausible() {
        let f = figures().expect("/proc is readable");
        assert!(f.resident_bytes > 1e6, "{f:?}");
        assert!(f.virtual_bytes >= f.resident_bytes, "{f:?}");
        assert!(f.open_fds.is_some_and(|n| n >= 3.0), "{f:?}");
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs_f64();
        let started = f.start_time_seconds.unwrap();
        assert!(
            started <= now + 1.0 && started > now - 3600.0,
            "{started} vs {now}"
        );
    }

    #[test]
    fn the_scrape_has_the_standard_names() {
        let text = crate::metrics::Metrics::global().encode();
        for line in [
            "# TYPE process_cpu_seconds counter",
            "process_cpu_seconds_total ",
            "process_resident_memory_bytes ",
            "process_virtual_memory_bytes ",
            "process_open_fds ",
            "process_max_fds ",
            "process_start_time_seconds ",
        ] {
            assert!(text.contains(line), "no `{line}` in\n{text}");
        }
    }
}
