//! Leader election on the in-memory server: one replica leads and reconciles, a standby takes over when the
//! leader releases the Lease (shutdown) or stops renewing it (a crash), and a leader whose Lease is taken
//! stops reconciling and says so. The same on kube-apiserver, with real processes: `tests/envtest/leader.rs`.

use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use kube::api::{Api, PostParams};
use kube::runtime::wait::{await_condition, conditions};
use kube::{Client, CustomResourceExt};
use kubewright::leader::LeaderElection;
use kubewright::probes::Health;
use kubewright::testing::ApiServer;
use kubewright::{Operator, RunError};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::smoke::{Note, NoteSpec, reconciler};

const LEASE: &str = "note-controller-leader";

/// A replica: its health (is it leading?), how to stop it, and its task.
struct Replica {
    health: Health,
    stop: oneshot::Sender<()>,
    task: JoinHandle<Result<(), RunError>>,
}

/// Short timings, so a lease expires in two seconds.
fn election(identity: &str) -> LeaderElection {
    LeaderElection::new(LEASE, "default")
        .identity(identity)
        .lease_duration(Duration::from_secs(2))
        .renew_deadline(Duration::from_millis(1500))
        .retry_period(Duration::from_millis(100))
}

fn start(client: &Client, identity: &str) -> Replica {
    let operator = Operator::new(client.clone())
        .controller(reconciler())
        .leader_election(election(identity));
    assert_eq!(operator.lease_name(), LEASE, "named after the controller");
    let health = operator.health();
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(operator.run_until(async move {
        let _ = stopped.await;
    }));
    Replica { health, stop, task }
}

async fn cluster() -> Client {
    let server = ApiServer::new();
    let client = server.client();
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    crds.create(&PostParams::default(), &Note::crd())
        .await
        .unwrap();
    await_condition(crds, "notes.example.dev", conditions::is_crd_established())
        .await
        .unwrap();
    client
}

async fn eventually<T>(what: &str, mut f: impl AsyncFnMut() -> Option<T>) -> T {
    for _ in 0..600 {
        if let Some(v) = f().await {
            return v;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("timed out waiting for {what}");
}

async fn holder(leases: &Api<Lease>) -> Option<String> {
    let lease = leases.get_opt(LEASE).await.unwrap()?;
    lease.spec?.holder_identity.filter(|h| !h.is_empty())
}

async fn note(client: &Client, name: &str) {
    let notes: Api<Note> = Api::namespaced(client.clone(), "default");
    notes
        .create(
            &PostParams::default(),
            &Note::new(name, NoteSpec { text: name.into() }),
        )
        .await
        .unwrap();
}

async fn reconciled(client: &Client, name: &str) {
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    eventually(&format!("the ConfigMap of {name}"), async || {
        cms.get_opt(name).await.unwrap()
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_replica_leads_and_a_standby_takes_over_on_release_and_on_expiry() {
    let client = cluster().await;
    let leases: Api<Lease> = Api::namespaced(client.clone(), "default");

    let a = start(&client, "replica-a");
    eventually("replica a leads", async || {
        a.health.is_leader().then_some(())
    })
    .await;
    let b = start(&client, "replica-b");
    note(&client, "one").await;
    reconciled(&client, "one").await;
    assert_eq!(holder(&leases).await.as_deref(), Some("replica-a"));
    // The standby's caches fill (it is ready) but it does not lead.
    eventually("the standby ready", async || {
        b.health.is_ready().then_some(())
    })
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!b.health.is_leader());
    assert_eq!(holder(&leases).await.as_deref(), Some("replica-a"));

    // Shutdown releases the Lease: the standby takes it at its next read, well before it would expire.
    let _ = a.stop.send(());
    a.task.await.unwrap().expect("a graceful stop is no error");
    let released = leases.get(LEASE).await.unwrap().spec.unwrap();
    assert!(
        released.holder_identity.is_none()
            || released.holder_identity.as_deref() == Some("replica-b"),
        "{released:?}"
    );
    eventually("replica b leads", async || {
        b.health.is_leader().then_some(())
    })
    .await;
    assert_eq!(holder(&leases).await.as_deref(), Some("replica-b"));
    note(&client, "two").await;
    reconciled(&client, "two").await;

    // A crash does not release: the next replica waits for the Lease to expire, then takes it.
    b.task.abort();
    let _ = b.task.await;
    drop(b.stop);
    let c = start(&client, "replica-c");
    eventually("replica c leads", async || {
        c.health.is_leader().then_some(())
    })
    .await;
    let lease = leases.get(LEASE).await.unwrap().spec.unwrap();
    assert_eq!(lease.holder_identity.as_deref(), Some("replica-c"));
    assert_eq!(lease.lease_transitions, Some(2), "a -> b -> c: {lease:?}");
    assert_eq!(lease.lease_duration_seconds, Some(2));
    note(&client, "three").await;
    reconciled(&client, "three").await;
    let _ = c.stop.send(());
    c.task.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_whose_lease_is_taken_stops_reconciling_and_says_so() {
    let client = cluster().await;
    let leases: Api<Lease> = Api::namespaced(client.clone(), "default");
    let a = start(&client, "replica-a");
    eventually("replica a leads", async || {
        a.health.is_leader().then_some(())
    })
    .await;
    note(&client, "before").await;
    reconciled(&client, "before").await;

    // Someone else writes itself into the Lease (as a replica that saw it expire would).
    let mut lease = leases.get(LEASE).await.unwrap();
    let spec = lease.spec.as_mut().unwrap();
    spec.holder_identity = Some("intruder".into());
    spec.renew_time = Some(MicroTime(k8s_openapi::jiff::Timestamp::now()));
    spec.lease_duration_seconds = Some(3600);
    leases
        .replace(LEASE, &PostParams::default(), &lease)
        .await
        .unwrap();

    let ended = tokio::time::timeout(Duration::from_secs(10), a.task)
        .await
        .expect("the operator stops when it loses the lease")
        .unwrap();
    match ended {
        Err(RunError::LeadershipLost { lease, reason }) => {
            assert_eq!(lease, format!("default/{LEASE}"));
            assert!(reason.contains("intruder"), "{reason}");
        }
        other => panic!("expected LeadershipLost, got {other:?}"),
    }
    assert!(!a.health.is_leader());
    // Nothing reconciles any more: a new Note gets no ConfigMap.
    note(&client, "after").await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    assert!(cms.get_opt("after").await.unwrap().is_none());
    assert_eq!(
        holder(&leases).await.as_deref(),
        Some("intruder"),
        "not released by the loser"
    );
    drop(a.stop);
}

#[tokio::test]
async fn timings_that_cannot_elect_safely_are_an_error_before_anything_runs() {
    let client = cluster().await;
    let operator = Operator::new(client.clone())
        .controller(reconciler())
        .leader_election(election("a").renew_deadline(Duration::from_secs(5)));
    let err = operator.run_until(async {}).await.unwrap_err();
    assert!(
        err.to_string()
            .contains("must be longer than the renew deadline"),
        "{err}"
    );
    let leases: Api<Lease> = Api::namespaced(client, "default");
    assert!(leases.get_opt(LEASE).await.unwrap().is_none());
}
