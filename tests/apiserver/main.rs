//! Conformance tests of the in-memory API server, driven through a real `kube::Client`.

mod common;
mod crd;
mod crud;
mod gc;
mod jobs;
mod kinds;
mod kubectl;
mod list_watch;
mod patch;
mod runtime;
mod support;
mod tables;
mod workloads;
