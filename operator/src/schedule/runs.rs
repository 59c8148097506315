//! [`Runs`]: the run-once children a parent on a schedule should have, and what becomes of the others.

use std::any::Any;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::ops::Deref;

use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::jiff::{SignedDuration, Timestamp};
use kube::{Resource, ResourceExt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::Schedule;
use crate::readiness::{builtin, finished};
use crate::{ChildOutcome, Outcome, Result, Retention};

/// How the runs of one parent may overlap: the CronJob's `concurrencyPolicy`, ready to be a spec field.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub enum ConcurrencyPolicy {
    /// Runs may overlap.
    #[default]
    Allow,
    /// A run due while others run is skipped.
    Forbid,
    /// A run due while others run replaces them (they are deleted).
    Replace,
}

/// The runs of one parent on a [`Schedule`]: run-once children (Jobs, backups), each for one time of the
/// schedule, which it carries in an annotation (RFC 3339) and in its name (`<parent>-<unix seconds>`).
///
/// Kept by a create-once child set (`#[children(strategy = "create", ..)]`): its desired function lists
/// [`Runs::desired`], its retention rule is [`Runs::retain`], a step returns [`Runs::requeue`], and the
/// status reports [`observe`]. A run is running until it has [finished](crate::readiness::finished) (a Job
/// `Complete` or `Failed`; any other kind once written); a finished Job that did not complete counts as
/// failed.
///
/// ```
/// use k8s_openapi::api::batch::v1::Job;
/// use kubewright::prelude::*;
/// use kubewright::schedule::{ConcurrencyPolicy, Runs, Schedule};
///
/// let mut parent = ConfigMap::default(); // any parent kind; here one created at midnight
/// # use k8s_openapi::api::core::v1::ConfigMap;
/// parent.metadata.name = Some("nightly".into());
/// parent.metadata.creation_timestamp = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time("2025-01-01T00:00:00Z".parse()?));
/// let runs = Runs::new(&parent, Schedule::parse("*/10 * * * *")?, "example.dev/scheduled-at")
///     .policy(ConcurrencyPolicy::Forbid)
///     .starting_deadline_seconds(Some(300));
///
/// let now = "2025-01-01T00:32:00Z".parse()?;
/// let due = runs.desired(Vec::<Job>::new().iter(), None, now)?; // no run yet: the one missed last is due
/// assert_eq!(due, ["2025-01-01T00:30:00Z".parse()?]);
///
/// let job = runs.stamp(Job::default(), due[0]);
/// assert_eq!(job.name_any(), "nightly-1735691400");
/// assert_eq!(runs.desired([&job], None, now)?, due, "running, it stays; nothing else is due");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct Runs {
    schedule: Schedule,
    annotation: Cow<'static, str>,
    parent: String,
    created: Option<Timestamp>,
    policy: ConcurrencyPolicy,
    deadline: Option<SignedDuration>,
    suspend: bool,
    succeeded: usize,
    failed: usize,
}

impl Runs {
    /// The runs of `parent` on `schedule`, each carrying its time in `annotation`. No run is due for a time
    /// before the parent's creation. Until changed: [`ConcurrencyPolicy::Allow`], no starting deadline, not
    /// suspended, a history of 3 succeeded and 1 failed run (Kubernetes' CronJob defaults).
    pub fn new<P: Resource>(
        parent: &P,
        schedule: Schedule,
        annotation: impl Into<Cow<'static, str>>,
    ) -> Runs {
        let meta = parent.meta();
        Runs {
            schedule,
            annotation: annotation.into(),
            parent: meta.name.clone().unwrap_or_default(),
            created: meta.creation_timestamp.as_ref().map(|t| t.0),
            policy: ConcurrencyPolicy::Allow,
            deadline: None,
            suspend: false,
            succeeded: 3,
            failed: 1,
        }
    }

    /// How runs may overlap.
    pub fn policy(mut self, policy: ConcurrencyPolicy) -> Runs {
        self.policy = policy;
        self
    }

    /// How late a missed run may still start (`None`: any time later; below 0 counts as 0).
    pub fn starting_deadline_seconds(mut self, seconds: Option<i64>) -> Runs {
        self.deadline = seconds.map(|s| SignedDuration::from_secs(s.max(0)));
        self
    }

    /// Whether new runs are held back (those running go on).
    pub fn suspend(mut self, suspend: bool) -> Runs {
        self.suspend = suspend;
        self
    }

    /// How many finished runs are kept: the newest `succeeded` and `failed` ones by schedule time.
    pub fn history(mut self, succeeded: usize, failed: usize) -> Runs {
        (self.succeeded, self.failed) = (succeeded, failed);
        self
    }

    /// The schedule time a run carries in the annotation.
    pub fn scheduled_at<K: Resource>(&self, run: &K) -> Option<Timestamp> {
        scheduled_at(run, &self.annotation)
    }

    /// `run` named `<parent>-<unix seconds of at>` and annotated with `at`.
    pub fn stamp<K: Resource>(&self, mut run: K, at: Timestamp) -> K {
        let meta = run.meta_mut();
        meta.name = Some(format!("{}-{}", self.parent, at.as_second()));
        let annotations = meta.annotations.get_or_insert_with(BTreeMap::new);
        annotations.insert(self.annotation.to_string(), at.to_string());
        run
    }

    /// The run due at `now` (none while suspended): the latest schedule time after `last` (the last run, else
    /// the parent's creation) and at most the starting deadline old. An invalid spec past
    /// [`MAX_MISSED`](super::MAX_MISSED) such times ([`Schedule::latest`]).
    pub fn due(&self, last: Option<Timestamp>, now: Timestamp) -> Result<Option<Timestamp>> {
        if self.suspend {
            return Ok(None);
        }
        let oldest = self.deadline.and_then(|d| now.checked_sub(d).ok());
        let since = last.or(self.created).max(oldest).unwrap_or(now);
        self.schedule.latest(since, now)
    }

    /// The schedule times whose runs should exist at `now`, given the runs the parent has (`runs`) and the
    /// latest time it reported running (`last`, kept in its status since the run itself may be gone): those
    /// running, and the one [due](Runs::due) after the latest of all, as the policy allows (`Forbid`: none due
    /// while one runs; `Replace`: the one due instead of those running).
    pub fn desired<K, R>(
        &self,
        runs: impl IntoIterator<Item = R>,
        last: Option<Timestamp>,
        now: Timestamp,
    ) -> Result<Vec<Timestamp>>
    where
        K: Resource + Any,
        R: Deref<Target = K>,
    {
        let (mut last, mut running) = (last, vec![]);
        for run in runs {
            let at = self.scheduled_at(&*run);
            last = last.max(at);
            running.extend(at.filter(|_| is_running(&*run)));
        }
        Ok(match (self.due(last, now)?, self.policy) {
            (Some(_), ConcurrencyPolicy::Forbid) if !running.is_empty() => running,
            (Some(at), ConcurrencyPolicy::Replace) => vec![at],
            (due, _) => running.into_iter().chain(due).collect(),
        })
    }

    /// What becomes of a run no longer desired: a finished one is history (`Succeeded` or `Failed`, the
    /// newest by schedule time kept as [`history`](Runs::history) says), a running one is kept, or deleted
    /// when a `Replace` run replaced it.
    pub fn retain<K: Resource + Any>(&self, run: &K) -> Retention {
        let at = self.scheduled_at(run).unwrap_or_default();
        let (class, limit) = match (is_running(run), builtin(run).is_ready()) {
            (true, _) if self.policy == ConcurrencyPolicy::Replace => return Retention::Delete,
            (true, _) => return Retention::Keep,
            (false, true) => ("Succeeded", self.succeeded),
            (false, false) => ("Failed", self.failed),
        };
        let class = Cow::Borrowed(class);
        Retention::History { class, limit, at }
    }

    /// Run the pass again at the schedule's next time after `now` (not while suspended).
    pub fn requeue(&self, now: Timestamp) -> Outcome {
        match self.schedule.next_after(now) {
            Some(next) if !self.suspend => {
                Outcome::RequeueAfter(now.duration_until(next).unsigned_abs())
            }
            _ => Outcome::Continue,
        }
    }
}

/// What a parent reports of its runs ([`observe`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Observed {
    /// The runs still running and not being deleted.
    pub active: Vec<ObjectReference>,
    /// The latest schedule time of the runs the pass saw.
    pub last: Option<Timestamp>,
}

/// What a status reports of the runs a child set's pass kept, each carrying its schedule time in `annotation`:
/// those running, and the latest schedule time among them all. A status keeps the latest of this and what it
/// reported before, since finished runs are trimmed.
///
/// ```
/// use std::collections::BTreeMap;
/// use k8s_openapi::api::batch::v1::Job;
/// use kubewright::ChildOutcome;
/// use kubewright::schedule::observe;
///
/// let mut job = Job::default();
/// job.metadata.name = Some("nightly-1735691400".into());
/// job.metadata.annotations = Some([("example.dev/scheduled-at".into(), "2025-01-01T00:30:00Z".into())].into());
/// let runs = BTreeMap::from([("nightly-1735691400".to_string(), ChildOutcome::Unchanged(job))]);
/// let seen = observe("example.dev/scheduled-at", &runs);
/// assert_eq!(seen.active.len(), 1, "a Job with no Complete or Failed condition runs");
/// assert_eq!(seen.last, Some("2025-01-01T00:30:00Z".parse()?));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn observe<K>(annotation: &str, runs: &BTreeMap<String, ChildOutcome<K>>) -> Observed
where
    K: Resource<DynamicType = ()> + Any,
{
    let mut observed = Observed::default();
    for (run, outcome) in runs.values().filter_map(|o| Some((o.child()?, o))) {
        observed.last = observed.last.max(scheduled_at(run, annotation));
        if is_running(run) && !outcome.is_terminating() {
            observed.active.push(run.object_ref(&()));
        }
    }
    observed
}

fn scheduled_at<K: Resource>(run: &K, annotation: &str) -> Option<Timestamp> {
    run.annotations().get(annotation)?.parse().ok()
}

fn is_running<K: Any>(run: &K) -> bool {
    !finished(run).is_ready()
}

#[cfg(test)]
#[path = "runs_tests.rs"]
mod tests;
