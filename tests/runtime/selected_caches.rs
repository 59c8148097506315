//! Caches that hold part of a kind (`CacheOptions`): the children the runtime labelled, or metadata only.
//! An operator owning Secrets holds its own and none of the cluster's others, and a Secret someone else made
//! under a child's name is refused, not taken over, though the cache never sees it.

use std::collections::BTreeMap;

use examples::database::{Database, reconciler, sample, secret_name};
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::{Api, PostParams};
use kube::runtime::reflector::ObjectRef;
use kube::{CustomResourceExt, ResourceExt};
use kubewright::testing::table::TestEnv;
use kubewright::{CacheOptions, CacheOptionsError, OWNER_LABEL};

fn secret(name: &str) -> Secret {
    let mut s = Secret::default();
    s.metadata.name = Some(name.into());
    s.metadata.namespace = Some("default".into());
    s.string_data = Some(BTreeMap::from([("token".into(), "someone-elses".into())]));
    s
}

async fn env_with(db: &Database, others: &[Secret]) -> TestEnv {
    let env = TestEnv::new();
    env.install_crd(&Database::crd()).await.unwrap();
    let secrets: Api<Secret> = Api::namespaced(env.client(), "default");
    for s in others {
        secrets.create(&PostParams::default(), s).await.unwrap();
    }
    env.insert(db).unwrap();
    env.caches()
        .configure::<Secret>(CacheOptions::owned())
        .unwrap();
    env
}

fn cached_secrets(env: &TestEnv) -> Vec<String> {
    let mut names: Vec<String> = env
        .cache::<Secret>()
        .state()
        .iter()
        .map(|s| s.name_any())
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn a_cache_of_owned_secrets_holds_the_operators_own_and_no_other() {
    let db = sample("orders", "16");
    let others: Vec<Secret> = (0..5).map(|i| secret(&format!("app-{i}"))).collect();
    let mut env = env_with(&db, &others).await;
    let done = env
        .converge(&reconciler(), &ObjectRef::from_obj(&db))
        .await
        .unwrap();
    let created: Secret = done
        .get(Some("default"), &secret_name(&db))
        .await
        .unwrap()
        .expect("the credentials Secret");
    let uid = done.parent.as_ref().and_then(|p| p.uid()).unwrap();
    assert_eq!(created.labels().get(OWNER_LABEL), Some(&uid));
    assert_eq!(cached_secrets(&env), [secret_name(&db)]);
    // The next pass finds the Secret in the cache: no read past it, no write.
    let again = env
        .pass(&reconciler(), &ObjectRef::from_obj(&db))
        .await
        .unwrap();
    assert_eq!(again.writes(), []);
    assert_eq!(again.reads().len(), 0, "{:#?}", again.reads());
}

#[tokio::test]
async fn a_foreign_object_under_a_childs_name_is_refused_though_the_cache_never_sees_it() {
    let db = sample("orders", "16");
    let mut env = env_with(&db, &[secret(&secret_name(&db))]).await;
    let report = env
        .converge(&reconciler(), &ObjectRef::from_obj(&db))
        .await
        .unwrap();
    let foreign: Secret = report
        .get(Some("default"), &secret_name(&db))
        .await
        .unwrap()
        .unwrap();
    assert!(foreign.owner_references().is_empty(), "{foreign:?}");
    assert!(foreign.labels().get(OWNER_LABEL).is_none());
    assert!(cached_secrets(&env).is_empty());
    let status = report.parent.unwrap().status.unwrap();
    let secret_ready = status
        .conditions
        .iter()
        .find(|c| c.type_ == "SecretReady")
        .expect("the Secret's condition");
    assert_eq!(
        (secret_ready.status.as_str(), secret_ready.reason.as_str()),
        ("False", "NotOwned")
    );
}

#[tokio::test]
async fn a_child_written_before_the_owner_label_is_found_by_a_read_and_labelled() {
    let db = sample("orders", "16");
    let mut env = env_with(&db, &[]).await;
    let uid = Api::<Database>::namespaced(env.client(), "default")
        .get("orders")
        .await
        .unwrap()
        .uid()
        .unwrap();
    let mut old = secret(&secret_name(&db));
    old.metadata.owner_references = Some(vec![OwnerReference {
        api_version: "example.dev/v1".into(),
        kind: "Database".into(),
        name: "orders".into(),
        uid: uid.clone(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }]);
    Api::<Secret>::namespaced(env.client(), "default")
        .create(&PostParams::default(), &old)
        .await
        .unwrap();
    let done = env
        .converge(&reconciler(), &ObjectRef::from_obj(&db))
        .await
        .unwrap();
    let labelled: Secret = done
        .get(Some("default"), &secret_name(&db))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(labelled.labels().get(OWNER_LABEL), Some(&uid));
    // A create-once child: the label is put back, and nothing else is written.
    assert_eq!(labelled.data.unwrap()["token"].0, b"someone-elses");
    assert_eq!(cached_secrets(&env), [secret_name(&db)]);
}

#[tokio::test]
async fn a_metadata_only_cache_holds_names_and_labels_but_no_data() {
    let env = TestEnv::new();
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some("settings".into());
    cm.metadata.namespace = Some("default".into());
    cm.metadata.labels = Some(BTreeMap::from([("team".into(), "a".into())]));
    cm.data = Some(BTreeMap::from([("big".into(), "x".repeat(4096))]));
    Api::<ConfigMap>::namespaced(env.client(), "default")
        .create(&PostParams::default(), &cm)
        .await
        .unwrap();
    let mut env = env;
    env.caches()
        .configure::<ConfigMap>(CacheOptions::all().metadata_only())
        .unwrap();
    env.cache::<ConfigMap>();
    env.start().await.unwrap();
    let cached = env
        .cache::<ConfigMap>()
        .get(Some("default"), "settings")
        .expect("cached");
    assert_eq!(cached.labels().get("team").map(String::as_str), Some("a"));
    assert!(cached.metadata.uid.is_some());
    assert!(cached.data.is_none());
    // Options apply before the caches start.
    assert!(matches!(
        env.caches().configure::<ConfigMap>(CacheOptions::all()),
        Err(CacheOptionsError::Started { .. })
    ));
}

#[tokio::test]
async fn a_child_kind_cached_as_metadata_only_fails_the_pass_and_writes_nothing() {
    let db = sample("orders", "16");
    let env = TestEnv::new();
    env.install_crd(&Database::crd()).await.unwrap();
    env.insert(&db).unwrap();
    env.caches()
        .configure::<Secret>(CacheOptions::all().metadata_only())
        .unwrap();
    let mut env = env;
    env.wire(&reconciler().wiring());
    env.cache::<Database>();
    env.start().await.unwrap();
    let report = env
        .pass(&reconciler(), &ObjectRef::from_obj(&db))
        .await
        .unwrap();
    let writes = report.writes();
    let error = report.pass.unwrap().result.unwrap_err();
    assert!(
        matches!(
            error,
            kubewright::Error::CacheOptions(CacheOptionsError::ChildMetadataOnly { ref kind }) if kind == "Secret"
        ),
        "{error}"
    );
    assert!(
        writes.iter().all(|w| !w.to_string().contains("secrets")),
        "{writes:?}"
    );
}
