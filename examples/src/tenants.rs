//! The `Tenant` operator: three child sets, across namespaces, of a cluster-scoped parent, written with
//! `#[derive(Reconciler)]`.
//!
//! A `Tenant` (`tenants.example.dev/v1`, cluster-scoped) lists namespaces, a CPU quota and admins. For each
//! entry of `spec.namespaces` the operator keeps a Namespace `<tenant>-<entry>` (labelled [`ENTRY_LABEL`]), and
//! in it a ResourceQuota [`QUOTA_NAME`] with `hard["limits.cpu"] = cpuQuota` and a RoleBinding
//! [`BINDING_NAME`] binding the ClusterRole [`ADMIN_ROLE`] to the users in `spec.admins`.
//!
//! - Removing an entry deletes its Namespace (and so everything in it); deleting the Tenant removes its
//!   Namespaces through their owner references (garbage collection).
//! - A Namespace of a wanted name that the tenant does not control is refused, `Ready=False` with reason
//!   `NotOwned`, and left untouched: the quota and binding steps read what the Namespace step decided in the
//!   same pass ([`Context::child_outcomes`]) and put nothing into a namespace the tenant does not own, nor into
//!   one being deleted.
//! - `status.namespaces` lists the tenant's Namespaces that exist and are not being deleted, sorted.
//!
//! Writing a RoleBinding to `admin` needs `bind` on it (RBAC's escalation check): the derived ClusterRole
//! grants `bind`, narrowed by [`manifests`] to the ClusterRole `admin`.
//!
//! `cargo run --example tenants` runs it on the embedded cluster with a sample tenant ([`kubewright::cli`]).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Namespace, ResourceQuota, ResourceQuotaSpec};
use k8s_openapi::api::rbac::v1::{RoleBinding, RoleRef, Subject};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta};
use kube::{CustomResource, ResourceExt};
use kubewright::cli::App;
use kubewright::manifests::Manifests;
use kubewright::{ChildOutcome, Context, Reconciler, ReconcilerStatus};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The label naming the entry of `spec.namespaces` a Namespace is for.
pub const ENTRY_LABEL: &str = "tenants.example.dev/entry";
/// The name of the ResourceQuota in each of a tenant's namespaces.
pub const QUOTA_NAME: &str = "tenant-quota";
/// The name of the RoleBinding in each of a tenant's namespaces.
pub const BINDING_NAME: &str = "tenant-admins";
/// The ClusterRole the admins are bound to in each namespace.
pub const ADMIN_ROLE: &str = "admin";
/// The resource a quota limits.
pub const CPU_LIMIT: &str = "limits.cpu";
/// The API group of RBAC objects (and of `User` subjects).
pub const RBAC_GROUP: &str = "rbac.authorization.k8s.io";
/// The operator's name in its manifests.
pub const OPERATOR_NAME: &str = "tenants-operator";
/// The namespace the manifests install the operator into.
pub const OPERATOR_NAMESPACE: &str = "tenants-system";

/// A tenant: namespaces with a CPU quota and admins.
#[derive(
    CustomResource, Reconciler, Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema,
)]
#[kube(
    group = "tenants.example.dev",
    version = "v1",
    kind = "Tenant",
    status = "TenantStatus",
    printcolumn = r#"{"name":"Ready","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].status"}"#,
    printcolumn = r#"{"name":"Namespaces","type":"string","jsonPath":".status.namespaces"}"#
)]
#[reconciler(name = "tenants-controller")]
#[children(desired = desired_namespaces, id = entry, reflect = reflect_namespaces)]
#[children(desired = desired_quotas, id = namespace_of)]
#[children(desired = desired_bindings, id = namespace_of)]
#[serde(rename_all = "camelCase")]
pub struct TenantSpec {
    /// The tenant's namespaces, each created as `<tenant>-<entry>` (lowercase DNS labels).
    #[serde(default)]
    pub namespaces: Vec<String>,
    /// The CPU limit of each namespace (`hard["limits.cpu"]` of its ResourceQuota), e.g. `4` or `500m`.
    pub cpu_quota: Quantity,
    /// The users bound to the ClusterRole `admin` in each namespace.
    #[serde(default)]
    pub admins: Vec<String>,
}

/// What the operator observed of a tenant.
#[derive(
    Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, ReconcilerStatus,
)]
#[serde(rename_all = "camelCase")]
pub struct TenantStatus {
    /// The generation this status describes.
    pub observed_generation: Option<i64>,
    /// `Ready`, rolled up from `NamespacesReady`, `ResourceQuotasReady` and `RoleBindingsReady`.
    #[serde(default)]
    pub conditions: Vec<Condition>,
    /// The tenant's Namespaces that exist and are not being deleted, sorted.
    #[serde(default)]
    pub namespaces: Vec<String>,
}

/// The name of the Namespace of `entry`: `<tenant>-<entry>`.
pub fn namespace_name(tenant: &Tenant, entry: &str) -> String {
    format!("{}-{entry}", tenant.name_any())
}

/// One Namespace per entry, labelled with the entry.
pub fn desired_namespaces(tenant: &Tenant, _cx: &mut Context) -> kubewright::Result<Vec<Namespace>> {
    Ok(tenant
        .spec
        .namespaces
        .iter()
        .map(|entry| Namespace {
            metadata: ObjectMeta {
                name: Some(namespace_name(tenant, entry)),
                labels: Some(BTreeMap::from([(ENTRY_LABEL.to_string(), entry.clone())])),
                ..Default::default()
            },
            ..Default::default()
        })
        .collect())
}

/// The entry a Namespace is for, from its label (only reported: the runtime matches children by name).
pub fn entry(namespace: &Namespace) -> String {
    namespace
        .labels()
        .get(ENTRY_LABEL)
        .cloned()
        .unwrap_or_default()
}

/// The namespace a quota or binding lives in: its id in its set (it cannot be edited on a live object).
pub fn namespace_of<K: kube::Resource>(object: &K) -> String {
    object.meta().namespace.clone().unwrap_or_default()
}

/// The namespaces the Namespace step of this pass has in place for the tenant: controlled by it (not refused
/// as `NotOwned`) and not being deleted. Quotas and bindings go into these only.
pub fn owned_namespaces(cx: &Context) -> Vec<String> {
    let mut names: Vec<String> = cx
        .child_outcomes::<Namespace>()
        .into_iter()
        .flatten()
        .filter(|(_, outcome)| !outcome.is_terminating())
        .filter_map(|(_, outcome)| outcome.child()?.metadata.name.clone())
        .collect();
    names.sort();
    names.dedup();
    names
}

/// A ResourceQuota [`QUOTA_NAME`] limiting `limits.cpu` to `cpuQuota` in each namespace the tenant owns.
pub fn desired_quotas(tenant: &Tenant, cx: &mut Context) -> kubewright::Result<Vec<ResourceQuota>> {
    Ok(owned_namespaces(cx)
        .into_iter()
        .map(|namespace| ResourceQuota {
            metadata: ObjectMeta {
                name: Some(QUOTA_NAME.to_string()),
                namespace: Some(namespace),
                ..Default::default()
            },
            spec: Some(ResourceQuotaSpec {
                hard: Some(BTreeMap::from([(
                    CPU_LIMIT.to_string(),
                    tenant.spec.cpu_quota.clone(),
                )])),
                ..Default::default()
            }),
            ..Default::default()
        })
        .collect())
}

/// A RoleBinding [`BINDING_NAME`] of the ClusterRole [`ADMIN_ROLE`] to the tenant's admins (as users) in each
/// namespace the tenant owns.
pub fn desired_bindings(tenant: &Tenant, cx: &mut Context) -> kubewright::Result<Vec<RoleBinding>> {
    let subjects: Vec<Subject> = tenant
        .spec
        .admins
        .iter()
        .map(|user| Subject {
            kind: "User".into(),
            api_group: Some(RBAC_GROUP.into()),
            name: user.clone(),
            namespace: None,
        })
        .collect();
    // No subjects at all is left out rather than written as `[]`, which the server would not store.
    let subjects = (!subjects.is_empty()).then_some(subjects);
    Ok(owned_namespaces(cx)
        .into_iter()
        .map(|namespace| RoleBinding {
            metadata: ObjectMeta {
                name: Some(BINDING_NAME.to_string()),
                namespace: Some(namespace),
                ..Default::default()
            },
            role_ref: RoleRef {
                api_group: RBAC_GROUP.into(),
                kind: "ClusterRole".into(),
                name: ADMIN_ROLE.into(),
            },
            subjects: subjects.clone(),
        })
        .collect())
}

/// Lists the tenant's Namespaces that exist and are not being deleted, sorted.
pub fn reflect_namespaces(
    status: &mut TenantStatus,
    namespaces: &BTreeMap<String, ChildOutcome<Namespace>>,
) {
    let mut names: Vec<String> = namespaces
        .values()
        .filter(|outcome| !outcome.is_terminating())
        .filter_map(|outcome| outcome.child()?.metadata.name.clone())
        .collect();
    names.sort();
    names.dedup();
    status.namespaces = names;
}

/// The reconciler, as the derive generates it.
pub fn reconciler() -> Reconciler<Tenant> {
    Tenant::reconciler()
}

/// The Tenant operator's command line ([`kubewright::cli`]): the installation's `bind` narrowed to the ClusterRole
/// `admin`; the embedded cluster gets a sample tenant.
pub fn app() -> App {
    App::new(OPERATOR_NAME)
        .namespace(OPERATOR_NAMESPACE)
        .image("example.dev/tenants-operator:latest")
        .operate::<Tenant>()
        .manifests(|m| m.bind_only([("ClusterRole", ADMIN_ROLE)]))
        .sample(sample(SAMPLE_NAME, &["dev", "prod"], "4", &["alice"]))
        .log(summary)
        .kubectl_hint("get tenants,namespaces,resourcequotas,rolebindings -A")
}

/// The installation `tenants manifests` prints: the CRD, its ServiceAccount, the ClusterRole derived from the
/// wiring (with `bind` narrowed to the ClusterRole `admin`), the binding and the Deployment.
pub fn installation() -> Manifests {
    app().installation()
}

/// A tenant `name` with these entries, CPU quota and admins.
pub fn sample(name: &str, namespaces: &[&str], cpu_quota: &str, admins: &[&str]) -> Tenant {
    Tenant::new(
        name,
        TenantSpec {
            namespaces: namespaces.iter().map(|n| n.to_string()).collect(),
            cpu_quota: Quantity(cpu_quota.to_string()),
            admins: admins.iter().map(|a| a.to_string()).collect(),
        },
    )
}

/// The name of the sample Tenant created on the embedded cluster.
pub const SAMPLE_NAME: &str = "acme";

/// The line logged for a Tenant when its status changes.
fn summary(tenant: &Tenant) -> String {
    let status = tenant.status.clone().unwrap_or_default();
    format!(
        "generation={:?} observedGeneration={:?} ready={} namespaces={:?}",
        tenant.metadata.generation,
        status.observed_generation,
        kubewright::cli::ready(&status.conditions),
        status.namespaces,
    )
}
