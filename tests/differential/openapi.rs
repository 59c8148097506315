//! The OpenAPI v3 documents `kubectl explain` reads: the index lists the group-versions, and a group-version's
//! document holds the schema of each kind under kube-apiserver's name, marked with
//! `x-kubernetes-group-version-kind`, with the same fields, types, references, descriptions and required
//! fields, and a custom resource's schema exactly as kube-apiserver publishes it from its CRD. Every enum field
//! of every built-in schema the in-memory server publishes has kube-apiserver's `enum` list and description,
//! and every schema its required fields, `x-kubernetes-*` extensions and `default`s.

use std::time::Duration;

use kube::Client;
use serde_json::{Map, Value, json};

use crate::support::{Transcript, run};

/// The built-in schemas compared: (group-version document, schema name).
const BUILTIN: &[(&str, &str)] = &[
    ("api/v1", "io.k8s.api.core.v1.ConfigMap"),
    ("api/v1", "io.k8s.api.core.v1.PodTemplateSpec"),
    ("api/v1", "io.k8s.api.core.v1.ResourceRequirements"),
    ("api/v1", "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"),
    ("apis/apps/v1", "io.k8s.api.apps.v1.Deployment"),
    ("apis/apps/v1", "io.k8s.api.apps.v1.DeploymentSpec"),
    ("apis/batch/v1", "io.k8s.api.batch.v1.CronJob"),
    ("apis/apps/v1", "io.k8s.api.apps.v1.DeploymentList"),
    ("api/v1", "io.k8s.api.core.v1.ConfigMapList"),
    ("apis/apps/v1", "io.k8s.api.autoscaling.v1.Scale"),
    (
        "apis/apps/v1",
        "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions",
    ),
    (
        "apis/apps/v1",
        "io.k8s.apimachinery.pkg.apis.meta.v1.Status",
    ),
    (
        "apis/apps/v1",
        "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent",
    ),
    (
        "apis/apps/v1",
        "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta",
    ),
    (
        "apis/apps/v1",
        "io.k8s.apimachinery.pkg.apis.meta.v1.APIResourceList",
    ),
    ("apis/apps/v1", "io.k8s.apimachinery.pkg.apis.meta.v1.Patch"),
];

/// The schemas of `api/v1` that only the operations of resources the in-memory server does not serve refer
/// to (`bindings`, `componentstatuses`, `pods/binding`, `pods/eviction`, `serviceaccounts/token`; the
/// `NOT_SERVED` deviation of `kinds.rs`).
pub const OF_RESOURCES_NOT_SERVED: &[&str] = &[
    "io.k8s.api.authentication.v1.BoundObjectReference",
    "io.k8s.api.authentication.v1.TokenRequest",
    "io.k8s.api.authentication.v1.TokenRequestSpec",
    "io.k8s.api.authentication.v1.TokenRequestStatus",
    "io.k8s.api.core.v1.Binding",
    "io.k8s.api.core.v1.ComponentCondition",
    "io.k8s.api.core.v1.ComponentStatus",
    "io.k8s.api.core.v1.ComponentStatusList",
    "io.k8s.api.policy.v1.Eviction",
];

/// A field as `kubectl explain` shows it: its type or the schema it refers to, and its description.
fn field(schema: &Value) -> Value {
    let reference = schema
        .get("$ref")
        .or_else(|| schema.pointer("/allOf/0/$ref"))
        .cloned();
    let mut out = json!({
        "type": schema.get("type"),
        "ref": reference,
        "description": schema.get("description"),
    });
    if let Some(items) = schema.get("items") {
        out["items"] = field(items);
    }
    if let Some(values) = schema.get("additionalProperties") {
        out["additionalProperties"] = field(values);
    }
    out
}

/// What `kubectl explain` shows of a schema: its kinds, description, required fields and fields.
fn explained(schema: &Value) -> Value {
    let fields: Map<String, Value> = schema["properties"]
        .as_object()
        .map(|p| p.iter().map(|(k, v)| (k.clone(), field(v))).collect())
        .unwrap_or_default();
    json!({
        "x-kubernetes-group-version-kind": schema.get("x-kubernetes-group-version-kind"),
        "description": schema.get("description"),
        "type": schema.get("type"),
        "required": schema.get("required"),
        "properties": fields,
    })
}

/// The document of a group-version, read (without recording it) until it holds `name`: kube-apiserver
/// publishes a new CRD's schema a moment after the CRD is established.
async fn schema(client: &Client, gv: &str, name: &str) -> Value {
    for _ in 0..60 {
        let request = http::Request::get(format!("/openapi/v3/{gv}"))
            .body(Vec::new())
            .expect("a request");
        if let Ok(doc) = client.request::<Value>(request).await
            && let Some(schema) = doc.pointer(&format!("/components/schemas/{name}"))
        {
            return schema.clone();
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    Value::Null
}

async fn documents(client: Client, _ns: String) -> Transcript {
    let mut t = Transcript::new(client.clone());
    for (gv, name) in BUILTIN {
        let schema = schema(&client, gv, name).await;
        t.note(name, explained(&schema));
    }
    let widget = schema(
        &client,
        "apis/diff.example.dev/v1",
        "dev.example.diff.v1.Widget",
    )
    .await;
    t.note("dev.example.diff.v1.Widget", widget);
    // ObjectMeta and the types it refers to, as the custom resource's document has them, whole.
    for name in [
        "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
        "io.k8s.apimachinery.pkg.apis.meta.v1.OwnerReference",
        "io.k8s.apimachinery.pkg.apis.meta.v1.ManagedFieldsEntry",
        "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1",
        "io.k8s.apimachinery.pkg.apis.meta.v1.Time",
    ] {
        let s = schema(&client, "apis/diff.example.dev/v1", name).await;
        t.note(&format!("apis/diff.example.dev/v1 {name}"), s);
    }
    // Read once the Widget's schema is published. Only which group-versions are listed is compared:
    // kube-apiserver also lists groups without a version and adds a content hash to each URL.
    let index: Value = client
        .request(
            http::Request::get("/openapi/v3")
                .body(Vec::new())
                .expect("a request"),
        )
        .await
        .expect("the OpenAPI v3 index");
    let listed: Vec<&str> = ["api/v1", "apis/apps/v1", "apis/diff.example.dev/v1"]
        .into_iter()
        .filter(|gv| index["paths"].get(gv).is_some())
        .collect();
    t.note("index lists", json!(listed));
    t
}

#[tokio::test]
async fn openapi_v3_documents_name_and_describe_kinds_alike() {
    run(
        "openapi_v3_documents_name_and_describe_kinds_alike",
        &[],
        documents,
    )
    .await;
}

/// Every node of `schema` that has an `enum`, `required` fields or `x-kubernetes-*` extensions (other than
/// the kind marker), by JSON pointer: those, and its description when it has an `enum`.
fn marked_fields(schema: &Value, pointer: String, out: &mut Map<String, Value>) {
    match schema {
        Value::Object(map) => {
            // A field named `enum` or `required` (of `JSONSchemaProps`) is not the keyword.
            if !pointer.ends_with("/properties") {
                let mut marks = Map::new();
                if let Some(values) = map.get("enum") {
                    marks.insert("enum".into(), values.clone());
                    marks.insert("description".into(), json!(map.get("description")));
                }
                if let Some(required) = map.get("required") {
                    marks.insert("required".into(), required.clone());
                }
                if let Some(default) = map.get("default") {
                    // With how the schema refers to its type: a default beside a reference is written
                    // `allOf: [{$ref}]`.
                    marks.insert("default".into(), default.clone());
                    marks.insert("$ref".into(), json!(map.get("$ref")));
                    marks.insert("allOf".into(), json!(map.get("allOf")));
                }
                for (k, v) in map {
                    if k.starts_with("x-kubernetes-") && k != "x-kubernetes-group-version-kind" {
                        marks.insert(k.clone(), v.clone());
                    }
                }
                if !marks.is_empty() {
                    out.insert(pointer.clone(), Value::Object(marks));
                }
            }
            for (k, v) in map {
                marked_fields(v, format!("{pointer}/{k}"), out);
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                marked_fields(v, format!("{pointer}/{i}"), out);
            }
        }
        _ => {}
    }
}

pub async fn get_json(client: &Client, path: &str) -> Value {
    let request = http::Request::get(path)
        .body(Vec::new())
        .expect("a request");
    client
        .request::<Value>(request)
        .await
        .unwrap_or_else(|e| panic!("GET {path}: {e}"))
}

/// The enum fields of every built-in schema the in-memory server publishes, in every group-version it lists,
/// are kube-apiserver's: the same values in the same order, and the same description (with its "Possible
/// enum values" paragraph); so are the required fields (in the same order), the `x-kubernetes-*`
/// extensions of every schema and field, and every `default` (with the `allOf: [{$ref}]` a default beside a
/// reference takes). A schema kube-apiserver does not publish in that group-version is a
/// difference.
#[tokio::test]
async fn openapi_v3_enums_required_fields_and_extensions_are_kube_apiservers() {
    let Some([(memory, _), (real, _)]) =
        crate::support::both("openapi_v3_enums_required_fields_and_extensions_are_kube_apiservers")
            .await
    else {
        return;
    };
    let index = get_json(&memory, "/openapi/v3").await;
    let mut differences = Vec::new();
    let (mut compared, mut defaults) = (0, 0);
    for gv in index["paths"].as_object().expect("paths").keys() {
        if gv.contains(".example.dev") {
            continue;
        }
        let path = format!("/openapi/v3/{gv}");
        let (ours, theirs) = (get_json(&memory, &path).await, get_json(&real, &path).await);
        let schemas = ours["components"]["schemas"].as_object().expect("schemas");
        let theirs_names = theirs["components"]["schemas"]
            .as_object()
            .expect("schemas");
        for name in theirs_names.keys() {
            if !schemas.contains_key(name) && !OF_RESOURCES_NOT_SERVED.contains(&name.as_str()) {
                differences.push(format!("{gv} {name}: not published in memory"));
            }
        }
        for (name, schema) in schemas {
            let Some(their_schema) = theirs["components"]["schemas"].get(name) else {
                differences.push(format!("{gv} {name}: not published by kube-apiserver"));
                continue;
            };
            let (mut a, mut b) = (Map::new(), Map::new());
            marked_fields(schema, String::new(), &mut a);
            marked_fields(their_schema, String::new(), &mut b);
            compared += b.len();
            defaults += b.values().filter(|m| m.get("default").is_some()).count();
            if a != b {
                differences.push(format!(
                    "{gv} {name}:\n  in memory: {}\n  kube-apiserver: {}",
                    Value::Object(a),
                    Value::Object(b)
                ));
            }
        }
    }
    assert!(
        differences.is_empty(),
        "{} differences:\n{}",
        differences.len(),
        differences.join("\n")
    );
    assert!(compared > 500, "only {compared} fields compared");
    assert!(defaults > 500, "only {defaults} defaults compared");
}

/// The path segments of what the in-memory server does not serve (`NOT_SERVED` in `kinds.rs`): a path of
/// kube-apiserver's with one of them is not compared.
pub const SEGMENTS_NOT_SERVED: &[&str] = &[
    "bindings",
    "componentstatuses",
    "log",
    "exec",
    "attach",
    "portforward",
    "proxy",
    "eviction",
    "binding",
    "ephemeralcontainers",
    "resize",
    "token",
    "finalize",
    "approval",
];

/// Where two JSON values first differ (a JSON pointer and both values), if they do.
pub fn first_difference(a: &Value, b: &Value, pointer: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            keys.into_iter().find_map(|k| {
                let at = format!("{pointer}/{k}");
                match (x.get(k), y.get(k)) {
                    (Some(v), Some(w)) => first_difference(v, w, &at),
                    (v, w) => Some(format!("{at}: in memory {v:?}, kube-apiserver {w:?}")),
                }
            })
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (v, w))| first_difference(v, w, &format!("{pointer}/{i}"))),
        _ if a == b => None,
        _ => Some(format!("{pointer}: in memory {a}, kube-apiserver {b}")),
    }
}

/// Every path of every built-in group-version document is kube-apiserver's, whole (operations, operation
/// ids, tags, descriptions, actions, kinds, parameters with their descriptions, request bodies, answers),
/// and kube-apiserver publishes no other, but for the resources and subresources not served.
#[tokio::test]
async fn openapi_v3_paths_are_kube_apiservers() {
    let Some([(memory, _), (real, _)]) =
        crate::support::both("openapi_v3_paths_are_kube_apiservers").await
    else {
        return;
    };
    let index = get_json(&memory, "/openapi/v3").await;
    let mut differences = Vec::new();
    let mut compared = 0;
    for gv in index["paths"].as_object().expect("paths").keys() {
        if gv.contains(".example.dev") {
            continue;
        }
        let path = format!("/openapi/v3/{gv}");
        let (ours, theirs) = (get_json(&memory, &path).await, get_json(&real, &path).await);
        let (ours, theirs) = (
            ours["paths"].as_object().expect("paths"),
            theirs["paths"].as_object().expect("paths"),
        );
        for (p, item) in theirs {
            if p.split('/').any(|s| SEGMENTS_NOT_SERVED.contains(&s)) {
                continue;
            }
            match ours.get(p) {
                None => differences.push(format!("{p}: not published in memory")),
                Some(mine) => {
                    compared += 1;
                    if let Some(d) = first_difference(mine, item, p) {
                        differences.push(d);
                    }
                }
            }
        }
        for p in ours.keys().filter(|p| !theirs.contains_key(*p)) {
            differences.push(format!("{p}: not published by kube-apiserver"));
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

/// The v3 documents of the custom resources (Widget, Gadget, Thing) are kube-apiserver's: every path whole,
/// the same schema names, and the List kinds and shared meta types whole.
#[tokio::test]
async fn openapi_v3_custom_resource_documents_are_kube_apiservers() {
    let Some([(memory, _), (real, _)]) =
        crate::support::both("openapi_v3_custom_resource_documents_are_kube_apiservers").await
    else {
        return;
    };
    let mut differences = Vec::new();
    for (gv, kind) in [
        ("apis/diff.example.dev/v1", "dev.example.diff.v1.Widget"),
        ("apis/tables.example.dev/v1", "dev.example.tables.v1.Gadget"),
        (
            "apis/openapi2.example.dev/v1",
            "dev.example.openapi2.v1.Thing",
        ),
    ] {
        // Read once kube-apiserver publishes the kind's schema.
        schema(&real, gv, kind).await;
        schema(&memory, gv, kind).await;
        let path = format!("/openapi/v3/{gv}");
        let (ours, theirs) = (get_json(&memory, &path).await, get_json(&real, &path).await);
        if let Some(d) = first_difference(&ours["paths"], &theirs["paths"], &format!("{gv} paths"))
        {
            differences.push(d);
        }
        let names = |doc: &Value| -> Vec<String> {
            doc["components"]["schemas"]
                .as_object()
                .map(|s| s.keys().cloned().collect())
                .unwrap_or_default()
        };
        if names(&ours) != names(&theirs) {
            differences.push(format!(
                "{gv} schemas: in memory {:?}, kube-apiserver {:?}",
                names(&ours),
                names(&theirs)
            ));
        }
        for name in names(&theirs).iter().filter(|n| {
            n.ends_with("List") || n.contains(".meta.v1.") || n.contains(".autoscaling.")
        }) {
            let at = format!("{gv} {name}");
            if let Some(d) = first_difference(
                &ours["components"]["schemas"][name],
                &theirs["components"]["schemas"][name],
                &at,
            ) {
                differences.push(d);
            }
        }
    }
    assert!(
        differences.is_empty(),
        "{} differences:\n{}",
        differences.len(),
        differences.join("\n")
    );
}
