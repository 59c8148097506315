//! The workloads kubectl's generators create: Deployment (`create deployment`), Job (`create job`) and
//! CronJob (`create cronjob`).

use k8s_pb::api::apps::v1::{
    Deployment, DeploymentSpec, DeploymentStrategy, RollingUpdateDeployment,
};
use k8s_pb::api::batch::v1::{CronJob, CronJobSpec, Job, JobSpec, JobTemplateSpec};
use serde_json::Value;

use super::core::pod_template;
use super::error::Result;
use super::json::{Obj, Ptr, opt, refuse};
use super::meta::{int_or_string, object_meta, opt_selector};

/// A Deployment.
pub(super) fn deployment(m: Deployment) -> Result<Value> {
    let Deployment {
        metadata,
        spec,
        // Reset on create and kept on update by kube-apiserver (see the module documentation).
        status: _,
    } = m;
    Ok(Obj::new()
        .put("metadata", opt(metadata, object_meta)?)
        .put("spec", opt(spec, deployment_spec)?)
        .done())
}

fn deployment_spec(s: DeploymentSpec) -> Result<Value> {
    let DeploymentSpec {
        replicas,
        selector,
        template,
        strategy,
        min_ready_seconds,
        revision_history_limit,
        paused,
        progress_deadline_seconds,
    } = s;
    Ok(Obj::new()
        .put("replicas", Ptr(replicas))
        .put("selector", opt_selector(selector)?)
        .put(
            "template",
            opt(template, |t| pod_template("spec.template", t))?,
        )
        .put("strategy", opt(strategy, deployment_strategy)?)
        .put("minReadySeconds", min_ready_seconds)
        .put("revisionHistoryLimit", Ptr(revision_history_limit))
        .put("paused", paused)
        .put("progressDeadlineSeconds", Ptr(progress_deadline_seconds))
        .done())
}

fn deployment_strategy(s: DeploymentStrategy) -> Result<Value> {
    let DeploymentStrategy {
        r#type,
        rolling_update,
    } = s;
    let rolling_update = opt(
        rolling_update,
        |RollingUpdateDeployment {
             max_unavailable,
             max_surge,
         }| {
            Ok(Obj::new()
                .put("maxUnavailable", opt(max_unavailable, int_or_string)?)
                .put("maxSurge", opt(max_surge, int_or_string)?)
                .done())
        },
    )?;
    Ok(Obj::new()
        .put("type", r#type)
        .put("rollingUpdate", rolling_update)
        .done())
}

/// A Job.
pub(super) fn job(m: Job) -> Result<Value> {
    let Job {
        metadata,
        spec,
        // Reset on create and kept on update by kube-apiserver (see the module documentation).
        status: _,
    } = m;
    Ok(Obj::new()
        .put("metadata", opt(metadata, object_meta)?)
        .put("spec", opt(spec, |s| job_spec("spec", s))?)
        .done())
}

fn job_spec(path: &str, s: JobSpec) -> Result<Value> {
    let JobSpec {
        parallelism,
        completions,
        active_deadline_seconds,
        pod_failure_policy,
        success_policy,
        backoff_limit,
        backoff_limit_per_index,
        max_failed_indexes,
        selector,
        manual_selector,
        template,
        ttl_seconds_after_finished,
        completion_mode,
        suspend,
        pod_replacement_policy,
        managed_by,
    } = s;
    refuse(&format!("{path}.podFailurePolicy"), &pod_failure_policy)?;
    refuse(&format!("{path}.successPolicy"), &success_policy)?;
    let template_at = format!("{path}.template");
    Ok(Obj::new()
        .put("parallelism", Ptr(parallelism))
        .put("completions", Ptr(completions))
        .put("activeDeadlineSeconds", Ptr(active_deadline_seconds))
        .put("backoffLimit", Ptr(backoff_limit))
        .put("backoffLimitPerIndex", Ptr(backoff_limit_per_index))
        .put("maxFailedIndexes", Ptr(max_failed_indexes))
        .put("selector", opt_selector(selector)?)
        .put("manualSelector", Ptr(manual_selector))
        .put(
            "template",
            opt(template, |t| pod_template(&template_at, t))?,
        )
        .put("ttlSecondsAfterFinished", Ptr(ttl_seconds_after_finished))
        .put("completionMode", completion_mode)
        .put("suspend", Ptr(suspend))
        .put("podReplacementPolicy", pod_replacement_policy)
        .put("managedBy", managed_by)
        .done())
}

/// A CronJob.
pub(super) fn cron_job(m: CronJob) -> Result<Value> {
    let CronJob {
        metadata,
        spec,
        // Reset on create and kept on update by kube-apiserver (see the module documentation).
        status: _,
    } = m;
    Ok(Obj::new()
        .put("metadata", opt(metadata, object_meta)?)
        .put("spec", opt(spec, cron_job_spec)?)
        .done())
}

fn cron_job_spec(s: CronJobSpec) -> Result<Value> {
    let CronJobSpec {
        schedule,
        time_zone,
        starting_deadline_seconds,
        concurrency_policy,
        suspend,
        job_template,
        successful_jobs_history_limit,
        failed_jobs_history_limit,
    } = s;
    let job_template = opt(job_template, |JobTemplateSpec { metadata, spec }| {
        Ok(Obj::new()
            .put("metadata", opt(metadata, object_meta)?)
            .put("spec", opt(spec, |s| job_spec("spec.jobTemplate.spec", s))?)
            .done())
    })?;
    Ok(Obj::new()
        .put("schedule", schedule)
        .put("timeZone", time_zone)
        .put("startingDeadlineSeconds", Ptr(starting_deadline_seconds))
        .put("concurrencyPolicy", concurrency_policy)
        .put("suspend", Ptr(suspend))
        .put("jobTemplate", job_template)
        .put(
            "successfulJobsHistoryLimit",
            Ptr(successful_jobs_history_limit),
        )
        .put("failedJobsHistoryLimit", Ptr(failed_jobs_history_limit))
        .done())
}
