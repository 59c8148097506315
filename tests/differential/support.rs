//! Running one scenario on both servers, normalizing the two transcripts and comparing them.
//!
//! A scenario is an `async fn(kube::Client, String) -> Transcript`: it gets a client and the name of a fresh
//! namespace, sends its requests through a [`Transcript`] (which records each exchange: label, method, path,
//! HTTP status and JSON body) and returns it. [`run`] runs it on the in-memory server (built with
//! `controllers(false)`, like a bare kube-apiserver) and on the shared real control plane, normalizes both
//! transcripts (uids, resourceVersions, timestamps, the namespace, generated names, continue tokens) and panics
//! with every difference that is not a named [`Deviation`].

use std::future::Future;
use std::time::Duration;

use http_body_util::BodyExt;
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, PostParams};
use kube::{Client, CustomResource, CustomResourceExt};
use kubewright::testing::ApiServer;
use kubewright::testing::envtest::ControlPlane;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The custom resource of the scenarios: a spec with a validated replica count, a status and a scale
/// subresource.
#[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "diff.example.dev",
    version = "v1",
    kind = "Widget",
    namespaced,
    status = "WidgetStatus",
    scale(
        spec_replicas_path = ".spec.replicas",
        status_replicas_path = ".status.replicas"
    )
)]
#[serde(rename_all = "camelCase")]
pub struct WidgetSpec {
    #[schemars(range(min = 0))]
    pub replicas: i32,
    pub color: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tags: Option<Vec<String>>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct WidgetStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
}

/// The CRD of the table scenarios (`tables.rs`), as JSON: Gadgets, whose printer columns use filters, indexes,
/// slices, unions, recursive descent, every column type and a wide column.
pub fn gadget_crd() -> Value {
    let column = |name: &str, type_: &str, path: &str| json!({ "name": name, "type": type_, "jsonPath": path });
    let mut wide = column("Count", "integer", ".spec.count");
    wide["priority"] = json!(1);
    wide["description"] = json!("How many");
    let mut ratio = column("Ratio", "number", ".spec.ratio");
    ratio["format"] = json!("float");
    let open = json!({ "type": "object", "x-kubernetes-preserve-unknown-fields": true });
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": { "name": "gadgets.tables.example.dev" },
        "spec": {
            "group": "tables.example.dev", "scope": "Namespaced",
            "names": { "plural": "gadgets", "singular": "gadget", "kind": "Gadget" },
            "versions": [{
                "name": "v1", "served": true, "storage": true, "subresources": { "status": {} },
                "schema": { "openAPIV3Schema": { "type": "object", "properties": { "spec": open, "status": open } } },
                "additionalPrinterColumns": [
                    column("Ready", "string", r#".status.conditions[?(@.type=="Ready")].status"#),
                    column("Reason", "string", r#".status.conditions[?(@.status!="True")].reason"#),
                    column("First", "string", ".status.conditions[*].type"),
                    wide,
                    ratio,
                    column("Whole", "number", ".spec.count"),
                    column("On", "boolean", ".spec.on"),
                    column("Since", "date", ".status.since"),
                    column("Bad Date", "date", ".spec.tags[0]"),
                    column("Last", "string", ".spec.tags[-1]"),
                    column("Some", "string", ".spec.tags[1:]"),
                    column("Union", "string", ".spec.tags[1,0]"),
                    column("Out", "string", ".spec.tags[9]"),
                    column("Big", "integer", ".spec.items[?(@.n>1)].n"),
                    column("Tagged", "string", ".spec.items[?(@.tag)].n"),
                    column("Mismatch", "string", r#".spec.items[?(@.n=="1")].n"#),
                    column("Deep", "string", "..n"),
                    column("Obj", "string", ".spec.obj"),
                    column("Key", "string", ".spec['obj']"),
                    column("Label", "string", r".metadata.labels.app\.kubernetes\.io/name"),
                    column("Null", "string", ".spec.nothing"),
                    // kube-apiserver accepts a path it cannot parse, and drops it and the columns after it.
                    column("Broken", "string", ".spec.tags["),
                    column("After", "string", ".spec.count"),
                ],
            }],
        },
    })
}

/// The Gadget CRD of the table scenarios.
pub fn gadget_definition() -> CustomResourceDefinition {
    serde_json::from_value(gadget_crd()).expect("the Gadget CRD deserializes")
}

/// The collection path of widgets in a namespace.
pub fn widgets(ns: &str) -> String {
    format!("/apis/diff.example.dev/v1/namespaces/{ns}/widgets")
}

/// The collection path of config maps in a namespace.
pub fn configmaps(ns: &str) -> String {
    format!("/api/v1/namespaces/{ns}/configmaps")
}

/// The collection path of deployments in a namespace.
pub fn deployments(ns: &str) -> String {
    format!("/apis/apps/v1/namespaces/{ns}/deployments")
}

/// A widget as a client sends it.
pub fn widget(name: &str, replicas: i64, color: &str) -> Value {
    json!({
        "apiVersion": "diff.example.dev/v1",
        "kind": "Widget",
        "metadata": { "name": name },
        "spec": { "replicas": replicas, "color": color },
    })
}

/// A config map as a client sends it.
pub fn configmap(name: &str, data: Value) -> Value {
    json!({ "apiVersion": "v1", "kind": "ConfigMap", "metadata": { "name": name }, "data": data })
}

/// A one-container deployment as a client sends it.
pub fn deployment(name: &str) -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": { "name": name },
        "spec": {
            "replicas": 1,
            "selector": { "matchLabels": { "app": name } },
            "template": {
                "metadata": { "labels": { "app": name } },
                "spec": { "containers": [
                    { "name": "app", "image": "nginx:1", "env": [{ "name": "A", "value": "1" }] }
                ] }
            }
        }
    })
}

/// The content types of the four kinds of patch.
pub const MERGE: &str = "application/merge-patch+json";
pub const JSON_PATCH: &str = "application/json-patch+json";
pub const STRATEGIC: &str = "application/strategic-merge-patch+json";
pub const APPLY: &str = "application/apply-patch+yaml";

/// One request and its answer.
#[derive(Debug, Clone)]
pub struct Exchange {
    pub label: String,
    pub method: String,
    pub path: String,
    pub status: u16,
    pub body: Value,
}

/// The exchanges of one scenario on one server.
pub struct Transcript {
    client: Client,
    exchanges: Vec<Exchange>,
    warnings: bool,
}

impl Transcript {
    /// An empty transcript of requests through `client`.
    pub fn new(client: Client) -> Self {
        Transcript {
            client,
            exchanges: Vec::new(),
            warnings: false,
        }
    }

    /// Also records the `Warning` headers of every answer that has some, as a note after the exchange
    /// (`LABEL (warnings)`).
    pub fn with_warnings(mut self) -> Self {
        self.warnings = true;
        self
    }

    /// Sends a request and records it; returns the (JSON, else string) body. `content_type` is used when there
    /// is a body.
    pub async fn send(
        &mut self,
        label: &str,
        method: &str,
        path: &str,
        content_type: &str,
        body: Option<&Value>,
    ) -> Value {
        self.send_accepting(label, method, path, "application/json", content_type, body)
            .await
    }

    /// [`Transcript::send`] asking for `accept` (e.g. `PartialObjectMetadata`).
    pub async fn send_accepting(
        &mut self,
        label: &str,
        method: &str,
        path: &str,
        accept: &str,
        content_type: &str,
        body: Option<&Value>,
    ) -> Value {
        let bytes = body.map(|b| serde_json::to_vec(b).expect("a JSON body"));
        self.send_bytes(label, method, path, accept, content_type, bytes)
            .await
    }

    /// [`Transcript::send_accepting`] with a body of raw bytes (`None`: no body), for bodies a [`Value`]
    /// cannot hold, such as JSON with a duplicate key or YAML.
    pub async fn send_bytes(
        &mut self,
        label: &str,
        method: &str,
        path: &str,
        accept: &str,
        content_type: &str,
        body: Option<Vec<u8>>,
    ) -> Value {
        let mut request = http::Request::builder()
            .method(method)
            .uri(path)
            .header("accept", accept);
        let bytes = match body {
            Some(b) => {
                request = request.header("content-type", content_type);
                b
            }
            None => Vec::new(),
        };
        let request = request
            .body(kube::client::Body::from(bytes))
            .expect("a request");
        let response = self
            .client
            .send(request)
            .await
            .unwrap_or_else(|e| panic!("{label}: {method} {path}: {e}"));
        let status = response.status().as_u16();
        let warnings: Vec<Value> = response
            .headers()
            .get_all("warning")
            .iter()
            .map(|w| Value::String(String::from_utf8_lossy(w.as_bytes()).into_owned()))
            .collect();
        let bytes = response
            .into_body()
            .collect()
            .await
            .unwrap_or_else(|e| panic!("{label}: reading the body: {e}"))
            .to_bytes();
        let body = parse(&bytes);
        self.record(label, method, path, status, body.clone());
        if self.warnings && !warnings.is_empty() {
            self.note(&format!("{label} (warnings)"), Value::Array(warnings));
        }
        body
    }

    /// The body of the last answer (notes skipped), for a scenario that rewrites a part it compares
    /// otherwise (a document quoted inside a message).
    pub fn last_answer_mut(&mut self) -> Option<&mut Value> {
        self.exchanges
            .iter_mut()
            .rev()
            .find(|e| e.method != "NOTE")
            .map(|e| &mut e.body)
    }

    pub async fn get(&mut self, label: &str, path: &str) -> Value {
        self.send(label, "GET", path, "", None).await
    }

    pub async fn post(&mut self, label: &str, path: &str, body: &Value) -> Value {
        self.send(label, "POST", path, "application/json", Some(body))
            .await
    }

    pub async fn put(&mut self, label: &str, path: &str, body: &Value) -> Value {
        self.send(label, "PUT", path, "application/json", Some(body))
            .await
    }

    pub async fn patch(&mut self, label: &str, path: &str, kind: &str, body: &Value) -> Value {
        self.send(label, "PATCH", path, kind, Some(body)).await
    }

    pub async fn delete(&mut self, label: &str, path: &str) -> Value {
        self.send(label, "DELETE", path, "", None).await
    }

    /// Opens a watch (`path` carries `watch=true` and the query), reads events up to and including the first
    /// `DELETED` one (bounded by a generous timeout, so a missing event fails instead of hanging) and records
    /// them as one exchange whose body is the list of events.
    pub async fn watch(&mut self, label: &str, path: &str) -> Vec<Value> {
        self.watch_accepting(label, path, "application/json").await
    }

    /// [`Transcript::watch`] asking for `accept`.
    pub async fn watch_accepting(&mut self, label: &str, path: &str, accept: &str) -> Vec<Value> {
        let request = http::Request::builder()
            .method("GET")
            .uri(path)
            .header("accept", accept)
            .body(kube::client::Body::from(Vec::new()))
            .expect("a request");
        let response = self
            .client
            .send(request)
            .await
            .unwrap_or_else(|e| panic!("{label}: GET {path}: {e}"));
        let status = response.status().as_u16();
        let mut body = response.into_body();
        let mut buffer: Vec<u8> = Vec::new();
        let mut seen = Vec::new();
        // Each event's first field: clients that decode the object as it streams rely on `type` coming first.
        let mut first_fields = Vec::new();
        let read = async {
            while !seen.iter().any(|e: &Value| e["type"] == "DELETED") {
                let Some(frame) = body.frame().await else {
                    break;
                };
                let frame = frame.unwrap_or_else(|e| panic!("{label}: reading the watch: {e}"));
                if let Ok(data) = frame.into_data() {
                    buffer.extend_from_slice(&data);
                }
                while let Some(end) = buffer.iter().position(|b| *b == b'\n') {
                    let line: Vec<u8> = buffer.drain(..=end).collect();
                    if line.iter().all(u8::is_ascii_whitespace) {
                        continue;
                    }
                    first_fields.push(first_field(&line));
                    seen.push(parse(&line));
                }
            }
        };
        if tokio::time::timeout(Duration::from_secs(60), read)
            .await
            .is_err()
        {
            panic!("{label}: no DELETED event within a minute; events: {seen:?}");
        }
        self.record(label, "WATCH", path, status, Value::Array(seen.clone()));
        if accept == "application/json" {
            self.note(
                &format!("{label}: each event's first field"),
                json!(first_fields),
            );
        }
        seen
    }

    /// [`Transcript::watch`] of a streamed list, recording what a client may rely on:
    /// - its closing bookmark (`k8s.io/initial-events-end`) carries the server's current resourceVersion, which
    ///   on kube-apiserver any write in the cluster moves on (its own leases, every ten seconds), so only
    ///   whether it is older than a write seen before is recorded in place of the version;
    /// - kube-apiserver may send a periodic bookmark at any time after it, so bookmarks without the annotation
    ///   are left out.
    pub async fn streamed_list(&mut self, label: &str, path: &str) -> Vec<Value> {
        self.streamed_list_accepting(label, path, "application/json")
            .await
    }

    /// [`Transcript::streamed_list`] asking for `accept`; in a Table's bookmark, every resourceVersion (the
    /// row's object's) is recorded as above.
    pub async fn streamed_list_accepting(
        &mut self,
        label: &str,
        path: &str,
        accept: &str,
    ) -> Vec<Value> {
        let newest = self.newest_version();
        let events = self.watch_accepting(label, path, accept).await;
        let kept: Vec<bool> = events.iter().map(|e| !is_periodic_bookmark(e)).collect();
        for exchange in self.exchanges.iter_mut().rev().take(2) {
            if let Value::Array(items) = &mut exchange.body {
                let mut keep = kept.iter();
                items.retain(|_| keep.next().copied().unwrap_or(true));
            }
        }
        let watch = self
            .exchanges
            .iter_mut()
            .rev()
            .find(|e| e.method == "WATCH")
            .expect("the watch just recorded");
        for event in watch.body.as_array_mut().into_iter().flatten() {
            if event["type"] != "BOOKMARK" {
                continue;
            }
            let versions = [
                "/object/metadata/resourceVersion",
                "/object/rows/0/object/metadata/resourceVersion",
            ];
            for pointer in versions {
                let Some(version) = event.pointer_mut(pointer) else {
                    continue;
                };
                let seen = version.as_str().and_then(|v| v.parse::<u64>().ok());
                *version = json!(match seen {
                    Some(v) if v >= newest => "<not older than any write before>",
                    Some(_) => "<older than a write before>",
                    None if version.as_str() == Some("") => "",
                    None => "<not a number>",
                });
            }
        }
        events
    }

    /// The newest resourceVersion in the answers recorded so far.
    fn newest_version(&self) -> u64 {
        fn walk(v: &Value, newest: &mut u64) {
            match v {
                Value::Object(m) => {
                    if let Some(rv) = m
                        .get("resourceVersion")
                        .and_then(Value::as_str)
                        .and_then(|v| v.parse::<u64>().ok())
                    {
                        *newest = (*newest).max(rv);
                    }
                    m.values().for_each(|v| walk(v, newest));
                }
                Value::Array(a) => a.iter().for_each(|v| walk(v, newest)),
                _ => {}
            }
        }
        let mut newest = 0;
        self.exchanges
            .iter()
            .for_each(|e| walk(&e.body, &mut newest));
        newest
    }

    /// Records a value the scenario computed itself (e.g. a comparison of two resourceVersions).
    pub fn note(&mut self, label: &str, value: Value) {
        self.record(label, "NOTE", "", 0, value);
    }

    fn record(&mut self, label: &str, method: &str, path: &str, status: u16, body: Value) {
        self.exchanges.push(Exchange {
            label: label.to_string(),
            method: method.to_string(),
            path: path.to_string(),
            status,
            body,
        });
    }
}

/// Whether a watch event is a bookmark other than a streamed list's closing one (`k8s.io/initial-events-end`),
/// as JSON or as decoded from protobuf (where the object is wrapped once more). kube-apiserver sends those
/// whenever its bookmark timer fires, so a scenario cannot expect them at a given point. In a Table watch the
/// bookmark is a row, its object's metadata annotated.
pub fn is_periodic_bookmark(event: &Value) -> bool {
    event["type"] == "BOOKMARK"
        && [
            "/object/metadata",
            "/object/object/metadata",
            "/object/rows/0/object/metadata",
        ]
        .iter()
        .all(|m| {
            event
                .pointer(&format!("{m}/annotations/k8s.io~1initial-events-end"))
                .is_none()
        })
}

fn parse(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(bytes).into_owned()))
}

/// A known, documented difference: the differences whose location (`label:/json/pointer`, e.g.
/// `create:/body/metadata/generation`) matches one of `paths` (`*` matches any run of characters) are
/// accepted. A deviation that accepts nothing fails the scenario, so a fixed difference is noticed.
#[derive(Debug, Clone, Copy)]
pub struct Deviation {
    pub name: &'static str,
    pub paths: &'static [&'static str],
}

/// Runs `scenario` on the in-memory server and on the real control plane and compares the transcripts.
pub async fn run<F, Fut>(name: &str, deviations: &[Deviation], scenario: F)
where
    F: Fn(Client, String) -> Fut,
    Fut: Future<Output = Transcript>,
{
    let Some([(mc, mns), (rc, rns)]) = both(name).await else {
        return;
    };
    let memory = normalize(&scenario(mc, mns.clone()).await.exchanges, &mns);
    let real = normalize(&scenario(rc, rns.clone()).await.exchanges, &rns);
    if let Some(dir) = std::env::var_os("OPERATOR_DIFF_DUMP") {
        dump(std::path::Path::new(&dir), name, &memory, &real);
    }
    let report = compare(&memory, &real, deviations);
    if !report.is_empty() {
        panic!("{name}: the in-memory server and kube-apiserver differ:\n{report}");
    }
}

/// Writes both normalized transcripts to `DIR/NAME.memory.json` and `DIR/NAME.real.json`
/// (`OPERATOR_DIFF_DUMP=DIR`), to read what a scenario saw.
fn dump(dir: &std::path::Path, name: &str, memory: &[Normalized], real: &[Normalized]) {
    let json = |t: &[Normalized]| {
        Value::Array(
            t.iter()
                .map(|e| json!({"label": e.label, "request": e.request, "status": e.status, "body": e.body}))
                .collect(),
        )
    };
    for (side, t) in [("memory", memory), ("real", real)] {
        let path = dir.join(format!("{name}.{side}.json"));
        let text = serde_json::to_string_pretty(&json(t)).expect("JSON");
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
    }
}

/// A client and a fresh namespace (with the Widget CRD installed) on the in-memory server, then on the real
/// one, both with the Gadget CRD of the table scenarios and the Thing CRD of `openapi_v2` too; `None` (after a message) without a control plane.
pub async fn both(name: &str) -> Option<[(Client, String); 2]> {
    let cp = ControlPlane::shared_or_skip(name).await?;
    let server = ApiServer::builder().controllers(false).build();
    let memory = server.client();
    install_crd(&memory).await;
    let memory_ns = namespace(&memory).await;
    cp.install_crds([
        Widget::crd(),
        gadget_definition(),
        crate::openapi_v2::thing_definition(),
    ])
    .await
    .expect("the CRD installs on the control plane");
    let real = cp.client().expect("a client");
    let real_ns = cp.namespace().await.expect("a namespace");
    Some([(memory, memory_ns), (real, real_ns)])
}

/// Creates the Widget, Gadget and Thing CRDs on the in-memory server and waits (bounded) until widgets are served.
pub async fn install_crd(client: &Client) {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    crds.create(&PostParams::default(), &Widget::crd())
        .await
        .expect("the CRD is created");
    crds.create(&PostParams::default(), &gadget_definition())
        .await
        .expect("the Gadget CRD is created");
    crds.create(
        &PostParams::default(),
        &crate::openapi_v2::thing_definition(),
    )
    .await
    .expect("the Thing CRD is created");
    let widgets: Api<Widget> = Api::default_namespaced(client.clone());
    for _ in 0..200 {
        if widgets.list(&Default::default()).await.is_ok() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the Widget CRD is not served");
}

/// Creates a namespace named like the control plane's (`envtest-xxxxx`).
pub async fn namespace(client: &Client) -> String {
    let api: Api<Namespace> = Api::all(client.clone());
    let mut ns = Namespace::default();
    ns.metadata.generate_name = Some("envtest-".into());
    let created = api
        .create(&PostParams::default(), &ns)
        .await
        .expect("a namespace");
    created.metadata.name.expect("a name")
}

pub use crate::compare::{Normalized, compare, normalize};

/// The name of the first field of a JSON object's text (`""` when it is not an object).
fn first_field(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    let rest = text
        .trim_start()
        .strip_prefix('{')
        .unwrap_or("")
        .trim_start();
    match rest.strip_prefix('"').and_then(|r| r.split_once('"')) {
        Some((name, _)) => name.to_string(),
        None => String::new(),
    }
}
