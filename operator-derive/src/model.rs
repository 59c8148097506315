//! Phase 2: the reconciler the attributes describe, keeping the user's tokens (and so their spans).

use darling::util::SpannedValue;
use proc_macro2::Span;
use quote::ToTokens;
use syn::{DeriveInput, Ident, Path, Type, Visibility};

use crate::attr::{
    AdmissionOpts, ContainerOpts, FieldName, Flow, FnPath, Item, KubeAttr, Parsed, StashEntry,
    StatusField, VersionOpts,
};

/// The whole reconciler.
pub struct Model<'a> {
    /// The type the derive is on.
    pub input: &'a DeriveInput,
    /// The runtime crate's path (`::kubewright` unless `crate = ..`).
    pub krate: Path,
    /// The root kind, when it can be determined.
    pub root: Option<Root>,
    /// `#[reconciler(..)]`.
    pub container: ContainerOpts,
    /// `#[kube(..)]`.
    pub kube: Option<KubeAttr>,
    /// The steps, in declaration order.
    pub steps: Vec<Step>,
    /// The stash keys each step declares it reads and stores, by the step's position in `steps`.
    pub flows: Vec<Flow>,
    /// Kinds owned, tracked or watched outside of child steps.
    pub declarations: Vec<Declaration>,
    /// Typed stash keys.
    pub stash: Vec<StashEntry>,
    /// `#[admission(..)]`, in order, with the keys written (readable or not).
    pub admission: Vec<(Span, AdmissionOpts, Vec<String>)>,
    /// `#[version(..)]`, in order (the type is `None` when it was left out, which is reported).
    pub versions: Vec<(Span, Option<Type>, VersionOpts)>,
}

/// The root kind: the type `reconciler()` and the stash keys are generated on.
pub struct Root {
    /// Its name, spanned on where it was found (`kind = ".."` or the derive input).
    pub ident: Ident,
    /// The visibility of the generated items: the derive input's.
    pub vis: Visibility,
    /// The status type named in `#[kube(status = "..")]`.
    pub status: Option<Path>,
    /// `#[reconciler(parent = K)]`: the parent kind, whose status is not written; `ident` is then a marker.
    pub parent: Option<Type>,
}

impl Root {
    /// The parent type of the reconciler, spanned on `span` (where errors about a step's types are
    /// reported): the root kind itself, or `Foreign<K>` for `#[reconciler(parent = K)]`.
    pub fn parent_at(&self, krate: &Path, span: proc_macro2::Span) -> proc_macro2::TokenStream {
        match &self.parent {
            None => Ident::new(&self.ident.to_string(), span).into_token_stream(),
            Some(ty) => {
                let krate: proc_macro2::TokenStream = krate
                    .to_token_stream()
                    .into_iter()
                    .map(|mut t| {
                        t.set_span(span);
                        t
                    })
                    .collect();
                quote::quote_spanned!(span=> #krate::Foreign<#ty>)
            }
        }
    }
}

/// A step of the pass.
pub enum Step {
    /// `#[child(..)]`.
    Child(Child),
    /// `#[children(..)]`.
    Children(Children),
    /// `#[sync(f)]`.
    Sync(FnPath),
    /// `#[finalize(f)]`.
    Finalize(Span, FnPath),
}

/// `#[child(..)]`.
pub struct Child {
    /// The attribute.
    pub span: Span,
    /// The keys written, readable or not (a key written with a bad value is not missing).
    pub written: Vec<String>,
    /// The child type, if given (otherwise inferred from `desired`).
    pub ty: Option<Type>,
    /// The desired-state function.
    pub desired: Option<FnPath>,
    /// The status reflection.
    pub reflect: Option<FnPath>,
    /// The status field that holds the child's name.
    pub reflect_name: Option<StatusField>,
    /// `"apply"`, `"update"` or `"create"`.
    pub strategy: Option<SpannedValue<String>>,
    /// Forced server-side apply.
    pub force: Option<SpannedValue<bool>>,
    /// The child's field manager.
    pub field_manager: Option<SpannedValue<String>>,
    /// What logs show of the child.
    pub sanitize: Option<FnPath>,
    /// Use `generateName`.
    pub generate_name: bool,
    /// The condition type.
    pub condition: Option<SpannedValue<String>>,
    /// The readiness function.
    pub ready: Option<FnPath>,
}

/// `#[children(..)]`.
pub struct Children {
    /// The attribute.
    pub span: Span,
    /// The keys written, readable or not (a key written with a bad value is not missing).
    pub written: Vec<String>,
    /// The child type, if given.
    pub ty: Option<Type>,
    /// The desired-state function.
    pub desired: Option<FnPath>,
    /// The id function.
    pub id: Option<FnPath>,
    /// The status reflection.
    pub reflect: Option<FnPath>,
    /// `"apply"` or `"create"`.
    pub strategy: Option<SpannedValue<String>>,
    /// Forced server-side apply.
    pub force: Option<SpannedValue<bool>>,
    /// The retention rule.
    pub retain: Option<FnPath>,
    /// The condition type.
    pub condition: Option<SpannedValue<String>>,
    /// The readiness function.
    pub ready: Option<FnPath>,
}

/// A kind the controller watches outside of child steps.
pub enum Declaration {
    /// `#[owns(T)]`.
    Owns(Type),
    /// `#[tracks(T)]`.
    Tracks(Type),
    /// `#[watches(T, map = f)]`.
    Watches {
        /// The attribute.
        span: Span,
        /// The keys written, readable or not.
        written: Vec<String>,
        /// The watched type, if given (otherwise inferred from `map`).
        ty: Option<Type>,
        /// The mapper.
        map: Option<FnPath>,
        /// The spec field naming the watched object.
        by: Option<FieldName>,
    },
}

impl Child {
    /// Whether `key` was written, readable or not.
    pub fn written(&self, key: &str) -> bool {
        self.written.iter().any(|k| k == key)
    }
}

impl Children {
    /// Whether `key` was written, readable or not.
    pub fn written(&self, key: &str) -> bool {
        self.written.iter().any(|k| k == key)
    }
}

impl<'a> Model<'a> {
    /// Builds the model; never fails (rules are checked by `valid`).
    pub fn build(input: &'a DeriveInput, parsed: Parsed) -> Self {
        let Parsed {
            container,
            kube,
            items,
            ..
        } = parsed;
        let krate = container
            .krate
            .as_ref()
            .map(|k| k.0.clone())
            .unwrap_or_else(|| syn::parse_quote!(::kubewright));
        let mut root = root(input, kube.as_ref());
        if kube.is_none()
            && let (Some(root), Some(parent)) = (root.as_mut(), container.parent.as_ref())
        {
            root.parent = Some(parent.0.clone());
        }
        let mut steps = Vec::new();
        let mut flows = Vec::new();
        let mut declarations = Vec::new();
        let mut stash = Vec::new();
        let mut admission = Vec::new();
        let mut versions = Vec::new();
        for item in items {
            match item {
                Item::Version { span, ty, opts } => versions.push((span, ty, opts)),
                Item::Child {
                    span,
                    ty,
                    opts,
                    written,
                } => {
                    flows.push(Flow {
                        reads: opts.reads.clone().map(|k| k.0).unwrap_or_default(),
                        stores: opts.stores.clone().map(|k| k.0).unwrap_or_default(),
                    });
                    steps.push(Step::Child(Child {
                        span,
                        written,
                        ty,
                        desired: opts.desired,
                        reflect: opts.reflect,
                        reflect_name: opts.reflect_name,
                        strategy: opts.strategy,
                        force: opts.force,
                        field_manager: opts.field_manager,
                        sanitize: opts.sanitize,
                        generate_name: opts.generate_name.is_present(),
                        condition: opts.condition,
                        ready: opts.ready,
                    }))
                }
                Item::Children {
                    span,
                    ty,
                    opts,
                    written,
                } => {
                    flows.push(Flow {
                        reads: opts.reads.clone().map(|k| k.0).unwrap_or_default(),
                        stores: opts.stores.clone().map(|k| k.0).unwrap_or_default(),
                    });
                    steps.push(Step::Children(Children {
                        span,
                        written,
                        ty,
                        desired: opts.desired,
                        id: opts.id,
                        reflect: opts.reflect,
                        strategy: opts.strategy,
                        force: opts.force,
                        retain: opts.retain,
                        condition: opts.condition,
                        ready: opts.ready,
                    }))
                }
                Item::Sync(f, flow) => {
                    flows.push(flow);
                    steps.push(Step::Sync(f));
                }
                Item::Finalize { span, f, flow } => {
                    flows.push(flow);
                    steps.push(Step::Finalize(span, f));
                }
                Item::Owns(types) => declarations.extend(types.into_iter().map(Declaration::Owns)),
                Item::Tracks(types) => {
                    declarations.extend(types.into_iter().map(Declaration::Tracks))
                }
                Item::Watches {
                    span,
                    ty,
                    opts,
                    written,
                } => declarations.push(Declaration::Watches {
                    span,
                    written,
                    ty,
                    map: opts.map,
                    by: opts.by,
                }),
                Item::Stash(entries) => stash.extend(entries),
                Item::Admission {
                    span,
                    opts,
                    written,
                } => admission.push((span, opts, written)),
            }
        }
        Model {
            input,
            krate,
            root,
            container,
            kube,
            steps,
            flows,
            declarations,
            stash,
            admission,
            versions,
        }
    }

    /// Whether the root kind comes from `#[kube(..)]` (the derive is on a spec struct).
    pub fn root_is_kubes(&self) -> bool {
        self.kube.is_some() && !self.container.root.is_present()
    }
}

/// The root kind: the struct kube generates (`root = ".."`, else the kind), or the derive input itself when
/// there is no `#[kube]`.
fn root(input: &DeriveInput, kube: Option<&KubeAttr>) -> Option<Root> {
    let vis = input.vis.clone();
    match kube {
        // With `#[kube]`, the root is kube's struct, even if `root` also (wrongly) says otherwise.
        Some(kube) => {
            let name = kube.root.as_ref().or(kube.kind.as_ref())?;
            // A kind that is not an identifier is kube's error to report.
            let ident = syn::parse_str::<Ident>(&name.value()).ok()?;
            Some(Root {
                ident: Ident::new(&ident.to_string(), name.span()),
                vis,
                status: kube.status.clone(),
                parent: None,
            })
        }
        _ => Some(Root {
            ident: input.ident.clone(),
            vis,
            status: None,
            parent: None,
        }),
    }
}
