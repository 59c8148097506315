//! One scenario of the `database` operator, run on the embedded cluster and on a real kube-apiserver: it
//! converges (Ready once the StatefulSet's replicas are ready), a converged operator writes nothing and emits
//! nothing, the generated password survives spec changes and a restart, an unsupported version is reported
//! and leaves every child untouched, a supported one clears the message from the stored status, each child
//! is announced by its own event, and deleting the Database waits for its StatefulSet. The operator is the
//! example's own (its Secret cache holds only the Secrets it wrote).

use std::time::Duration;

use examples::database::{Database, SAMPLE_NAME, UNSUPPORTED_VERSION, app, sample};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::api::events::v1::Event;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::{Client, CustomResourceExt};
use kubewright::Operator;
use serde_json::{Value, json};

use crate::tenants_scenario::eventually;

/// A running operator: stop it by sending on `stop`, then await `running`.
struct Running {
    stop: tokio::sync::oneshot::Sender<()>,
    running: tokio::task::JoinHandle<Result<(), kubewright::RunError>>,
}

fn start(client: Client) -> Running {
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(app().operator(Operator::new(client)).run_until(async move {
        let _ = stopped.await;
    }));
    Running { stop, running }
}

impl Running {
    async fn stop(self) {
        let _ = self.stop.send(());
        self.running
            .await
            .expect("the operator task")
            .expect("the operator ran");
    }
}

/// The Database as stored, as JSON (so a field left out is seen as absent, not as a default).
async fn stored(dbs: &Api<Database>) -> Value {
    let raw = dbs.get(SAMPLE_NAME).await.expect("get the Database");
    serde_json::to_value(raw).expect("json")
}

/// `(Ready status, reason)` of the current generation's status, or `None` while the status describes an older
/// generation.
fn ready(db: &Value) -> Option<(String, String)> {
    if db["status"]["observedGeneration"] != db["metadata"]["generation"] {
        return None;
    }
    let ready = db["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == "Ready")?;
    Some((
        ready["status"].as_str()?.to_string(),
        ready["reason"].as_str()?.to_string(),
    ))
}

async fn wait_ready(dbs: &Api<Database>, status: &str, reason: &str) -> Value {
    eventually(&format!("Ready={status} ({reason})"), async || {
        let db = stored(dbs).await;
        match ready(&db) {
            Some((s, r)) if s == status && r == reason => Ok(db),
            _ => Err(db["status"].clone()),
        }
    })
    .await
}

async fn password(secrets: &Api<Secret>) -> String {
    let secret = secrets
        .get(&format!("{SAMPLE_NAME}-credentials"))
        .await
        .expect("the credentials Secret");
    let data = secret.data.expect("data");
    String::from_utf8(data["password"].0.clone()).expect("utf-8 password")
}

/// The operator's events about the Database, as `(type, reason, note, related kind/name)`.
async fn events(client: &Client, namespace: &str) -> Vec<(String, String, String, String)> {
    let events: Api<Event> = Api::namespaced(client.clone(), namespace);
    events
        .list(&ListParams::default())
        .await
        .expect("list events")
        .items
        .into_iter()
        .filter(|e| {
            e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(SAMPLE_NAME)
                && e.regarding.as_ref().and_then(|r| r.kind.as_deref()) == Some("Database")
        })
        .map(|e| {
            let related = e
                .related
                .as_ref()
                .map(|r| {
                    format!(
                        "{}/{}",
                        r.kind.clone().unwrap_or_default(),
                        r.name.clone().unwrap_or_default()
                    )
                })
                .unwrap_or_default();
            (
                e.type_.unwrap_or_default(),
                e.reason.unwrap_or_default(),
                e.note.unwrap_or_default(),
                related,
            )
        })
        .collect()
}

/// Waits a quiet period and returns the writes the operator made meanwhile.
async fn quiet_writes(writes: &dyn Fn() -> Vec<String>) -> Vec<String> {
    let before = writes().len();
    tokio::time::sleep(Duration::from_secs(3)).await;
    writes()[before..].to_vec()
}

/// Runs the scenario in `namespace`: `admin` acts as the user, `operator` is the operator's client, and
/// `writes` lists the operator's write requests so far (for the quiet periods). Where no kube-controller-manager
/// runs, the caller plays the StatefulSet controller (`crate::workload_controllers::play`).
pub async fn run(
    admin: Client,
    operator: Client,
    namespace: &str,
    writes: &dyn Fn() -> Vec<String>,
) {
    kubewright::cli::ensure_crd(&admin, Database::crd())
        .await
        .expect("install the Database CRD");
    let dbs: Api<Database> = Api::namespaced(admin.clone(), namespace);
    let sets: Api<StatefulSet> = Api::namespaced(admin.clone(), namespace);
    let secrets: Api<Secret> = Api::namespaced(admin.clone(), namespace);
    let mut operator_run = start(operator.clone());

    let mut db = sample(SAMPLE_NAME, "16");
    db.metadata.namespace = Some(namespace.into());
    dbs.create(&PostParams::default(), &db)
        .await
        .expect("create the Database");
    let converged = wait_ready(&dbs, "True", "Ready").await;
    assert_eq!(
        converged["status"]["endpoint"],
        format!("{SAMPLE_NAME}.{namespace}.svc:5432")
    );
    assert_eq!(converged["status"]["secretName"], "sample-credentials");
    assert!(
        converged["status"].get("message").is_none(),
        "{converged:#}"
    );
    let first = password(&secrets).await;
    assert!(
        first.len() >= 24,
        "a password of {} characters",
        first.len()
    );

    // One event per child, each naming its child, none merged with another.
    let created: Vec<_> = events(&admin, namespace)
        .await
        .into_iter()
        .filter(|e| e.1 == "Created")
        .collect();
    let mut related: Vec<&str> = created.iter().map(|e| e.3.as_str()).collect();
    related.sort();
    assert_eq!(
        related,
        [
            "Secret/sample-credentials",
            "Service/sample",
            "StatefulSet/sample"
        ],
        "{created:#?}"
    );

    // Converged: no write, no event.
    let events_before = events(&admin, namespace).await.len();
    assert_eq!(quiet_writes(writes).await, Vec::<String>::new());
    assert_eq!(events(&admin, namespace).await.len(), events_before);

    // Spec changes roll the StatefulSet; the password stays.
    let patch = json!({"spec": {"replicas": 2, "memory": "512Mi"}});
    dbs.patch(SAMPLE_NAME, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("patch the Database");
    eventually("the StatefulSet scaled with a memory limit", async || {
        let set = serde_json::to_value(sets.get(SAMPLE_NAME).await.expect("get")).expect("json");
        let spec = &set["spec"];
        let limit = &spec["template"]["spec"]["containers"][0]["resources"]["limits"]["memory"];
        if spec["replicas"] == 2 && limit == "512Mi" {
            Ok(())
        } else {
            Err(spec.clone())
        }
    })
    .await;
    wait_ready(&dbs, "True", "Ready").await;
    assert_eq!(
        password(&secrets).await,
        first,
        "the password changed with the spec"
    );

    // A restarted operator has nothing to do, and generates no password.
    operator_run.stop().await;
    let before_restart = writes().len();
    operator_run = start(operator.clone());
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(writes()[before_restart..].to_vec(), Vec::<String>::new());
    assert_eq!(
        password(&secrets).await,
        first,
        "the password changed on restart"
    );

    // An unsupported version: the message, Ready=False and a Warning; no child touched.
    let set_before = sets
        .get(SAMPLE_NAME)
        .await
        .expect("get")
        .metadata
        .resource_version;
    let patch = json!({"spec": {"version": "9.6"}});
    dbs.patch(SAMPLE_NAME, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("patch the version");
    let refused = wait_ready(&dbs, "False", UNSUPPORTED_VERSION).await;
    assert_eq!(refused["status"]["message"], "version 9.6 is not supported");
    eventually("a Warning event", async || {
        let warned = events(&admin, namespace)
            .await
            .into_iter()
            .any(|e| e.0 == "Warning" && e.1 == UNSUPPORTED_VERSION);
        if warned { Ok(()) } else { Err(()) }
    })
    .await;
    assert_eq!(
        sets.get(SAMPLE_NAME)
            .await
            .expect("get")
            .metadata
            .resource_version,
        set_before,
        "the StatefulSet was written for an unsupported version"
    );

    // A supported version: the message is gone from the stored status, the image follows.
    let patch = json!({"spec": {"version": "17"}});
    dbs.patch(SAMPLE_NAME, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("patch the version");
    let fixed = wait_ready(&dbs, "True", "Ready").await;
    assert!(
        fixed["status"].get("message").is_none(),
        "{:#}",
        fixed["status"]
    );
    let image = sets
        .get(SAMPLE_NAME)
        .await
        .expect("get")
        .spec
        .expect("spec")
        .template
        .spec
        .expect("pod spec")
        .containers[0]
        .image
        .clone();
    assert_eq!(image.as_deref(), Some("postgres:17"));
    assert_eq!(password(&secrets).await, first);

    // Deleting: the StatefulSet goes first, then the Database.
    dbs.delete(SAMPLE_NAME, &DeleteParams::default())
        .await
        .expect("delete the Database");
    eventually("the StatefulSet and the Database gone", async || {
        let set = sets.get_opt(SAMPLE_NAME).await.expect("get");
        let db = dbs.get_opt(SAMPLE_NAME).await.expect("get");
        if set.is_none() && db.is_none() {
            Ok(())
        } else {
            Err((set.is_some(), db.is_some()))
        }
    })
    .await;
    operator_run.stop().await;
}
