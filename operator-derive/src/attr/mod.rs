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
use syn::spanned::Spanned;

use forms::{function, leading_type, list_items, parse_kube, stash, types};
pub use opts::{
    ChildOpts, ChildrenOpts, ContainerOpts, Item, KubeAttr, Parsed, StashEntry, WatchesOpts,
};
pub use values::FnPath;

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
