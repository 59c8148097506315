//! The built-in workload controllers' status on a bare kube-apiserver (which runs no kube-controller-manager):
//! a task that writes, for each Deployment and StatefulSet, the status the in-memory server reports for it
//! ([`operator::testing::apiserver::workload_status`]), so an operator's readiness can be checked on both
//! clusters alike.

use futures::StreamExt;
use k8s_openapi::api::apps::v1::{Deployment, StatefulSet};
use kube::api::{Api, Patch, PatchParams};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Client, Resource, ResourceExt};
use operator::testing::apiserver::workload_status;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// Plays the Deployment and StatefulSet controllers in every namespace until the task is aborted.
pub fn play(client: Client) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        tokio::join!(
            play_kind::<Deployment>(client.clone(), "deployments"),
            play_kind::<StatefulSet>(client, "statefulsets"),
        );
    })
}

async fn play_kind<K>(client: Client, plural: &'static str)
where
    K: Resource<DynamicType = (), Scope = k8s_openapi::NamespaceResourceScope>
        + Clone
        + DeserializeOwned
        + Serialize
        + std::fmt::Debug
        + Send
        + Sync
        + 'static,
{
    let all: Api<K> = Api::all(client.clone());
    // With a backoff between errors: once its control plane is gone (a test that panicked), a watch without
    // one fails at once, forever, and never lets the runtime shut down.
    let mut changes = watcher(all, watcher::Config::default())
        .default_backoff()
        .applied_objects()
        .boxed();
    while let Some(change) = changes.next().await {
        let Ok(obj) = change else { continue };
        let Ok(value) = serde_json::to_value(&obj) else {
            continue;
        };
        if obj.meta().deletion_timestamp.is_some() {
            continue;
        }
        let Some(status) = workload_status("apps", plural, &value) else {
            continue;
        };
        let api: Api<K> = Api::namespaced(client.clone(), &obj.namespace().unwrap_or_default());
        let patch = serde_json::json!({ "status": status });
        if let Err(e) = api
            .patch_status(
                &obj.name_any(),
                &PatchParams {
                    field_manager: Some("kube-controller-manager".into()),
                    ..PatchParams::default()
                },
                &Patch::Merge(&patch),
            )
            .await
        {
            tracing::debug!(error = %e, "could not write a workload status");
        }
    }
}
