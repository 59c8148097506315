//! A `Site`: a Deployment (image resolved by a sync step, through the stash), a Service, one ConfigMap per page
//! (a child set), Secrets watched through a mapper, and a finalizer whose cleanup must run exactly once.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{
    ConfigMap, Container, PodSpec, PodTemplateSpec, Secret, Service, ServiceAccount, ServicePort,
    ServiceSpec,
};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, LabelSelector, ObjectMeta};
use kube::api::{Api, DeleteParams, PostParams};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::wait::{await_condition, conditions};
use kube::{CustomResource, CustomResourceExt, ResourceExt};
use kubewright::reconcilers::Role;
use kubewright::testing::ApiServer;
use kubewright::{ChildOutcome, Context, Operator, Outcome, Reconciler, ReconcilerStatus};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

const SITE_LABEL: &str = "example.dev/site";
const PAGE_LABEL: &str = "example.dev/page";

#[derive(CustomResource, Reconciler, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "example.dev",
    version = "v1",
    kind = "Site",
    namespaced,
    status = "SiteStatus"
)]
#[reconciler(
    name = "site-controller",
    finalizer = "example.dev/cleanup",
    concurrency = 2
)]
#[sync(resolve_image)]
#[child(desired = desired_deployment, reflect = reflect_deployment)]
#[child(Service, desired = desired_service, strategy = "update")]
#[children(desired = desired_pages, id = page_id, reflect = reflect_pages)]
#[owns(ServiceAccount)]
#[watches(Secret, map = sites_for_secret)]
#[finalize(release)]
#[stash(image: String)]
pub struct SiteSpec {
    pub image: String,
    #[serde(default)]
    pub pages: Vec<String>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SiteStatus {
    pub observed_generation: Option<i64>,
    #[serde(default)]
    pub conditions: Vec<Condition>,
    pub deployment: Option<String>,
    #[serde(default)]
    pub pages: Vec<String>,
}

impl ReconcilerStatus for SiteStatus {
    fn conditions(&self) -> &[Condition] {
        &self.conditions
    }
    fn conditions_mut(&mut self) -> &mut Vec<Condition> {
        &mut self.conditions
    }
    fn observed_generation(&self) -> Option<i64> {
        self.observed_generation
    }
    fn set_observed_generation(&mut self, g: Option<i64>) {
        self.observed_generation = g;
    }
}

fn labels(site: &Site) -> BTreeMap<String, String> {
    [(SITE_LABEL.to_string(), site.name_any())].into()
}

fn resolve_image(site: &mut Site, cx: &mut Context) -> kubewright::Result<Outcome> {
    let image = if site.spec.image.contains(':') {
        site.spec.image.clone()
    } else {
        format!("{}:latest", site.spec.image)
    };
    cx.stash_mut().store(&Site::IMAGE, image);
    Ok(Outcome::Continue)
}

fn desired_deployment(site: &Site, cx: &mut Context) -> kubewright::Result<Option<Deployment>> {
    let image = cx.stash().get(&Site::IMAGE)?.clone();
    Ok(Some(Deployment {
        metadata: ObjectMeta {
            name: Some(site.name_any()),
            ..Default::default()
        },
        spec: Some(DeploymentSpec {
            selector: LabelSelector {
                match_labels: Some(labels(site)),
                ..Default::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels(site)),
                    ..Default::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "site".into(),
                        image: Some(image),
                        ..Default::default()
                    }],
                    ..Default::default()
                }),
            },
            ..Default::default()
        }),
        ..Default::default()
    }))
}

fn reflect_deployment(status: &mut SiteStatus, outcome: &ChildOutcome<Deployment>) {
    status.deployment = outcome.child().map(|d| d.name_any());
}

fn desired_service(site: &Site, _cx: &mut Context) -> kubewright::Result<Option<Service>> {
    Ok(Some(Service {
        metadata: ObjectMeta {
            name: Some(site.name_any()),
            ..Default::default()
        },
        spec: Some(ServiceSpec {
            selector: Some(labels(site)),
            // A Service without ports is refused (`spec.ports: Required value`).
            ports: Some(vec![ServicePort {
                port: 80,
                ..Default::default()
            }]),
            ..Default::default()
        }),
        ..Default::default()
    }))
}

fn desired_pages(site: &Site, _cx: &mut Context) -> kubewright::Result<Vec<ConfigMap>> {
    Ok(site
        .spec
        .pages
        .iter()
        .map(|page| ConfigMap {
            metadata: ObjectMeta {
                name: Some(format!("{}-{page}", site.name_any())),
                labels: Some([(PAGE_LABEL.to_string(), page.clone())].into()),
                ..Default::default()
            },
            data: Some([("page".to_string(), page.clone())].into()),
            ..Default::default()
        })
        .collect())
}

fn page_id(cm: &ConfigMap) -> String {
    cm.labels().get(PAGE_LABEL).cloned().unwrap_or_default()
}

fn reflect_pages(status: &mut SiteStatus, pages: &BTreeMap<String, ChildOutcome<ConfigMap>>) {
    status.pages = pages
        .iter()
        .filter(|(_, o)| o.child().is_some())
        .map(|(id, _)| id.clone())
        .collect();
}

fn sites_for_secret(secret: Arc<Secret>) -> Vec<ObjectRef<Site>> {
    let site = secret.labels().get(SITE_LABEL).cloned();
    site.map(|s| ObjectRef::new(&s).within(&secret.namespace().unwrap_or_default()))
        .into_iter()
        .collect()
}

static RELEASED: AtomicUsize = AtomicUsize::new(0);

fn release(_site: &mut Site, _cx: &mut Context) -> kubewright::Result<Outcome> {
    RELEASED.fetch_add(1, Ordering::SeqCst);
    Ok(Outcome::Continue)
}

#[test]
fn the_wiring_follows_the_attributes() {
    let r: Reconciler<Site> = Site::reconciler();
    assert_eq!(r.name(), "site-controller");
    let wiring = r.wiring();
    let roles: Vec<(String, Role)> = wiring
        .kinds()
        .iter()
        .map(|k| (k.kind.clone(), k.role))
        .collect();
    for expected in [
        ("Deployment", Role::Owned),
        ("Service", Role::Owned),
        ("ConfigMap", Role::Owned),
        ("ServiceAccount", Role::Owned),
        ("Secret", Role::Watched),
    ] {
        assert!(
            roles.contains(&(expected.0.to_string(), expected.1)),
            "{expected:?} not in {roles:?}"
        );
    }
    assert_eq!(roles.len(), 5, "{roles:?}");
    assert_eq!(wiring.finalizers(), ["example.dev/cleanup".to_string()]);
}

/// The ClusterRole has exactly the verbs the declared wiring needs, and nothing else.
#[test]
fn the_cluster_role_follows_the_wiring() {
    use kubewright::manifests::Manifests;
    let manifests = Manifests::new("site-operator")
        .reconciler(&Site::reconciler())
        .crd(Site::crd());
    let mut rules: Vec<(String, String, Vec<String>)> = manifests
        .rules()
        .into_iter()
        .map(|r| {
            (
                r.api_groups.unwrap_or_default().join(","),
                r.resources.unwrap_or_default().join(","),
                r.verbs,
            )
        })
        .collect();
    rules.sort();
    let owned = [
        "get", "list", "watch", "create", "patch", "update", "delete",
    ];
    let rule = |g: &str, r: &str, v: &[&str]| {
        (
            g.to_string(),
            r.to_string(),
            v.iter().map(|v| v.to_string()).collect::<Vec<_>>(),
        )
    };
    let mut expected = vec![
        rule("", "configmaps", &owned),
        rule("", "secrets", &["get", "list", "watch"]),
        rule("", "serviceaccounts", &owned),
        rule("", "services", &owned),
        rule("apps", "deployments", &owned),
        rule("events.k8s.io", "events", &["create", "patch"]),
        // The finalizer is added and removed with patches.
        rule(
            "example.dev",
            "sites",
            &["get", "list", "watch", "patch", "update"],
        ),
        rule("example.dev", "sites/status", &["patch", "update"]),
    ];
    expected.sort();
    assert_eq!(rules, expected);
    let yaml = manifests.to_yaml().unwrap();
    assert!(
        yaml.starts_with(
            "---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\n"
        )
    );
}

#[test]
fn the_stash_key_is_typed() {
    let key: kubewright::StashKey<String> = Site::IMAGE;
    assert_eq!(key.name(), "image");
}

/// The generated reconciler's future is `Send`: the operator runs on a multi-threaded runtime.
#[allow(dead_code)]
fn the_controller_is_send(client: kube::Client) {
    fn send<T: Send>(_: &T) {}
    let running = Operator::new(client)
        .controller(Site::reconciler())
        .run_until(async {});
    send(&running);
    drop(tokio::spawn(running));
}

async fn eventually<T>(what: &str, mut f: impl AsyncFnMut() -> Option<T>) -> T {
    for _ in 0..400 {
        if let Some(v) = f().await {
            return v;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("timed out waiting for {what}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_derived_reconciler_runs_end_to_end() {
    let server = ApiServer::new();
    let client = server.client();
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    crds.create(&PostParams::default(), &Site::crd())
        .await
        .unwrap();
    await_condition(crds, "sites.example.dev", conditions::is_crd_established())
        .await
        .unwrap();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(
        Operator::new(client.clone())
            .controller(Site::reconciler())
            .run_until(async move {
                let _ = stop_rx.await;
            }),
    );

    let sites: Api<Site> = Api::namespaced(client.clone(), "default");
    let mut site = Site::new(
        "blog",
        SiteSpec {
            image: "nginx".into(),
            pages: vec!["home".into(), "about".into()],
        },
    );
    site.metadata.namespace = Some("default".into());
    sites.create(&PostParams::default(), &site).await.unwrap();

    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "default");
    let d = eventually("the deployment", async || {
        deployments.get_opt("blog").await.unwrap()
    })
    .await;
    let image = d.spec.unwrap().template.spec.unwrap().containers[0]
        .image
        .clone();
    assert_eq!(
        image.as_deref(),
        Some("nginx:latest"),
        "the sync step's stash value"
    );
    let services: Api<Service> = Api::namespaced(client.clone(), "default");
    eventually("the service", async || {
        services.get_opt("blog").await.unwrap()
    })
    .await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    eventually("the pages", async || {
        cms.get_opt("blog-about").await.unwrap()
    })
    .await;
    let s = eventually("the status", async || {
        let s = sites.get("blog").await.ok()?;
        let status = s.status.clone()?;
        (status.pages.len() == 2 && status.deployment.is_some()).then_some(s)
    })
    .await;
    let status = s.status.unwrap();
    assert_eq!(status.deployment.as_deref(), Some("blog"));
    assert_eq!(status.pages, ["about", "home"]);
    assert_eq!(status.observed_generation, Some(1));
    assert!(
        s.metadata
            .finalizers
            .unwrap()
            .contains(&"example.dev/cleanup".to_string())
    );

    // Deleting the site runs the cleanup exactly once, then the finalizer goes and the site with it (a pass over
    // a stale cached copy that still shows the finalizer does nothing).
    sites
        .delete("blog", &DeleteParams::default())
        .await
        .unwrap();
    eventually("the site gone", async || {
        sites.get_opt("blog").await.unwrap().is_none().then_some(())
    })
    .await;
    let released = RELEASED.load(Ordering::SeqCst);
    assert_eq!(released, 1, "cleanup ran {released} times");

    let _ = stop_tx.send(());
    running.await.unwrap().unwrap();
}
