//! Generation, the status and scale subresources, finalizers and deletion, and watch event sequences.

use kube::Client;
use serde_json::{Value, json};

use crate::deviations::STATUS_WRITE_METADATA_OWNERSHIP;
use crate::support::{
    APPLY, JSON_PATCH, MERGE, Transcript, configmap, configmaps, run, widget, widgets,
};

async fn generation(client: Client, ns: String) -> Transcript {
    let mut t = Transcript::new(client);
    let w = format!("{}/w", widgets(&ns));
    t.post("create", &widgets(&ns), &widget("w", 1, "red"))
        .await;
    t.patch("spec change", &w, MERGE, &json!({"spec": {"replicas": 2}}))
        .await;
    t.patch(
        "same spec again",
        &w,
        MERGE,
        &json!({"spec": {"replicas": 2}}),
    )
    .await;
    t.patch(
        "label change",
        &w,
        MERGE,
        &json!({"metadata": {"labels": {"a": "b"}}}),
    )
    .await;
    t.patch(
        "annotation change",
        &w,
        MERGE,
        &json!({"metadata": {"annotations": {"a": "b"}}}),
    )
    .await;
    t.patch(
        "status change",
        &format!("{w}/status"),
        MERGE,
        &json!({"status": {"phase": "Ready", "replicas": 2}}),
    )
    .await;
    let mut current = t.get("get", &w).await;
    current["spec"]["color"] = json!("blue");
    t.put("spec change by update", &w, &current).await;
    t
}

#[tokio::test]
async fn generation_follows_spec_changes_only() {
    run("generation_follows_spec_changes_only", &[], generation).await;
}

async fn status_subresource(client: Client, ns: String) -> Transcript {
    let mut t = Transcript::new(client);
    let w = format!("{}/w", widgets(&ns));
    let mut with_status = widget("w", 1, "red");
    with_status["status"] = json!({"phase": "Given"});
    t.post("create with status", &widgets(&ns), &with_status)
        .await;
    t.patch(
        "status through the main resource",
        &w,
        MERGE,
        &json!({"status": {"phase": "Ignored"}}),
    )
    .await;
    let mut current = t.get("get", &w).await;
    current["status"] = json!({"phase": "IgnoredToo"});
    t.put(
        "status through an update of the main resource",
        &w,
        &current,
    )
    .await;
    t.patch(
        "spec through /status",
        &format!("{w}/status"),
        MERGE,
        &json!({"spec": {"replicas": 5}, "status": {"phase": "Set"}}),
    )
    .await;
    let mut current = t.get("get status", &format!("{w}/status")).await;
    current["status"] = json!({"phase": "Put", "replicas": 1});
    current["metadata"]["labels"] = json!({"from": "status"});
    t.put("update of /status", &format!("{w}/status"), &current)
        .await;
    t.patch(
        "invalid status",
        &format!("{w}/status"),
        MERGE,
        &json!({"status": {"replicas": -1}}),
    )
    .await;
    t.get("get after", &w).await;
    t
}

#[tokio::test]
async fn status_subresource_separates_spec_and_status() {
    run(
        "status_subresource_separates_spec_and_status",
        &[STATUS_WRITE_METADATA_OWNERSHIP],
        status_subresource,
    )
    .await;
}

async fn scale(client: Client, ns: String) -> Transcript {
    let mut t = Transcript::new(client);
    let w = format!("{}/w", widgets(&ns));
    t.post("create", &widgets(&ns), &widget("w", 2, "red"))
        .await;
    t.patch(
        "status replicas",
        &format!("{w}/status"),
        MERGE,
        &json!({"status": {"replicas": 1}}),
    )
    .await;
    let mut scale = t.get("get scale", &format!("{w}/scale")).await;
    t.patch(
        "patch scale",
        &format!("{w}/scale"),
        MERGE,
        &json!({"spec": {"replicas": 4}}),
    )
    .await;
    scale["spec"]["replicas"] = json!(6);
    t.put(
        "update scale with a stale resourceVersion",
        &format!("{w}/scale"),
        &scale,
    )
    .await;
    if let Some(m) = scale["metadata"].as_object_mut() {
        m.remove("resourceVersion");
    }
    t.put("update scale", &format!("{w}/scale"), &scale).await;
    t.patch(
        "negative scale",
        &format!("{w}/scale"),
        MERGE,
        &json!({"spec": {"replicas": -1}}),
    )
    .await;
    t.get("get after", &w).await;
    t
}

#[tokio::test]
async fn scale_subresource_reads_and_writes_replicas() {
    run("scale_subresource_reads_and_writes_replicas", &[], scale).await;
}

fn events_summary(events: &[Value]) -> Value {
    Value::Array(
        events
            .iter()
            .map(|e| {
                let o = &e["object"];
                json!({
                    "type": e["type"],
                    "name": o["metadata"]["name"],
                    "generation": o["metadata"]["generation"],
                    "deleting": o["metadata"].get("deletionTimestamp").is_some(),
                    "finalizers": o["metadata"]["finalizers"],
                    "replicas": o["spec"]["replicas"],
                    "phase": o["status"]["phase"],
                })
            })
            .collect(),
    )
}

async fn finalizers(client: Client, ns: String) -> Transcript {
    let mut t = Transcript::new(client);
    let ws = widgets(&ns);
    let w = format!("{ws}/w");
    let mut held = widget("w", 1, "red");
    held["metadata"]["finalizers"] = json!(["diff.example.dev/hold"]);
    let created = t.post("create with a finalizer", &ws, &held).await;
    let rv = created["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    t.delete("delete", &w).await;
    t.get("get while deleting", &w).await;
    t.delete("delete again", &w).await;
    t.patch(
        "spec change while deleting",
        &w,
        MERGE,
        &json!({"spec": {"replicas": 2}}),
    )
    .await;
    t.patch(
        "add a finalizer while deleting",
        &w,
        JSON_PATCH,
        &json!([{"op": "add", "path": "/metadata/finalizers/-", "value": "diff.example.dev/late"}]),
    )
    .await;
    t.patch(
        "remove the finalizer",
        &w,
        MERGE,
        &json!({"metadata": {"finalizers": null}}),
    )
    .await;
    t.get("get after the finalizer is gone", &w).await;
    let events = t
        .watch(
            "watch from the creation",
            &format!("{ws}?watch=true&fieldSelector=metadata.name%3Dw&resourceVersion={rv}"),
        )
        .await;
    t.note("watch events", events_summary(&events));
    t.post("create without finalizers", &ws, &widget("plain", 1, "red"))
        .await;
    t.delete("delete without finalizers", &format!("{ws}/plain"))
        .await;
    let cms = configmaps(&ns);
    t.post(
        "create a config map",
        &cms,
        &configmap("c", json!({"k": "v"})),
    )
    .await;
    t.delete("delete a config map", &format!("{cms}/c")).await;
    let mut held = configmap("held", json!({"k": "v"}));
    held["metadata"]["finalizers"] = json!(["diff.example.dev/hold"]);
    t.post("create a held config map", &cms, &held).await;
    let cm = format!("{cms}/held");
    t.delete("delete a held config map", &cm).await;
    t.patch(
        "add a finalizer to a deleting config map",
        &cm,
        JSON_PATCH,
        &json!([{"op": "add", "path": "/metadata/finalizers/-", "value": "diff.example.dev/late"}]),
    )
    .await;
    t.patch(
        "release the config map",
        &cm,
        MERGE,
        &json!({"metadata": {"finalizers": []}}),
    )
    .await;
    t.get("get the released config map", &cm).await;
    t
}

#[tokio::test]
async fn finalizers_hold_deletion() {
    run("finalizers_hold_deletion", &[], finalizers).await;
}

async fn watch(client: Client, ns: String) -> Transcript {
    let mut t = Transcript::new(client);
    let ws = widgets(&ns);
    let first = t.post("create a", &ws, &widget("a", 1, "red")).await;
    let rv = first["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    t.post("create b", &ws, &widget("b", 1, "red")).await;
    t.patch(
        "update b",
        &format!("{ws}/b"),
        MERGE,
        &json!({"spec": {"replicas": 3}}),
    )
    .await;
    t.patch(
        "status of b",
        &format!("{ws}/b/status"),
        MERGE,
        &json!({"status": {"phase": "Ready"}}),
    )
    .await;
    t.patch(
        "label a",
        &format!("{ws}/a"),
        MERGE,
        &json!({"metadata": {"labels": {"x": "y"}}}),
    )
    .await;
    t.delete("delete a", &format!("{ws}/a")).await;
    let events = t
        .watch(
            "watch after the first create",
            &format!("{ws}?watch=true&resourceVersion={rv}"),
        )
        .await;
    t.note("events", events_summary(&events));
    let events = t
        .watch(
            "watch with a label selector",
            &format!("{ws}?watch=true&labelSelector=x%3Dy&resourceVersion={rv}"),
        )
        .await;
    t.note("selected events", events_summary(&events));
    t
}

#[tokio::test]
async fn watch_event_sequences() {
    run("watch_event_sequences", &[], watch).await;
}

/// The resourceVersion of a write's answer is the one its watch event carries (a controller tells the echoes
/// of its own writes by it), and a write that changes nothing makes no event. Resource versions differ between
/// servers, so the transcript notes which event matches which answer.
async fn write_versions(client: Client, ns: String) -> Transcript {
    let mut t = Transcript::new(client);
    let cms = configmaps(&ns);
    let ws = widgets(&ns);
    let version = |v: &Value| {
        v["metadata"]["resourceVersion"]
            .as_str()
            .unwrap_or_default()
            .to_string()
    };
    let first = t
        .post(
            "create a config map",
            &cms,
            &configmap("c", json!({"k": "v"})),
        )
        .await;
    let start = version(&first);
    // A watch of widgets starts from a widget's version (kube-apiserver's watch cache of a custom resource
    // starts when its definition is served, which may be after the config map's version).
    let anchor = t
        .post("create a first widget", &ws, &widget("first", 1, "red"))
        .await;
    let widgets_start = version(&anchor);
    let mut answers = Vec::new();
    let applied = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": "w"}});
    let c = format!("{cms}/c?fieldManager=diff&force=true");
    answers.push((
        "apply a change",
        version(&t.patch("apply a change", &c, APPLY, &applied).await),
    ));
    answers.push((
        "apply it again",
        version(&t.patch("apply it again", &c, APPLY, &applied).await),
    ));
    let created = t.post("create a widget", &ws, &widget("w", 1, "red")).await;
    answers.push(("create a widget", version(&created)));
    let status = t
        .patch(
            "write the widget's status",
            &format!("{ws}/w/status"),
            MERGE,
            &json!({"status": {"phase": "Ready"}}),
        )
        .await;
    answers.push(("write the widget's status", version(&status)));
    // Each watch below reads until a deletion.
    t.delete("delete the config map", &format!("{cms}/c")).await;
    t.delete("delete the widget", &format!("{ws}/w")).await;
    let mut events = t
        .watch(
            "config map events after the create",
            &format!("{cms}?watch=true&resourceVersion={start}"),
        )
        .await;
    events.extend(
        t.watch(
            "widget events after the create",
            &format!("{ws}?watch=true&resourceVersion={widgets_start}"),
        )
        .await,
    );
    let matches: Vec<Value> = events
        .iter()
        .map(|e| {
            let v = version(&e["object"]);
            let write = answers
                .iter()
                .find(|(_, a)| *a == v)
                .map(|(label, _)| *label);
            json!({"type": e["type"], "name": e["object"]["metadata"]["name"], "answer of": write})
        })
        .collect();
    t.note(
        "events by the write whose answer has their version",
        Value::Array(matches),
    );
    t.note(
        "the repeated apply answers the version of the first",
        json!(answers[0].1 == answers[1].1),
    );
    t
}

#[tokio::test]
async fn a_write_answers_the_version_its_event_carries() {
    run(
        "a_write_answers_the_version_its_event_carries",
        &[],
        write_versions,
    )
    .await;
}

/// A watch of a custom resource from a version older than the resource's watch cache (kube-apiserver starts
/// it at the first request to the resource, from the version it then lists) ends at once with one ERROR
/// event, 410 Expired: here from the version of the `default` namespace, written when the server started.
async fn watch_before_the_cache(client: Client, ns: String) -> Transcript {
    use http_body_util::BodyExt;

    let mut t = Transcript::new(client.clone());
    let ws = widgets(&ns);
    // Any request to widgets starts their cache, if no scenario did before.
    t.get("list widgets", &ws).await;
    let request = http::Request::get("/api/v1/namespaces/default")
        .body(Vec::new())
        .expect("a request");
    let default: Value = serde_json::from_str(
        &client
            .request_text(request)
            .await
            .expect("the default namespace"),
    )
    .expect("JSON");
    let old = default["metadata"]["resourceVersion"]
        .as_str()
        .expect("a resourceVersion")
        .to_string();
    let request = http::Request::get(format!("{ws}?watch=true&resourceVersion={old}"))
        .body(kube::client::Body::from(Vec::new()))
        .expect("a request");
    let response = client.send(request).await.expect("a watch");
    let status = response.status().as_u16();
    let body = tokio::time::timeout(
        std::time::Duration::from_secs(30),
        response.into_body().collect(),
    )
    .await
    .expect("the watch ends by itself")
    .expect("the watch's body")
    .to_bytes();
    let digits = regex::Regex::new("[0-9]+").expect("a regex");
    let events: Vec<Value> = body
        .split(|b| *b == b'\n')
        .filter(|line| !line.iter().all(u8::is_ascii_whitespace))
        .map(|line| {
            let e: Value = serde_json::from_slice(line).expect("a JSON event");
            let message = e["object"]["message"].as_str().unwrap_or_default();
            json!({
                "type": e["type"],
                "kind": e["object"]["kind"],
                "code": e["object"]["code"],
                "reason": e["object"]["reason"],
                "message": digits.replace_all(message, "N"),
                "message names the version asked": message.contains(&format!(": {old} (")),
            })
        })
        .collect();
    t.note(
        "a watch from the default namespace's version",
        json!({"status": status, "events": events}),
    );
    t
}

#[tokio::test]
async fn a_watch_from_before_a_custom_resources_cache_is_expired() {
    run(
        "a_watch_from_before_a_custom_resources_cache_is_expired",
        &[],
        watch_before_the_cache,
    )
    .await;
}
