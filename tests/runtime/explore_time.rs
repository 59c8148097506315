//! Time in the perturbation explorer: the scenario advances the clock of the server and the operator alike,
//! writes a child's status as another controller would, and a requeue is a timer that fires once the clock
//! comes to it (so an operator that always requeues still settles, and is checked, between advances).

use std::time::Duration;

use futures::FutureExt;
use futures::future::BoxFuture;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use k8s_openapi::jiff::SignedDuration;
use kube::{CustomResource, CustomResourceExt, Resource, ResourceExt};
use kubewright::command::{Command, Target};
use kubewright::testing::explore::{Explore, ExploreError, Explored, Scenario};
use kubewright::{Context, Outcome, Reconciler, ReconcilerStatus, SyncReconciler};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "example.dev",
    version = "v1",
    kind = "Ticker",
    namespaced,
    status = "TickerStatus"
)]
pub struct TickerSpec {
    /// Seconds between ticks.
    pub period: i64,
}

#[derive(
    Clone, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq, ReconcilerStatus,
)]
#[serde(rename_all = "camelCase")]
pub struct TickerStatus {
    pub observed_generation: Option<i64>,
    #[serde(default)]
    pub conditions: Vec<Condition>,
    /// Whole periods since the Ticker was created.
    pub ticks: Option<i64>,
}

/// Counts the periods since creation on `Context::now` and always asks to be requeued at the next tick.
fn ticker() -> Reconciler<Ticker> {
    Reconciler::new("ticker-controller").step(SyncReconciler::new("tick", |t: &mut Ticker, cx| {
        let created = t
            .metadata
            .creation_timestamp
            .as_ref()
            .map(|c| c.0)
            .unwrap_or(cx.now());
        let elapsed = cx.now().duration_since(created).as_secs();
        let period = t.spec.period.max(1);
        t.status.get_or_insert_with(Default::default).ticks = Some(elapsed / period);
        let next = period - elapsed % period;
        Ok(Outcome::RequeueAfter(Duration::from_secs(
            next.unsigned_abs(),
        )))
    }))
}

fn a_ticker() -> Ticker {
    let mut t = Ticker::new("t", TickerSpec { period: 60 });
    t.metadata.namespace = Some("default".into());
    t
}

fn status_writes(explored: &Explored, of: &str) -> usize {
    explored
        .writes
        .iter()
        .filter(|w| w.contains(&format!("status {of}")))
        .count()
}

#[tokio::test]
async fn a_requeue_fires_once_the_clock_comes_to_it() {
    let scenario = Scenario::new()
        .apply(&a_ticker())
        .settle()
        .advance(SignedDuration::from_secs(59))
        .settle()
        .advance(SignedDuration::from_secs(1))
        .settle()
        .advance(SignedDuration::from_secs(150));
    let explored = Explore::new(ticker)
        .crd(Ticker::crd())
        .scenario(scenario)
        .run()
        .await
        .unwrap();
    println!("{explored:#}");
    // Ticks 0 (created), 1 (at 60 s: nothing before) and 3 (at 210 s): an advance changes no object, so each
    // later write comes from the timer alone; a timer that did not fire would leave a change the pass over
    // every parent finds.
    assert_eq!(
        status_writes(&explored, "Ticker default/t"),
        3,
        "{explored:#}"
    );
    assert_eq!(explored.reference_writes, 3, "{explored:#}");
}

#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "example.dev",
    version = "v1",
    kind = "Task",
    namespaced,
    status = "TaskStatus"
)]
pub struct TaskSpec {
    pub command: String,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
pub struct TaskStatus {
    /// Set by whatever runs the Task (the scenario here).
    pub phase: Option<String>,
}

#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "example.dev",
    version = "v1",
    kind = "Runner",
    namespaced,
    status = "RunnerStatus"
)]
pub struct RunnerSpec {
    pub command: String,
}

#[derive(
    Clone, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq, ReconcilerStatus,
)]
#[serde(rename_all = "camelCase")]
pub struct RunnerStatus {
    pub observed_generation: Option<i64>,
    #[serde(default)]
    pub conditions: Vec<Condition>,
    /// The phase of its Task.
    pub phase: Option<String>,
}

/// Creates the Task `<runner>-task` once and mirrors its phase into the status.
fn run_task<'a>(
    r: &'a mut Runner,
    cx: &'a mut Context,
) -> BoxFuture<'a, kubewright::Result<Outcome>> {
    async move {
        let ns = r.namespace();
        let name = format!("{}-task", r.name_any());
        let phase = match cx.cache::<Task>()?.get(ns.as_deref(), &name) {
            Some(task) => task.status.as_ref().and_then(|s| s.phase.clone()),
            None => {
                let object = json!({
                    "apiVersion": "example.dev/v1",
                    "kind": "Task",
                    "metadata": {
                        "name": name,
                        "namespace": ns,
                        "ownerReferences": [r.controller_owner_ref(&()).expect("a stored Runner")],
                    },
                    "spec": {"command": r.spec.command},
                });
                let created = cx
                    .execute(Command::Create {
                        target: Target::named::<Task>(ns.as_deref(), &name),
                        object,
                        field_manager: None,
                    })
                    .await;
                match created {
                    Err(e) if e.is_already_exists() => {}
                    other => {
                        other?;
                    }
                }
                None
            }
        };
        r.status.get_or_insert_with(Default::default).phase = phase;
        Ok(Outcome::Continue)
    }
    .boxed()
}

fn runner() -> Reconciler<Runner> {
    Reconciler::new("runner-controller")
        .step(SyncReconciler::new_async("run", run_task).wiring(|w| w.owns::<Task>()))
}

fn a_runner() -> Runner {
    let mut r = Runner::new(
        "r",
        RunnerSpec {
            command: "true".into(),
        },
    );
    r.metadata.namespace = Some("default".into());
    r
}

#[tokio::test]
async fn the_scenario_writes_a_childs_status_and_the_operator_follows() {
    let scenario = Scenario::new().apply(&a_runner()).settle().status::<Task>(
        Some("default"),
        "r-task",
        json!({"phase": "Done"}),
    );
    let explored = Explore::new(runner)
        .crd(Runner::crd())
        .crd(Task::crd())
        .scenario(scenario)
        .run()
        .await
        .unwrap();
    println!("{explored:#}");
    // The status without a phase, then with the phase the scenario wrote to the Task.
    assert_eq!(
        status_writes(&explored, "Runner default/r"),
        2,
        "{explored:#}"
    );
    assert!(
        explored.writes[0].contains("create Task default/r-task"),
        "{explored:#}"
    );
}

#[tokio::test]
async fn a_status_for_an_object_that_is_not_there_fails_the_scenario() {
    let scenario = Scenario::new().apply(&a_runner()).settle().status::<Task>(
        Some("default"),
        "nothing",
        json!({"phase": "Done"}),
    );
    let failure: ExploreError = Explore::new(runner)
        .crd(Runner::crd())
        .crd(Task::crd())
        .scenario(scenario)
        .run()
        .await
        .unwrap_err();
    let text = failure.to_string();
    assert!(
        text.contains("the unperturbed run already breaks the oracle"),
        "{text}"
    );
    assert!(
        text.contains("the scenario's action `write the status of Task default/nothing` found no Task default/nothing"),
        "{text}"
    );
}
