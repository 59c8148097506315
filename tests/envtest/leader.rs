//! Leader election on kube-apiserver with real processes: replicas of the Database operator (the
//! `database-operator` binary, `--leader-elect`) share one Lease; only the holder reconciles; SIGKILL the
//! holder and a standby reconciles a new Database once the Lease expires; SIGTERM the holder and it releases
//! the Lease on its way out (exit status 0), so a standby takes over at its next read.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use examples::database::{Database, sample};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::coordination::v1::Lease;
use kube::api::{Api, PostParams};
use kube::{Client, CustomResourceExt};
use kubewright::testing::envtest::{ControlPlane, assets_or_skip};
use tokio::process::{Child, Command};

use crate::support::{eventually, free_address, http_get, sample_value};

const LEASE: &str = "database-leader";
const NAMESPACE: &str = "default";

/// One operator process, its output kept in a file for the failure message, its metrics served.
struct Replica {
    name: &'static str,
    child: Child,
    log: PathBuf,
    metrics: SocketAddr,
}

impl Replica {
    fn start(name: &'static str, kubeconfig: &Path, dir: &Path) -> Replica {
        let log = dir.join(format!("{name}.log"));
        let out = std::fs::File::create(&log).unwrap();
        let metrics = free_address();
        let child = Command::new(env!("CARGO_BIN_EXE_database-operator"))
            .args(["--kubeconfig".as_ref(), kubeconfig.as_os_str()])
            .args(["--metrics-bind-address", &metrics.to_string()])
            .args([
                "--leader-elect",
                "--leader-election-id",
                LEASE,
                "--leader-election-namespace",
                NAMESPACE,
                "--leader-elect-lease-duration",
                "4s",
                "--leader-elect-renew-deadline",
                "3s",
                "--leader-elect-retry-period",
                "500ms",
            ])
            // The identity is the host name and a random suffix, as a pod's would be.
            .env("HOSTNAME", name)
            .env("RUST_LOG", "info")
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .stdin(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        Replica {
            name,
            child,
            log,
            metrics,
        }
    }

    /// The replica's metrics, once it serves them.
    async fn metrics(&self) -> String {
        eventually(&format!("the metrics of {}", self.name), async || {
            http_get(self.metrics, "/metrics")
                .await
                .filter(|(status, _)| *status == 200)
                .map(|(_, body)| body)
        })
        .await
    }

    fn pid(&self) -> i32 {
        self.child.id().unwrap() as i32
    }

    fn output(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

async fn holder(leases: &Api<Lease>) -> Option<String> {
    let lease = leases.get_opt(LEASE).await.ok()??;
    lease.spec?.holder_identity.filter(|h| !h.is_empty())
}

/// The replica whose identity holds the Lease.
async fn leader<'a>(leases: &Api<Lease>, replicas: &'a [&'a Replica]) -> &'a Replica {
    eventually("a replica holds the lease", async || {
        let holder = holder(leases).await?;
        replicas
            .iter()
            .find(|r| holder.starts_with(&format!("{}_", r.name)))
            .copied()
    })
    .await
}

async fn create_and_see_reconciled(client: &Client, name: &str, replicas: &[&Replica]) {
    let dbs: Api<Database> = Api::namespaced(client.clone(), NAMESPACE);
    dbs.create(&PostParams::default(), &sample(name, "16"))
        .await
        .unwrap();
    let sets: Api<StatefulSet> = Api::namespaced(client.clone(), NAMESPACE);
    for _ in 0..600 {
        if sets.get_opt(name).await.unwrap().is_some() {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let logs: Vec<String> = replicas
        .iter()
        .map(|r| format!("--- {} ---\n{}", r.name, r.output()))
        .collect();
    panic!("{name} not reconciled within 60 s\n{}", logs.join("\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_of_two_replicas_leads_and_the_other_takes_over_after_sigkill_and_sigterm() {
    // Its own control plane: the operator watches every namespace.
    let name = "leader-election";
    if assets_or_skip(name).is_none() {
        return;
    }
    let cp = ControlPlane::builder().name(name).start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    cp.write_kubeconfig(&kubeconfig).unwrap();
    let admin = cp.client().unwrap();
    kubewright::cli::ensure_crd(&admin, Database::crd())
        .await
        .unwrap();
    let leases: Api<Lease> = Api::namespaced(admin.clone(), NAMESPACE);

    let a = Replica::start("replica-a", &kubeconfig, dir.path());
    let b = Replica::start("replica-b", &kubeconfig, dir.path());
    let first = leader(&leases, &[&a, &b]).await.name;
    create_and_see_reconciled(&admin, "db-one", &[&a, &b]).await;
    assert!(
        holder(&leases).await.unwrap().starts_with(first),
        "the lease stayed with {first}"
    );
    let (mut leading, mut standby) = if first == a.name { (a, b) } else { (b, a) };

    // Counted by each process, scraped over HTTP: the leader reconciled and wrote; the standby only read.
    let lease_status = format!("leader_election_master_status{{name=\"{LEASE}\"}}");
    let leader_metrics = leading.metrics().await;
    let standby_metrics = standby.metrics().await;
    assert_eq!(
        sample_value(&leader_metrics, &lease_status),
        Some(1.0),
        "{leader_metrics}"
    );
    assert_eq!(
        sample_value(&standby_metrics, &lease_status),
        Some(0.0),
        "{standby_metrics}"
    );
    let passes =
        r#"controller_runtime_reconcile_total{controller="database-controller",result="success"}"#;
    assert!(
        sample_value(&leader_metrics, passes).unwrap_or(0.0) >= 1.0,
        "{leader_metrics}"
    );
    assert_eq!(
        sample_value(&standby_metrics, passes),
        None,
        "{standby_metrics}"
    );
    let creates =
        r#"operator_writes_total{controller="database-controller",verb="create",kind="Secret"}"#;
    assert_eq!(
        sample_value(&leader_metrics, creates),
        Some(1.0),
        "{leader_metrics}"
    );
    // Nothing the standby sent changed anything: when both replicas start on a missing Lease, the one that
    // loses the race to create it gets 409 for its POST, as a client-go replica does.
    for method in ["POST", "PUT", "PATCH", "DELETE"] {
        assert!(
            !standby_metrics
                .lines()
                .any(|l| l.starts_with("rest_client_requests_total{code=\"2")
                    && l.contains(&format!("method=\"{method}\""))),
            "the standby wrote ({method}):\n{standby_metrics}"
        );
    }
    assert!(
        standby_metrics.contains(r#"rest_client_requests_total{code="200",method="GET"}"#),
        "the standby reads the lease:\n{standby_metrics}"
    );

    // SIGKILL: no release; the standby takes the Lease once it expires, and reconciles.
    leading.child.start_kill().unwrap();
    let killed = leading.child.wait().await.unwrap();
    assert!(!killed.success(), "{killed:?}");
    let second = leader(&leases, &[&standby]).await.name;
    assert_eq!(second, standby.name);
    create_and_see_reconciled(&admin, "db-two", &[&standby]).await;

    // SIGTERM with a standby waiting: the leader releases the Lease before it exits.
    let c = Replica::start("replica-c", &kubeconfig, dir.path());
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    rustix::process::kill_process(
        rustix::process::Pid::from_raw(standby.pid()).unwrap(),
        rustix::process::Signal::TERM,
    )
    .unwrap();
    let stopped = standby.child.wait().await.unwrap();
    assert!(
        stopped.success(),
        "SIGTERM is a graceful stop: {stopped:?}\n{}",
        standby.output()
    );
    // Read right after it exited: the Lease it renewed less than a second ago would hold for 3 s more
    // unless it was released.
    let lease = leases.get(LEASE).await.unwrap().spec.unwrap();
    match lease.holder_identity.as_deref() {
        None | Some("") => {}
        Some(h) => assert!(h.starts_with("replica-c_"), "not released: {lease:?}"),
    }
    let third = leader(&leases, &[&c]).await.name;
    assert_eq!(third, "replica-c");
    create_and_see_reconciled(&admin, "db-three", &[&c]).await;
    let mut c = c;
    c.child.start_kill().unwrap();
    let _ = c.child.wait().await;
}
