//! One scenario of kinds chosen at run time (`kubewright::dynamic_kind!`) in every place a reconciler names
//! a kind, run on the embedded cluster and on a real kube-apiserver: a `Site` parent (a custom resource of
//! `example.dev/v1`, as `Foreign<Untyped<_>>`), a child *set* of cert-manager `Certificate`s (one per host,
//! found again through the owner index), a namespaced `Issuer` the Site names (`Reconciler::references`) and a
//! cluster-scoped `ClusterIssuer` mapped to the Sites that name it by a mapper that reads the parents' cache
//! (`Reconciler::watches_with`). Every kind is given as a kube `ApiResource` when the test runs, and every CRD
//! is installed by the test from a minimal schema.
//!
//! The step reads the issuers from their caches without tracking them, so the parent is reconciled after an
//! issuer changes only because of the reference index and the mapper. The set's readiness follows the
//! Certificates' own `Ready` conditions (the custom-resource convention), told for the Sites by the metric
//! `operator_foreign_parents_not_ready` since their status is not written.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams, PostParams};
use kube::runtime::reflector::ObjectRef;
use kube::{Client, ResourceExt};
use kubewright::untyped::{RunTimeKind, Untyped};
use kubewright::{ChildSetReconciler, Context, Foreign, Operator, Reconciler};
use serde_json::{Value, json};

use crate::tenants_scenario::eventually;

kubewright::dynamic_kind! {
    /// The parent kind, bound to `example.dev/v1` `Site`.
    pub Sites, Namespaced
}
kubewright::dynamic_kind! {
    /// The children's kind, bound to cert-manager's `Certificate`.
    pub SiteCertificates, Namespaced
}
kubewright::dynamic_kind! {
    /// The referenced kind, bound to cert-manager's `Issuer`.
    pub SiteIssuers, Namespaced
}
kubewright::dynamic_kind! {
    /// The watched kind, bound to cert-manager's cluster-scoped `ClusterIssuer`.
    pub SiteClusterIssuers, Cluster
}

/// A parent: a Site, whose status is not the operator's.
pub type Site = Foreign<Untyped<Sites>>;
/// A child.
pub type SiteCertificate = Untyped<SiteCertificates>;

/// The name of the controller (and its field manager).
pub const NAME: &str = "sites";

/// An `ApiResource` for `api_version`, `kind` and `plural`.
pub fn resource(api_version: &str, kind: &str, plural: &str) -> ApiResource {
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    ApiResource {
        group: group.into(),
        version: version.into(),
        api_version: api_version.into(),
        kind: kind.into(),
        plural: plural.into(),
    }
}

/// The four kinds, as a configuration read at start would give them.
pub fn resources() -> [(ApiResource, &'static str); 4] {
    [
        (resource("example.dev/v1", "Site", "sites"), "Namespaced"),
        (
            resource("cert-manager.io/v1", "Certificate", "certificates"),
            "Namespaced",
        ),
        (
            resource("cert-manager.io/v1", "Issuer", "issuers"),
            "Namespaced",
        ),
        (
            resource("cert-manager.io/v1", "ClusterIssuer", "clusterissuers"),
            "Cluster",
        ),
    ]
}

/// Binds the slots (before the reconciler is built).
pub fn bind() {
    let [site, certificate, issuer, cluster_issuer] = resources().map(|(r, _)| r);
    Sites::bind(&site).expect("bind Sites");
    SiteCertificates::bind(&certificate).expect("bind SiteCertificates");
    SiteIssuers::bind(&issuer).expect("bind SiteIssuers");
    SiteClusterIssuers::bind(&cluster_issuer).expect("bind SiteClusterIssuers");
}

/// A CRD for `resource` that keeps every field (spec and status), with a status subresource.
pub fn minimal_crd(resource: &ApiResource, scope: &str) -> CustomResourceDefinition {
    serde_json::from_value(json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{}.{}", resource.plural, resource.group)},
        "spec": {
            "group": resource.group,
            "names": {
                "kind": resource.kind,
                "listKind": format!("{}List", resource.kind),
                "plural": resource.plural,
                "singular": resource.kind.to_lowercase(),
            },
            "scope": scope,
            "versions": [{
                "name": resource.version,
                "served": true,
                "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "properties": {
                        "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                    },
                }},
            }],
        },
    }))
    .expect("a CustomResourceDefinition")
}

fn spec_str<'a>(
    object: &'a Untyped<impl kubewright::untyped::UntypedKind>,
    field: &str,
) -> Option<&'a str> {
    object.data.get("spec")?.get(field)?.as_str()
}

/// A Certificate for each of the Site's hosts, from the issuer it names (an `Issuer` in its namespace, or a
/// `ClusterIssuer`), with that issuer's `spec.duration`. The issuers are read from their caches untracked.
pub fn desired_certificates(
    site: &Site,
    cx: &mut Context,
) -> kubewright::Result<Vec<SiteCertificate>> {
    let namespace = site.namespace();
    let (kind, issuer, duration) = if let Some(name) = spec_str(site, "issuer") {
        let issuers = cx.cache::<Untyped<SiteIssuers>>()?;
        let found = issuers.get(namespace.as_deref(), name);
        (
            "Issuer",
            name,
            found.and_then(|i| spec_str(&i, "duration").map(str::to_string)),
        )
    } else if let Some(name) = spec_str(site, "clusterIssuer") {
        let issuers = cx.cache::<Untyped<SiteClusterIssuers>>()?;
        let found = issuers.get(None, name);
        (
            "ClusterIssuer",
            name,
            found.and_then(|i| spec_str(&i, "duration").map(str::to_string)),
        )
    } else {
        return Ok(Vec::new());
    };
    let hosts = site
        .data
        .get("spec")
        .and_then(|s| s.get("hosts"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let site_name = site.name_any();
    Ok(hosts
        .iter()
        .filter_map(Value::as_str)
        .map(|host| {
            let name = format!("{site_name}-{}", host.replace('.', "-"));
            let mut spec = json!({
                "dnsNames": [host],
                "secretName": format!("{name}-tls"),
                "issuerRef": {"name": issuer, "kind": kind},
            });
            if let Some(d) = &duration {
                spec["duration"] = json!(d);
            }
            Untyped::new(&name, json!({"spec": spec}))
        })
        .collect())
}

/// The Sites in the cache that name the ClusterIssuer `name`.
fn sites_naming(caches: &kubewright::Caches, name: &str) -> Vec<ObjectRef<Site>> {
    caches
        .get::<Site>()
        .map(|c| c.state())
        .unwrap_or_default()
        .iter()
        .filter(|s| spec_str(s, "clusterIssuer") == Some(name))
        .map(|s| ObjectRef::from_obj(s.as_ref()))
        .collect()
}

/// The reconciler (the slots bound first: see [`bind`]).
pub fn reconciler() -> Reconciler<Site> {
    Reconciler::new(NAME)
        .references::<Untyped<SiteIssuers>>(|site: &Site| {
            spec_str(site, "issuer")
                .map(str::to_string)
                .into_iter()
                .collect()
        })
        .watches_with::<Untyped<SiteClusterIssuers>>(|issuer, caches| {
            sites_naming(caches, &issuer.name_any())
        })
        .step(ChildSetReconciler::new(
            "certificates",
            desired_certificates,
            |c: &SiteCertificate| c.name_any(),
        ))
}

struct Apis {
    sites: Api<DynamicObject>,
    certs: Api<DynamicObject>,
    issuers: Api<DynamicObject>,
    cluster_issuers: Api<DynamicObject>,
}

impl Apis {
    fn new(client: &Client, namespace: &str) -> Self {
        let [site, certificate, issuer, cluster_issuer] = resources().map(|(r, _)| r);
        Self {
            sites: Api::namespaced_with(client.clone(), namespace, &site),
            certs: Api::namespaced_with(client.clone(), namespace, &certificate),
            issuers: Api::namespaced_with(client.clone(), namespace, &issuer),
            cluster_issuers: Api::all_with(client.clone(), &cluster_issuer),
        }
    }

    /// The Certificates in the namespace: name to (dnsNames, issuerRef, duration, owner).
    async fn certificates(&self) -> Vec<(String, Value, Value, Value, String)> {
        let mut out: Vec<_> = self
            .certs
            .list(&Default::default())
            .await
            .expect("list the Certificates")
            .items
            .into_iter()
            .map(|c| {
                let owner = c
                    .owner_references()
                    .iter()
                    .find(|o| o.controller == Some(true))
                    .map(|o| format!("{}/{}", o.kind, o.name))
                    .unwrap_or_default();
                let spec = &c.data["spec"];
                (
                    c.name_any(),
                    spec["dnsNames"].clone(),
                    spec["issuerRef"].clone(),
                    spec["duration"].clone(),
                    owner,
                )
            })
            .collect();
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }

    /// Plays cert-manager: reports the Certificate `name` `Ready` for its current generation.
    async fn report_ready(&self, name: &str) {
        let cert = self.certs.get(name).await.expect("get the Certificate");
        let patch = json!({"status": {"conditions": [{
            "type": "Ready", "status": "True", "reason": "Ready", "message": "played by the test",
            "observedGeneration": cert.metadata.generation, "lastTransitionTime": "2026-01-01T00:00:00Z",
        }]}});
        self.certs
            .patch_status(name, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .expect("write the Certificate's status");
    }

    async fn certificates_are(&self, what: &str, want: Vec<(&str, &str, &str, &str, &str)>) {
        let want: Vec<(String, Value, Value, Value, String)> = want
            .into_iter()
            .map(|(name, host, kind, issuer, duration)| {
                let site = name.split('-').next().unwrap_or_default();
                (
                    name.to_string(),
                    json!([host]),
                    json!({"name": issuer, "kind": kind}),
                    json!(duration),
                    format!("Site/{site}"),
                )
            })
            .collect();
        eventually(what, async || {
            let got = self.certificates().await;
            if got == want { Ok(()) } else { Err(got) }
        })
        .await;
    }
}

/// The Sites the controller counts as not ready (`operator_foreign_parents_not_ready`), in this process.
fn not_ready() -> Option<i64> {
    kubewright::metrics::Metrics::global()
        .encode()
        .lines()
        .find_map(|l| {
            l.strip_prefix(&format!(
                "operator_foreign_parents_not_ready{{controller=\"{NAME}\"}} "
            ))
        })
        .and_then(|n| n.trim().parse().ok())
}

async fn not_ready_is(want: i64) {
    eventually(&format!("{want} Sites not ready"), async || {
        let got = not_ready();
        if got == Some(want) { Ok(()) } else { Err(got) }
    })
    .await;
}

fn object(resource: &ApiResource, name: &str, spec: Value) -> DynamicObject {
    DynamicObject::new(name, resource).data(json!({ "spec": spec }))
}

async fn merge(api: &Api<DynamicObject>, name: &str, patch: Value) {
    api.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .unwrap_or_else(|e| panic!("patch {name}: {e}"));
}

/// Runs the scenario in `namespace`: `admin` installs the CRDs and plays the user; the operator runs with
/// `operator` until the scenario ends. The slots must be bound ([`bind`]).
pub async fn run(admin: Client, operator: Client, namespace: &str) {
    for (r, scope) in resources() {
        kubewright::cli::ensure_crd(&admin, minimal_crd(&r, scope))
            .await
            .unwrap_or_else(|e| panic!("install the {} CRD: {e}", r.kind));
    }
    let [site, _, issuer, cluster_issuer] = resources().map(|(r, _)| r);
    let apis = Apis::new(&admin, namespace);
    let pp = PostParams::default();
    apis.issuers
        .create(&pp, &object(&issuer, "ca", json!({"duration": "2160h"})))
        .await
        .expect("create the Issuer");
    apis.cluster_issuers
        .create(
            &pp,
            &object(&cluster_issuer, "acme", json!({"duration": "720h"})),
        )
        .await
        .expect("create the ClusterIssuer");
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let operator = Operator::new(operator).controller(reconciler());
    let caches = operator.caches().clone();
    let running = tokio::spawn(operator.run_until(async move {
        let _ = stop_rx.await;
    }));

    // A set of children of a run-time kind, one per host, owned by a parent of a run-time kind.
    apis.sites
        .create(
            &pp,
            &object(
                &site,
                "shop",
                json!({"hosts": ["shop.example.dev", "www.shop.example.dev"], "issuer": "ca"}),
            ),
        )
        .await
        .expect("create the Site shop");
    apis.sites
        .create(
            &pp,
            &object(
                &site,
                "blog",
                json!({"hosts": ["blog.example.dev"], "clusterIssuer": "acme"}),
            ),
        )
        .await
        .expect("create the Site blog");
    apis.certificates_are(
        "a Certificate per host",
        vec![
            (
                "blog-blog-example-dev",
                "blog.example.dev",
                "ClusterIssuer",
                "acme",
                "720h",
            ),
            (
                "shop-shop-example-dev",
                "shop.example.dev",
                "Issuer",
                "ca",
                "2160h",
            ),
            (
                "shop-www-shop-example-dev",
                "www.shop.example.dev",
                "Issuer",
                "ca",
                "2160h",
            ),
        ],
    )
    .await;

    // The run-time kinds' caches are compact, as every typed child's, and the children are filed by owner.
    let shop = apis.sites.get("shop").await.expect("get the Site").uid();
    let shop = shop.expect("a uid");
    let certs = caches
        .get::<SiteCertificate>()
        .expect("a cache of the children");
    assert_eq!(certs.form(), Some(kubewright::Form::Compact));
    let issuers = caches
        .get::<Untyped<SiteClusterIssuers>>()
        .expect("a cache of the watched kind");
    assert_eq!(issuers.form(), Some(kubewright::Form::Compact));
    eventually("the children in the owner index", async || {
        let mut owned: Vec<String> = certs.owned_by(&shop).iter().map(|c| c.name_any()).collect();
        owned.sort();
        if owned == ["shop-shop-example-dev", "shop-www-shop-example-dev"] {
            Ok(())
        } else {
            Err(owned)
        }
    })
    .await;

    // The Certificates report no status yet: by the custom-resource convention neither set is ready, and the
    // Sites (whose status is not written) are counted as not ready; once cert-manager (played here) reports
    // each Ready for its generation, both are ready.
    not_ready_is(2).await;
    for cert in apis.certificates().await {
        apis.report_ready(&cert.0).await;
    }
    not_ready_is(0).await;

    // The set changes: the child no longer desired is deleted (found through the owner index), a new one made.
    merge(
        &apis.sites,
        "shop",
        json!({"spec": {"hosts": ["shop.example.dev", "api.shop.example.dev"]}}),
    )
    .await;
    apis.certificates_are(
        "the set following the hosts",
        vec![
            (
                "blog-blog-example-dev",
                "blog.example.dev",
                "ClusterIssuer",
                "acme",
                "720h",
            ),
            (
                "shop-api-shop-example-dev",
                "api.shop.example.dev",
                "Issuer",
                "ca",
                "2160h",
            ),
            (
                "shop-shop-example-dev",
                "shop.example.dev",
                "Issuer",
                "ca",
                "2160h",
            ),
        ],
    )
    .await;

    // The referenced Issuer changes: its Sites are found through the parents' reference index.
    merge(&apis.issuers, "ca", json!({"spec": {"duration": "4320h"}})).await;
    apis.certificates_are(
        "the Certificates from the changed Issuer",
        vec![
            (
                "blog-blog-example-dev",
                "blog.example.dev",
                "ClusterIssuer",
                "acme",
                "720h",
            ),
            (
                "shop-api-shop-example-dev",
                "api.shop.example.dev",
                "Issuer",
                "ca",
                "4320h",
            ),
            (
                "shop-shop-example-dev",
                "shop.example.dev",
                "Issuer",
                "ca",
                "4320h",
            ),
        ],
    )
    .await;

    // The watched ClusterIssuer changes: the mapper names the Sites that use it.
    merge(
        &apis.cluster_issuers,
        "acme",
        json!({"spec": {"duration": "1440h"}}),
    )
    .await;
    apis.certificates_are(
        "the Certificate from the changed ClusterIssuer",
        vec![
            (
                "blog-blog-example-dev",
                "blog.example.dev",
                "ClusterIssuer",
                "acme",
                "1440h",
            ),
            (
                "shop-api-shop-example-dev",
                "api.shop.example.dev",
                "Issuer",
                "ca",
                "4320h",
            ),
            (
                "shop-shop-example-dev",
                "shop.example.dev",
                "Issuer",
                "ca",
                "4320h",
            ),
        ],
    )
    .await;

    // A Site without hosts has no children.
    merge(&apis.sites, "blog", json!({"spec": {"hosts": []}})).await;
    apis.certificates_are(
        "the empty set",
        vec![
            (
                "shop-api-shop-example-dev",
                "api.shop.example.dev",
                "Issuer",
                "ca",
                "4320h",
            ),
            (
                "shop-shop-example-dev",
                "shop.example.dev",
                "Issuer",
                "ca",
                "4320h",
            ),
        ],
    )
    .await;

    // Nothing was written to the Sites: their status is not the operator's.
    for name in ["shop", "blog"] {
        let s = apis.sites.get(name).await.expect("get the Site");
        assert!(
            s.managed_fields()
                .iter()
                .all(|m| m.manager.as_deref() != Some(NAME)),
            "{name}: {:?}",
            s.managed_fields()
        );
    }
    let _ = stop_tx.send(());
    running
        .await
        .expect("the operator task")
        .expect("the operator ran without error");
}
