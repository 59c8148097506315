//! A runtime for writing Kubernetes operators declaratively.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

#[cfg(feature = "testing")]
pub mod testing;
