//! Admission webhooks' `matchConditions` on both servers: a validating and a mutating configuration (one
//! webhook per case, each picked by the object's `case` label) whose conditions are true, false, or fail to
//! evaluate (a missing key, an operator without an overload, a null object) under `failurePolicy: Fail`
//! and `Ignore` (a mutating one on a delete too), alone and mixed with true and false ones; conditions read
//! `object`, `oldObject`, `request` (operation, userInfo, namespace, name (also a generated one), kind,
//! resource, dryRun, options; not the user's name, which is envtest's `admin` and the in-memory server's
//! `system:admin`), `namespaceObject` (null for webhooks) and `authorizer` (the client may do everything on
//! both servers) on create, update and delete.
//! The webhook denies whatever reaches it, and the mutating one adds `data.mutated`, so each answer shows
//! whether the webhook was called.
//!
//! A condition selecting a field of a delete's null `object` fails with `no such key` on both servers (the
//! in-memory server binds a variable the expression only selects from to an empty map, as the Rust `cel`
//! crate selects `false` from null).

use std::time::Duration;

use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::Client;
use kube::api::{Api, PostParams};
use kubewright::admission::{Certificates, ClientConfig, Verdict, WebhookServer, Webhooks};
use serde_json::{Value, json};

use crate::hook_server::uninstall;
use crate::support::{Transcript, configmap, configmaps, run};

/// The webhooks: name, operations, failure policy, conditions. Each is picked by the label `case=NAME`.
const VALIDATING: &[(&str, &str, &str, &[&str])] = &[
    ("probe", "CREATE", "Fail", &["true"]),
    (
        "create-true",
        "CREATE",
        "Fail",
        &[
            "object.data.k == 'v'",
            "request.operation == 'CREATE'",
            "'system:masters' in request.userInfo.groups",
            "request.namespace.startsWith('envtest-')",
            "request.kind.kind == 'ConfigMap' && request.resource.resource == 'configmaps'",
            "request.name == object.metadata.name",
            "oldObject == null",
            "!request.dryRun",
        ],
    ),
    (
        "error-fail",
        "CREATE",
        "Fail",
        &["object.data.missing == 'x'"],
    ),
    (
        "error-ignore",
        "CREATE",
        "Ignore",
        &["object.data.missing == 'x'"],
    ),
    (
        "error-then-false",
        "CREATE",
        "Fail",
        &["object.data.missing == 'x'", "object.data.k == 'nope'"],
    ),
    (
        "error-then-true",
        "CREATE",
        "Fail",
        &["object.data.missing == 'x'", "object.data.k == 'v'"],
    ),
    (
        "two-errors",
        "CREATE",
        "Fail",
        &["object.data.a == 'x'", "object.spec.b == 'y'"],
    ),
    ("no-overload", "CREATE", "Fail", &["object.data.k + 1 == 2"]),
    (
        "authorized",
        "CREATE",
        "Fail",
        &[
            "authorizer.group('').resource('configmaps').namespace(request.namespace).check('create').allowed()",
            "authorizer.requestResource.check('create').allowed()",
            "!authorizer.path('/healthz').check('get').errored()",
        ],
    ),
    (
        "namespace-object",
        "CREATE",
        "Fail",
        &["namespaceObject == null"],
    ),
    (
        "options",
        "CREATE",
        "Fail",
        &[
            "request.options.kind == 'CreateOptions' && request.options.apiVersion == 'meta.k8s.io/v1'",
        ],
    ),
    (
        "user",
        "CREATE",
        "Fail",
        &[
            "request.userInfo.username != '' && !has(request.userInfo.uid) && 'system:authenticated' in request.userInfo.groups",
        ],
    ),
    (
        "not-authorized",
        "CREATE",
        "Fail",
        &["!authorizer.requestResource.check('create').allowed()"],
    ),
    (
        "update",
        "UPDATE",
        "Fail",
        &[
            "oldObject.data.k != object.data.k",
            "request.operation == 'UPDATE'",
        ],
    ),
    (
        "delete",
        "DELETE",
        "Fail",
        &[
            "object == null",
            "oldObject.metadata.name == 'doomed'",
            "request.operation == 'DELETE'",
        ],
    ),
    (
        "delete-null",
        "DELETE",
        "Fail",
        &["object.metadata.name == 'x'"],
    ),
    (
        "delete-mixed",
        "DELETE",
        "Fail",
        &["object == null || object.metadata.name == 'x'"],
    ),
];

const MUTATING: &[(&str, &str, &str, &[&str])] = &[
    ("mprobe", "CREATE", "Fail", &["true"]),
    ("mutate-true", "CREATE", "Fail", &["object.data.k == 'v'"]),
    (
        "mutate-false",
        "CREATE",
        "Fail",
        &["object.data.k == 'nope'"],
    ),
    (
        "mutate-error",
        "CREATE",
        "Fail",
        &["object.data.missing == 'x'"],
    ),
    (
        "mutate-delete",
        "DELETE",
        "Fail",
        &["oldObject.data.missing == 'x'"],
    ),
    (
        "mutate-error-ignore",
        "CREATE",
        "Ignore",
        &["object.data.missing == 'x'"],
    ),
];

fn webhooks(
    cases: &[(&str, &str, &str, &[&str])],
    client_config: &Value,
    ns: &str,
    mutating: bool,
) -> Vec<Value> {
    cases
        .iter()
        .map(|(case, operation, policy, conditions)| {
            let conditions: Vec<Value> = conditions
                .iter()
                .enumerate()
                .map(|(i, e)| json!({"name": format!("c{i}"), "expression": e}))
                .collect();
            let mut hook = json!({
                "name": format!("{case}.conditions.example.dev"),
                "clientConfig": client_config,
                "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"],
                           "operations": [operation], "scope": "Namespaced"}],
                "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": ns}},
                "objectSelector": {"matchLabels": {"case": case}},
                "failurePolicy": policy,
                "sideEffects": "None",
                "admissionReviewVersions": ["v1"],
                "timeoutSeconds": 10,
                "matchConditions": conditions,
            });
            if mutating {
                hook["reinvocationPolicy"] = json!("Never");
            }
            hook
        })
        .collect()
}

fn labelled(name: &str, case: &str, data: Value) -> Value {
    let mut cm = configmap(name, data);
    cm["metadata"]["labels"] = json!({"case": case});
    cm
}

/// Serves a webhook that denies every ConfigMap write and delete it sees and adds `data.mutated`, installs
/// the two configurations for `ns` and waits (bounded) until both are in force.
async fn install(client: &Client, ns: &str) -> tokio::task::JoinHandle<()> {
    let hooks = Webhooks::<ConfigMap>::new()
        .validate(|_| Verdict::deny("the webhook was called"))
        .validate_deletes()
        .default(|cm| {
            cm.data
                .get_or_insert_with(Default::default)
                .insert("mutated".into(), "yes".into());
        });
    let server = WebhookServer::new(Certificates::generate(["127.0.0.1"]).expect("certificates"))
        .kind(hooks);
    let bound = server
        .clone()
        .bind("127.0.0.1:0".parse().expect("an address"))
        .await
        .expect("the webhook server binds");
    let url = format!("https://127.0.0.1:{}", bound.local_addr().port());
    let serving = tokio::spawn(bound.serve());
    let reach = ClientConfig::Url(url);
    let validating = server
        .validating_configuration("x", &reach)
        .expect("a validating configuration");
    let mutating = server
        .mutating_configuration("x", &reach)
        .expect("a mutating configuration");
    let client_config = |c: Value| c["webhooks"][0]["clientConfig"].clone();
    let validating = client_config(serde_json::to_value(validating).expect("JSON"));
    let mutating = client_config(serde_json::to_value(mutating).expect("JSON"));
    let v: ValidatingWebhookConfiguration = serde_json::from_value(json!({
        "metadata": {"name": format!("conditions-{ns}")},
        "webhooks": webhooks(VALIDATING, &validating, ns, false),
    }))
    .expect("a configuration");
    let m: MutatingWebhookConfiguration = serde_json::from_value(json!({
        "metadata": {"name": format!("conditions-{ns}")},
        "webhooks": webhooks(MUTATING, &mutating, ns, true),
    }))
    .expect("a configuration");
    Api::<ValidatingWebhookConfiguration>::all(client.clone())
        .create(&PostParams::default(), &v)
        .await
        .expect("the validating configuration is created");
    Api::<MutatingWebhookConfiguration>::all(client.clone())
        .create(&PostParams::default(), &m)
        .await
        .expect("the mutating configuration is created");
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    let dry = PostParams {
        dry_run: true,
        ..Default::default()
    };
    let probe: ConfigMap =
        serde_json::from_value(labelled("probe", "probe", json!({}))).expect("a ConfigMap");
    let mprobe: ConfigMap =
        serde_json::from_value(labelled("mprobe", "mprobe", json!({}))).expect("a ConfigMap");
    for _ in 0..400 {
        let denied =
            matches!(cms.create(&dry, &probe).await, Err(kube::Error::Api(ref s)) if s.code == 400);
        let mutated = cms
            .create(&dry, &mprobe)
            .await
            .is_ok_and(|cm| cm.data.as_ref().is_some_and(|d| d.contains_key("mutated")));
        if denied && mutated {
            return serving;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the webhooks are not in force");
}

async fn scenario(client: Client, ns: String) -> Transcript {
    let serving = install(&client, &ns).await;
    let mut t = Transcript::new(client.clone());
    let cms = configmaps(&ns);
    let v = json!({"k": "v"});
    t.post(
        "true conditions call the webhook",
        &cms,
        &labelled("a", "create-true", v.clone()),
    )
    .await;
    t.post(
        "a false condition skips it",
        &cms,
        &labelled("b", "create-true", json!({"k": "w"})),
    )
    .await;
    t.post(
        "a dry run makes request.dryRun true",
        &format!("{cms}?dryRun=All"),
        &labelled("c", "create-true", v.clone()),
    )
    .await;
    t.post(
        "a missing key under Fail",
        &cms,
        &labelled("d", "error-fail", v.clone()),
    )
    .await;
    let mut generated = labelled("", "create-true", v.clone());
    generated["metadata"] = json!({"generateName": "gen-", "labels": {"case": "create-true"}});
    t.post("request.name of a generated name", &cms, &generated)
        .await;
    t.post(
        "the key present and different: false",
        &cms,
        &labelled("e", "error-fail", json!({"missing": "y"})),
    )
    .await;
    t.post(
        "the key present and equal: the webhook is called",
        &cms,
        &labelled("f", "error-fail", json!({"missing": "x"})),
    )
    .await;
    t.post(
        "a missing key under Ignore",
        &cms,
        &labelled("g", "error-ignore", v.clone()),
    )
    .await;
    t.post(
        "an error and a false condition",
        &cms,
        &labelled("h", "error-then-false", v.clone()),
    )
    .await;
    t.post(
        "an error and a true condition",
        &cms,
        &labelled("i", "error-then-true", v.clone()),
    )
    .await;
    t.post("two errors", &cms, &labelled("j", "two-errors", v.clone()))
        .await;
    t.post(
        "no overload for string + int",
        &cms,
        &labelled("k", "no-overload", v.clone()),
    )
    .await;
    t.post(
        "authorizer checks that are allowed",
        &cms,
        &labelled("az1", "authorized", v.clone()),
    )
    .await;
    for case in ["namespace-object", "options", "user"] {
        t.post(
            &format!("a condition on {case}"),
            &cms,
            &labelled(case, case, v.clone()),
        )
        .await;
    }
    t.post(
        "an authorizer check negated",
        &cms,
        &labelled("az2", "not-authorized", v.clone()),
    )
    .await;
    t.post(
        "a mutating webhook whose conditions hold",
        &cms,
        &labelled("m1", "mutate-true", v.clone()),
    )
    .await;
    t.post(
        "a mutating webhook whose condition is false",
        &cms,
        &labelled("m2", "mutate-false", v.clone()),
    )
    .await;
    t.post(
        "a mutating webhook whose condition fails under Fail",
        &cms,
        &labelled("m3", "mutate-error", v.clone()),
    )
    .await;
    t.post(
        "a mutating webhook whose condition fails under Ignore",
        &cms,
        &labelled("m4", "mutate-error-ignore", v.clone()),
    )
    .await;
    t.post(
        "an object whose delete meets a mutating webhook",
        &cms,
        &labelled("md", "mutate-delete", v.clone()),
    )
    .await;
    t.delete(
        "a mutating webhook's condition fails on a delete",
        &format!("{cms}/md"),
    )
    .await;
    let created = t
        .post(
            "an object to update",
            &cms,
            &labelled("u", "update", v.clone()),
        )
        .await;
    let mut same = created.clone();
    same["data"]["other"] = json!("1");
    t.put(
        "an update that keeps data.k: oldObject.data.k == object.data.k",
        &format!("{cms}/u"),
        &same,
    )
    .await;
    let mut changed = created.clone();
    changed["data"]["k"] = json!("changed");
    t.put(
        "an update that changes data.k",
        &format!("{cms}/u"),
        &changed,
    )
    .await;
    for name in ["doomed", "spared"] {
        t.post(
            &format!("{name} is created"),
            &cms,
            &labelled(name, "delete", json!({})),
        )
        .await;
        t.delete(
            &format!("deleting {name}: object is null on delete"),
            &format!("{cms}/{name}"),
        )
        .await;
    }
    t.post(
        "an object whose delete reads object",
        &cms,
        &labelled("nul", "delete-null", json!({})),
    )
    .await;
    t.delete(
        "a condition that selects on the null object of a delete",
        &format!("{cms}/nul"),
    )
    .await;
    t.post(
        "an object whose delete compares object with null",
        &cms,
        &labelled("mixed", "delete-mixed", json!({})),
    )
    .await;
    t.delete(
        "a condition that compares the null object and selects from it",
        &format!("{cms}/mixed"),
    )
    .await;
    serving.abort();
    uninstall(&client, &format!("conditions-{ns}")).await;
    t
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_match_conditions() {
    run("webhook_match_conditions", &[], scenario).await;
}
