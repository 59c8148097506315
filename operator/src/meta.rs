//! Reading one label or annotation of metadata that may be absent, as a pod template's is
//! (`Option<ObjectMeta>`): [`ObjectMetaExt`].

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

/// One label or annotation of an [`ObjectMeta`], or of an `Option<ObjectMeta>` (a pod template's, a
/// StatefulSet's claim templates'), without unwrapping each level. For a whole object, kube's
/// `ResourceExt::labels()` and `annotations()` do the same.
///
/// ```
/// use k8s_openapi::api::apps::v1::Deployment;
/// use kubewright::meta::ObjectMetaExt;
/// use kubewright::object;
///
/// let deployment = object!(Deployment {
///     spec: { template: { metadata: { annotations: { "example.dev/config-hash": "4f2a" } } } },
/// });
/// let template = &deployment.spec.as_ref().unwrap().template;
/// assert_eq!(
///     template.metadata.annotation("example.dev/config-hash").map(String::as_str),
///     Some("4f2a")
/// );
/// assert_eq!(template.metadata.label("app"), None);
/// assert_eq!(None::<k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta>.label("app"), None);
/// ```
pub trait ObjectMetaExt {
    /// The value of the label `key`, if the metadata and the label are there.
    fn label(&self, key: &str) -> Option<&String>;

    /// The value of the annotation `key`, if the metadata and the annotation are there.
    fn annotation(&self, key: &str) -> Option<&String>;
}

impl ObjectMetaExt for ObjectMeta {
    fn label(&self, key: &str) -> Option<&String> {
        self.labels.as_ref()?.get(key)
    }

    fn annotation(&self, key: &str) -> Option<&String> {
        self.annotations.as_ref()?.get(key)
    }
}

impl ObjectMetaExt for Option<ObjectMeta> {
    fn label(&self, key: &str) -> Option<&String> {
        self.as_ref()?.label(key)
    }

    fn annotation(&self, key: &str) -> Option<&String> {
        self.as_ref()?.annotation(key)
    }
}
