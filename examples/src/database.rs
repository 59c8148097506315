//! The `Database` operator: a PostgreSQL StatefulSet, a headless Service and a generated password, written with
//! `#[derive(Reconciler)]`; what the WebApp does not show: an `async` step, a child created once and never
//! written again, optional status fields that come and go, readiness of a StatefulSet, and a finalizer that
//! waits for a child to be gone.
//!
//! A `Database` (`example.dev/v1`, short name `db`) names a PostgreSQL major `version`, `replicas`, the
//! `storage` of each replica and an optional `memory` limit. The operator keeps:
//! - a Secret `<name>-credentials` with `username: postgres` and a random `password` of 32 characters,
//!   created once and never written again (`strategy = "create"`): a pass that runs before the cache has seen
//!   it, or a restarted operator, does not generate another;
//! - a StatefulSet `<name>` (container `postgres`, image `postgres:<version>`, the password from the Secret,
//!   `memory` as its memory limit, a volume claim template `data` of `storage`);
//! - a headless Service `<name>` on port 5432.
//!
//! The version is checked first ([`check_version`], an `async fn`): a major outside 14 to 17 sets
//! `status.message`, `Ready=False` with reason `UnsupportedVersion` and a Warning event, and leaves every
//! child as it is; a supported one clears the message. `status.endpoint` is `<name>.<namespace>.svc:5432` once
//! the Service exists, `status.secretName` names the Secret, and `Ready` is `True` only when the StatefulSet's
//! ready replicas reach `replicas`. Deleting a Database deletes its StatefulSet first and holds the Database
//! (finalizer [`FINALIZER`]) until the StatefulSet is gone, for at most [`FINALIZE_BOUND`].
//!
//! `cargo run --example database` runs it on the embedded cluster with a sample Database ([`kubewright::cli`]).

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::apps::v1::{StatefulSet, StatefulSetSpec};
use k8s_openapi::api::core::v1::{
    Container, ContainerPort, EnvVar, EnvVarSource, PersistentVolumeClaim,
    PersistentVolumeClaimSpec, PodSpec, PodTemplateSpec, ResourceRequirements, Secret,
    SecretKeySelector, Service, ServicePort, ServiceSpec, VolumeMount, VolumeResourceRequirements,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, LabelSelector, ObjectMeta};
use kube::{CustomResource, ResourceExt};
use kubewright::cli::App;
use kubewright::command::{Command, Target};
use kubewright::manifests::Manifests;
use kubewright::{ChildOutcome, Context, Error, Outcome, Reconciler, ReconcilerStatus};
use rand::Rng;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The finalizer that holds a Database until its StatefulSet is gone.
pub const FINALIZER: &str = "example.dev/database";
/// How long a deleted Database waits for its StatefulSet before it lets go anyway (with a Warning event).
pub const FINALIZE_BOUND: Duration = Duration::from_secs(300);
/// The PostgreSQL majors the operator runs.
pub const SUPPORTED_MAJORS: std::ops::RangeInclusive<u32> = 14..=17;
/// The reason of `Ready=False` for a version outside [`SUPPORTED_MAJORS`].
pub const UNSUPPORTED_VERSION: &str = "UnsupportedVersion";
/// The port PostgreSQL serves on.
pub const PORT: i32 = 5432;
/// The label selecting a database's pods.
pub const INSTANCE_LABEL: &str = "app.kubernetes.io/instance";
/// How many characters a generated password has.
pub const PASSWORD_LENGTH: usize = 32;

/// A PostgreSQL database.
#[derive(
    CustomResource, Reconciler, Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema,
)]
#[kube(
    group = "example.dev",
    version = "v1",
    kind = "Database",
    namespaced,
    status = "DatabaseStatus",
    shortname = "db",
    printcolumn = r#"{"name":"Version","type":"string","jsonPath":".spec.version"}"#,
    printcolumn = r#"{"name":"Endpoint","type":"string","jsonPath":".status.endpoint"}"#,
    printcolumn = r#"{"name":"Ready","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].status"}"#
)]
#[reconciler(name = "database-controller", finalizer = "example.dev/database")]
#[sync(check_version)]
#[child(desired = desired_secret, strategy = "create", reflect = reflect_secret)]
#[child(desired = desired_service, reflect = reflect_service)]
#[child(desired = desired_stateful_set)]
#[finalize(wait_for_stateful_set)]
#[serde(rename_all = "camelCase")]
pub struct DatabaseSpec {
    /// The PostgreSQL major version, e.g. `"16"` (14 to 17).
    pub version: String,
    /// How many instances to run.
    #[serde(default = "default_replicas")]
    #[schemars(range(min = 0))]
    pub replicas: i32,
    /// The storage of each instance, e.g. `1Gi`.
    pub storage: Quantity,
    /// The memory limit of each instance, e.g. `512Mi`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<Quantity>,
}

fn default_replicas() -> i32 {
    1
}

/// What the operator observed of a Database.
#[derive(
    Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, ReconcilerStatus,
)]
#[serde(rename_all = "camelCase")]
pub struct DatabaseStatus {
    /// The generation this status describes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    /// `Ready`, rolled up from the children's conditions.
    #[serde(default)]
    pub conditions: Vec<Condition>,
    /// `<name>.<namespace>.svc:5432`, once the Service exists.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    /// Why the database cannot be run as asked (an unsupported version), if so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The Secret holding the credentials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_name: Option<String>,
}

/// The name of a database's Secret: `<name>-credentials`.
pub fn secret_name(db: &Database) -> String {
    format!("{}-credentials", db.name_any())
}

fn labels(db: &Database) -> BTreeMap<String, String> {
    BTreeMap::from([(INSTANCE_LABEL.to_string(), db.name_any())])
}

/// Checks `spec.version` (an `async` step, as one asking a registry would be): a major outside
/// [`SUPPORTED_MAJORS`] stops the pass before any child is touched, with the reason in `status.message`.
pub async fn check_version(db: &mut Database, _cx: &mut Context) -> kubewright::Result<Outcome> {
    let version = db.spec.version.trim().to_string();
    let major = version
        .split('.')
        .next()
        .and_then(|m| m.parse::<u32>().ok());
    let status = db.status.get_or_insert_with(Default::default);
    if major.is_some_and(|m| SUPPORTED_MAJORS.contains(&m)) {
        status.message = None;
        return Ok(Outcome::Continue);
    }
    let message = format!("version {version} is not supported");
    status.message = Some(message.clone());
    Err(Error::invalid_spec(UNSUPPORTED_VERSION, message))
}

/// A random password of [`PASSWORD_LENGTH`] letters and digits.
pub fn generate_password() -> String {
    rand::rng()
        .sample_iter(rand::distr::Alphanumeric)
        .take(PASSWORD_LENGTH)
        .map(char::from)
        .collect()
}

/// The credentials Secret: created once with a generated password, never written again.
pub fn desired_secret(db: &Database, _cx: &mut Context) -> kubewright::Result<Option<Secret>> {
    Ok(Some(Secret {
        metadata: ObjectMeta {
            name: Some(secret_name(db)),
            labels: Some(labels(db)),
            ..Default::default()
        },
        string_data: Some(BTreeMap::from([
            ("username".to_string(), "postgres".to_string()),
            ("password".to_string(), generate_password()),
        ])),
        ..Default::default()
    }))
}

/// Reports the Secret's name.
pub fn reflect_secret(status: &mut DatabaseStatus, outcome: &ChildOutcome<Secret>) {
    outcome.reflect_into(&mut status.secret_name, |s| Some(s.name_any()));
}

/// The headless Service `<name>` on port 5432.
pub fn desired_service(db: &Database, _cx: &mut Context) -> kubewright::Result<Option<Service>> {
    Ok(Some(Service {
        metadata: ObjectMeta {
            name: Some(db.name_any()),
            labels: Some(labels(db)),
            ..Default::default()
        },
        spec: Some(ServiceSpec {
            cluster_ip: Some("None".into()),
            selector: Some(labels(db)),
            ports: Some(vec![ServicePort {
                name: Some("postgres".into()),
                port: PORT,
                ..Default::default()
            }]),
            ..Default::default()
        }),
        ..Default::default()
    }))
}

/// Reports the endpoint clients connect to once the Service exists.
pub fn reflect_service(status: &mut DatabaseStatus, outcome: &ChildOutcome<Service>) {
    outcome.reflect_into(&mut status.endpoint, |s| {
        Some(format!("{}.{}.svc:{PORT}", s.name_any(), s.namespace()?))
    });
}

/// The StatefulSet `<name>`: `replicas` PostgreSQL pods of `version`, the password from the Secret, `memory`
/// as their memory limit, and a volume claim `data` of `storage` each.
pub fn desired_stateful_set(
    db: &Database,
    _cx: &mut Context,
) -> kubewright::Result<Option<StatefulSet>> {
    let resources = db.spec.memory.as_ref().map(|m| ResourceRequirements {
        limits: Some(BTreeMap::from([("memory".to_string(), m.clone())])),
        ..Default::default()
    });
    let password = EnvVarSource {
        secret_key_ref: Some(SecretKeySelector {
            name: secret_name(db),
            key: "password".into(),
            ..Default::default()
        }),
        ..Default::default()
    };
    let container = Container {
        name: "postgres".into(),
        image: Some(format!("postgres:{}", db.spec.version.trim())),
        ports: Some(vec![ContainerPort {
            name: Some("postgres".into()),
            container_port: PORT,
            ..Default::default()
        }]),
        env: Some(vec![EnvVar {
            name: "POSTGRES_PASSWORD".into(),
            value_from: Some(password),
            ..Default::default()
        }]),
        resources,
        volume_mounts: Some(vec![VolumeMount {
            name: "data".into(),
            mount_path: "/var/lib/postgresql/data".into(),
            ..Default::default()
        }]),
        ..Default::default()
    };
    let claim = PersistentVolumeClaim {
        metadata: ObjectMeta {
            name: Some("data".into()),
            ..Default::default()
        },
        spec: Some(PersistentVolumeClaimSpec {
            access_modes: Some(vec!["ReadWriteOnce".into()]),
            resources: Some(VolumeResourceRequirements {
                requests: Some(BTreeMap::from([(
                    "storage".to_string(),
                    db.spec.storage.clone(),
                )])),
                ..Default::default()
            }),
            ..Default::default()
        }),
        ..Default::default()
    };
    Ok(Some(StatefulSet {
        metadata: ObjectMeta {
            name: Some(db.name_any()),
            labels: Some(labels(db)),
            ..Default::default()
        },
        spec: Some(StatefulSetSpec {
            replicas: Some(db.spec.replicas),
            service_name: Some(db.name_any()),
            selector: LabelSelector {
                match_labels: Some(labels(db)),
                ..Default::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels(db)),
                    ..Default::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![container],
                    ..Default::default()
                }),
            },
            volume_claim_templates: Some(vec![claim]),
            ..Default::default()
        }),
        ..Default::default()
    }))
}

/// While a Database is deleted: deletes its StatefulSet and holds the Database until the StatefulSet is gone,
/// checking every 2 seconds, for at most [`FINALIZE_BOUND`] (then lets go with a Warning event).
pub async fn wait_for_stateful_set(
    db: &mut Database,
    cx: &mut Context,
) -> kubewright::Result<Outcome> {
    let namespace = db.namespace();
    let name = db.name_any();
    // Read past the cache (which may lag behind a delete), and write through the context, so the runtime
    // sees, records and can test this write like every other.
    let Some(live) = cx.read::<StatefulSet>(namespace.as_deref(), &name).await? else {
        return Ok(Outcome::Continue);
    };
    let waited = db
        .metadata
        .deletion_timestamp
        .as_ref()
        .and_then(|t| cx.now().duration_since(t.0).try_into().ok())
        .unwrap_or(Duration::ZERO);
    if waited >= FINALIZE_BOUND {
        let note = format!(
            "StatefulSet {name} still exists after {}s; letting the Database go",
            FINALIZE_BOUND.as_secs()
        );
        cx.event(true, "FinalizeTimeout", "Finalize", note).await;
        return Ok(Outcome::Continue);
    }
    if live.metadata.deletion_timestamp.is_none() {
        cx.execute(Command::Delete {
            target: Target::of(&live),
            uid: live.metadata.uid.clone(),
        })
        .await?;
    }
    Ok(Outcome::RequeueAfter(Duration::from_secs(2)))
}

/// The reconciler, as the derive generates it.
pub fn reconciler() -> Reconciler<Database> {
    Database::reconciler()
}

/// The Database operator's command line ([`kubewright::cli`]). Its Secret cache holds the Secrets it wrote
/// (by the runtime's owner label), not every Secret of the cluster; the embedded cluster gets a sample.
pub fn app() -> App {
    App::new("database-operator")
        .namespace("database-system")
        .image("example.dev/database-operator:latest")
        .operate::<Database>()
        .configure(|op| op.cache::<Secret>(kubewright::CacheOptions::owned()))
        .sample(sample(SAMPLE_NAME, "16"))
        .log(summary)
        .kubectl_hint("get databases,statefulsets,services,secrets")
}

/// The installation `database manifests` prints: the CRD, its Namespace, ServiceAccount, the ClusterRole
/// derived from the wiring, its binding and the Deployment.
pub fn installation() -> Manifests {
    app().installation()
}

/// A Database `name` in `default` running `version` with 1 replica of 1Gi.
pub fn sample(name: &str, version: &str) -> Database {
    let mut db = Database::new(
        name,
        DatabaseSpec {
            version: version.into(),
            replicas: 1,
            storage: Quantity("1Gi".into()),
            memory: None,
        },
    );
    db.metadata.namespace = Some("default".into());
    db
}

/// The name of the sample Database created on the embedded cluster.
pub const SAMPLE_NAME: &str = "sample";

/// The line logged for a Database when its status changes.
fn summary(db: &Database) -> String {
    let status = db.status.clone().unwrap_or_default();
    format!(
        "ready={} endpoint={:?} secret={:?} message={:?}",
        kubewright::cli::ready(&status.conditions),
        status.endpoint,
        status.secret_name,
        status.message,
    )
}
