//! What every case holds besides its subject: given objects and stash, expected writes, events, tracks,
//! stash and outcome, the checks that compare them, and the builder methods both kinds of case share.

use std::fmt;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use serde::Serialize;
use serde_json::Value;

use super::env;
use k8s_openapi::jiff::Timestamp;

use super::env::{DEFAULT_SEED, default_time};
use super::expect::{Category, Expectations, Expected, Write, indent};
use crate::context::Context;
use crate::error::{Error, Result};
use crate::outcome::Outcome;
use crate::stash::Stash;
use crate::testing::apiserver::{Fault, RequestRecord};
use crate::tracker::TrackKey;

pub(super) enum OutcomeMatcher {
    Ok(Outcome),
    Err {
        what: String,
        check: Box<dyn Fn(&Error) -> bool + Send + Sync>,
    },
}

impl OutcomeMatcher {
    pub(super) fn mismatch(&self, result: &Result<Outcome>) -> Option<String> {
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

pub(super) type StashCheck = Box<dyn Fn(&Stash) -> Option<String> + Send + Sync>;

/// What both kinds of case share: the world before the pass and what the pass must do.
pub(super) struct Scenario {
    pub(super) time: Timestamp,
    pub(super) seed: u64,
    pub(super) crds: Vec<CustomResourceDefinition>,
    /// Kinds registered on the server before anything else (see `register`).
    pub(super) kinds: Vec<crate::testing::apiserver::ResourceType>,
    pub(super) faults: Vec<Fault>,
    pub(super) expect: Expectations,
    pub(super) tracks: Vec<TrackKey>,
    pub(super) stash: Vec<StashCheck>,
    pub(super) outcome: OutcomeMatcher,
    pub(super) no_reads: bool,
    /// Problems found while the case was being built (an expectation that would not serialize).
    pub(super) invalid: Vec<String>,
}

impl Default for Scenario {
    fn default() -> Self {
        Self {
            time: default_time(),
            seed: DEFAULT_SEED,
            crds: Vec::new(),
            kinds: Vec::new(),
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
    pub(super) fn value(&mut self, what: &str, v: impl Serialize) -> Option<Value> {
        match serde_json::to_value(v) {
            Ok(v) => Some(v),
            Err(e) => {
                self.invalid
                    .push(format!("{what} does not serialize to JSON: {e}"));
                None
            }
        }
    }

    pub(super) fn expect_body(&mut self, category: Category, v: impl Serialize) {
        if let Some(v) = self.value(&format!("the expected {category}"), v) {
            self.expect.push(category, Expected::Body(v));
        }
    }

    /// Everything that differs between the expectations and what the pass did.
    pub(super) fn check(
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

pub(super) fn debug_diff(expected: &impl fmt::Debug, actual: &impl fmt::Debug) -> String {
    similar::TextDiff::from_lines(format!("{expected:#?}\n"), format!("{actual:#?}\n"))
        .unified_diff()
        .header("expected", "actual")
        .to_string()
}

/// The builder methods both kinds of case share.
macro_rules! scenario_builders {
    () => {
        /// Serves a kind the embedded cluster does not know (neither built in nor from a CRD), registered
        /// before the CRDs and given objects are stored.
        pub fn register(mut self, kind: crate::testing::apiserver::ResourceType) -> Self {
            self.scenario.kinds.push(kind);
            self
        }

        /// Installs a CRD (and waits until it is established) before any object is stored.
        pub fn crd(mut self, crd: CustomResourceDefinition) -> Self {
            self.scenario.crds.push(crd);
            self
        }

        /// The time of the server's fixed clock and of the pass (default [`default_time`](crate::testing::table::default_time)).
        pub fn time(mut self, time: k8s_openapi::jiff::Timestamp) -> Self {
            self.scenario.time = time;
            self
        }

        /// The seed for uids and generated names (default [`DEFAULT_SEED`](crate::testing::table::DEFAULT_SEED)).
        pub fn seed(mut self, seed: u64) -> Self {
            self.scenario.seed = seed;
            self
        }

        /// Injects a fault once the caches are ready, right before the pass (so it hits the pass's requests).
        pub fn inject(mut self, fault: Fault) -> Self {
            self.scenario.faults.push(fault);
            self
        }

        /// Expects the next create (`POST`) to send an object containing `object` (see [`is_subset`](crate::testing::table::is_subset)).
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
