//! Running any number of controllers over one set of shared caches: start-up, leader election, graceful
//! shutdown.

use std::future::Future;
use std::time::Duration;

use futures::future::FutureExt;
use kube::Client;
use tokio::sync::watch;

use crate::cache::{CacheOptions, CacheOptionsError, Caches, ListStrategy};
use crate::controller::{Backoff, Runner};
use crate::leader::{Elector, LeaderElection, LeaderElectionError};
use crate::metrics::Metrics;
use crate::reconciler::{ParentKind, Reconciler};
use crate::reconcilers::{Role, WiredKind};
use crate::sharding::{Gate, MemberLease, MembershipLost, ShardedKinds, Sharding, ShardingError};

/// Runs any number of controllers over one set of shared caches until shutdown.
///
/// ```no_run
/// # use kubewright::{Operator, Reconciler};
/// # async fn run<P: kubewright::ParentKind>(client: kube::Client, reconciler: Reconciler<P>) {
/// Operator::new(client).controller(reconciler).run_until_signal().await.unwrap();
/// # }
/// ```
pub struct Operator {
    client: Client,
    caches: Caches,
    runners: Vec<Runner>,
    /// The same controllers' passes as dry runs ([`Operator::plan`]).
    planners: Vec<crate::plan::Planner>,
    deadline: Duration,
    backoff: Backoff,
    retry_rate: crate::controller::RetryRate,
    health: crate::probes::Health,
    leader: Option<LeaderElection>,
    names: Vec<String>,
    /// Cache options that could not be set, reported when the operator runs.
    invalid: Vec<CacheOptionsError>,
    /// Kinds a reconciler declared through two types, reported when the operator runs.
    twice: Vec<crate::reconcilers::KindDeclaredTwice>,
    /// Asks the API server, with a watch of the first controller's parent kind, whether caches can stream
    /// their first lists (when streaming is asked for).
    probe: Option<ListProbe>,
    /// How caches get their first lists, when chosen (default: streamed where the server can).
    lists: Option<ListStrategy>,
    /// The pass timeout of controllers added later that set none.
    timeout: Option<Duration>,
    /// The resync period of controllers added later that set none.
    resync: Option<Duration>,
    /// Sharded across replicas instead of leader election, when set.
    sharding: Option<Sharding>,
    /// Each controller's kinds, as sharding sees them.
    sharded_kinds: Vec<ShardedKinds>,
    /// Tells the controllers which parents are this member's (open when not sharded).
    gate: Gate,
}

type ListProbe = Box<
    dyn FnOnce(Client, Option<String>) -> futures::future::BoxFuture<'static, ListStrategy> + Send,
>;

impl std::fmt::Debug for Operator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Operator")
            .field("caches", &self.caches)
            .field("controllers", &self.runners.len())
            .finish_non_exhaustive()
    }
}

impl Operator {
    /// An operator talking to the cluster through `client`, watching every namespace.
    pub fn new(client: Client) -> Self {
        Self::for_namespaces(client, Vec::<String>::new())
    }

    /// An operator that watches and caches namespaced kinds in `namespaces` only (none: every namespace),
    /// one watch per namespace, so a Role in each is all the access its namespaced kinds need
    /// ([`Manifests::watch_namespaces`](crate::manifests::Manifests::watch_namespaces) emits them).
    /// Cluster-scoped kinds are still watched cluster-wide.
    ///
    /// ```no_run
    /// # fn demo(client: kube::Client) {
    /// let operator = kubewright::Operator::for_namespaces(client, ["team-a", "team-b"]);
    /// assert_eq!(operator.caches().namespaces(), ["team-a", "team-b"]);
    /// # }
    /// ```
    pub fn for_namespaces(
        client: Client,
        namespaces: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        Self {
            caches: Caches::for_namespaces(client.clone(), namespaces),
            client,
            runners: Vec::new(),
            planners: Vec::new(),
            deadline: Duration::from_secs(30),
            backoff: Backoff::default(),
            retry_rate: crate::controller::RetryRate::default(),
            health: crate::probes::Health::default(),
            leader: None,
            names: Vec::new(),
            invalid: Vec::new(),
            twice: Vec::new(),
            probe: None,
            lists: None,
            timeout: None,
            resync: None,
            sharding: None,
            sharded_kinds: Vec::new(),
            gate: Gate::default(),
        }
    }

    /// The shared caches.
    pub fn caches(&self) -> &Caches {
        &self.caches
    }

    /// What the health probes report about this operator ([`crate::probes`]): ready once every cache holds
    /// its first list, alive while it runs with all its controllers.
    pub fn health(&self) -> crate::probes::Health {
        self.health.clone()
    }

    /// How long a pass may run before its controller counts as stuck and the liveness probe fails (default
    /// [`DEFAULT_STUCK_AFTER`](crate::probes::DEFAULT_STUCK_AFTER), 10 minutes): longer than any pass should
    /// take, including its steps' own timeouts, so that a kubelet restarts an operator whose step awaits
    /// something that never comes.
    pub fn stuck_after(self, limit: Duration) -> Self {
        self.health.set_stuck_after(limit);
        self
    }

    /// How long in-flight passes may take to finish after shutdown starts (default 30s).
    pub fn shutdown_deadline(mut self, d: Duration) -> Self {
        self.deadline = d;
        self
    }

    /// The error backoff for every controller added after this call.
    pub fn backoff(mut self, backoff: Backoff) -> Self {
        self.backoff = backoff;
        self
    }

    /// The overall rate of retries after errors and conflicts for every controller added after this call, each
    /// controller with its own bucket (default [`RetryRate::default`](crate::controller::RetryRate): 10 a
    /// second, bursts of 100, as controller-runtime; the `--retry-rate` and `--retry-burst` flags set it).
    pub fn retry_rate(mut self, rate: crate::controller::RetryRate) -> Self {
        self.retry_rate = rate;
        self
    }

    /// How the caches get their first lists. By default ([`ListStrategy::Streaming`]) [`Operator::run_until`]
    /// first asks the API server ([`probe_list_strategy`](crate::cache::probe_list_strategy), one watch that
    /// selects nothing) and streams them where it can, as client-go does (no LIST request, no whole list in one
    /// response), else lists in pages; a cache whose streamed list the server refuses later lists in pages too.
    /// [`ListStrategy::Paged`] always lists in pages.
    pub fn list_strategy(mut self, strategy: ListStrategy) -> Self {
        self.lists = Some(strategy);
        self
    }

    /// Cancels a pass that runs longer than `limit`, in every controller added after this call that sets no
    /// timeout of its own ([`Reconciler::timeout`] says what a cut pass leaves; the `--reconcile-timeout`
    /// flag sets this).
    pub fn reconcile_timeout(mut self, limit: Option<Duration>) -> Self {
        self.timeout = limit;
        self
    }

    /// Reconciles every parent at least once per `period`, in every controller added after this call that
    /// sets no period of its own ([`Reconciler::resync_every`]; the `--sync-period` flag sets this).
    pub fn resync_every(mut self, period: Option<Duration>) -> Self {
        self.resync = period;
        self
    }

    /// Adds a controller for `P`.
    pub fn controller<P: ParentKind>(mut self, mut reconciler: Reconciler<P>) -> Self {
        reconciler.timeout = reconciler.timeout.or(self.timeout);
        reconciler.resync = reconciler.resync.or(self.resync);
        let name = reconciler.name().to_string();
        let wiring = reconciler.wiring();
        self.twice.extend(wiring.declared_twice().iter().cloned());
        self.sharded_kinds.push(ShardedKinds {
            parents: kube::api::ApiResource::erase::<P>(&()),
            children: wiring
                .kinds()
                .iter()
                .filter(|k| k.role == Role::Owned)
                .map(WiredKind::api_resource)
                .collect(),
            shared: wiring
                .kinds()
                .iter()
                .filter(|k| k.role != Role::Owned)
                .map(|k| (k.api_version.clone(), k.kind.clone()))
                .collect(),
        });
        if let Some((runner, planner)) = crate::controller::runner(
            &self.client,
            &self.caches,
            reconciler,
            self.backoff,
            self.retry_rate,
            self.health.clone(),
            self.gate.clone(),
        ) {
            self.names.push(name);
            self.runners.push(runner);
            self.planners.push(planner);
        }
        if self.probe.is_none() {
            self.probe = Some(Box::new(|client, namespace| {
                Box::pin(async move {
                    crate::cache::probe_list_strategy::<P>(&client, namespace.as_deref()).await
                })
            }));
        }
        self
    }

    /// Sets what the cache of `K` holds (every object by default): the children this operator wrote
    /// ([`CacheOptions::owned`]), the objects a selector picks, or their metadata only. Before or after the
    /// controllers that use the kind are added; options that cannot be used (see [`CacheOptionsError`]) make
    /// [`Operator::run_until`] fail before anything starts.
    ///
    /// ```
    /// # use k8s_openapi::api::core::v1::Secret;
    /// # use kubewright::{CacheOptions, Operator};
    /// # fn f(client: kube::Client) {
    /// let operator = Operator::new(client).cache::<Secret>(CacheOptions::owned());
    /// assert!(!operator.caches().get::<Secret>().unwrap().holds_every_object());
    /// # }
    /// ```
    pub fn cache<K: crate::CachedKind>(mut self, options: CacheOptions) -> Self {
        if let Err(e) = self.caches.configure::<K>(options) {
            self.invalid.push(e);
        }
        self
    }

    /// Elects a leader before running the controllers ([`crate::leader`]): caches fill on every replica,
    /// only the one holding the Lease reconciles.
    pub fn leader_election(mut self, election: LeaderElection) -> Self {
        self.leader = Some(election);
        self
    }

    /// Shards the parents across the replicas of `sharding`'s group instead of electing a leader
    /// ([`crate::sharding`]): each replica holds a membership Lease, caches only the parents labelled with its
    /// identity and their children, and reconciles only those; the replica holding the group's assigner Lease
    /// assigns parents to live members and moves them when membership changes, each move handed over by the
    /// old owner (or, for a dead one, after its Lease expired), so no parent has two writers.
    ///
    /// ```no_run
    /// # use kubewright::{Operator, sharding::Sharding};
    /// # async fn demo(client: kube::Client) {
    /// let operator = Operator::new(client).sharding(Sharding::new("db-operator", "ops"));
    /// # }
    /// ```
    pub fn sharding(mut self, sharding: Sharding) -> Self {
        self.sharding = Some(sharding);
        self
    }

    /// The names of the controllers added so far.
    pub fn controller_names(&self) -> &[String] {
        &self.names
    }

    /// A Lease name for this operator's leader election, from its controllers' names (sorted, joined by
    /// `-`, with `-leader`; at most 63 characters), so replicas of one operator agree on it.
    pub fn lease_name(&self) -> String {
        let mut names = self.names.clone();
        names.sort();
        names.dedup();
        let base = if names.is_empty() {
            "operator".to_string()
        } else {
            names.join("-")
        };
        let mut base: String = base
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                    c.to_ascii_lowercase()
                } else {
                    '-'
                }
            })
            .take(63 - "-leader".len())
            .collect();
        while base.ends_with(['-', '.']) {
            base.pop();
        }
        format!("{base}-leader")
    }

    /// The client the operator talks through.
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// What the controllers would write, without writing ([`crate::plan`]): fills the caches (waiting at most
    /// `sync` for their first lists), runs one pass per parent (only the parent `selector` picks, when given)
    /// with every write sent as a server-side dry run, and returns the writes as diffs, sorted by parent.
    /// Nothing is stored and no event is sent; leader election, if set, is not used.
    pub async fn plan(
        self,
        selector: Option<crate::plan::ParentSelector>,
        sync: Duration,
    ) -> Result<crate::plan::Plan, crate::plan::PlanError> {
        let Operator {
            caches,
            runners,
            planners,
            invalid,
            twice,
            ..
        } = self;
        // The controllers do not run: their trigger streams are dropped before the caches fill.
        drop(runners);
        if let Some(e) = invalid.into_iter().next() {
            return Err(RunError::from(e).into());
        }
        if let Some(e) = twice.into_iter().next() {
            return Err(RunError::from(e).into());
        }
        crate::plan::run(caches, planners, selector, sync).await
    }

    /// Runs until Ctrl-C (SIGINT) or SIGTERM, then shuts down gracefully (see [`Operator::run_until`]).
    pub async fn run_until_signal(self) -> Result<(), RunError> {
        self.run_until(shutdown_signal()).await
    }

    /// Runs until `shutdown` resolves: then stops taking work, lets in-flight passes finish within the
    /// deadline, stops every watch, releases the Lease if it leads, and returns with no task left running.
    ///
    /// With [leader election](Operator::leader_election) the caches fill at once and the controllers start
    /// when this replica takes the Lease. Losing it stops every controller at once (no pass finishes) and
    /// returns [`RunError::LeadershipLost`]: the process should exit, as controller-runtime's does, and
    /// start again as a standby.
    pub async fn run_until(
        self,
        shutdown: impl Future<Output = ()> + Send,
    ) -> Result<(), RunError> {
        let Operator {
            client,
            caches,
            runners,
            deadline,
            health,
            leader,
            invalid,
            twice,
            probe,
            lists,
            sharding,
            sharded_kinds,
            gate,
            ..
        } = self;
        if let Some(e) = invalid.into_iter().next() {
            return Err(e.into());
        }
        if let Some(e) = twice.into_iter().next() {
            return Err(e.into());
        }
        // A kind the cluster does not serve (a child's CRD not installed) fails now, naming it, rather than as
        // a cache that never fills.
        caches.check_served().await?;
        let mut elector = match leader {
            Some(_) if sharding.is_some() => {
                return Err(RunError::Sharding(ShardingError::WithLeaderElection));
            }
            Some(election) => {
                election.validate()?;
                Some(Elector::new(client.clone(), election))
            }
            None => None,
        };
        // A sharded member narrows its caches and joins its group before any cache starts.
        let (assign_stop, assign_stopped) = watch::channel(false);
        let mut assigning = tokio::task::JoinSet::new();
        let mut member = match sharding {
            Some(config) => {
                let mut kinds: Vec<String> = sharded_kinds
                    .iter()
                    .map(|k| format!("{}.{}", k.parents.plural, k.parents.group))
                    .collect();
                kinds.dedup();
                let config = config.with_kinds(kinds);
                let member =
                    crate::sharding::start(&client, &caches, &gate, &config, &sharded_kinds)
                        .await
                        .map_err(|e| match e {
                            crate::sharding::StartError::Sharding(e) => RunError::Sharding(e),
                            crate::sharding::StartError::Cache(e) => RunError::CacheOptions(e),
                        })?;
                assigning.spawn(crate::sharding::assign(
                    client.clone(),
                    config,
                    sharded_kinds,
                    caches.namespaces().to_vec(),
                    assign_stopped,
                ));
                Some(member)
            }
            None => None,
        };
        // Streamed first lists unless paged ones are asked for, where the server supports them (no LIST
        // request, no whole list in one response); paged lists otherwise.
        match (lists.unwrap_or(ListStrategy::Streaming), probe) {
            (ListStrategy::Streaming, Some(probe)) => {
                let namespace = caches.namespaces().first().cloned();
                caches.set_list_strategy(probe(client.clone(), namespace).await);
            }
            (ListStrategy::Streaming, None) => {}
            (ListStrategy::Paged, _) => caches.set_list_strategy(ListStrategy::Paged),
        }
        let mut watches = tokio::task::JoinSet::new();
        for w in caches.take_watches() {
            watches.spawn(w);
        }
        {
            let (caches, health) = (caches.clone(), health.clone());
            watches.spawn(
                async move {
                    caches.ready().await;
                    health.set_synced();
                }
                .boxed(),
            );
        }
        health.set_running(true);
        tracing::info!(kinds = ?caches.kinds(), "operator started");
        let stopped = |mut watches: tokio::task::JoinSet<()>, health: crate::probes::Health| async move {
            watches.abort_all();
            while watches.join_next().await.is_some() {}
            health.set_running(false);
            tracing::info!("operator stopped");
        };
        let mut shutdown = std::pin::pin!(shutdown);
        if let Some(elector) = &mut elector {
            let lease = elector.config().name().to_string();
            Metrics::global().leading(&lease, false);
            tokio::select! {
                _ = &mut shutdown => {
                    tracing::info!("shutdown requested before this replica led");
                    stopped(watches, health).await;
                    return Ok(());
                }
                _ = elector.acquire() => {
                    health.set_leader(true);
                    Metrics::global().leading(&lease, true);
                }
            }
        }
        let (stop_tx, stop_rx) = watch::channel(false);
        let mut tasks = tokio::task::JoinSet::new();
        let controllers = runners.len();
        for runner in runners {
            tasks.spawn(runner(stop_rx.clone()));
        }
        let lost = tokio::select! {
            _ = &mut shutdown => {
                tracing::info!("shutdown requested");
                None
            }
            lost = hold(&mut elector, &mut member) => Some(lost),
            _ = async {
                if controllers == 0 {
                    std::future::pending::<()>().await;
                }
                while tasks.join_next().await.is_some() {
                    // Before shutdown a controller ends only on a fatal error: the liveness probe says so.
                    if health.is_alive() {
                        tracing::error!("a controller ended; the liveness probe now fails");
                    }
                    health.set_failed();
                }
            } => None,
        };
        let lost = match lost {
            Some(lost) => Some(lost),
            None => {
                let _ = stop_tx.send(true);
                // The Lease is renewed while in-flight passes finish, so no standby writes beside them.
                tokio::select! {
                    drained = tokio::time::timeout(deadline, async {
                        while tasks.join_next().await.is_some() {}
                    }) => {
                        if drained.is_err() {
                            tracing::warn!(deadline = ?deadline, "in-flight reconciles did not finish in time; aborting them");
                        }
                        None
                    }
                    lost = hold(&mut elector, &mut member) => Some(lost),
                }
            }
        };
        tasks.abort_all();
        while tasks.join_next().await.is_some() {}
        health.set_leader(false);
        if let Some(elector) = &elector {
            Metrics::global().leading(elector.config().name(), false);
        }
        // The assigner stops (releasing its Lease) before this member leaves the group.
        let _ = assign_stop.send(true);
        while assigning.join_next().await.is_some() {}
        let result = match (lost, &mut elector, &mut member) {
            (Some(Lost::Leader(lost)), Some(elector), _) => {
                tracing::error!(lease = %elector.config().name(), reason = %lost, "leadership lost; stopped every controller");
                Err(RunError::LeadershipLost {
                    lease: format!(
                        "{}/{}",
                        elector.config().namespace(),
                        elector.config().name()
                    ),
                    reason: lost.to_string(),
                })
            }
            (Some(Lost::Member(lost)), _, Some(member)) => {
                tracing::error!(lease = %member.lease(), reason = %lost, "membership lost; stopped every controller");
                Err(RunError::MembershipLost {
                    lease: member.lease(),
                    reason: lost.to_string(),
                })
            }
            (_, Some(elector), _) => {
                elector.release().await;
                Ok(())
            }
            (_, None, Some(member)) => {
                // Every controller stopped: the others may take this member's parents at once.
                member.release().await;
                Ok(())
            }
            (_, None, None) => Ok(()),
        };
        stopped(watches, health).await;
        result
    }
}

/// Why a replica stopped holding what lets it write.
enum Lost {
    /// The leader's Lease.
    Leader(crate::leader::Lost),
    /// A sharded member's membership Lease.
    Member(MembershipLost),
}

/// Renews the leader's Lease while this replica leads, or a sharded member's membership Lease; without
/// either, never resolves.
async fn hold(elector: &mut Option<Elector>, member: &mut Option<MemberLease>) -> Lost {
    match (elector, member) {
        (Some(elector), _) => Lost::Leader(elector.hold().await),
        (None, Some(member)) => Lost::Member(member.hold().await),
        (None, None) => std::future::pending().await,
    }
}

/// Why [`Operator::run_until`] returned other than by the shutdown it was given.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// A cache's options cannot be used.
    #[error(transparent)]
    CacheOptions(#[from] CacheOptionsError),
    /// The leader election's settings cannot elect safely.
    #[error("leader election: {0}")]
    LeaderElection(#[from] LeaderElectionError),
    /// A reconciler declared one kind through two Rust types.
    #[error(transparent)]
    KindDeclaredTwice(#[from] crate::reconcilers::KindDeclaredTwice),
    /// A kind the caches watch is not served by the cluster (or not with its declared scope).
    #[error(transparent)]
    NotServed(#[from] crate::cache::NotServed),
    /// The sharding settings cannot work, disagree with another member's, or this replica's clock is off.
    #[error("sharding: {0}")]
    Sharding(#[from] ShardingError),
    /// This sharded member could not renew its membership Lease (or its clock drifted); every controller
    /// stopped at once.
    #[error("lost the membership lease {lease} ({reason}); every controller stopped")]
    MembershipLost {
        /// The Lease, as `namespace/name`.
        lease: String,
        /// Why it was lost.
        reason: String,
    },
    /// This replica led and lost its Lease; every controller stopped at once.
    #[error("lost the lease {lease} ({reason}); every controller stopped")]
    LeadershipLost {
        /// The Lease, as `namespace/name`.
        lease: String,
        /// Why it was lost.
        reason: String,
    },
}

/// Resolves on Ctrl-C (SIGINT) or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
}
