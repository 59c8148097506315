//! API priority and fairness as a client observes it: the default FlowSchemas and PriorityLevelConfigurations
//! (listed, with the Dangling condition of every FlowSchema), a FlowSchema and a priority level the scenario
//! creates, which FlowSchema and priority level the `X-Kubernetes-PF-FlowSchema-UID` and
//! `X-Kubernetes-PF-PriorityLevel-UID` headers of answers to impersonated and plain requests name (resource
//! and non-resource, matching and not), a FlowSchema whose priority level is missing (Dangling), the nominal
//! limit of the new level on `/metrics`, and an impersonated group without a user (400).

use std::time::Duration;

use http_body_util::BodyExt;
use kube::Client;
use serde_json::{Value, json};

use crate::deviations::{BUILTIN_MANAGED_FIELDS_SHAPE, EMPTY_BUILTIN_STATUS};
use crate::support::{Transcript, run};

const FC: &str = "/apis/flowcontrol.apiserver.k8s.io/v1";

/// Request headers by name.
type Headers<'a> = Vec<(&'a str, &'a str)>;

/// What a client sees of a flowcontrol object: name, annotations, spec and status, managedFields aside.
/// An empty status (`status: {}` on kube-apiserver, absent in memory: `EMPTY_BUILTIN_STATUS`) is left out.
fn seen(obj: &Value) -> Value {
    let mut seen = json!({
        "name": obj["metadata"]["name"],
        "annotations": obj["metadata"]["annotations"],
        "spec": obj["spec"],
    });
    if obj["status"].as_object().is_some_and(|s| !s.is_empty()) {
        seen["status"] = obj["status"].clone();
    }
    seen
}

async fn get(client: &Client, path: &str) -> Value {
    client
        .request(
            http::Request::get(path)
                .body(Vec::new())
                .expect("a request"),
        )
        .await
        .unwrap_or_else(|e| panic!("GET {path}: {e}"))
}

/// The names of the FlowSchema and the priority level an answer's headers name (by uid), and its status.
async fn classified(client: &Client, path: &str, headers: &[(&str, &str)]) -> Value {
    let mut request = http::Request::get(path);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let request = request
        .body(kube::client::Body::from(Vec::new()))
        .expect("a request");
    let response = client.send(request).await.expect("an answer");
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string()
    };
    let (fs, pl) = (
        header("X-Kubernetes-PF-FlowSchema-UID"),
        header("X-Kubernetes-PF-PriorityLevel-UID"),
    );
    let name_of = async |plural: &str, uid: &str| -> Value {
        let list: Value = client
            .request(
                http::Request::get(format!("{FC}/{plural}"))
                    .body(Vec::new())
                    .expect("a request"),
            )
            .await
            .expect("a list");
        list["items"]
            .as_array()
            .and_then(|items| {
                items
                    .iter()
                    .find(|i| i["metadata"]["uid"] == uid)
                    .map(|i| i["metadata"]["name"].clone())
            })
            .unwrap_or(json!(format!("no object with uid {uid:?}")))
    };
    json!({
        "flowSchema": name_of("flowschemas", &fs).await,
        "priorityLevel": name_of("prioritylevelconfigurations", &pl).await,
    })
}

/// Polls a FlowSchema until its Dangling condition is `want` (kube-apiserver writes it asynchronously).
async fn dangling(t: &mut Transcript, client: &Client, label: &str, name: &str, want: &str) {
    let path = format!("{FC}/flowschemas/{name}");
    for _ in 0..100 {
        let fs: Value = client
            .request(
                http::Request::get(&path)
                    .body(Vec::new())
                    .expect("a request"),
            )
            .await
            .expect("the FlowSchema");
        let conditions = fs["status"]["conditions"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if conditions
            .iter()
            .any(|c| c["type"] == "Dangling" && c["status"] == want)
        {
            t.note(label, fs["status"].clone());
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    t.note(label, json!("never reached"));
}

/// The `/metrics` line of a priority level's nominal limit, polled until kube-apiserver has it.
async fn nominal_limit(client: &Client, level: &str) -> Value {
    let wanted = format!("apiserver_flowcontrol_nominal_limit_seats{{priority_level=\"{level}\"}}");
    for _ in 0..100 {
        let request = http::Request::get("/metrics")
            .body(kube::client::Body::from(Vec::new()))
            .expect("a request");
        let response = client.send(request).await.expect("an answer");
        let bytes = response
            .into_body()
            .collect()
            .await
            .expect("a body")
            .to_bytes();
        let text = String::from_utf8_lossy(&bytes);
        if let Some(line) = text.lines().find(|l| l.starts_with(&wanted)) {
            return json!(line);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    json!("no such line")
}

async fn scenario(client: Client, ns: String) -> Transcript {
    let mut t = Transcript::new(client.clone());
    for plural in ["flowschemas", "prioritylevelconfigurations"] {
        let list = get(&client, &format!("{FC}/{plural}")).await;
        let items: Vec<Value> = list["items"]
            .as_array()
            .map(|items| items.iter().map(seen).collect())
            .unwrap_or_default();
        t.note(&format!("default {plural}"), Value::Array(items));
    }

    let level = format!("pl-{ns}");
    let schema = format!("fs-{ns}");
    let user = format!("noxu-{ns}");
    t.post(
        "priority level",
        &format!("{FC}/prioritylevelconfigurations"),
        &json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "PriorityLevelConfiguration",
            "metadata": {"name": level},
            "spec": {"type": "Limited", "limited": {"nominalConcurrencyShares": 1,
                "limitResponse": {"type": "Reject"}}}}),
    )
    .await;
    t.post(
        "flow schema",
        &format!("{FC}/flowschemas"),
        &json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
            "metadata": {"name": schema},
            "spec": {"matchingPrecedence": 1000, "priorityLevelConfiguration": {"name": level},
                "distinguisherMethod": {"type": "ByUser"},
                "rules": [{"subjects": [{"kind": "User", "user": {"name": user}}],
                    "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
                    "resourceRules": [{"verbs": ["get", "list"], "apiGroups": [""],
                        "resources": ["configmaps"], "namespaces": [ns]}]}]}}),
    )
    .await;
    dangling(&mut t, &client, "flow schema status", &schema, "False").await;
    t.note("nominal limit", nominal_limit(&client, &level).await);

    let authenticated = "system:authenticated";
    let configmaps = format!("/api/v1/namespaces/{ns}/configmaps");
    let cases: [(&str, &str, Headers); 7] = [
        ("the requester", "/version", vec![]),
        (
            "a matching user",
            "/version",
            vec![
                ("Impersonate-User", &user),
                ("Impersonate-Group", authenticated),
            ],
        ),
        (
            "a matching user, no group",
            "/healthz",
            vec![("Impersonate-User", &user)],
        ),
        (
            "a matching user's list",
            &configmaps,
            vec![("Impersonate-User", &user)],
        ),
        (
            "a matching user's list elsewhere",
            "/api/v1/namespaces/default/configmaps",
            vec![("Impersonate-User", &user)],
        ),
        (
            "another user",
            "/version",
            vec![
                ("Impersonate-User", "foo"),
                ("Impersonate-Group", authenticated),
            ],
        ),
        (
            "an anonymous probe",
            "/healthz",
            vec![("Impersonate-User", "system:anonymous")],
        ),
    ];
    for (label, path, headers) in cases {
        t.note(label, classified(&client, path, &headers).await);
    }
    let request = http::Request::get("/version")
        .header("Impersonate-Group", authenticated)
        .body(kube::client::Body::from(Vec::new()))
        .expect("a request");
    let response = client.send(request).await.expect("an answer");
    let status = response.status().as_u16();
    let bytes = response
        .into_body()
        .collect()
        .await
        .expect("a body")
        .to_bytes();
    let body: Value = serde_json::from_slice(&bytes).unwrap_or(json!(null));
    t.note(
        "a group without a user",
        json!({"code": status, "body": body}),
    );

    let orphan = format!("orphan-{ns}");
    t.post(
        "flow schema without its level",
        &format!("{FC}/flowschemas"),
        &json!({"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
            "metadata": {"name": orphan},
            "spec": {"matchingPrecedence": 999, "priorityLevelConfiguration": {"name": format!("none-{ns}")},
                "rules": [{"subjects": [{"kind": "User", "user": {"name": user}}],
                    "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}]}]}}),
    )
    .await;
    dangling(&mut t, &client, "dangling schema status", &orphan, "True").await;
    t.note(
        "a dangling schema is passed over",
        classified(&client, "/version", &[("Impersonate-User", &user)]).await,
    );
    for (label, plural, name) in [
        ("delete the dangling schema", "flowschemas", &orphan),
        ("delete the flow schema", "flowschemas", &schema),
        (
            "delete the priority level",
            "prioritylevelconfigurations",
            &level,
        ),
    ] {
        t.delete(label, &format!("{FC}/{plural}/{name}")).await;
    }
    t
}

#[tokio::test]
async fn requests_are_classified_by_flow_schemas_alike() {
    run(
        "requests_are_classified_by_flow_schemas_alike",
        &[EMPTY_BUILTIN_STATUS, BUILTIN_MANAGED_FIELDS_SHAPE],
        scenario,
    )
    .await;
}
