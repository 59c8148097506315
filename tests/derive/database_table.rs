//! Table tests of the `database` example: one pass of the derived reconciler over given state, the children in
//! place built from the operator's own desired functions (`Fixtures`).

use examples::database::{
    Database, UNSUPPORTED_VERSION, desired_secret, desired_service, desired_stateful_set, sample,
};
use k8s_openapi::api::apps::v1::{StatefulSet, StatefulSetStatus};
use k8s_openapi::api::core::v1::{Secret, Service};
use kube::CustomResourceExt;
use kube::runtime::reflector::ObjectRef;
use kubewright::testing::table::{EventExpectation, Fixtures, ReconcilerTestCase};
use kubewright::{Outcome, WriteStrategy};
use serde_json::json;

fn case(name: &str) -> ReconcilerTestCase<Database> {
    ReconcilerTestCase::new(name, ObjectRef::new("sample").within("default")).crd(Database::crd())
}

/// The sample Database as the cluster holds it once the finalizer is on.
fn database(version: &str) -> Fixtures<Database> {
    let mut db = sample("sample", version);
    db.metadata.finalizers = Some(vec!["example.dev/database".into()]);
    Fixtures::new(db)
}

#[tokio::test]
async fn a_new_database_creates_its_secret_service_and_stateful_set() -> anyhow::Result<()> {
    let fx = database("16");
    case("new database")
        .given(fx.parent())
        .expect_create(json!({
            "metadata": {"name": "sample-credentials"},
            "stringData": {"username": "postgres"},
        }))
        .expect_create(fx.child::<Service, _, _>(desired_service).await?)
        .expect_create(fx.child::<StatefulSet, _, _>(desired_stateful_set).await?)
        .expect_event(EventExpectation::normal("Created").note("Secret default/sample-credentials"))
        .expect_event(EventExpectation::normal("Created").note("Service default/sample"))
        .expect_event(EventExpectation::normal("Created").note("StatefulSet default/sample"))
        .expect_status_update(json!({
            "secretName": "sample-credentials",
            "endpoint": "sample.default.svc:5432",
        }))
        .run(Database::reconciler())
        .await?;
    Ok(())
}

#[tokio::test]
async fn an_unsupported_version_writes_no_child() -> anyhow::Result<()> {
    let fx = database("9.6");
    case("unsupported version")
        .given(fx.parent())
        .expect_event(
            EventExpectation::warning(UNSUPPORTED_VERSION).note("version 9.6 is not supported"),
        )
        .expect_status_update(json!({
            "message": "version 9.6 is not supported",
            "conditions": [{"type": "Ready", "status": "False", "reason": UNSUPPORTED_VERSION}],
        }))
        .expect_err("the invalid spec", |e| {
            e.to_string().contains("version 9.6 is not supported")
        })
        .run(Database::reconciler())
        .await?;
    Ok(())
}

#[tokio::test]
async fn a_database_in_place_is_ready_and_writes_only_its_status() -> anyhow::Result<()> {
    let fx = database("16");
    let secret: Secret = fx
        .child_written(desired_secret, WriteStrategy::CreateOnly)
        .await?;
    let mut set: StatefulSet = fx.child(desired_stateful_set).await?;
    set.metadata.generation = Some(1);
    // As the StatefulSet controller leaves it (with `collisionCount`, which a status write may not drop).
    set.status = Some(StatefulSetStatus {
        observed_generation: Some(1),
        replicas: 1,
        ready_replicas: Some(1),
        updated_replicas: Some(1),
        collision_count: Some(0),
        ..Default::default()
    });
    case("in place")
        .given(fx.parent())
        .given(secret)
        .given(fx.child::<Service, _, _>(desired_service).await?)
        .given(set)
        .expect_status_update(json!({
            "observedGeneration": 1,
            "secretName": "sample-credentials",
            "endpoint": "sample.default.svc:5432",
            "conditions": [
                {"type": "SecretReady", "status": "True"},
                {"type": "ServiceReady", "status": "True"},
                {"type": "StatefulSetReady", "status": "True"},
                {"type": "Ready", "status": "True"},
            ],
        }))
        .run(Database::reconciler())
        .await?;
    Ok(())
}

#[tokio::test]
async fn a_deleted_database_deletes_its_stateful_set_and_waits() -> anyhow::Result<()> {
    let fx = database("16");
    let mut db = fx.parent().clone();
    db.metadata.deletion_timestamp = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
        kubewright::testing::table::default_time(),
    ));
    case("deleted, StatefulSet there")
        .given(&db)
        .given(fx.child::<StatefulSet, _, _>(desired_stateful_set).await?)
        .expect_delete::<StatefulSet>(Some("default"), "sample")
        .expect_outcome(Outcome::RequeueAfter(std::time::Duration::from_secs(2)))
        .run(Database::reconciler())
        .await?;
    // Once it is gone, the finalizer goes and with it the Database.
    case("deleted, StatefulSet gone")
        .given(&db)
        .expect_patch(json!({"metadata": {"finalizers": []}}))
        .expect_outcome(Outcome::Halt)
        .run(Database::reconciler())
        .await?;
    Ok(())
}

/// The Database with `example.dev/paused: "true"`.
fn paused(db: &Database) -> Database {
    let mut db = db.clone();
    db.metadata
        .annotations
        .get_or_insert_with(Default::default)
        .insert("example.dev/paused".into(), "true".into());
    db
}

#[tokio::test]
async fn a_paused_database_writes_only_its_paused_condition() -> anyhow::Result<()> {
    let fx = database("16");
    // No child exists, yet none is created: only the status says why.
    case("paused, nothing in place")
        .given(&paused(fx.parent()))
        .expect_status_update(json!({
            "conditions": [
                {"type": "Paused", "status": "True", "reason": "Paused",
                 "message": "reconciling is paused by the annotation example.dev/paused; remove it to resume"},
                {"type": "Ready", "status": "False", "reason": "Paused"},
            ],
        }))
        .expect_event(EventExpectation::normal("Paused"))
        .expect_outcome(Outcome::Halt)
        .run(Database::reconciler())
        .await?;
    Ok(())
}

#[tokio::test]
async fn a_paused_database_is_still_finalized_unless_the_author_opts_out() -> anyhow::Result<()> {
    let fx = database("16");
    let mut db = paused(fx.parent());
    db.metadata.deletion_timestamp = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
        kubewright::testing::table::default_time(),
    ));
    case("paused and deleted")
        .given(&db)
        .given(fx.child::<StatefulSet, _, _>(desired_stateful_set).await?)
        .expect_delete::<StatefulSet>(Some("default"), "sample")
        .expect_outcome(Outcome::RequeueAfter(std::time::Duration::from_secs(2)))
        .run(Database::reconciler())
        .await?;
    case("paused and deleted, finalizing opted out")
        .given(&db)
        .given(fx.child::<StatefulSet, _, _>(desired_stateful_set).await?)
        .expect_outcome(Outcome::Halt)
        .run(Database::reconciler().finalize_while_paused(false))
        .await?;
    Ok(())
}
