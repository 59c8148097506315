//! A test environment: an in-memory API server with given objects, shared caches watching it, and passes of a
//! reconciler run exactly as the controller runs them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::jiff::Timestamp;
use kube::api::Api;
use kube::runtime::reflector::ObjectRef;
use kube::runtime::wait::{await_condition, conditions};
use kube::{Client, ResourceExt};
use serde::Serialize;
use serde_json::Value;

use super::expect::{Write, writes_of_requests};
use crate::cache::{Cache, CachedKind, Caches};
use crate::command::{ApiDispatcher, Dispatcher};
use crate::reconciler::{ParentKind, Pass, Reconciler};
use crate::reconcilers::{KindDeclaredTwice, Wiring};
use crate::testing::apiserver::{ApiError, ApiServer, Clock, RequestRecord, ResourceType, Verb};

/// How long the environment waits for caches, CRDs and [`TestEnv::wait_for`].
const WAIT: Duration = Duration::from_secs(10);

/// The seed cases use unless told otherwise: uids and generated names are the same on every run.
pub const DEFAULT_SEED: u64 = 42;

/// The time cases start at unless told otherwise: 2025-01-01T00:00:00Z.
///
/// ```
/// assert_eq!(kubewright::testing::table::default_time().to_string(), "2025-01-01T00:00:00Z");
/// ```
pub fn default_time() -> Timestamp {
    Timestamp::constant(1_735_689_600, 0)
}

/// What went wrong while setting up or driving a test environment (not a failed expectation).
#[derive(Debug, thiserror::Error)]
pub enum HarnessError {
    /// The API server refused a given object.
    #[error("the API server refused {what}: {source}")]
    Refused {
        /// What was being stored.
        what: String,
        /// The server's answer.
        #[source]
        source: ApiError,
    },
    /// A request through the client failed.
    #[error("{context}: {source}")]
    Kube {
        /// What the harness was doing.
        context: String,
        /// The client error.
        #[source]
        source: kube::Error,
    },
    /// Something did not happen in time.
    #[error("timed out after {after:?} waiting for {what}")]
    Timeout {
        /// What the harness waited for.
        what: String,
        /// How long it waited.
        after: Duration,
    },
    /// [`TestEnv::converge`] ran its last allowed pass and that pass still wrote.
    #[error("{parent} did not converge in {passes} passes; the writes of each pass:{writes}")]
    NotConverged {
        /// The parent.
        parent: String,
        /// The passes run.
        passes: usize,
        /// The writes of each pass, one per line.
        writes: String,
    },
    /// Caches did not sync in time: which kinds, and what the server answered (e.g. a kind it does not
    /// serve: register it with [`TestEnv::register`]).
    #[error(transparent)]
    NotSynced(#[from] crate::cache::NotSynced),
    /// A reconciler wired into the environment declares one kind through two Rust types; an
    /// [`Operator`](crate::Operator) refuses it at start too ([`RunError::KindDeclaredTwice`](crate::RunError::KindDeclaredTwice)).
    #[error(transparent)]
    KindDeclaredTwice(#[from] KindDeclaredTwice),
    /// An object could not be (de)serialized.
    #[error("serialization failed: {0}")]
    Serde(#[from] serde_json::Error),
    /// The case is not set up right.
    #[error("{0}")]
    Setup(String),
}

/// An in-memory API server with a fixed clock and seed, the shared caches of a controller watching it, and
/// passes run exactly as the controller runs them (parent read from the cache, commands executed by an
/// [`ApiDispatcher`]). The building block of [`ReconcilerTestCase`](super::ReconcilerTestCase), and usable
/// directly for scenarios of several passes.
///
/// ```no_run
/// # use kubewright::Reconciler;
/// # async fn demo<P: kubewright::ParentKind>(reconciler: Reconciler<P>, given: serde_json::Value)
/// #     -> Result<(), kubewright::testing::table::HarnessError> {
/// use kubewright::testing::table::TestEnv;
/// let mut env = TestEnv::new();
/// env.insert(&given)?;
/// env.wire(&reconciler.wiring());
/// env.cache::<P>();
/// env.start().await?;
/// let parent = kube::runtime::reflector::ObjectRef::<P>::new("hello").within("default");
/// let first = env.pass(&reconciler, &parent).await?;
/// assert!(first.reads().is_empty());
/// env.shutdown().await;
/// # Ok(()) }
/// ```
pub struct TestEnv {
    server: ApiServer,
    caches: Caches,
    watches: Vec<tokio::task::JoinHandle<()>>,
    dispatchers: Mutex<HashMap<String, Arc<dyn Dispatcher>>>,
    /// The kinds a wired reconciler declared through two types, refused by the next [`TestEnv::start`].
    twice: Mutex<Vec<KindDeclaredTwice>>,
}

impl std::fmt::Debug for TestEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestEnv")
            .field("caches", &self.caches)
            .field("watches", &self.watches.len())
            .finish_non_exhaustive()
    }
}

impl Default for TestEnv {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for TestEnv {
    fn drop(&mut self) {
        for w in &self.watches {
            w.abort();
        }
    }
}

impl TestEnv {
    /// An environment at [`default_time`] with [`DEFAULT_SEED`]. Needs a Tokio runtime.
    pub fn new() -> Self {
        Self::at(default_time(), DEFAULT_SEED)
    }

    /// An environment whose clock stands at `time` and whose uids and generated names come from `seed`.
    pub fn at(time: Timestamp, seed: u64) -> Self {
        let server = ApiServer::builder()
            .clock(Clock::fixed(time))
            .seed(seed)
            .build();
        let caches = Caches::new(server.client());
        Self {
            server,
            caches,
            watches: Vec::new(),
            dispatchers: Mutex::default(),
            twice: Mutex::default(),
        }
    }

    /// The API server.
    pub fn server(&self) -> &ApiServer {
        &self.server
    }

    /// Serves a kind the server does not know (neither built in nor from a CRD); see [`ApiServer::register`].
    pub fn register(&self, kind: ResourceType) {
        self.server.register(kind);
    }

    /// A client on the API server.
    pub fn client(&self) -> Client {
        self.server.client()
    }

    /// The shared caches.
    pub fn caches(&self) -> &Caches {
        &self.caches
    }

    /// The server's fixed clock; [`Clock::advance`] moves it for the server, for the passes of
    /// [`TestEnv::pass`] and [`TestEnv::converge`], and for reconcilers given [`TestEnv::clock_fn`].
    pub fn clock(&self) -> &Clock {
        self.server.clock()
    }

    /// The current time of the fixed clock.
    pub fn now(&self) -> Timestamp {
        self.server.clock().now()
    }

    /// A clock for [`Reconciler::clock`] that reads the server's fixed clock, for a reconciler run outside
    /// [`TestEnv::pass`] and [`TestEnv::converge`] (which use the environment's time anyway), e.g. by an
    /// [`Operator`](crate::Operator) on [`TestEnv::client`].
    pub fn clock_fn(&self) -> impl Fn() -> Timestamp + Send + Sync + 'static {
        let clock = self.server.clock().clone();
        move || clock.now()
    }

    /// Installs a CRD and waits until it is established.
    pub async fn install_crd(&self, crd: &CustomResourceDefinition) -> Result<(), HarnessError> {
        install_crd(&self.server, crd).await
    }

    /// Stores an object as given (status, uid, generation and `deletionTimestamp` included; see
    /// [`ApiServer::insert`]). Put owners before the objects that name them: the garbage collector removes
    /// dependents whose owners do not exist.
    pub fn insert(&self, obj: &impl Serialize) -> Result<Value, HarnessError> {
        let value = serde_json::to_value(obj)?;
        let what = describe(&value);
        self.server
            .insert(value)
            .map_err(|source| HarnessError::Refused { what, source })
    }

    /// The cache of `K`, created (and started by the next [`TestEnv::start`]) if it is not there yet.
    pub fn cache<K: CachedKind>(&self) -> Cache<K> {
        self.caches.ensure::<K>()
    }

    /// Creates the caches of every kind a reconciler's wiring names. A kind it declares through two Rust
    /// types ([`KindDeclaredTwice`]) fails the next [`start`](Self::start), as it fails an operator's start.
    pub fn wire(&self, wiring: &Wiring) {
        for kind in wiring.kinds() {
            kind.ensure(&self.caches);
        }
        let mut twice = self.twice.lock().unwrap_or_else(|e| e.into_inner());
        twice.extend(wiring.declared_twice().iter().cloned());
    }

    /// Starts the watches of caches not started yet and waits until every cache holds its first list. Fails
    /// with [`HarnessError::KindDeclaredTwice`], before any watch starts, when a wired reconciler declares a
    /// kind through two Rust types.
    pub async fn start(&mut self) -> Result<(), HarnessError> {
        let twice = self
            .twice
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .first()
            .cloned();
        if let Some(e) = twice {
            return Err(e.into());
        }
        for w in self.caches.take_watches() {
            self.watches.push(tokio::spawn(w));
        }
        Ok(self.caches.ready_within(WAIT).await?)
    }

    /// Waits until the cached object of kind `K` named `name` satisfies `check` (which sees `None` while the
    /// cache has no such object).
    pub async fn wait_for<K: CachedKind>(
        &self,
        namespace: Option<&str>,
        name: &str,
        check: impl Fn(Option<&K>) -> bool,
    ) -> Result<(), HarnessError> {
        let cache = self
            .caches
            .get::<K>()
            .ok_or_else(|| HarnessError::Setup(format!("kind {} is not cached", K::kind(&()))))?;
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            if check(cache.get(namespace, name).as_deref()) {
                return Ok(());
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(HarnessError::Timeout {
                    what: format!("{} {name} in the cache", K::kind(&())),
                    after: WAIT,
                });
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Runs one pass the way the controller does: reads the parent from its cache (no pass when it is not
    /// there: a deleted parent ends quietly), runs [`Reconciler::run_pass`] with an [`ApiDispatcher`] (one
    /// per controller name, kept across passes like the controller's), and returns what happened with every
    /// request made meanwhile. The pass runs at the environment's time ([`TestEnv::now`]), whatever clock
    /// the reconciler was given, so that its conditions and the server's timestamps agree: move it with
    /// [`Clock::advance`] on [`TestEnv::clock`].
    pub async fn pass<P: ParentKind>(
        &self,
        reconciler: &Reconciler<P>,
        parent: &ObjectRef<P>,
    ) -> Result<PassReport<P>, HarnessError> {
        let cache = self.caches.get::<P>().ok_or_else(|| {
            HarnessError::Setup(format!(
                "the parent kind {} is not cached: call `cache::<P>()` and `start()` first",
                P::kind(&())
            ))
        })?;
        let dispatcher = self.dispatcher(reconciler.name());
        self.server.clear_requests();
        let found = cache.get(parent.namespace.as_deref(), &parent.name);
        let pass = match &found {
            Some(p) => Some(
                reconciler
                    .run_pass_at(p, &self.caches, dispatcher, None, self.now(), None)
                    .await,
            ),
            None => None,
        };
        Ok(PassReport {
            parent: found.map(|p| p.as_ref().clone()),
            pass,
            requests: self.server.requests(),
        })
    }

    /// The dispatcher of the controller named `name`, created on first use.
    pub fn dispatcher(&self, name: &str) -> Arc<dyn Dispatcher> {
        let mut dispatchers = self.dispatchers.lock().unwrap_or_else(|e| e.into_inner());
        dispatchers
            .entry(name.to_string())
            .or_insert_with(|| Arc::new(ApiDispatcher::new(self.client(), name)))
            .clone()
    }

    /// Stops every watch and waits until their tasks are gone.
    pub async fn shutdown(mut self) {
        for w in self.watches.drain(..) {
            w.abort();
            let _ = w.await;
        }
    }
}

/// Installs a CRD on `server` and waits until it is established.
pub(crate) async fn install_crd(
    server: &ApiServer,
    crd: &CustomResourceDefinition,
) -> Result<(), HarnessError> {
    let name = crd.name_any();
    let value = serde_json::to_value(crd)?;
    server
        .insert(value)
        .map_err(|source| HarnessError::Refused {
            what: format!("CustomResourceDefinition {name}"),
            source,
        })?;
    let crds: Api<CustomResourceDefinition> = Api::all(server.client());
    let established = await_condition(crds, &name, conditions::is_crd_established());
    match tokio::time::timeout(WAIT, established).await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err(HarnessError::Setup(format!(
            "waiting for CRD {name} to be established: {e}"
        ))),
        Err(_) => Err(HarnessError::Timeout {
            what: format!("CRD {name} to be established"),
            after: WAIT,
        }),
    }
}

/// What one pass did.
#[derive(Debug)]
pub struct PassReport<P> {
    /// The parent as read from the cache; `None` when it was not there (and no pass ran).
    pub parent: Option<P>,
    /// The pass: its result and its context (commands, tracks, stash); `None` when no pass ran.
    pub pass: Option<Pass>,
    /// Every request the API server handled during the pass.
    pub requests: Vec<RequestRecord>,
}

impl<P> PassReport<P> {
    /// The writes among the requests, in order.
    pub fn writes(&self) -> Vec<Write> {
        writes_of_requests(&self.requests)
    }

    /// The reads (`GET` of an object or a list) among the requests: a pass served by caches makes none.
    pub fn reads(&self) -> Vec<&RequestRecord> {
        reads(&self.requests)
    }
}

/// The reads (`GET` of an object or a list) among requests; watches do not count.
pub(crate) fn reads(requests: &[RequestRecord]) -> Vec<&RequestRecord> {
    requests
        .iter()
        .filter(|r| matches!(r.verb, Some(Verb::Get | Verb::List)))
        .collect()
}

/// `Kind namespace/name` of an object in JSON form, for messages.
pub(crate) fn describe(v: &Value) -> String {
    let kind = v["kind"].as_str().unwrap_or("object");
    let name = v["metadata"]["name"]
        .as_str()
        .or(v["metadata"]["generateName"].as_str())
        .unwrap_or("");
    match v["metadata"]["namespace"].as_str() {
        Some(ns) => format!("{kind} {ns}/{name}"),
        None => format!("{kind} {name}"),
    }
}

/// Waits until every cache of `caches` holds what the server holds (within each cache's selection: a cache of
/// owned Secrets never sees the others, whatever their resourceVersions), for at most `within`.
pub(crate) async fn caches_caught_up(
    caches: &Caches,
    within: Duration,
) -> Result<(), HarnessError> {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        let lag = caches.lag().await.map_err(|source| HarnessError::Kube {
            context: "comparing the caches with the server".into(),
            source,
        })?;
        if lag.is_empty() {
            return Ok(());
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(HarnessError::Timeout {
                what: format!("the caches to catch up: {}", lag.join("; ")),
                after: within,
            });
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}
