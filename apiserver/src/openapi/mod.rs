//! The OpenAPI v3 documents: `/openapi/v3` (where each group-version's document is) and one document per
//! group-version, with a path per resource (whose operations declare the query parameters kubectl checks) and
//! the schemas of the kinds served, keyed and marked as kube-apiserver keys them
//! (`io.k8s.api.core.v1.ConfigMap`, `dev.example.v1.WebApp`, each kind with `x-kubernetes-group-version-kind`).
//! `kubectl explain` reads them.
//!
//! The schemas of built-in kinds come from k8s-openapi (`builtin.rs`), with the enum lists, required fields
//! and extensions kube-openapi's definitions have (`fields.rs`); those of custom resources from their CRD's
//! `openAPIV3Schema` (`custom.rs`). `v2/` serves the same schemas as `/openapi/v2`.

use serde_json::{Map, Value, json};

use super::discovery::KUBERNETES_MINOR;
use super::registry::{OpenApiSource, Registry, ResourceType};

mod builtin;
mod custom;
mod fields;
mod kind;
mod meta;
mod paths;
pub mod v2;

use kind::gv_path;

/// `/openapi/v3`: where each group-version's document is.
pub fn v3_root(reg: &Registry) -> Value {
    let mut paths = Map::new();
    // The review kinds are not published (see `v3_document`).
    let mut gvs: Vec<(String, String)> = reg
        .all()
        .filter(|t| !t.review)
        .map(|t| (t.group.clone(), t.version.clone()))
        .collect();
    gvs.sort();
    gvs.dedup();
    for (g, v) in gvs {
        let p = gv_path(&g, &v);
        paths.insert(
            p.clone(),
            json!({ "serverRelativeURL": format!("/openapi/v3/{p}") }),
        );
    }
    json!({ "paths": paths })
}

/// `/openapi/v3/api/v1` or `/openapi/v3/apis/GROUP/VERSION`: the paths and the component schemas of one
/// group-version, or `None` when it is not served.
pub fn v3_document(reg: &Registry, group: &str, version: &str) -> Option<Value> {
    if !reg.has_group_version(group, version) {
        return None;
    }
    // The review kinds (create only) are not published: their documents are not written here.
    let kinds: Vec<&ResourceType> = reg
        .all()
        .filter(|t| t.group == group && t.version == version && !t.review)
        .map(|t| &**t)
        .collect();
    if kinds.is_empty() {
        return None;
    }
    let builtins: Vec<&ResourceType> = kinds
        .iter()
        .copied()
        .filter(|t| matches!(t.openapi, Some(OpenApiSource::Builtin(_))))
        .collect();
    let customs: Vec<&ResourceType> = kinds
        .iter()
        .copied()
        .filter(|t| matches!(t.openapi, Some(OpenApiSource::Custom(_))))
        .collect();
    let mut schemas = builtin::components(&builtins);
    let named: Vec<(&ResourceType, String)> = builtins
        .iter()
        .filter_map(|t| schema_of(&schemas, t).map(|name| (*t, name)))
        .collect();
    let mut paths = if builtins.is_empty() {
        Map::new()
    } else {
        paths::builtin(group, version, &named)
    };
    let named_customs: Vec<(&ResourceType, String)> = customs
        .iter()
        .map(|t| (*t, custom::schema_name(t)))
        .collect();
    paths.extend(paths::custom(group, version, &named_customs));
    if !customs.is_empty() {
        schemas.extend(custom::components(&customs));
    }
    let title = if builtins.is_empty() && !customs.is_empty() {
        json!({ "title": "Kubernetes CRD Swagger", "version": "v0.1.0" })
    } else {
        json!({ "title": "Kubernetes", "version": format!("v1.{KUBERNETES_MINOR}.0") })
    };
    Some(json!({
        "openapi": "3.0.0",
        "info": title,
        "paths": paths,
        "components": { "schemas": schemas },
    }))
}

/// The name of the schema of `t`'s kind among `schemas`: the one marked with its group, version and kind.
fn schema_of(schemas: &Map<String, Value>, t: &ResourceType) -> Option<String> {
    schemas.iter().find_map(|(name, schema)| {
        let marked = schema
            .get("x-kubernetes-group-version-kind")?
            .as_array()?
            .iter()
            .any(|g| {
                g["group"] == t.group.as_str()
                    && g["version"] == t.version.as_str()
                    && g["kind"] == t.kind.as_str()
            });
        marked.then(|| name.clone())
    })
}
