//! The `cronjob` example under the perturbation explorer, over time: a CronJob that runs every minute, five
//! schedule periods on the explorer's clock, the embedded server playing its Jobs (each finishes 10 s after it
//! starts), one run failing and the history limits trimming the older runs.

use examples::cronjob::{CronJob, sample};
use k8s_openapi::jiff::SignedDuration;
use kube::CustomResourceExt;
use kubewright::testing::apiserver::FAIL_ANNOTATION;
use kubewright::testing::explore::{Explore, Explored, Scenario};
use serde_json::json;

/// The Job of the run at `minute` past the explorer's start (2025-01-01T00:00:00Z, unix 1735689600).
fn job(minute: i64) -> String {
    format!("Job default/hello-{}", 1_735_689_600 + 60 * minute)
}

/// Whether the unperturbed run wrote `what` (e.g. `create Job default/hello-1735689660`).
fn wrote(explored: &Explored, what: &str) -> bool {
    explored.writes.iter().any(|w| w.contains(what))
}

/// The template's Jobs fail from now on (`true`) or succeed again (`null`): a spec change, as a user pushing a
/// broken image and then the fix would make, so the run in between fails because the Job controller says so.
fn failing(fail: bool) -> serde_json::Value {
    let value = if fail { json!("true") } else { json!(null) };
    json!({"spec": {"jobTemplate": {"metadata": {"annotations": {FAIL_ANNOTATION: value}}}}})
}

/// A minute on, and the operator settles.
fn minute(scenario: Scenario) -> Scenario {
    scenario.advance(SignedDuration::from_mins(1)).settle()
}

#[tokio::test]
async fn a_cron_job_over_five_minutes_one_run_failing_trims_its_history_under_perturbations() {
    let mut cj = sample("hello", "* * * * *");
    cj.spec.successful_jobs_history_limit = 1;
    cj.spec.failed_jobs_history_limit = 1;
    let ns = Some("default");
    // 00:01 runs the first Job; 00:02 the second (the first succeeded at 00:01:10).
    let scenario = minute(minute(Scenario::new().apply(&cj).settle()));
    // The template fails from now on: 00:03 runs a Job that fails; the first succeeded Job is trimmed.
    let scenario = minute(
        scenario
            .patch::<CronJob>(ns, "hello", failing(true))
            .settle(),
    );
    // Fixed again: 00:04 and 00:05 run Jobs that succeed; the second is trimmed at 00:05.
    let scenario = minute(minute(
        scenario
            .patch::<CronJob>(ns, "hello", failing(false))
            .settle(),
    ));
    let explored = Explore::new(CronJob::reconciler)
        .crd(CronJob::crd())
        .scenario(scenario)
        .run()
        .await
        .unwrap();
    println!("{explored:#}");
    for run in 1..=5 {
        assert!(
            wrote(&explored, &format!("create {}", job(run))),
            "{explored:#}"
        );
    }
    assert!(
        !wrote(&explored, &format!("create {}", job(6))),
        "{explored:#}"
    );
    // History: one succeeded Job kept; the failed one (00:03) is kept, the only failed one.
    for trimmed in [1, 2] {
        assert!(
            wrote(&explored, &format!("delete {}", job(trimmed))),
            "{explored:#}"
        );
    }
    for kept in [3, 4, 5] {
        assert!(
            !wrote(&explored, &format!("delete {}", job(kept))),
            "{explored:#}"
        );
    }
    assert!(explored.explored > 0, "{explored:#}");
}

/// Between two schedule times no timer is due: what the operator writes there comes from the Job's status alone
/// (the server finishing it), so a CronJob status that went stale until the next minute would show here, and
/// the explorer's pass over every parent would find the write it missed.
#[tokio::test]
async fn a_job_failing_between_schedule_times_is_trimmed_and_reported_at_once() {
    let mut cj = sample("hello", "* * * * *");
    cj.spec.failed_jobs_history_limit = 0;
    let annotations = [(FAIL_ANNOTATION.to_string(), "true".to_string())];
    let template = cj
        .spec
        .job_template
        .metadata
        .get_or_insert_with(Default::default);
    template.annotations = Some(annotations.into());
    // 00:01 runs the Job; it fails at 00:01:10, 50 s before the next schedule time.
    let scenario = minute(Scenario::new().apply(&cj).settle())
        .advance(SignedDuration::from_secs(10))
        .settle();
    let explored = Explore::new(CronJob::reconciler)
        .crd(CronJob::crd())
        .scenario(scenario)
        .run()
        .await
        .unwrap();
    println!("{explored:#}");
    let writes: Vec<&str> = explored
        .writes
        .iter()
        .map(|w| w.trim().split_once(". ").map_or(w.as_str(), |(_, w)| w))
        .collect();
    let failed = job(1);
    let expected = [
        "status CronJob default/hello: ok".to_string(),
        format!("create {failed}: ok"),
        "status CronJob default/hello: ok".to_string(),
        // At 00:01:10: the failed Job is beyond the limit of 0, and the status no longer lists it as active.
        format!("delete {failed}: ok"),
        "status CronJob default/hello: ok".to_string(),
    ];
    assert_eq!(writes, expected, "{explored:#}");
}
