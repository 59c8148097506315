//! Derive macros for the `operator` runtime.
//!
//! The `Reconciler` derive lands with its own issue; this crate is a skeleton
//! so that the workspace layout is in place.
