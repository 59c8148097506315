//! The Jobs the server plays: a Job starts at once, runs for the configured time on the server's clock and then
//! completes (or fails when told to), each step a write of `kube-controller-manager` with its own watch event.

use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::jiff::SignedDuration;
use kube::api::{Api, Patch, PatchParams, PostParams, WatchEvent, WatchParams};
use kubewright::testing::ApiServer;
use kubewright::testing::apiserver::{Clock, FAIL_ANNOTATION, RUN_TIME_ANNOTATION};
use serde_json::{Value, json};

const T0: &str = "2026-01-01T00:00:00Z";

fn fixed_clock() -> Clock {
    Clock::fixed(T0.parse().expect("a time"))
}

fn job(name: &str, spec: Value, annotations: Value) -> Job {
    let mut spec = spec;
    spec["template"] = json!({"spec": {
        "restartPolicy": "Never",
        "containers": [{"name": "work", "image": "busybox"}],
    }});
    serde_json::from_value(json!({
        "metadata": {"name": name, "annotations": annotations},
        "spec": spec,
    }))
    .expect("a Job")
}

async fn status(jobs: &Api<Job>, name: &str) -> Value {
    let job = jobs.get(name).await.expect("the Job");
    serde_json::to_value(job.status).expect("JSON")
}

fn condition(type_: &str, reason: &str, message: &str, at: &str) -> Value {
    json!({"type": type_, "status": "True", "reason": reason, "message": message,
           "lastProbeTime": at, "lastTransitionTime": at})
}

fn resource_version(job: &Job) -> u64 {
    job.metadata
        .resource_version
        .as_deref()
        .and_then(|rv| rv.parse().ok())
        .expect("a resourceVersion")
}

/// `kubectl get job NAME`'s STATUS, COMPLETIONS and DURATION cells.
async fn row(client: &kube::Client, name: &str) -> Value {
    let request = http::Request::builder()
        .uri(format!("/apis/batch/v1/namespaces/default/jobs/{name}"))
        .header("accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
        .body(Vec::new())
        .expect("a request");
    let table: Value =
        serde_json::from_str(&client.request_text(request).await.expect("a table")).expect("JSON");
    let cells = &table["rows"][0]["cells"];
    json!([cells[1], cells[2], cells[3]])
}

#[tokio::test]
async fn a_job_runs_then_completes_once_the_clock_passes_its_run_time() {
    let clock = fixed_clock();
    let server = ApiServer::builder()
        .clock(clock.clone())
        .job_run_time(Duration::from_secs(30))
        .build();
    let client = server.client();
    let jobs: Api<Job> = Api::default_namespaced(client.clone());
    let created = jobs
        .create(&PostParams::default(), &job("once", json!({}), json!({})))
        .await
        .unwrap();
    // The answer is the Job as written; the controller's writes follow, each an event of its own.
    assert!(created.status.is_none(), "{:?}", created.status);
    let mut events = jobs
        .watch(
            &WatchParams::default(),
            created.metadata.resource_version.as_deref().unwrap(),
        )
        .await
        .unwrap()
        .boxed();

    let running = json!({
        "startTime": T0, "active": 1, "ready": 1, "terminating": 0, "uncountedTerminatedPods": {},
    });
    assert_eq!(status(&jobs, "once").await, running);
    assert_eq!(row(&client, "once").await, json!(["Running", "0/1", "0s"]));
    clock.advance(SignedDuration::from_secs(29));
    assert_eq!(status(&jobs, "once").await, running, "not before its time");
    // Past the due time by far: the Job's times are its own (a run of 30 seconds), not the clock's.
    clock.advance(SignedDuration::from_secs(3600));
    let done = "2026-01-01T00:00:30Z";
    let message = "Reached expected number of succeeded pods";
    assert_eq!(
        status(&jobs, "once").await,
        json!({
            "startTime": T0, "completionTime": done, "succeeded": 1, "ready": 0, "terminating": 0,
            "uncountedTerminatedPods": {},
            "conditions": [
                condition("SuccessCriteriaMet", "CompletionsReached", message, done),
                condition("Complete", "CompletionsReached", message, done),
            ],
        })
    );
    assert_eq!(
        row(&client, "once").await,
        json!(["Complete", "1/1", "30s"])
    );

    // Two writes after the create, each its own version, both kube-controller-manager's on the status.
    let mut versions = vec![resource_version(&created)];
    for expected in ["started", "complete"] {
        match events.try_next().await.unwrap() {
            Some(WatchEvent::Modified(j)) => {
                let s = j.status.clone().unwrap();
                let complete = s.conditions.is_some_and(|c| c.len() == 2);
                assert_eq!(complete, expected == "complete", "{expected}: {j:?}");
                let entry = j
                    .metadata
                    .managed_fields
                    .as_ref()
                    .unwrap()
                    .iter()
                    .find(|m| m.manager.as_deref() == Some("kube-controller-manager"))
                    .cloned()
                    .expect("the controller's entry");
                assert_eq!(entry.subresource.as_deref(), Some("status"));
                assert_eq!(entry.operation.as_deref(), Some("Update"));
                versions.push(resource_version(&j));
            }
            other => panic!("expected the Job {expected}, got {other:?}"),
        }
    }
    assert!(versions.windows(2).all(|w| w[0] < w[1]), "{versions:?}");
    assert_eq!(
        resource_version(&jobs.get("once").await.unwrap()),
        versions[2]
    );
}

#[tokio::test]
async fn a_job_told_to_fail_fails_and_annotations_override_the_server() {
    let clock = fixed_clock();
    let server = ApiServer::builder()
        .clock(clock.clone())
        .job_run_time(Duration::from_secs(3600))
        .build();
    let jobs: Api<Job> = Api::default_namespaced(server.client());
    let marked = json!({FAIL_ANNOTATION: "true", RUN_TIME_ANNOTATION: "1m"});
    jobs.create(
        &PostParams::default(),
        &job("doomed", json!({"backoffLimit": 2}), marked),
    )
    .await
    .unwrap();
    clock.advance(SignedDuration::from_secs(59));
    assert_eq!(status(&jobs, "doomed").await["active"], 1);
    clock.advance(SignedDuration::from_secs(1));
    let at = "2026-01-01T00:01:00Z";
    let message = "Job has reached the specified backoff limit";
    assert_eq!(
        status(&jobs, "doomed").await,
        json!({
            "startTime": T0, "failed": 3, "ready": 0, "terminating": 0, "uncountedTerminatedPods": {},
            "conditions": [
                condition("FailureTarget", "BackoffLimitExceeded", message, at),
                condition("Failed", "BackoffLimitExceeded", message, at),
            ],
        })
    );

    // Jobs failing by default; one annotated otherwise completes, and runs the server's time.
    let failing = ApiServer::builder()
        .clock(clock.clone())
        .jobs_fail(true)
        .build();
    let jobs: Api<Job> = Api::default_namespaced(failing.client());
    let spared = json!({FAIL_ANNOTATION: "false"});
    for (name, annotations) in [("spared", spared), ("plain", json!({}))] {
        jobs.create(&PostParams::default(), &job(name, json!({}), annotations))
            .await
            .unwrap();
    }
    clock.advance(SignedDuration::from_secs(9));
    assert_eq!(status(&jobs, "spared").await["active"], 1, "10s by default");
    clock.advance(SignedDuration::from_secs(1));
    let spared = status(&jobs, "spared").await;
    assert_eq!(spared["succeeded"], 1);
    assert_eq!(spared["conditions"][1]["type"], "Complete");
    let plain = status(&jobs, "plain").await;
    assert_eq!(plain["failed"], 7, "backoffLimit defaults to 6");
    assert_eq!(plain["conditions"][1]["type"], "Failed");
}

#[tokio::test]
async fn a_suspended_job_is_not_started_until_resumed() {
    let clock = fixed_clock();
    let server = ApiServer::builder()
        .clock(clock.clone())
        .job_run_time(Duration::from_secs(5))
        .build();
    let jobs: Api<Job> = Api::default_namespaced(server.client());
    jobs.create(
        &PostParams::default(),
        &job("held", json!({"suspend": true}), json!({})),
    )
    .await
    .unwrap();
    let suspended = json!({
        "ready": 0, "terminating": 0, "uncountedTerminatedPods": {},
        "conditions": [{"type": "Suspended", "status": "True", "reason": "JobSuspended",
                        "message": "Job suspended", "lastProbeTime": T0, "lastTransitionTime": T0}],
    });
    assert_eq!(status(&jobs, "held").await, suspended);
    clock.advance(SignedDuration::from_secs(60));
    assert_eq!(status(&jobs, "held").await, suspended, "never started");

    jobs.patch(
        "held",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"suspend": false}})),
    )
    .await
    .unwrap();
    let resumed_at = "2026-01-01T00:01:00Z";
    let resumed = status(&jobs, "held").await;
    assert_eq!(resumed["startTime"], resumed_at);
    assert_eq!(resumed["active"], 1);
    assert_eq!(
        resumed["conditions"],
        json!([{"type": "Suspended", "status": "False", "reason": "JobResumed", "message": "Job resumed",
                "lastProbeTime": resumed_at, "lastTransitionTime": resumed_at}])
    );
    clock.advance(SignedDuration::from_secs(5));
    let done = status(&jobs, "held").await;
    assert_eq!(done["completionTime"], "2026-01-01T00:01:05Z");
    let types: Vec<&str> = done["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["type"].as_str().unwrap())
        .collect();
    assert_eq!(types, ["Suspended", "SuccessCriteriaMet", "Complete"]);
}

#[tokio::test]
async fn with_a_zero_run_time_a_job_completes_in_the_writes_after_its_create() {
    let server = ApiServer::builder()
        .clock(fixed_clock())
        .job_run_time(Duration::ZERO)
        .build();
    let jobs: Api<Job> = Api::default_namespaced(server.client());
    let created = jobs
        .create(
            &PostParams::default(),
            &job(
                "quick",
                json!({"completions": 3, "parallelism": 2, "completionMode": "Indexed"}),
                json!({}),
            ),
        )
        .await
        .unwrap();
    let done = jobs.get("quick").await.unwrap();
    assert_eq!(
        resource_version(&done),
        resource_version(&created) + 2,
        "started, then complete"
    );
    let s = serde_json::to_value(done.status).unwrap();
    assert_eq!(
        (&s["succeeded"], &s["completedIndexes"]),
        (&json!(3), &json!("0-2"))
    );
    assert_eq!(s["completionTime"], T0);
}

#[tokio::test]
async fn with_the_system_clock_a_job_completes_by_itself() {
    let server = ApiServer::builder()
        .job_run_time(Duration::from_secs(1))
        .build();
    let jobs: Api<Job> = Api::default_namespaced(server.client());
    let created = jobs
        .create(&PostParams::default(), &job("soon", json!({}), json!({})))
        .await
        .unwrap();
    // Only the watch is open: the completion is the server's own doing.
    let mut events = jobs
        .watch(
            &WatchParams::default(),
            created.metadata.resource_version.as_deref().unwrap(),
        )
        .await
        .unwrap()
        .boxed();
    let complete = tokio::time::timeout(Duration::from_secs(5), async {
        while let Some(event) = events.try_next().await.unwrap() {
            if let WatchEvent::Modified(j) = event
                && j.status
                    .and_then(|s| s.conditions)
                    .is_some_and(|c| c.iter().any(|c| c.type_ == "Complete"))
            {
                return true;
            }
        }
        false
    })
    .await;
    assert_eq!(complete, Ok(true), "completed within 5 seconds");
}

#[tokio::test]
async fn the_system_clocks_timer_ends_with_the_server() {
    let metrics = tokio::runtime::Handle::current().metrics();
    let before = metrics.num_alive_tasks();
    let server = ApiServer::builder()
        .job_run_time(Duration::from_secs(3600))
        .build();
    let jobs: Api<Job> = Api::default_namespaced(server.client());
    jobs.list(&Default::default()).await.unwrap();
    let with_client = metrics.num_alive_tasks();
    jobs.create(&PostParams::default(), &job("long", json!({}), json!({})))
        .await
        .unwrap();
    assert_eq!(metrics.num_alive_tasks(), with_client + 1, "a timer runs");
    drop((jobs, server));
    for _ in 0..100 {
        if metrics.num_alive_tasks() == before {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!(
        "{} tasks left running, {before} before the server",
        metrics.num_alive_tasks()
    );
}

#[tokio::test]
async fn switched_off_jobs_keep_the_status_clients_write() {
    let clock = fixed_clock();
    let server = ApiServer::builder()
        .clock(clock.clone())
        .workload_status(false)
        .build();
    let jobs: Api<Job> = Api::default_namespaced(server.client());
    jobs.create(&PostParams::default(), &job("bare", json!({}), json!({})))
        .await
        .unwrap();
    clock.advance(SignedDuration::from_secs(3600));
    assert_eq!(status(&jobs, "bare").await, Value::Null);
}
