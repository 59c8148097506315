//! Kinds chosen at run time (`kubewright::dynamic_kind!`): slots declared in code, bound to kube
//! `ApiResource`s when the test runs, as a parent (ConfigMaps, `Foreign<Untyped<_>>`), a child (cert-manager's
//! Certificate) and a tracked kind (Secrets); their caches, owner index, triggers and RBAC work as for any
//! kind. A slot never bound, a kind the cluster does not serve and a slot declared with the wrong scope are
//! start-up errors, before anything is written.

use std::time::Duration;

use examples::domains::certificate_crd;
use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt};
use kubewright::testing::ApiServer;
use kubewright::untyped::{RunTimeKind, Untyped};
use kubewright::{ChildReconciler, Context, Foreign, Operator, Reconciler};
use serde_json::{Value, json};

kubewright::dynamic_kind! {
    /// The parent kind, bound to ConfigMaps.
    Parents, Namespaced
}
kubewright::dynamic_kind! {
    /// The child kind, bound to cert-manager's Certificates.
    Children, Namespaced
}
kubewright::dynamic_kind! {
    /// The tracked kind, bound to Secrets.
    Issuers, Namespaced
}

fn resource(api_version: &str, kind: &str, plural: &str) -> ApiResource {
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    ApiResource {
        group: group.into(),
        version: version.into(),
        api_version: api_version.into(),
        kind: kind.into(),
        plural: plural.into(),
    }
}

/// Binds the slots as a configuration read at start would.
fn bind() {
    Parents::bind(&resource("v1", "ConfigMap", "configmaps")).unwrap();
    Children::bind(&resource(
        "cert-manager.io/v1",
        "Certificate",
        "certificates",
    ))
    .unwrap();
    Issuers::bind(&resource("v1", "Secret", "secrets")).unwrap();
}

/// A Certificate for a ConfigMap whose data names a `host`, from the issuer the Secret `issuer` labels.
fn desired_certificate(
    parent: &Foreign<Untyped<Parents>>,
    cx: &mut Context,
) -> kubewright::Result<Option<Untyped<Children>>> {
    let Some(host) = parent
        .data
        .get("data")
        .and_then(|d| d.get("host"))
        .and_then(Value::as_str)
    else {
        return Ok(None);
    };
    let namespace = parent.namespace();
    let issuer = cx
        .get::<Untyped<Issuers>>(namespace.as_deref(), "issuer")?
        .and_then(|s| s.labels().get("issuer").cloned())
        .unwrap_or_else(|| "default".into());
    let name = parent.name_any();
    let object = DynamicObject::new(
        &name,
        &resource("cert-manager.io/v1", "Certificate", "certificates"),
    )
    .data(json!({"spec": {
        "dnsNames": [host],
        "secretName": format!("{name}-tls"),
        "issuerRef": {"name": issuer, "kind": "ClusterIssuer"},
    }}));
    Ok(Some(Untyped::from(object)))
}

fn reconciler() -> Reconciler<Foreign<Untyped<Parents>>> {
    Reconciler::new("run-time-kinds")
        .tracks::<Untyped<Issuers>>()
        .step(ChildReconciler::new("certificate", desired_certificate))
}

async fn install(client: &Client) {
    kubewright::cli::ensure_crd(client, certificate_crd())
        .await
        .unwrap();
}

/// Polls `f` (bounded: 30 s, for a loaded machine) until it returns `Some`.
async fn eventually<T>(what: &str, mut f: impl AsyncFnMut() -> Option<T>) -> T {
    for _ in 0..1200 {
        if let Some(t) = f().await {
            return t;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("timed out waiting for {what}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kinds_bound_at_run_time_are_a_parent_a_child_and_a_tracked_kind() {
    bind();
    let server = ApiServer::new();
    let client = server.client();
    install(&client).await;
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(
        Operator::new(client.clone())
            .controller(reconciler())
            .run_until(async move {
                let _ = stop_rx.await;
            }),
    );
    let pp = PostParams::default();
    let configs: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let secrets: Api<Secret> = Api::namespaced(client.clone(), "default");
    let certs: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        "default",
        &resource("cert-manager.io/v1", "Certificate", "certificates"),
    );
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some("shop".into());
    cm.data = Some([("host".to_string(), "shop.example.dev".to_string())].into());
    configs.create(&pp, &cm).await.unwrap();
    let mut quiet = ConfigMap::default();
    quiet.metadata.name = Some("quiet".into());
    configs.create(&pp, &quiet).await.unwrap();

    // The child, owned by the ConfigMap through the run-time kinds.
    let cert = eventually("the Certificate", async || {
        certs.get_opt("shop").await.unwrap()
    })
    .await;
    assert_eq!(cert.data["spec"]["dnsNames"], json!(["shop.example.dev"]));
    assert_eq!(cert.data["spec"]["issuerRef"]["name"], "default");
    let owner = &cert.owner_references()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str(), owner.controller),
        ("ConfigMap", "shop", Some(true))
    );

    // The tracked kind: a Secret appearing triggers the parent, and the child follows. The Secret is created
    // at once, while the pass that made the Certificate may still run: the controller tracks what a pass reads
    // as it reads it (a change to an object tracked only at the end of the pass was lost now and then).
    let mut issuer = Secret::default();
    issuer.metadata.name = Some("issuer".into());
    issuer.metadata.labels = Some([("issuer".to_string(), "letsencrypt".to_string())].into());
    secrets.create(&pp, &issuer).await.unwrap();
    eventually("the Certificate from the new issuer", async || {
        let cert = certs.get("shop").await.unwrap();
        (cert.data["spec"]["issuerRef"]["name"] == "letsencrypt").then_some(())
    })
    .await;

    // The parent's data changes: the child follows; its host removed: the child goes (found by owner).
    configs
        .patch(
            "shop",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"host": "store.example.dev"}})),
        )
        .await
        .unwrap();
    eventually("the Certificate on the new host", async || {
        let cert = certs.get("shop").await.unwrap();
        (cert.data["spec"]["dnsNames"] == json!(["store.example.dev"])).then_some(())
    })
    .await;
    configs
        .patch(
            "shop",
            &PatchParams::default(),
            &Patch::Merge(json!({"data": {"host": null}})),
        )
        .await
        .unwrap();
    eventually("the Certificate gone", async || {
        certs.get_opt("shop").await.unwrap().is_none().then_some(())
    })
    .await;
    assert!(certs.get_opt("quiet").await.unwrap().is_none());
    // Nothing written to the parents (their status is not the operator's; ConfigMaps have none).
    let shop = configs.get("shop").await.unwrap();
    assert!(
        shop.managed_fields()
            .iter()
            .all(|m| m.manager.as_deref() != Some("run-time-kinds")),
        "{:?}",
        shop.managed_fields()
    );
    let _ = stop_tx.send(());
    running.await.unwrap().unwrap();
}

#[test]
fn the_manifests_grant_the_kinds_bound_at_run_time() {
    bind();
    let manifests =
        kubewright::manifests::Manifests::new("run-time-kinds").reconciler(&reconciler());
    let role = manifests.cluster_role();
    let verbs = |group: &str, resource: &str| -> Vec<String> {
        role.rules
            .iter()
            .flatten()
            .filter(|r| {
                r.api_groups.iter().flatten().any(|g| g == group)
                    && r.resources.iter().flatten().any(|x| x == resource)
            })
            .flat_map(|r| r.verbs.clone())
            .collect()
    };
    let yaml = manifests.to_yaml().unwrap();
    assert_eq!(verbs("", "configmaps"), ["get", "list", "watch"], "{yaml}");
    assert_eq!(verbs("", "secrets"), ["get", "list", "watch"], "{yaml}");
    assert!(verbs("", "configmaps/status").is_empty(), "{yaml}");
    assert!(
        verbs("cert-manager.io", "certificates").contains(&"create".to_string()),
        "{yaml}"
    );
}

kubewright::dynamic_kind! {
    /// Never bound.
    NeverBound, Namespaced
}

kubewright::dynamic_kind! {
    /// Bound to a kind whose CRD is not installed.
    Routes, Namespaced
}

kubewright::dynamic_kind! {
    /// Declared cluster-scoped, bound to the namespaced Certificate.
    ClusterCertificates, Cluster
}

/// The error `reconciler` fails with at start on a cluster with the Certificate CRD; and that nothing was
/// written.
async fn start_error<P: kubewright::ParentKind>(reconciler: Reconciler<P>) -> String {
    let server = ApiServer::new();
    let client = server.client();
    install(&client).await;
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some("shop".into());
    cm.data = Some([("host".to_string(), "shop.example.dev".to_string())].into());
    Api::<ConfigMap>::namespaced(client.clone(), "default")
        .create(&PostParams::default(), &cm)
        .await
        .unwrap();
    let failed = tokio::time::timeout(
        Duration::from_secs(30),
        Operator::new(client.clone())
            .controller(reconciler)
            .run_until(std::future::pending::<()>()),
    )
    .await
    .expect("an error at start")
    .unwrap_err();
    let certs: Api<DynamicObject> = Api::all_with(
        client,
        &resource("cert-manager.io/v1", "Certificate", "certificates"),
    );
    assert!(
        certs
            .list(&Default::default())
            .await
            .unwrap()
            .items
            .is_empty()
    );
    failed.to_string()
}

#[tokio::test]
async fn a_slot_never_bound_fails_at_start_naming_it() {
    bind();
    let text = start_error(reconciler().tracks::<Untyped<NeverBound>>()).await;
    assert_eq!(
        text,
        "the run-time kind NeverBound is not bound to a kind: call NeverBound::bind with its ApiResource before building the reconcilers that use it"
    );
}

#[tokio::test]
async fn a_kind_the_cluster_does_not_serve_fails_at_start_naming_it_and_how_to_install_it() {
    bind();
    Routes::bind(&resource(
        "gateway.networking.k8s.io/v1",
        "HTTPRoute",
        "httproutes",
    ))
    .unwrap();
    let text = start_error(reconciler().tracks::<Untyped<Routes>>()).await;
    assert!(
        text.starts_with("HTTPRoute (gateway.networking.k8s.io/v1, resource httproutes) is not served by the cluster: install its CustomResourceDefinition first"),
        "{text}"
    );
}

#[tokio::test]
async fn a_run_time_kind_with_the_wrong_scope_fails_before_anything_is_written() {
    bind();
    ClusterCertificates::bind(&resource(
        "cert-manager.io/v1",
        "Certificate",
        "certificates",
    ))
    .unwrap();
    let wrong =
        Reconciler::<Foreign<Untyped<Parents>>>::new("wrong-scope").step(ChildReconciler::new(
            "certificate",
            |_: &Foreign<Untyped<Parents>>, _: &mut Context| {
                Ok(Some(Untyped::<ClusterCertificates>::new(
                    "shop",
                    json!({"spec": {}}),
                )))
            },
        ));
    let text = start_error(wrong).await;
    assert_eq!(
        text,
        "Certificate (cert-manager.io/v1) is declared cluster-scoped but the cluster serves it namespaced: declare it with the cluster's scope"
    );
}
