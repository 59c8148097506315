//! Runs one spec: the test binary focused on it, in its own process, with a deadline.

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;

use super::binary::{Spec, go_regex_exact, spec_reports};

/// What the e2e framework's clients send and ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ContentType {
    /// client-go's default: protobuf request bodies and responses for built-in kinds.
    Protobuf,
    /// JSON everywhere (for diagnosis: a failure under protobuf only is a protobuf decoding gap).
    Json,
}

impl ContentType {
    fn mime(self) -> &'static str {
        match self {
            ContentType::Protobuf => "application/vnd.kubernetes.protobuf",
            ContentType::Json => "application/json",
        }
    }
}

/// How one spec ended on one server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Passed,
    /// Failed, with the first line of ginkgo's failure message.
    Failed(String),
    /// Still running at the deadline.
    TimedOut,
    /// Skipped by the spec itself (e.g. a feature the server does not announce).
    Skipped(String),
    /// The process ended without a report for the spec.
    Broken(String),
}

impl Outcome {
    /// A short cell for the table.
    pub fn cell(&self) -> &'static str {
        match self {
            Outcome::Passed => "pass",
            Outcome::Failed(_) => "FAIL",
            Outcome::TimedOut => "timeout",
            Outcome::Skipped(_) => "skip",
            Outcome::Broken(_) => "broken",
        }
    }

    pub fn passed(&self) -> bool {
        matches!(self, Outcome::Passed)
    }

    /// What went wrong, if anything.
    pub fn detail(&self) -> Option<&str> {
        match self {
            Outcome::Passed | Outcome::TimedOut => None,
            Outcome::Failed(m) | Outcome::Skipped(m) | Outcome::Broken(m) => Some(m),
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.detail() {
            Some(d) => write!(f, "{}: {d}", self.cell()),
            None => f.write_str(self.cell()),
        }
    }
}

/// The fixed inputs of every spec run against one server.
pub struct Runner {
    pub binary: PathBuf,
    pub kubeconfig: PathBuf,
    pub content_type: ContentType,
    pub timeout: Duration,
    /// Where each spec's output and report go.
    pub logs: PathBuf,
}

impl Runner {
    /// Runs `spec` (number `index` of the selection), returning its outcome and how long it took.
    pub async fn run(&self, index: usize, spec: &Spec) -> (Outcome, Duration) {
        let started = Instant::now();
        let report = self.logs.join(format!("{index:03}.json"));
        let log = self.logs.join(format!("{index:03}.log"));
        let outcome = self.run_to(spec, &report, &log).await;
        (outcome, started.elapsed())
    }

    async fn run_to(&self, spec: &Spec, report: &Path, log: &Path) -> Outcome {
        let _ = std::fs::remove_file(report);
        let log_file = match std::fs::File::create(log) {
            Ok(f) => f,
            Err(e) => return Outcome::Broken(format!("creating {}: {e}", log.display())),
        };
        let stderr = match log_file.try_clone() {
            Ok(f) => f,
            Err(e) => return Outcome::Broken(format!("{}: {e}", log.display())),
        };
        // Ginkgo interrupts the spec at its suite timeout and gives its clean-up a grace period; the
        // process is killed only when that does not end it either.
        let grace = Duration::from_secs(10);
        let mut child = match tokio::process::Command::new(&self.binary)
            .arg(format!("--kubeconfig={}", self.kubeconfig.display()))
            .arg("--provider=skeleton")
            // The service-account controller of kube-controller-manager is not part of either server.
            .arg("--e2e-verify-service-account=false")
            .arg(format!(
                "--kube-api-content-type={}",
                self.content_type.mime()
            ))
            .arg(format!("--ginkgo.focus-file={}", spec.location))
            .arg(format!("--ginkgo.focus={}", go_regex_exact(&spec.text)))
            .arg(format!("--ginkgo.timeout={}s", self.timeout.as_secs()))
            .arg(format!("--ginkgo.grace-period={}s", grace.as_secs()))
            .arg("--ginkgo.no-color")
            .arg("--ginkgo.v")
            .arg(format!("--ginkgo.json-report={}", report.display()))
            .current_dir(&self.logs)
            .stdin(Stdio::null())
            .stdout(log_file)
            .stderr(stderr)
            .kill_on_drop(true)
            .spawn()
        {
            Ok(child) => child,
            Err(e) => return Outcome::Broken(format!("starting {}: {e}", self.binary.display())),
        };
        let deadline = self.timeout + grace + Duration::from_secs(20);
        let killed = match tokio::time::timeout(deadline, child.wait()).await {
            Ok(_) => false,
            Err(_) => {
                let _ = child.kill().await;
                true
            }
        };
        match std::fs::read_to_string(report) {
            Ok(text) => read_report(&text, &spec.text),
            Err(_) if killed => Outcome::TimedOut,
            Err(e) => Outcome::Broken(format!("no report ({e}); see {}", log.display())),
        }
    }
}

/// The outcome of the spec `text` in a ginkgo JSON report.
fn read_report(text: &str, spec: &str) -> Outcome {
    let suites: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => return Outcome::Broken(format!("unreadable report: {e}")),
    };
    let Some(report) = spec_reports(&suites).find(|s| super::binary::full_text(s) == spec) else {
        return Outcome::Broken("the report does not hold the spec".into());
    };
    let message = first_line(report["Failure"]["Message"].as_str().unwrap_or_default());
    match report["State"].as_str().unwrap_or_default() {
        "passed" => Outcome::Passed,
        "skipped" => Outcome::Skipped(message),
        "interrupted" | "timedout" | "aborted" => Outcome::TimedOut,
        _ => Outcome::Failed(message),
    }
}

/// A failure message on one line (gomega spreads one over several), shortened for a table.
fn first_line(message: &str) -> String {
    let line = message.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut short: String = line.chars().take(240).collect();
    if short.len() < line.len() {
        short.push('…');
    }
    short
}

#[cfg(test)]
mod tests {
    use super::*;

    fn report(state: &str, message: &str) -> String {
        serde_json::json!([{
            "SpecReports": [
                {"LeafNodeType": "BeforeSuite", "State": "passed"},
                {
                    "LeafNodeType": "It",
                    "ContainerHierarchyTexts": ["[sig-api-machinery] Namespaces"],
                    "LeafNodeText": "should patch",
                    "State": state,
                    "Failure": {"Message": message},
                }
            ]
        }])
        .to_string()
    }

    #[test]
    fn reports_are_read_per_spec() {
        let spec = "[sig-api-machinery] Namespaces should patch";
        assert_eq!(read_report(&report("passed", ""), spec), Outcome::Passed);
        assert_eq!(
            read_report(&report("failed", "\n  boom\n    more"), spec),
            Outcome::Failed("boom more".into())
        );
        assert_eq!(
            read_report(&report("timedout", ""), spec),
            Outcome::TimedOut
        );
        assert!(matches!(
            read_report(&report("passed", ""), "another"),
            Outcome::Broken(_)
        ));
    }
}
