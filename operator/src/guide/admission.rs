//! # 4. Admission webhooks
//!
//! What a CRD's schema and CEL rules (`#[x_kube(validation = ..)]`, kube's) cannot say, a validating webhook
//! can: `#[admission(validate = f, default = g)]` declares one for the kind. `f` sees each create and update
//! (with the old object on update) and answers a [`Verdict`](crate::admission::Verdict); `g` fills defaults in
//! place. The derive gives `Kind::webhooks()`, and [`App::operate`](crate::cli::App::operate) serves them:
//! in-process on the embedded cluster (so kubectl sees the denial there too), over HTTPS with
//! `--webhook-bind-address`, and in the manifests with `manifests --webhooks`.
//!
//! Both are plain functions, so they are tested by calling them, or through the kind's
//! [`Webhooks`](crate::admission::Webhooks) as the server runs them:
//!
//! ```
//! use kube::core::admission::Operation;
//! use kubewright::admission::Request;
//! use kubewright::prelude::*;
//!
//! #[derive(CustomResource, Reconciler, Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
//! #[kube(group = "example.dev", version = "v1", kind = "Web", namespaced, status = "WebStatus")]
//! #[owns(k8s_openapi::api::core::v1::ConfigMap)]
//! #[admission(validate = validate_web, default = default_web)]
//! pub struct WebSpec {
//!     pub image: String,
//!     #[serde(default, skip_serializing_if = "Option::is_none")]
//!     pub port: Option<i32>,
//! }
//!
//! #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema, ReconcilerStatus)]
//! #[serde(rename_all = "camelCase", default)]
//! pub struct WebStatus {
//!     pub observed_generation: Option<i64>,
//!     pub conditions: Vec<Condition>,
//! }
//!
//! /// An image needs a tag; a change of image is allowed, with a warning.
//! fn validate_web(request: &Request<'_, Web>) -> Verdict {
//!     let Some(web) = request.object else { return Verdict::allow() };
//!     if !web.spec.image.contains(':') {
//!         return Verdict::deny("spec.image needs a tag");
//!     }
//!     match request.old_object {
//!         Some(old) if old.spec.image != web.spec.image => Verdict::allow().warn("the pods restart"),
//!         _ => Verdict::allow(),
//!     }
//! }
//!
//! /// The port is 8080 unless set.
//! fn default_web(web: &mut Web) {
//!     web.spec.port.get_or_insert(8080);
//! }
//!
//! fn create(web: &Web) -> Request<'_, Web> {
//!     Request { operation: Operation::Create, object: Some(web), old_object: None, dry_run: false }
//! }
//!
//! let mut web = Web::new("web", WebSpec { image: "nginx".into(), port: None });
//! assert!(!Web::webhooks().check(&create(&web)).allowed);
//! web.spec.image = "nginx:1.27".into();
//! assert!(Web::webhooks().check(&create(&web)).allowed);
//! Web::webhooks().fill(&mut web);
//! assert_eq!(web.spec.port, Some(8080));
//! ```
//!
//! A webhook runs before anything is stored, so the operator must still not trust what it stores: an object
//! stored while no webhook ran (before it was installed, or with its failure policy `Ignore`) reaches the
//! reconciler as it is. Treat a value the webhook would have refused as an
//! [invalid spec](crate::Error::invalid_spec), and a default it would have filled as that default.
//!
//! Next: [deploying](super::deploying).
