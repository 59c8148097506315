//! Table tests of one step: [`SubReconcilerTestCase`], run on the in-memory server or without one.

use std::any::{Any, TypeId};
use std::fmt;
use std::sync::Arc;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Resource;
use serde::Serialize;
use serde_json::Value;

use super::env::{HarnessError, TestEnv};
use super::expect::{
    Category, EventExpectation, Expected, Write, indent, is_subset, writes_of_commands,
    writes_of_requests, yaml_diff,
};
use super::failure::{CaseFailure, CaseReport};
use super::pure::{offline_caches, store_from};
use super::scenario::OutcomeMatcher;
use super::scenario::{Scenario, debug_diff};
use crate::cache::{CachedKind, Caches};
use crate::command::RecordingDispatcher;
use crate::conditions::ConditionUpdate;
use crate::context::{Context, Settings};
use crate::error::{Error, Result};
use crate::outcome::Outcome;
use crate::reconcilers::{SubReconciler, Wiring};
use crate::stash::{Stash, StashKey};
use crate::testing::apiserver::{Fault, RequestRecord};
use crate::tracker::TrackKey;

pub(super) type AnyObject = Box<dyn Any + Send + Sync>;
pub(super) type PreloadFn = fn(Vec<AnyObject>, &Caches);

/// A typed given object kept for preloading the caches of a case run with no server.
pub(super) struct Preload {
    pub(super) kind: TypeId,
    pub(super) object: AnyObject,
    pub(super) install: PreloadFn,
}

pub(super) fn install<K: CachedKind>(objects: Vec<AnyObject>, caches: &Caches) {
    let objects: Vec<K> = objects
        .into_iter()
        .filter_map(|o| o.downcast::<K>().ok().map(|b| *b))
        .collect();
    caches.insert_store(store_from(objects));
}

pub(super) fn preload<K: CachedKind>(object: K) -> Preload {
    Preload {
        kind: TypeId::of::<K>(),
        object: Box::new(object),
        install: install::<K>,
    }
}

pub(super) type GivenStash = Box<dyn Fn(&mut Stash) + Send + Sync>;

/// One case of a table test of one step (anything that implements [`SubReconciler`]): the step gets the
/// parent directly, in a [`Context`] built for it; expectations cover the writes, the parent (and its status)
/// as the step leaves it, conditions, tracks, stash values and outcome. See the [module documentation](super).
///
/// ```
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kubewright::testing::table::SubReconcilerTestCase;
/// use kubewright::{Context, Outcome, StashKey, SyncReconciler};
///
/// const TEXT: StashKey<String> = StashKey::new("text");
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), kubewright::testing::table::CaseFailure> {
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
///     .expect_track(kubewright::TrackKey::name::<ConfigMap>(Some("default"), "settings"))
///     .expect_stash(&TEXT, "hi".to_string())
///     .run_pure(&step)
///     .await?;
/// # Ok(()) }
/// ```
pub struct SubReconcilerTestCase<P> {
    pub(super) name: String,
    pub(super) parent: P,
    pub(super) given: Vec<(Value, Option<Preload>)>,
    pub(super) given_stash: Vec<GivenStash>,
    pub(super) settings: Settings,
    pub(super) finalize: bool,
    pub(super) expect_parent: Option<Value>,
    pub(super) expect_status: Option<Value>,
    pub(super) expect_conditions: Option<Vec<ConditionUpdate>>,
    pub(super) scenario: Scenario,
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
            for kind in &self.scenario.kinds {
                env.register(kind.clone());
            }
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
    /// ([`Caches::insert_store`], on an [`offline_client`](crate::testing::table::offline_client)), commands recorded by a [`RecordingDispatcher`]
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
            self.scenario.time,
        );
        for s in &self.given_stash {
            s(cx.stash_mut());
        }
        let result = self.step_result(step, &mut parent, &mut cx).await;
        let writes = writes_of_commands(cx.commands());
        self.finish(parent, cx, result, Vec::new(), writes)
    }

    pub(super) async fn step_result(
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

    pub(super) fn finish(
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

pub(super) fn name_of<K: Resource>(obj: &K) -> String {
    obj.meta().name.clone().unwrap_or_default()
}
