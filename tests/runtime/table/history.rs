//! A child set that creates once: Jobs created and never written again, and the Jobs no longer desired kept,
//! kept as a trimmed history, or deleted, as the set's retention rule says.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::jiff::Timestamp;
use kube::ResourceExt;
use kubewright::testing::table::EventExpectation;
use kubewright::{ChildOutcome, ChildSetReconciler, Context, Reconciler, Retention, SetStrategy};
use serde_json::{Value, json};

use super::*;

/// When a Job counts from, for its history.
const AT: &str = "example.dev/at";

/// One Job per item, running the note's text as its image.
fn desired_jobs(note: &Note, _cx: &mut Context) -> kubewright::Result<Vec<Job>> {
    Ok(note
        .spec
        .items
        .iter()
        .map(|item| {
            serde_json::from_value(json!({
                "metadata": {"name": format!("{}-{item}", note.name_any()), "labels": {"item": item}},
                "spec": {"template": {"spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "run", "image": note.spec.text}],
                }}},
            }))
            .expect("a Job")
        })
        .collect())
}

fn item_of(job: &Job) -> String {
    job.labels().get("item").cloned().unwrap_or_default()
}

/// A Job of the parent's as the set created it, `at` seconds after the epoch, finished as `finished` says
/// (`Complete`, `Failed`, or running).
fn job(id: &str, image: &str, at: i64, finished: Option<&str>) -> Value {
    let at = Timestamp::from_second(at).expect("a time").to_string();
    let mut job = json!({
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {
            "name": format!("hello-{id}"),
            "namespace": NS,
            "labels": {"item": id, kubewright::OWNER_LABEL: UID},
            "annotations": {AT: at},
            "ownerReferences": [owner()],
        },
        "spec": {"template": {"spec": {
            "restartPolicy": "Never",
            "containers": [{"name": "run", "image": image}],
        }}},
    });
    // As the Job controller leaves a finished Job: the API server refuses a terminal condition without a start
    // time and the condition that precedes it (and a `Complete` one without its completion time).
    let condition = |type_: &str| json!({"type": type_, "status": "True"});
    match finished {
        Some("Complete") => {
            job["status"] = json!({"startTime": at, "completionTime": at, "succeeded": 1,
                "conditions": [condition("SuccessCriteriaMet"), condition("Complete")]});
        }
        Some(type_) => {
            job["status"] = json!({"startTime": at, "failed": 1,
                "conditions": [condition("FailureTarget"), condition(type_)]});
        }
        None => {}
    }
    job
}

fn finished(job: &Job, type_: &str) -> bool {
    job.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .into_iter()
        .flatten()
        .any(|c| c.type_ == type_ && c.status == "True")
}

/// Succeeded Jobs are a history of 2, failed ones of 1; running ones stay; a Job labelled `drop` goes.
fn retention(_: &Note, job: &Job) -> Retention {
    let at = job
        .annotations()
        .get(AT)
        .and_then(|t| t.parse().ok())
        .unwrap_or(Timestamp::UNIX_EPOCH);
    if job.labels().contains_key("drop") {
        Retention::Delete
    } else if finished(job, "Complete") {
        Retention::History {
            class: Cow::Borrowed("Succeeded"),
            limit: 2,
            at,
        }
    } else if finished(job, "Failed") {
        Retention::History {
            class: Cow::Borrowed("Failed"),
            limit: 1,
            at,
        }
    } else {
        Retention::Keep
    }
}

fn note_of(text: &str, items: &[&str]) -> Value {
    let mut parent = note(text);
    parent["spec"]["items"] = json!(items);
    parent
}

/// The outcomes the set reported, by id: whether each child is in place, or what became of it.
type Reports = Arc<Mutex<Vec<BTreeMap<String, &'static str>>>>;

fn jobs(reports: &Reports) -> ChildSetReconciler<Note, Job> {
    let seen = reports.clone();
    ChildSetReconciler::new("jobs", desired_jobs, item_of)
        .strategy(SetStrategy::CreateOnly)
        .reflect(
            move |_: &mut Note, outcomes: &BTreeMap<String, ChildOutcome<Job>>| {
                let summary = outcomes
                    .iter()
                    .map(|(id, o)| {
                        let what = match o {
                            ChildOutcome::Created(_) => "created",
                            ChildOutcome::Unchanged(_) => "unchanged",
                            ChildOutcome::Deleted => "deleted",
                            _ => "other",
                        };
                        (id.clone(), what)
                    })
                    .collect();
                seen.lock().unwrap().push(summary);
            },
        )
}

fn not_complete(name: &str) -> Value {
    let message = format!("Job default/{name}: the job has not completed");
    json!({
        "observedGeneration": 1,
        "conditions": [
            condition("JobsReady", "False", "NotComplete", &message),
            condition("Ready", "False", "NotComplete", &message),
        ],
    })
}

#[tokio::test]
async fn a_changed_template_writes_no_job_the_set_created_and_creates_the_missing_one() {
    // The image went from v1 to v2: `hello-a` (finished) and `hello-b` (running) stay as they are; only the
    // missing `hello-c` is created, with the new image.
    let reports = Reports::default();
    let reconciler = Reconciler::new("notes").step(jobs(&reports));
    case("create once")
        .given(note_of("v2", &["a", "b", "c"]))
        .given(job("a", "v1", 1, Some("Complete")))
        .given(job("b", "v1", 2, None))
        .expect_create(json!({
            "kind": "Job",
            "metadata": {"name": "hello-c", "labels": {"item": "c", kubewright::OWNER_LABEL: UID}, "ownerReferences": [owner()]},
            "spec": {"template": {"spec": {"containers": [{"name": "run", "image": "v2"}]}}},
        }))
        .expect_event(EventExpectation::normal("Created").note("Job default/hello-c"))
        .expect_status_update(not_complete("hello-b"))
        .expect_no_reads()
        .run(reconciler)
        .await
        .unwrap();
    assert_eq!(
        reports.lock().unwrap()[0],
        BTreeMap::from([
            ("a".to_string(), "unchanged"),
            ("b".to_string(), "unchanged"),
            ("c".to_string(), "created"),
        ])
    );
}

#[tokio::test]
async fn a_history_keeps_the_newest_of_each_class_and_deletes_the_rest() {
    let reports = Reports::default();
    let mut dropped = job("x", "v1", 9, Some("Complete"));
    dropped["metadata"]["labels"]["drop"] = json!("yes");
    // The history is not the set's readiness: with the built-in readiness a failed Job is not ready, and the
    // failed Job the history keeps does not make the set unready.
    let reconciler = Reconciler::new("notes").step(
        jobs(&reports)
            .retain(retention)
            .ready(kubewright::readiness::builtin),
    );
    case("history")
        .given(note_of("v1", &[]))
        .given(job("s1", "v1", 1, Some("Complete")))
        .given(job("s2", "v1", 3, Some("Complete")))
        .given(job("s3", "v1", 2, Some("Complete")))
        .given(job("f1", "v1", 1, Some("Failed")))
        .given(job("f2", "v1", 2, Some("Failed")))
        .given(dropped)
        .expect_delete::<Job>(Some(NS), "hello-f1")
        .expect_delete::<Job>(Some(NS), "hello-s1")
        .expect_delete::<Job>(Some(NS), "hello-x")
        .expect_event(
            EventExpectation::normal("Deleted")
                .note("Deleted Job default/hello-f1: history Failed keeps the newest 1"),
        )
        .expect_event(
            EventExpectation::normal("Deleted")
                .note("Deleted Job default/hello-s1: history Succeeded keeps the newest 2"),
        )
        .expect_event(
            EventExpectation::normal("Deleted")
                .note("Deleted Job default/hello-x: no desired Job has this name"),
        )
        .expect_status_update(json!({
            "observedGeneration": 1,
            "conditions": [
                condition("JobsReady", "True", "Reconciled", ""),
                condition("Ready", "True", "Ready", ""),
            ],
        }))
        .run(reconciler)
        .await
        .unwrap();
    assert_eq!(
        reports.lock().unwrap()[0],
        BTreeMap::from([
            ("f1".to_string(), "deleted"),
            ("f2".to_string(), "unchanged"),
            ("s1".to_string(), "deleted"),
            ("s2".to_string(), "unchanged"),
            ("s3".to_string(), "unchanged"),
            ("x".to_string(), "deleted"),
        ])
    );
}

#[tokio::test]
async fn a_job_the_rule_keeps_stays_unwritten_and_counts_for_readiness() {
    let reports = Reports::default();
    let reconciler = Reconciler::new("notes").step(jobs(&reports).retain(retention));
    case("kept")
        .given(note_of("v2", &[]))
        .given(job("r", "v1", 1, None))
        .expect_status_update(not_complete("hello-r"))
        .run(reconciler)
        .await
        .unwrap();
    assert_eq!(
        reports.lock().unwrap()[0],
        BTreeMap::from([("r".to_string(), "unchanged")])
    );
}

#[tokio::test]
async fn without_a_rule_a_job_no_longer_desired_is_deleted() {
    let reports = Reports::default();
    let reconciler = Reconciler::new("notes").step(jobs(&reports));
    case("no rule")
        .given(note_of("v1", &["a"]))
        .given(job("a", "v1", 1, Some("Failed")))
        .given(job("z", "v1", 1, None))
        .expect_delete::<Job>(Some(NS), "hello-z")
        .expect_event(
            EventExpectation::normal("Deleted")
                .note("Deleted Job default/hello-z: no desired Job has this name"),
        )
        // A failed run has finished: a set that creates once is ready.
        .expect_status_update(json!({
            "observedGeneration": 1,
            "conditions": [
                condition("JobsReady", "True", "Reconciled", ""),
                condition("Ready", "True", "Ready", ""),
            ],
        }))
        .run(reconciler)
        .await
        .unwrap();
}
