//! `/openapi/v2`: the swagger 2.0 document kubectl reads for `explain --output plaintext-openapiv2` (and for
//! client-side validation on servers without `fieldValidation`), compared between the servers:
//!
//! - its content negotiation: the status, `Content-Type`, `Vary` and whether an `ETag` comes for each
//!   `Accept` header kube-openapi's handler distinguishes (JSON, gnostic's protobuf under both names, `*/*`,
//!   none, one it refuses), the protobuf's first field, and `304` on `If-None-Match` with the server's own ETag;
//! - the document's head (`swagger`, `info`, security);
//! - the protobuf: the chosen definitions below, decoded (with the gnostic messages the in-memory server
//!   encodes with) from each server's protobuf answer, compared whole;
//! - chosen built-in definitions, whole (their enums, required fields in Go order and `x-kubernetes-*`
//!   extensions included; List kinds, the shared meta types, `Scale`, the discovery types among them), and
//!   the names of every built-in definition (but those of resources the in-memory server does not serve);
//! - the definitions of two custom resources, whole: the Widget CRD, and a CRD whose schema uses what the
//!   v2 conversion drops or changes (`nullable`, `oneOf`, int-or-string, preserved unknown fields, embedded
//!   resources, an array without items, defaults, enums, list and map types, validation rules);
//! - every path under a built-in group-version served, whole, and the shared parameters they refer to
//!   (`openapi_v2_paths_are_kube_apiservers`);
//! - what kubectl reads of a kind's object path: the group-version-kind and action of each operation, the
//!   patch types PATCH consumes (how kubectl's client-side apply chooses its patch) and the query parameters
//!   of PATCH it checks (`fieldValidation`, `dryRun`), for two built-in kinds and a custom resource (whose
//!   other paths the in-memory server does not publish).

use std::time::Duration;

use http_body_util::BodyExt;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Client;
use serde_json::{Map, Value, json};

use crate::support::{Transcript, run};

/// gnostic's `openapi.v2` messages, as the in-memory server has them.
#[path = "../../apiserver/src/openapi/v2/gnostic/mod.rs"]
mod gnostic;

/// The built-in definitions compared.
const BUILTIN: &[&str] = &[
    "io.k8s.api.core.v1.ConfigMap",
    "io.k8s.api.core.v1.ServiceSpec",
    "io.k8s.api.core.v1.ServicePort",
    "io.k8s.api.core.v1.Container",
    "io.k8s.api.core.v1.LocalObjectReference",
    "io.k8s.api.core.v1.AppArmorProfile",
    "io.k8s.api.events.v1.Event",
    "io.k8s.api.admissionregistration.v1.MatchCondition",
    "io.k8s.api.apps.v1.Deployment",
    "io.k8s.api.apps.v1.DeploymentSpec",
    "io.k8s.api.batch.v1.CronJob",
    "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString",
    "io.k8s.apimachinery.pkg.api.resource.Quantity",
    "io.k8s.api.apps.v1.DeploymentList",
    "io.k8s.api.core.v1.ConfigMapList",
    "io.k8s.api.autoscaling.v1.Scale",
    "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Status",
    "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent",
    "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta",
    "io.k8s.apimachinery.pkg.apis.meta.v1.APIResourceList",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Patch",
    "io.k8s.apimachinery.pkg.apis.meta.v1.APIGroupList",
    "io.k8s.apimachinery.pkg.apis.meta.v1.APIVersions",
    "io.k8s.apimachinery.pkg.version.Info",
];

/// The CRD whose schema exercises the v2 conversion, installed on both servers with the Widget CRD
/// (`support::both`, `support::install_crd`).
pub fn thing_definition() -> CustomResourceDefinition {
    serde_json::from_value(thing_crd()).expect("the Thing CRD deserializes")
}

fn thing_crd() -> Value {
    let fields = json!({
        "size": { "type": "integer", "minimum": 0, "maximum": 10, "default": 1 },
        "note": { "type": "string", "nullable": true, "description": "May be null." },
        "mode": { "type": "string", "enum": ["fast", "slow"] },
        "port": { "x-kubernetes-int-or-string": true },
        "free": { "type": "object", "x-kubernetes-preserve-unknown-fields": true },
        "anything": { "x-kubernetes-preserve-unknown-fields": true },
        "tags": { "type": "array", "items": { "type": "string" }, "x-kubernetes-list-type": "set" },
        "labels": {
            "type": "object", "additionalProperties": { "type": "string" },
            "x-kubernetes-map-type": "granular",
        },
        "either": {
            "type": "object",
            "properties": { "a": { "type": "string" }, "b": { "type": "string" } },
            "oneOf": [{ "required": ["a"] }, { "required": ["b"] }],
        },
        "ratio": { "type": "number", "format": "double", "multipleOf": 0.5 },
    });
    let inner = json!({
        "type": "object", "x-kubernetes-embedded-resource": true,
        "properties": { "spec": { "type": "object", "properties": { "x": { "type": "string" } } } },
    });
    let raw_inner = json!({
        "type": "object", "x-kubernetes-embedded-resource": true,
        "x-kubernetes-preserve-unknown-fields": true,
    });
    let entry = json!({
        "type": "object", "required": ["name"],
        "properties": { "name": { "type": "string", "maxLength": 8, "pattern": "^[a-z]+$" } },
    });
    let mut fields = fields;
    fields["inner"] = inner;
    fields["rawInner"] = raw_inner;
    fields["entries"] = json!({
        "type": "array", "items": entry,
        "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
    });
    let spec = json!({
        "type": "object",
        "description": "What the thing should be.",
        "required": ["size", "note"],
        "x-kubernetes-validations": [{ "rule": "self.size >= 0", "message": "size" }],
        "properties": fields,
    });
    let schema = json!({
        "type": "object",
        "description": "A thing.",
        "properties": {
            "spec": spec,
            "status": { "type": "object", "properties": { "ok": { "type": "boolean" } } },
        },
    });
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": { "name": "things.openapi2.example.dev" },
        "spec": {
            "group": "openapi2.example.dev", "scope": "Namespaced",
            "names": { "plural": "things", "singular": "thing", "kind": "Thing" },
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "schema": { "openAPIV3Schema": schema },
            }],
        },
    })
}

/// A GET of `/openapi/v2` with these headers: status, headers and body.
async fn get(
    client: &Client,
    accept: Option<&str>,
    if_none_match: Option<&str>,
) -> (u16, http::HeaderMap, Vec<u8>) {
    let mut request = http::Request::get("/openapi/v2");
    if let Some(accept) = accept {
        request = request.header("accept", accept);
    }
    if let Some(tag) = if_none_match {
        request = request.header("if-none-match", tag);
    }
    let request = request
        .body(kube::client::Body::from(Vec::new()))
        .expect("a request");
    let response = client.send(request).await.expect("an answer");
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let body = response
        .into_body()
        .collect()
        .await
        .expect("a body")
        .to_bytes()
        .to_vec();
    (status, headers, body)
}

/// The JSON document, read until it defines `name` (kube-apiserver publishes a new CRD's schema a moment after
/// the CRD is established).
async fn document(client: &Client, name: &str) -> Value {
    for _ in 0..60 {
        let (status, _, body) = get(client, Some("application/json"), None).await;
        if status == 200
            && let Ok(doc) = serde_json::from_slice::<Value>(&body)
            && doc["definitions"].get(name).is_some()
        {
            return doc;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    panic!("/openapi/v2 never defines {name}");
}

async fn scenario(client: Client, _ns: String) -> Transcript {
    let mut t = Transcript::new(client.clone());

    for accept in [
        Some("application/json"),
        Some("application/com.github.proto-openapi.spec.v2@v1.0+protobuf"),
        Some("application/com.github.proto-openapi.spec.v2.v1.0+protobuf"),
        Some("*/*"),
        None,
        Some("text/html, application/json;q=0.5"),
        Some("application/yaml"),
    ] {
        let (status, headers, body) = get(&client, accept, None).await;
        let header = |name: &str| {
            headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        t.note(
            &format!("Accept: {}", accept.unwrap_or("(none)")),
            json!({
                "status": status,
                "content-type": header("content-type"),
                "vary accept": headers.get_all("vary").iter().any(|v| v == "Accept"),
                "etag": header("etag").is_some(),
                // The protobuf's first field: `swagger`, "2.0".
                "starts": String::from_utf8_lossy(&body[..body.len().min(5)]),
                "empty": body.is_empty(),
            }),
        );
    }
    let (_, headers, _) = get(&client, Some("application/json"), None).await;
    let etag = headers
        .get("etag")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    for accept in [
        "application/json",
        "application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
    ] {
        let (status, _, body) = get(&client, Some(accept), Some(&etag)).await;
        t.note(
            &format!("If-None-Match, Accept: {accept}"),
            json!({ "status": status, "empty": body.is_empty() }),
        );
    }
    let (status, _, _) = get(&client, None, Some("\"another\"")).await;
    t.note("If-None-Match another", json!(status));

    let doc = document(&client, "dev.example.openapi2.v1.Thing").await;
    let (_, _, body) = get(
        &client,
        Some("application/com.github.proto-openapi.spec.v2@v1.0+protobuf"),
        None,
    )
    .await;
    let decoded = <gnostic::openapi::v2::Document as prost::Message>::decode(body.as_slice())
        .expect("the protobuf decodes as an openapi.v2.Document");
    let definitions = decoded
        .definitions
        .map(|d| d.additional_properties)
        .unwrap_or_default();
    for name in BUILTIN.iter().chain(&[
        "dev.example.diff.v1.Widget",
        "dev.example.openapi2.v1.Thing",
    ]) {
        let schema = definitions
            .iter()
            .find(|d| d.name == *name)
            .map(|d| format!("{:#?}", d.value));
        t.note(&format!("protobuf {name}"), json!(schema));
    }
    for key in ["swagger", "info", "securityDefinitions", "security"] {
        t.note(key, doc[key].clone());
    }
    for name in BUILTIN {
        t.note(name, doc["definitions"][name].clone());
    }
    // Every built-in definition, less those of what the in-memory server does not publish: the review kinds
    // (`authentication.k8s.io`, `authorization.k8s.io`, with the field selector requirement of theirs),
    // `bindings`, `componentstatuses`, `pods/eviction`, `serviceaccounts/token`.
    let served = |n: &str| {
        !n.starts_with("io.k8s.api.authentication.v1.")
            && !n.starts_with("io.k8s.api.authorization.v1.")
            && n != "io.k8s.apimachinery.pkg.apis.meta.v1.FieldSelectorRequirement"
            && !crate::openapi::OF_RESOURCES_NOT_SERVED.contains(&n)
    };
    let names: Map<String, Value> = doc["definitions"]
        .as_object()
        .map(|d| {
            d.keys()
                .filter(|n| n.starts_with("io.k8s.") && served(n))
                .map(|n| (n.clone(), json!(true)))
                .collect()
        })
        .unwrap_or_default();
    t.note("built-in definitions", Value::Object(names));
    for name in [
        "dev.example.diff.v1.Widget",
        "dev.example.openapi2.v1.Thing",
    ] {
        t.note(name, doc["definitions"][name].clone());
    }
    for path in [
        "/api/v1/namespaces/{namespace}/configmaps/{name}",
        "/apis/apps/v1/namespaces/{namespace}/deployments/{name}",
        "/apis/openapi2.example.dev/v1/namespaces/{namespace}/things/{name}",
    ] {
        let item = &doc["paths"][path];
        let mut seen = Map::new();
        for method in ["get", "put", "patch", "delete"] {
            seen.insert(
                method.into(),
                json!({
                    "gvk": item[method]["x-kubernetes-group-version-kind"],
                    "action": item[method]["x-kubernetes-action"],
                }),
            );
        }
        let checked: Vec<&str> = item["patch"]["parameters"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| p["name"].as_str())
            .filter(|n| ["fieldValidation", "dryRun"].contains(n))
            .collect();
        seen.insert("patch parameters".into(), json!(checked));
        seen.insert("patch consumes".into(), item["patch"]["consumes"].clone());
        t.note(path, Value::Object(seen));
    }
    t
}

#[tokio::test]
async fn openapi_v2_document_is_shaped_and_served_alike() {
    run(
        "openapi_v2_document_is_shaped_and_served_alike",
        &[],
        scenario,
    )
    .await;
}

/// Every path of `/openapi/v2` under a built-in group-version the in-memory server serves is kube-apiserver's,
/// whole (the names of the shared parameters it refers to included, which hash their content), and so is
/// every shared parameter it refers to; kube-apiserver publishes no other there, but for the resources and
/// subresources not served.
#[tokio::test]
async fn openapi_v2_paths_are_kube_apiservers() {
    use crate::openapi::{SEGMENTS_NOT_SERVED, first_difference, get_json};
    let Some([(memory, _), (real, _)]) =
        crate::support::both("openapi_v2_paths_are_kube_apiservers").await
    else {
        return;
    };
    let index = get_json(&memory, "/openapi/v3").await;
    let prefixes: Vec<String> = index["paths"]
        .as_object()
        .expect("paths")
        .keys()
        .filter(|gv| !gv.contains(".example.dev"))
        .map(|gv| format!("/{gv}/"))
        .collect();
    let (ours, theirs) = (
        get_json(&memory, "/openapi/v2").await,
        get_json(&real, "/openapi/v2").await,
    );
    let compared_here = |p: &str| {
        prefixes.iter().any(|prefix| p.starts_with(prefix))
            && !p.split('/').any(|s| SEGMENTS_NOT_SERVED.contains(&s))
    };
    let mut differences = Vec::new();
    let mut compared = 0;
    let (our_paths, their_paths) = (
        ours["paths"].as_object().expect("paths"),
        theirs["paths"].as_object().expect("paths"),
    );
    for (p, item) in their_paths.iter().filter(|(p, _)| compared_here(p)) {
        match our_paths.get(p) {
            None => differences.push(format!("{p}: not published in memory")),
            Some(mine) => {
                compared += 1;
                if let Some(d) = first_difference(mine, item, p) {
                    differences.push(d);
                }
            }
        }
    }
    for p in our_paths
        .keys()
        .filter(|p| compared_here(p) && !their_paths.contains_key(*p))
    {
        differences.push(format!("{p}: not published by kube-apiserver"));
    }
    for (name, parameter) in ours["parameters"].as_object().expect("parameters") {
        if let Some(d) = first_difference(parameter, &theirs["parameters"][name], name) {
            differences.push(d);
        }
    }
    assert!(
        differences.is_empty(),
        "{} differences:\n{}",
        differences.len(),
        differences.join("\n")
    );
    assert!(compared > 300, "only {compared} paths compared");
}
