//! The forms that are not key = value: type lists (`#[owns(Deployment)]`), a leading child type, a lone
//! function path, stash entries (`#[stash(name: Type)]`) and kube's own attribute.

use darling::FromMeta;
use darling::ast::NestedMeta;
use proc_macro2::{Span, TokenStream};
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Attribute, Expr, Ident, Lit, LitStr, Meta, Path, Token, Type};

use super::opts::{Flow, KubeAttr, StashEntry};
use super::values::{FnPath, KeyList};
use super::{Errors, error_at, within};

/// The tokens inside `#[name(..)]`, or an error saying the attribute takes a list.
pub(super) fn list_tokens(
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

pub(super) fn list_items(
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
pub(super) fn starts_with_key(input: ParseStream, flags: &[&str]) -> bool {
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
pub(super) fn leading_type(
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

pub(super) fn looks_like_type(p: &Path) -> bool {
    p.segments.len() > 1
        || p.segments.first().is_some_and(|s| {
            s.ident
                .to_string()
                .starts_with(|c: char| c.is_ascii_uppercase())
        })
}

pub(super) fn path_text(p: &Path) -> String {
    p.segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect::<Vec<_>>()
        .join("::")
}

/// `#[owns(A, B)]`: one or more types.
pub(super) fn types(attr: &Attribute, name: &str, errors: &mut Errors) -> Option<Vec<Type>> {
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
pub(super) fn function(
    attr: &Attribute,
    name: &str,
    example: &str,
    errors: &mut Errors,
) -> Option<(FnPath, Flow)> {
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
    let mut flow = Flow::default();
    for extra in exprs {
        // `reads = [..]` and `stores = [..]` declare the stash keys the step reads and stores.
        if let Expr::Assign(assign) = &extra
            && let Expr::Path(key) = assign.left.as_ref()
            && let Some(key) = key.path.get_ident()
            && (key == "reads" || key == "stores")
        {
            if let Some(keys) =
                errors.handle(KeyList::from_expr(&assign.right).map_err(|e| within(name, e)))
            {
                if key == "reads" {
                    flow.reads.extend(keys.0);
                } else {
                    flow.stores.extend(keys.0);
                }
            }
            continue;
        }
        errors.push(error_at(
            extra.span(),
            name,
            format!(
                "one function per `#[{name}]`, then only `reads = [..]` and `stores = [..]` (stash keys): write one attribute per step, in the order they run"
            ),
        ));
    }
    let f = errors.handle(FnPath::from_expr(&first).map_err(|e| within(name, e)))?;
    Some((f, flow))
}

/// `#[stash(name: Type, ..)]`.
pub(super) fn stash(attr: &Attribute, errors: &mut Errors) -> Option<Vec<StashEntry>> {
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
pub(super) fn parse_kube(attr: &Attribute, kube: &mut KubeAttr) {
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

pub(super) fn string(expr: &Expr) -> Option<LitStr> {
    match expr {
        Expr::Lit(syn::ExprLit {
            lit: Lit::Str(s), ..
        }) => Some(s.clone()),
        _ => None,
    }
}

/// A path parsed from a string literal, with every token spanned on the literal.
pub(super) fn respan(path: Path, span: Span) -> Path {
    let tokens: TokenStream = quote::ToTokens::into_token_stream(path)
        .into_iter()
        .map(|mut t| {
            t.set_span(span);
            t
        })
        .collect();
    syn::parse2(tokens).unwrap_or_else(|_| syn::Path::from(Ident::new("__invalid", span)))
}
