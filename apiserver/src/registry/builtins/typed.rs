//! A built-in kind as k8s-openapi describes it: its names and scope from the type's `Resource` constants,
//! writes checked by a round trip through the type.

use k8s_openapi::{ClusterResourceScope, NamespaceResourceScope};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::registry::resource_type::{OpenApiSource, ResourceType};

/// The scope of a k8s-openapi resource, as a value.
pub(super) trait Scope {
    /// Whether objects live in namespaces.
    const NAMESPACED: bool;
}

impl Scope for NamespaceResourceScope {
    const NAMESPACED: bool = true;
}

impl Scope for ClusterResourceScope {
    const NAMESPACED: bool = false;
}

/// The kind `K` as k8s-openapi describes it, checked on writes by a round trip through `K`.
pub(super) fn builtin<K>() -> ResourceType
where
    K: k8s_openapi::Resource
        + Serialize
        + DeserializeOwned
        + k8s_openapi::schemars::JsonSchema
        + 'static,
    K::Scope: Scope,
{
    ResourceType::new(
        K::GROUP,
        K::VERSION,
        K::KIND,
        K::URL_PATH_SEGMENT,
        <K::Scope as Scope>::NAMESPACED,
    )
    .typed(typed_check::<K>)
    .openapi(OpenApiSource::Builtin(|generator| {
        generator.subschema_for::<K>()
    }))
}

/// Checks and normalizes an object by round-tripping it through its k8s-openapi type (fields the type does
/// not know are dropped, as kube-apiserver prunes them), then drops what Go's `omitempty` would and puts its
/// quantities in canonical form.
fn typed_check<K: Serialize + DeserializeOwned + k8s_openapi::schemars::JsonSchema + 'static>(
    v: Value,
) -> Result<Value, String> {
    round_trip::<K>(v).map(|out| {
        let mut out = crate::omit_empty::omit_empty(out, round_trip::<K>);
        crate::protobuf::omit_zero_scalars(&mut out);
        crate::quantity::canonicalize::<K>(&mut out);
        out
    })
}

fn round_trip<K: Serialize + DeserializeOwned>(v: Value) -> Result<Value, String> {
    let typed: K = serde_json::from_value(v).map_err(|e| e.to_string())?;
    serde_json::to_value(typed).map_err(|e| e.to_string())
}
