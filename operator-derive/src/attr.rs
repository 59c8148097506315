//! Phase 1: the attributes as written, parsed with darling.
//!
//! Parsers never stop at the first problem: each error goes into the accumulator, spanned on the token at
//! fault and prefixed with the attribute's name, and parsing carries on with whatever could be read, so that
//! one build reports every mistake.

use darling::ast::NestedMeta;
use darling::util::{Flag, SpannedValue};
use darling::{Error, FromMeta};
use proc_macro2::{Span, TokenStream};
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Attribute, Expr, Ident, Lit, LitStr, Meta, Path, Token, Type};

/// The accumulator every phase reports into.
pub type Errors = darling::error::Accumulator;

/// A path to a function, as in `desired = desired_deployment`. A string, a closure or any other expression
/// is an error that says so.
#[derive(Debug, Clone)]
pub struct FnPath(pub Path);

impl FnPath {
    /// The path as written (its tokens carry the user's spans).
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// The span of the path, for diagnostics and `quote_spanned!`.
    pub fn span(&self) -> Span {
        self.0.span()
    }

    /// The function's name: the last segment of the path.
    pub fn name(&self) -> String {
        self.0
            .segments
            .last()
            .map(|s| s.ident.unraw().to_string())
            .unwrap_or_default()
    }
}

impl FromMeta for FnPath {
    fn from_expr(expr: &Expr) -> darling::Result<Self> {
        match expr {
            Expr::Path(p) if p.qself.is_none() && p.attrs.is_empty() => Ok(FnPath(p.path.clone())),
            Expr::Group(g) => Self::from_expr(&g.expr),
            Expr::Lit(syn::ExprLit {
                lit: Lit::Str(s), ..
            }) => Err(Error::custom(format!(
                "expected a path to a function, found a string: remove the quotes (`{0}`, not `\"{0}\"`)",
                s.value()
            ))
            .with_span(s)),
            Expr::Closure(_) => Err(Error::custom(
                "expected a path to a function, found a closure: define a function and name it here",
            )
            .with_span(expr)),
            _ => Err(Error::custom(
                "expected a path to a function, e.g. `desired_deployment` or `crate::desired::deployment`",
            )
            .with_span(expr)),
        }
    }

    fn from_word() -> darling::Result<Self> {
        Err(Error::custom(
            "expected `key = function`, e.g. `desired = desired_deployment`",
        ))
    }
}

/// A type given as a value, as in `data = Settings` (or `data = "Settings"`).
#[derive(Debug, Clone)]
pub struct TypeArg(pub Type);

impl FromMeta for TypeArg {
    fn from_expr(expr: &Expr) -> darling::Result<Self> {
        match expr {
            Expr::Group(g) => Self::from_expr(&g.expr),
            Expr::Lit(syn::ExprLit {
                lit: Lit::Str(s), ..
            }) => s.parse::<Type>().map(TypeArg).map_err(|e| {
                Error::custom(format!("expected a type in this string: {e}")).with_span(s)
            }),
            other => syn::parse2::<Type>(quote::ToTokens::into_token_stream(other))
                .map(TypeArg)
                .map_err(|_| Error::custom("expected a type").with_span(other)),
        }
    }

    fn from_invalid_expr(value: &darling::ast::MetaNameValueInvalidExpr) -> darling::Result<Self> {
        syn::parse2::<Type>(value.value.clone())
            .map(TypeArg)
            .map_err(|_| Error::custom("expected a type").with_span(&value.value))
    }
}

/// A crate path, as in `crate = "::operator"`.
#[derive(Debug, Clone)]
pub struct CratePath(pub Path);

impl FromMeta for CratePath {
    fn from_expr(expr: &Expr) -> darling::Result<Self> {
        match expr {
            Expr::Group(g) => Self::from_expr(&g.expr),
            Expr::Path(p) if p.qself.is_none() => Ok(CratePath(p.path.clone())),
            Expr::Lit(syn::ExprLit {
                lit: Lit::Str(s), ..
            }) => s.parse::<Path>().map(CratePath).map_err(|_| {
                Error::custom(format!(
                    "`{}` is not a path: write the path the runtime crate is reachable at, e.g. `crate = \"::operator\"`",
                    s.value()
                ))
                .with_span(s)
            }),
            other => Err(Error::custom(
                "expected the path of the runtime crate, e.g. `crate = \"::operator\"`",
            )
            .with_span(other)),
        }
    }
}

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
    /// The runtime crate's path.
    #[darling(rename = "crate")]
    pub krate: Option<CratePath>,
}

/// `#[child(..)]` after its optional leading type.
#[derive(Debug, Default, FromMeta)]
pub struct ChildOpts {
    /// `fn(&Parent, &mut Context) -> Result<Option<Child>>`.
    pub desired: Option<FnPath>,
    /// `fn(&mut Status, &ChildOutcome<Child>)`.
    pub reflect: Option<FnPath>,
    /// `"apply"` (default) or `"update"`.
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
    /// The condition type this set reports.
    pub condition: Option<SpannedValue<String>>,
}

/// `#[watches(..)]` after its optional leading type.
#[derive(Debug, Default, FromMeta)]
pub struct WatchesOpts {
    /// `fn(Arc<Watched>) -> Vec<ObjectRef<Parent>>`.
    pub map: Option<FnPath>,
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
    /// `#[child(..)]`.
    Child {
        /// The attribute.
        span: Span,
        /// The leading type, if given.
        ty: Option<Type>,
        /// The options.
        opts: ChildOpts,
        /// The options could not be read (the error is reported); do not report missing keys.
        broken: bool,
    },
    /// `#[children(..)]`.
    Children {
        /// The attribute.
        span: Span,
        /// The leading type, if given.
        ty: Option<Type>,
        /// The options.
        opts: ChildrenOpts,
        /// The options could not be read.
        broken: bool,
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
        /// The options could not be read.
        broken: bool,
    },
    /// `#[sync(f)]`.
    Sync(FnPath),
    /// `#[finalize(f)]`.
    Finalize {
        /// The attribute.
        span: Span,
        /// The function.
        f: FnPath,
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

/// Prefixes every error with the attribute (and key) it is about, keeping its span. darling appends the key
/// as `.. at key`; it is moved to the front: `#[child(desired = ..)]: expected a path ..`.
pub fn within(attr: &str, error: Error) -> Error {
    let errors: Vec<Error> = error
        .flatten()
        .into_iter()
        .map(|e| {
            let span = e.span();
            let message = e.to_string();
            let message = match message.rsplit_once(" at ") {
                Some((text, key))
                    if !key.is_empty()
                        && key.chars().all(|c| c.is_ascii_lowercase() || c == '_') =>
                {
                    format!("`#[{attr}({key} = ..)]`: {text}")
                }
                _ => format!("`#[{attr}]`: {message}"),
            };
            Error::from(syn::Error::new(span, message))
        })
        .collect();
    Error::multiple(errors)
}

/// A whole number that fits in `T`, as in `concurrency = 4`.
#[derive(Debug, Clone, Copy)]
pub struct Number<T>(pub T);

impl<T: std::str::FromStr + num::Max> FromMeta for Number<T> {
    fn from_expr(expr: &Expr) -> darling::Result<Self> {
        let invalid = || {
            Error::custom(format!(
                "expected a whole number from 0 to {}, without quotes",
                T::MAX
            ))
            .with_span(expr)
        };
        match expr {
            Expr::Group(g) => Self::from_expr(&g.expr),
            Expr::Lit(syn::ExprLit {
                lit: Lit::Int(i), ..
            }) => i
                .base10_digits()
                .parse::<T>()
                .map(Number)
                .map_err(|_| invalid()),
            _ => Err(invalid()),
        }
    }
}

/// The largest values of the number types [`Number`] is used with.
pub mod num {
    /// The largest value, for messages.
    pub trait Max {
        /// The largest value.
        const MAX: u64;
    }
    impl Max for u16 {
        const MAX: u64 = u16::MAX as u64;
    }
    impl Max for u64 {
        const MAX: u64 = u64::MAX;
    }
}

/// An error spanned on `span`, about attribute `attr`.
pub fn error_at(span: Span, attr: &str, message: impl std::fmt::Display) -> Error {
    Error::from(syn::Error::new(span, format!("`#[{attr}]`: {message}")))
}

/// Reads every attribute the derive understands, in order.
pub fn parse(attrs: &[Attribute], errors: &mut Errors) -> Parsed {
    let mut parsed = Parsed::default();
    let mut container_items: Vec<NestedMeta> = Vec::new();
    for attr in attrs {
        let Some(name) = attr.path().get_ident().map(|i| i.to_string()) else {
            continue;
        };
        let span = attr.path().span();
        match name.as_str() {
            "kube" => parse_kube(attr, parsed.kube.get_or_insert_with(Default::default)),
            "reconciler" => {
                parsed.container_span.get_or_insert(span);
                if let Some(items) = list_items(attr, "reconciler", "name = \"..\"", errors) {
                    container_items.extend(items);
                }
            }
            "child" => {
                if let Some((ty, items)) = leading_type(attr, "child", &["generate_name"], errors) {
                    let opts =
                        errors.handle(ChildOpts::from_list(&items).map_err(|e| within("child", e)));
                    let broken = opts.is_none();
                    let opts = opts.unwrap_or_default();
                    parsed.items.push(Item::Child {
                        span,
                        ty,
                        opts,
                        broken,
                    });
                }
            }
            "children" => {
                if let Some((ty, items)) = leading_type(attr, "children", &[], errors) {
                    let opts = errors
                        .handle(ChildrenOpts::from_list(&items).map_err(|e| within("children", e)));
                    let broken = opts.is_none();
                    let opts = opts.unwrap_or_default();
                    parsed.items.push(Item::Children {
                        span,
                        ty,
                        opts,
                        broken,
                    });
                }
            }
            "watches" => {
                if let Some((ty, items)) = leading_type(attr, "watches", &[], errors) {
                    let opts = errors
                        .handle(WatchesOpts::from_list(&items).map_err(|e| within("watches", e)));
                    let broken = opts.is_none();
                    let opts = opts.unwrap_or_default();
                    parsed.items.push(Item::Watches {
                        span,
                        ty,
                        opts,
                        broken,
                    });
                }
            }
            "owns" => {
                if let Some(types) = types(attr, "owns", errors) {
                    parsed.items.push(Item::Owns(types));
                }
            }
            "tracks" => {
                if let Some(types) = types(attr, "tracks", errors) {
                    parsed.items.push(Item::Tracks(types));
                }
            }
            "sync" => {
                if let Some(f) = function(attr, "sync", "resolve_image", errors) {
                    parsed.items.push(Item::Sync(f));
                }
            }
            "finalize" => {
                if let Some(f) = function(attr, "finalize", "release_dns", errors) {
                    parsed.items.push(Item::Finalize { span, f });
                }
            }
            "stash" => {
                if let Some(entries) = stash(attr, errors) {
                    parsed.items.push(Item::Stash(entries));
                }
            }
            _ => {}
        }
    }
    parsed.container = errors
        .handle(ContainerOpts::from_list(&container_items).map_err(|e| within("reconciler", e)))
        .unwrap_or_default();
    parsed
}

/// The tokens inside `#[name(..)]`, or an error saying the attribute takes a list.
fn list_tokens(
    attr: &Attribute,
    name: &str,
    example: &str,
    errors: &mut Errors,
) -> Option<TokenStream> {
    match &attr.meta {
        Meta::List(list) => Some(list.tokens.clone()),
        other => {
            errors.push(error_at(
                other.span(),
                name,
                format!("expected a list, as in `#[{name}({example})]`"),
            ));
            None
        }
    }
}

fn list_items(
    attr: &Attribute,
    name: &str,
    example: &str,
    errors: &mut Errors,
) -> Option<Vec<NestedMeta>> {
    let tokens = list_tokens(attr, name, example, errors)?;
    match NestedMeta::parse_meta_list(tokens) {
        Ok(items) => Some(items),
        Err(e) => {
            errors.push(within(name, e.into()));
            None
        }
    }
}

/// Whether the input starts with a key (`key = ..`, `key(..)`, or one of the flag words) rather than a type.
fn starts_with_key(input: ParseStream, flags: &[&str]) -> bool {
    if input.is_empty() {
        return true;
    }
    let fork = input.fork();
    let Ok(ident) = fork.call(Ident::parse_any) else {
        return false;
    };
    if fork.peek(Token![=]) && !fork.peek(Token![==]) || fork.peek(syn::token::Paren) {
        return true;
    }
    (fork.is_empty() || fork.peek(Token![,])) && flags.iter().any(|f| ident == f)
}

/// Splits `#[name(Type, key = value, ..)]` into the optional leading type and the key-value items; reports a
/// type written after the keys.
fn leading_type(
    attr: &Attribute,
    name: &str,
    flags: &[&str],
    errors: &mut Errors,
) -> Option<(Option<Type>, Vec<NestedMeta>)> {
    let tokens = list_tokens(attr, name, "desired = ..", errors)?;
    let split = |input: ParseStream| -> syn::Result<(Option<Type>, TokenStream)> {
        let ty = if starts_with_key(input, flags) {
            None
        } else if input.peek(LitStr) {
            let s: LitStr = input.parse()?;
            return Err(syn::Error::new(
                s.span(),
                format!(
                    "expected a type, found a string: remove the quotes (`{0}`, not `\"{0}\"`)",
                    s.value()
                ),
            ));
        } else {
            let ty: Type = input.parse()?;
            if !input.is_empty() {
                input.parse::<Token![,]>()?;
            }
            Some(ty)
        };
        Ok((ty, input.parse()?))
    };
    let (ty, rest) = match split.parse2(tokens) {
        Ok(v) => v,
        Err(e) => {
            errors.push(within(name, e.into()));
            return None;
        }
    };
    let items = match NestedMeta::parse_meta_list(rest) {
        Ok(items) => items,
        Err(e) => {
            errors.push(within(name, e.into()));
            return None;
        }
    };
    let mut kept = Vec::with_capacity(items.len());
    for item in items {
        match &item {
            // A bare path that is not a flag word of this attribute and does not look like a misspelt key:
            // most likely the type, written after the keys.
            NestedMeta::Meta(Meta::Path(p)) if looks_like_type(p) => errors.push(error_at(
                p.span(),
                name,
                format!(
                    "the type goes first, before the keys: `#[{name}({}, ..)]`",
                    path_text(p)
                ),
            )),
            _ => kept.push(item),
        }
    }
    Some((ty, kept))
}

fn looks_like_type(p: &Path) -> bool {
    p.segments.len() > 1
        || p.segments.first().is_some_and(|s| {
            s.ident
                .to_string()
                .starts_with(|c: char| c.is_ascii_uppercase())
        })
}

fn path_text(p: &Path) -> String {
    p.segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect::<Vec<_>>()
        .join("::")
}

/// `#[owns(A, B)]`: one or more types.
fn types(attr: &Attribute, name: &str, errors: &mut Errors) -> Option<Vec<Type>> {
    let tokens = list_tokens(attr, name, "Secret", errors)?;
    let parse = |input: ParseStream| -> syn::Result<Vec<Type>> {
        let mut out = Vec::new();
        while !input.is_empty() {
            if input.peek(LitStr) {
                let s: LitStr = input.parse()?;
                return Err(syn::Error::new(
                    s.span(),
                    format!(
                        "expected a type, found a string: remove the quotes (`{0}`, not `\"{0}\"`)",
                        s.value()
                    ),
                ));
            }
            out.push(input.parse::<Type>()?);
            if !input.is_empty() {
                input.parse::<Token![,]>()?;
            }
        }
        Ok(out)
    };
    match parse.parse2(tokens) {
        Ok(types) if types.is_empty() => {
            errors.push(error_at(
                attr.path().span(),
                name,
                format!("name at least one kind, as in `#[{name}(Secret)]`"),
            ));
            None
        }
        Ok(types) => Some(types),
        Err(e) => {
            errors.push(within(name, e.into()));
            None
        }
    }
}

/// `#[sync(f)]`: exactly one function.
fn function(attr: &Attribute, name: &str, example: &str, errors: &mut Errors) -> Option<FnPath> {
    let tokens = list_tokens(attr, name, example, errors)?;
    let exprs = match Punctuated::<Expr, Token![,]>::parse_terminated.parse2(tokens) {
        Ok(exprs) => exprs,
        Err(e) => {
            errors.push(within(name, e.into()));
            return None;
        }
    };
    let mut exprs = exprs.into_iter();
    let Some(first) = exprs.next() else {
        errors.push(error_at(
            attr.path().span(),
            name,
            format!("name the function to run, as in `#[{name}({example})]`"),
        ));
        return None;
    };
    if let Some(extra) = exprs.next() {
        errors.push(error_at(
            extra.span(),
            name,
            format!(
                "one function per `#[{name}]`: write one attribute per step, in the order they run"
            ),
        ));
    }
    errors.handle(FnPath::from_expr(&first).map_err(|e| within(name, e)))
}

/// `#[stash(name: Type, ..)]`.
fn stash(attr: &Attribute, errors: &mut Errors) -> Option<Vec<StashEntry>> {
    let tokens = list_tokens(attr, "stash", "image: String", errors)?;
    let parse = |input: ParseStream| -> syn::Result<Vec<StashEntry>> {
        let mut out = Vec::new();
        while !input.is_empty() {
            let name: Ident = input.call(Ident::parse_any).map_err(|e| {
                syn::Error::new(
                    e.span(),
                    "expected `name: Type`, as in `#[stash(image: String)]`",
                )
            })?;
            input.parse::<Token![:]>().map_err(|e| {
                // At the end of the list, syn's span is the whole derive: point at the name instead.
                let span = if input.is_empty() {
                    name.span()
                } else {
                    e.span()
                };
                syn::Error::new(
                    span,
                    format!("expected `: Type` after `{name}`, as in `#[stash({name}: String)]`"),
                )
            })?;
            let ty: Type = input.parse()?;
            out.push(StashEntry { name, ty });
            if !input.is_empty() {
                input.parse::<Token![,]>()?;
            }
        }
        Ok(out)
    };
    match parse.parse2(tokens) {
        Ok(entries) => Some(entries),
        Err(e) => {
            errors.push(within("stash", e.into()));
            None
        }
    }
}

/// Reads the keys of `#[kube(..)]` the derive needs. Anything it cannot read is left to kube's own derive,
/// which reports it.
fn parse_kube(attr: &Attribute, kube: &mut KubeAttr) {
    kube.span.get_or_insert(attr.path().span());
    let Ok(metas) = attr.parse_args_with(Punctuated::<Meta, Token![,]>::parse_terminated) else {
        return;
    };
    for meta in metas {
        let Some(key) = meta.path().get_ident().map(|i| i.to_string()) else {
            continue;
        };
        match (key.as_str(), &meta) {
            ("namespaced", Meta::Path(_)) => kube.namespaced = true,
            ("namespaced", Meta::NameValue(nv)) => {
                if let Expr::Lit(syn::ExprLit {
                    lit: Lit::Bool(b), ..
                }) = &nv.value
                {
                    kube.namespaced = b.value;
                }
            }
            ("kind", Meta::NameValue(nv)) => kube.kind = string(&nv.value),
            ("root", Meta::NameValue(nv)) => kube.root = string(&nv.value),
            ("status", Meta::NameValue(nv)) => {
                kube.status = match &nv.value {
                    Expr::Lit(syn::ExprLit {
                        lit: Lit::Str(s), ..
                    }) => s.parse::<Path>().ok().map(|p| respan(p, s.span())),
                    Expr::Path(p) => Some(p.path.clone()),
                    _ => None,
                }
            }
            _ => {}
        }
    }
}

fn string(expr: &Expr) -> Option<LitStr> {
    match expr {
        Expr::Lit(syn::ExprLit {
            lit: Lit::Str(s), ..
        }) => Some(s.clone()),
        _ => None,
    }
}

/// A path parsed from a string literal, with every token spanned on the literal.
fn respan(path: Path, span: Span) -> Path {
    let tokens: TokenStream = quote::ToTokens::into_token_stream(path)
        .into_iter()
        .map(|mut t| {
            t.set_span(span);
            t
        })
        .collect();
    syn::parse2(tokens).unwrap_or_else(|_| syn::Path::from(Ident::new("__invalid", span)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    fn parse_attrs(tokens: TokenStream) -> (Parsed, Vec<String>) {
        let input: syn::DeriveInput =
            syn::parse2(quote! { #tokens struct S; }).expect("test input");
        let mut errors = Error::accumulator();
        let parsed = parse(&input.attrs, &mut errors);
        let messages = errors
            .into_inner()
            .into_iter()
            .flat_map(|e| e.flatten())
            .map(|e| e.to_string())
            .collect();
        (parsed, messages)
    }

    #[test]
    fn leading_types_and_keys() {
        let (parsed, errors) = parse_attrs(quote! {
            #[child(Deployment, desired = d, generate_name)]
            #[child(generate_name, desired = d)]
            #[children(desired = ds, id = id)]
            #[watches(ConfigMap, map = m)]
        });
        assert!(errors.is_empty(), "{errors:?}");
        let kinds: Vec<(bool, bool)> = parsed
            .items
            .iter()
            .map(|i| match i {
                Item::Child { ty, opts, .. } => (ty.is_some(), opts.generate_name.is_present()),
                Item::Children { ty, .. } | Item::Watches { ty, .. } => (ty.is_some(), false),
                _ => (false, false),
            })
            .collect();
        assert_eq!(
            kinds,
            [(true, true), (false, true), (false, false), (true, false)]
        );
    }

    #[test]
    fn errors_are_all_collected_and_name_the_attribute() {
        let (_, errors) = parse_attrs(quote! {
            #[child(desird = d)]
            #[child(desired = "d")]
            #[sync(a, b)]
            #[owns("Secret")]
            #[reconciler(concurrency = "many", nme = "x")]
        });
        assert_eq!(errors.len(), 6, "{errors:#?}");
        assert!(
            errors[0].starts_with("`#[child]`: Unknown field: `desird`. Did you mean `desired`?"),
            "{}",
            errors[0]
        );
        assert!(
            errors[1].contains("found a string: remove the quotes (`d`, not `\"d\"`)"),
            "{}",
            errors[1]
        );
        assert!(
            errors[2].contains("one function per `#[sync]`"),
            "{}",
            errors[2]
        );
        assert!(
            errors[3].starts_with("`#[owns]`: expected a type, found a string"),
            "{}",
            errors[3]
        );
        assert!(
            errors[4..].iter().all(|e| e.starts_with("`#[reconciler")),
            "{errors:?}"
        );
    }

    #[test]
    fn kube_keys_are_read_leniently() {
        let (parsed, errors) = parse_attrs(quote! {
            #[kube(group = "g", version = "v1", kind = "WebApp", namespaced, status = "WebAppStatus",
                   printcolumn = r#"{"name":"x"}"#, validation = Rule::new("self.x > 0"))]
        });
        assert!(errors.is_empty());
        let kube = parsed.kube.expect("kube");
        assert_eq!(kube.kind.map(|k| k.value()).as_deref(), Some("WebApp"));
        assert!(kube.namespaced);
        assert!(kube.status.is_some());
    }

    #[test]
    fn stash_entries() {
        let (parsed, errors) = parse_attrs(quote! { #[stash(image: String, ports: Vec<u16>)] });
        assert!(errors.is_empty());
        assert!(matches!(&parsed.items[0], Item::Stash(e) if e.len() == 2));
        let (_, errors) = parse_attrs(quote! { #[stash(image String)] });
        assert_eq!(errors.len(), 1);
        assert!(
            errors[0].contains("expected `: Type` after `image`"),
            "{}",
            errors[0]
        );
    }
}
