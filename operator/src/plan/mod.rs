//! What the operator would change, without changing it: one pass per parent with every write sent as a
//! server-side dry run (`dryRun=All`), each write shown as a diff of the live object and the object the server
//! answered the dry run with. The `plan` subcommand of [`App`](crate::cli::App) prints it
//! ([`Operator::plan`](crate::Operator::plan) computes it).
//!
//! **The same pass.** Each parent gets the pass the controller would run ([`Reconciler::run_pass`]): the
//! finalizer step, the child steps and child sets, the finalize steps of a parent being deleted, the pause
//! rule, and the status write. A status write and a finalizer added are writes, and appear in the plan. So
//! a plan lists no write exactly when a pass of the operator, run for real on this cluster, would write nothing.
//! Events are not sent, and the write metrics not counted.
//!
//! **The diff.** For each write, the live object is read from the API server just before it (none for a
//! create), and the answer of the dry run is the object after it (none for a delete). Both are printed as YAML
//! after removing the metadata every write changes without meaning anything ([`diff::NOISE`]:
//! `managedFields`, `resourceVersion`, `generation`, `uid`, `creationTimestamp`, and the runtime's
//! desired-state digest annotation), and compared line by line as a unified diff. A write whose dry run changes
//! nothing but those (the runtime's move of a created child's managed fields into its apply entry, say) is
//! still listed, with an empty diff: the operator would send it.
//!
//! **Limits.** One pass per parent: a write that a later pass would make only after this one's writes landed
//! (a step reading a child it created; a reconciler in one-action-per-pass mode) is not in the plan. Writes a
//! step makes through its own client ([`Context::client`](crate::Context::client)) bypass the pass's commands
//! and are not planned: they would be made for real.

use std::sync::Arc;
use std::time::Duration;

use futures::future::{BoxFuture, FutureExt};
use kube::{Client, ResourceExt};
use serde_json::Value;

use crate::cache::{Caches, NotServed, NotSynced};
use crate::command::{ApiDispatcher, Command, Dispatcher, Target};
use crate::error::Error;
use crate::reconciler::{ParentKind, Reconciler};

pub mod diff;
mod record;

use record::PlanDispatcher;

/// The exit code of a plan in which no parent would be written to.
pub const EXIT_UNCHANGED: u8 = 0;
/// The exit code of a plan that could not be made (an error, a write refused: forbidden, invalid, conflict).
pub const EXIT_FAILED: u8 = 1;
/// The exit code of a plan with writes.
pub const EXIT_CHANGES: u8 = 2;

/// Which parent to plan: `name`, in `namespace` for a namespaced kind, of `kind` (a kind or plural name,
/// case-insensitive) when given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParentSelector {
    /// The parent's kind (`WebApp`) or plural (`webapps`); any when none.
    pub kind: Option<String>,
    /// The parent's namespace (none for a cluster-scoped parent).
    pub namespace: Option<String>,
    /// The parent's name.
    pub name: String,
}

impl ParentSelector {
    /// `NAMESPACE/NAME`, or `NAME` for a cluster-scoped parent, of any kind or of `kind`.
    ///
    /// ```
    /// # use kubewright::plan::ParentSelector;
    /// let s = ParentSelector::parse("default/web", Some("WebApp"));
    /// assert_eq!((s.namespace.as_deref(), s.name.as_str()), (Some("default"), "web"));
    /// assert_eq!(ParentSelector::parse("shared", None).namespace, None);
    /// ```
    pub fn parse(parent: &str, kind: Option<&str>) -> Self {
        let (namespace, name) = match parent.split_once('/') {
            Some((ns, name)) => (Some(ns.to_string()), name.to_string()),
            None => (None, parent.to_string()),
        };
        Self {
            kind: kind.map(str::to_string),
            namespace,
            name,
        }
    }

    fn selects_kind<P: kube::Resource<DynamicType = ()>>(&self) -> bool {
        self.kind.as_deref().is_none_or(|k| {
            k.eq_ignore_ascii_case(&P::kind(&())) || k.eq_ignore_ascii_case(&P::plural(&()))
        })
    }
}

impl std::fmt::Display for ParentSelector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(kind) = &self.kind {
            write!(f, "{kind} ")?;
        }
        match &self.namespace {
            Some(ns) => write!(f, "{ns}/{}", self.name),
            None => write!(f, "{}", self.name),
        }
    }
}

/// Why a plan could not be made at all.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// The operator cannot start: its options are invalid, or a kind is not served.
    #[error(transparent)]
    Start(#[from] crate::RunError),
    /// A cache did not get its first list in time (a kind the client may not list or watch, say).
    #[error(transparent)]
    NotSynced(#[from] NotSynced),
    /// No controller has the parent asked for.
    #[error("no parent {0} found")]
    NoParent(ParentSelector),
}

impl From<NotServed> for PlanError {
    fn from(e: NotServed) -> Self {
        PlanError::Start(e.into())
    }
}

/// A write the operator would make, as its dry run answered it.
#[derive(Debug, Clone)]
pub struct PlannedWrite {
    /// The verb ([`Command::verb`]): `create`, `apply`, `update`, `patch`, `delete`, `status`.
    pub verb: &'static str,
    /// The object written.
    pub target: Target,
    /// The object before the write, as the API server holds it (none when it does not exist).
    pub live: Option<Value>,
    /// The object the dry run would store (none for a delete, or when refused).
    pub planned: Option<Value>,
    /// The unified diff of `live` and `planned` ([`diff::unified`]); empty when only noise differs.
    pub diff: String,
    /// Why the API server refused the dry run (forbidden, invalid, conflict), naming the request.
    pub refused: Option<String>,
}

impl PlannedWrite {
    fn of(recorded: record::Recorded) -> Option<Self> {
        let target = recorded.command.target()?.clone();
        let verb = recorded.command.verb();
        let (planned, refused) = match recorded.planned {
            Ok(planned) => (planned, None),
            Err(e) => (None, Some(e)),
        };
        let diff = match (&refused, &recorded.command) {
            (Some(_), _) => String::new(),
            (None, Command::Delete { .. }) => diff::unified(recorded.live.as_ref(), None),
            (None, _) => diff::unified(recorded.live.as_ref(), planned.as_ref()),
        };
        Some(Self {
            verb,
            target,
            live: recorded.live,
            planned,
            diff,
            refused,
        })
    }
}

/// How a planned pass ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PassEnd {
    /// The pass ran to its end.
    Done,
    /// The reconciler does one action per pass: later passes would write more.
    Yielded,
    /// The spec cannot be realised; the operator would say so in the status and wait for a change.
    InvalidSpec(String),
    /// The pass failed: the operator would retry it.
    Failed(String),
}

/// The plan of one parent.
#[derive(Debug, Clone)]
pub struct ParentPlan {
    /// The parent's kind.
    pub kind: String,
    /// Its namespace.
    pub namespace: Option<String>,
    /// Its name.
    pub name: String,
    /// The writes its pass would make, in order.
    pub writes: Vec<PlannedWrite>,
    /// How the pass ended.
    pub ended: PassEnd,
}

impl ParentPlan {
    fn key(&self) -> (&str, Option<&str>, &str) {
        (&self.kind, self.namespace.as_deref(), &self.name)
    }

    fn failure(&self) -> Option<String> {
        if let Some(w) = self.writes.iter().find(|w| w.refused.is_some()) {
            return w.refused.clone();
        }
        match &self.ended {
            PassEnd::Failed(e) => Some(e.clone()),
            _ => None,
        }
    }
}

/// What the operator would write, per parent (sorted by kind, namespace and name).
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// Every parent planned.
    pub parents: Vec<ParentPlan>,
}

impl Plan {
    /// Whether any parent's pass would write.
    pub fn changes(&self) -> bool {
        self.parents.iter().any(|p| !p.writes.is_empty())
    }

    /// The writes refused and the passes failed, each naming its request or parent.
    pub fn failures(&self) -> Vec<String> {
        self.parents
            .iter()
            .filter_map(|p| {
                let name = match &p.namespace {
                    Some(ns) => format!("{} {ns}/{}", p.kind, p.name),
                    None => format!("{} {}", p.kind, p.name),
                };
                p.failure().map(|f| format!("{name}: {f}"))
            })
            .collect()
    }

    /// [`EXIT_FAILED`] when a write was refused or a pass failed, else [`EXIT_CHANGES`] when a parent would be
    /// written to, else [`EXIT_UNCHANGED`].
    pub fn exit_code(&self) -> u8 {
        if !self.failures().is_empty() {
            EXIT_FAILED
        } else if self.changes() {
            EXIT_CHANGES
        } else {
            EXIT_UNCHANGED
        }
    }
}

impl std::fmt::Display for Plan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for p in &self.parents {
            let name = match &p.namespace {
                Some(ns) => format!("{ns}/{}", p.name),
                None => p.name.clone(),
            };
            match p.writes.len() {
                0 => writeln!(f, "{} {name}: no change", p.kind)?,
                1 => writeln!(f, "{} {name}: 1 write", p.kind)?,
                n => writeln!(f, "{} {name}: {n} writes", p.kind)?,
            }
            for w in &p.writes {
                match (&w.refused, w.diff.is_empty()) {
                    // The error names the request.
                    (Some(e), _) => writeln!(f, "  refused: {e}")?,
                    (None, true) => writeln!(
                        f,
                        "  {} {} (only metadata left out of diffs would change)",
                        w.verb, w.target
                    )?,
                    (None, false) => {
                        writeln!(f, "  {} {}", w.verb, w.target)?;
                        for line in w.diff.lines() {
                            writeln!(f, "    {line}")?;
                        }
                    }
                }
            }
            match &p.ended {
                PassEnd::Done => {}
                PassEnd::Yielded => {
                    writeln!(f, "  (one action per pass: later passes would write more)")?
                }
                PassEnd::InvalidSpec(e) => writeln!(f, "  (the spec cannot be realised: {e})")?,
                // A pass that failed on a refused write says so above.
                PassEnd::Failed(_) if p.writes.iter().any(|w| w.refused.is_some()) => {}
                PassEnd::Failed(e) => writeln!(f, "  the pass failed: {e}")?,
            }
        }
        let changed = self.parents.iter().filter(|p| !p.writes.is_empty()).count();
        let writes: usize = self.parents.iter().map(|p| p.writes.len()).sum();
        write!(
            f,
            "parents: {}, would change: {changed}, writes: {writes}",
            self.parents.len()
        )?;
        match self.failures().len() {
            0 => writeln!(f),
            n => writeln!(f, "; incomplete: {n} with a refused write or a failed pass"),
        }
    }
}

/// The plan of one controller: its parents' planned passes.
pub(crate) type Planner =
    Box<dyn FnOnce(Option<ParentSelector>) -> BoxFuture<'static, Vec<ParentPlan>> + Send>;

/// The planner of `reconciler`'s controller, writing (as dry runs) through `client` and reading `caches`.
pub(crate) fn planner<P: ParentKind>(
    reconciler: Arc<Reconciler<P>>,
    client: Client,
    caches: Caches,
) -> Planner {
    Box::new(move |selector| {
        async move {
            if selector.as_ref().is_some_and(|s| !s.selects_kind::<P>()) {
                return Vec::new();
            }
            let mut parents = caches.ensure::<P>().state();
            parents.retain(|p| {
                selector
                    .as_ref()
                    .is_none_or(|s| s.namespace == p.namespace() && s.name == p.name_any())
            });
            parents.sort_by_key(|p| (p.namespace(), p.name_any()));
            let mut plans = Vec::with_capacity(parents.len());
            for parent in parents {
                plans.push(plan_parent(&reconciler, &client, &caches, parent.as_ref()).await);
            }
            plans
        }
        .boxed()
    })
}

/// The planned pass over one parent.
async fn plan_parent<P: ParentKind>(
    reconciler: &Reconciler<P>,
    client: &Client,
    caches: &Caches,
    parent: &P,
) -> ParentPlan {
    let dispatcher =
        PlanDispatcher::new(ApiDispatcher::new(client.clone(), reconciler.name()).dry_run());
    let erased: Arc<dyn Dispatcher> = dispatcher.clone();
    let pass = reconciler.run_pass(parent, caches, erased).await;
    let ended = match pass.result {
        Ok(_) => PassEnd::Done,
        Err(Error::Yield) => PassEnd::Yielded,
        Err(e @ Error::InvalidSpec { .. }) => PassEnd::InvalidSpec(e.to_string()),
        Err(e) => PassEnd::Failed(record::brief(&e)),
    };
    ParentPlan {
        kind: P::kind(&()).into_owned(),
        namespace: parent.namespace(),
        name: parent.name_any(),
        writes: dispatcher
            .writes()
            .into_iter()
            .filter_map(PlannedWrite::of)
            .collect(),
        ended,
    }
}

/// Fills `caches` (waiting at most `sync` for their first lists), runs every planner, and stops the watches.
pub(crate) async fn run(
    caches: Caches,
    planners: Vec<Planner>,
    selector: Option<ParentSelector>,
    sync: Duration,
) -> Result<Plan, PlanError> {
    caches.check_served().await?;
    let mut watches = tokio::task::JoinSet::new();
    for w in caches.take_watches() {
        watches.spawn(w);
    }
    let synced = caches.ready_within(sync).await;
    let mut parents = Vec::new();
    if synced.is_ok() {
        for planner in planners {
            parents.extend(planner(selector.clone()).await);
        }
    }
    watches.abort_all();
    while watches.join_next().await.is_some() {}
    synced?;
    if let Some(selector) = selector
        && parents.is_empty()
    {
        return Err(PlanError::NoParent(selector));
    }
    parents.sort_by(|a, b| a.key().cmp(&b.key()));
    Ok(Plan { parents })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parent(name: &str, writes: Vec<PlannedWrite>, ended: PassEnd) -> ParentPlan {
        ParentPlan {
            kind: "WebApp".into(),
            namespace: Some("default".into()),
            name: name.into(),
            writes,
            ended,
        }
    }

    fn write(refused: Option<&str>) -> PlannedWrite {
        PlannedWrite {
            verb: "apply",
            target: Target {
                group: "apps".into(),
                version: "v1".into(),
                kind: "Deployment".into(),
                plural: "deployments".into(),
                namespace: Some("default".into()),
                name: "web".into(),
            },
            live: None,
            planned: None,
            diff: "--- live\n+++ planned\n@@ -1 +1 @@\n-a: 1\n+a: 2\n".into(),
            refused: refused.map(str::to_string),
        }
    }

    #[test]
    fn exit_codes_say_unchanged_changes_or_failed() {
        let quiet = Plan {
            parents: vec![parent("a", vec![], PassEnd::Done)],
        };
        assert_eq!(quiet.exit_code(), EXIT_UNCHANGED);
        assert_eq!(
            quiet.to_string(),
            "WebApp default/a: no change\nparents: 1, would change: 0, writes: 0\n"
        );
        let busy = Plan {
            parents: vec![
                parent("a", vec![], PassEnd::Done),
                parent("b", vec![write(None)], PassEnd::Done),
            ],
        };
        assert_eq!(busy.exit_code(), EXIT_CHANGES);
        assert!(
            busy.to_string().contains(
                "WebApp default/b: 1 write\n  apply Deployment default/web\n    --- live\n"
            ),
            "{busy}"
        );
        let refused = Plan {
            parents: vec![parent(
                "c",
                vec![write(Some(
                    "apply Deployment default/web (dryRun=All): 403 Forbidden: no",
                ))],
                PassEnd::Failed("same".into()),
            )],
        };
        assert_eq!(refused.exit_code(), EXIT_FAILED);
        assert_eq!(
            refused.failures(),
            ["WebApp default/c: apply Deployment default/web (dryRun=All): 403 Forbidden: no"]
        );
        let failed = Plan {
            parents: vec![parent("d", vec![], PassEnd::Failed("boom".into()))],
        };
        assert_eq!(failed.exit_code(), EXIT_FAILED);
        let invalid = Plan {
            parents: vec![parent("e", vec![], PassEnd::InvalidSpec("bad".into()))],
        };
        assert_eq!(
            invalid.exit_code(),
            EXIT_UNCHANGED,
            "an invalid spec is a state, not a failure"
        );
    }

    #[test]
    fn a_selector_picks_by_kind_or_plural() {
        use k8s_openapi::api::core::v1::Service;
        assert!(ParentSelector::parse("a/b", Some("service")).selects_kind::<Service>());
        assert!(ParentSelector::parse("a/b", Some("Services")).selects_kind::<Service>());
        assert!(ParentSelector::parse("a/b", None).selects_kind::<Service>());
        assert!(!ParentSelector::parse("a/b", Some("WebApp")).selects_kind::<Service>());
        assert_eq!(
            ParentSelector::parse("a/b", Some("WebApp")).to_string(),
            "WebApp a/b"
        );
    }
}
