//! A parent whose status is not the operator's, of a kind chosen at run time (`Foreign<Untyped<_>>` bound to
//! ConfigMaps), with a finalizer, a stash and a child step, in table tests: the finalizer is added, a value
//! stashed by one step is read by the next, the child is created, and no status is written; on deletion the
//! cleanup runs once and the finalizer goes; the manifests grant the finalizer's writes and nothing on the status.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use k8s_openapi::api::core::v1::Secret;
use kube::runtime::reflector::ObjectRef;
use kubewright::stash::StashKey;
use kubewright::testing::table::{Category, EventExpectation, ReconcilerTestCase, TestEnv};
use kubewright::untyped::{RunTimeKind, Untyped};
use kubewright::{
    ChildReconciler, Context, Foreign, Outcome, Reconciler, Sequence, SyncReconciler, WithFinalizer,
};
use serde_json::{Value, json};

kubewright::dynamic_kind! {
    /// The parent kind, bound to ConfigMaps.
    Configs, Namespaced
}

type Config = Foreign<Untyped<Configs>>;

const FINALIZER: &str = "example.dev/cleanup";
const GREETING: StashKey<String> = StashKey::new("greeting");

fn bind() {
    Configs::bind(&kube::api::ApiResource {
        group: String::new(),
        version: "v1".into(),
        api_version: "v1".into(),
        kind: "ConfigMap".into(),
        plural: "configmaps".into(),
    })
    .unwrap();
}

fn reconciler(cleanups: Arc<AtomicUsize>) -> Reconciler<Config> {
    let greet = SyncReconciler::new("greet", |config: &mut Config, cx: &mut Context| {
        let name = config
            .data
            .get("data")
            .and_then(|d| d.get("name"))
            .and_then(Value::as_str)
            .unwrap_or("nobody")
            .to_string();
        cx.stash_mut().store(&GREETING, format!("hello {name}"));
        Ok(Outcome::Continue)
    })
    .finalize(move |_: &mut Config, _: &mut Context| {
        cleanups.fetch_add(1, Ordering::SeqCst);
        Ok(Outcome::Continue)
    });
    let secret = ChildReconciler::new("secret", |config: &Config, cx: &mut Context| {
        let greeting = cx.stash().get(&GREETING)?.clone();
        let mut s = Secret::default();
        s.metadata.name = Some(format!("{}-greeting", kube::ResourceExt::name_any(config)));
        s.string_data = Some([("greeting".to_string(), greeting)].into());
        Ok(Some(s))
    });
    Reconciler::new("greeter").step(WithFinalizer::new(
        FINALIZER,
        Sequence::new("greeting").step(greet).step(secret),
    ))
}

fn config_map(deleting: bool) -> Value {
    let mut cm = json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "team", "namespace": "default", "uid": "0b4c5a7e-0000-4000-8000-00000000c0f1"},
        "data": {"name": "team"},
    });
    if deleting {
        cm["metadata"]["finalizers"] = json!([FINALIZER]);
        cm["metadata"]["deletionTimestamp"] = json!("2025-01-01T00:00:00Z");
    }
    cm
}

#[tokio::test]
async fn a_run_time_foreign_parent_gets_its_finalizer_stash_and_child_and_no_status() {
    bind();
    let cleanups = Arc::new(AtomicUsize::new(0));
    ReconcilerTestCase::new("greets", ObjectRef::<Config>::new("team").within("default"))
        .given(config_map(false))
        .expect_patch(json!({"metadata": {"finalizers": [FINALIZER]}}))
        .expect_create(json!({
            "kind": "Secret",
            "metadata": {
                "name": "team-greeting",
                "ownerReferences": [{"kind": "ConfigMap", "name": "team", "controller": true}],
            },
            "stringData": {"greeting": "hello team"},
        }))
        .expect_event(EventExpectation::normal("Created").note("Secret default/team-greeting"))
        .expect_stash(&GREETING, "hello team".to_string())
        .run(reconciler(cleanups.clone()))
        .await
        .unwrap();
    assert_eq!(cleanups.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_run_time_foreign_parent_being_deleted_is_cleaned_up_once() {
    bind();
    let cleanups = Arc::new(AtomicUsize::new(0));
    let mut env = TestEnv::new();
    env.insert(&config_map(true)).unwrap();
    let reconciler = reconciler(cleanups.clone()).clock(env.clock_fn());
    env.wire(&reconciler.wiring());
    env.cache::<Config>();
    env.start().await.unwrap();
    let parent = ObjectRef::<Config>::new("team").within("default");
    let first = env.pass(&reconciler, &parent).await.unwrap();
    assert_eq!(cleanups.load(Ordering::SeqCst), 1);
    let writes = first.writes();
    assert_eq!(writes.len(), 1, "{writes:#?}");
    assert_eq!(writes[0].category, Category::Patch);
    let left = &writes[0].body["metadata"]["finalizers"];
    assert!(left.as_array().is_none_or(Vec::is_empty), "{writes:#?}");
    env.wait_for::<Config>(Some("default"), "team", |c| c.is_none())
        .await
        .unwrap();
    let second = env.pass(&reconciler, &parent).await.unwrap();
    assert!(second.pass.is_none());
    assert_eq!(cleanups.load(Ordering::SeqCst), 1);
    env.shutdown().await;
}

#[test]
fn the_manifests_let_the_finalizer_be_written_and_never_the_status() {
    bind();
    let manifests = kubewright::manifests::Manifests::new("greeter")
        .reconciler(&reconciler(Arc::new(AtomicUsize::new(0))));
    let role = manifests.cluster_role();
    let verbs = |resource: &str| -> Vec<String> {
        let mut verbs: Vec<String> = role
            .rules
            .iter()
            .flatten()
            .filter(|r| {
                r.api_groups.iter().flatten().any(|g| g.is_empty())
                    && r.resources.iter().flatten().any(|x| x == resource)
            })
            .flat_map(|r| r.verbs.clone())
            .collect();
        verbs.sort();
        verbs
    };
    let yaml = manifests.to_yaml().unwrap();
    assert_eq!(
        verbs("configmaps"),
        ["get", "list", "patch", "update", "watch"],
        "{yaml}"
    );
    assert!(verbs("configmaps/status").is_empty(), "{yaml}");
    assert!(verbs("secrets").iter().any(|v| v == "create"), "{yaml}");
}
