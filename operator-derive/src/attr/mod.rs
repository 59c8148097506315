//! Phase 1: the attributes as written, parsed with darling.
//!
//! Parsers never stop at the first problem: each error goes into the accumulator, spanned on the token at
//! fault and prefixed with the attribute's name, and parsing carries on with whatever could be read, so that
//! one build reports every mistake.

mod forms;
mod opts;
#[cfg(test)]
mod tests;
mod values;

use darling::ast::NestedMeta;
use darling::{Error, FromMeta};
use proc_macro2::Span;
use syn::Attribute;
use syn::ext::IdentExt;
use syn::spanned::Spanned;

use forms::{function, leading_type, list_items, parse_kube, stash, types};
pub use opts::{
    AdmissionOpts, ChildOpts, ChildrenOpts, ContainerOpts, Flow, Item, KubeAttr, Parsed,
    StashEntry, VersionOpts, WatchesOpts,
};
pub use values::{FieldName, FnPath, StatusField};

/// The accumulator every phase reports into.
pub type Errors = darling::error::Accumulator;

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
                    let (opts, written) =
                        lenient::<ChildOpts>("child", &items, ChildOpts::KEYS, errors);
                    parsed.items.push(Item::Child {
                        span,
                        ty,
                        opts,
                        written,
                    });
                }
            }
            "children" => {
                if let Some((ty, items)) = leading_type(attr, "children", &[], errors) {
                    let (opts, written) =
                        lenient::<ChildrenOpts>("children", &items, ChildrenOpts::KEYS, errors);
                    parsed.items.push(Item::Children {
                        span,
                        ty,
                        opts,
                        written,
                    });
                }
            }
            "version" => {
                if let Some((ty, items)) = leading_type(attr, "version", VersionOpts::KEYS, errors)
                {
                    if ty.is_none() {
                        errors.push(error_at(
                            span,
                            "version",
                            "name the version's type first, as in `#[version(v1::WebApp, deprecated)]`",
                        ));
                    }
                    let (opts, _) =
                        lenient::<VersionOpts>("version", &items, VersionOpts::KEYS, errors);
                    parsed.items.push(Item::Version { span, ty, opts });
                }
            }
            "watches" => {
                if let Some((ty, items)) = leading_type(attr, "watches", &[], errors) {
                    let (opts, written) =
                        lenient::<WatchesOpts>("watches", &items, WatchesOpts::KEYS, errors);
                    parsed.items.push(Item::Watches {
                        span,
                        ty,
                        opts,
                        written,
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
                if let Some((f, flow)) = function(attr, "sync", "resolve_image", errors) {
                    parsed.items.push(Item::Sync(f, flow));
                }
            }
            "finalize" => {
                if let Some((f, flow)) = function(attr, "finalize", "release_dns", errors) {
                    parsed.items.push(Item::Finalize { span, f, flow });
                }
            }
            "admission" => {
                if let Some(items) = list_items(attr, "admission", "validate = check_image", errors)
                {
                    let (opts, written) =
                        lenient::<AdmissionOpts>("admission", &items, AdmissionOpts::KEYS, errors);
                    parsed.items.push(Item::Admission {
                        span,
                        opts,
                        written,
                    });
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
    parsed.container =
        lenient::<ContainerOpts>("reconciler", &container_items, ContainerOpts::KEYS, errors).0;
    parsed
}

/// Reads the keys of one attribute with darling, keeping every key that can be read: an unknown key (reported
/// with the closest known one) or a key with a bad value is reported and left out, and the other keys still
/// take effect. So a typo in one key does not drop the whole attribute (which would bring follow-on errors,
/// e.g. `reconciler()` losing its `data` argument), and a missing required key is reported in the same build
/// as a typo beside it. Returns the options and the keys written (readable or not), so that a key written with
/// a bad value is not also reported as missing.
fn lenient<T: FromMeta + Default>(
    name: &str,
    items: &[NestedMeta],
    keys: &[&str],
    errors: &mut Errors,
) -> (T, Vec<String>) {
    let mut written = Vec::new();
    let mut known = Vec::new();
    for item in items {
        let key = key_path(item).and_then(|path| Some((path.get_ident()?.unraw(), path)));
        match key {
            Some((key, path)) if !keys.iter().any(|k| key == k) => {
                let key = key.to_string();
                // A typo of a required key is that key's one error, not also "missing".
                written.extend(closest(&key, keys));
                errors.push(within(
                    name,
                    Error::unknown_field_with_alts(&key, keys).with_span(path),
                ));
            }
            Some((key, _)) => {
                written.push(key.to_string());
                known.push(item.clone());
            }
            // Not a key (a literal, a path): darling says what is wrong with it.
            None => known.push(item.clone()),
        }
    }
    let opts = match T::from_list(&known) {
        Ok(opts) => opts,
        Err(e) => {
            errors.push(within(name, e));
            // Keep each key that reads on its own, the first of a duplicated one.
            let mut seen = Vec::new();
            let readable: Vec<NestedMeta> = known
                .into_iter()
                .filter(|item| T::from_list(std::slice::from_ref(item)).is_ok())
                .filter(|item| match key_path(item) {
                    Some(path) => {
                        let first = !seen.contains(path);
                        seen.push(path.clone());
                        first
                    }
                    None => true,
                })
                .collect();
            T::from_list(&readable).unwrap_or_default()
        }
    };
    (opts, written)
}

/// The key of `key = ..`, `key(..)` or `key`.
fn key_path(item: &NestedMeta) -> Option<&syn::Path> {
    match item {
        NestedMeta::Meta(meta) => Some(meta.path()),
        NestedMeta::NameValueInvalidExpr(nv) => Some(&nv.path),
        _ => None,
    }
}

/// The known key `key` is most likely a typo of, as darling suggests it ("Did you mean ..?").
fn closest(key: &str, keys: &[&str]) -> Option<String> {
    keys.iter()
        .map(|k| (strsim::jaro_winkler(key, k), *k))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, k)| k.to_string())
}
