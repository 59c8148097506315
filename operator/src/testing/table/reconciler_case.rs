//! Table tests of a whole reconciler: [`ReconcilerTestCase`] and [`ReconcilerTestSuite`].

use std::any::Any;
use std::fmt;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Resource;
use kube::runtime::reflector::ObjectRef;
use serde::Serialize;
use serde_json::Value;

use super::env::TestEnv;
use super::expect::{Category, EventExpectation, Expected};
use super::failure::{CaseFailure, CaseReport, SuiteFailure};
use super::scenario::OutcomeMatcher;
use super::scenario::Scenario;
use crate::error::{Error, Result};
use crate::outcome::Outcome;
use crate::reconciler::{ParentKind, Reconciler};
use crate::stash::{Stash, StashKey};
use crate::testing::apiserver::Fault;
use crate::tracker::TrackKey;

/// One case of a table test of a whole [`Reconciler`]: given objects, one pass over a parent read from the
/// cache, expected writes, tracks, stash values and outcome. See the [module documentation](super).
pub struct ReconcilerTestCase<P: ParentKind> {
    pub(super) name: String,
    pub(super) parent: ObjectRef<P>,
    pub(super) given: Vec<Value>,
    pub(super) parent_absent: bool,
    pub(super) scenario: Scenario,
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
        let ran = async {
            for kind in &self.scenario.kinds {
                env.register(kind.clone());
            }
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
    pub(super) cases: Vec<ReconcilerTestCase<P>>,
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
