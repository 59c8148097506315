//! Reinvocation of mutating webhooks (`reinvocationPolicy: IfNeeded`) on both servers, with webhooks whose
//! answers the scenario writes (`hook_server.rs`); each request's ConfigMap picks, by its `case` label,
//! which webhooks of one configuration it meets (in this order):
//!
//! - `first-if` (`IfNeeded`) or `first-never` (`Never`): sets `data.first` to the keys of `data` it saw;
//! - `second` (`Never`) or `second-if` (`IfNeeded`): adds `data.second` when it is absent;
//! - `third` (`Never`, case `chain`): adds `data.third` when it is absent;
//! - `early` and `late` (`IfNeeded`, before and after `second`, only for objects labelled `late: yes`,
//!   which `second` adds in case `label`): each adds its own key.
//!
//! The cases: `ifneeded` (first is called again, and sees second's key), `never` (it is not), `unchanged`
//! (second's patch leaves the object as it was: no second round), `self` (only first changes the object:
//! no second round), `chain` (first and second are called again, in order, once each, although first
//! changes the object again), `label` (`early` did not run in the first round, so it is not called in the
//! second although it matches then; `late`, which ran after `second`, is due once `first` changes the object
//! again), `denyagain` (first refuses when called again: its warnings of both
//! calls come with the refusal). Which webhooks each request reached, in order, is noted after it.
//!
//! And a mutating webhook on deletes (`deleter`): a patch is refused with a 500 (there is no object to
//! patch), an empty one is no patch.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::admissionregistration::v1::MutatingWebhookConfiguration;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::Client;
use kube::api::{Api, PostParams};
use serde_json::{Value, json};

use crate::hook_server::{HookServer, uninstall, with_patch};
use crate::support::{Transcript, configmap, configmaps, run};

/// The webhooks: name (also the path), reinvocation policy, the cases that meet it.
const HOOKS: &[(&str, &str, &[&str])] = &[
    ("probe", "Never", &["probe"]),
    (
        "first-if",
        "IfNeeded",
        &[
            "ifneeded",
            "unchanged",
            "self",
            "chain",
            "label",
            "denyagain",
        ],
    ),
    ("first-never", "Never", &["never"]),
    ("early", "IfNeeded", &["label"]),
    (
        "second",
        "Never",
        &[
            "ifneeded",
            "never",
            "unchanged",
            "self",
            "label",
            "denyagain",
        ],
    ),
    ("second-if", "IfNeeded", &["chain"]),
    ("third", "Never", &["chain"]),
    ("late", "IfNeeded", &["label"]),
    ("deleter", "Never", &["patchdelete", "emptydelete"]),
];

/// What the webhook at `path` answers.
fn answer(path: &str, request: &Value) -> Value {
    let object = &request["object"];
    let case = object["metadata"]["labels"]["case"]
        .as_str()
        .unwrap_or_default();
    let data = object["data"].as_object().cloned().unwrap_or_default();
    let allow = json!({"allowed": true});
    let add = |path: &str, value: Value| json!([{"op": "add", "path": path, "value": value}]);
    match path {
        "/probe" => json!({"allowed": false, "status": {"message": "probed", "code": 409}}),
        "/first-if" | "/first-never" => {
            if case == "denyagain" && data.contains_key("second") {
                return json!({"allowed": false, "warnings": ["first refuses"],
                              "status": {"message": "first refuses the second time", "code": 403}});
            }
            let mut keys: Vec<&str> = data.keys().map(String::as_str).collect();
            keys.sort();
            let mut response = with_patch(allow, &add("/data/first", json!(keys.join(","))));
            if case == "denyagain" {
                response["warnings"] = json!(["first warns"]);
            }
            response
        }
        "/second" | "/second-if" => match case {
            "unchanged" => with_patch(
                allow,
                &json!([{"op": "replace", "path": "/data/k", "value": "v"}]),
            ),
            "self" => allow,
            _ if data.contains_key("second") => allow,
            "label" => with_patch(
                allow,
                &json!([
                    {"op": "add", "path": "/data/second", "value": "yes"},
                    {"op": "add", "path": "/metadata/labels/late", "value": "yes"},
                ]),
            ),
            _ => with_patch(allow, &add("/data/second", json!("yes"))),
        },
        "/third" if !data.contains_key("third") => {
            with_patch(allow, &add("/data/third", json!("yes")))
        }
        // On a delete there is no object: only the old one carries the case.
        "/deleter" => match request["oldObject"]["metadata"]["labels"]["case"].as_str() {
            Some("patchdelete") => with_patch(allow, &add("/data/deleted", json!("yes"))),
            _ => with_patch(allow, &json!([])),
        },
        "/late" | "/early" => with_patch(
            allow,
            &add(path.replacen('/', "/data/", 1).as_str(), json!("yes")),
        ),
        _ => allow,
    }
}

/// Installs the configuration for `ns` and waits (bounded) until it is in force.
async fn install(client: &Client, server: &HookServer, ns: &str) {
    let webhooks: Vec<Value> = HOOKS
        .iter()
        .map(|(name, policy, cases)| {
            let mut selector = json!({"matchExpressions": [
                {"key": "case", "operator": "In", "values": cases},
            ]});
            if *name == "late" || *name == "early" {
                selector["matchLabels"] = json!({"late": "yes"});
            }
            json!({
                "name": format!("{name}.reinvocation.example.dev"),
                "clientConfig": server.client_config(&format!("/{name}")),
                "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"],
                           "operations": [if *name == "deleter" { "DELETE" } else { "CREATE" }],
                           "scope": "Namespaced"}],
                "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": ns}},
                "objectSelector": selector,
                "failurePolicy": "Fail",
                "sideEffects": "None",
                "admissionReviewVersions": ["v1"],
                "timeoutSeconds": 10,
                "reinvocationPolicy": policy,
            })
        })
        .collect();
    let m: MutatingWebhookConfiguration = serde_json::from_value(json!({
        "metadata": {"name": format!("reinvocation-{ns}")},
        "webhooks": webhooks,
    }))
    .expect("a configuration");
    Api::<MutatingWebhookConfiguration>::all(client.clone())
        .create(&PostParams::default(), &m)
        .await
        .expect("the mutating configuration is created");
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    let dry = PostParams {
        dry_run: true,
        ..Default::default()
    };
    let probe: ConfigMap = serde_json::from_value(labelled("probe", "probe")).expect("a ConfigMap");
    for _ in 0..400 {
        if matches!(cms.create(&dry, &probe).await, Err(kube::Error::Api(ref s)) if s.code == 409) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the webhooks are not in force");
}

fn labelled(name: &str, case: &str) -> Value {
    let mut cm = configmap(name, json!({"k": "v"}));
    cm["metadata"]["labels"] = json!({"case": case});
    cm
}

async fn scenario(client: Client, ns: String) -> Transcript {
    let server = HookServer::start(Arc::new(answer)).await;
    install(&client, &server, &ns).await;
    server.take();
    let mut t = Transcript::new(client.clone()).with_warnings();
    let cms = configmaps(&ns);
    for case in [
        "ifneeded",
        "never",
        "unchanged",
        "self",
        "chain",
        "label",
        "denyagain",
    ] {
        t.post(case, &cms, &labelled(case, case)).await;
        let called: Vec<String> = server.take().into_iter().map(|r| r.path).collect();
        t.note(&format!("{case}: the webhooks called"), json!(called));
    }
    for case in ["patchdelete", "emptydelete"] {
        t.post(&format!("{case} is created"), &cms, &labelled(case, case))
            .await;
        t.delete(&format!("{case} is deleted"), &format!("{cms}/{case}"))
            .await;
        let called: Vec<String> = server.take().into_iter().map(|r| r.path).collect();
        t.note(&format!("{case}: the webhooks called"), json!(called));
    }
    t.get("the stored objects", &cms).await;
    uninstall(&client, &format!("reinvocation-{ns}")).await;
    t
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_reinvocation() {
    run("webhook_reinvocation", &[], scenario).await;
}
