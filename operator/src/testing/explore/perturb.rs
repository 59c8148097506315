//! The perturbations, and the dispatcher that injects one at a given write of the operator while recording
//! every write and checking that the operator keeps its hands off what is not its own.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};

use futures::FutureExt;
use futures::future::BoxFuture;
use kube::core::Status;
use serde_json::Value;

use super::hidden::{self, Hidden};
use super::state::Normalizer;
use crate::answer::Answer;
use crate::cache::Caches;
use crate::command::{Command, Dispatcher, Target};
use crate::error::{Error, Result};
use crate::testing::ApiServer;

/// How many passes run on a stale cache after [`Perturbation::StaleCache`] fires.
pub const STALE_PASSES: usize = 3;

/// What the explorer does to the operator at one of its writes (the `k`-th create, apply, update, patch,
/// delete or status write of the unperturbed run; events do not count).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Perturbation {
    /// The operator stops right before the write; a new one, with cold caches, starts on the same server.
    CrashBefore,
    /// The write is done, then the operator stops; a new one, with cold caches, starts on the same server.
    CrashAfter,
    /// The write answers `409 Conflict` and is not done.
    Conflict,
    /// The write answers `500 InternalError` and is not done.
    ServerError,
    /// The write is done, but the operator sees a timeout instead of the answer.
    TimeoutAfter,
    /// Right after the write, every watch ends and the watch history is compacted, so the caches re-list:
    /// the versions of objects in between are never delivered.
    Unobserved,
    /// The cache of the written kind stops right before the write for the next [`STALE_PASSES`] passes:
    /// they run on a cache that misses the write (and whatever else of that kind follows).
    StaleCache,
    /// The write is done, then the operator stops and another member of a sharded group takes the parent
    /// being reconciled over, as the assigner moves a dead member's parents: its children and then the parent
    /// get the new member's shard label, and the new member starts with cold caches.
    TakeOver,
}

impl Perturbation {
    /// Every perturbation, in the order the explorer tries them at each write.
    pub const ALL: [Perturbation; 8] = [
        Perturbation::CrashBefore,
        Perturbation::CrashAfter,
        Perturbation::Conflict,
        Perturbation::ServerError,
        Perturbation::TimeoutAfter,
        Perturbation::Unobserved,
        Perturbation::StaleCache,
        Perturbation::TakeOver,
    ];
}

impl fmt::Display for Perturbation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Perturbation::CrashBefore => "crash before",
            Perturbation::CrashAfter => "crash after",
            Perturbation::Conflict => "409 Conflict on",
            Perturbation::ServerError => "500 InternalError on",
            Perturbation::TimeoutAfter => "timeout after",
            Perturbation::Unobserved => "watches lost after",
            Perturbation::StaleCache => "stale cache from",
            Perturbation::TakeOver => "another member takes the parent over after",
        })
    }
}

/// A perturbation at one write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Planned {
    /// The write, counted from 1.
    pub write: usize,
    /// What happens there.
    pub perturbation: Perturbation,
}

impl fmt::Display for Planned {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} write {}", self.perturbation, self.write)
    }
}

/// One write the operator attempted.
#[derive(Debug, Clone)]
pub(super) struct Logged {
    /// Counted from 1 over the whole run.
    pub(super) index: usize,
    /// `apply Deployment default/web`.
    pub(super) what: String,
    /// `ok`, or the error the operator saw, and the perturbation if one fired here.
    pub(super) outcome: String,
    /// The object, as the settled state names it, when this was a delete that was done.
    pub(super) deleted: Option<String>,
}

impl fmt::Display for Logged {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:>3}. {}: {}", self.index, self.what, self.outcome)
    }
}

/// An error in a line: an API error as its code, reason and message.
pub(super) fn short(e: &Error) -> String {
    match e {
        Error::Kube {
            source: kube::Error::Api(s),
            ..
        } => format!("{} {}: {}", s.code, s.reason, s.message),
        other => other.to_string(),
    }
}

/// `apply Deployment default/web`.
pub(super) fn describe(command: &Command) -> String {
    match (command, command.target()) {
        (Command::Create { object, .. }, Some(t)) if t.name.is_empty() => {
            let prefix = object["metadata"]["generateName"].as_str().unwrap_or("");
            match &t.namespace {
                Some(ns) => format!("create {} {ns}/{prefix}<generated>", t.kind),
                None => format!("create {} {prefix}<generated>", t.kind),
            }
        }
        (_, Some(t)) => format!("{} {t}", command.verb()),
        (_, None) => command.verb().to_string(),
    }
}

/// An object the operator must not write, by `(apiVersion, kind, namespace, name)`.
pub(super) type Key = (String, String, Option<String>, String);

pub(super) fn key_of(t: &Target) -> Key {
    (
        t.api_version(),
        t.kind.clone(),
        t.namespace.clone(),
        t.name.clone(),
    )
}

#[derive(Default)]
struct State {
    /// Writes attempted so far.
    count: usize,
    /// The operator "crashed": it refuses every command until it is restarted.
    crashed: bool,
    /// A write reached the server, or an event was sent, since the last [`Probe::quiet_since`].
    wrote: bool,
    log: Vec<Logged>,
    /// The caches of the running operator, to freeze one kind of.
    live: Option<Caches>,
    /// Stale caches, and for how many more passes.
    stale: Option<(Caches, usize)>,
    violations: Vec<String>,
    /// The highest `observedGeneration` each parent's status was written with.
    observed: HashMap<String, i64>,
    /// The uid of the parent whose pass runs now.
    parent: Option<String>,
    /// The controller whose pass runs now.
    controller: String,
}

/// The dispatcher the explorer gives the operator: counts its writes, injects the planned perturbation at its
/// write, records what every write answered, and notes writes to objects the operator does not own and
/// statuses that go back in generation.
pub(super) struct Probe {
    /// The dispatcher of each controller, by name (its field manager and event reporter).
    inner: Mutex<HashMap<String, Arc<dyn Dispatcher>>>,
    server: ApiServer,
    plan: Option<Planned>,
    /// Objects the scenario created (parents excepted): the operator must not write them.
    foreign: Vec<Key>,
    /// Every kind the operator reads or writes (what a take-over relabels).
    kinds: Vec<kube::api::ApiResource>,
    state: Mutex<State>,
    /// The values the author's normalizers hide, as the operator's writes left them.
    hidden: Mutex<Hidden>,
}

fn crashed() -> Error {
    Error::custom("the operator crashed here (perturbation)")
}

fn api_error(code: u16, reason: &str, command: &Command) -> Error {
    let what = command
        .target()
        .map(|t| format!("{} \"{}\"", t.plural, t.name))
        .unwrap_or_default();
    let message = match code {
        409 => format!(
            "Operation cannot be fulfilled on {what}: the object has been modified; please apply your changes to the latest version and try again"
        ),
        _ => "Internal error occurred: injected by the perturbation explorer".to_string(),
    };
    Error::kube(
        describe(command),
        kube::Error::Api(Box::new(Status::failure(&message, reason).with_code(code))),
    )
}

fn timeout(command: &Command) -> Error {
    let source = std::io::Error::new(
        std::io::ErrorKind::TimedOut,
        "the request timed out (perturbation: the write was done)",
    );
    Error::kube(describe(command), kube::Error::Service(Box::new(source)))
}

impl Probe {
    pub(super) fn new(
        server: ApiServer,
        plan: Option<Planned>,
        foreign: Vec<Key>,
        normalizers: Vec<Normalizer>,
        kinds: Vec<kube::api::ApiResource>,
    ) -> Self {
        Self {
            inner: Mutex::default(),
            server,
            kinds,
            plan,
            foreign,
            state: Mutex::default(),
            hidden: Mutex::new(Hidden::new(normalizers)),
        }
    }

    /// The changes the operator's writes made to hidden values after they were first written.
    pub(super) fn hidden_changes(&self) -> Vec<hidden::Changed> {
        self.hidden
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .changed()
    }

    /// Notes the hidden values of the object `command` wrote (write `index`), as the answer shows it or, when
    /// the operator saw no answer, as the server holds it now.
    async fn observe(
        &self,
        inner: &Arc<dyn Dispatcher>,
        index: usize,
        command: &Command,
        answer: Option<&Answer>,
    ) {
        let Some(target) = command.target() else {
            return;
        };
        let object = match answer.and_then(|a| a.to_value().ok()) {
            Some(object) => Some(object),
            None if !target.name.is_empty() => inner.get(target).await.ok().flatten(),
            None => None,
        };
        let Some(mut object) = object.filter(Value::is_object) else {
            return;
        };
        if object["apiVersion"].is_null() {
            object["apiVersion"] = Value::String(target.api_version());
        }
        if object["kind"].is_null() {
            object["kind"] = Value::String(target.kind.clone());
        }
        self.hidden
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .observe(index, &describe(command), &object);
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A restarted operator: new dispatchers (fresh event recorders) and new caches.
    pub(super) fn restart(&self, inner: HashMap<String, Arc<dyn Dispatcher>>, caches: Caches) {
        *self.inner.lock().unwrap_or_else(|e| e.into_inner()) = inner;
        let mut s = self.state();
        s.crashed = false;
        s.stale = None;
        s.live = Some(caches);
    }

    /// Whether the operator crashed and must be restarted.
    pub(super) fn crashed(&self) -> bool {
        self.state().crashed
    }

    /// Whether nothing was written since the last call; starts counting anew.
    pub(super) fn quiet_since(&self) -> bool {
        let mut s = self.state();
        let quiet = !s.wrote;
        s.wrote = false;
        quiet
    }

    /// The caches the next pass runs on: stale ones while a [`Perturbation::StaleCache`] lasts, else `live`.
    pub(super) fn pass_caches(&self, live: &Caches) -> Caches {
        let mut s = self.state();
        match s.stale.take() {
            Some((stale, left)) if left > 0 => {
                if left > 1 {
                    s.stale = Some((stale.clone(), left - 1));
                }
                stale
            }
            _ => live.clone(),
        }
    }

    /// A pass of `controller` over the parent of this uid starts.
    pub(super) fn passing(&self, controller: &str, uid: Option<String>) {
        let mut s = self.state();
        s.parent = uid;
        s.controller = controller.to_string();
    }

    /// The dispatcher of the controller whose pass runs.
    fn inner(&self) -> Option<Arc<dyn Dispatcher>> {
        let controller = self.state().controller.clone();
        let inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        inner
            .get(&controller)
            .or_else(|| inner.values().next())
            .cloned()
    }

    /// Notes a write to an object that another owner controls (read from the server right before the write).
    async fn check_owner(&self, inner: &Arc<dyn Dispatcher>, command: &Command) {
        let (Some(target), true) = (
            command.target(),
            matches!(
                command,
                Command::Apply { .. }
                    | Command::Update { .. }
                    | Command::Patch { .. }
                    | Command::Delete { .. }
            ),
        ) else {
            return;
        };
        let Some(parent) = self.state().parent.clone() else {
            return;
        };
        let Ok(Some(live)) = inner.get(target).await else {
            return;
        };
        if live["metadata"]["uid"].as_str() == Some(parent.as_str()) {
            return;
        }
        let controller = live["metadata"]["ownerReferences"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|r| r["controller"] == Value::Bool(true));
        if let Some(owner) = controller
            && owner["uid"].as_str() != Some(parent.as_str())
        {
            self.state().violations.push(format!(
                "{}: the object is controlled by {} {}, not by the parent being reconciled",
                describe(command),
                owner["kind"].as_str().unwrap_or(""),
                owner["name"].as_str().unwrap_or("")
            ));
        }
    }

    /// Relabels the parent being reconciled and the objects it controls with the shard label of a new member
    /// (`member-<write>`), children first, as the assigner moves a dead member's parents.
    async fn take_over(&self, write: usize) {
        use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams};
        let Some(parent) = self.state().parent.clone() else {
            return;
        };
        let client = self.server.client();
        let member = format!("member-{write}");
        let mut found = Vec::new();
        for kind in &self.kinds {
            let api: Api<DynamicObject> = Api::all_with(client.clone(), kind);
            let Ok(list) = api.list(&ListParams::default()).await else {
                continue;
            };
            for o in list.items {
                let is_parent = o.metadata.uid.as_deref() == Some(parent.as_str());
                let controlled = o
                    .metadata
                    .owner_references
                    .iter()
                    .flatten()
                    .any(|r| r.controller == Some(true) && r.uid == parent);
                if is_parent || controlled {
                    found.push((is_parent, kind.clone(), o.metadata));
                }
            }
        }
        // Children first, the parent last.
        found.sort_by_key(|(is_parent, _, _)| *is_parent);
        let params = PatchParams {
            field_manager: Some(crate::sharding::FIELD_MANAGER.to_string()),
            ..PatchParams::default()
        };
        for (_, kind, meta) in found {
            let api: Api<DynamicObject> = match &meta.namespace {
                Some(ns) => Api::namespaced_with(client.clone(), ns, &kind),
                None => Api::all_with(client.clone(), &kind),
            };
            let patch = serde_json::json!({
                "metadata": { "labels": { crate::sharding::SHARD_LABEL: member } }
            });
            if let Err(e) = api
                .patch(
                    meta.name.as_deref().unwrap_or_default(),
                    &params,
                    &Patch::Merge(patch),
                )
                .await
            {
                tracing::warn!(error = %e, "the take-over could not relabel an object");
            }
        }
    }

    /// The stale caches catch up now.
    pub(super) fn end_stale(&self) {
        self.state().stale = None;
    }

    /// Whether passes run on stale caches now.
    pub(super) fn stale(&self) -> bool {
        self.state().stale.is_some()
    }

    /// The parent of `key` was deleted by the scenario: a new one of the same name starts at generation 1.
    pub(super) fn forget(&self, key: &str) {
        self.state().observed.remove(key);
    }

    pub(super) fn writes(&self) -> usize {
        self.state().count
    }

    pub(super) fn log(&self) -> Vec<Logged> {
        self.state().log.clone()
    }

    pub(super) fn violations(&self) -> Vec<String> {
        self.state().violations.clone()
    }

    /// Notes what the operator must not do: write an object it does not own, or write a parent's status
    /// with an `observedGeneration` below one it wrote before.
    fn check(&self, s: &mut State, command: &Command) {
        let Some(target) = command.target() else {
            return;
        };
        if self.foreign.contains(&key_of(target)) {
            s.violations.push(format!(
                "{}: the scenario created this object and the operator does not own it",
                describe(command)
            ));
        }
        if let Command::UpdateStatus { status, .. } = command
            && let Some(generation) = status.get("observedGeneration").and_then(Value::as_i64)
        {
            let key = target.to_string();
            let highest = s.observed.entry(key).or_insert(generation);
            if generation < *highest {
                s.violations.push(format!(
                    "{}: observedGeneration went back from {} to {generation}",
                    describe(command),
                    *highest
                ));
            } else {
                *highest = generation;
            }
        }
    }

    async fn run(&self, command: &Command) -> Result<Option<Answer>> {
        if self.crashed() {
            return Err(crashed());
        }
        let Some(inner) = self.inner() else {
            return Err(crashed());
        };
        if !command.is_mutating() {
            let out = inner.execute(command).await;
            self.state().wrote = true;
            return out;
        }
        self.check_owner(&inner, command).await;
        let (index, fire) = {
            let mut s = self.state();
            s.count += 1;
            let index = s.count;
            self.check(&mut s, command);
            let fire = self
                .plan
                .filter(|p| p.write == index)
                .map(|p| p.perturbation);
            if fire == Some(Perturbation::StaleCache)
                && let (Some(live), Some(t)) = (&s.live, command.target())
            {
                let stale = live.with_frozen(&t.api_version(), &t.kind);
                s.stale = Some((stale, STALE_PASSES));
            }
            (index, fire)
        };
        let (result, applied) = match fire {
            None | Some(Perturbation::StaleCache) => {
                let r = inner.execute(command).await;
                let ok = r.is_ok();
                (r, ok)
            }
            Some(Perturbation::CrashBefore) => {
                self.state().crashed = true;
                (Err(crashed()), false)
            }
            Some(Perturbation::CrashAfter) => {
                let ok = inner.execute(command).await.is_ok();
                self.state().crashed = true;
                (Err(crashed()), ok)
            }
            Some(Perturbation::TakeOver) => {
                let ok = inner.execute(command).await.is_ok();
                self.state().crashed = true;
                self.take_over(index).await;
                (Err(crashed()), ok)
            }
            Some(Perturbation::Conflict) => (Err(api_error(409, "Conflict", command)), false),
            Some(Perturbation::ServerError) => {
                (Err(api_error(500, "InternalError", command)), false)
            }
            Some(Perturbation::TimeoutAfter) => match inner.execute(command).await {
                Ok(_) => (Err(timeout(command)), true),
                Err(e) => (Err(e), false),
            },
            Some(Perturbation::Unobserved) => {
                let r = inner.execute(command).await;
                self.server.drop_watches();
                self.server.compact();
                let ok = r.is_ok();
                (r, ok)
            }
        };
        let watching = self
            .hidden
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .watching();
        if applied && watching && !matches!(command, Command::Delete { .. }) {
            let answer = result.as_ref().ok().and_then(Option::as_ref);
            self.observe(&inner, index, command, answer).await;
        }
        let mut outcome = match (&result, applied) {
            (Ok(_), _) => "ok".to_string(),
            (Err(_), true) => "done, but the operator saw an error".to_string(),
            (Err(e), false) => format!("failed: {}", short(e)),
        };
        if let Some(p) = fire {
            outcome = format!("{outcome} [{p} this write]");
        }
        let mut s = self.state();
        s.wrote |= applied;
        let deleted = match command {
            Command::Delete { target, .. } if applied => Some(super::state::identity_of(
                &target.api_version(),
                &target.kind,
                target.namespace.as_deref(),
                &target.name,
            )),
            _ => None,
        };
        s.log.push(Logged {
            index,
            what: describe(command),
            outcome,
            deleted,
        });
        result
    }
}

impl Dispatcher for Probe {
    fn execute<'a>(&'a self, command: &'a Command) -> BoxFuture<'a, Result<Option<Answer>>> {
        self.run(command).boxed()
    }

    fn get<'a>(&'a self, target: &'a Target) -> BoxFuture<'a, Result<Option<Value>>> {
        async move {
            if self.crashed() {
                return Err(crashed());
            }
            let Some(inner) = self.inner() else {
                return Err(crashed());
            };
            inner.get(target).await
        }
        .boxed()
    }
}
