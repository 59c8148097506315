//! `#[derive(Reconciler)]` for the `kubewright` runtime; use it through `kubewright::Reconciler`.
//!
//! The derive turns attributes into a handful of calls to the runtime's public builder API (through the
//! hidden `kubewright::__private` helpers, which spell out generic parameters so that the compiler checks the
//! functions named in attributes). It is built in phases, one module each:
//!
//! - [`attr`]: the attributes as written, parsed with darling, every error collected;
//! - [`model`]: the reconciler they describe, keeping the user's tokens for spans;
//! - [`valid`]: rules across attributes;
//! - [`expand`]: the generated `impl`;
//! - [`fallback`]: on error, the errors plus stub items so that one mistake does not cascade;
//! - [`items`]: what both of the last two emit (the `reconciler()` signature, the stash keys).
//!
//! [`derive`] runs the phases in that order; each phase depends only on the ones before it.
//!
//! The attribute reference lives in the runtime crate's docs (`kubewright::attributes`).
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod attr;
mod derive;
mod expand;
mod fallback;
mod items;
mod model;
mod status;
mod valid;

/// Derives `impl Root { pub fn reconciler() -> kubewright::Reconciler<Root> }` and typed stash keys; see
/// `kubewright::attributes`.
#[proc_macro_derive(
    Reconciler,
    attributes(
        reconciler, child, children, owns, tracks, watches, sync, finalize, stash, admission,
        version
    )
)]
pub fn derive_reconciler(input: proc_macro::TokenStream) -> proc_macro::TokenStream {
    derive::derive(input.into()).into()
}

/// Derives `kubewright::ReconcilerStatus` for a status struct from its `conditions` and `observed_generation`
/// fields (or the fields marked `#[status(conditions)]` and `#[status(observed_generation)]`).
#[proc_macro_derive(ReconcilerStatus, attributes(status))]
pub fn derive_reconciler_status(input: proc_macro::TokenStream) -> proc_macro::TokenStream {
    status::derive(input.into()).into()
}
