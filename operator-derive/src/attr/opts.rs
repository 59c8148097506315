//! The parsed attributes: darling receivers for the key = value forms, and the items in declaration order.

use darling::FromMeta;
use darling::util::{Flag, SpannedValue};
use proc_macro2::Span;
use syn::{Ident, LitStr, Path, Type};

use super::values::{CratePath, FieldName, FnPath, KeyList, Number, StatusField, TypeArg};

/// `#[reconciler(..)]`: options of the whole reconciler (several `#[reconciler]` attributes are merged).
#[derive(Debug, Default, FromMeta)]
pub struct ContainerOpts {
    /// The controller's name (default `<kind>-controller`).
    pub name: Option<SpannedValue<String>>,
    /// A finalizer around all steps.
    pub finalizer: Option<SpannedValue<String>>,
    /// Parents reconciled at once.
    pub concurrency: Option<Number<u16>>,
    /// Debounce of triggers, in milliseconds.
    pub debounce_ms: Option<Number<u64>>,
    /// The field manager for server-side apply.
    pub field_manager: Option<SpannedValue<String>>,
    /// At most one mutating command per pass.
    pub one_action_per_pass: Flag,
    /// The type of the data steps read with `Context::data`; `reconciler()` then takes it as its argument.
    pub data: Option<TypeArg>,
    /// The derive is on the root type itself, not on a spec struct beside `#[kube(..)]`.
    pub root: Flag,
    /// The parent is this kind, whose status is not the operator's (`kubewright::Foreign<K>`); the derive is
    /// on a marker struct that `reconciler()` is generated on.
    pub parent: Option<TypeArg>,
    /// This kind's own version (the hub) is the storage version, beside `#[version(..)]`s.
    pub storage: Flag,
    /// The runtime crate's path.
    #[darling(rename = "crate")]
    pub krate: Option<CratePath>,
}

impl ContainerOpts {
    /// The keys, for suggestions on a typo (kept in step with the fields by a test).
    pub const KEYS: &[&str] = &[
        "name",
        "finalizer",
        "concurrency",
        "debounce_ms",
        "field_manager",
        "one_action_per_pass",
        "data",
        "root",
        "parent",
        "storage",
        "crate",
    ];
}

/// `#[version(Type, ..)]` after its type: another served version of the kind.
#[derive(Debug, Default, FromMeta)]
pub struct VersionOpts {
    /// This version is the storage version.
    pub storage: Flag,
    /// Requests to this version get a warning: `deprecated` (kube-apiserver's) or `deprecated = ".."`.
    pub deprecated: Option<darling::util::Override<SpannedValue<String>>>,
}

impl VersionOpts {
    /// The keys, for suggestions on a typo (kept in step with the fields by a test).
    pub const KEYS: &[&str] = &["storage", "deprecated"];
}

/// `#[child(..)]` after its optional leading type.
#[derive(Debug, Default, FromMeta)]
pub struct ChildOpts {
    /// `fn(&Parent, &mut Context) -> Result<Option<Child>>`.
    pub desired: Option<FnPath>,
    /// `fn(&mut Status, &ChildOutcome<Child>)`.
    pub reflect: Option<FnPath>,
    /// The field of the status (`Option<String>`) that holds the child's name.
    pub reflect_name: Option<StatusField>,
    /// `"apply"` (default), `"update"` or `"create"`.
    pub strategy: Option<SpannedValue<String>>,
    /// Server-side apply takes conflicting fields (default true).
    pub force: Option<SpannedValue<bool>>,
    /// The field manager of this child.
    pub field_manager: Option<SpannedValue<String>>,
    /// `fn(&Child) -> serde_json::Value`, what logs show of the child.
    pub sanitize: Option<FnPath>,
    /// Name unnamed children `<parent>-<random>`.
    pub generate_name: Flag,
    /// The condition type this child reports.
    pub condition: Option<SpannedValue<String>>,
    /// `fn(&Child) -> Readiness`.
    pub ready: Option<FnPath>,
    /// Stash keys the desired function reads.
    pub reads: Option<KeyList>,
    /// Stash keys the desired function stores.
    pub stores: Option<KeyList>,
}

impl ChildOpts {
    /// The keys, for suggestions on a typo (kept in step with the fields by a test).
    pub const KEYS: &[&str] = &[
        "desired",
        "reflect",
        "reflect_name",
        "strategy",
        "force",
        "field_manager",
        "sanitize",
        "generate_name",
        "condition",
        "ready",
        "reads",
        "stores",
    ];
}

/// `#[children(..)]` after its optional leading type.
#[derive(Debug, Default, FromMeta)]
pub struct ChildrenOpts {
    /// `fn(&Parent, &mut Context) -> Result<Vec<Child>>`.
    pub desired: Option<FnPath>,
    /// `fn(&Child) -> String`.
    pub id: Option<FnPath>,
    /// `fn(&mut Status, &BTreeMap<String, ChildOutcome<Child>>)`.
    pub reflect: Option<FnPath>,
    /// `"apply"` (default) or `"create"`.
    pub strategy: Option<SpannedValue<String>>,
    /// Server-side apply takes conflicting fields (default true).
    pub force: Option<SpannedValue<bool>>,
    /// `fn(&Parent, &Child) -> Retention`, for the children no longer desired.
    pub retain: Option<FnPath>,
    /// The condition type this set reports.
    pub condition: Option<SpannedValue<String>>,
    /// `fn(&Child) -> Readiness`.
    pub ready: Option<FnPath>,
    /// Stash keys the desired function reads.
    pub reads: Option<KeyList>,
    /// Stash keys the desired function stores.
    pub stores: Option<KeyList>,
}

impl ChildrenOpts {
    /// The keys, for suggestions on a typo (kept in step with the fields by a test).
    pub const KEYS: &[&str] = &[
        "desired",
        "id",
        "reflect",
        "strategy",
        "force",
        "retain",
        "condition",
        "ready",
        "reads",
        "stores",
    ];
}

/// The stash keys a step declares it reads and stores (`reads = [..]`, `stores = [..]`).
#[derive(Debug, Clone, Default)]
pub struct Flow {
    /// Keys read.
    pub reads: Vec<Ident>,
    /// Keys stored.
    pub stores: Vec<Ident>,
}

/// `#[watches(..)]` after its optional leading type.
#[derive(Debug, Default, FromMeta)]
pub struct WatchesOpts {
    /// `fn(Arc<Watched>) -> Vec<ObjectRef<Parent>>`, or with a second argument `&Caches`.
    pub map: Option<FnPath>,
    /// The field of the spec that names the watched object (`String`, `Option<String>`, `Vec<String>`).
    pub by: Option<FieldName>,
}

impl WatchesOpts {
    /// The keys, for suggestions on a typo (kept in step with the fields by a test).
    pub const KEYS: &[&str] = &["map", "by"];
}

/// `#[admission(..)]`: the root kind's admission webhooks.
#[derive(Debug, Default, FromMeta)]
pub struct AdmissionOpts {
    /// `fn(&kubewright::admission::Request<Root>) -> kubewright::admission::Verdict`.
    pub validate: Option<FnPath>,
    /// `fn(&mut Root)`: fills the object in place.
    pub default: Option<FnPath>,
    /// Deletes go to the validator too.
    pub deletes: Flag,
    /// `"Fail"` (the default) or `"Ignore"`.
    pub failure_policy: Option<SpannedValue<String>>,
    /// 1 to 30.
    pub timeout_seconds: Option<SpannedValue<i32>>,
}

impl AdmissionOpts {
    /// The keys, for suggestions on a typo (kept in step with the fields by a test).
    pub const KEYS: &[&str] = &[
        "validate",
        "default",
        "deletes",
        "failure_policy",
        "timeout_seconds",
    ];
}

/// One `name: Type` of `#[stash(..)]`.
#[derive(Debug, Clone)]
pub struct StashEntry {
    /// The key's name.
    pub name: Ident,
    /// The value's type.
    pub ty: Type,
}

/// What `#[kube(..)]` says about the root kind (other keys are kube's business).
#[derive(Debug, Default)]
pub struct KubeAttr {
    /// The span of the first `#[kube]`.
    pub span: Option<Span>,
    /// `kind = ".."`.
    pub kind: Option<LitStr>,
    /// `root = ".."`: the generated struct's name when it differs from the kind.
    pub root: Option<LitStr>,
    /// `status = ".."`, as a path spanned on the literal.
    pub status: Option<Path>,
    /// `namespaced`.
    pub namespaced: bool,
}

/// One of the step or declaration attributes, in the order written.
#[derive(Debug)]
pub enum Item {
    /// `#[version(Type, ..)]`.
    Version {
        /// The attribute.
        span: Span,
        /// The version's type (required; its absence is reported).
        ty: Option<Type>,
        /// The options.
        opts: VersionOpts,
    },
    /// `#[child(..)]`.
    Child {
        /// The attribute.
        span: Span,
        /// The leading type, if given.
        ty: Option<Type>,
        /// The options.
        opts: ChildOpts,
        /// The keys written, readable or not: a key written with a bad value is reported as such, not as missing.
        written: Vec<String>,
    },
    /// `#[children(..)]`.
    Children {
        /// The attribute.
        span: Span,
        /// The leading type, if given.
        ty: Option<Type>,
        /// The options.
        opts: ChildrenOpts,
        /// The keys written, readable or not.
        written: Vec<String>,
    },
    /// `#[owns(A, B)]`.
    Owns(Vec<Type>),
    /// `#[tracks(A, B)]`.
    Tracks(Vec<Type>),
    /// `#[watches(..)]`.
    Watches {
        /// The attribute.
        span: Span,
        /// The leading type, if given.
        ty: Option<Type>,
        /// The options.
        opts: WatchesOpts,
        /// The keys written, readable or not.
        written: Vec<String>,
    },
    /// `#[sync(f)]`, with `reads`/`stores`.
    Sync(FnPath, Flow),
    /// `#[admission(..)]`.
    Admission {
        /// The attribute.
        span: Span,
        /// The options.
        opts: AdmissionOpts,
        /// The keys written, readable or not.
        written: Vec<String>,
    },
    /// `#[finalize(f)]`, with `reads`/`stores`.
    Finalize {
        /// The attribute.
        span: Span,
        /// The function.
        f: FnPath,
        /// The stash keys it reads and stores.
        flow: Flow,
    },
    /// `#[stash(..)]`.
    Stash(Vec<StashEntry>),
}

/// Everything the attributes say.
#[derive(Debug, Default)]
pub struct Parsed {
    /// `#[reconciler(..)]`, merged.
    pub container: ContainerOpts,
    /// The span of the first `#[reconciler]`.
    pub container_span: Option<Span>,
    /// `#[kube(..)]`, if any.
    pub kube: Option<KubeAttr>,
    /// Steps, declarations and stash keys, in the order written.
    pub items: Vec<Item>,
}
