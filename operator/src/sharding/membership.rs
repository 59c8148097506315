//! Who takes part in a sharded operator: each replica holds a membership Lease of its own, and anyone can
//! tell which members are alive by the same rule as leader election (a record that has not changed for the
//! lease duration by the observer's own clock is dead; a released one is gone at once).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};
use kube::api::{Api, ListParams, PostParams};
use kube::{Client, ResourceExt};

use super::{GROUP_LABEL, Sharding, ShardingError};
use crate::leader::{DEFAULT_LEASE_DURATION, now, seconds};

/// A replica's own membership Lease: joined, renewed, released.
///
/// ```no_run
/// # use kubewright::sharding::{MemberLease, Members, Sharding};
/// # async fn demo(client: kube::Client) -> Result<(), kube::Error> {
/// let mut me = MemberLease::new(client.clone(), Sharding::new("db", "ops").identity("replica-0"));
/// me.renew().await?;
/// let mut members = Members::new(client, "ops", "db");
/// assert!(members.live().await?.contains(&"replica-0".to_string()));
/// # Ok(()) }
/// ```
#[derive(Debug)]
pub struct MemberLease {
    api: Api<Lease>,
    config: Sharding,
    /// The Lease as last written.
    lease: Option<Lease>,
}

/// The annotation on each membership Lease holding its member's settings ([`Sharding::settings`]): members
/// of one group must agree on them.
pub const SETTINGS_ANNOTATION: &str = "sharding.kubewright.dev/settings";

impl MemberLease {
    /// The Lease of the member `config` describes, not written yet.
    pub fn new(client: Client, config: Sharding) -> Self {
        Self {
            api: Api::namespaced(client, config.namespace()),
            config,
            lease: None,
        }
    }

    /// The Lease, as `namespace/name`.
    pub fn lease(&self) -> String {
        format!("{}/{}", self.config.namespace(), self.config.lease_name())
    }

    /// Joins the group: refuses settings another live member's Lease disagrees with (naming that Lease),
    /// writes this member's Lease, and refuses a clock further from the API server's than
    /// [`Sharding::clock_bound`].
    pub async fn join(&mut self) -> Result<(), ShardingError> {
        let failed = |e: kube::Error| ShardingError::Join(e.to_string());
        let leases = self
            .api
            .list(&ListParams::default().labels(&format!("{GROUP_LABEL}={}", self.config.group())))
            .await
            .map_err(failed)?;
        let ours = self.config.settings();
        for lease in leases {
            let holder = lease.spec.as_ref().and_then(|s| s.holder_identity.clone());
            if lease.name_any() == self.config.lease_name() || holder.is_none() {
                continue;
            }
            let theirs = lease
                .annotations()
                .get(SETTINGS_ANNOTATION)
                .cloned()
                .unwrap_or_default();
            if theirs != ours {
                return Err(ShardingError::Disagrees {
                    lease: format!("{}/{}", self.config.namespace(), lease.name_any()),
                    ours,
                    theirs,
                });
            }
        }
        self.renew().await.map_err(failed)?;
        self.check_clock()
    }

    /// How far this replica's clock is from the API server's, by the Lease last written: its renew time (this
    /// clock) against the time the server recorded for the write (`managedFields`, whole seconds). `None`
    /// before a write, or when the server records no time.
    pub fn clock_skew(&self) -> Option<Duration> {
        let lease = self.lease.as_ref()?;
        let renewed = lease.spec.as_ref()?.renew_time.as_ref()?.0;
        let server = lease
            .metadata
            .managed_fields
            .iter()
            .flatten()
            .filter_map(|f| f.time.as_ref().map(|t| t.0))
            .max()?;
        // The server's time is truncated to the second: the write happened in [server, server + 1 s).
        let ahead = renewed.duration_since(server).as_secs_f64() - 1.0;
        let behind = server.duration_since(renewed).as_secs_f64();
        Some(Duration::from_secs_f64(ahead.max(behind).max(0.0)))
    }

    fn check_clock(&self) -> Result<(), ShardingError> {
        match self.clock_skew() {
            Some(skew) if skew > self.config.clock_bound() => Err(ShardingError::ClockSkew {
                skew,
                bound: self.config.clock_bound(),
            }),
            _ => Ok(()),
        }
    }

    /// Writes the Lease with this replica as its holder and the time now: created when missing, taken over
    /// when a previous run of the same identity left it.
    pub async fn renew(&mut self) -> Result<(), kube::Error> {
        let name = self.config.lease_name();
        let current = match self.lease.clone() {
            Some(lease) => Some(lease),
            None => self.api.get_opt(&name).await?,
        };
        let written = match current {
            Some(lease) => {
                let renewed = self.renewed(lease);
                match self
                    .api
                    .replace(&name, &PostParams::default(), &renewed)
                    .await
                {
                    Ok(w) => w,
                    // Someone else wrote it (a person, a stale run): read it again next time.
                    Err(e) => {
                        self.lease = None;
                        return Err(e);
                    }
                }
            }
            None => {
                let lease = Lease {
                    metadata: ObjectMeta {
                        name: Some(name),
                        namespace: Some(self.config.namespace().to_string()),
                        labels: Some(
                            [(GROUP_LABEL.to_string(), self.config.group().to_string())].into(),
                        ),
                        ..ObjectMeta::default()
                    },
                    spec: None,
                };
                let lease = self.renewed(lease);
                self.api.create(&PostParams::default(), &lease).await?
            }
        };
        self.lease = Some(written);
        Ok(())
    }

    fn renewed(&self, mut lease: Lease) -> Lease {
        let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
        if spec.holder_identity.as_deref() != Some(self.config.member()) {
            spec.holder_identity = Some(self.config.member().to_string());
            spec.acquire_time = Some(now());
            spec.lease_transitions = Some(spec.lease_transitions.unwrap_or(0) + 1);
        }
        spec.lease_duration_seconds = Some(seconds(self.config.lease_duration));
        spec.renew_time = Some(now());
        lease
            .metadata
            .annotations
            .get_or_insert_with(Default::default)
            .insert(SETTINGS_ANNOTATION.to_string(), self.config.settings());
        lease
    }

    /// Renews every retry period; returns once no renewal succeeded for the renew deadline (the replica must
    /// then stop writing: the others count it dead `lease_duration` after the last renewal they saw).
    pub async fn hold(&mut self) -> MembershipLost {
        let mut renewed = Instant::now();
        loop {
            tokio::time::sleep(self.config.retry_period).await;
            let left = self.config.renew_deadline.saturating_sub(renewed.elapsed());
            let error = match tokio::time::timeout(left, self.renew()).await {
                Ok(Ok(())) => {
                    if let Err(e) = self.check_clock() {
                        tracing::error!(lease = %self.config.lease_name(), error = %e, "stopping");
                        return MembershipLost(e.to_string());
                    }
                    renewed = Instant::now();
                    continue;
                }
                Ok(Err(e)) => e.to_string(),
                Err(_) => "timed out".to_string(),
            };
            tracing::warn!(lease = %self.config.lease_name(), error = %error, "cannot renew the membership lease");
            if renewed.elapsed() >= self.config.renew_deadline {
                return MembershipLost(error);
            }
        }
    }

    /// Leaves the group at once: no holder. Only once this replica writes nothing more (its controllers
    /// stopped), since the others may take its parents at their next read.
    pub async fn release(&mut self) {
        let Some(mut lease) = self.lease.take() else {
            return;
        };
        let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
        spec.holder_identity = None;
        spec.renew_time = Some(now());
        if let Err(e) = self
            .api
            .replace(&lease.name_any(), &PostParams::default(), &lease)
            .await
        {
            tracing::warn!(lease = %self.config.lease_name(), error = %e, "cannot release the membership lease; the others count this replica dead when it expires");
        }
    }
}

/// The holder record of a membership Lease, compared to tell a renewal.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Record {
    holder: Option<String>,
    renew_time: Option<MicroTime>,
    duration: Duration,
}

/// Why a member stopped holding its Lease: no renewal succeeded within the renew deadline (the last error).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the membership lease was not renewed within the renew deadline ({0})")]
pub struct MembershipLost(pub String);

/// The members of a group as one observer sees them.
#[derive(Debug)]
pub struct Members {
    api: Api<Lease>,
    group: String,
    /// Each Lease's record and when this observer first saw it.
    observed: HashMap<String, (Record, Instant)>,
}

impl Members {
    /// An observer of the group `group`, whose Leases are in `namespace`.
    pub fn new(client: Client, namespace: &str, group: &str) -> Self {
        Self {
            api: Api::namespaced(client, namespace),
            group: group.to_string(),
            observed: HashMap::new(),
        }
    }

    /// Reads the group's Leases and answers the identities alive, sorted: those holding a Lease whose record
    /// changed less than its lease duration ago by this observer's clock. A Lease seen for the first time
    /// counts from now, so an observer that starts late waits a whole lease duration before it counts a
    /// stopped member dead.
    pub async fn live(&mut self) -> Result<Vec<String>, kube::Error> {
        let leases = self
            .api
            .list(&ListParams::default().labels(&format!("{GROUP_LABEL}={}", self.group)))
            .await?;
        Ok(self.observe(leases, Instant::now()))
    }

    /// The identities alive among `leases`, the group's Leases as read at `now` by this observer's clock.
    fn observe(&mut self, leases: impl IntoIterator<Item = Lease>, now: Instant) -> Vec<String> {
        let mut seen = HashMap::new();
        for lease in leases {
            let spec = lease.spec.clone().unwrap_or_default();
            let record = Record {
                holder: spec.holder_identity,
                renew_time: spec.renew_time,
                duration: spec
                    .lease_duration_seconds
                    .and_then(|s| u64::try_from(s).ok())
                    .map_or(DEFAULT_LEASE_DURATION, Duration::from_secs),
            };
            let since = match self.observed.remove(&lease.name_any()) {
                Some((before, at)) if before == record => at,
                _ => now,
            };
            seen.insert(lease.name_any(), (record, since));
        }
        self.observed = seen;
        let mut live: Vec<String> = self
            .observed
            .values()
            .filter(|(r, since)| now.duration_since(*since) < r.duration)
            .filter_map(|(r, _)| r.holder.clone())
            .collect();
        live.sort();
        live.dedup();
        live
    }
}

#[cfg(all(test, feature = "testing"))]
mod tests {
    use super::*;
    use crate::testing::ApiServer;

    fn member(client: &Client, identity: &str) -> MemberLease {
        MemberLease::new(
            client.clone(),
            Sharding::new("db", "default")
                .identity(identity)
                .lease_duration(Duration::from_millis(1500))
                .renew_deadline(Duration::from_millis(1000))
                .retry_period(Duration::from_millis(200)),
        )
    }

    #[tokio::test]
    async fn a_member_with_other_settings_is_refused_naming_the_lease() {
        let server = ApiServer::new();
        let client = server.client();
        let mut a = member(&client, "a");
        a.join().await.unwrap();
        // The embedded server records the time of each write: this clock is the server's.
        assert!(a.clock_skew().unwrap() <= Duration::from_secs(1));
        let mut b = MemberLease::new(
            client.clone(),
            Sharding::new("db", "default")
                .identity("b")
                .lease_duration(Duration::from_secs(20)),
        );
        let err = b.join().await.unwrap_err();
        assert!(
            matches!(&err, ShardingError::Disagrees { lease, .. } if lease == "default/db-a"),
            "{err}"
        );
        // Once `a` left, `b` joins with its own settings.
        a.release().await;
        b.join().await.unwrap();
    }

    #[tokio::test]
    async fn the_clock_skew_is_read_against_the_servers_write_time() {
        use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ManagedFieldsEntry, Time};
        let at = |s: &str| s.parse::<k8s_openapi::jiff::Timestamp>().unwrap();
        let lease = |renewed: &str, server: &str| Lease {
            metadata: ObjectMeta {
                managed_fields: Some(vec![ManagedFieldsEntry {
                    time: Some(Time(at(server))),
                    ..ManagedFieldsEntry::default()
                }]),
                ..ObjectMeta::default()
            },
            spec: Some(LeaseSpec {
                renew_time: Some(MicroTime(at(renewed))),
                ..LeaseSpec::default()
            }),
        };
        let server = ApiServer::new();
        let client_free = |l: Lease| MemberLease {
            api: Api::namespaced(server.client(), "default"),
            config: Sharding::new("db", "default").identity("a"),
            lease: Some(l),
        };
        // Within the server's second: no skew.
        let m = client_free(lease("2026-01-01T00:00:00.400Z", "2026-01-01T00:00:00Z"));
        assert_eq!(m.clock_skew(), Some(Duration::ZERO));
        // Seven seconds ahead (six past the second's end), and three behind.
        let m = client_free(lease("2026-01-01T00:00:07Z", "2026-01-01T00:00:00Z"));
        assert_eq!(m.clock_skew(), Some(Duration::from_secs(6)));
        assert!(m.check_clock().is_err(), "beyond the 5 s bound");
        let m = client_free(lease("2026-01-01T00:00:00Z", "2026-01-01T00:00:03Z"));
        assert_eq!(m.clock_skew(), Some(Duration::from_secs(3)));
        assert!(m.check_clock().is_ok());
    }

    #[tokio::test]
    async fn members_join_renew_expire_and_leave() {
        let server = ApiServer::new();
        let client = server.client();
        let mut members = Members::new(client.clone(), "default", "db");
        assert!(members.live().await.unwrap().is_empty());
        let (mut a, mut b) = (member(&client, "a"), member(&client, "b"));
        a.renew().await.unwrap();
        b.renew().await.unwrap();
        assert_eq!(members.live().await.unwrap(), ["a", "b"]);
        // `a` keeps renewing, `b` stops: after the lease duration (1 s) by the observer's clock, `b` is dead.
        // The observer's clock is given, so a loaded machine cannot make the test's sleeps run long.
        let leases = Api::<Lease>::namespaced(client.clone(), "default");
        let read = || async { leases.list(&ListParams::default()).await.unwrap() };
        let t0 = Instant::now();
        assert_eq!(members.observe(read().await, t0), ["a", "b"]);
        a.renew().await.unwrap();
        let t = t0 + Duration::from_millis(800);
        assert_eq!(members.observe(read().await, t), ["a", "b"]);
        a.renew().await.unwrap();
        let t = t0 + Duration::from_millis(1800);
        assert_eq!(members.observe(read().await, t), ["a"]);
        // A renewal keeps a member alive while it holds its Lease.
        let holding = tokio::spawn(async move {
            a.hold().await;
        });
        // `b` comes back under the same identity: alive at once.
        b.renew().await.unwrap();
        assert_eq!(members.live().await.unwrap(), ["a", "b"]);
        // A released Lease is gone at once.
        b.release().await;
        assert_eq!(members.live().await.unwrap(), ["a"]);
        holding.abort();
        // Another group's Lease is not a member.
        let mut other = MemberLease::new(
            client.clone(),
            Sharding::new("web", "default").identity("c"),
        );
        other.renew().await.unwrap();
        assert_eq!(members.live().await.unwrap(), ["a"]);
    }
}
