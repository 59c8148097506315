//! The assigner: reads the live members and every parent's sharding labels, and applies [`decide`] to each
//! parent (see the module docs of [`sharding`](super) for the protocol).
//!
//! One replica runs it: the runtime starts it on the member holding the group's assigner Lease, over the
//! parents' metadata that member watches ([`Assigner::round_over`]); [`Assigner::round`] lists them instead.
//! A round lists the children of each dead member once (one paged list per child kind), not per parent.

use std::collections::HashMap;
use std::marker::PhantomData;

use kube::api::{Api, ApiResource, DynamicObject, ListParams, Patch, PatchParams};
use kube::core::ObjectMeta;
use kube::{Client, Resource};
use serde_json::{Value, json};

use super::{DRAIN_LABEL, Members, Move, ParentShard, SHARD_LABEL, decide, shard_of};
use crate::leader::is_conflict;

/// Objects per page when the assigner lists parents and children.
const PAGE: u32 = 500;

/// What one round did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Round {
    /// The members alive.
    pub live: Vec<String>,
    /// Parents labelled for the first time.
    pub assigned: usize,
    /// Parents whose owner was asked to hand them over.
    pub draining: usize,
    /// Hand-overs cancelled.
    pub cancelled: usize,
    /// Parents of dead members relabelled, with their children.
    pub reassigned: usize,
    /// Children relabelled with them.
    pub children_moved: usize,
    /// Writes refused because the object changed since it was read (retried next round).
    pub conflicts: usize,
    /// How many parents each member owns after the round (by their shard labels; a parent whose write
    /// conflicted counts under its label as read).
    pub owners: std::collections::BTreeMap<String, usize>,
}

/// Why a round stopped.
#[derive(Debug, thiserror::Error)]
pub enum AssignError {
    /// The members or the parents could not be read.
    #[error("reading {what}: {source}")]
    Read {
        /// What was read.
        what: String,
        /// The API server's answer.
        #[source]
        source: kube::Error,
    },
    /// A write failed for another reason than a conflict.
    #[error("relabelling {what}: {source}")]
    Write {
        /// The object.
        what: String,
        /// The API server's answer.
        #[source]
        source: kube::Error,
    },
}

/// The assigner of parents of kind `P` to the members of a group, relabelling the children of the kinds
/// given with [`Assigner::child`] when it moves a dead member's parent.
///
/// ```no_run
/// # use kubewright::sharding::{Assigner, Members, Sharding};
/// # use k8s_openapi::api::core::v1::{ConfigMap, Secret};
/// # async fn demo(client: kube::Client) -> Result<(), kubewright::sharding::AssignError> {
/// let config = Sharding::new("db", "ops");
/// let assigner = Assigner::<ConfigMap>::new(client.clone()).child::<Secret>();
/// let mut members = Members::new(client, config.namespace(), config.group());
/// let round = assigner.round(&mut members).await?;
/// println!("{} parents assigned", round.assigned);
/// # Ok(()) }
/// ```
pub struct Assigner<P> {
    client: Client,
    parents: ApiResource,
    children: Vec<ApiResource>,
    /// The namespace of the parents, when not every namespace.
    namespace: Option<String>,
    _kind: PhantomData<fn() -> P>,
}

impl<P> std::fmt::Debug for Assigner<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Assigner")
            .field("parents", &self.parents.kind)
            .field(
                "children",
                &self.children.iter().map(|c| &c.kind).collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl<P: Resource<DynamicType = ()>> Assigner<P> {
    /// An assigner of the parents of kind `P` (in every namespace); the group is the one of the [`Members`]
    /// each [`round`](Self::round) is given.
    pub fn new(client: Client) -> Self {
        Self {
            client,
            parents: ApiResource::erase::<P>(&()),
            children: Vec::new(),
            namespace: None,
            _kind: PhantomData,
        }
    }

    /// Also relabels the parent's children of kind `K` when it moves a dead member's parent.
    pub fn child<K: Resource<DynamicType = ()>>(self) -> Self {
        self.child_resource(ApiResource::erase::<K>(&()))
    }
}

impl Assigner<DynamicObject> {
    /// An assigner of the parents of the kind `parents` names (a kind known at run time).
    pub fn of(client: Client, parents: ApiResource) -> Self {
        Self {
            client,
            parents,
            children: Vec::new(),
            namespace: None,
            _kind: PhantomData,
        }
    }
}

impl<P> Assigner<P> {
    /// The kind of the parents it assigns.
    pub fn parents(&self) -> &ApiResource {
        &self.parents
    }

    /// Also relabels the parent's children of the kind `kind` names when it moves a dead member's parent.
    pub fn child_resource(mut self, kind: ApiResource) -> Self {
        if !self.children.contains(&kind) {
            self.children.push(kind);
        }
        self
    }

    /// Assigns only the parents in `namespace` (an operator that watches one namespace).
    pub fn within(mut self, namespace: impl Into<String>) -> Self {
        self.namespace = Some(namespace.into());
        self
    }

    /// The parents' API in the assigner's scope (its namespace, or all).
    pub fn parents_api(&self) -> Api<DynamicObject> {
        self.api(&self.parents, self.namespace.as_deref())
    }

    /// The parents' metadata API in the assigner's scope (for a watch of their metadata).
    pub fn parents_metadata_api(&self) -> Api<kube::core::PartialObjectMeta<DynamicObject>> {
        match self.namespace.as_deref() {
            Some(ns) => Api::namespaced_with(self.client.clone(), ns, &self.parents),
            None => Api::all_with(self.client.clone(), &self.parents),
        }
    }

    /// One round: reads the live members and every parent (one paged list of their metadata), and applies
    /// [`decide`] to each.
    pub async fn round(&self, members: &mut Members) -> Result<Round, AssignError> {
        let live = members.live().await.map_err(|source| AssignError::Read {
            what: "the members' Leases".into(),
            source,
        })?;
        let parents = list_metadata(&self.parents_api(), None, &self.parents.kind).await?;
        self.round_over(live, parents).await
    }

    /// One round over `parents`, the metadata of every parent as the caller has it (from a watch it keeps, so
    /// that a round costs no list), with `live` the members alive ([`Members::live`]): applies [`decide`] to
    /// each. A parent whose metadata is older than the server's is written with a stale resourceVersion: a
    /// conflict, counted and left to the next round.
    pub async fn round_over(
        &self,
        live: Vec<String>,
        parents: Vec<ObjectMeta>,
    ) -> Result<Round, AssignError> {
        let mut round = Round {
            live: live.clone(),
            ..Round::default()
        };
        let mut orphans = Orphans::default();
        for meta in parents {
            let shard = parent_shard(&meta);
            let Some(step) = decide(&shard, &live) else {
                if let Some(owner) = &shard.owner {
                    *round.owners.entry(owner.clone()).or_default() += 1;
                }
                continue;
            };
            let api = self.api(&self.parents, meta.namespace.as_deref());
            let name = meta.name.clone().unwrap_or_default();
            let written = match &step {
                Move::Assign { to } => labels(&api, &meta, json!({ SHARD_LABEL: to })).await,
                Move::Drain { to, .. } => labels(&api, &meta, json!({ DRAIN_LABEL: to })).await,
                Move::CancelDrain => labels(&api, &meta, json!({ DRAIN_LABEL: null })).await,
                Move::Reassign { from, to } => {
                    // The children first: once the parent carries the new label, its new owner reconciles it.
                    let children = orphans
                        .of(self, from, meta.uid.as_deref().unwrap_or_default())
                        .await?;
                    let (moved, conflicts) = relabel(&self.client, children, to).await?;
                    round.children_moved += moved;
                    round.conflicts += conflicts;
                    labels(&api, &meta, json!({ SHARD_LABEL: to, DRAIN_LABEL: null })).await
                }
            };
            let owner_after = match (&written, &step) {
                (Ok(()), Move::Assign { to } | Move::Reassign { to, .. }) => Some(to.clone()),
                _ => shard.owner.clone(),
            };
            if let Some(owner) = owner_after {
                *round.owners.entry(owner).or_default() += 1;
            }
            match written {
                Ok(()) => match step {
                    Move::Assign { .. } => round.assigned += 1,
                    Move::Drain { .. } => round.draining += 1,
                    Move::CancelDrain => round.cancelled += 1,
                    Move::Reassign { .. } => round.reassigned += 1,
                },
                Err(e) if is_conflict(&e) => round.conflicts += 1,
                Err(source) => {
                    return Err(AssignError::Write {
                        what: format!("{} {}", self.parents.kind, shard.key),
                        source,
                    });
                }
            }
            tracing::debug!(parent = %shard.key, ?step, %name, "sharding");
        }
        Ok(round)
    }

    fn api(&self, kind: &ApiResource, namespace: Option<&str>) -> Api<DynamicObject> {
        api_of(&self.client, kind, namespace)
    }
}

/// The children of a round's dead members, by member and then by owner uid: listed once per dead member and
/// child kind in a round (selected by the member's shard label), not once per parent. A dead member writes
/// nothing more, so no child with its label appears after the list.
#[derive(Default)]
struct Orphans {
    by_member: HashMap<String, HashMap<String, Vec<(ApiResource, ObjectMeta)>>>,
}

impl Orphans {
    /// The children of the parent `uid` that carry the label of the dead member `from`.
    async fn of<P>(
        &mut self,
        assigner: &Assigner<P>,
        from: &str,
        uid: &str,
    ) -> Result<Vec<(ApiResource, ObjectMeta)>, AssignError> {
        if !self.by_member.contains_key(from) {
            let mut by_owner: HashMap<String, Vec<(ApiResource, ObjectMeta)>> = HashMap::new();
            for kind in &assigner.children {
                let api = assigner.api(kind, assigner.namespace.as_deref());
                let selector = format!("{SHARD_LABEL}={from}");
                for child in list_metadata(&api, Some(&selector), &kind.kind).await? {
                    let kept = ObjectMeta {
                        name: child.name,
                        namespace: child.namespace,
                        resource_version: child.resource_version,
                        labels: child.labels,
                        ..ObjectMeta::default()
                    };
                    for owner in child.owner_references.iter().flatten() {
                        by_owner
                            .entry(owner.uid.clone())
                            .or_default()
                            .push((kind.clone(), kept.clone()));
                    }
                }
            }
            self.by_member.insert(from.to_string(), by_owner);
        }
        Ok(self
            .by_member
            .get_mut(from)
            .and_then(|by_owner| by_owner.remove(uid))
            .unwrap_or_default())
    }
}

/// Relabels `children` (with their kinds) to `to`; answers how many moved and how many writes conflicted.
async fn relabel(
    client: &Client,
    children: Vec<(ApiResource, ObjectMeta)>,
    to: &str,
) -> Result<(usize, usize), AssignError> {
    let (mut moved, mut conflicts) = (0, 0);
    for (kind, child) in children {
        let api = api_of(client, &kind, child.namespace.as_deref());
        let name = child.name.clone().unwrap_or_default();
        let failed = |source| AssignError::Write {
            what: format!("{} {name}", kind.kind),
            source,
        };
        match labels(&api, &child, json!({ SHARD_LABEL: to })).await {
            Ok(()) => moved += 1,
            // Listed at the round's start, and changed since (a controller writing its status): read again
            // and retried once, unless it no longer carries the dead member's label.
            Err(e) if is_conflict(&e) => {
                let fresh = match api.get_metadata_opt(&name).await.map_err(failed)? {
                    Some(fresh) if shard_of(&fresh.metadata) == shard_of(&child) => fresh.metadata,
                    _ => continue,
                };
                match labels(&api, &fresh, json!({ SHARD_LABEL: to })).await {
                    Ok(()) => moved += 1,
                    Err(e) if is_conflict(&e) => conflicts += 1,
                    Err(source) => return Err(failed(source)),
                }
            }
            Err(source) => return Err(failed(source)),
        }
    }
    Ok((moved, conflicts))
}

/// Relabels from `from` to `to` the children of the parent `meta` of the kinds `children` (those carrying
/// `from`'s label and controlled by the parent); answers how many moved and how many writes conflicted. It
/// lists every child of `from`: for one parent (a hand-over whose children no cache holds), not a round.
pub(crate) async fn relabel_children(
    client: &Client,
    children: &[ApiResource],
    meta: &ObjectMeta,
    from: &str,
    to: &str,
) -> Result<(usize, usize), AssignError> {
    let Some(uid) = meta.uid.as_deref() else {
        return Ok((0, 0));
    };
    let mut owned = Vec::new();
    for kind in children {
        let api = api_of(client, kind, meta.namespace.as_deref());
        let selector = format!("{SHARD_LABEL}={from}");
        for child in list_metadata(&api, Some(&selector), &kind.kind).await? {
            if child
                .owner_references
                .iter()
                .flatten()
                .any(|r| r.uid == uid)
            {
                owned.push((kind.clone(), child));
            }
        }
    }
    relabel(client, owned, to).await
}

/// The API of the kind `kind` in `namespace` (all namespaces, or cluster-scoped, without one).
fn api_of(client: &Client, kind: &ApiResource, namespace: Option<&str>) -> Api<DynamicObject> {
    match namespace {
        Some(ns) => Api::namespaced_with(client.clone(), ns, kind),
        None => Api::all_with(client.clone(), kind),
    }
}

/// The sharding labels of a parent.
fn parent_shard(meta: &ObjectMeta) -> ParentShard {
    let label = |key: &str| meta.labels.as_ref().and_then(|l| l.get(key)).cloned();
    ParentShard {
        key: match &meta.namespace {
            Some(ns) => format!("{ns}/{}", meta.name.as_deref().unwrap_or_default()),
            None => meta.name.clone().unwrap_or_default(),
        },
        owner: label(SHARD_LABEL),
        draining_to: label(DRAIN_LABEL),
    }
}

/// Every object's metadata, page by page.
async fn list_metadata(
    api: &Api<DynamicObject>,
    selector: Option<&str>,
    kind: &str,
) -> Result<Vec<ObjectMeta>, AssignError> {
    let mut params = ListParams::default().limit(PAGE);
    if let Some(s) = selector {
        params = params.labels(s);
    }
    let mut out = Vec::new();
    loop {
        let page = api
            .list_metadata(&params)
            .await
            .map_err(|source| AssignError::Read {
                what: format!("the {kind} objects"),
                source,
            })?;
        out.extend(page.items.into_iter().map(|o| o.metadata));
        match page.metadata.continue_ {
            Some(token) if !token.is_empty() => params = params.continue_token(&token),
            _ => return Ok(out),
        }
    }
}

/// The field manager of the protocol's label writes (the assigner's and a hand-over's), so that an audit of
/// writes tells them from the controllers'.
pub const FIELD_MANAGER: &str = "kubewright-sharding";

/// Sets `labels` (a null removes one) on the object `meta`, if it has not changed since it was read.
pub(crate) async fn labels(
    api: &Api<DynamicObject>,
    meta: &ObjectMeta,
    labels: Value,
) -> kube::Result<()> {
    let patch = json!({
        "metadata": { "resourceVersion": meta.resource_version, "labels": labels }
    });
    api.patch(
        meta.name.as_deref().unwrap_or_default(),
        &PatchParams {
            field_manager: Some(FIELD_MANAGER.to_string()),
            ..PatchParams::default()
        },
        &Patch::Merge(patch),
    )
    .await
    .map(|_| ())
}
