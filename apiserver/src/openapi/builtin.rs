//! The component schemas of built-in kinds, generated from their k8s-openapi types (which carry kube-apiserver's
//! schema names and descriptions) in OpenAPI 3.0 form: a reference with a description beside it becomes
//! `allOf: [{$ref}]`, as kube-apiserver writes it. Enum fields get their `enum` lists and "Possible enum
//! values" paragraphs, and schemas their required fields (in Go order), `x-kubernetes-*` extensions and
//! defaults, from `fields.rs`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use k8s_openapi::schemars::SchemaGenerator;
use k8s_openapi::schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

use k8s_openapi::apimachinery::pkg::apis::meta::v1 as meta;

use super::fields;
use super::kind::gvk_extension;
use crate::registry::{OpenApiSource, ResourceType};

/// The generator every document uses: references point into `#/components/schemas/`.
pub(super) fn generator() -> SchemaGenerator {
    SchemaSettings::openapi3().into_generator()
}

/// The component schemas of one set of kinds, shared by every document that lists them.
type Components = Arc<Map<String, Value>>;

/// The name a reference `{"$ref": "#/components/schemas/NAME"}` points to.
pub(super) fn ref_name(reference: &Value) -> Option<String> {
    reference
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.rsplit('/').next())
        .map(str::to_string)
}

/// The schemas of the built-in kinds `kinds` (all of one group-version) and of every type they refer to, the
/// kinds marked with `x-kubernetes-group-version-kind`. Generated once per set of kinds.
pub(super) fn components(kinds: &[&ResourceType]) -> Map<String, Value> {
    static CACHE: OnceLock<Mutex<HashMap<String, Components>>> = OnceLock::new();
    if kinds.is_empty() {
        return Map::new();
    }
    let key = kinds
        .iter()
        .map(|t| format!("{}/{}/{}", t.group, t.version, t.kind))
        .collect::<Vec<_>>()
        .join(",");
    let cache = CACHE.get_or_init(Default::default);
    if let Some(hit) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return (**hit).clone();
    }
    let built = Arc::new(build(kinds));
    cache
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key, built.clone());
    (*built).clone()
}

fn build(kinds: &[&ResourceType]) -> Map<String, Value> {
    let mut generator = generator();
    let mut named = Vec::new();
    for t in kinds {
        if let Some(OpenApiSource::Builtin(register)) = &t.openapi {
            let reference = register(&mut generator).to_value();
            if let Some(name) = ref_name(&reference) {
                named.push((name, *t));
            }
        }
    }
    // What every operation of a group-version refers to, as kube-apiserver publishes it in each document:
    // the bodies and answers of deletes, watches, patches and the resource list; the scale subresource's.
    generator.subschema_for::<meta::WatchEvent<()>>();
    generator.subschema_for::<meta::Status>();
    generator.subschema_for::<meta::DeleteOptions>();
    generator.subschema_for::<meta::Patch>();
    generator.subschema_for::<meta::ListMeta>();
    generator.subschema_for::<meta::APIResourceList>();
    if kinds.iter().any(|t| t.scale.is_some()) {
        generator.subschema_for::<k8s_openapi::api::autoscaling::v1::Scale>();
    }
    let mut defs = generator.take_definitions(true);
    for (name, schema) in defs.iter_mut() {
        if let Value::Object(schema) = schema {
            metadata_optional(schema);
        }
        fields::add(name, schema);
        number_or_string(name, schema);
        any_json(name, schema);
    }
    super::meta::mark(&mut defs);
    for (name, t) in named {
        if let Some(Value::Object(schema)) = defs.get_mut(&name) {
            kind_schema(schema, t);
        }
        // The kind's List, from the table (k8s-openapi has no schema of it).
        let list = format!("{name}List");
        if let Some(Value::Object(mut schema)) = fields::whole(&list) {
            schema.insert(
                "x-kubernetes-group-version-kind".into(),
                serde_json::json!([{ "group": t.group, "kind": format!("{}List", t.kind), "version": t.version }]),
            );
            defs.insert(list, Value::Object(schema));
        }
    }
    defs
}

/// The schemas of what the discovery paths answer (`/api`, `/apis`, `/version`), which the v2 document
/// publishes beside the kinds: `APIVersions`, `APIGroupList`, `APIGroup`, the version `Info` and the types
/// they refer to.
pub(super) fn discovery() -> Map<String, Value> {
    let mut generator = generator();
    generator.subschema_for::<meta::APIVersions>();
    generator.subschema_for::<meta::APIGroupList>();
    generator.subschema_for::<meta::APIGroup>();
    generator.subschema_for::<k8s_openapi::apimachinery::pkg::version::Info>();
    let mut defs = generator.take_definitions(true);
    for (name, schema) in defs.iter_mut() {
        fields::add(name, schema);
    }
    super::meta::mark(&mut defs);
    defs
}

/// kube-apiserver's v3 schemas of the types that hold a number or a string: `oneOf` the two types
/// (k8s-openapi marks them `x-kubernetes-int-or-string` instead).
fn number_or_string(name: &str, schema: &mut Value) {
    let (format, types) = match name {
        "io.k8s.apimachinery.pkg.util.intstr.IntOrString" => {
            (Some("int-or-string"), ["integer", "string"])
        }
        "io.k8s.apimachinery.pkg.api.resource.Quantity" => (None, ["string", "number"]),
        _ => return,
    };
    let mut out = serde_json::json!({
        "description": schema.get("description"),
        "oneOf": [{ "type": types[0] }, { "type": types[1] }],
    });
    if let Some(format) = format {
        out["format"] = format.into();
    }
    *schema = out;
}

/// The types of `apiextensions.k8s.io/v1` that hold any JSON (a default, an example, an enum member) or one
/// of several shapes (`JSONSchemaPropsOrArray`, ...): kube-apiserver's schemas of them have a description and
/// nothing else (k8s-openapi gives `JSON` `type: object` and the others `oneOf`).
fn any_json(name: &str, schema: &mut Value) {
    const UNTYPED: &[&str] = &[
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON",
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray",
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool",
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray",
    ];
    if UNTYPED.contains(&name) {
        *schema = serde_json::json!({ "description": schema.get("description") });
    }
}

/// k8s-openapi lists `metadata` as required wherever a type embeds `ObjectMeta` (a kind, or the
/// PersistentVolumeClaim template of a StatefulSet), since its Rust field is not optional; kube-apiserver
/// does not (but for a core Event), so it is dropped from `required` before `fields.rs` sets the required
/// fields kube-apiserver lists.
fn metadata_optional(schema: &mut Map<String, Value>) {
    if let Some(Value::Array(required)) = schema.get_mut("required") {
        required.retain(|r| r != "metadata");
        if required.is_empty() {
            schema.remove("required");
        }
    }
}

/// Marks the schema of a kind with its group, version and kind.
fn kind_schema(schema: &mut Map<String, Value>, t: &ResourceType) {
    match schema.get_mut("x-kubernetes-group-version-kind") {
        Some(Value::Array(gvks)) => {
            if let Value::Array(more) = gvk_extension(t) {
                gvks.extend(more);
            }
        }
        _ => {
            schema.insert("x-kubernetes-group-version-kind".into(), gvk_extension(t));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Registry;

    #[test]
    fn a_config_map_is_named_and_marked_as_kube_apiserver_does() {
        let reg = Registry::with_builtins();
        let kinds: Vec<&ResourceType> = reg
            .all()
            .filter(|t| t.group.is_empty() && t.version == "v1")
            .map(|t| &**t)
            .collect();
        let defs = components(&kinds);
        let cm = &defs["io.k8s.api.core.v1.ConfigMap"];
        assert_eq!(
            cm["x-kubernetes-group-version-kind"],
            serde_json::json!([{ "group": "", "kind": "ConfigMap", "version": "v1" }])
        );
        assert!(cm.get("required").is_none());
        assert_eq!(
            cm["properties"]["metadata"]["allOf"][0]["$ref"],
            "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
        );
        assert!(defs.contains_key("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"));
        assert!(defs.contains_key("io.k8s.api.core.v1.PodSpec"));
    }
}
