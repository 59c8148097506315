//! Perturbation testing: an operator checked against a crash at each of its writes, API faults, caches that
//! miss what was just written, watch events that are never delivered, and another member of a sharded group
//! taking a parent over, all on the embedded API server inside `cargo test`.
//!
//! [`Explore`] first runs a [`Scenario`] (user actions: apply, patch, delete, a status written as another
//! controller would, the clock advanced, settle) unperturbed and records
//! the reference: every write the operator made and the settled state. Then it runs the scenario again from
//! scratch, on a fresh server, once for every [`Perturbation`] at every write `k` of the reference (or a
//! seeded sample of them when there are more than the budget), and checks each run with the oracle:
//!
//! - it settles: a round of passes over every parent writes nothing, within a bounded number of rounds;
//! - its settled state equals the reference's, up to run identities (uids, resourceVersions, times, generated
//!   names, allocated IPs) and the order of status conditions (a list keyed by type); an object that exists
//!   twice where it should exist once is a difference;
//! - nothing is left being deleted (a finalizer never removed);
//! - the operator deleted nothing that the unperturbed run keeps and never deletes (a recreated object is a
//!   new object: whatever only the old one held is lost);
//! - the operator wrote no object the scenario created other than parents, and none that another owner
//!   controls (by its controller owner reference, read right before the write);
//! - no parent's status was written with an `observedGeneration` below one written before;
//! - a value the author hides from the comparison with [`normalize`](Explore::normalize) (a generated
//!   password) keeps the value it was first written with, unless the unperturbed run changes it too;
//! - every change reached a trigger: once no parent is due, a pass over every parent writes nothing;
//! - every object the scenario writes a status to exists by then.
//!
//! A failure names the smallest perturbation that broke the operator, the writes of that run from the
//! perturbed one on, and the difference between its settled state and the reference as YAML.
//!
//! How a run drives the operator: passes run in rounds over the parents that are due, decided as the
//! controller decides it (the parent changed, an object it controls or tracked changed, a mapper named it, its
//! last pass failed or asked for a requeue), in name order, each pass on caches that hold what the server holds
//! (except where a perturbation makes them stale), exactly as [`Reconciler::run_pass`] runs in the controller.
//! Once no parent is due, one more round passes every parent, and it must write nothing: a write there is a
//! change that reached no trigger, a parent the controller would have left behind (then the run goes on
//! settling, and the finding is reported). Writes a step makes through its own client, not through the
//! context, are not counted, perturbed or checked.
//!
//! Time stands still except where the scenario [advances](Scenario::advance) it: the server's fixed clock
//! (starting at [`default_time`](crate::testing::table::default_time)) stamps objects and is what the
//! operator's passes read as [`Context::now`](crate::Context::now). A pass that ends in
//! [`Outcome::RequeueAfter`](crate::Outcome::RequeueAfter) sets a timer on that clock: the parent is due again
//! once an advance moves the clock to or past it (a pass the triggers run before then replaces the timer, as a
//! request for now replaces one for later in the controller's queue). So an operator that always requeues still
//! settles between advances, and the check of the pass over every parent runs there.
//!
//! ```no_run
//! # use kubewright::{ParentKind, Reconciler};
//! # async fn demo<P: ParentKind + serde::Serialize>(reconciler: fn() -> Reconciler<P>, parent: P,
//! #     crd: k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition) {
//! use kubewright::testing::explore::{Explore, Scenario};
//! let explored = Explore::new(reconciler)
//!     .crd(crd)
//!     .scenario(Scenario::new().apply(&parent).settle().delete::<P>(Some("default"), "web"))
//!     .run()
//!     .await
//!     .unwrap();
//! println!("{explored}");
//! # }
//! ```

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::ApiResource;
use serde::Serialize;
use serde_json::Value;

mod controller;
mod hidden;
mod perturb;
mod run;
mod scenario;
mod state;
mod triggers;

pub use perturb::{Perturbation, Planned, STALE_PASSES};
pub use scenario::{SCENARIO_MANAGER, Scenario};

use controller::{ControllerSetup, Factory};
use perturb::{Key, Logged};
use run::{Ran, Run};
use scenario::Action;
use state::Normalizer;

use crate::cache::{CacheOptions, CacheOptionsError, CachedKind, Caches};
use crate::reconciler::{ParentKind, Reconciler};
use crate::testing::table::HarnessError;

/// How many perturbed runs [`Explore`] makes at most unless told otherwise.
pub const DEFAULT_BUDGET: usize = 300;

/// How many rounds over every parent a run may take to settle unless told otherwise.
pub const DEFAULT_MAX_ROUNDS: usize = 10;

type CacheSetting = Box<dyn Fn(&Caches) -> Result<(), CacheOptionsError> + Send + Sync>;

/// What every run of one exploration shares.
pub(super) struct Setup {
    /// The operator's controllers.
    controllers: Vec<Box<dyn ControllerSetup>>,
    crds: Vec<CustomResourceDefinition>,
    given: Vec<Value>,
    cache_options: Vec<CacheSetting>,
    normalizers: Vec<Normalizer>,
    scenario: Scenario,
    /// The kinds whose objects make up the settled state.
    kinds: Vec<ApiResource>,
    max_rounds: usize,
}

impl Setup {
    /// The objects the scenario applies that are not parents.
    fn foreign(&self) -> Vec<Key> {
        let parents: Vec<ApiResource> = self.controllers.iter().map(|c| c.parent()).collect();
        self.scenario
            .actions
            .iter()
            .filter_map(|a| match a {
                Action::Apply { object, .. } if !parents.contains(&object.resource) => Some(
                    run::key(&object.resource, object.namespace.as_deref(), &object.name),
                ),
                _ => None,
            })
            .collect()
    }
}

/// An exploration of one operator under perturbations; see the [module documentation](self).
pub struct Explore {
    setup: Setup,
    perturbations: Vec<Perturbation>,
    budget: usize,
    seed: u64,
}

impl fmt::Debug for Explore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Explore")
            .field("scenario", &self.setup.scenario)
            .field("perturbations", &self.perturbations)
            .field("budget", &self.budget)
            .field("seed", &self.seed)
            .finish_non_exhaustive()
    }
}

impl Explore {
    /// Explores the operator whose controller `factory` builds; it is called once per operator process
    /// (again after each crash), so each gets the fresh state a restarted process has. Add the operator's
    /// other controllers with [`controller`](Self::controller).
    pub fn new<P: ParentKind>(factory: impl Fn() -> Reconciler<P> + Send + Sync + 'static) -> Self {
        Self {
            setup: Setup {
                controllers: vec![Box::new(Factory::new(factory))],
                crds: Vec::new(),
                given: Vec::new(),
                cache_options: Vec::new(),
                normalizers: Vec::new(),
                scenario: Scenario::new(),
                kinds: Vec::new(),
                max_rounds: DEFAULT_MAX_ROUNDS,
            },
            perturbations: Perturbation::ALL.to_vec(),
            budget: DEFAULT_BUDGET,
            seed: crate::testing::table::DEFAULT_SEED,
        }
    }

    /// Adds another controller of the operator: every run drives all of them on one set of caches, as one
    /// operator process does, and a crash restarts them together.
    pub fn controller<P: ParentKind>(
        mut self,
        factory: impl Fn() -> Reconciler<P> + Send + Sync + 'static,
    ) -> Self {
        self.setup.controllers.push(Box::new(Factory::new(factory)));
        self
    }

    /// Installs a CRD on every run's server before the operator starts.
    pub fn crd(mut self, crd: CustomResourceDefinition) -> Self {
        self.setup.crds.push(crd);
        self
    }

    /// Stores an object on every run's server before the operator starts, as given (see
    /// [`ApiServer::insert`](crate::testing::ApiServer::insert)); an object that cannot be serialized fails
    /// the exploration.
    pub fn given(mut self, obj: &impl Serialize) -> Self {
        self.setup
            .given
            .push(serde_json::to_value(obj).unwrap_or(Value::Null));
        self
    }

    /// What the operator's cache of `K` holds, as [`Operator::cache`](crate::Operator::cache) sets it.
    pub fn cache<K: CachedKind>(mut self, options: CacheOptions) -> Self {
        self.setup
            .cache_options
            .push(Box::new(move |caches: &Caches| {
                caches.configure::<K>(options.clone()).map(|_| ())
            }));
        self
    }

    /// The user actions of every run.
    pub fn scenario(mut self, scenario: Scenario) -> Self {
        self.setup.scenario = scenario;
        self
    }

    /// Also replaces what differs between runs in the settled objects beyond run identities, e.g. a random
    /// password a Secret is created with: `f` sees every object (`apiVersion`, `kind` and `metadata` set).
    ///
    /// A value `f` hides is still checked another way: it must keep the value the operator first wrote it with
    /// (in the object the server holds after each of the operator's writes). A perturbed run that changes it
    /// afterwards, where the unperturbed run never does (a password generated again because a stale cache
    /// missed its Secret), is a finding.
    ///
    /// ```
    /// use kubewright::testing::explore::Explore;
    /// # fn demo(explore: Explore) -> Explore {
    /// explore.normalize(|o| {
    ///     if o["kind"] == "Secret" && !o["data"]["password"].is_null() {
    ///         o["data"]["password"] = serde_json::json!("<random>");
    ///     }
    /// })
    /// # }
    /// ```
    pub fn normalize(mut self, f: impl Fn(&mut Value) + Send + Sync + 'static) -> Self {
        self.setup.normalizers.push(Arc::new(f));
        self
    }

    /// Tries only these perturbations (default: [`Perturbation::ALL`]).
    pub fn only(mut self, perturbations: impl IntoIterator<Item = Perturbation>) -> Self {
        self.perturbations = perturbations.into_iter().collect();
        self
    }

    /// At most this many perturbed runs (default [`DEFAULT_BUDGET`]): when there are more perturbations,
    /// a sample of them chosen by the [`seed`](Self::seed).
    pub fn budget(mut self, runs: usize) -> Self {
        self.budget = runs;
        self
    }

    /// The seed that chooses the sample when the perturbations exceed the budget (printed with the results,
    /// so a run can be repeated).
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = seed;
        self
    }

    /// How many rounds over every parent a run may take to settle (default [`DEFAULT_MAX_ROUNDS`]).
    pub fn max_rounds(mut self, rounds: usize) -> Self {
        self.setup.max_rounds = rounds.max(1);
        self
    }

    /// Runs the reference, then every perturbation (or the seeded sample), and checks each. A controller that
    /// declares a kind through two Rust types fails at once, before any run, with
    /// [`HarnessError::KindDeclaredTwice`] (as an operator fails at start).
    pub async fn run(mut self) -> Result<Explored, ExploreError> {
        let started = Instant::now();
        if let Some(bad) = self.setup.given.iter().position(Value::is_null) {
            return Err(HarnessError::Setup(format!(
                "the given object #{} could not be serialized",
                bad + 1
            ))
            .into());
        }
        // A kind declared through two types fails an operator's start; it fails the exploration the same way.
        if let Some(twice) = self
            .setup
            .controllers
            .iter()
            .find_map(|c| c.declared_twice().into_iter().next())
        {
            return Err(HarnessError::KindDeclaredTwice(twice).into());
        }
        self.setup.kinds = self.kinds();
        let setup = Arc::new(self.setup);
        let reference = Run::execute(setup.clone(), None).await?;
        let Some(reference_state) = reference.state.clone() else {
            return Err(ExploreError::Reference(format!(
                "the scenario does not settle unperturbed: {}\nits writes:\n{}",
                reference.unsettled.unwrap_or_default(),
                lines(&reference.log)
            )));
        };
        let mut problems = reference.violations.clone();
        problems.extend(reference.stranded.iter().cloned());
        problems.extend(state::dangling(&reference_state));
        if !problems.is_empty() {
            return Err(ExploreError::Reference(format!(
                "the unperturbed run already breaks the oracle:\n  {}",
                problems.join("\n  ")
            )));
        }
        let all: Vec<Planned> = (1..=reference.writes)
            .flat_map(|write| {
                self.perturbations.iter().map(move |&perturbation| Planned {
                    write,
                    perturbation,
                })
            })
            .collect();
        let possible = all.len();
        let plans = sample(all, self.budget, self.seed);
        let mut broken = Vec::new();
        let mut passes = reference.passes;
        for plan in &plans {
            let ran = Run::execute(setup.clone(), Some(*plan)).await?;
            passes += ran.passes;
            let mut problems = judge(&reference_state, &reference.log, &ran);
            problems.extend(hidden::problems(&reference.hidden, &ran.hidden));
            if !problems.is_empty() {
                broken.push((*plan, ran, problems));
            }
        }
        let explored = Explored {
            scenario: setup.scenario.len(),
            reference_writes: reference.writes,
            writes: reference.log.iter().map(ToString::to_string).collect(),
            possible,
            explored: plans.len(),
            passes,
            seed: self.seed,
            duration: started.elapsed(),
        };
        if broken.is_empty() {
            return Ok(explored);
        }
        let others: Vec<String> = broken
            .iter()
            .skip(1)
            .map(|(p, _, problems)| format!("{p}: {}", problems[0].lines().next().unwrap_or("")))
            .collect();
        let (plan, ran, problems) = broken.swap_remove(0);
        let diff = ran
            .state
            .as_ref()
            .filter(|s| **s != reference_state)
            .map(|s| state::diff(&reference_state, s));
        let what = reference
            .log
            .get(plan.write - 1)
            .map(|l| l.what.clone())
            .unwrap_or_default();
        Err(ExploreError::Broken(Box::new(Broken {
            explored,
            smallest: plan,
            write: what,
            problems,
            writes_after: collapse(ran.log.iter().filter(|l| l.index >= plan.write)),
            diff,
            others,
        })))
    }

    /// The parent kinds, every kind the reconcilers wire, and every kind the scenario touches.
    fn kinds(&self) -> Vec<ApiResource> {
        let mut kinds: Vec<ApiResource> =
            self.setup.controllers.iter().map(|c| c.parent()).collect();
        for c in &self.setup.controllers {
            kinds.extend(c.kinds());
        }
        for a in &self.setup.scenario.actions {
            if let Action::Apply { object, .. } | Action::Status { object, .. } = a {
                kinds.push(object.resource.clone());
            }
        }
        let mut seen = std::collections::HashSet::new();
        kinds.retain(|k| seen.insert((k.api_version.clone(), k.kind.clone())));
        kinds
    }
}

/// The problems of a perturbed run against the reference's settled state and writes.
fn judge(reference: &[Value], reference_log: &[Logged], ran: &Ran) -> Vec<String> {
    let mut problems = Vec::new();
    // An object the unperturbed run keeps and never deletes is deleted here: gone for a while, or for good,
    // with whatever only it held (a recreated object is a new object, whatever its name).
    let kept: Vec<String> = reference.iter().map(state::identity).collect();
    for l in &ran.log {
        if let Some(gone) = &l.deleted
            && kept.contains(gone)
            && !reference_log
                .iter()
                .any(|r| r.deleted.as_ref() == Some(gone))
        {
            problems.push(format!(
                "write {} deleted {gone}, which the unperturbed run keeps and never deletes",
                l.index
            ));
        }
    }
    match &ran.state {
        None => problems.push(format!(
            "did not settle: {}",
            ran.unsettled.as_deref().unwrap_or("")
        )),
        Some(state) => {
            if state != reference {
                let (a, b): (Vec<String>, Vec<String>) = (
                    reference.iter().map(state::identity).collect(),
                    state.iter().map(state::identity).collect(),
                );
                let missing: Vec<&String> = a.iter().filter(|i| !b.contains(i)).collect();
                let extra: Vec<String> = extra(&a, &b);
                let mut p = "the settled state differs from the reference".to_string();
                if !missing.is_empty() {
                    p.push_str(&format!("; missing: {missing:?}"));
                }
                if !extra.is_empty() {
                    p.push_str(&format!("; more than in the reference: {extra:?}"));
                }
                problems.push(p);
            }
            problems.extend(state::dangling(state));
        }
    }
    problems.extend(ran.violations.iter().cloned());
    problems.extend(ran.stranded.iter().cloned());
    problems
}

/// The identities in `b` beyond those in `a` (counting duplicates).
fn extra(a: &[String], b: &[String]) -> Vec<String> {
    let mut left: Vec<&String> = a.iter().collect();
    let mut out = Vec::new();
    for i in b {
        match left.iter().position(|x| *x == i) {
            Some(at) => {
                left.swap_remove(at);
            }
            None => out.push(i.clone()),
        }
    }
    out
}

/// Up to `budget` of `all`, chosen by `seed`, in their original order.
fn sample(all: Vec<Planned>, budget: usize, seed: u64) -> Vec<Planned> {
    if all.len() <= budget {
        return all;
    }
    let mut state = seed;
    let mut next = move || {
        // SplitMix64: small, and the same sample for the same seed everywhere.
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let mut indexes: Vec<usize> = (0..all.len()).collect();
    for i in 0..budget {
        let j = i + (next() % (all.len() - i) as u64) as usize;
        indexes.swap(i, j);
    }
    let mut chosen = indexes[..budget].to_vec();
    chosen.sort_unstable();
    chosen.into_iter().map(|i| all[i]).collect()
}

/// The writes one per line, a run of the same write with the same answer on one line (`  4-9. ...`).
fn collapse<'a>(log: impl Iterator<Item = &'a Logged>) -> Vec<String> {
    let mut runs: Vec<(usize, &Logged)> = Vec::new();
    for l in log {
        match runs.last_mut() {
            Some((_, last)) if last.what == l.what && last.outcome == l.outcome => *last = l,
            _ => runs.push((l.index, l)),
        }
    }
    runs.into_iter()
        .map(|(first, l)| match first == l.index {
            true => l.to_string(),
            false => format!("{:>3}-{}. {}: {}", first, l.index, l.what, l.outcome),
        })
        .collect()
}

fn lines(log: &[Logged]) -> String {
    log.iter()
        .map(|l| format!("  {l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// What an exploration found nothing wrong with.
#[derive(Debug, Clone)]
pub struct Explored {
    /// The scenario's actions.
    pub scenario: usize,
    /// The writes of the unperturbed run.
    pub reference_writes: usize,
    /// Those writes, in order, e.g. `  3. apply Deployment default/web: ok`.
    pub writes: Vec<String>,
    /// The perturbations there are (perturbation kinds × writes).
    pub possible: usize,
    /// The perturbed runs made.
    pub explored: usize,
    /// The passes run over all runs, the reference's included.
    pub passes: usize,
    /// The seed that chose the sample.
    pub seed: u64,
    /// How long the exploration took.
    pub duration: Duration,
}

impl fmt::Display for Explored {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "explored {} of {} perturbations of the {} writes of a {}-action scenario (seed {}): {} passes in {:.1} s",
            self.explored,
            self.possible,
            self.reference_writes,
            self.scenario,
            self.seed,
            self.passes,
            self.duration.as_secs_f64()
        )?;
        if f.alternate() {
            write!(f, "; the writes of the unperturbed run:")?;
            for w in &self.writes {
                write!(f, "\n  {w}")?;
            }
        }
        Ok(())
    }
}

/// A perturbation that broke the operator: the smallest one found, and what the others were.
#[derive(Debug, Clone)]
pub struct Broken {
    /// What was explored.
    pub explored: Explored,
    /// The smallest perturbation that broke the operator (earliest write, then the order of
    /// [`Perturbation::ALL`]).
    pub smallest: Planned,
    /// The write it hit, e.g. `apply Deployment default/web`.
    pub write: String,
    /// What the oracle found wrong.
    pub problems: Vec<String>,
    /// The writes of the perturbed run from the perturbed one on, with what each answered.
    pub writes_after: Vec<String>,
    /// The settled state against the reference's, as a unified diff of YAML (`None` when equal, or when the
    /// run did not settle).
    pub diff: Option<String>,
    /// The other perturbations that broke it, with their first problem.
    pub others: Vec<String>,
}

impl fmt::Display for Broken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} of {} perturbations broke the operator (seed {}).",
            self.others.len() + 1,
            self.explored.explored,
            self.explored.seed
        )?;
        writeln!(f, "smallest: {} ({})", self.smallest, self.write)?;
        for p in &self.problems {
            writeln!(f, "  - {p}")?;
        }
        writeln!(
            f,
            "writes of that run from write {} on:",
            self.smallest.write
        )?;
        for w in &self.writes_after {
            writeln!(f, "  {w}")?;
        }
        if let Some(diff) = &self.diff {
            writeln!(f, "settled state (- reference, + perturbed):\n{diff}")?;
        }
        if !self.others.is_empty() {
            writeln!(f, "the others:")?;
            for o in &self.others {
                writeln!(f, "  {o}")?;
            }
        }
        Ok(())
    }
}

/// Why an exploration failed.
#[derive(thiserror::Error)]
pub enum ExploreError {
    /// A perturbation broke the operator.
    #[error("{0}")]
    Broken(Box<Broken>),
    /// The unperturbed run does not settle, or already breaks the oracle: there is nothing to compare with.
    #[error("{0}")]
    Reference(String),
    /// The server or the caches failed the explorer (not a finding about the operator).
    #[error(transparent)]
    Harness(#[from] HarnessError),
}

impl fmt::Debug for ExploreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\n{self}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plans(n: usize) -> Vec<Planned> {
        (1..=n)
            .map(|write| Planned {
                write,
                perturbation: Perturbation::CrashBefore,
            })
            .collect()
    }

    #[test]
    fn a_sample_is_the_same_for_a_seed_and_keeps_the_order() {
        let a = sample(plans(100), 10, 7);
        assert_eq!(a, sample(plans(100), 10, 7));
        assert_eq!(a.len(), 10);
        assert!(a.windows(2).all(|w| w[0].write < w[1].write));
        assert_ne!(a, sample(plans(100), 10, 8));
        assert_eq!(sample(plans(5), 10, 7), plans(5));
    }

    #[test]
    fn extra_counts_duplicates() {
        let a = vec!["x".to_string()];
        let b = vec!["x".to_string(), "x".to_string()];
        assert_eq!(extra(&a, &b), vec!["x".to_string()]);
        assert!(extra(&b, &a).is_empty());
    }
}
