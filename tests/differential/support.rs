//! Running one scenario on both servers, normalizing the two transcripts and comparing them.
//!
//! A scenario is an `async fn(kube::Client, String) -> Transcript`: it gets a client and the name of a fresh
//! namespace, sends its requests through a [`Transcript`] (which records each exchange: label, method, path,
//! HTTP status and JSON body) and returns it. [`run`] runs it on the in-memory server (built with
//! `controllers(false)`, like a bare kube-apiserver) and on the shared real control plane, normalizes both
//! transcripts (uids, resourceVersions, timestamps, the namespace, generated names, continue tokens) and panics
//! with every difference that is not a named [`Deviation`].

use std::collections::BTreeMap;
use std::future::Future;
use std::time::Duration;

use http_body_util::BodyExt;
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, PostParams};
use kube::{Client, CustomResource, CustomResourceExt};
use operator::testing::ApiServer;
use operator::testing::envtest::ControlPlane;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

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

fn gadget_definition() -> CustomResourceDefinition {
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
        let mut request = http::Request::builder()
            .method(method)
            .uri(path)
            .header("accept", accept);
        let bytes = match body {
            Some(b) => {
                request = request.header("content-type", content_type);
                serde_json::to_vec(b).expect("a JSON body")
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
        seen
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

/// Scenarios run side by side under a read guard; one that must see no other write run alone, under the
/// write guard.
fn side_by_side() -> &'static tokio::sync::RwLock<()> {
    static LOCK: std::sync::OnceLock<tokio::sync::RwLock<()>> = std::sync::OnceLock::new();
    LOCK.get_or_init(|| tokio::sync::RwLock::new(()))
}

/// Runs `scenario` on the in-memory server and on the real control plane and compares the transcripts.
pub async fn run<F, Fut>(name: &str, deviations: &[Deviation], scenario: F)
where
    F: Fn(Client, String) -> Fut,
    Fut: Future<Output = Transcript>,
{
    let _beside_others = side_by_side().read().await;
    compare_runs(name, deviations, scenario).await;
}

/// [`run`] while no other `run` scenario runs: for scenarios that compare a resourceVersion kube-apiserver
/// takes from its watch cache, which any write in the cluster moves on (a streamed list's initial-events
/// bookmark). The tests that call [`both`] themselves are not held back.
pub async fn run_alone<F, Fut>(name: &str, deviations: &[Deviation], scenario: F)
where
    F: Fn(Client, String) -> Fut,
    Fut: Future<Output = Transcript>,
{
    let _alone = side_by_side().write().await;
    compare_runs(name, deviations, scenario).await;
}

async fn compare_runs<F, Fut>(name: &str, deviations: &[Deviation], scenario: F)
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
/// one, both with the Gadget CRD of the table scenarios too; `None` (after a message) without a control plane.
pub async fn both(name: &str) -> Option<[(Client, String); 2]> {
    let cp = ControlPlane::shared_or_skip(name).await?;
    let server = ApiServer::builder().controllers(false).build();
    let memory = server.client();
    install_crd(&memory).await;
    let memory_ns = namespace(&memory).await;
    cp.install_crds([Widget::crd(), gadget_definition()])
        .await
        .expect("the CRD installs on the control plane");
    let real = cp.client().expect("a client");
    let real_ns = cp.namespace().await.expect("a namespace");
    Some([(memory, memory_ns), (real, real_ns)])
}

/// Creates the Widget and Gadget CRDs on the in-memory server and waits (bounded) until widgets are served.
pub async fn install_crd(client: &Client) {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    crds.create(&PostParams::default(), &Widget::crd())
        .await
        .expect("the CRD is created");
    crds.create(&PostParams::default(), &gadget_definition())
        .await
        .expect("the Gadget CRD is created");
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

/// An exchange after normalization: what is compared.
#[derive(Debug, Clone)]
pub struct Normalized {
    pub label: String,
    pub request: String,
    pub status: u16,
    pub body: Value,
}

const TIME_KEYS: [&str; 5] = [
    "creationTimestamp",
    "deletionTimestamp",
    "time",
    "lastTransitionTime",
    "lastUpdateTime",
];

/// The characters of a generated name suffix (`k8s.io/apimachinery/pkg/util/rand`).
const SUFFIX_ALPHABET: &str = "bcdfghjklmnpqrstvwxz2456789";

/// Replaces what differs between any two runs: the namespace, generated name suffixes (when they look like
/// kube-apiserver's five characters), uids and resourceVersions (by ordinal of first appearance), a list's
/// own resourceVersion, continue tokens and timestamps; uids inside other strings too.
pub fn normalize(exchanges: &[Exchange], ns: &str) -> Vec<Normalized> {
    let mut generated = BTreeMap::new();
    for e in exchanges {
        collect_generated(&e.body, &mut generated);
    }
    let mut replacements: Vec<(String, String)> = generated.into_iter().collect();
    replacements.sort_by_key(|(from, _)| std::cmp::Reverse(from.len()));
    replacements.push((ns.to_string(), "<ns>".to_string()));

    let mut ids = Ordinals::default();
    let walked: Vec<(Value, String)> = exchanges
        .iter()
        .map(|e| {
            let mut body = e.body.clone();
            walk(&mut body, None, &mut ids);
            let mut path = e.path.clone();
            for (from, to) in &replacements {
                path = path.replace(from, to);
            }
            (body, normalize_query(&path, &mut ids))
        })
        .collect();
    // uids also appear inside messages (a failed uid precondition names both).
    replacements.extend(
        ids.uids
            .iter()
            .map(|(uid, n)| (uid.clone(), format!("<uid-{n}>"))),
    );
    exchanges
        .iter()
        .zip(walked)
        .map(|(e, (mut body, path))| {
            rewrite_strings(&mut body, &replacements);
            Normalized {
                label: e.label.clone(),
                request: format!("{} {}", e.method, path),
                status: e.status,
                body,
            }
        })
        .collect()
}

#[derive(Default)]
struct Ordinals {
    uids: BTreeMap<String, usize>,
    rvs: BTreeMap<String, usize>,
}

impl Ordinals {
    fn uid(&mut self, v: &str) -> String {
        let n = self.uids.len() + 1;
        format!("<uid-{}>", self.uids.entry(v.to_string()).or_insert(n))
    }
    fn rv(&mut self, v: &str) -> String {
        let n = self.rvs.len() + 1;
        format!("<rv-{}>", self.rvs.entry(v.to_string()).or_insert(n))
    }
}

fn collect_generated(v: &Value, out: &mut BTreeMap<String, String>) {
    match v {
        Value::Object(m) => {
            if let (Some(Value::String(prefix)), Some(Value::String(name))) =
                (m.get("generateName"), m.get("name"))
                && let Some(suffix) = name.strip_prefix(prefix.as_str())
                && suffix.len() == 5
                && suffix.chars().all(|c| SUFFIX_ALPHABET.contains(c))
            {
                out.insert(name.clone(), format!("{prefix}<suffix>"));
            }
            m.values().for_each(|v| collect_generated(v, out));
        }
        Value::Array(a) => a.iter().for_each(|v| collect_generated(v, out)),
        _ => {}
    }
}

fn is_list(m: &Map<String, Value>) -> bool {
    m.get("kind")
        .and_then(Value::as_str)
        .is_some_and(|k| k.ends_with("List") || k == "Table")
        || m.get("items").is_some_and(Value::is_array)
}

/// An age as kube-apiserver's printers write it (`0s`, `3m20s`, `2d3h`, `3y5d`).
fn is_age(s: &str) -> bool {
    let mut digits = false;
    for c in s.chars() {
        match c {
            '0'..='9' => digits = true,
            's' | 'm' | 'h' | 'd' | 'y' if digits => digits = false,
            _ => return false,
        }
    }
    !s.is_empty() && !digits
}

/// An RFC 3339 time in UTC as Kubernetes writes it (`2026-11-25T10:05:42Z`).
fn is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 20
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'T'
        && b[13] == b':'
        && s.ends_with('Z')
        && s[..4].chars().all(|c| c.is_ascii_digit())
}

/// The cells of a Table that depend on the clock: ages (also in `2 (5s ago)`) become `<age>`, timestamps
/// (the Created At column) `<time>`.
fn normalize_cells(rows: &mut Value) {
    let cells = rows
        .as_array_mut()
        .into_iter()
        .flatten()
        .filter_map(|row| row.get_mut("cells").and_then(Value::as_array_mut))
        .flatten();
    for cell in cells {
        let Value::String(s) = cell else { continue };
        if is_age(s) {
            *s = "<age>".into();
        } else if is_timestamp(s) {
            *s = "<time>".into();
        } else if let Some((count, ago)) = s.split_once(" (")
            && ago.strip_suffix(" ago)").is_some_and(is_age)
        {
            *s = format!("{count} (<age> ago)");
        }
    }
}

fn walk(v: &mut Value, key: Option<&str>, ids: &mut Ordinals) {
    match v {
        Value::Object(m) => {
            if is_list(m)
                && let Some(Value::Object(meta)) = m.get_mut("metadata")
            {
                if meta.contains_key("resourceVersion") {
                    meta.insert("resourceVersion".into(), json!("<list-rv>"));
                }
                if meta
                    .get("continue")
                    .and_then(Value::as_str)
                    .is_some_and(|c| !c.is_empty())
                {
                    meta.insert("continue".into(), json!("<continue>"));
                }
            }
            if m.get("kind").and_then(Value::as_str) == Some("Table")
                && let Some(rows) = m.get_mut("rows")
            {
                normalize_cells(rows);
            }
            for (k, v) in m.iter_mut() {
                walk(v, Some(k), ids);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(|v| walk(v, None, ids)),
        Value::String(s) => match key {
            Some("uid") => *s = ids.uid(s),
            Some("resourceVersion") if !s.starts_with('<') => *s = ids.rv(s),
            Some(k) if TIME_KEYS.contains(&k) => *s = "<time>".into(),
            _ => {}
        },
        _ => {}
    }
}

fn rewrite_strings(v: &mut Value, replacements: &[(String, String)]) {
    match v {
        Value::Object(m) => m
            .values_mut()
            .for_each(|v| rewrite_strings(v, replacements)),
        Value::Array(a) => a.iter_mut().for_each(|v| rewrite_strings(v, replacements)),
        Value::String(s) => {
            for (from, to) in replacements {
                if s.contains(from.as_str()) {
                    *s = s.replace(from.as_str(), to);
                }
            }
        }
        _ => {}
    }
}

fn normalize_query(path: &str, ids: &mut Ordinals) -> String {
    let Some((base, query)) = path.split_once('?') else {
        return path.to_string();
    };
    let params: Vec<String> = query
        .split('&')
        .map(|p| match p.split_once('=') {
            Some(("resourceVersion", v)) => format!("resourceVersion={}", ids.rv(v)),
            Some(("continue", _)) => "continue=<continue>".to_string(),
            _ => p.to_string(),
        })
        .collect();
    format!("{base}?{}", params.join("&"))
}

/// Every difference between two normalized transcripts, minus the accepted deviations, as a readable report
/// (empty when they agree). Deviations that accepted nothing are reported too.
pub fn compare(memory: &[Normalized], real: &[Normalized], deviations: &[Deviation]) -> String {
    let mut differences = Vec::new();
    if memory.len() != real.len() {
        differences.push((
            "/exchanges".to_string(),
            format!("{} exchanges", memory.len()),
            format!("{} exchanges", real.len()),
        ));
    }
    for (m, r) in memory.iter().zip(real) {
        let at = m.label.clone();
        if m.label != r.label || m.request != r.request {
            differences.push((
                format!("{at}:/request"),
                format!("{} {}", m.label, m.request),
                format!("{} {}", r.label, r.request),
            ));
            continue;
        }
        if m.status != r.status {
            differences.push((
                format!("{at}:/status"),
                m.status.to_string(),
                r.status.to_string(),
            ));
        }
        diff(&format!("{at}:/body"), &m.body, &r.body, &mut differences);
    }
    let mut used = vec![false; deviations.len()];
    let mut report = String::new();
    for (path, m, r) in &differences {
        let accepted = deviations
            .iter()
            .position(|d| d.paths.iter().any(|p| glob(p, path)));
        match accepted {
            Some(i) => used[i] = true,
            None => report.push_str(&format!(
                "  {path}\n      in-memory: {m}\n      real:      {r}\n"
            )),
        }
    }
    for (d, used) in deviations.iter().zip(used) {
        if !used {
            report.push_str(&format!(
                "  deviation {:?} no longer observed; remove it from the scenario and the docs\n",
                d.name
            ));
        }
    }
    if !report.is_empty() {
        report.push_str("\nrequests (normalized, in-memory):\n");
        for m in memory {
            report.push_str(&format!("  {}: {} -> {}\n", m.label, m.request, m.status));
        }
    }
    report
}

fn show(v: Option<&Value>) -> String {
    match v {
        None => "(absent)".into(),
        Some(v) => {
            let s = v.to_string();
            if s.chars().count() > 400 {
                format!("{}…", s.chars().take(400).collect::<String>())
            } else {
                s
            }
        }
    }
}

fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

fn diff(path: &str, m: &Value, r: &Value, out: &mut Vec<(String, String, String)>) {
    match (m, r) {
        (Value::Object(a), Value::Object(b)) => {
            let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for k in keys {
                let at = format!("{path}/{}", escape(k));
                match (a.get(k), b.get(k)) {
                    (Some(x), Some(y)) => diff(&at, x, y, out),
                    (x, y) => out.push((at, show(x), show(y))),
                }
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            for i in 0..a.len().max(b.len()) {
                let at = format!("{path}/{i}");
                match (a.get(i), b.get(i)) {
                    (Some(x), Some(y)) => diff(&at, x, y, out),
                    (x, y) => out.push((at, show(x), show(y))),
                }
            }
        }
        (a, b) if a == b => {}
        (a, b) => out.push((path.to_string(), show(Some(a)), show(Some(b)))),
    }
}

/// `*` matches any run of characters.
fn glob(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let Some(rest) = text.strip_prefix(parts[0]) else {
        return false;
    };
    let mut rest = rest;
    let last = parts[parts.len() - 1];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(i) => rest = &rest[i + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

#[test]
fn ages_are_recognized() {
    for age in ["0s", "45s", "3m20s", "2d3h", "3y5d"] {
        assert!(is_age(age), "{age}");
    }
    for other in ["", "5", "s", "1/1", "Running", "10.0.0.1", "3m2"] {
        assert!(!is_age(other), "{other}");
    }
}

#[test]
fn globs_match_runs_of_characters() {
    assert!(glob("a:/body/*/x", "a:/body/items/0/x"));
    assert!(glob(
        "a:/body/metadata/managedFields*",
        "a:/body/metadata/managedFields/0/time"
    ));
    assert!(!glob("a:/body/*/x", "b:/body/items/0/x"));
    assert!(glob("exact", "exact"));
    assert!(!glob("exa", "exact"));
}
