//! Custom resources served in several versions and converted between them, on both servers: a CRD whose
//! `v1` (deprecated) keeps `spec.replicas` and whose `v2` keeps `spec.scale.replicas`, converted by a
//! conversion webhook (HTTPS, `hook_server.rs` answering ConversionReviews on a thread of its own) that
//! refuses the object named `broken`. Objects created at one version are read, listed, patched, scaled and
//! watched at the other; a failing conversion's error; `status.storedVersions` after the storage version
//! moves and after `/status` drops the old one; a version no longer served. A CRD with `strategy: None`
//! (only `apiVersion` changes) and the 422s of invalid `spec.versions` and `spec.conversion`.

use std::sync::Arc;
use std::time::Duration;

use kube::Client;
use serde_json::{Value, json};

use crate::hook_server::HookServer;
use crate::support::{MERGE, Transcript, run};

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

/// The test webhook: `v1`'s `spec.replicas` is `v2`'s `spec.scale.replicas`; the object named `broken`
/// is refused.
fn convert(_path: &str, request: &Value) -> Value {
    let desired = request["desiredAPIVersion"].as_str().unwrap_or("");
    let mut converted = Vec::new();
    for object in request["objects"].as_array().cloned().unwrap_or_default() {
        let name = object["metadata"]["name"].as_str().unwrap_or("");
        if name == "broken" {
            return json!({"result": {"status": "Failure",
                "message": format!("cannot convert {name}: refused on purpose")}});
        }
        let mut out = object.clone();
        out["apiVersion"] = json!(desired);
        let spec = out["spec"].as_object_mut();
        if let Some(spec) = spec {
            if desired.ends_with("/v2") {
                if let Some(replicas) = spec.remove("replicas") {
                    spec.insert("scale".into(), json!({"replicas": replicas}));
                }
            } else if let Some(scale) = spec.remove("scale") {
                spec.insert("replicas".into(), scale["replicas"].clone());
            }
        }
        converted.push(out);
    }
    json!({"result": {"status": "Success"}, "convertedObjects": converted})
}

/// A [`HookServer`] serving [`convert`] from a thread and runtime of its own (the embedded server waits
/// for a conversion webhook on the thread that asked), until dropped.
struct Converter {
    client_config: Value,
    _stop: tokio::sync::oneshot::Sender<()>,
}

impl Converter {
    fn start() -> Self {
        let (ready, config) = std::sync::mpsc::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime");
            runtime.block_on(async move {
                let server = HookServer::start(Arc::new(convert)).await;
                let _ = ready.send(server.client_config("/convert"));
                let _ = stopped.await;
                drop(server);
            });
        });
        Converter {
            client_config: config.recv().expect("the converter's address"),
            _stop: stop,
        }
    }
}

fn schema(spec: Value) -> Value {
    json!({"openAPIV3Schema": {"type": "object", "properties": {
        "spec": {"type": "object", "properties": spec},
        "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}}})
}

fn gear_crd(group: &str, conversion: Value, storage: &str, v1_served: bool) -> Value {
    let scale = |path: &str| {
        json!({"status": {}, "scale": {"specReplicasPath": path,
                                        "statusReplicasPath": ".status.replicas"}})
    };
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("gears.{group}")},
        "spec": {
            "group": group,
            "names": {"kind": "Gear", "plural": "gears", "singular": "gear", "listKind": "GearList"},
            "scope": "Namespaced",
            "versions": [
                {"name": "v1", "served": v1_served, "storage": storage == "v1", "deprecated": true,
                 "schema": schema(json!({"replicas": {"type": "integer"}})),
                 "subresources": scale(".spec.replicas"),
                 "additionalPrinterColumns": [{"name": "Replicas", "type": "integer",
                                               "jsonPath": ".spec.replicas"}]},
                {"name": "v2", "served": true, "storage": storage == "v2",
                 "schema": schema(json!({"scale": {"type": "object", "properties": {
                     "replicas": {"type": "integer"}}}})),
                 "subresources": scale(".spec.scale.replicas"),
                 "additionalPrinterColumns": [{"name": "Replicas", "type": "integer",
                                               "jsonPath": ".spec.scale.replicas"}]}
            ],
            "conversion": conversion
        }
    })
}

/// The status code of a GET, not recorded.
async fn code_of(client: &Client, path: &str) -> u16 {
    let request = http::Request::get(path)
        .body(kube::client::Body::from(Vec::new()))
        .expect("a request");
    match client.send(request).await {
        Ok(r) => r.status().as_u16(),
        Err(_) => 0,
    }
}

/// Waits (bounded) until a GET of `path` answers `code`.
async fn until(client: &Client, path: &str, code: u16) {
    for _ in 0..400 {
        if code_of(client, path).await == code {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("GET {path} does not answer {code}");
}

/// Waits (bounded) until the group's discovery no longer lists `version` (kube-apiserver updates discovery
/// a moment after it stops serving a version).
async fn until_discovery_lacks(client: &Client, group: &str, version: &str) {
    let gv = format!("{group}/{version}");
    for _ in 0..400 {
        let request = http::Request::get(format!("/apis/{group}"))
            .body(Vec::new())
            .expect("a request");
        if let Ok(text) = client.request_text(request).await
            && let Ok(body) = serde_json::from_str::<serde_json::Value>(&text)
            && !body["versions"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|v| v["groupVersion"] == gv.as_str())
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the discovery of {group} still lists {version}");
}

/// A CRD's `status.storedVersions`, once the server wrote what it writes after an update.
async fn stored_versions(t: &mut Transcript, label: &str, name: &str) {
    tokio::time::sleep(Duration::from_millis(300)).await;
    let crd = t.get(label, &format!("{CRDS}/{name}")).await;
    *t.last_answer_mut().expect("an answer") = crd["status"]["storedVersions"].clone();
}

/// Deletes a CRD and waits until it is gone, not recorded.
async fn remove_crd(client: &Client, name: &str) {
    let request = http::Request::delete(format!("{CRDS}/{name}"))
        .body(kube::client::Body::from(Vec::new()))
        .expect("a request");
    let _ = client.send(request).await;
    until(client, &format!("{CRDS}/{name}"), 404).await;
}

/// The object without its managedFields (whose times and field sets both servers write alike elsewhere).
fn trim(t: &mut Transcript) {
    if let Some(body) = t.last_answer_mut()
        && let Some(meta) = body["metadata"].as_object_mut()
    {
        meta.remove("managedFields");
    }
    if let Some(items) = t.last_answer_mut().and_then(|b| b["items"].as_array_mut()) {
        for item in items {
            if let Some(meta) = item["metadata"].as_object_mut() {
                meta.remove("managedFields");
            }
        }
    }
}

async fn webhook_scenario(client: Client, ns: String, group: &str) -> Transcript {
    let converter = Converter::start();
    let webhook = json!({"strategy": "Webhook", "webhook": {
        "clientConfig": converter.client_config, "conversionReviewVersions": ["v1"]}});
    let name = format!("gears.{group}");
    let mut t = Transcript::new(client.clone()).with_warnings();
    t.post(
        "create the CRD",
        CRDS,
        &gear_crd(group, webhook.clone(), "v1", true),
    )
    .await;
    *t.last_answer_mut().expect("an answer") = json!("created");
    let v1 = format!("/apis/{group}/v1/namespaces/{ns}/gears");
    let v2 = format!("/apis/{group}/v2/namespaces/{ns}/gears");
    until(&client, &v1, 200).await;
    until(&client, &v2, 200).await;

    t.get("discovery of the group", &format!("/apis/{group}"))
        .await;
    let listed = t.get("list before any write", &v2).await;
    let start = listed["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or("0")
        .to_string();

    let gear = |version: &str, name: &str, spec: Value| {
        json!({"apiVersion": format!("{group}/{version}"), "kind": "Gear",
               "metadata": {"name": name}, "spec": spec})
    };
    t.post(
        "create a at v1",
        &v1,
        &gear("v1", "a", json!({"replicas": 2})),
    )
    .await;
    trim(&mut t);
    t.get("read a at v2", &format!("{v2}/a")).await;
    trim(&mut t);
    t.post(
        "create b at v2",
        &v2,
        &gear("v2", "b", json!({"scale": {"replicas": 3}})),
    )
    .await;
    trim(&mut t);
    t.get("read b at v1", &format!("{v1}/b")).await;
    trim(&mut t);
    t.get("list at v1", &v1).await;
    trim(&mut t);
    t.get("list at v2", &v2).await;
    trim(&mut t);
    t.patch(
        "merge patch of a at v2",
        &format!("{v2}/a"),
        MERGE,
        &json!({"spec": {"scale": {"replicas": 5}}}),
    )
    .await;
    trim(&mut t);
    t.get("a at v1 after the patch", &format!("{v1}/a")).await;
    trim(&mut t);
    t.get("scale of a at v2", &format!("{v2}/a/scale")).await;
    t.get("scale of a at v1", &format!("{v1}/a/scale")).await;
    t.patch(
        "scale a at v1",
        &format!("{v1}/a/scale"),
        MERGE,
        &json!({"spec": {"replicas": 6}}),
    )
    .await;
    t.patch(
        "status of b at v1",
        &format!("{v1}/b/status"),
        MERGE,
        &json!({"status": {"replicas": 1}}),
    )
    .await;
    trim(&mut t);
    t.get("b at v2 after its status", &format!("{v2}/b")).await;
    trim(&mut t);
    t.delete("delete b at v2", &format!("{v2}/b")).await;
    trim(&mut t);
    t.watch(
        "watch at v2 from before the writes",
        &format!("{v2}?watch=true&resourceVersion={start}"),
    )
    .await;
    // The managedFields of a manager that wrote another version are not converted (the
    // `MANAGED_FIELDS_ACROSS_VERSIONS` deviation in the crate docs of `kubewright_apiserver::convert`).
    if let Some(events) = t.last_answer_mut().and_then(Value::as_array_mut) {
        for event in events {
            if let Some(meta) = event["object"]["metadata"].as_object_mut() {
                meta.remove("managedFields");
            }
        }
    }

    // The object named `broken` does not convert: written at v2 (stored at v1), read at v2.
    t.post(
        "create broken at v2",
        &v2,
        &gear("v2", "broken", json!({"scale": {"replicas": 1}})),
    )
    .await;
    t.post(
        "create broken at v1",
        &v1,
        &gear("v1", "broken", json!({"replicas": 1})),
    )
    .await;
    trim(&mut t);
    t.get("read broken at v2", &format!("{v2}/broken")).await;
    t.get("list at v2 with broken", &v2).await;
    t.patch(
        "patch broken at v2",
        &format!("{v2}/broken"),
        MERGE,
        &json!({"metadata": {"labels": {"x": "y"}}}),
    )
    .await;
    t.delete("delete broken at v1", &format!("{v1}/broken"))
        .await;
    trim(&mut t);

    // The storage version moves to v2: storedVersions gains it.
    let current = t.get("the CRD", &format!("{CRDS}/{name}")).await;
    *t.last_answer_mut().expect("an answer") = json!("read");
    let mut next = gear_crd(group, webhook.clone(), "v2", true);
    next["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"].clone();
    t.put("storage moves to v2", &format!("{CRDS}/{name}"), &next)
        .await;
    *t.last_answer_mut().expect("an answer") = json!("updated");
    stored_versions(&mut t, "storedVersions after the move", &name).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut a = t.get("a at v1 before the update", &format!("{v1}/a")).await;
    trim(&mut t);
    a["spec"]["replicas"] = json!(7);
    t.put("update a at v1, stored at v2", &format!("{v1}/a"), &a)
        .await;
    trim(&mut t);
    t.get("a at v2", &format!("{v2}/a")).await;
    trim(&mut t);
    t.patch(
        "drop v1 from storedVersions",
        &format!("{CRDS}/{name}/status"),
        MERGE,
        &json!({"status": {"storedVersions": ["v2"]}}),
    )
    .await;
    if let Some(body) = t.last_answer_mut() {
        *body = body["status"]["storedVersions"].clone();
    }
    t.patch(
        "drop every stored version",
        &format!("{CRDS}/{name}/status"),
        MERGE,
        &json!({"status": {"storedVersions": []}}),
    )
    .await;
    if let Some(body) = t.last_answer_mut() {
        *body = body["status"]["storedVersions"].clone();
    }

    // v1 is no longer served.
    let current = t.get("the CRD again", &format!("{CRDS}/{name}")).await;
    *t.last_answer_mut().expect("an answer") = json!("read");
    let mut next = gear_crd(group, webhook, "v2", false);
    next["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"].clone();
    t.put("v1 no longer served", &format!("{CRDS}/{name}"), &next)
        .await;
    *t.last_answer_mut().expect("an answer") = json!("updated");
    until(&client, &v1, 404).await;
    t.get("a at v1, not served", &format!("{v1}/a")).await;
    // kube-apiserver answers `404 page not found` in plain text, the in-memory server a Status (as for any
    // path it does not serve): only the code is compared.
    *t.last_answer_mut().expect("an answer") = json!("not found");
    until_discovery_lacks(&client, group, "v1").await;
    t.get("discovery of the group after", &format!("/apis/{group}"))
        .await;
    remove_crd(&client, &name).await;
    drop(converter);
    t
}

#[tokio::test]
async fn conversion_webhook() {
    run("conversion_webhook", &[], |client, ns| {
        webhook_scenario(client, ns, "convhook.example.dev")
    })
    .await;
}

async fn none_scenario(client: Client, ns: String) -> Transcript {
    let group = "convnone.example.dev";
    let name = format!("gears.{group}");
    let mut t = Transcript::new(client.clone()).with_warnings();
    let mut crd = gear_crd(group, json!({"strategy": "None"}), "v2", true);
    // One schema that both versions accept.
    let open = json!({"openAPIV3Schema": {"type": "object",
        "x-kubernetes-preserve-unknown-fields": true}});
    crd["spec"]["versions"][0]["schema"] = open.clone();
    crd["spec"]["versions"][1]["schema"] = open;
    t.post("create the CRD", CRDS, &crd).await;
    *t.last_answer_mut().expect("an answer") = json!("created");
    let v1 = format!("/apis/{group}/v1/namespaces/{ns}/gears");
    let v2 = format!("/apis/{group}/v2/namespaces/{ns}/gears");
    until(&client, &v1, 200).await;
    until(&client, &v2, 200).await;
    t.post(
        "create at v1",
        &v1,
        &json!({"apiVersion": format!("{group}/v1"), "kind": "Gear",
                "metadata": {"name": "n"}, "spec": {"replicas": 2}}),
    )
    .await;
    trim(&mut t);
    t.get("read at v2", &format!("{v2}/n")).await;
    trim(&mut t);
    t.get("list at v1", &v1).await;
    trim(&mut t);
    t.get("discovery of the group", &format!("/apis/{group}"))
        .await;
    t.get("discovery of v1", &format!("/apis/{group}/v1")).await;
    stored_versions(&mut t, "storedVersions", &name).await;
    remove_crd(&client, &name).await;
    t
}

#[tokio::test]
async fn conversion_none() {
    run("conversion_none", &[], none_scenario).await;
}

/// A 422 whose causes quote `spec.versions` whole: kube-apiserver prints its internal Go structs (field names
/// capitalized, every schema field), the in-memory server the versions' JSON; only what follows is compared
/// (the `VERSIONS_VALUE` deviation, listed in the crate docs of `kubewright_apiserver::convert`).
fn versions_quoted(t: &mut Transcript) {
    let Some(body) = t.last_answer_mut() else {
        return;
    };
    let shorten = |text: &str| match (text.starts_with("Invalid value: [{"), text.rfind("}]: ")) {
        (true, Some(end)) => format!("Invalid value: <versions>{}", &text[end + 2..]),
        _ => text.to_string(),
    };
    if let Some(causes) = body["details"]["causes"].as_array_mut() {
        for cause in causes {
            let message = shorten(cause["message"].as_str().unwrap_or(""));
            cause["message"] = json!(message);
        }
    }
    body["message"] = json!("<quotes spec.versions>");
}

async fn invalid_scenario(client: Client, _ns: String) -> Transcript {
    let group = "convbad.example.dev";
    let mut t = Transcript::new(client);
    let base = || gear_crd(group, json!({"strategy": "None"}), "v1", true);
    let mut two = base();
    two["spec"]["versions"][1]["storage"] = json!(true);
    t.post("two storage versions", CRDS, &two).await;
    versions_quoted(&mut t);
    let mut none = base();
    none["spec"]["versions"][0]["storage"] = json!(false);
    t.post("no storage version", CRDS, &none).await;
    versions_quoted(&mut t);
    let mut same = base();
    same["spec"]["versions"][1]["name"] = json!("v1");
    t.post("repeated version names", CRDS, &same).await;
    versions_quoted(&mut t);
    let mut bad_name = base();
    bad_name["spec"]["versions"][1]["name"] = json!("V2");
    t.post("a version name that is not a DNS label", CRDS, &bad_name)
        .await;
    let mut warning = base();
    warning["spec"]["versions"][1]["deprecationWarning"] = json!("not deprecated");
    t.post(
        "deprecationWarning on a version not deprecated",
        CRDS,
        &warning,
    )
    .await;
    let mut empty = base();
    empty["spec"]["versions"][0]["deprecationWarning"] = json!("");
    t.post("an empty deprecationWarning", CRDS, &empty).await;
    let mut webhook = base();
    webhook["spec"]["conversion"] = json!({"strategy": "Webhook"});
    t.post("Webhook without a webhook", CRDS, &webhook).await;
    let mut http = base();
    http["spec"]["conversion"] = json!({"strategy": "Webhook", "webhook": {
        "clientConfig": {"url": "http://example.dev/convert?x=1"},
        "conversionReviewVersions": ["v2", "v2"]}});
    t.post(
        "Webhook over http with unknown review versions",
        CRDS,
        &http,
    )
    .await;
    let mut both = base();
    both["spec"]["conversion"] = json!({"strategy": "Webhook", "webhook": {
        "clientConfig": {"url": "https://example.dev/convert",
                         "service": {"namespace": "x", "name": "y"}},
        "conversionReviewVersions": ["v1"]}});
    t.post("Webhook with a url and a service", CRDS, &both)
        .await;
    let mut forbidden = base();
    forbidden["spec"]["conversion"] = json!({"strategy": "None", "webhook": {
        "clientConfig": {"url": "https://example.dev/convert"},
        "conversionReviewVersions": ["v1"]}});
    t.post("None with a webhook", CRDS, &forbidden).await;
    let mut unknown = base();
    unknown["spec"]["conversion"] = json!({"strategy": "Sometimes"});
    t.post("an unknown strategy", CRDS, &unknown).await;
    t
}

#[tokio::test]
async fn conversion_invalid_crds() {
    run("conversion_invalid_crds", &[], invalid_scenario).await;
}

/// The managedFields entry of a manager that wrote another version: kube-apiserver converts its field set
/// to the version read (fields that version lacks drop out), the in-memory server keeps it as written
/// (`MANAGED_FIELDS_ACROSS_VERSIONS`, listed in the crate docs' known differences).
#[tokio::test]
async fn managed_fields_of_another_version_convert_on_kube_apiserver_only() {
    let Some(sides) = crate::support::both("managed_fields_across_versions").await else {
        return;
    };
    let group = "convmf.example.dev";
    let name = format!("gears.{group}");
    let mut field_sets = Vec::new();
    for (client, ns) in sides {
        let converter = Converter::start();
        let webhook = json!({"strategy": "Webhook", "webhook": {
            "clientConfig": converter.client_config, "conversionReviewVersions": ["v1"]}});
        let mut t = Transcript::new(client.clone());
        t.post(
            "create the CRD",
            CRDS,
            &gear_crd(group, webhook, "v1", true),
        )
        .await;
        let v1 = format!("/apis/{group}/v1/namespaces/{ns}/gears");
        let v2 = format!("/apis/{group}/v2/namespaces/{ns}/gears");
        until(&client, &v2, 200).await;
        t.post(
            "create at v1",
            &v1,
            &json!({"apiVersion": format!("{group}/v1"), "kind": "Gear",
                    "metadata": {"name": "a"}, "spec": {"replicas": 2}}),
        )
        .await;
        let patched = t
            .patch(
                "patch at v2",
                &format!("{v2}/a"),
                MERGE,
                &json!({"spec": {"scale": {"replicas": 5}}}),
            )
            .await;
        field_sets.push(patched["metadata"]["managedFields"][0]["fieldsV1"].clone());
        remove_crd(&client, &name).await;
    }
    assert_eq!(
        field_sets[0],
        json!({"f:spec": {".": {}, "f:replicas": {}}}),
        "in-memory: the v1 manager's fields as written"
    );
    assert_eq!(
        field_sets[1],
        json!({"f:spec": {}}),
        "kube-apiserver: the v1 manager's fields converted"
    );
}

/// The OpenAPI v3 documents of each served version of a two-version CRD (`v1` deprecated, `v2` stored) are
/// kube-apiserver's: the index lists both group-versions, and each version's document has the same paths
/// and schemas, its kind's schema built from that version's own schema.
#[tokio::test]
async fn openapi_v3_documents_of_each_version_are_kube_apiservers() {
    let Some([(memory, _), (real, _)]) =
        crate::support::both("openapi_v3_documents_of_each_version_are_kube_apiservers").await
    else {
        return;
    };
    let group = "openapiversions.example.dev";
    let name = format!("gears.{group}");
    let crd = gear_crd(group, json!({"strategy": "None"}), "v2", true);
    for client in [&memory, &real] {
        let request = http::Request::post(CRDS)
            .header("content-type", "application/json")
            .body(kube::client::Body::from(crd.to_string().into_bytes()))
            .expect("a request");
        client.send(request).await.expect("create the CRD");
        until(client, &format!("/apis/{group}/v2/gears"), 200).await;
    }
    let mut differences = Vec::new();
    for version in ["v1", "v2"] {
        let gv = format!("apis/{group}/{version}");
        let kind = format!("dev.example.openapiversions.{version}.Gear");
        // Read once each server publishes the version's schema.
        let mut docs = Vec::new();
        for client in [&memory, &real] {
            let mut doc = Value::Null;
            for _ in 0..60 {
                // kube-apiserver answers 404 until it publishes the new group-version's document.
                let request = http::Request::get(format!("/openapi/v3/{gv}"))
                    .body(Vec::new())
                    .expect("a request");
                if let Ok(read) = client.request::<Value>(request).await {
                    doc = read;
                    if doc
                        .pointer(&format!("/components/schemas/{kind}"))
                        .is_some()
                    {
                        break;
                    }
                }
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            docs.push(doc);
        }
        let (ours, theirs) = (&docs[0], &docs[1]);
        assert!(
            theirs
                .pointer(&format!("/components/schemas/{kind}"))
                .is_some(),
            "kube-apiserver publishes no {kind}"
        );
        for part in ["paths", "components"] {
            if let Some(d) = crate::openapi::first_difference(
                &ours[part],
                &theirs[part],
                &format!("{gv} {part}"),
            ) {
                differences.push(d);
            }
        }
    }
    let index = |doc: Value| -> Vec<String> {
        doc["paths"]
            .as_object()
            .map(|p| p.keys().filter(|k| k.contains(group)).cloned().collect())
            .unwrap_or_default()
    };
    let (ours, theirs) = (
        index(crate::openapi::get_json(&memory, "/openapi/v3").await),
        index(crate::openapi::get_json(&real, "/openapi/v3").await),
    );
    assert_eq!(
        theirs,
        [format!("apis/{group}/v1"), format!("apis/{group}/v2")]
    );
    assert_eq!(ours, theirs, "the index's group-versions");
    remove_crd(&memory, &name).await;
    remove_crd(&real, &name).await;
    assert!(
        differences.is_empty(),
        "{} differences:\n{}",
        differences.len(),
        differences.join("\n")
    );
}
