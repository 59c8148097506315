//! # `#[derive(Reconciler)]`: the attribute reference
//!
//! The derive declares a [`Reconciler`](struct@crate::Reconciler) with attributes. Put it beside kube's
//! `CustomResource` on the spec struct (the root kind is the struct kube generates, found from
//! `#[kube(kind = "..")]`), or on a hand-written root type with `#[reconciler(root)]`. It generates, on the
//! root kind:
//!
//! - `pub fn reconciler() -> kubewright::Reconciler<Root>`: the builder calls the attributes stand for, in the
//!   order they are written;
//! - one `pub const NAME: kubewright::StashKey<T>` per `#[stash(name: T)]`;
//! - with `#[admission(..)]`, `pub fn webhooks() -> kubewright::admission::Webhooks<Root>`;
//! - with `#[version(..)]`, `pub fn versions() -> kubewright::conversion::Versions<Root>`;
//! - without `data = T`, `impl kubewright::Declared for Root`, which hands those to an operator binary's
//!   `App::operate::<Root>()` (feature `cli`) with the CRD.
//!
//! Nothing else: the generated code is a handful of calls to the public builder API, each documented below
//! with the call it stands for, so an operator can always be written (or read) without the derive.
//!
//! ```
//! use std::sync::Arc;
//!
//! use k8s_openapi::api::apps::v1::Deployment;
//! use k8s_openapi::api::core::v1::{ConfigMap, Service};
//! use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
//! use kube::runtime::reflector::ObjectRef;
//! use kube::{CustomResource, ResourceExt};
//! use kubewright::{ChildOutcome, Context, Outcome, Reconciler, ReconcilerStatus};
//! use schemars::JsonSchema;
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(CustomResource, Reconciler, Clone, Debug, Serialize, Deserialize, JsonSchema)]
//! #[kube(group = "example.dev", version = "v1", kind = "WebApp", namespaced, status = "WebAppStatus")]
//! #[reconciler(finalizer = "example.dev/cleanup")]
//! #[sync(resolve_image, stores = [image])]                          // a custom step
//! #[child(desired = desired_deployment, reflect = reflect_deployment, reads = [image])] // type inferred
//! #[child(Service, desired = desired_service)]                      // or named
//! #[watches(ConfigMap, map = webapps_for_configmap)]
//! #[finalize(release_dns)]
//! #[stash(image: String)]                                           // WebApp::IMAGE: StashKey<String>
//! pub struct WebAppSpec {
//!     image: String,
//! }
//!
//! // `ReconcilerStatus` (conditions and observed generation) derived from the two fields of those names.
//! #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, ReconcilerStatus)]
//! pub struct WebAppStatus {
//!     observed_generation: Option<i64>,
//!     #[serde(default)]
//!     conditions: Vec<Condition>,
//!     deployment: Option<String>,
//! }
//!
//! fn resolve_image(app: &mut WebApp, cx: &mut Context) -> kubewright::Result<Outcome> {
//!     cx.stash_mut().store(&WebApp::IMAGE, format!("registry.example.dev/{}", app.spec.image));
//!     Ok(Outcome::Continue)
//! }
//!
//! fn desired_deployment(app: &WebApp, cx: &mut Context) -> kubewright::Result<Option<Deployment>> {
//!     let image = cx.stash().get(&WebApp::IMAGE)?;
//!     let mut d = Deployment::default();
//!     d.metadata.name = Some(app.name_any());
//!     # let _ = image;
//!     Ok(Some(d))
//! }
//!
//! fn reflect_deployment(status: &mut WebAppStatus, child: &ChildOutcome<Deployment>) {
//!     status.deployment = child.child().map(|d| d.name_any());
//! }
//!
//! fn desired_service(app: &WebApp, _cx: &mut Context) -> kubewright::Result<Option<Service>> {
//!     let mut s = Service::default();
//!     s.metadata.name = Some(app.name_any());
//!     Ok(Some(s))
//! }
//!
//! fn webapps_for_configmap(cm: Arc<ConfigMap>) -> Vec<ObjectRef<WebApp>> {
//!     let ns = cm.namespace().unwrap_or_default();
//!     cm.labels().get("example.dev/webapp").map(|app| ObjectRef::new(app).within(&ns)).into_iter().collect()
//! }
//!
//! fn release_dns(_app: &mut WebApp, _cx: &mut Context) -> kubewright::Result<Outcome> {
//!     Ok(Outcome::Continue)
//! }
//!
//! let reconciler: Reconciler<WebApp> = WebApp::reconciler();
//! assert_eq!(reconciler.name(), "webapp-controller");
//! ```
//!
//! The `reconciler()` above is, by hand:
//!
//! ```text
//! Reconciler::new("webapp-controller")
//!     .watches_with::<ConfigMap>(|cm, _caches| webapps_for_configmap(cm))
//!     .step(WithFinalizer::new("example.dev/cleanup", Sequence::new("steps")
//!         .step(SyncReconciler::new("resolve_image", resolve_image))
//!         .step(ChildReconciler::new("deployment", desired_deployment).reflect_status(reflect_deployment))
//!         .step(ChildReconciler::<WebApp, Service>::new("service", desired_service))
//!         .step(SyncReconciler::new("release_dns", |_, _| Ok(Outcome::Continue)).finalize(release_dns))))
//! ```
//!
//! # Where the root kind comes from
//!
//! | the derive is on | the root kind | its status |
//! | --- | --- | --- |
//! | a spec struct with `#[kube(kind = "WebApp", status = "WebAppStatus", ..)]` | `WebApp` (or kube's `root = ".."`) | `status` is required and must implement [`ReconcilerStatus`](crate::ReconcilerStatus) |
//! | a type with `#[reconciler(root)]`, or with no `#[kube]` | the type itself | its `HasStatus::Status` |
//! | a marker struct with `#[reconciler(parent = Service)]` | [`Foreign<Service>`](crate::Foreign): a built-in or another project's kind; `reconciler()` is generated on the marker | none: never written, its `Ready` changes are events and metrics (no `reflect`, no `#[admission]`) |
//!
//! A built-in kind as the parent, an Ingress for every annotated Service:
//!
//! ```
//! use k8s_openapi::api::core::v1::Service;
//! use k8s_openapi::api::networking::v1::Ingress;
//! use kubewright::{Context, Foreign, Reconciler};
//!
//! #[derive(Reconciler)]
//! #[reconciler(parent = Service, name = "expose-controller")]
//! #[child(Ingress, desired = desired_ingress)]
//! struct Expose;
//!
//! fn desired_ingress(svc: &Foreign<Service>, _: &mut Context) -> kubewright::Result<Option<Ingress>> {
//!     let annotations = svc.metadata.annotations.clone().unwrap_or_default();
//!     let exposed = annotations.get("example.dev/expose").is_some_and(|v| v == "true");
//!     Ok(exposed.then(Ingress::default))
//! }
//!
//! let reconciler: Reconciler<Foreign<Service>> = Expose::reconciler();
//! assert_eq!(reconciler.name(), "expose-controller");
//! ```
//!
//! With the `cli` feature, `App::operate::<Expose>()` runs it (the derive implements `kubewright::cli::Operate`
//! for the marker): its reconciler and RBAC, and no CRD.
//!
//! A child of a kind with no Rust type, declared by group/version/kind ([`kind!`](crate::kind),
//! [`Untyped`](crate::untyped::Untyped)), is named in `#[child]` like any other; it is ready when its own
//! `Ready` condition is `True` for its generation ([`readiness::conventional`](crate::readiness::conventional)):
//!
//! ```
//! use kubewright::prelude::*;
//! use kubewright::untyped::Untyped;
//!
//! kubewright::kind! {
//!     /// cert-manager's Certificate.
//!     pub CertificateKind = "cert-manager.io/v1", "Certificate", "certificates", Namespaced
//! }
//! type Certificate = Untyped<CertificateKind>;
//!
//! #[derive(CustomResource, Reconciler, Clone, Debug, Serialize, Deserialize, JsonSchema)]
//! #[kube(group = "example.dev", version = "v1", kind = "Domain", namespaced, status = "DomainStatus")]
//! #[child(Certificate, desired = desired_certificate)]
//! pub struct DomainSpec {
//!     pub host: String,
//! }
//!
//! #[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema, ReconcilerStatus)]
//! #[serde(rename_all = "camelCase")]
//! pub struct DomainStatus {
//!     pub observed_generation: Option<i64>,
//!     #[serde(default)]
//!     pub conditions: Vec<Condition>,
//! }
//!
//! fn desired_certificate(d: &Domain, _: &mut Context) -> kubewright::Result<Option<Certificate>> {
//!     let spec = serde_json::json!({"spec": {"dnsNames": [d.spec.host], "secretName": format!("{}-tls", d.name_any())}});
//!     Ok(Some(Certificate::new(&d.name_any(), spec)))
//! }
//!
//! let wiring = Domain::reconciler().wiring();
//! assert_eq!(wiring.kinds()[0].plural, "certificates");
//! ```
//!
//! A kind chosen when the operator runs goes in a slot declared with [`dynamic_kind!`](crate::dynamic_kind) and is
//! named through it (`Untyped<Slot>`) in `#[child]`, `#[children]` and `#[watches]` like any other kind; bind each
//! slot ([`RunTimeKind::bind`](crate::untyped::RunTimeKind::bind)) before building the reconciler:
//!
//! ```
//! use std::sync::Arc;
//!
//! use kube::api::ApiResource;
//! use kube::runtime::reflector::ObjectRef;
//! use kubewright::prelude::*;
//! use kubewright::untyped::{RunTimeKind, Untyped};
//!
//! kubewright::dynamic_kind! {
//!     /// The children's kind, from the operator's configuration.
//!     pub Routes, Namespaced
//! }
//! kubewright::dynamic_kind! {
//!     /// A kind that names the gateway it concerns in `spec.gateway`.
//!     pub Policies, Namespaced
//! }
//! type Route = Untyped<Routes>;
//! type Policy = Untyped<Policies>;
//!
//! #[derive(CustomResource, Reconciler, Clone, Debug, Serialize, Deserialize, JsonSchema)]
//! #[kube(group = "example.dev", version = "v1", kind = "Gateway", namespaced, status = "GatewayStatus")]
//! #[children(Route, desired = routes, id = route_name)]
//! #[watches(Policy, map = gateway_of_policy)]
//! pub struct GatewaySpec {
//!     pub hosts: Vec<String>,
//! }
//!
//! #[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema, ReconcilerStatus)]
//! #[serde(rename_all = "camelCase")]
//! pub struct GatewayStatus {
//!     pub observed_generation: Option<i64>,
//!     #[serde(default)]
//!     pub conditions: Vec<Condition>,
//! }
//!
//! fn routes(g: &Gateway, _: &mut Context) -> kubewright::Result<Vec<Route>> {
//!     let route = |host: &String| {
//!         let name = format!("{}-{}", g.name_any(), host.replace('.', "-"));
//!         Route::new(&name, serde_json::json!({"spec": {"hostnames": [host]}}))
//!     };
//!     Ok(g.spec.hosts.iter().map(route).collect())
//! }
//!
//! fn route_name(r: &Route) -> String {
//!     r.name_any()
//! }
//!
//! fn gateway_of_policy(p: Arc<Policy>) -> Vec<ObjectRef<Gateway>> {
//!     let namespace = p.namespace().unwrap_or_default();
//!     let gateway = p.data.get("spec").and_then(|s| s["gateway"].as_str());
//!     gateway.map(|g| ObjectRef::new(g).within(&namespace)).into_iter().collect()
//! }
//!
//! // At start, from a flag or discovery:
//! let resource = |group: &str, kind: &str, plural: &str| ApiResource {
//!     group: group.into(),
//!     version: "v1".into(),
//!     api_version: format!("{group}/v1"),
//!     kind: kind.into(),
//!     plural: plural.into(),
//! };
//! Routes::bind(&resource("gateway.networking.k8s.io", "HTTPRoute", "httproutes")).unwrap();
//! Policies::bind(&resource("policy.example.dev", "RoutePolicy", "routepolicies")).unwrap();
//! let wiring = Gateway::reconciler().wiring();
//! let plurals: Vec<&str> = wiring.kinds().iter().map(|k| k.plural.as_str()).collect();
//! assert_eq!(plurals, ["httproutes", "routepolicies"]);
//! ```
//!
//! # `#[reconciler(..)]`: the whole reconciler
//!
//! | key | meaning | builder call |
//! | --- | --- | --- |
//! | `name = "webapp-controller"` | controller name, event reporter, default field manager; default `<kind>-controller` | `Reconciler::new(name)` |
//! | `finalizer = "example.dev/cleanup"` | a finalizer around all steps; `#[finalize]` steps run under it | `.step(WithFinalizer::new(finalizer, steps))` |
//! | `concurrency = 4` | parents reconciled at once (0: unlimited; default 16, [`DEFAULT_CONCURRENCY`](crate::reconciler::DEFAULT_CONCURRENCY)) | `.concurrency(4)` |
//! | `debounce_ms = 100` | wait after a trigger, to batch bursts | `.debounce(Duration::from_millis(100))` |
//! | `field_manager = "me"` | server-side apply field manager | `.field_manager("me")` |
//! | `one_action_per_pass` | at most one write per pass | `.one_action_per_pass(true)` |
//! | `data = Settings` | `reconciler(data)` takes a `Settings` or `None` (`data: impl Into<Option<Settings>>`: a binary that only prints manifests passes `None`); steps read it with [`Context::data`](crate::Context::data), `None` when none was given | `.data_opt(data.into())` |
//! | `root` | the derive is on the root type itself | |
//! | `parent = Service` | the parent is that kind, whose status is not written; the derive is on a marker struct | `Reconciler::<Foreign<Service>>::new(..)` |
//! | `storage` | with `#[version(..)]`: this kind's own version is the one stored | `Versions::new().storage(version)` |
//! | `crate = "::kubewright"` | where the runtime crate is (for re-exports) | |
//!
//! Several `#[reconciler]` attributes are merged; a key given twice is an error. A misspelt key is one error
//! (with the closest key): the other keys of the attribute still take effect.
//!
//! # Steps, in the order written
//!
//! ## `#[child(..)]`: one child
//!
//! `#[child(desired = f)]` or `#[child(Type, desired = f, ..)]`: keeps one child equal to what `f` returns
//! (see [`ChildReconciler`](crate::ChildReconciler)). The child type is inferred from `f` when not named.
//!
//! | key | signature / values | builder call |
//! | --- | --- | --- |
//! | `desired = f` (required) | `fn(&Root, &mut Context) -> kubewright::Result<Option<Child>>`, or an `async fn` of that signature | `ChildReconciler::new("<kind>", f)`; for an `async fn`, `ChildReconciler::new_async("<kind>", \|p, cx\| f(p, cx).boxed())` |
//! | `reflect = g` | `fn(&mut Status, &ChildOutcome<Child>)` | `.reflect_status(g)` |
//! | `reflect_name = field` | a field of the status, `Option<String>`: the child's name while it is in place, `None` once it is gone (after `reflect`) | `.reflect_name(\|status\| &mut status.field)` |
//! | `strategy = "apply"` or `"update"` | server-side apply (default) or merge-then-update | `.strategy(WriteStrategy::Apply { force: true })` or `.strategy(WriteStrategy::Update)` |
//! | `strategy = "create"` | create the child once and never write it again (a generated password) | `.strategy(WriteStrategy::CreateOnly)` |
//! | `force = false` | do not take fields from other managers (apply only: an error with `"update"` or `"create"`) | `.strategy(WriteStrategy::Apply { force: false })` |
//! | `field_manager = "me"` | this child's field manager | `.field_manager("me")` |
//! | `sanitize = h` | `fn(&Child) -> serde_json::Value`, what logs show of the child | `.sanitize(h)` |
//! | `generate_name` | unnamed children get `generateName: <parent>-` | `.generate_name()` |
//! | `condition = "DeploymentReady"` | the condition type it reports (default `<Kind>Ready`) | `.condition(..)` |
//! | `ready = r` | `fn(&Child) -> kubewright::readiness::Readiness`: when the child is ready (default: [`readiness::builtin`](crate::readiness::builtin)) | `.ready(r)` |
//! | `reads = [image]`, `stores = [..]` | the stash keys `desired` reads and stores, checked at compile time ([step order](#step-order)) | |
//!
//! ## `#[children(..)]`: a set of children
//!
//! `#[children(desired = f, id = g, reflect = h)]` (optionally `#[children(Type, ..)]`): keeps a set of children
//! of one kind, matched by `id` (see [`ChildSetReconciler`](crate::ChildSetReconciler)).
//!
//! | key | signature | builder call |
//! | --- | --- | --- |
//! | `desired = f` (required) | `fn(&Root, &mut Context) -> kubewright::Result<Vec<Child>>`, or an `async fn` of that signature | `ChildSetReconciler::new("<plural>", f, id)`; for an `async fn`, `ChildSetReconciler::new_async("<plural>", \|p, cx\| f(p, cx).boxed(), id)` |
//! | `id = g` (required) | `fn(&Child) -> String` | |
//! | `reflect = h` | `fn(&mut Status, &BTreeMap<String, ChildOutcome<Child>>)` | `.reflect_status(h)` |
//! | `strategy = "apply"` | server-side apply, each child kept equal to its desired form (the default) | `.strategy(SetStrategy::Apply { force: true })` |
//! | `strategy = "create"` | create each child once and never write it again (Jobs, backups): a changed desired form leaves the existing children as they are; to replace one, delete it or give the new form a new name and id | `.strategy(SetStrategy::CreateOnly)` |
//! | `force = false` | do not take fields from other managers (apply only: an error with `"create"`) | `.strategy(SetStrategy::Apply { force: false })` |
//! | `retain = g` | `fn(&Root, &Child) -> kubewright::Retention`: what becomes of each child no longer desired: kept, kept as the newest `limit` of a history, or deleted (the default without `retain`); see [`ChildSetReconciler::retain`](crate::ChildSetReconciler::retain) | `.retain(g)` |
//! | `condition = ".."` | the condition type (default `<Kind>sReady`) | `.condition(..)` |
//! | `ready = r` | `fn(&Child) -> kubewright::readiness::Readiness`, for each child (default: [`readiness::builtin`](crate::readiness::builtin); with `strategy = "create"`, [`readiness::finished`](crate::readiness::finished): a Job is ready once `Complete` or `Failed`) | `.ready(r)` |
//! | `reads = [..]`, `stores = [..]` | the stash keys `desired` reads and stores ([step order](#step-order)) | |
//!
//! The strategy is given as for one child (`strategy = ".."`, and `.strategy(..)` by hand), with the set's
//! own [`SetStrategy`](crate::SetStrategy): a set has no `"update"`. Children a `retain` rule keeps appear in
//! the outcomes `reflect` sees as [`ChildOutcome::Unchanged`](crate::ChildOutcome::Unchanged) (so a reflection
//! lists the running Jobs, say); the set's condition considers only the desired children and those the rule
//! keeps with `Retention::Keep`, not the history. The run-once children of a CronJob:
//!
//! ```text
//! #[children(Job, desired = due_job, id = job_name, strategy = "create", retain = job_history, reflect = active_jobs)]
//!
//! fn job_history(cron: &CronJob, job: &Job) -> Retention {
//!     match finished(job) {   // the author's classifier
//!         Some(Finished::Succeeded) => Retention::History { class: "Succeeded".into(), limit: cron.spec.successful_jobs_history_limit, at: scheduled_at(job) },
//!         Some(Finished::Failed) => Retention::History { class: "Failed".into(), limit: cron.spec.failed_jobs_history_limit, at: scheduled_at(job) },
//!         None => Retention::Keep, // still running
//!     }
//! }
//! ```
//!
//! Children started on a cron schedule get these rules from [`schedule::Runs`](crate::schedule::Runs): its
//! `desired` gives the schedule times whose runs should exist, `retain` the history, `requeue` the next pass and
//! [`schedule::observe`](crate::schedule::observe) what a reflection reports (the `cronjob` example).
//!
//! ## `#[sync(f)]`: a custom step
//!
//! `f: fn(&mut Root, &mut Context) -> kubewright::Result<Outcome>`, or an `async fn` of that signature (a step
//! that awaits: an external system, a call through [`Context::client`](crate::Context::client)); one function
//! per attribute. Builder call: `SyncReconciler::new("f", f)`; for an `async fn`,
//! `SyncReconciler::new_async("f", |p, cx| f(p, cx).boxed())`. After the function, `stores = [image]` and
//! `reads = [image]` declare the stash keys it stores and reads (see [below](#step-order)).
//!
//! A `#[sync]` (or `#[finalize]`) step that writes children of its own writes them as a child step does with
//! [`Context::create_owned`](crate::Context::create_owned) (create once),
//! [`Context::apply_owned`](crate::Context::apply_owned) (keep equal to a desired form) and
//! [`Context::delete_owned`](crate::Context::delete_owned): the controller owner reference with
//! `blockOwnerDeletion`, the owner label, the `Created`/`Updated`/`Deleted` events on the parent, the memory of
//! children written that the cache does not show yet, and never someone else's object. Declare the kind with
//! `#[owns(..)]` so that its changes bring the parent back and the calls find the child in the cache. Unlike a
//! child step's, these writes (and any made with [`Context::execute`](crate::Context::execute)) are not taken
//! for echoes: their watch events queue the next pass, so a status the step computed before the write is
//! brought up to date ([`reconcilers`](crate::reconcilers#echoes), "Echoes"):
//!
//! ```
//! # use k8s_openapi::api::batch::v1::Job;
//! # use kube::{CustomResource, ResourceExt};
//! # use kubewright::{ChildOutcome, Context, Outcome, Reconciler};
//! # use schemars::JsonSchema;
//! # use serde::{Deserialize, Serialize};
//! # #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
//! # pub struct S { observed_generation: Option<i64>, conditions: Vec<k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition> }
//! # impl kubewright::ReconcilerStatus for S {
//! #     fn conditions(&self) -> &[k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition] { &self.conditions }
//! #     fn conditions_mut(&mut self) -> &mut Vec<k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition> { &mut self.conditions }
//! #     fn observed_generation(&self) -> Option<i64> { self.observed_generation }
//! #     fn set_observed_generation(&mut self, g: Option<i64>) { self.observed_generation = g }
//! # }
//! #[derive(CustomResource, Reconciler, Clone, Debug, Serialize, Deserialize, JsonSchema)]
//! #[kube(group = "example.dev", version = "v1", kind = "Backup", namespaced, status = "S")]
//! #[sync(start_backup)]
//! #[owns(Job)]
//! pub struct BackupSpec {
//!     image: String,
//! }
//!
//! async fn start_backup(backup: &mut Backup, cx: &mut Context) -> kubewright::Result<Outcome> {
//!     let job: Job = serde_json::from_value(serde_json::json!({
//!         "metadata": {"name": format!("{}-run", backup.name_any())},
//!         "spec": {"template": {"spec": {"restartPolicy": "Never",
//!                  "containers": [{"name": "backup", "image": backup.spec.image}]}}},
//!     }))?;
//!     // Owned by the Backup, labelled, announced with a `Created` event; left alone once it exists.
//!     if let ChildOutcome::Created(job) = cx.create_owned(job).await? {
//!         tracing::info!(job = %job.name_any(), "backup started");
//!     }
//!     Ok(Outcome::Continue)
//! }
//! # fn main() { let _ = Backup::reconciler(); }
//! ```
//!
//! ## `#[finalize(f)]`: cleanup while the root is deleted
//!
//! `f: fn(&mut Root, &mut Context) -> kubewright::Result<Outcome>`, or an `async fn` of that signature, run while
//! the root is being deleted, under `#[reconciler(finalizer = "..")]`, which is required. Cleanup steps run in
//! reverse declaration order; the finalizer is removed once they all return `Outcome::Continue`.
//! Builder call: `SyncReconciler::new("f", |_, _| Ok(Outcome::Continue)).finalize(f)`; for an `async fn`,
//! `.finalize_async(|p, cx| f(p, cx).boxed())`.
//!
//! # Plain or `async fn`
//!
//! `#[sync]`, `#[finalize]` and the `desired` functions of `#[child]` and `#[children]` may each be a plain
//! `fn` or an `async fn`, with no key to say which: the compiler tells them apart by what the function returns
//! (a `Result`, or a future of one). The future of an `async fn` must be `Send`, as the controller runs it on
//! any thread: hold nothing that is not `Send` (an `Rc`, a `RefCell` borrow) across an `.await`. A function of
//! neither shape is one error at its name in the attribute, giving the signature expected.
//!
//! # Kinds watched outside of child steps
//!
//! | attribute | meaning | builder call |
//! | --- | --- | --- |
//! | `#[owns(Secret, ..)]` | children a `#[sync]` step manages: watched, and they trigger their controller parent | `.owns::<Secret>()` |
//! | `#[tracks(ConfigMap, ..)]` | kinds steps read with [`Context::get`](crate::Context::get): cached, and tracked objects trigger their reader | `.tracks::<ConfigMap>()` |
//! | `#[watches(ConfigMap, by = field)]` | the spec's `field` (`String`, `Option<String>`, `Vec<String>`) names ConfigMaps in the parent's namespace (cluster-wide for a cluster-scoped kind); a change to one triggers exactly the parents that name it, found in a field index of the parent cache; steps read it with [`Context::get`](crate::Context::get) | `.references::<ConfigMap>(\|p\| names(&p.spec.field))` |
//! | `#[watches(ConfigMap, map = f)]` | any change triggers the parents `f` returns; `f: fn(Arc<ConfigMap>) -> Vec<ObjectRef<Root>>`, or `fn(Arc<ConfigMap>, &Caches) -> Vec<ObjectRef<Root>>` to read the caches (e.g. a field index, [`Cache::indexed`](crate::Cache::indexed)); the type may be left out: it is inferred from `f` | `.watches_with::<ConfigMap>(f)` |
//!
//! # `#[admission(..)]`: validating and defaulting webhooks
//!
//! | key | meaning | builder call |
//! | --- | --- | --- |
//! | `validate = f` | `f: fn(&kubewright::admission::Request<Root>) -> kubewright::admission::Verdict`, run on create and update (the request has the old object on update) | `.validate(f)` |
//! | `default = f` | `f: fn(&mut Root)`, fills the object in place before validation; the API server gets a JSON patch | `.default(f)` |
//! | `deletes` | deletes go to the validator too (`object` is absent, `old_object` the stored one); needs `validate` | `.validate_deletes()` |
//! | `failure_policy = "Ignore"` | what the API server does when the webhook cannot be reached (`"Fail"` by default) | `.failure_policy(FailurePolicy::Ignore)` |
//! | `timeout_seconds = 5` | how long the API server waits, 1 to 30 (10 by default) | `.timeout_seconds(5)` |
//!
//! The attribute may be repeated (validators run in order, the first denial wins). `Root::webhooks()` builds
//! `kubewright::admission::Webhooks::<Root>::new()` with those calls; serve it with
//! `kubewright::admission::WebhookServer::new(certs).kind(Root::webhooks())` (see [`crate::admission`]).
//!
//! # `#[version(Type, ..)]`: other versions of the kind
//!
//! The kind the derive is on is the hub: the version its reconciler reads and writes. Each `#[version(V)]`
//! serves another version `V` (its own `#[derive(CustomResource)]` type, same group and kind), converted with
//! `TryFrom<V> for Root` and `TryFrom<Root> for V` (a `From` impl gives both; a missing one is an error on `V`
//! in the attribute). Exactly one version is stored: `#[version(V, storage)]` or `#[reconciler(storage)]` for
//! the hub's own; none, or two, is an error.
//!
//! | key | meaning | builder call |
//! | --- | --- | --- |
//! | `storage` | the API server stores objects at `V`'s version | `.storage(V::version(&()))` |
//! | `deprecated` | requests to `V`'s version get the API server's deprecation warning | `.deprecated(V::version(&()), "")` |
//! | `deprecated = "use v2"` | ... with this warning | `.deprecated(V::version(&()), "use v2")` |
//!
//! `Root::versions()` builds [`Versions::<Root>::new()`](crate::conversion::Versions) with those calls: the
//! merged CRD, the conversion webhook `App::operate` serves, and the checks a test can call (lossless round
//! trips, a CRD kept elsewhere against the types). The WebApp example (`examples/src/webapp_derive.rs`) serves
//! `v1` and `v2` this way, `v2` stored, with `#[reconciler(storage)]` and
//! `#[version(crate::webapp::v1::WebApp, deprecated = "..")]`, converting losslessly with the annotation
//! `example.dev/v2-fields` for what `v1` cannot express (the mapping is in `examples/src/webapp.rs`). The smaller
//! `examples::notes` crate module shows the same shape:
//!
//! ```
//! # use k8s_openapi::api::core::v1::ConfigMap;
//! # use kube::{CustomResource, ResourceExt};
//! # use kubewright::{Context, Reconciler};
//! # use schemars::JsonSchema;
//! # use serde::{Deserialize, Serialize};
//! # #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
//! # pub struct S { observed_generation: Option<i64>, conditions: Vec<k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition> }
//! # impl kubewright::ReconcilerStatus for S {
//! #     fn conditions(&self) -> &[k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition] { &self.conditions }
//! #     fn conditions_mut(&mut self) -> &mut Vec<k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition> { &mut self.conditions }
//! #     fn observed_generation(&self) -> Option<i64> { self.observed_generation }
//! #     fn set_observed_generation(&mut self, g: Option<i64>) { self.observed_generation = g }
//! # }
//! mod v1 {
//!     # use super::*;
//!     #[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
//!     #[kube(group = "example.dev", version = "v1", kind = "Note", namespaced, status = "S")]
//!     pub struct NoteSpec { pub text: String }
//! }
//!
//! #[derive(CustomResource, Reconciler, Clone, Debug, Serialize, Deserialize, JsonSchema)]
//! #[kube(group = "example.dev", version = "v2", kind = "Note", namespaced, status = "S")]
//! #[reconciler(storage)]                                       // v2 is stored
//! #[version(v1::Note, deprecated = "example.dev/v1 Note is deprecated; use v2")]
//! #[owns(ConfigMap)]
//! pub struct NoteSpec { pub lines: Vec<String> }
//!
//! impl From<v1::Note> for Note {
//!     fn from(old: v1::Note) -> Self {
//!         let lines = old.spec.text.split('\n').map(String::from).collect();
//!         Note { metadata: old.metadata, spec: NoteSpec { lines }, status: old.status }
//!     }
//! }
//! impl From<Note> for v1::Note {
//!     fn from(new: Note) -> Self {
//!         let text = new.spec.lines.join("\n");
//!         v1::Note { metadata: new.metadata, spec: v1::NoteSpec { text }, status: new.status }
//!     }
//! }
//!
//! # fn main() {
//! let crd = Note::versions().crd().unwrap();
//! assert_eq!(crd.spec.versions.len(), 2);
//! # }
//! ```
//!
//! # `#[stash(name: Type, ..)]`: typed stash keys
//!
//! Each entry becomes an associated constant of the root kind, `image` becoming
//! `Root::IMAGE: StashKey<String>`, so storing or reading a value of another type does not compile:
//!
//! ```compile_fail,E0308
//! # use kube::CustomResource;
//! # use kubewright::{Context, Outcome, Reconciler};
//! # use schemars::JsonSchema;
//! # use serde::{Deserialize, Serialize};
//! # #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
//! # pub struct S { observed_generation: Option<i64>, conditions: Vec<k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition> }
//! # impl kubewright::ReconcilerStatus for S {
//! #     fn conditions(&self) -> &[k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition] { &self.conditions }
//! #     fn conditions_mut(&mut self) -> &mut Vec<k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition> { &mut self.conditions }
//! #     fn observed_generation(&self) -> Option<i64> { self.observed_generation }
//! #     fn set_observed_generation(&mut self, g: Option<i64>) { self.observed_generation = g }
//! # }
//! #[derive(CustomResource, Reconciler, Clone, Debug, Serialize, Deserialize, JsonSchema)]
//! #[kube(group = "example.dev", version = "v1", kind = "App", namespaced, status = "S")]
//! #[sync(prepare)]
//! #[stash(replicas: i32)]
//! pub struct AppSpec {}
//!
//! fn prepare(_app: &mut App, cx: &mut Context) -> kubewright::Result<Outcome> {
//!     cx.stash_mut().store(&App::REPLICAS, "three"); // error: expected `i32`
//!     Ok(Outcome::Continue)
//! }
//! # fn main() {}
//! ```
//!
//! ## Step order
//!
//! A step that declares `reads = [key]` needs a step that runs before it to declare `stores = [key]`: an
//! earlier `#[sync]`, `#[child]` or `#[children]` while the root lives; while it is deleted only `#[finalize]`
//! steps run, last declared first, so a `#[finalize]` declared below it. Otherwise the build fails on the key
//! read, naming the step that stores it and where it must go; a key not declared in `#[stash]` is an error
//! listing the declared ones. At run time, whether declared or not, a step of a [`Sequence`](crate::Sequence)
//! that reads a key no earlier step stored this pass fails the pass with
//! [`Error::StashNotStored`](crate::Error::StashNotStored), naming the key, the step and the steps seen storing it.
//!
//! ```text
//! #[sync(resolve_image, stores = [image])]
//! #[child(desired = desired_deployment, reads = [image])]
//! #[stash(image: String)]
//! ```
//!
//! # Diagnostics
//!
//! Every misuse is a compile error on the token at fault that names the attribute and the fix, and all of
//! them are reported in one build; the derive then still emits `reconciler()` and the stash keys, so code that
//! uses them does not add errors of its own. Functions named in attributes are checked by the compiler against
//! the signatures above, with the error on the function's name in the attribute:
//!
//! ```compile_fail,E0593
//! # use k8s_openapi::api::apps::v1::Deployment;
//! # use kube::CustomResource;
//! # use kubewright::{Context, Reconciler};
//! # use schemars::JsonSchema;
//! # use serde::{Deserialize, Serialize};
//! # #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
//! # pub struct S { observed_generation: Option<i64>, conditions: Vec<k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition> }
//! # impl kubewright::ReconcilerStatus for S {
//! #     fn conditions(&self) -> &[k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition] { &self.conditions }
//! #     fn conditions_mut(&mut self) -> &mut Vec<k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition> { &mut self.conditions }
//! #     fn observed_generation(&self) -> Option<i64> { self.observed_generation }
//! #     fn set_observed_generation(&mut self, g: Option<i64>) { self.observed_generation = g }
//! # }
//! #[derive(CustomResource, Reconciler, Clone, Debug, Serialize, Deserialize, JsonSchema)]
//! #[kube(group = "example.dev", version = "v1", kind = "App", namespaced, status = "S")]
//! #[child(desired = desired_deployment)] // error: expected a function taking `&App, &mut Context`
//! pub struct AppSpec {}
//!
//! fn desired_deployment(_app: &App) -> kubewright::Result<Option<Deployment>> {
//!     Ok(None)
//! }
//! # fn main() {}
//! ```
//!
//! The UI tests in the repository's `tests/ui/` hold one case per rule, named after it, with the exact
//! messages. Among the rules: unknown keys (with the closest known key), a missing `desired`, `id` or
//! `map`, a string or closure where a function path is expected, duplicate keys, two child steps of one kind,
//! also when the kinds are inferred from the desired functions (rustc then reports "type annotations needed:
//! multiple impls satisfying `(Kind, Kind): OneStepPerChildKind<_>`" on the second attribute),
//! a type that is not a Kubernetes resource, a cluster-scoped child of a namespaced parent, `#[finalize]`
//! without a finalizer (and a finalizer without `#[finalize]`), unqualified finalizer names, stash keys that
//! are duplicated or not snake_case, a root kind without a status or whose status does not implement
//! `ReconcilerStatus`, an unknown write strategy (a child set's is `"apply"` or `"create"`), `force` with `strategy = "update"` or `"create"`, a function that is neither of
//! the expected signature nor an `async fn` of it, an `async fn` whose future is not `Send`, generic types, and a
//! derive with no step at all.
