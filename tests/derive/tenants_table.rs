//! Table tests of the `tenants` example: one pass of the derived reconciler over given state
//! (`kubewright::testing::table`).

use std::collections::BTreeMap;

use examples::tenants::{
    ADMIN_ROLE, BINDING_NAME, CPU_LIMIT, ENTRY_LABEL, QUOTA_NAME, RBAC_GROUP, Tenant, reconciler,
};
use k8s_openapi::api::core::v1::{Namespace, ResourceQuota, ResourceQuotaSpec};
use k8s_openapi::api::rbac::v1::{RoleBinding, RoleRef, Subject};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use kube::runtime::reflector::ObjectRef;
use kube::{CustomResourceExt, Resource};
use kubewright::TrackKey;
use kubewright::reconcilers::{DESIRED_HASH, desired_hash};
use kubewright::testing::table::{EventExpectation, ReconcilerTestCase};
use serde::Serialize;
use serde_json::{Value, json};

const UID: &str = "6d3c2a8e-5b1f-4c2e-9a47-00000000ac3e";
/// The harness's default time, as conditions carry it.
const T0: &str = "2025-01-01T00:00:00Z";

fn case(name: &str) -> ReconcilerTestCase<Tenant> {
    ReconcilerTestCase::new(name, ObjectRef::new("acme")).crd(Tenant::crd())
}

/// The tenant `acme` as the cluster holds it.
fn tenant(entries: &[&str], status: Option<Value>) -> Value {
    let mut t = json!({
        "apiVersion": "tenants.example.dev/v1",
        "kind": "Tenant",
        "metadata": {"name": "acme", "uid": UID, "generation": 1},
        "spec": {"namespaces": entries, "cpuQuota": "2", "admins": ["alice"]},
    });
    if let Some(status) = status {
        t["status"] = status;
    }
    t
}

fn condition(type_: &str, status: &str, reason: &str, message: &str) -> Value {
    json!({
        "type": type_, "status": status, "reason": reason, "message": message,
        "lastTransitionTime": T0, "observedGeneration": 1,
    })
}

/// The status of a tenant whose children are all in place.
fn converged(namespaces: &[&str]) -> Value {
    json!({
        "observedGeneration": 1,
        "conditions": [
            condition("NamespacesReady", "True", "Reconciled", ""),
            condition("ResourceQuotasReady", "True", "Reconciled", ""),
            condition("RoleBindingsReady", "True", "Reconciled", ""),
            condition("Ready", "True", "Ready", ""),
        ],
        "namespaces": namespaces,
    })
}

fn owner() -> Value {
    json!({
        "apiVersion": "tenants.example.dev/v1", "kind": "Tenant", "name": "acme", "uid": UID,
        "controller": true, "blockOwnerDeletion": true,
    })
}

fn namespace(entry: &str) -> Namespace {
    let mut ns = Namespace::default();
    ns.metadata.name = Some(format!("acme-{entry}"));
    ns.metadata.labels = Some(BTreeMap::from([(ENTRY_LABEL.into(), entry.into())]));
    ns
}

fn quota(ns: &str) -> ResourceQuota {
    let mut q = ResourceQuota::default();
    q.metadata.name = Some(QUOTA_NAME.into());
    q.metadata.namespace = Some(ns.into());
    q.spec = Some(ResourceQuotaSpec {
        hard: Some(BTreeMap::from([(CPU_LIMIT.into(), Quantity("2".into()))])),
        ..Default::default()
    });
    q
}

fn binding(ns: &str) -> RoleBinding {
    let mut b = RoleBinding::default();
    b.metadata.name = Some(BINDING_NAME.into());
    b.metadata.namespace = Some(ns.into());
    b.role_ref = RoleRef {
        api_group: RBAC_GROUP.into(),
        kind: "ClusterRole".into(),
        name: ADMIN_ROLE.into(),
    };
    b.subjects = Some(vec![Subject {
        kind: "User".into(),
        api_group: Some(RBAC_GROUP.into()),
        name: "alice".into(),
        namespace: None,
    }]);
    b
}

/// A desired child as the runtime left it on the cluster: its desired-state hash and the tenant as controller.
fn live<K: Resource<DynamicType = ()> + Serialize + Clone>(desired: K) -> Value {
    let hash = desired_hash(&desired).expect("hash");
    let mut v = serde_json::to_value(&desired).expect("json");
    v["apiVersion"] = json!(K::api_version(&()));
    v["kind"] = json!(K::kind(&()));
    v["metadata"]["annotations"] = json!({ DESIRED_HASH: hash });
    v["metadata"]["ownerReferences"] = json!([owner()]);
    v["metadata"]["labels"][kubewright::OWNER_LABEL] = json!(UID);
    v
}

/// The namespace, quota and binding of an entry, all in place.
fn entry(case: ReconcilerTestCase<Tenant>, e: &str) -> ReconcilerTestCase<Tenant> {
    let ns = format!("acme-{e}");
    case.given(live(namespace(e)))
        .given(live(quota(&ns)))
        .given(live(binding(&ns)))
}

fn applied<K: Resource<DynamicType = ()> + Serialize>(child: K) -> Value {
    let mut v = serde_json::to_value(child).expect("json");
    v["kind"] = json!(K::kind(&()));
    v["metadata"]["ownerReferences"] = json!([owner()]);
    v
}

#[tokio::test]
async fn two_entries_make_a_namespace_a_quota_and_a_binding_each() {
    let mut case = case("two entries").given(tenant(&["dev", "prod"], None));
    for e in ["dev", "prod"] {
        case = case.expect_create(applied(namespace(e)));
    }
    for ns in ["acme-dev", "acme-prod"] {
        case = case.expect_create(applied(quota(ns)));
    }
    for ns in ["acme-dev", "acme-prod"] {
        case = case.expect_create(applied(binding(ns)));
    }
    for note in [
        "Namespace acme-dev",
        "Namespace acme-prod",
        "ResourceQuota acme-dev/tenant-quota",
        "ResourceQuota acme-prod/tenant-quota",
        "RoleBinding acme-dev/tenant-admins",
        "RoleBinding acme-prod/tenant-admins",
    ] {
        case = case.expect_event(EventExpectation::normal("Created").note(note));
    }
    case.expect_status_update(converged(&["acme-dev", "acme-prod"]))
        .run(reconciler())
        .await
        .unwrap();
}

#[tokio::test]
async fn a_removed_entry_deletes_its_namespace() {
    let case = case("entry removed").given(tenant(
        &["dev"],
        Some(converged(&["acme-dev", "acme-prod"])),
    ));
    let case = entry(entry(case, "dev"), "prod");
    // Only the Namespace is deleted: the embedded cluster's namespace controller empties acme-prod as the
    // delete is answered, so the quota and binding steps find nothing left of acme-prod to delete (on a bare
    // kube-apiserver they delete them: `tests/envtest/tenants.rs`).
    case.expect_delete::<Namespace>(None, "acme-prod")
        .expect_event(
            EventExpectation::normal("Deleted")
                .note("Deleted Namespace acme-prod: no desired Namespace has this name"),
        )
        .expect_status_update(json!({"namespaces": ["acme-dev"]}))
        .run(reconciler())
        .await
        .unwrap();
}

#[tokio::test]
async fn a_foreign_namespace_is_refused_and_nothing_is_written_into_it() {
    let message = "Namespace acme-prod exists and is not controlled by Tenant acme";
    let foreign = json!({
        "apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": "acme-prod", "labels": {"team": "payments"}},
    });
    let case = case("foreign namespace")
        .given(tenant(&["dev", "prod"], Some(converged(&["acme-dev"]))))
        .given(foreign);
    // Only acme-dev is the tenant's: its children are in place, and no write goes to acme-prod.
    entry(case, "dev")
        // Its deletion or its change brings the tenant back.
        .expect_track(TrackKey::name::<Namespace>(None, "acme-prod"))
        .expect_status_update(json!({
            "observedGeneration": 1,
            "conditions": [
                condition("NamespacesReady", "False", "NotOwned", message),
                condition("ResourceQuotasReady", "True", "Reconciled", ""),
                condition("RoleBindingsReady", "True", "Reconciled", ""),
                condition("Ready", "False", "NotOwned", message),
            ],
            "namespaces": ["acme-dev"],
        }))
        .run(reconciler())
        .await
        .unwrap();
}

#[tokio::test]
async fn an_edited_entry_label_is_put_back_not_deleted() {
    // `kubectl label ns acme-dev tenants.example.dev/entry=zzz --overwrite`
    let mut edited = live(namespace("dev"));
    edited["metadata"]["labels"] = json!({ ENTRY_LABEL: "zzz" });
    let case = case("edited entry label")
        .given(tenant(&["dev"], Some(converged(&["acme-dev"]))))
        .given(edited)
        .given(live(quota("acme-dev")))
        .given(live(binding("acme-dev")));
    case.expect_apply(applied(namespace("dev")))
        .expect_event(EventExpectation::normal("Updated").note("Namespace acme-dev"))
        .run(reconciler())
        .await
        .unwrap();
}
