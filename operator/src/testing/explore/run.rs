//! One run of a scenario on a fresh server: the operator's passes in rounds over every parent, with caches
//! caught up before each pass, a restart after a crash, requeues as timers on the server's fixed clock (which
//! only the scenario's advances move), and the settled state at the end.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::Client;
use kube::api::{Api, ApiResource, DynamicObject};
use serde_json::Value;
use tokio::task::JoinHandle;

use std::collections::HashMap;

use super::controller::{Driven, PassEnd};
use super::hidden;
use super::perturb::{Key, Logged, Planned, Probe, key_of};
use super::scenario::Action;
use super::triggers::Parent;
use super::{Setup, state};
use crate::cache::Caches;
use crate::command::{ApiDispatcher, Dispatcher, Target};
use crate::testing::apiserver::Clock;
use crate::testing::table::{DEFAULT_SEED, HarnessError, default_time};
use crate::testing::{ApiServer, table};

/// How long a run waits for caches to sync, catch up, or a CRD to be established.
const WAIT: Duration = Duration::from_secs(10);

/// The API of `resource` in `namespace` (all namespaces, or a cluster-scoped kind, when `None`).
pub(super) fn api(
    client: &Client,
    resource: &ApiResource,
    namespace: Option<&str>,
) -> Api<DynamicObject> {
    match namespace {
        Some(ns) => Api::namespaced_with(client.clone(), ns, resource),
        None => Api::all_with(client.clone(), resource),
    }
}

/// What a run ended with.
#[derive(Debug)]
pub(super) struct Ran {
    /// The settled state, normalized; `None` when the run did not settle.
    pub(super) state: Option<Vec<Value>>,
    /// Why it did not settle.
    pub(super) unsettled: Option<String>,
    /// Every write the operator attempted.
    pub(super) log: Vec<Logged>,
    /// What the operator must not have done, and did.
    pub(super) violations: Vec<String>,
    /// Changes that reached no trigger: parents left behind until a pass over every parent.
    pub(super) stranded: Vec<String>,
    /// How many writes the operator attempted.
    pub(super) writes: usize,
    /// The changes its writes made to values the author's normalizers hide, after they were first written.
    pub(super) hidden: Vec<hidden::Changed>,
    /// Passes run, over all rounds.
    pub(super) passes: usize,
}

/// A run in progress.
pub(super) struct Run {
    setup: Arc<Setup>,
    server: ApiServer,
    probe: Arc<Probe>,
    /// The operator's controllers, in the order the exploration named them.
    controllers: Vec<Box<dyn Driven>>,
    caches: Caches,
    watches: Vec<JoinHandle<()>>,
    passes: usize,
    /// Changes that reached no trigger, found by the round over every parent.
    stranded: Vec<String>,
    /// Parents passed on stale caches, by controller: when the held-back changes arrive, they are due again.
    passed_stale: Vec<(usize, Parent)>,
    /// Actions of the scenario that could not be carried out on what the operator left (a status to write on
    /// an object it did not create).
    blocked: Vec<String>,
}

impl Drop for Run {
    fn drop(&mut self) {
        for w in &self.watches {
            w.abort();
        }
    }
}

impl Run {
    /// Runs the scenario of `setup` on a fresh server, with `plan` injected.
    pub(super) async fn execute(
        setup: Arc<Setup>,
        plan: Option<Planned>,
    ) -> Result<Ran, HarnessError> {
        let server = ApiServer::builder()
            .clock(Clock::fixed(default_time()))
            .seed(DEFAULT_SEED)
            .request_log(false)
            .build();
        for crd in &setup.crds {
            table::install_crd(&server, crd).await?;
        }
        for given in &setup.given {
            server
                .insert(given.clone())
                .map_err(|source| HarnessError::Refused {
                    what: table::describe(given),
                    source,
                })?;
        }
        let foreign: Vec<Key> = setup.foreign();
        let probe = Arc::new(Probe::new(
            server.clone(),
            plan,
            foreign,
            setup.normalizers.clone(),
            setup.kinds.clone(),
        ));
        let mut run = Run {
            caches: Caches::new(server.client()),
            controllers: Vec::new(),
            stranded: Vec::new(),
            passed_stale: Vec::new(),
            blocked: Vec::new(),
            setup,
            server,
            probe,
            watches: Vec::new(),
            passes: 0,
        };
        run.start().await?;
        let mut unsettled = None;
        let actions = run.setup.scenario.actions.clone();
        for action in &actions {
            match action {
                Action::Settle => {
                    if let Err(why) = run.settle().await? {
                        unsettled = Some(why);
                        break;
                    }
                }
                Action::Advance(by) => {
                    if by.is_positive() {
                        run.server.clock().advance(*by);
                    }
                }
                Action::Trigger { object } => run.trigger(object),
                Action::Status { object, .. } => {
                    match action.perform(&run.server.client()).await {
                        Err(HarnessError::Kube {
                            source: kube::Error::Api(s),
                            ..
                        }) if s.code == 404 => run.blocked.push(format!(
                            "the scenario's action `{action}` found no {object}: the operator did not create it"
                        )),
                        other => other?,
                    }
                }
                other => {
                    other.perform(&run.server.client()).await?;
                    if let Action::Delete { object } = other {
                        run.probe.forget(&object.to_string());
                    }
                }
            }
        }
        if unsettled.is_none()
            && let Err(why) = run.settle().await?
        {
            unsettled = Some(why);
        }
        let state = match unsettled {
            None => Some(
                state::snapshot(
                    &run.server.client(),
                    &run.setup.kinds,
                    &run.setup.normalizers,
                )
                .await?,
            ),
            Some(_) => None,
        };
        Ok(Ran {
            state,
            unsettled,
            log: run.probe.log(),
            violations: [run.probe.violations(), run.blocked.clone()].concat(),
            stranded: run.stranded.clone(),
            writes: run.probe.writes(),
            hidden: run.probe.hidden_changes(),
            passes: run.passes,
        })
    }

    /// Starts the operator: new controllers from the factories, new caches (filled as an operator fills
    /// them on a server that streams lists, as the embedded one does), new dispatchers; waits until the caches
    /// hold their first lists. Also what a restart after a crash does.
    /// Makes `object` due in the controllers whose parent kind it is, if it exists.
    fn trigger(&mut self, object: &super::scenario::Object) {
        for (c, setup) in self.setup.controllers.iter().enumerate() {
            let parent = setup.parent();
            if parent.group != object.resource.group || parent.kind != object.resource.kind {
                continue;
            }
            let key = (object.namespace.clone(), object.name.clone());
            if self.controllers[c].every(&self.caches).contains(&key) {
                self.controllers[c].again(key);
            } else {
                tracing::debug!(parent = %object, "an external trigger names a parent that does not exist; ignored");
            }
        }
    }

    async fn start(&mut self) -> Result<(), HarnessError> {
        for w in self.watches.drain(..) {
            w.abort();
        }
        let caches = Caches::new(self.server.client());
        caches.set_list_strategy(crate::cache::ListStrategy::Streaming);
        for configure in &self.setup.cache_options {
            configure(&caches).map_err(|e| HarnessError::Setup(e.to_string()))?;
        }
        self.controllers = self
            .setup
            .controllers
            .iter()
            .map(|c| c.make(&self.server))
            .collect();
        let mut dispatchers: HashMap<String, Arc<dyn Dispatcher>> = HashMap::new();
        for c in &mut self.controllers {
            c.wire(&caches);
            let name = c.name();
            let dispatcher = ApiDispatcher::new(self.server.client(), &name);
            dispatchers.insert(name, Arc::new(dispatcher));
        }
        for w in caches.take_watches() {
            self.watches.push(tokio::spawn(w));
        }
        caches.ready_within(WAIT).await?;
        self.probe.restart(dispatchers, caches.clone());
        self.caches = caches;
        Ok(())
    }

    /// Once the caches are no longer stale, the changes they held back arrive, as they would from a watch that
    /// was only slow: the parents passed meanwhile are due again. (The triggers themselves listen to the live
    /// caches, so without this the changes would count as seen by passes that never saw them.)
    fn deliver_held_back(&mut self) {
        if !self.probe.stale() {
            for (c, p) in self.passed_stale.drain(..) {
                self.controllers[c].again(p);
            }
        }
    }

    /// Takes in what every controller's triggers saw, and the timers that have come.
    fn drain(&mut self) {
        let now = self.now();
        for c in &mut self.controllers {
            c.drain(&self.caches);
            c.fire(now);
        }
    }

    /// The run's time: the server's fixed clock, which the operator's passes read too.
    fn now(&self) -> Timestamp {
        self.server.clock().now()
    }

    /// The parents due, by controller.
    fn take(&mut self) -> Vec<(usize, Parent)> {
        let mut due = Vec::new();
        for (i, c) in self.controllers.iter_mut().enumerate() {
            due.extend(c.take().into_iter().map(|p| (i, p)));
        }
        due
    }

    /// Runs rounds of passes over the parents the triggers made due until none is due or a round writes
    /// nothing and fails nothing (an invalid spec is not a failure: it is the settled answer); then one round
    /// over every parent, which must write nothing either: when it does, a change reached no trigger, noted in
    /// `stranded`, and the run goes on settling. At most the setup's bound of rounds; `Err` says why it did
    /// not settle.
    async fn settle(&mut self) -> Result<Result<(), String>, HarnessError> {
        let mut failures = Vec::new();
        let mut verify = false;
        for _ in 0..self.setup.max_rounds {
            crate::testing::table::caches_caught_up(&self.caches, WAIT).await?;
            self.drain();
            self.deliver_held_back();
            let mut triggered = self.take();
            if triggered.is_empty() && self.probe.stale() {
                // Nothing else would run: the held-back changes arrive now.
                self.probe.end_stale();
                self.deliver_held_back();
                triggered = self.take();
            }
            let due = if verify || triggered.is_empty() {
                verify = true;
                let mut all = Vec::new();
                for (i, c) in self.controllers.iter().enumerate() {
                    all.extend(c.every(&self.caches).into_iter().map(|p| (i, p)));
                }
                all
            } else {
                triggered
            };
            failures.clear();
            self.probe.quiet_since();
            let before = self.probe.writes();
            let mut crashed = false;
            let mut any_stale = false;
            for (c, parent) in due {
                if !verify {
                    // A pass the triggers asked for, not the check: it replaces the parent's timer.
                    self.controllers[c].passing(&parent);
                }
                let stale = self.probe.stale();
                let pass_caches = self.probe.pass_caches(&self.caches);
                let ended = self.controllers[c]
                    .pass(&parent, &self.caches, &pass_caches, self.probe.clone())
                    .await;
                let Some(ended) = ended else { continue };
                self.passes += 1;
                if self.probe.crashed() {
                    crashed = true;
                    break;
                }
                if stale || self.probe.stale() {
                    any_stale = true;
                    self.passed_stale.push((c, parent.clone()));
                }
                match ended {
                    PassEnd::Done => {}
                    PassEnd::After(after) => {
                        let after = SignedDuration::try_from(after).unwrap_or(SignedDuration::MAX);
                        let at = self.now().checked_add(after).unwrap_or(Timestamp::MAX);
                        self.controllers[c].requeue(parent, at);
                    }
                    PassEnd::Failed(why) => {
                        failures.push(why);
                        self.controllers[c].again(parent);
                    }
                }
                crate::testing::table::caches_caught_up(&self.caches, WAIT).await?;
                self.drain();
                self.deliver_held_back();
            }
            if crashed {
                self.start().await?;
                verify = false;
                continue;
            }
            let quiet = self.probe.quiet_since() && failures.is_empty();
            match (verify, quiet) {
                (true, true) => return Ok(Ok(())),
                (true, false) => {
                    let log = self.probe.log();
                    let writes: Vec<String> = log
                        .iter()
                        .filter(|l| l.index > before)
                        .map(|l| format!("    {l}"))
                        .collect();
                    self.stranded.push(format!(
                        "a change reached no trigger: once no parent was due, a pass over every parent still wrote or failed:\n{}{}",
                        writes.join("\n"),
                        failures
                            .iter()
                            .map(|f| format!("\n    failed: {f}"))
                            .collect::<String>()
                    ));
                    verify = false;
                }
                // A quiet round proves something only when its passes saw current caches (requeues are
                // timers, due only once an advance of the clock reaches them).
                (false, true) => verify = !any_stale,
                (false, false) => {}
            }
        }
        let mut why = format!(
            "still writing or failing after {} rounds of passes",
            self.setup.max_rounds
        );
        for f in failures {
            why.push_str(&format!("\n  last round: {f}"));
        }
        Ok(Err(why))
    }
}

/// The `Key` of an object a scenario action names.
pub(super) fn key(resource: &ApiResource, namespace: Option<&str>, name: &str) -> Key {
    key_of(&Target {
        group: resource.group.clone(),
        version: resource.version.clone(),
        kind: resource.kind.clone(),
        plural: resource.plural.clone(),
        namespace: namespace.map(str::to_string),
        name: name.to_string(),
    })
}
