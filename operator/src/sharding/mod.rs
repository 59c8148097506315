//! Sharding parents across replicas: [`Operator::sharding`](crate::Operator::sharding) (the `--sharded` flag of
//! an [`App`](crate::cli::App)) runs a replica as a member of a group instead of electing a leader. Every
//! member reconciles, each only the parents assigned to it.
//!
//! **What runs.** Each member holds its own Lease ([`MemberLease`]; its settings written on it, so a member
//! with other settings refuses to join, naming the Lease that disagrees). Its caches of the parent kinds and
//! of the child kinds hold only the objects labelled with its identity (a label selector on the watch; kinds
//! some controller reads or watches without owning them stay whole). A pass starts only for a parent the
//! cache shows with this member's label; one with a drain label towards another member is handed over
//! instead of reconciled. The member holding the group's assigner Lease (`<group>-assigner`, elected as the
//! leader election elects) runs the [`Assigner`] every retry period. Metrics:
//! `operator_shard_parents{kind,shard}`, `operator_shard_moves_total{kind,move}` and
//! `operator_shard_handovers_total{controller}`; `kubectl get -L sharding.kubewright.dev/shard` shows each
//! parent's owner.
//!
//! **Not built yet:** the explorer's membership perturbation, and the proof at 10,000 parents with 1, 2 and
//! 4 replica processes. The assigner lists the parents' metadata every round rather than watching them.
//!
//! # Design
//!
//! Kubernetes already has what sharding needs: Leases for membership, labels for assignment, and watches with
//! a label selector so that each replica caches only its own parents.
//!
//! - **Membership.** Every replica of group `G` holds a Lease `G-<identity>` labelled
//!   `sharding.kubewright.dev/group: G`, renewed every retry period. A member is alive for an observer while
//!   the Lease's holder record keeps changing: it is dead once the record has not changed for the lease
//!   duration by the observer's clock (no two clocks are compared, as in leader election), and gone at once
//!   when it releases the Lease, which it does only after its controllers stopped.
//! - **Ownership is a label.** A parent belongs to the member its label `sharding.kubewright.dev/shard`
//!   names, and to no one without it. A replica reconciles a parent only while its cache shows that label with
//!   its identity (its parent cache selects on it), and only while it holds its own Lease.
//! - **Assignment.** One assigner (the replica that holds the group's leader-election Lease) watches the
//!   parents' metadata and the members, and labels each parent with [`owner`] over the live members.
//!   [`decide`] says what it does with each parent:
//!   - no label: label it ([`Move::Assign`]): nobody wrote it before;
//!   - labelled with a live member that should no longer own it: ask that member to hand it over, with the
//!     label `sharding.kubewright.dev/drain-to: <member>` ([`Move::Drain`]), and wait;
//!   - labelled with a member that is dead: relabel its children, then the parent ([`Move::Reassign`]).
//! - **Hand-over by the old owner.** A member that sees the drain label on one of its parents queues it like
//!   a change. When no pass of it runs (the work queue runs one pass per parent at a time), instead of a pass
//!   it relabels the parent's children (which it cached: they carry its label, written by the runtime when it
//!   created them) and then the parent, from itself to the member the drain label names, each write guarded by
//!   the resourceVersion it read. From that write on it starts no pass of the parent, and the new owner starts
//!   its first only once its cache shows the parent with its label. So at no moment do two members reconcile
//!   a parent.
//!
//! # Failure cases
//!
//! - **A member crashes** (SIGKILL, node lost): its Lease stops changing. The assigner counts it dead one lease
//!   duration after the last change it saw and reassigns its parents. Until then they wait: no writer is
//!   better than two.
//! - **A member is cut off from the API server** but still runs: it cannot renew, and stops writing once the
//!   renew deadline passes since its last renewal (as a leader does). The assigner counts from a later moment
//!   (when it saw that renewal) and waits the longer lease duration, so the member stops
//!   `lease_duration - renew_deadline` before its parents move, provided the two clocks run at nearly the
//!   same rate (not the same time). A pass in flight at that moment may still send the writes it started:
//!   the same bound as leader election, documented there.
//! - **A graceful stop** (SIGTERM): the member stops its controllers (passes in flight end), then releases its
//!   Lease; the assigner reassigns its parents at its next read.
//! - **Membership changes during a hand-over:** [`decide`] redirects a drain whose target left, and cancels
//!   one membership no longer wants; the old owner acts on the label it reads, with a resourceVersion guard,
//!   so a drain changed meanwhile makes its relabel conflict and read again.
//! - **The cache lags behind a hand-over:** the old owner's parent cache may still show the parent with its
//!   label after the relabel; the member remembers the resourceVersion it relabelled and starts no pass of
//!   that version (`gate.rs`).
//! - **A clock far off:** the protocol compares durations on one clock, never two clocks' times, but a
//!   member whose clock is further from the API server's than the lease duration minus the renew deadline
//!   (by the time the server records for its Lease writes) refuses to join, or stops, and says so.
//! - **The assigner fails over:** a new leader computes the same decisions from the labels, which hold all
//!   the state; a stale assigner's writes carry stale resourceVersions and conflict.
//! - **Views differ between members** (one has seen a member join, another not): only the assigner's view
//!   decides; members act on labels alone.
//! - **Children created by the new owner before its child cache shows the relabelled ones:** the create is
//!   refused (`409 AlreadyExists`), the pass retries, and the next sees them. Watched and referenced objects
//!   that no parent owns carry no label: every member caches them all.

mod assigner;
mod gate;
mod membership;
mod plan;
mod ring;
mod run;

use std::time::Duration;

pub use assigner::{AssignError, Assigner, FIELD_MANAGER, Round};
pub(crate) use gate::{Admit, Gate};
pub use membership::{MemberLease, Members, MembershipLost, SETTINGS_ANNOTATION};
pub use plan::{Move, ParentShard, decide};
pub use ring::owner;
pub(crate) use run::{ShardedKinds, StartError, assign, start};

use crate::leader::{DEFAULT_LEASE_DURATION, DEFAULT_RENEW_DEADLINE, DEFAULT_RETRY_PERIOD};

/// The label on each membership Lease naming its group.
pub const GROUP_LABEL: &str = "sharding.kubewright.dev/group";
/// The label on a parent (and its children) naming the member that owns it.
pub const SHARD_LABEL: &str = "sharding.kubewright.dev/shard";
/// The label on a parent naming the member its owner should hand it over to.
pub const DRAIN_LABEL: &str = "sharding.kubewright.dev/drain-to";

/// The member that owns an object by its shard label, if it has one.
pub(crate) fn shard_of(meta: &kube::core::ObjectMeta) -> Option<&str> {
    meta.labels.as_ref()?.get(SHARD_LABEL).map(String::as_str)
}

/// How a replica takes part in a sharded group: the group, its identity and the Lease timings (leader
/// election's, with the same rule: the lease duration longer than the renew deadline, longer than the retry
/// period).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sharding {
    group: String,
    namespace: String,
    identity: String,
    lease_duration: Duration,
    renew_deadline: Duration,
    retry_period: Duration,
    /// The sharded parent kinds (`kind.group`), part of the settings members must agree on.
    kinds: Vec<String>,
}

/// A sharding configuration that cannot work.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShardingError {
    /// The identity is the value of labels and part of a Lease's name.
    #[error(
        "the member identity {0:?} must be 1 to 63 lowercase letters, digits or '-', starting and ending with a letter or digit"
    )]
    Identity(String),
    /// The timings are leader election's, with its rules.
    #[error(transparent)]
    Timings(#[from] crate::leader::LeaderElectionError),
    /// Another live member of the group runs with other settings.
    #[error(
        "the membership Lease {lease} runs with other sharding settings ({theirs:?}) than this replica ({ours:?}); every replica of a group must run with the same settings"
    )]
    Disagrees {
        /// The other member's Lease, `namespace/name`.
        lease: String,
        /// This replica's settings.
        ours: String,
        /// The other member's.
        theirs: String,
    },
    /// This replica's clock is further from the API server's than the bound.
    #[error(
        "this replica's clock is {skew:?} away from the API server's, more than the {bound:?} sharding allows (the lease duration minus the renew deadline); fix the clock (NTP) and start again"
    )]
    ClockSkew {
        /// How far.
        skew: Duration,
        /// The bound.
        bound: Duration,
    },
    /// Sharding replaces leader election: an operator runs one or the other.
    #[error(
        "an operator runs either sharded or with leader election, not both (sharded members need no leader; the assigner elects its own)"
    )]
    WithLeaderElection,
    /// The membership Lease could not be read or written.
    #[error("joining the group: {0}")]
    Join(String),
}

impl Sharding {
    /// Membership of `group` with Leases in `namespace`, under the identity of this process (its host name,
    /// a pod's name, and a random suffix) and controller-runtime's leader-election timings.
    pub fn new(group: impl Into<String>, namespace: impl Into<String>) -> Self {
        Self {
            group: group.into(),
            namespace: namespace.into(),
            identity: default_identity(),
            lease_duration: DEFAULT_LEASE_DURATION,
            renew_deadline: DEFAULT_RENEW_DEADLINE,
            retry_period: DEFAULT_RETRY_PERIOD,
            kinds: Vec::new(),
        }
    }

    /// This member's identity (the value of the shard label on its parents).
    pub fn identity(mut self, identity: impl Into<String>) -> Self {
        self.identity = identity.into();
        self
    }

    /// How long a member's Lease may go unchanged before the others count it dead.
    pub fn lease_duration(mut self, d: Duration) -> Self {
        self.lease_duration = d;
        self
    }

    /// How long a member keeps trying to renew before it stops writing.
    pub fn renew_deadline(mut self, d: Duration) -> Self {
        self.renew_deadline = d;
        self
    }

    /// How often a member renews and the assigner reads the members.
    pub fn retry_period(mut self, d: Duration) -> Self {
        self.retry_period = d;
        self
    }

    /// The group.
    pub fn group(&self) -> &str {
        &self.group
    }

    /// The Leases' namespace.
    pub fn namespace(&self) -> &str {
        &self.namespace
    }

    /// This member's identity.
    pub fn member(&self) -> &str {
        &self.identity
    }

    /// The name of this member's Lease.
    pub fn lease_name(&self) -> String {
        format!("{}-{}", self.group, self.identity)
    }

    /// The settings every member of the group must share, as written on its Lease
    /// ([`SETTINGS_ANNOTATION`]): the timings and the parent kinds.
    pub fn settings(&self) -> String {
        let mut kinds = self.kinds.clone();
        kinds.sort();
        format!(
            "leaseDuration={}s,renewDeadline={}s,retryPeriod={}s,kinds={}",
            self.lease_duration.as_secs_f64(),
            self.renew_deadline.as_secs_f64(),
            self.retry_period.as_secs_f64(),
            kinds.join("+")
        )
    }

    /// The sharded parent kinds, as `kind.group` (set by the operator from its controllers).
    pub(crate) fn with_kinds(mut self, kinds: Vec<String>) -> Self {
        self.kinds = kinds;
        self
    }

    /// How far a member's clock may be from the API server's: the lease duration minus the renew deadline,
    /// the margin between a member that stops writing and the others taking its parents. A member further off
    /// refuses to join, or stops (see [`MembershipLost`]).
    pub fn clock_bound(&self) -> Duration {
        self.lease_duration.saturating_sub(self.renew_deadline)
    }

    /// The timings: how long a Lease may go unchanged, the renew deadline and the retry period.
    pub(crate) fn timings(&self) -> (Duration, Duration, Duration) {
        (self.lease_duration, self.renew_deadline, self.retry_period)
    }

    /// Checks the identity and the timings.
    ///
    /// ```
    /// # use kubewright::sharding::Sharding;
    /// assert!(Sharding::new("db", "ops").identity("replica-0").validate().is_ok());
    /// assert!(Sharding::new("db", "ops").identity("Replica_0").validate().is_err());
    /// ```
    pub fn validate(&self) -> Result<(), ShardingError> {
        let id = &self.identity;
        let edge =
            |c: Option<char>| c.is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
        let ok = (1..=63).contains(&id.len())
            && id
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            && edge(id.chars().next())
            && edge(id.chars().last());
        if !ok {
            return Err(ShardingError::Identity(id.clone()));
        }
        crate::leader::LeaderElection::new(self.lease_name(), self.namespace.clone())
            .lease_duration(self.lease_duration)
            .renew_deadline(self.renew_deadline)
            .retry_period(self.retry_period)
            .validate()?;
        Ok(())
    }
}

/// The host name, lowercased to a label value, and eight random hex digits.
fn default_identity() -> String {
    let host: String = std::env::var("HOSTNAME")
        .ok()
        .or_else(|| std::fs::read_to_string("/proc/sys/kernel/hostname").ok())
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .take(50)
        .collect();
    let host = host.trim_matches('-');
    let host = if host.is_empty() { "operator" } else { host };
    let suffix = uuid::Uuid::new_v4().simple().to_string();
    format!("{host}-{}", &suffix[..8])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_identity_is_valid() {
        let s = Sharding::new("db", "ops");
        assert!(s.validate().is_ok(), "{}", s.member());
        assert_ne!(s.member(), Sharding::new("db", "ops").member());
    }

    #[test]
    fn bad_timings_are_refused() {
        let s = Sharding::new("db", "ops")
            .identity("a")
            .lease_duration(Duration::from_secs(5))
            .renew_deadline(Duration::from_secs(10));
        assert!(matches!(s.validate(), Err(ShardingError::Timings(_))));
    }
}
