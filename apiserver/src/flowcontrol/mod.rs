//! API priority and fairness, as far as a client observes it: kube-apiserver's default FlowSchemas and
//! PriorityLevelConfigurations (`bootstrap.rs`), every request classified by the stored FlowSchemas
//! (`classify.rs`), answered with the `X-Kubernetes-PF-FlowSchema-UID` and
//! `X-Kubernetes-PF-PriorityLevel-UID` headers, and each level's nominal concurrency limit on `/metrics`
//! (`metrics.rs`). No request is queued, limited or rejected for its priority level.

pub(crate) mod bootstrap;
pub(crate) mod classify;
pub(crate) mod metrics;
