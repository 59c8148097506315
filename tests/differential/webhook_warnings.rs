//! Warnings of admission webhooks on both servers, written by webhooks whose answers the scenario writes
//! (`hook_server.rs`): two mutating webhooks (`m-warn` warns, `m-deny` refuses some objects with
//! warnings) and two validating ones (`v-warn` warns, `v-deny` refuses some objects with warnings, after a
//! pause, so that on kube-apiserver, which calls validating webhooks side by side, `v-warn` answers first).
//! Each ConfigMap's `case` label picks what the webhooks answer:
//!
//! - `ok`: every webhook allows, the warnings of all come with the created object, a repeated one once;
//! - `mdeny`: the second mutating webhook refuses: its warnings and the first one's come with the refusal,
//!   the validating webhooks are not called;
//! - `vdeny`: a validating webhook refuses: the warnings of every webhook come with the refusal;
//! - `bothdeny`: both validating webhooks refuse: both are called, the first refusal is the answer;
//! - `long`: more than 4096 characters of warnings: every warning is cut to 256 characters; quotes,
//!   backslashes and non-ASCII text are written escaped, a warning with a control character is dropped.
//!
//! Which webhooks each request reached is noted after it (sorted: validating webhooks are called side by
//! side).

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::Client;
use kube::api::{Api, PostParams};
use serde_json::{Value, json};

use crate::hook_server::{DELAY, HookServer, uninstall};
use crate::support::{Transcript, configmap, configmaps, run};

/// What the webhook at `path` answers for an object of `case`.
fn answer(path: &str, request: &Value) -> Value {
    let case = request["object"]["metadata"]["labels"]["case"]
        .as_str()
        .unwrap_or_default();
    let allow = |warnings: &[&str]| json!({"allowed": true, "warnings": warnings});
    let deny = |message: &str, code: u16, warnings: &[&str]| json!({"allowed": false, "status": {"message": message, "code": code}, "warnings": warnings});
    match (path, case) {
        ("/m-deny", "mprobe") => deny("probed", 409, &[]),
        ("/v-deny", "vprobe") => deny("probed", 400, &[]),
        ("/m-warn", "long") => json!({"allowed": true, "warnings": [
            "a".repeat(3000), "a \"quoted\" \\ text", "ünïcödé ✓", "a bell \u{7} rings", "",
        ]}),
        ("/v-warn", "long") => {
            json!({"allowed": true, "warnings": ["b".repeat(1200), "after the cut"]})
        }
        ("/m-warn", _) => allow(&["the mutating webhook warns", "said twice"]),
        ("/m-deny", "mdeny") => deny(
            "no from the mutating webhook",
            403,
            &["the mutating webhook refuses", "said twice"],
        ),
        ("/m-deny", _) => allow(&["said twice"]),
        ("/v-warn", "bothdeny") => deny("no from v-warn", 422, &["v-warn refuses"]),
        ("/v-warn", _) => allow(&["the validating webhook warns"]),
        ("/v-deny", "vdeny" | "bothdeny") => {
            let mut response = deny("no from v-deny", 400, &["the validating webhook refuses"]);
            response[DELAY] = json!(500);
            response
        }
        _ => allow(&[]),
    }
}

fn hooks(server: &HookServer, ns: &str, names: &[&str], mutating: bool) -> Vec<Value> {
    names
        .iter()
        .map(|name| {
            let mut hook = json!({
                "name": format!("{name}.warnings.example.dev"),
                "clientConfig": server.client_config(&format!("/{name}")),
                "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"],
                           "operations": ["CREATE"], "scope": "Namespaced"}],
                "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": ns}},
                "objectSelector": {"matchExpressions": [{"key": "case", "operator": "Exists"}]},
                "failurePolicy": "Fail",
                "sideEffects": "None",
                "admissionReviewVersions": ["v1"],
                "timeoutSeconds": 10,
            });
            if mutating {
                hook["reinvocationPolicy"] = json!("Never");
            }
            hook
        })
        .collect()
}

fn labelled(name: &str, case: &str) -> Value {
    let mut cm = configmap(name, json!({"k": "v"}));
    cm["metadata"]["labels"] = json!({"case": case});
    cm
}

/// Installs the configurations for `ns` and waits (bounded) until both are in force.
async fn install(client: &Client, server: &HookServer, ns: &str) {
    let name = format!("warnings-{ns}");
    let m: MutatingWebhookConfiguration = serde_json::from_value(json!({
        "metadata": {"name": name},
        "webhooks": hooks(server, ns, &["m-warn", "m-deny"], true),
    }))
    .expect("a configuration");
    let v: ValidatingWebhookConfiguration = serde_json::from_value(json!({
        "metadata": {"name": name},
        "webhooks": hooks(server, ns, &["v-warn", "v-deny"], false),
    }))
    .expect("a configuration");
    Api::<MutatingWebhookConfiguration>::all(client.clone())
        .create(&PostParams::default(), &m)
        .await
        .expect("the mutating configuration is created");
    Api::<ValidatingWebhookConfiguration>::all(client.clone())
        .create(&PostParams::default(), &v)
        .await
        .expect("the validating configuration is created");
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    let dry = PostParams {
        dry_run: true,
        ..Default::default()
    };
    let probe = |case: &str| -> ConfigMap {
        serde_json::from_value(labelled(case, case)).expect("a ConfigMap")
    };
    for _ in 0..400 {
        let code = |r: Result<ConfigMap, kube::Error>| match r {
            Err(kube::Error::Api(s)) => s.code,
            _ => 0,
        };
        let m = code(cms.create(&dry, &probe("mprobe")).await);
        let v = code(cms.create(&dry, &probe("vprobe")).await);
        if m == 409 && v == 400 {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the webhooks are not in force");
}

async fn scenario(client: Client, ns: String) -> Transcript {
    let server = HookServer::start(Arc::new(answer)).await;
    install(&client, &server, &ns).await;
    server.take();
    let mut t = Transcript::new(client.clone()).with_warnings();
    let cms = configmaps(&ns);
    for (name, case, label) in [
        ("ok", "ok", "every webhook allows with warnings"),
        ("mdeny", "mdeny", "a mutating webhook refuses with warnings"),
        (
            "vdeny",
            "vdeny",
            "a validating webhook refuses with warnings",
        ),
        ("both", "bothdeny", "both validating webhooks refuse"),
        (
            "long",
            "long",
            "long warnings are cut, odd ones escaped or dropped",
        ),
        ("dry", "vdeny", "a dry run refused with warnings"),
    ] {
        let path = if name == "dry" {
            format!("{cms}?dryRun=All")
        } else {
            cms.clone()
        };
        t.post(label, &path, &labelled(name, case)).await;
        let mut called: Vec<String> = server.take().into_iter().map(|r| r.path).collect();
        called.sort();
        t.note(&format!("{label}: the webhooks called"), json!(called));
    }
    uninstall(&client, &format!("warnings-{ns}")).await;
    t
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_warnings() {
    run("webhook_warnings", &[], scenario).await;
}
