//! Table tests for reconcilers and their steps, in the style of reconciler-runtime's `ReconcilerTestSuite` and
//! `SubReconcilerTestSuite`, on the production code path.
//!
//! A [`ReconcilerTestCase`] names a parent, the objects the cluster holds (`given`), and what one pass must do:
//! its creates, applies, updates, patches, deletes, status updates and events (each category compared in
//! order), the objects it tracks, values it stashes, and its outcome. Running it starts a fresh in-memory
//! [`ApiServer`](crate::testing::ApiServer) with a fixed clock and seed, stores the given objects, starts the
//! controller's shared caches on it, reads the parent from the cache and runs one
//! [`Reconciler::run_pass`](crate::Reconciler::run_pass) with the same dispatcher production uses. Then every
//! successful write request the server saw is matched against the expectations: an expected object must be a
//! subset of what was sent ([`is_subset`]); a write nobody expected fails the case, and so does an expected
//! one that did not happen. Failures name the case and the write, and show a YAML diff.
//!
//! A [`SubReconcilerTestCase`] runs one step with a [`Context`] built directly, against the same server
//! ([`SubReconcilerTestCase::run`]), or with no server at all ([`SubReconcilerTestCase::run_pure`]): caches
//! preloaded from the given objects ([`store_from`], [`Caches::insert_store`]) and a
//! [`RecordingDispatcher`] whose commands stand for the writes. [`TestEnv`] is the environment under both,
//! for scenarios of several passes.
//!
//! ```
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
//! use kube::runtime::reflector::ObjectRef;
//! use kube::{CustomResource, CustomResourceExt, ResourceExt};
//! use operator::testing::table::{EventExpectation, ReconcilerTestCase};
//! use operator::{ChildReconciler, Context, Reconciler, ReconcilerStatus};
//! use serde_json::json;
//!
//! #[derive(CustomResource, Clone, Debug, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
//! #[kube(group = "example.dev", version = "v1", kind = "Note", namespaced, status = "NoteStatus")]
//! pub struct NoteSpec {
//!     text: String,
//! }
//!
//! #[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
//! #[serde(rename_all = "camelCase")]
//! pub struct NoteStatus {
//!     observed_generation: Option<i64>,
//!     #[serde(default)]
//!     conditions: Vec<Condition>,
//! }
//!
//! impl ReconcilerStatus for NoteStatus {
//!     fn conditions(&self) -> &[Condition] { &self.conditions }
//!     fn conditions_mut(&mut self) -> &mut Vec<Condition> { &mut self.conditions }
//!     fn observed_generation(&self) -> Option<i64> { self.observed_generation }
//!     fn set_observed_generation(&mut self, g: Option<i64>) { self.observed_generation = g }
//! }
//!
//! fn reconciler() -> Reconciler<Note> {
//!     Reconciler::new("notes").step(ChildReconciler::new("configmap", |note: &Note, _: &mut Context| {
//!         let mut cm = ConfigMap::default();
//!         cm.metadata.name = Some(note.name_any());
//!         cm.data = Some([("text".to_string(), note.spec.text.clone())].into());
//!         Ok(Some(cm))
//!     }))
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), operator::testing::table::CaseFailure> {
//! ReconcilerTestCase::new("creates the config map", ObjectRef::new("hello").within("default"))
//!     .crd(Note::crd())
//!     .given(json!({
//!         "apiVersion": "example.dev/v1",
//!         "kind": "Note",
//!         "metadata": {"name": "hello", "namespace": "default", "uid": "0b4c5a7e-0000-4000-8000-000000000001"},
//!         "spec": {"text": "hi"},
//!     }))
//!     .expect_apply(json!({
//!         "kind": "ConfigMap",
//!         "metadata": {
//!             "name": "hello",
//!             "ownerReferences": [{"kind": "Note", "name": "hello", "controller": true}],
//!         },
//!         "data": {"text": "hi"},
//!     }))
//!     .expect_event(EventExpectation::normal("Created").note("ConfigMap default/hello"))
//!     .expect_status_update(json!({
//!         "observedGeneration": 1,
//!         "conditions": [
//!             {"type": "ConfigMapReady", "status": "True"},
//!             {"type": "Ready", "status": "True", "lastTransitionTime": "2025-01-01T00:00:00Z"},
//!         ],
//!     }))
//!     .run(reconciler())
//!     .await?;
//! # Ok(()) }
//! ```

mod env;
mod expect;
mod pure;

use std::any::{Any, TypeId};
use std::fmt;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Resource;
use kube::runtime::reflector::ObjectRef;
use serde::Serialize;
use serde_json::Value;

pub use env::{DEFAULT_SEED, HarnessError, PassReport, TestEnv, default_time};
pub use expect::{
    Category, EventExpectation, Write, is_subset, writes_of_commands, writes_of_requests, yaml_diff,
};
pub use pure::{Offline, ToStore, offline_caches, offline_client, store_from};

use expect::{Expectations, Expected, indent};

use crate::cache::{CachedKind, Caches};
use crate::command::{Command, RecordingDispatcher};
use crate::conditions::ConditionUpdate;
use crate::context::{Context, Settings};
use crate::error::{Error, Result};
use crate::outcome::Outcome;
use crate::reconciler::{ParentKind, Reconciler};
use crate::reconcilers::{SubReconciler, Wiring};
use crate::stash::{Stash, StashKey};
use crate::testing::apiserver::{Fault, RequestRecord};
use crate::tracker::TrackKey;

/// Why a case failed: every problem found, rendered for a reader (also by `Debug`, so that a test returning
/// `Result<(), CaseFailure>` or calling `unwrap` prints the diffs as they are).
#[derive(Clone, PartialEq, Eq, thiserror::Error)]
pub struct CaseFailure {
    case: String,
    problems: Vec<String>,
}

impl CaseFailure {
    /// The case's name.
    pub fn case(&self) -> &str {
        &self.case
    }

    /// What went wrong, one entry per problem.
    pub fn problems(&self) -> &[String] {
        &self.problems
    }
}

impl fmt::Display for CaseFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.problems.len();
        writeln!(
            f,
            "case `{}` failed ({n} problem{}):",
            self.case,
            if n == 1 { "" } else { "s" }
        )?;
        for (i, p) in self.problems.iter().enumerate() {
            let mut lines = p.lines();
            writeln!(f, "{:>3}. {}", i + 1, lines.next().unwrap_or(""))?;
            for l in lines {
                writeln!(f, "     {l}")?;
            }
        }
        Ok(())
    }
}

impl fmt::Debug for CaseFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\n{self}")
    }
}

/// Why a suite failed: the failures of its cases.
#[derive(Clone, PartialEq, Eq, thiserror::Error)]
pub struct SuiteFailure {
    /// One entry per failed case.
    pub failures: Vec<CaseFailure>,
}

impl fmt::Display for SuiteFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in &self.failures {
            writeln!(f, "{c}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for SuiteFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "\n{self}")
    }
}

/// What a case ran into; returned by a passing case for further checks of its own.
#[derive(Debug)]
pub struct CaseReport<P> {
    /// The parent: as read from the cache (reconciler cases) or as the step left it (step cases).
    pub parent: Option<P>,
    /// The outcome; `None` when no pass ran (the parent was not in the cache).
    pub result: Option<Result<Outcome>>,
    /// The pass's context: commands, tracks, stash, conditions.
    pub context: Option<Context>,
    /// Every request the API server handled during the pass (empty with no server).
    pub requests: Vec<RequestRecord>,
    /// The writes the case compared.
    pub writes: Vec<Write>,
}

impl<P> CaseReport<P> {
    /// The commands the pass executed, events included.
    pub fn commands(&self) -> &[Command] {
        self.context.as_ref().map(|c| c.commands()).unwrap_or(&[])
    }
}

enum OutcomeMatcher {
    Ok(Outcome),
    Err {
        what: String,
        check: Box<dyn Fn(&Error) -> bool + Send + Sync>,
    },
}

impl OutcomeMatcher {
    fn mismatch(&self, result: &Result<Outcome>) -> Option<String> {
        let show = |r: &Result<Outcome>| match r {
            Ok(o) => format!("Ok({o:?})"),
            Err(e) => format!("Err({e}) [{e:?}]"),
        };
        match (self, result) {
            (OutcomeMatcher::Ok(e), Ok(a)) if e == a => None,
            (OutcomeMatcher::Err { check, .. }, Err(e)) if check(e) => None,
            (OutcomeMatcher::Ok(e), r) => {
                Some(format!("expected the outcome Ok({e:?}), got {}", show(r)))
            }
            (OutcomeMatcher::Err { what, .. }, r) => {
                Some(format!("expected an error ({what}), got {}", show(r)))
            }
        }
    }
}

type StashCheck = Box<dyn Fn(&Stash) -> Option<String> + Send + Sync>;

/// What both kinds of case share: the world before the pass and what the pass must do.
struct Scenario {
    time: DateTime<Utc>,
    seed: u64,
    crds: Vec<CustomResourceDefinition>,
    faults: Vec<Fault>,
    expect: Expectations,
    tracks: Vec<TrackKey>,
    stash: Vec<StashCheck>,
    outcome: OutcomeMatcher,
    no_reads: bool,
    /// Problems found while the case was being built (an expectation that would not serialize).
    invalid: Vec<String>,
}

impl Default for Scenario {
    fn default() -> Self {
        Self {
            time: default_time(),
            seed: DEFAULT_SEED,
            crds: Vec::new(),
            faults: Vec::new(),
            expect: Expectations::default(),
            tracks: Vec::new(),
            stash: Vec::new(),
            outcome: OutcomeMatcher::Ok(Outcome::Continue),
            no_reads: false,
            invalid: Vec::new(),
        }
    }
}

impl Scenario {
    fn value(&mut self, what: &str, v: impl Serialize) -> Option<Value> {
        match serde_json::to_value(v) {
            Ok(v) => Some(v),
            Err(e) => {
                self.invalid
                    .push(format!("{what} does not serialize to JSON: {e}"));
                None
            }
        }
    }

    fn expect_body(&mut self, category: Category, v: impl Serialize) {
        if let Some(v) = self.value(&format!("the expected {category}"), v) {
            self.expect.push(category, Expected::Body(v));
        }
    }

    /// Everything that differs between the expectations and what the pass did.
    fn check(
        &self,
        writes: &[Write],
        requests: &[RequestRecord],
        result: &Result<Outcome>,
        cx: Option<&Context>,
    ) -> Vec<String> {
        let mut problems = Vec::new();
        if self.no_reads {
            problems.extend(env::reads(requests).into_iter().map(|r| {
                let query = if r.query.is_empty() {
                    String::new()
                } else {
                    format!("?{}", r.query)
                };
                format!(
                    "the pass read from the API server: {} {}{query}",
                    r.method, r.path
                )
            }));
        }
        problems.extend(self.expect.compare(writes));
        let empty = Stash::default();
        let tracks = cx.map(|c| c.tracks()).unwrap_or(&[]);
        if tracks != self.tracks.as_slice() {
            problems.push(format!(
                "the tracked objects differ from the expectation:\n{}",
                indent(&debug_diff(&self.tracks, &tracks))
            ));
        }
        let stash = cx.map(|c| c.stash()).unwrap_or(&empty);
        problems.extend(self.stash.iter().filter_map(|check| check(stash)));
        problems.extend(self.outcome.mismatch(result));
        problems
    }
}

fn debug_diff(expected: &impl fmt::Debug, actual: &impl fmt::Debug) -> String {
    similar::TextDiff::from_lines(format!("{expected:#?}\n"), format!("{actual:#?}\n"))
        .unified_diff()
        .header("expected", "actual")
        .to_string()
}

/// The builder methods both kinds of case share.
macro_rules! scenario_builders {
    () => {
        /// Installs a CRD (and waits until it is established) before any object is stored.
        pub fn crd(mut self, crd: CustomResourceDefinition) -> Self {
            self.scenario.crds.push(crd);
            self
        }

        /// The time of the server's fixed clock and of the pass (default [`default_time`]).
        pub fn time(mut self, time: DateTime<Utc>) -> Self {
            self.scenario.time = time;
            self
        }

        /// The seed for uids and generated names (default [`DEFAULT_SEED`]).
        pub fn seed(mut self, seed: u64) -> Self {
            self.scenario.seed = seed;
            self
        }

        /// Injects a fault once the caches are ready, right before the pass (so it hits the pass's requests).
        pub fn inject(mut self, fault: Fault) -> Self {
            self.scenario.faults.push(fault);
            self
        }

        /// Expects the next create (`POST`) to send an object containing `object` (see [`is_subset`]).
        pub fn expect_create(mut self, object: impl Serialize) -> Self {
            self.scenario.expect_body(Category::Create, object);
            self
        }

        /// Expects the next server-side apply to send a configuration containing `object`.
        pub fn expect_apply(mut self, object: impl Serialize) -> Self {
            self.scenario.expect_body(Category::Apply, object);
            self
        }

        /// Expects the next update (`PUT`) to send an object containing `object`.
        pub fn expect_update(mut self, object: impl Serialize) -> Self {
            self.scenario.expect_body(Category::Update, object);
            self
        }

        /// Expects the next (non-apply, non-status) patch to send a patch containing `patch`.
        pub fn expect_patch(mut self, patch: impl Serialize) -> Self {
            self.scenario.expect_body(Category::Patch, patch);
            self
        }

        /// Expects the next delete to be of the object of kind `K` named `name`.
        pub fn expect_delete<K: Resource<DynamicType = ()>>(
            mut self,
            namespace: Option<&str>,
            name: &str,
        ) -> Self {
            self.scenario.expect.push(
                Category::Delete,
                Expected::Delete {
                    resource: K::plural(&()).into_owned(),
                    namespace: namespace.map(str::to_string),
                    name: name.to_string(),
                },
            );
            self
        }

        /// Expects the next status write to send a status containing `status` (the status alone, not the
        /// whole object).
        pub fn expect_status_update(mut self, status: impl Serialize) -> Self {
            self.scenario.expect_body(Category::Status, status);
            self
        }

        /// Expects the next event recorded to match.
        pub fn expect_event(mut self, event: EventExpectation) -> Self {
            self.scenario
                .expect
                .push(Category::Event, Expected::Event(event));
            self
        }

        /// Expects the pass to track this key (all tracks are compared, in order; default none).
        pub fn expect_track(mut self, key: TrackKey) -> Self {
            self.scenario.tracks.push(key);
            self
        }

        /// Expects the stash to hold `value` under `key` after the pass.
        pub fn expect_stash<T>(mut self, key: &StashKey<T>, value: T) -> Self
        where
            T: PartialEq + fmt::Debug + Any + Send + Sync,
        {
            let key = *key;
            self.scenario
                .stash
                .push(Box::new(move |stash: &Stash| match stash.get(&key) {
                    Ok(v) if *v == value => None,
                    Ok(v) => Some(format!(
                        "stash `{}`: expected {value:?}, found {v:?}",
                        key.name()
                    )),
                    Err(e) => Some(format!(
                        "stash `{}`: expected {value:?}, but {e}",
                        key.name()
                    )),
                }));
            self
        }

        /// Expects the stash to hold nothing under `key` after the pass.
        pub fn expect_stash_absent<T: Any>(mut self, key: &StashKey<T>) -> Self {
            let name = key.name();
            self.scenario.stash.push(Box::new(move |stash: &Stash| {
                stash
                    .keys()
                    .contains(&name)
                    .then(|| format!("stash `{name}`: expected nothing, found {stash:?}"))
            }));
            self
        }

        /// Expects the pass to end with this outcome (default `Ok(Outcome::Continue)`).
        pub fn expect_outcome(mut self, outcome: Outcome) -> Self {
            self.scenario.outcome = OutcomeMatcher::Ok(outcome);
            self
        }

        /// Expects the pass to fail with an error for which `check` holds; `what` describes it in failures.
        pub fn expect_err(
            mut self,
            what: impl Into<String>,
            check: impl Fn(&Error) -> bool + Send + Sync + 'static,
        ) -> Self {
            self.scenario.outcome = OutcomeMatcher::Err {
                what: what.into(),
                check: Box::new(check),
            };
            self
        }

        /// Fails the case if the pass reads anything from the API server (`GET` of an object or a list):
        /// a pass must be served by the caches.
        pub fn expect_no_reads(mut self) -> Self {
            self.scenario.no_reads = true;
            self
        }

        /// Does not compare writes of this category (every category is compared by default).
        pub fn ignore(mut self, category: Category) -> Self {
            self.scenario.expect.ignored.insert(category);
            self
        }
    };
}

/// One case of a table test of a whole [`Reconciler`]: given objects, one pass over a parent read from the
/// cache, expected writes, tracks, stash values and outcome. See the [module documentation](self).
pub struct ReconcilerTestCase<P: ParentKind> {
    name: String,
    parent: ObjectRef<P>,
    given: Vec<Value>,
    parent_absent: bool,
    scenario: Scenario,
}

impl<P: ParentKind> fmt::Debug for ReconcilerTestCase<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReconcilerTestCase")
            .field("name", &self.name)
            .field("parent", &self.parent)
            .finish_non_exhaustive()
    }
}

impl<P: ParentKind> ReconcilerTestCase<P> {
    /// A case named `name` reconciling the parent `parent` (e.g. `ObjectRef::new("a").within("default")`).
    pub fn new(name: impl Into<String>, parent: ObjectRef<P>) -> Self {
        Self {
            name: name.into(),
            parent,
            given: Vec::new(),
            parent_absent: false,
            scenario: Scenario::default(),
        }
    }

    /// An object the cluster holds before the pass, typed or as JSON, stored as given (status, uid,
    /// generation and `deletionTimestamp` included) in the order given: owners before their dependents.
    pub fn given(mut self, object: impl Serialize) -> Self {
        if let Some(v) = self.scenario.value("a given object", object) {
            self.given.push(v);
        }
        self
    }

    /// The parent is not expected in the cache: no pass runs and nothing may be written. Without this, a
    /// parent missing from the given objects fails the case.
    pub fn parent_absent(mut self) -> Self {
        self.parent_absent = true;
        self
    }

    scenario_builders!();

    /// Runs the case with `reconciler` (whose clock is replaced by the case's fixed clock).
    pub async fn run(self, reconciler: Reconciler<P>) -> Result<CaseReport<P>, CaseFailure> {
        let fail = |problems: Vec<String>| CaseFailure {
            case: self.name.clone(),
            problems,
        };
        if !self.scenario.invalid.is_empty() {
            return Err(fail(self.scenario.invalid.clone()));
        }
        let mut env = TestEnv::at(self.scenario.time, self.scenario.seed);
        let reconciler = reconciler.clock(env.clock_fn());
        let ran = async {
            for crd in &self.scenario.crds {
                env.install_crd(crd).await?;
            }
            for g in &self.given {
                env.insert(g)?;
            }
            env.wire(&reconciler.wiring());
            env.cache::<P>();
            env.start().await?;
            for f in &self.scenario.faults {
                env.server().inject(f.clone());
            }
            env.pass(&reconciler, &self.parent).await
        }
        .await;
        env.shutdown().await;
        let report = ran.map_err(|e| fail(vec![format!("setup: {e}")]))?;
        let writes = report.writes();
        let mut problems = Vec::new();
        let (result, context) = match report.pass {
            Some(pass) => (Some(pass.result), Some(pass.context)),
            None => {
                if !self.parent_absent {
                    problems.push(format!(
                        "the parent {} is not in the cache, so no pass ran (use `parent_absent` if that is \
                         the point)",
                        self.parent
                    ));
                }
                (None, None)
            }
        };
        if self.parent_absent && result.is_some() {
            problems.push(format!(
                "the parent {} was expected to be absent but is in the cache",
                self.parent
            ));
        }
        let outcome = match &result {
            Some(r) => r,
            None => &Ok(Outcome::Continue),
        };
        problems.extend(
            self.scenario
                .check(&writes, &report.requests, outcome, context.as_ref()),
        );
        if !problems.is_empty() {
            return Err(fail(problems));
        }
        Ok(CaseReport {
            parent: report.parent,
            result,
            context,
            requests: report.requests,
            writes,
        })
    }
}

/// A table of [`ReconcilerTestCase`]s run one after the other, each with a fresh reconciler and server.
pub struct ReconcilerTestSuite<P: ParentKind> {
    cases: Vec<ReconcilerTestCase<P>>,
}

impl<P: ParentKind> fmt::Debug for ReconcilerTestSuite<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(&self.cases).finish()
    }
}

impl<P: ParentKind> ReconcilerTestSuite<P> {
    /// A suite of cases.
    pub fn new(cases: impl IntoIterator<Item = ReconcilerTestCase<P>>) -> Self {
        Self {
            cases: cases.into_iter().collect(),
        }
    }

    /// Runs every case with a reconciler from `reconciler`; fails with the failures of all failed cases.
    pub async fn run(self, reconciler: impl Fn() -> Reconciler<P>) -> Result<(), SuiteFailure> {
        let mut failures = Vec::new();
        for case in self.cases {
            if let Err(f) = case.run(reconciler()).await {
                failures.push(f);
            }
        }
        if failures.is_empty() {
            Ok(())
        } else {
            Err(SuiteFailure { failures })
        }
    }
}

type AnyObject = Box<dyn Any + Send + Sync>;
type PreloadFn = fn(Vec<AnyObject>, &Caches);

/// A typed given object kept for preloading the caches of a case run with no server.
struct Preload {
    kind: TypeId,
    object: AnyObject,
    install: PreloadFn,
}

fn install<K: CachedKind>(objects: Vec<AnyObject>, caches: &Caches) {
    let objects: Vec<K> = objects
        .into_iter()
        .filter_map(|o| o.downcast::<K>().ok().map(|b| *b))
        .collect();
    caches.insert_store(store_from(objects));
}

fn preload<K: CachedKind>(object: K) -> Preload {
    Preload {
        kind: TypeId::of::<K>(),
        object: Box::new(object),
        install: install::<K>,
    }
}

type GivenStash = Box<dyn Fn(&mut Stash) + Send + Sync>;

/// One case of a table test of one step (anything that implements [`SubReconciler`]): the step gets the
/// parent directly, in a [`Context`] built for it; expectations cover the writes, the parent (and its status)
/// as the step leaves it, conditions, tracks, stash values and outcome. See the [module documentation](self).
///
/// ```
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use operator::testing::table::SubReconcilerTestCase;
/// use operator::{Context, Outcome, StashKey, SyncReconciler};
///
/// const TEXT: StashKey<String> = StashKey::new("text");
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), operator::testing::table::CaseFailure> {
/// let mut settings = ConfigMap::default();
/// settings.metadata.name = Some("settings".into());
/// settings.metadata.namespace = Some("default".into());
/// settings.data = Some([("text".to_string(), "hi".to_string())].into());
/// let step = SyncReconciler::new("read", |_: &mut ConfigMap, cx: &mut Context| {
///     let text = cx
///         .get::<ConfigMap>(Some("default"), "settings")?
///         .and_then(|cm| cm.data.as_ref()?.get("text").cloned())
///         .unwrap_or_default();
///     cx.stash_mut().store(&TEXT, text);
///     Ok(Outcome::Continue)
/// })
/// .wiring(|w| w.tracks::<ConfigMap>());
/// let mut parent = ConfigMap::default();
/// parent.metadata.name = Some("parent".into());
/// parent.metadata.namespace = Some("default".into());
/// SubReconcilerTestCase::new("stashes the text", parent)
///     .given(settings)
///     .expect_track(operator::TrackKey::name::<ConfigMap>(Some("default"), "settings"))
///     .expect_stash(&TEXT, "hi".to_string())
///     .run_pure(&step)
///     .await?;
/// # Ok(()) }
/// ```
pub struct SubReconcilerTestCase<P> {
    name: String,
    parent: P,
    given: Vec<(Value, Option<Preload>)>,
    given_stash: Vec<GivenStash>,
    settings: Settings,
    finalize: bool,
    expect_parent: Option<Value>,
    expect_status: Option<Value>,
    expect_conditions: Option<Vec<ConditionUpdate>>,
    scenario: Scenario,
}

impl<P> fmt::Debug for SubReconcilerTestCase<P> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SubReconcilerTestCase")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl<P: CachedKind + Serialize> SubReconcilerTestCase<P> {
    /// A case named `name` running a step over `parent`.
    pub fn new(name: impl Into<String>, parent: P) -> Self {
        Self {
            name: name.into(),
            parent,
            given: Vec::new(),
            given_stash: Vec::new(),
            settings: Settings::new("test-controller"),
            finalize: false,
            expect_parent: None,
            expect_status: None,
            expect_conditions: None,
            scenario: Scenario::default(),
        }
    }

    /// An object the cluster (or, with no server, the caches) holds before the step runs. With a server,
    /// the parent is stored first, then the given objects in order.
    pub fn given<K: CachedKind + Serialize>(mut self, object: K) -> Self {
        if let Some(v) = self.scenario.value("a given object", &object) {
            self.given.push((v, Some(preload(object))));
        }
        self
    }

    /// An object as JSON that the cluster holds before the step runs (only with a server: use
    /// [`SubReconcilerTestCase::given`] for [`SubReconcilerTestCase::run_pure`]).
    pub fn given_json(mut self, object: Value) -> Self {
        self.given.push((object, None));
        self
    }

    /// A value in the stash before the step runs, as an earlier step would have left it.
    pub fn given_stash<T>(mut self, key: &StashKey<T>, value: T) -> Self
    where
        T: Clone + fmt::Debug + Any + Send + Sync,
    {
        let key = *key;
        self.given_stash.push(Box::new(move |stash: &mut Stash| {
            stash.store(&key, value.clone())
        }));
        self
    }

    /// The controller name the context reports (field manager and event reporter; default
    /// `test-controller`).
    pub fn controller(mut self, name: impl Into<String>) -> Self {
        let one_action = self.settings.one_action;
        self.settings = Settings::new(name);
        self.settings.one_action = one_action;
        self
    }

    /// Runs the step in one-action mode (at most one mutating command, then [`Error::Yield`]).
    pub fn one_action_per_pass(mut self, on: bool) -> Self {
        self.settings.one_action = on;
        self
    }

    /// Runs the step's finalize half instead of its reconcile half.
    pub fn finalizing(mut self) -> Self {
        self.finalize = true;
        self
    }

    /// Expects the parent, as the step leaves it, to contain `parent` (see [`is_subset`]).
    pub fn expect_parent(mut self, parent: impl Serialize) -> Self {
        self.expect_parent = self.scenario.value("the expected parent", parent);
        self
    }

    /// Expects the parent's status, as the step leaves it, to contain `status`.
    pub fn expect_status(mut self, status: impl Serialize) -> Self {
        self.expect_status = self.scenario.value("the expected status", status);
        self
    }

    /// Expects exactly these condition updates from the step, in order (not compared unless called; the
    /// root reconciler turns them into status conditions after the steps).
    pub fn expect_conditions(mut self, conditions: Vec<ConditionUpdate>) -> Self {
        self.expect_conditions = Some(conditions);
        self
    }

    scenario_builders!();

    /// Runs the step against a fresh in-memory API server: the parent and the given objects stored, caches
    /// of the parent's kind and of the kinds the step wires started, the parent read back from the cache,
    /// and the step's commands executed by an `ApiDispatcher`.
    pub async fn run(self, step: &impl SubReconciler<P>) -> Result<CaseReport<P>, CaseFailure> {
        let fail = |problems: Vec<String>| CaseFailure {
            case: self.name.clone(),
            problems,
        };
        if !self.scenario.invalid.is_empty() {
            return Err(fail(self.scenario.invalid.clone()));
        }
        let mut env = TestEnv::at(self.scenario.time, self.scenario.seed);
        let ran = async {
            for crd in &self.scenario.crds {
                env.install_crd(crd).await?;
            }
            env.insert(&self.parent)?;
            for (g, _) in &self.given {
                env.insert(g)?;
            }
            let mut wiring = Wiring::default();
            step.wire(&mut wiring);
            env.wire(&wiring);
            let cache = env.cache::<P>();
            env.start().await?;
            let mut parent = cache
                .get(
                    self.parent.meta().namespace.as_deref(),
                    &name_of(&self.parent),
                )
                .map(|p| p.as_ref().clone())
                .ok_or_else(|| {
                    HarnessError::Setup("the parent is not in the cache after storing it".into())
                })?;
            for f in &self.scenario.faults {
                env.server().inject(f.clone());
            }
            let dispatcher = env.dispatcher(&self.settings.name);
            let mut cx = Context::new(
                env.caches().clone(),
                dispatcher,
                Arc::new(self.settings.clone()),
                parent.object_ref(&()),
                env.now(),
            );
            for s in &self.given_stash {
                s(cx.stash_mut());
            }
            env.server().clear_requests();
            let result = self.step_result(step, &mut parent, &mut cx).await;
            Ok::<_, HarnessError>((parent, cx, result, env.server().requests()))
        }
        .await;
        env.shutdown().await;
        let (parent, cx, result, requests) = ran.map_err(|e| fail(vec![format!("setup: {e}")]))?;
        let writes = writes_of_requests(&requests);
        self.finish(parent, cx, result, requests, writes)
    }

    /// Runs the step with no API server: caches preloaded from the typed given objects and the parent
    /// ([`Caches::insert_store`], on an [`offline_client`]), commands recorded by a [`RecordingDispatcher`]
    /// and compared as the writes (a recorded write answers with the object as sent).
    pub async fn run_pure(
        mut self,
        step: &impl SubReconciler<P>,
    ) -> Result<CaseReport<P>, CaseFailure> {
        let mut problems = self.scenario.invalid.clone();
        if !self.scenario.faults.is_empty() {
            problems.push("faults need the API server: use `run`, not `run_pure`".into());
        }
        if self.given.iter().any(|(_, p)| p.is_none()) {
            problems.push(
                "objects given as JSON need the API server: give typed objects to `run_pure`"
                    .into(),
            );
        }
        if !problems.is_empty() {
            return Err(CaseFailure {
                case: self.name.clone(),
                problems,
            });
        }
        let caches = offline_caches();
        let mut wiring = Wiring::default();
        step.wire(&mut wiring);
        for kind in wiring.kinds() {
            kind.ensure(&caches);
        }
        let given = std::mem::take(&mut self.given);
        let preloads = std::iter::once(preload(self.parent.clone()))
            .chain(given.into_iter().filter_map(|(_, p)| p));
        let mut by_kind: Vec<(TypeId, PreloadFn, Vec<AnyObject>)> = Vec::new();
        for p in preloads {
            match by_kind.iter_mut().find(|(k, _, _)| *k == p.kind) {
                Some((_, _, objects)) => objects.push(p.object),
                None => by_kind.push((p.kind, p.install, vec![p.object])),
            }
        }
        for (_, install, objects) in by_kind {
            install(objects, &caches);
        }
        let dispatcher = Arc::new(RecordingDispatcher::default());
        let mut parent = self.parent.clone();
        let mut cx = Context::new(
            caches,
            dispatcher,
            Arc::new(self.settings.clone()),
            parent.object_ref(&()),
            env::timestamp(self.scenario.time),
        );
        for s in &self.given_stash {
            s(cx.stash_mut());
        }
        let result = self.step_result(step, &mut parent, &mut cx).await;
        let writes = writes_of_commands(cx.commands());
        self.finish(parent, cx, result, Vec::new(), writes)
    }

    async fn step_result(
        &self,
        step: &impl SubReconciler<P>,
        parent: &mut P,
        cx: &mut Context,
    ) -> Result<Outcome> {
        if self.finalize {
            step.finalize(parent, cx).await
        } else {
            step.reconcile(parent, cx).await
        }
    }

    fn finish(
        &self,
        parent: P,
        cx: Context,
        result: Result<Outcome>,
        requests: Vec<RequestRecord>,
        writes: Vec<Write>,
    ) -> Result<CaseReport<P>, CaseFailure> {
        let mut problems = self.scenario.check(&writes, &requests, &result, Some(&cx));
        match serde_json::to_value(&parent) {
            Ok(actual) => {
                if let Some(e) = &self.expect_parent
                    && !is_subset(e, &actual)
                {
                    problems.push(format!(
                        "the parent differs from the expectation:\n{}",
                        indent(&yaml_diff(e, &actual))
                    ));
                }
                if let Some(e) = &self.expect_status
                    && !is_subset(e, &actual["status"])
                {
                    problems.push(format!(
                        "the parent's status differs from the expectation:\n{}",
                        indent(&yaml_diff(e, &actual["status"]))
                    ));
                }
            }
            Err(e) => problems.push(format!("the parent does not serialize: {e}")),
        }
        if let Some(e) = &self.expect_conditions
            && e.as_slice() != cx.conditions()
        {
            problems.push(format!(
                "the conditions differ from the expectation:\n{}",
                indent(&debug_diff(e, &cx.conditions()))
            ));
        }
        if !problems.is_empty() {
            return Err(CaseFailure {
                case: self.name.clone(),
                problems,
            });
        }
        Ok(CaseReport {
            parent: Some(parent),
            result: Some(result),
            context: Some(cx),
            requests,
            writes,
        })
    }
}

fn name_of<K: Resource>(obj: &K) -> String {
    obj.meta().name.clone().unwrap_or_default()
}
