//! The flags an operator runs with, named as controller-runtime's managers name them (health probes,
//! metrics, leader election, the namespaces to watch), and [`run_operator`], which applies them.

use std::future::Future;
use std::time::Duration;

use super::error::{CliError, Context as _};
use crate::Operator;
use crate::leader::{
    DEFAULT_LEASE_DURATION, DEFAULT_RENEW_DEADLINE, DEFAULT_RETRY_PERIOD, LeaderElection,
};

/// How the operator runs on a cluster, whichever cluster it is.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct RunFlags {
    /// Serve the health probes (`/healthz`, `/readyz`) on this address, e.g. `:8081` (all interfaces) or
    /// `127.0.0.1:8081`; `0` (the default here; the manifests' Deployment passes `:8081`) serves none.
    #[arg(long, value_name = "ADDR", default_value = "0", value_parser = parse_bind_address)]
    pub health_probe_bind_address: BindAddress,
    /// Serve Prometheus metrics (`/metrics`, controller-runtime's names) on this address, e.g. `:8080`; `0`
    /// (the default here; the manifests' Deployment passes `:8080`) serves none.
    #[arg(long, value_name = "ADDR", default_value = "0", value_parser = parse_bind_address)]
    pub metrics_bind_address: BindAddress,
    /// Serve `/metrics` over HTTPS to the callers the cluster allows: a bearer token the API server accepts
    /// (TokenReview) whose user may `get` the URL `/metrics` (SubjectAccessReview), as kubebuilder's scaffolds
    /// do; 401 and 403 otherwise. The certificate is `--metrics-cert-dir`'s, else generated at start.
    #[arg(long)]
    pub metrics_secure: bool,
    /// With `--metrics-secure`: read the certificate from `tls.crt` and `tls.key` in this directory (read again
    /// when they change).
    #[arg(long, value_name = "DIR", requires = "metrics_secure")]
    pub metrics_cert_dir: Option<std::path::PathBuf>,
    /// Watch and cache only this namespace (repeat for several): a Role in each is all the operator needs
    /// for its namespaced kinds (`manifests --namespace` emits them). Default: every namespace.
    #[arg(long = "namespace", value_name = "NAMESPACE")]
    pub namespaces: Vec<String>,
    /// Elect a leader on a Lease before reconciling, so that only one replica writes; the others keep their
    /// caches warm and take over when it stops.
    #[arg(long)]
    pub leader_elect: bool,
    /// The Lease's name (default: named after the operator's controllers).
    #[arg(long, value_name = "NAME", requires = "leader_elect")]
    pub leader_election_id: Option<String>,
    /// The Lease's namespace (default: the pod's namespace in a pod, else the kubeconfig context's).
    #[arg(long, value_name = "NAMESPACE", requires = "leader_elect")]
    pub leader_election_namespace: Option<String>,
    /// How long a standby waits after the leader's last renewal before it takes the Lease.
    #[arg(long, value_name = "DURATION", default_value = "15s", value_parser = parse_duration)]
    pub leader_elect_lease_duration: Duration,
    /// How long the leader keeps trying to renew before it stops reconciling and exits.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_duration)]
    pub leader_elect_renew_deadline: Duration,
    /// How often candidates read the Lease and the leader renews it.
    #[arg(long, value_name = "DURATION", default_value = "2s", value_parser = parse_duration)]
    pub leader_elect_retry_period: Duration,
    /// Share the parents among every replica run with this flag instead of electing a leader: each holds a
    /// membership Lease, caches and reconciles only the parents assigned to it (label
    /// `sharding.kubewright.dev/shard`) and their children, and parents move between replicas as they come and
    /// go, each handed over by its old owner first. The `--leader-elect-*` durations apply to the membership
    /// Leases.
    #[arg(long, conflicts_with = "leader_elect")]
    pub sharded: bool,
    /// The sharded group (default: named after the operator's controllers); replicas of one group must run
    /// with the same settings.
    #[arg(long, value_name = "NAME", requires = "sharded")]
    pub shard_group: Option<String>,
    /// This replica's identity in its group (default: the host name and a random suffix).
    #[arg(long, value_name = "NAME", requires = "sharded")]
    pub shard_identity: Option<String>,
    /// The namespace of the membership Leases (default: the pod's namespace in a pod, else the kubeconfig
    /// context's).
    #[arg(long, value_name = "NAMESPACE", requires = "sharded")]
    pub shard_namespace: Option<String>,
    /// Cancel a pass that runs longer than this, and retry it with backoff (the step it was in is named in
    /// the parent's `Ready` condition). Default: no limit.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub reconcile_timeout: Option<Duration>,
    /// Reconcile every parent at least this often, even when nothing changed (each parent up to a tenth
    /// sooner, so that they do not all run at once). Default: only on changes.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub sync_period: Option<Duration>,
    /// Retries after errors and conflicts a second, all parents of a controller together, once a burst is
    /// spent (each parent also backs off on its own); 0: no overall limit.
    #[arg(long, value_name = "PER_SECOND", default_value_t = 10)]
    pub retry_rate: u32,
    /// Retries a controller may make at once before `--retry-rate` applies.
    #[arg(long, value_name = "COUNT", default_value_t = 100)]
    pub retry_burst: u32,
}

/// A duration as Go's `time.ParseDuration` reads it, as controller-runtime's flags do (`15s`, `1m30s`, `1.5h`,
/// `300ms`); a negative one is refused.
fn parse_duration(text: &str) -> Result<Duration, String> {
    let parsed: kube::core::Duration = text.parse().map_err(|e| format!("{e}"))?;
    if parsed.is_negative() {
        return Err(format!("{text} is negative"));
    }
    Ok(parsed.into())
}

impl Default for RunFlags {
    /// What the command line means with none of these flags.
    fn default() -> Self {
        Self {
            health_probe_bind_address: BindAddress(None),
            metrics_bind_address: BindAddress(None),
            metrics_secure: false,
            metrics_cert_dir: None,
            namespaces: Vec::new(),
            leader_elect: false,
            leader_election_id: None,
            leader_election_namespace: None,
            leader_elect_lease_duration: DEFAULT_LEASE_DURATION,
            leader_elect_renew_deadline: DEFAULT_RENEW_DEADLINE,
            leader_elect_retry_period: DEFAULT_RETRY_PERIOD,
            sharded: false,
            shard_group: None,
            shard_identity: None,
            shard_namespace: None,
            reconcile_timeout: None,
            sync_period: None,
            retry_rate: 10,
            retry_burst: crate::controller::RetryRate::default().burst,
        }
    }
}

impl RunFlags {
    /// An operator on `client` watching the namespaces these flags name (every namespace without any).
    pub fn operator(&self, client: kube::Client) -> Operator {
        Operator::for_namespaces(client, self.namespaces.clone())
            .reconcile_timeout(self.reconcile_timeout)
            .resync_every(self.sync_period)
            .retry_rate(crate::controller::RetryRate {
                per_second: f64::from(self.retry_rate),
                burst: self.retry_burst,
            })
    }

    /// The leader election these flags ask for, if any, for `operator` (whose controllers name the Lease by
    /// default and whose client knows its namespace).
    pub fn leader_election(&self, operator: &Operator) -> Option<LeaderElection> {
        if !self.leader_elect {
            return None;
        }
        let name = self
            .leader_election_id
            .clone()
            .unwrap_or_else(|| operator.lease_name());
        let namespace = self
            .leader_election_namespace
            .clone()
            .unwrap_or_else(|| operator.client().default_namespace().to_string());
        Some(
            LeaderElection::new(name, namespace)
                .lease_duration(self.leader_elect_lease_duration)
                .renew_deadline(self.leader_elect_renew_deadline)
                .retry_period(self.leader_elect_retry_period),
        )
    }
}

impl RunFlags {
    /// The sharding these flags ask for, if any, for `operator` (whose controllers name the group by default
    /// and whose client knows its namespace).
    pub fn sharding(&self, operator: &Operator) -> Option<crate::sharding::Sharding> {
        if !self.sharded {
            return None;
        }
        let group = self.shard_group.clone().unwrap_or_else(|| {
            let lease = operator.lease_name();
            lease.strip_suffix("-leader").unwrap_or(&lease).to_string()
        });
        let namespace = self
            .shard_namespace
            .clone()
            .unwrap_or_else(|| operator.client().default_namespace().to_string());
        let mut sharding = crate::sharding::Sharding::new(group, namespace)
            .lease_duration(self.leader_elect_lease_duration)
            .renew_deadline(self.leader_elect_renew_deadline)
            .retry_period(self.leader_elect_retry_period);
        if let Some(identity) = &self.shard_identity {
            sharding = sharding.identity(identity.clone());
        }
        Some(sharding)
    }
}

/// An address to serve on, or none (`0`), as controller-runtime's `--*-bind-address` flags take it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BindAddress(pub Option<std::net::SocketAddr>);

/// `0` is none; `:PORT` is every interface; otherwise `HOST:PORT`.
pub fn parse_bind_address(s: &str) -> Result<BindAddress, String> {
    if s == "0" {
        return Ok(BindAddress(None));
    }
    let full = match s.strip_prefix(':') {
        Some(port) => format!("0.0.0.0:{port}"),
        None => s.to_string(),
    };
    full.parse()
        .map(|a| BindAddress(Some(a)))
        .map_err(|e| format!("`{s}` is not `0`, `:PORT` or `HOST:PORT`: {e}"))
}

/// Runs an operator until `shutdown` as `flags` say: its health probes served (a port in use is an error
/// before the operator starts), and a leader elected first if asked. Losing the lease is an error, so the
/// binary exits non-zero and its pod restarts as a standby, as controller-runtime's managers do.
pub async fn run_operator(
    operator: Operator,
    flags: &RunFlags,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), CliError> {
    let operator = match flags.leader_election(&operator) {
        Some(election) => {
            election.validate().context("leader election")?;
            tracing::info!(lease = %format!("{}/{}", election.namespace(), election.name()), identity = %election.holder_identity(), "electing a leader");
            operator.leader_election(election)
        }
        None => operator,
    };
    let operator = match flags.sharding(&operator) {
        Some(sharding) => {
            sharding.validate().context("sharding")?;
            tracing::info!(group = %sharding.group(), member = %sharding.member(), "running sharded");
            operator.sharding(sharding)
        }
        None => operator,
    };
    let mut servers = Vec::new();
    if let Some(addr) = flags.health_probe_bind_address.0 {
        let probes = crate::probes::serve(addr, operator.health())
            .await
            .context("--health-probe-bind-address")?;
        servers.push(tokio::spawn(probes));
    }
    if let Some(addr) = flags.metrics_bind_address.0 {
        let global = crate::metrics::Metrics::global();
        let metrics = if flags.metrics_secure {
            let certs = match &flags.metrics_cert_dir {
                Some(dir) => crate::admission::Certificates::from_dir(dir).with_context(|| {
                    format!("cannot read the metrics certificate in {}", dir.display())
                })?,
                None => crate::admission::Certificates::generate([
                    "localhost".to_string(),
                    addr.ip().to_string(),
                ])
                .context("cannot generate the metrics certificate")?,
            };
            crate::metrics::serve_secure(addr, global, operator.client().clone(), certs).await
        } else {
            crate::metrics::serve(addr, global).await
        }
        .context("--metrics-bind-address")?;
        servers.push(tokio::spawn(metrics));
    }
    let result = operator.run_until(shutdown).await;
    for server in servers {
        server.abort();
        let _ = server.await;
    }
    result.context("the operator stopped")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn try_parse_from<'a>(
        name: &str,
        args: impl IntoIterator<Item = &'a str>,
    ) -> Result<crate::cli::Cli, clap::Error> {
        crate::cli::App::new(name.to_string()).try_parse_from(args)
    }

    #[test]
    fn durations_read_like_go_flags() {
        assert_eq!(parse_duration("15s"), Ok(Duration::from_secs(15)));
        assert_eq!(parse_duration("1m30s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("1.5h"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("300ms"), Ok(Duration::from_millis(300)));
        for refused in ["1min", "15", "-2s", "soon"] {
            assert!(parse_duration(refused).is_err(), "{refused}");
        }
    }

    #[test]
    fn bind_addresses_read_like_controller_runtime_flags() {
        assert_eq!(parse_bind_address("0"), Ok(BindAddress(None)));
        assert_eq!(
            parse_bind_address(":8081").unwrap().0,
            Some("0.0.0.0:8081".parse().unwrap())
        );
        assert_eq!(
            parse_bind_address("127.0.0.1:9").unwrap().0,
            Some("127.0.0.1:9".parse().unwrap())
        );
        let err = parse_bind_address("8081").unwrap_err();
        assert!(
            err.contains("`8081` is not `0`, `:PORT` or `HOST:PORT`"),
            "{err}"
        );
        let cli =
            try_parse_from("webapp", ["webapp", "--health-probe-bind-address", ":9"]).unwrap();
        assert_eq!(
            cli.run.health_probe_bind_address.0.map(|a| a.port()),
            Some(9)
        );
        let cli = try_parse_from("webapp", ["webapp"]).unwrap();
        assert_eq!(cli.run, RunFlags::default());
        let cli =
            try_parse_from("webapp", ["webapp", "--namespace", "a", "--namespace=b"]).unwrap();
        assert_eq!(cli.run.namespaces, ["a", "b"]);
    }

    #[test]
    fn leader_election_flags_read_like_controller_runtime_flags() {
        let cli = try_parse_from(
            "webapp",
            [
                "webapp",
                "--leader-elect",
                "--leader-election-id",
                "webapp-lock",
                "--leader-election-namespace",
                "ops",
                "--leader-elect-lease-duration",
                "30s",
                "--leader-elect-renew-deadline",
                "20s",
                "--leader-elect-retry-period",
                "500ms",
            ],
        )
        .unwrap();
        assert!(cli.run.leader_elect);
        assert_eq!(cli.run.leader_election_id.as_deref(), Some("webapp-lock"));
        assert_eq!(cli.run.leader_election_namespace.as_deref(), Some("ops"));
        assert_eq!(cli.run.leader_elect_lease_duration, Duration::from_secs(30));
        assert_eq!(cli.run.leader_elect_renew_deadline, Duration::from_secs(20));
        assert_eq!(
            cli.run.leader_elect_retry_period,
            Duration::from_millis(500)
        );
        // The Lease's name needs the election on.
        let err = try_parse_from("webapp", ["webapp", "--leader-election-id", "x"]).unwrap_err();
        assert!(err.to_string().contains("--leader-elect"), "{err}");
    }
}
