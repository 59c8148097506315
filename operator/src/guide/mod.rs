//! The guide: from an empty directory to an operator deployed on a cluster.
//!
//! Every code block of the guide is compiled and run by `cargo test` (they are this crate's doctests), so what
//! it shows is what the crate does. Read the chapters in order:
//!
//! 1. [`start`]: the crate, the first kind, its child, `Ready`, and the operator running on the embedded
//!    cluster, where `kubectl` reaches it.
//! 2. [`children`]: what a child step does, reflecting children into the status, several children of one kind,
//!    watched objects, invalid specs.
//! 3. [`testing`]: table tests of one pass, tests of a whole operator, and the perturbation explorer.
//! 4. [`admission`]: validating and defaulting webhooks.
//! 5. [`deploying`]: the manifests, the image, leader election, metrics and probes, running on a real cluster.
//! 6. [`evolving`]: changing the API of a kind that users already have objects of.
//!
//! The attributes of `#[derive(Reconciler)]`, each with the builder call it stands for, are in
//! [`attributes`](crate::attributes); the examples in the repository (`examples/src/`) are whole operators.

pub mod admission;
pub mod children;
pub mod deploying;
pub mod evolving;
pub mod start;
pub mod testing;
