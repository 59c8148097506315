//! Integration tests on a real control plane (etcd and kube-apiserver from `KUBEBUILDER_ASSETS` or the
//! `cargo xtask envtest` cache). Without binaries they are skipped with a message, unless
//! `OPERATOR_REQUIRE_CONTROL_PLANE` is set, which makes them fail.

mod cert_rotation;
mod cluster;
mod cronjob;
mod database;
mod deploy;
mod domains;
mod dynamic;
mod expose;
mod fights;
mod harness;
mod idle;
mod leader;
mod metrics_secure;
mod pause;
mod plan;
mod priority;
mod quantities;
mod runtime;
mod sharding;
mod support;
mod teams;
mod tenants;
mod versions;
mod webapp;
mod webapp_rules;
mod webapp_versions;
mod webapp_webhooks;
