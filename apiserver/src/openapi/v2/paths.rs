//! The paths of the built-in resources in `/openapi/v2`: the v3 paths of `openapi/paths.rs` in swagger 2.0
//! form (parameters with their type beside them, the request body as a `body` parameter, `consumes` and
//! `produces`, answers with a `schema`), and, as kube-openapi's builder does, every parameter but the
//! `name`s, `fieldValidation`, `dryRun` and the bodies of a kind declared once in the document's
//! `parameters` under `NAME-HASH` and referred to (the hash: FNV-1 64 of the parameter as Go encodes it,
//! its first six bytes in URL-safe base64).

use base64::Engine as _;
use serde_json::{Map, Value, json};

use super::schema::DEFINITIONS;

/// The media types of answers and of patches, in kube-apiserver's order.
const PRODUCES: &[&str] = &[
    "application/json",
    "application/yaml",
    "application/vnd.kubernetes.protobuf",
    "application/json;stream=watch",
    "application/vnd.kubernetes.protobuf;stream=watch",
];
const PATCHES: &[&str] = &[
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
];

/// A v3 reference in v2 form.
fn reference(v3: &Value) -> Value {
    let to = v3["$ref"].as_str().unwrap_or_default();
    json!({ "$ref": format!("{DEFINITIONS}{}", to.rsplit('/').next().unwrap_or_default()) })
}

/// A v3 parameter in v2 form.
fn parameter(p: &Value) -> Value {
    let mut out = Map::new();
    for key in ["description", "in", "name", "required"] {
        if let Some(v) = p.get(key) {
            out.insert(key.into(), v.clone());
        }
    }
    for key in ["type", "uniqueItems"] {
        if let Some(v) = p["schema"].get(key) {
            out.insert(key.into(), v.clone());
        }
    }
    Value::Object(out)
}

fn parameters(v3: &Value) -> Vec<Value> {
    v3.as_array().into_iter().flatten().map(parameter).collect()
}

/// A v3 operation in v2 form.
fn operation(op: &Value) -> Value {
    let mut out = op.as_object().cloned().unwrap_or_default();
    out.remove("requestBody");
    out.remove("responses");
    let mut params = parameters(&op["parameters"]);
    let consumes: Vec<&str> = match op["requestBody"]["content"].as_object() {
        Some(content) => {
            let (ty, media) = content.iter().next().map(|(t, m)| (t.as_str(), m)).unzip();
            let mut body = json!({ "in": "body", "name": "body", "schema": reference(&media.unwrap_or(&Value::Null)["schema"]) });
            if op["requestBody"]["required"] == true {
                body["required"] = json!(true);
            }
            params.push(body);
            if ty == Some("*/*") {
                vec!["*/*"]
            } else {
                PATCHES.to_vec()
            }
        }
        None => vec!["*/*"],
    };
    params.sort_by_key(|p| p["name"].as_str().unwrap_or_default().to_string());
    if !params.is_empty() {
        out.insert("parameters".into(), Value::Array(params));
    }
    let mut produces: Vec<&str> = Vec::new();
    let mut responses = Map::new();
    for (code, answer) in op["responses"].as_object().into_iter().flatten() {
        let mut r = json!({ "description": answer["description"] });
        if let Some(content) = answer["content"].as_object() {
            for t in PRODUCES {
                if content.contains_key(*t) && !produces.contains(t) {
                    produces.push(t);
                }
            }
            if let Some(media) = content.values().next() {
                r["schema"] = reference(&media["schema"]);
            }
        }
        responses.insert(code.clone(), r);
    }
    produces.sort_by_key(|t| PRODUCES.iter().position(|p| p == t));
    // The resource list takes no body: it consumes what it produces.
    let consumes = if op.get("x-kubernetes-action").is_none() {
        produces.clone()
    } else {
        consumes
    };
    out.insert("consumes".into(), json!(consumes));
    out.insert("produces".into(), json!(produces));
    out.insert("responses".into(), Value::Object(responses));
    out.insert("schemes".into(), json!(["https"]));
    Value::Object(out)
}

/// The v3 paths `paths` in v2 form, their parameters not yet shared.
pub(super) fn convert(paths: &Map<String, Value>) -> Map<String, Value> {
    paths
        .iter()
        .map(|(path, item)| {
            let mut out = Map::new();
            for (key, value) in item.as_object().into_iter().flatten() {
                if key == "parameters" {
                    out.insert(key.clone(), Value::Array(parameters(value)));
                } else {
                    out.insert(key.clone(), operation(value));
                }
            }
            (path.clone(), Value::Object(out))
        })
        .collect()
}

/// Whether kube-openapi's builder shares a parameter.
fn shared(p: &Value) -> bool {
    let (name, at) = (p["name"].as_str(), p["in"].as_str());
    let generic_body = p["schema"]["$ref"]
        .as_str()
        .is_some_and(|r| r.starts_with(&format!("{DEFINITIONS}io.k8s.apimachinery")));
    !(name == Some("name") && matches!(at, Some("query" | "path"))
        || at == Some("query") && matches!(name, Some("fieldValidation" | "dryRun"))
        || at == Some("body") && name == Some("body") && !generic_body)
}

/// A parameter as Go's encoder writes kube-openapi's `spec.Parameter`: its validations, its simple schema,
/// then its own fields.
fn go_encoding(p: &Value) -> String {
    let mut out = String::from("{");
    for key in [
        "uniqueItems",
        "type",
        "description",
        "name",
        "in",
        "required",
        "schema",
    ] {
        if let Some(v) = p.get(key) {
            if out.len() > 1 {
                out.push(',');
            }
            out.push_str(&crate::strict::go_text::json(&json!(key)));
            out.push(':');
            out.push_str(&crate::strict::go_text::json(v));
        }
    }
    out.push('}');
    out
}

/// kube-openapi's name of a shared parameter: its name and a hash of its encoding.
fn shared_name(p: &Value) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in go_encoding(p).bytes() {
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        hash ^= u64::from(byte);
    }
    let bytes = hash.to_be_bytes();
    format!(
        "{}-{}",
        p["name"].as_str().unwrap_or("param"),
        base64::engine::general_purpose::URL_SAFE.encode(&bytes[..6])
    )
}

/// Declares every shareable parameter of `paths` once in the returned `parameters` and refers to it.
pub(super) fn share(paths: &mut Map<String, Value>) -> Map<String, Value> {
    let mut declared = Map::new();
    let mut replace = |params: &mut Value| {
        for p in params.as_array_mut().into_iter().flatten() {
            if p.get("$ref").is_some() || !shared(p) {
                continue;
            }
            let name = shared_name(p);
            declared.entry(name.clone()).or_insert_with(|| p.clone());
            *p = json!({ "$ref": format!("#/parameters/{name}") });
        }
    };
    for item in paths.values_mut() {
        for (key, value) in item.as_object_mut().into_iter().flatten() {
            if key == "parameters" {
                replace(value);
            } else if let Some(params) = value.get_mut("parameters") {
                replace(params);
            }
        }
    }
    declared
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_names_are_kube_openapis() {
        let pretty = json!({ "uniqueItems": true, "type": "string", "in": "query", "name": "pretty",
            "description": "If 'true', then the output is pretty printed. Defaults to 'false' unless the user-agent indicates a browser or command-line HTTP tool (curl and wget)." });
        assert_eq!(shared_name(&pretty), "pretty-tJGM1-ng");
        let delete = json!({ "in": "body", "name": "body",
            "schema": { "$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions" } });
        assert_eq!(shared_name(&delete), "body-2Y1dVQaQ");
        let patch = json!({ "in": "body", "name": "body", "required": true,
            "schema": { "$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Patch" } });
        assert_eq!(shared_name(&patch), "body-78PwaGsr");
    }
}
