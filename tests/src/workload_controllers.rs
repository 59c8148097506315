//! The built-in workload controllers' status on a bare kube-apiserver (which runs no kube-controller-manager):
//! a task that writes, for each Deployment and StatefulSet, the status the in-memory server reports for it
//! ([`kubewright::testing::apiserver::workload_status`]), so an operator's readiness can be checked on both
//! clusters alike; and [`play_jobs`], the Job controller as the in-memory server plays it
//! ([`kubewright::testing::apiserver::job_status`]) on the wall clock.

use std::time::Duration;

use futures::StreamExt;
use k8s_openapi::api::apps::v1::{Deployment, StatefulSet};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Client, Resource, ResourceExt};
use kubewright::testing::apiserver::{job_finishes_at, job_status, workload_status};
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

/// Plays the Job controller in every namespace until the task is aborted: each Job starts when it is seen and
/// finishes `run_time` after (wall clock), with the statuses [`job_status`] computes, written whole (`PUT` of
/// the `status` subresource, as `kube-controller-manager` replaces a Job's status).
pub fn play_jobs(client: Client, run_time: Duration) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let all: Api<Job> = Api::all(client.clone());
        let mut changes = watcher(all, watcher::Config::default())
            .default_backoff()
            .applied_objects()
            .boxed();
        while let Some(change) = changes.next().await {
            let Ok(job) = change else { continue };
            if job.metadata.deletion_timestamp.is_some() {
                continue;
            }
            let api: Api<Job> =
                Api::namespaced(client.clone(), &job.namespace().unwrap_or_default());
            if write_job_status(&api, job.clone(), run_time).await {
                continue;
            }
            // Running and not due: written again once due.
            let Ok(value) = serde_json::to_value(&job) else {
                continue;
            };
            let Some(due) = job_finishes_at(&value, run_time) else {
                continue;
            };
            let wait = Timestamp::now().duration_until(due).unsigned_abs();
            let name = job.name_any();
            tokio::spawn(async move {
                tokio::time::sleep(wait + Duration::from_millis(50)).await;
                if let Ok(Some(job)) = api.get_opt(&name).await {
                    write_job_status(&api, job, run_time).await;
                }
            });
        }
    })
}

/// Writes the status the Job controller writes next for `job` now, if any; whether it wrote.
async fn write_job_status(api: &Api<Job>, mut job: Job, run_time: Duration) -> bool {
    let Ok(value) = serde_json::to_value(&job) else {
        return false;
    };
    let Some(status) = job_status(&value, run_time, Timestamp::now()) else {
        return false;
    };
    let Ok(status) = serde_json::from_value(status) else {
        return false;
    };
    job.status = Some(status);
    let pp = PostParams {
        field_manager: Some("kube-controller-manager".into()),
        ..PostParams::default()
    };
    match api.replace_status(&job.name_any(), &pp, &job).await {
        Ok(_) => true,
        Err(e) => {
            tracing::debug!(error = %e, "could not write a Job status");
            false
        }
    }
}
