//! Leader election on a `coordination.k8s.io/v1` Lease, as client-go and controller-runtime do it: one
//! replica holds the Lease and runs the controllers; the others keep their caches warm and take over when the
//! holder releases the Lease (at once) or stops renewing it (after the lease duration).
//!
//! The rules, with controller-runtime's defaults:
//! - a candidate reads the Lease every `retry_period` (2 s) and takes it when it has no holder, or when the
//!   holder's record has not changed for `lease_duration` (15 s) by the candidate's own clock (so clocks need
//!   not agree between nodes); every write carries the resourceVersion read, so two candidates never both win;
//! - the holder renews every `retry_period`; when it has not renewed for `renew_deadline` (10 s), or the
//!   Lease names another holder, it has lost: the operator stops its controllers at once and
//!   [`Operator::run_until`](crate::Operator::run_until) returns [`RunError::LeadershipLost`](crate::RunError::LeadershipLost), as
//!   controller-runtime exits. A standby waits `lease_duration` from the last renewal it saw, so the old
//!   holder stops `lease_duration - renew_deadline` before anyone else may write;
//! - on graceful shutdown the holder releases the Lease (no holder, a one-second duration) so a standby
//!   takes over at its next read.
//!
//! ```no_run
//! # use kubewright::{Operator, leader::LeaderElection};
//! # async fn run(client: kube::Client) -> Result<(), kubewright::RunError> {
//! Operator::new(client.clone())
//!     .leader_election(LeaderElection::new("webapp-operator", client.default_namespace()))
//!     .run_until_signal()
//!     .await
//! # }
//! ```

use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kube::api::{Api, PostParams};
use kube::{Client, ResourceExt};

/// controller-runtime's default lease duration.
pub const DEFAULT_LEASE_DURATION: Duration = Duration::from_secs(15);
/// controller-runtime's default renew deadline.
pub const DEFAULT_RENEW_DEADLINE: Duration = Duration::from_secs(10);
/// controller-runtime's default retry period.
pub const DEFAULT_RETRY_PERIOD: Duration = Duration::from_secs(2);

/// How an operator elects its leader: which Lease, who it is, and the timings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaderElection {
    name: String,
    namespace: String,
    identity: String,
    lease_duration: Duration,
    renew_deadline: Duration,
    retry_period: Duration,
}

/// Timings that cannot elect safely.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LeaderElectionError {
    /// The holder would still believe it leads after a standby may take over.
    #[error(
        "the lease duration ({lease_duration:?}) must be longer than the renew deadline ({renew_deadline:?})"
    )]
    DeadlineNotBelowDuration {
        /// The lease duration.
        lease_duration: Duration,
        /// The renew deadline.
        renew_deadline: Duration,
    },
    /// The holder would not try to renew before its deadline.
    #[error(
        "the renew deadline ({renew_deadline:?}) must be longer than the retry period ({retry_period:?})"
    )]
    RetryNotBelowDeadline {
        /// The renew deadline.
        renew_deadline: Duration,
        /// The retry period.
        retry_period: Duration,
    },
    /// A zero retry period would spin.
    #[error("the retry period must be longer than zero")]
    ZeroRetryPeriod,
    /// The Lease's name is empty.
    #[error("the lease needs a name")]
    NoName,
}

impl LeaderElection {
    /// Election on the Lease `name` in `namespace`, with controller-runtime's timings and an identity made
    /// of the host name (the pod's name in a pod) and a random suffix.
    pub fn new(name: impl Into<String>, namespace: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            namespace: namespace.into(),
            identity: default_identity(),
            lease_duration: DEFAULT_LEASE_DURATION,
            renew_deadline: DEFAULT_RENEW_DEADLINE,
            retry_period: DEFAULT_RETRY_PERIOD,
        }
    }

    /// The name this replica writes as the Lease's holder (unique per replica).
    pub fn identity(mut self, identity: impl Into<String>) -> Self {
        self.identity = identity.into();
        self
    }

    /// How long a standby waits after the last renewal it saw before it takes the Lease (default 15 s).
    pub fn lease_duration(mut self, d: Duration) -> Self {
        self.lease_duration = d;
        self
    }

    /// How long the holder keeps trying to renew before it gives up leading (default 10 s).
    pub fn renew_deadline(mut self, d: Duration) -> Self {
        self.renew_deadline = d;
        self
    }

    /// How often candidates read the Lease and the holder renews it (default 2 s).
    pub fn retry_period(mut self, d: Duration) -> Self {
        self.retry_period = d;
        self
    }

    /// The Lease's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The Lease's namespace.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// This replica's identity.
    pub fn holder_identity(&self) -> &str {
        &self.identity
    }

    /// Checks the timings: `lease_duration > renew_deadline > retry_period > 0`.
    pub fn validate(&self) -> Result<(), LeaderElectionError> {
        if self.name.is_empty() {
            return Err(LeaderElectionError::NoName);
        }
        if self.retry_period.is_zero() {
            return Err(LeaderElectionError::ZeroRetryPeriod);
        }
        if self.lease_duration <= self.renew_deadline {
            return Err(LeaderElectionError::DeadlineNotBelowDuration {
                lease_duration: self.lease_duration,
                renew_deadline: self.renew_deadline,
            });
        }
        if self.renew_deadline <= self.retry_period {
            return Err(LeaderElectionError::RetryNotBelowDeadline {
                renew_deadline: self.renew_deadline,
                retry_period: self.retry_period,
            });
        }
        Ok(())
    }
}

/// The host name (a pod's `HOSTNAME` is its name) and a random suffix, as controller-runtime builds it.
fn default_identity() -> String {
    let host = std::env::var("HOSTNAME")
        .ok()
        .or_else(|| std::fs::read_to_string("/proc/sys/kernel/hostname").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "operator".into());
    format!("{host}_{}", uuid::Uuid::new_v4())
}

/// Why a holder stopped leading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Lost {
    /// The Lease names another holder.
    TakenBy(String),
    /// No renewal succeeded within the renew deadline; the last error.
    NotRenewed(String),
}

impl std::fmt::Display for Lost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Lost::TakenBy(holder) => write!(f, "the lease is held by {holder}"),
            Lost::NotRenewed(error) => {
                write!(f, "the lease was not renewed within the deadline ({error})")
            }
        }
    }
}

/// What one attempt to acquire or renew found.
#[derive(Debug, PartialEq, Eq)]
enum Attempt {
    /// This replica holds the Lease now.
    Held,
    /// Another replica holds it, and its record is still fresh.
    HeldBy(String),
}

/// The election's state for one replica: the Lease as last read or written, and when its record last
/// changed by this replica's clock.
pub(crate) struct Elector {
    api: Api<Lease>,
    config: LeaderElection,
    /// The Lease as last read or written.
    lease: Option<Lease>,
    /// The holder record last seen (holder, renew time, transitions) and when it was first seen.
    observed: Option<(Record, Instant)>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Record {
    holder: String,
    renew_time: Option<MicroTime>,
    transitions: i32,
    duration_seconds: Option<i32>,
}

impl Record {
    fn of(lease: &Lease) -> Self {
        let spec = lease.spec.clone().unwrap_or_default();
        Self {
            holder: spec.holder_identity.unwrap_or_default(),
            renew_time: spec.renew_time,
            transitions: spec.lease_transitions.unwrap_or(0),
            duration_seconds: spec.lease_duration_seconds,
        }
    }
}

impl Elector {
    pub(crate) fn new(client: Client, config: LeaderElection) -> Self {
        Self {
            api: Api::namespaced(client, &config.namespace),
            config,
            lease: None,
            observed: None,
        }
    }

    pub(crate) fn config(&self) -> &LeaderElection {
        &self.config
    }

    /// Tries until this replica holds the Lease (reading it every retry period); errors are logged and
    /// retried.
    pub(crate) async fn acquire(&mut self) {
        let mut last_holder = None;
        loop {
            match self.try_acquire_or_renew().await {
                Ok(Attempt::Held) => {
                    tracing::info!(lease = %self.lease_ref(), identity = %self.config.identity, "acquired the lease; this replica leads");
                    return;
                }
                Ok(Attempt::HeldBy(holder)) => {
                    if last_holder.as_ref() != Some(&holder) {
                        tracing::info!(lease = %self.lease_ref(), %holder, "another replica leads; waiting");
                        last_holder = Some(holder);
                    }
                }
                Err(e) => {
                    tracing::warn!(lease = %self.lease_ref(), error = %e, "cannot read or take the lease; retrying")
                }
            }
            tokio::time::sleep(jitter(self.config.retry_period)).await;
        }
    }

    /// Renews every retry period while this replica leads; returns when it has lost the Lease.
    pub(crate) async fn hold(&mut self) -> Lost {
        let mut renewed = Instant::now();
        loop {
            tokio::time::sleep(self.config.retry_period).await;
            let left = self.config.renew_deadline.saturating_sub(renewed.elapsed());
            let error = match tokio::time::timeout(left, self.try_acquire_or_renew()).await {
                Ok(Ok(Attempt::Held)) => {
                    renewed = Instant::now();
                    continue;
                }
                Ok(Ok(Attempt::HeldBy(holder))) => return Lost::TakenBy(holder),
                Ok(Err(e)) => e.to_string(),
                Err(_) => "timed out".to_string(),
            };
            tracing::warn!(lease = %self.lease_ref(), error = %error, "cannot renew the lease");
            if renewed.elapsed() >= self.config.renew_deadline {
                return Lost::NotRenewed(error);
            }
        }
    }

    /// Gives the Lease up if this replica holds it: no holder and a one-second duration, so a standby
    /// takes it at its next read.
    pub(crate) async fn release(&mut self) {
        let Some(mut lease) = self.lease.clone() else {
            return;
        };
        if Record::of(&lease).holder != self.config.identity {
            return;
        }
        let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
        spec.holder_identity = None;
        spec.lease_duration_seconds = Some(1);
        spec.renew_time = Some(now());
        spec.acquire_time = Some(now());
        match self
            .api
            .replace(&lease.name_any(), &PostParams::default(), &lease)
            .await
        {
            Ok(released) => {
                tracing::info!(lease = %self.lease_ref(), "released the lease");
                self.lease = Some(released);
            }
            Err(e) => {
                tracing::warn!(lease = %self.lease_ref(), error = %e, "cannot release the lease; a standby takes it when it expires")
            }
        }
    }

    fn lease_ref(&self) -> String {
        format!("{}/{}", self.config.namespace, self.config.name)
    }

    /// One round of client-go's `tryAcquireOrRenew`.
    async fn try_acquire_or_renew(&mut self) -> Result<Attempt, kube::Error> {
        let me = self.config.identity.clone();
        // The holder renews from the Lease it last wrote, without reading it first; a conflict means
        // someone else wrote it, so the next round reads it.
        if let Some(lease) = self.lease.clone().filter(|l| Record::of(l).holder == me) {
            match self.write(self.renewed(lease, false)).await {
                Ok(()) => return Ok(Attempt::Held),
                Err(e) if is_conflict(&e) => self.lease = None,
                Err(e) => return Err(e),
            }
        }
        let current = match self.api.get_opt(&self.config.name).await? {
            Some(lease) => lease,
            None => {
                let lease = Lease {
                    metadata: ObjectMeta {
                        name: Some(self.config.name.clone()),
                        namespace: Some(self.config.namespace.clone()),
                        ..Default::default()
                    },
                    spec: None,
                };
                let lease = self.renewed(lease, true);
                return match self.api.create(&PostParams::default(), &lease).await {
                    Ok(created) => {
                        self.observe(&created);
                        self.lease = Some(created);
                        Ok(Attempt::Held)
                    }
                    Err(e) if is_conflict(&e) => Ok(Attempt::HeldBy("(created meanwhile)".into())),
                    Err(e) => Err(e),
                };
            }
        };
        self.observe(&current);
        let record = Record::of(&current);
        self.lease = Some(current.clone());
        // As client-go: the holder's record is fresh for the duration it wrote, from when this replica
        // saw it change.
        let duration = record
            .duration_seconds
            .and_then(|s| u64::try_from(s).ok())
            .map_or(self.config.lease_duration, Duration::from_secs);
        let fresh = self
            .observed
            .as_ref()
            .is_some_and(|(_, seen)| seen.elapsed() < duration);
        if !record.holder.is_empty() && record.holder != me && fresh {
            return Ok(Attempt::HeldBy(record.holder));
        }
        let taking = record.holder != me;
        match self.write(self.renewed(current, taking)).await {
            Ok(()) => Ok(Attempt::Held),
            Err(e) if is_conflict(&e) => Ok(Attempt::HeldBy(record.holder)),
            Err(e) => Err(e),
        }
    }

    /// `lease` renewed by this replica: renew time now, and when `taking` it, acquire time now and one more
    /// transition.
    fn renewed(&self, mut lease: Lease, taking: bool) -> Lease {
        let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
        let now = now();
        if taking {
            spec.acquire_time = Some(now.clone());
            // As client-go counts: every acquisition of an existing Lease is a transition.
            spec.lease_transitions = Some(match &spec.renew_time {
                Some(_) => spec.lease_transitions.unwrap_or(0) + 1,
                None => 0,
            });
        }
        spec.holder_identity = Some(self.config.identity.clone());
        spec.lease_duration_seconds = Some(seconds(self.config.lease_duration));
        spec.renew_time = Some(now);
        lease
    }

    /// Writes `lease` with the resourceVersion it was read with (a conflict if anyone wrote since).
    async fn write(&mut self, lease: Lease) -> Result<(), kube::Error> {
        let written = self
            .api
            .replace(&self.config.name, &PostParams::default(), &lease)
            .await?;
        self.observe(&written);
        self.lease = Some(written);
        Ok(())
    }

    /// Notes when the holder record changed, by this replica's clock.
    fn observe(&mut self, lease: &Lease) {
        let record = Record::of(lease);
        if self.observed.as_ref().map(|(r, _)| r) != Some(&record) {
            self.observed = Some((record, Instant::now()));
        }
    }
}

/// The time now as a Lease writes it.
pub(crate) fn now() -> MicroTime {
    MicroTime(k8s_openapi::jiff::Timestamp::now())
}

/// A duration in whole seconds (at least one), as a Lease holds it.
pub(crate) fn seconds(d: Duration) -> i32 {
    i32::try_from(d.as_secs().max(1)).unwrap_or(i32::MAX)
}

/// Whether the API server refused a write with `409 Conflict`.
pub(crate) fn is_conflict(e: &kube::Error) -> bool {
    matches!(e, kube::Error::Api(s) if s.code == 409)
}

/// `period` stretched by up to 20% at random, as client-go jitters its retries, so candidates started
/// together do not read in lock step.
fn jitter(period: Duration) -> Duration {
    let nanos = uuid::Uuid::new_v4().as_u128() % 1000;
    period + period.mul_f64(0.2 * nanos as f64 / 1000.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timings_are_checked() {
        let le = LeaderElection::new("op", "ns");
        assert_eq!(le.validate(), Ok(()));
        assert!(
            le.holder_identity().contains('_'),
            "{}",
            le.holder_identity()
        );
        assert!(matches!(
            le.clone()
                .renew_deadline(Duration::from_secs(15))
                .validate(),
            Err(LeaderElectionError::DeadlineNotBelowDuration { .. })
        ));
        assert!(matches!(
            le.clone().retry_period(Duration::from_secs(10)).validate(),
            Err(LeaderElectionError::RetryNotBelowDeadline { .. })
        ));
        assert_eq!(
            le.clone().retry_period(Duration::ZERO).validate(),
            Err(LeaderElectionError::ZeroRetryPeriod)
        );
        assert_eq!(
            LeaderElection::new("", "ns").validate(),
            Err(LeaderElectionError::NoName)
        );
    }

    #[test]
    fn jitter_stays_within_a_fifth() {
        for _ in 0..100 {
            let j = jitter(Duration::from_secs(2));
            assert!(j >= Duration::from_secs(2) && j <= Duration::from_millis(2400));
        }
    }
}
