//! `/openapi/v2`: one swagger 2.0 document of every kind served, shaped as kube-apiserver shapes it:
//! `definitions` keyed by kube-apiserver's names (`io.k8s.api.core.v1.ConfigMap`, `dev.example.v1.WebApp`),
//! each kind marked with `x-kubernetes-group-version-kind`, and `paths` whose operations carry
//! `x-kubernetes-group-version-kind` and `x-kubernetes-action`. `kubectl explain --output
//! plaintext-openapiv2` reads it, as does kubectl's client-side validation when a server does not support
//! `fieldValidation` (not the case here: kubectl finds it in `/openapi/v3`).
//!
//! The definitions are those of `/openapi/v3` in v2 form (`schema.rs`); the document is served as JSON, or
//! as gnostic's protobuf `openapi.v2.Document` (`proto.rs`), which is what client-go's `OpenAPISchema()`
//! (behind kubectl) asks for, with kube-apiserver's content negotiation and ETag (`serve.rs`).
//!
//! The operations declare the query parameters kubectl checks and, on PATCH, the patch types accepted
//! (`consumes`; strategic merge patches for built-in kinds only), but no request body. kubectl reads the
//! latter to choose how to compute a client-side apply's patch when `/openapi/v3` does not tell it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::{Map, Value, json};

use super::builtin;
use super::kind::gv_path;
use crate::discovery::KUBERNETES_MINOR;
use crate::registry::{OpenApiSource, Registry, ResourceType};

mod error;
mod gnostic;
mod paths;
mod proto;
mod schema;
mod serve;
mod yaml;

pub use serve::respond;

/// The v2 document of every kind `reg` serves.
pub fn document(reg: &Registry) -> Value {
    // The review kinds (create only) are not published.
    let kinds: Vec<&ResourceType> = reg.all().filter(|t| !t.review).map(|t| &**t).collect();
    let builtins: Vec<&ResourceType> = kinds
        .iter()
        .copied()
        .filter(|t| matches!(t.openapi, Some(OpenApiSource::Builtin(_))))
        .collect();
    let mut definitions = (*builtin_definitions(&builtins)).clone();
    let common = common();
    for t in &kinds {
        if let Some(OpenApiSource::Custom(crd)) = &t.openapi {
            definitions.insert(
                super::custom::schema_name(t),
                schema::custom(t, crd, &common),
            );
        }
    }
    let named = kind_names(&definitions);
    // The built-in resources' paths, those of the v3 documents, group-version by group-version.
    let mut gvs: Vec<(&str, &str)> = builtins
        .iter()
        .map(|t| (t.group.as_str(), t.version.as_str()))
        .collect();
    gvs.sort();
    gvs.dedup();
    let mut paths = Map::new();
    for (group, version) in gvs {
        let of_gv: Vec<(&ResourceType, String)> = builtins
            .iter()
            .filter(|t| t.group == group && t.version == version)
            .filter_map(|t| {
                named
                    .get(&(t.group.as_str(), t.version.as_str(), t.kind.as_str()))
                    .map(|n| (*t, n.to_string()))
            })
            .collect();
        paths.extend(paths::convert(&super::paths::builtin(
            group, version, &of_gv,
        )));
    }
    let parameters = paths::share(&mut paths);
    for t in &kinds {
        if !matches!(t.openapi, Some(OpenApiSource::Custom(_))) {
            continue;
        }
        if let Some(name) = named.get(&(t.group.as_str(), t.version.as_str(), t.kind.as_str())) {
            let (path, item) = path_item(t, name);
            paths.insert(path, item);
        }
    }
    json!({
        "swagger": "2.0",
        "info": { "title": "Kubernetes", "version": format!("1.{KUBERNETES_MINOR}") },
        "paths": paths,
        "parameters": parameters,
        "definitions": definitions,
        "securityDefinitions": {
            "BearerToken": {
                "description": "Bearer Token authentication",
                "type": "apiKey",
                "name": "authorization",
                "in": "header",
            },
        },
        "security": [{ "BearerToken": [] }],
    })
}

/// Definitions shared by every document that has them.
type Definitions = Arc<Map<String, Value>>;

/// The v2 definitions of the built-in kinds `kinds` and of the types they refer to, converted once per set.
fn builtin_definitions(kinds: &[&ResourceType]) -> Definitions {
    static CACHE: OnceLock<Mutex<HashMap<String, Definitions>>> = OnceLock::new();
    let key = kinds
        .iter()
        .map(|t| format!("{}/{}/{}", t.group, t.version, t.kind))
        .collect::<Vec<_>>()
        .join(",");
    let cache = CACHE.get_or_init(Default::default);
    if let Some(hit) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return hit.clone();
    }
    let mut components = builtin::components(kinds);
    for (name, schema) in builtin::discovery() {
        components.entry(name).or_insert(schema);
    }
    let built = Arc::new(schema::builtin(components));
    cache
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key, built.clone());
    built
}

/// What a custom resource's definition takes from the built-in ones: TypeMeta's `apiVersion` and `kind`,
/// and the description of `metadata`.
fn common() -> schema::Common {
    let (api_version, kind, metadata) = super::custom::common_fields();
    schema::Common {
        api_version,
        kind,
        metadata,
    }
}

/// The definition name of each kind, from the `x-kubernetes-group-version-kind` of the definitions.
fn kind_names(definitions: &Map<String, Value>) -> HashMap<(&str, &str, &str), &str> {
    let mut named = HashMap::new();
    for (name, schema) in definitions {
        let Some(Value::Array(gvks)) = schema.get("x-kubernetes-group-version-kind") else {
            continue;
        };
        for gvk in gvks {
            if let (Some(g), Some(v), Some(k)) = (
                gvk["group"].as_str(),
                gvk["version"].as_str(),
                gvk["kind"].as_str(),
            ) {
                named.insert((g, v, k), name.as_str());
            }
        }
    }
    named
}

/// The path of one object of a custom resource: read, replace, patch and delete, each with the query parameters
/// kube-apiserver declares for it that kubectl checks (`fieldValidation`, `dryRun`, `fieldManager`).
fn path_item(t: &ResourceType, definition: &str) -> (String, Value) {
    let base = format!("/{}", gv_path(&t.group, &t.version));
    let path = if t.namespaced {
        format!("{base}/namespaces/{{namespace}}/{}/{{name}}", t.plural)
    } else {
        format!("{base}/{}/{{name}}", t.plural)
    };
    let gvk = json!({ "group": t.group, "kind": t.kind, "version": t.version });
    let query = |name: &str, ty: &str| json!({ "uniqueItems": true, "type": ty, "name": name, "in": "query" });
    let op = |action: &str, description: String, params: Vec<Value>, consumes: Vec<&str>| {
        let mut op = json!({
            "description": description,
            "produces": ["application/json", "application/yaml"],
            "schemes": ["https"],
            "parameters": params,
            "responses": {
                "200": { "description": "OK", "schema": { "$ref": format!("{}{definition}", schema::DEFINITIONS) } },
                "401": { "description": "Unauthorized" },
            },
            "x-kubernetes-action": action,
            "x-kubernetes-group-version-kind": gvk,
        });
        op["consumes"] = json!(consumes);
        op
    };
    let kind = &t.kind;
    let writes = |force: bool| {
        let mut params = vec![
            query("dryRun", "string"),
            query("fieldManager", "string"),
            query("fieldValidation", "string"),
        ];
        if force {
            params.push(query("force", "boolean"));
        }
        params
    };
    let mut item = json!({
        "get": op("get", format!("read the specified {kind}"), Vec::new(), vec!["*/*"]),
        "put": op("put", format!("replace the specified {kind}"), writes(false), vec!["*/*"]),
        "patch": op(
            "patch",
            format!("partially update the specified {kind}"),
            writes(true),
            super::kind::patch_types(t),
        ),
        "delete": op("delete", format!("delete a {kind}"), vec![query("dryRun", "string")], vec!["*/*"]),
    });
    let mut params = vec![json!({
        "uniqueItems": true,
        "type": "string",
        "description": format!("name of the {kind}"),
        "name": "name",
        "in": "path",
        "required": true,
    })];
    if t.namespaced {
        params.push(json!({
            "uniqueItems": true,
            "type": "string",
            "description": "object name and auth scope, such as for teams and projects",
            "name": "namespace",
            "in": "path",
            "required": true,
        }));
    }
    item["parameters"] = Value::Array(params);
    (path, item)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_defined_and_have_a_path() {
        let reg = Registry::with_builtins();
        let doc = document(&reg);
        assert_eq!(doc["swagger"], "2.0");
        let cm = &doc["definitions"]["io.k8s.api.core.v1.ConfigMap"];
        assert_eq!(
            cm["x-kubernetes-group-version-kind"],
            json!([{ "group": "", "kind": "ConfigMap", "version": "v1" }])
        );
        assert_eq!(
            cm["properties"]["metadata"]["$ref"],
            "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
        );
        let path = &doc["paths"]["/api/v1/namespaces/{namespace}/configmaps/{name}"];
        assert_eq!(path["patch"]["x-kubernetes-action"], "patch");
        assert_eq!(
            path["patch"]["consumes"],
            json!([
                "application/json-patch+json",
                "application/merge-patch+json",
                "application/strategic-merge-patch+json",
                "application/apply-patch+yaml"
            ])
        );
        assert_eq!(
            doc["definitions"]["io.k8s.api.core.v1.ServicePort"]["properties"]["protocol"]["enum"],
            json!(["SCTP", "TCP", "UDP"])
        );
        let text = serde_json::to_string(&doc).expect("JSON");
        assert!(!text.contains("#/components/schemas/"));
    }
}
