//! Webhook configurations kube-apiserver refuses, and the defaults it stores, on both servers: minimal
//! validating and mutating configurations (every default of the v1 API; empty lists, selectors and
//! `caBundle` as Go's `omitempty` stores them), then one configuration per
//! rule of `admissionregistration` validation (names, rules with their wildcards, policies, side effects,
//! timeouts, review versions, label selectors, client configs, reinvocation, match conditions that are
//! missing, duplicated, too many, that do not compile, are not bools, name undeclared variables, functions
//! or fields, compare values of types no overload accepts, pass arguments of the wrong types, apply
//! logical operators to what is not a bool, mix types in arithmetic or misuse the authorizer; and match
//! conditions the type check accepts: the authorizer's calls, quantities, urls, ips, `has()`), several
//! causes at once, an invalid configuration name listed with the webhooks' causes, and updates (an invalid change refused, a valid one stored). No configuration matches a
//! resource anything writes.

use kube::Client;
use serde_json::{Value, json};

use crate::support::{Transcript, run};

const VALIDATING: &str = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations";
const MUTATING: &str = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations";

/// A valid webhook for a resource nothing writes.
fn hook(name: &str) -> Value {
    json!({
        "name": name,
        "clientConfig": {"url": "https://127.0.0.1:1/x"},
        "rules": [{"apiGroups": ["nothing.example.dev"], "apiVersions": ["v1"],
                   "resources": ["nothings"], "operations": ["CREATE"]}],
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
    })
}

fn configuration(kind: &str, name: &str, webhooks: Vec<Value>) -> Value {
    json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": kind,
        "metadata": {"name": name},
        "webhooks": webhooks,
    })
}

/// A hook with `changes` merged over the valid one (a `null` removes the field).
fn changed(changes: Value) -> Value {
    let mut h = hook("a.example.dev");
    if let (Some(m), Some(c)) = (h.as_object_mut(), changes.as_object()) {
        for (k, v) in c {
            if v.is_null() {
                m.remove(k);
            } else {
                m.insert(k.clone(), v.clone());
            }
        }
    }
    h
}

fn conditions(list: &[(&str, &str)]) -> Value {
    Value::Array(
        list.iter()
            .map(|(n, e)| json!({"name": n, "expression": e}))
            .collect(),
    )
}

fn rule(apply: impl Fn(&mut Value)) -> Value {
    let mut r = hook("x")["rules"][0].clone();
    apply(&mut r);
    r
}

async fn scenario(client: Client, ns: String) -> Transcript {
    let mut t = Transcript::new(client);
    let vwc = |name: &str, hooks: Vec<Value>| {
        configuration(
            "ValidatingWebhookConfiguration",
            &format!("{name}-{ns}"),
            hooks,
        )
    };
    let mwc = |name: &str, hooks: Vec<Value>| {
        configuration(
            "MutatingWebhookConfiguration",
            &format!("{name}-{ns}"),
            hooks,
        )
    };

    // Defaults.
    t.post(
        "a minimal validating configuration is defaulted",
        VALIDATING,
        &vwc("defaults", vec![hook("a.example.dev")]),
    )
    .await;
    t.get(
        "the defaults are stored",
        &format!("{VALIDATING}/defaults-{ns}"),
    )
    .await;
    let mut service = hook("a.example.dev");
    service["clientConfig"] =
        json!({"service": {"namespace": "default", "name": "svc", "path": "/hook"}});
    service["matchConditions"] = conditions(&[
        ("reads-object", "object.metadata.name == 'a'"),
        (
            "reads-request",
            "request.userInfo.groups.exists(g, g == 'x') && request.operation != ''",
        ),
        (
            "reads-authorizer",
            "authorizer.group('').resource('pods').check('get').allowed()",
        ),
    ]);
    t.post(
        "a minimal mutating configuration with a service is defaulted",
        MUTATING,
        &mwc("defaults", vec![service]),
    )
    .await;

    let mut accepted = hook("a.example.dev");
    accepted["matchConditions"] = conditions(&[
        (
            "request-resource",
            "authorizer.requestResource.check('get').allowed()",
        ),
        (
            "service-account",
            "authorizer.serviceAccount('ns', 'sa').group('apps').resource('deployments').namespace('a').name('b').subresource('status').check('update').allowed()",
        ),
        (
            "path-and-selectors",
            "authorizer.path('/healthz').check('get').reason() == '' || authorizer.group('').resource('pods').fieldSelector('a=b').labelSelector('c=d').check('list').errored()",
        ),
        (
            "groups",
            "request.userInfo.groups.exists(g, g.startsWith('system:'))",
        ),
        (
            "extra",
            "request.userInfo.extra.exists(k, k == 'x') || request.kind.group == ''",
        ),
        (
            "has",
            "has(object.metadata.labels) && object.metadata.labels.all(k, k != '')",
        ),
        (
            "quantity",
            "quantity('1Gi').isGreaterThan(quantity('100Mi')) && isQuantity('1')",
        ),
        (
            "url",
            "isURL('https://a.dev/x') && url('https://a.dev/x').getHost() == 'a.dev'",
        ),
        (
            "ip",
            "isIP('10.0.0.1') && ip('10.0.0.1').family() == 4 && cidr('10.0.0.0/8').containsIP('10.1.2.3')",
        ),
        (
            "namespace",
            "namespaceObject.metadata.labels['env'] == 'prod' || namespaceObject.status.phase == 'Active'",
        ),
        ("numbers", "size(request.userInfo.groups) < 1.5 && 2u > 0"),
        (
            "old-object",
            "oldObject == null || object.spec == oldObject.spec",
        ),
    ]);
    t.post(
        "match conditions kube-apiserver's type check accepts",
        VALIDATING,
        &vwc("accepted", vec![accepted]),
    )
    .await;
    t.delete(
        "the accepted configuration is deleted",
        &format!("{VALIDATING}/accepted-{ns}"),
    )
    .await;

    let mut empty = hook("a.example.dev");
    empty["rules"] = json!([]);
    empty["matchConditions"] = json!([]);
    empty["namespaceSelector"] = json!({"matchLabels": {}, "matchExpressions": []});
    empty["clientConfig"]["caBundle"] = json!("");
    t.post(
        "empty lists and selectors are stored as kube-apiserver stores them",
        VALIDATING,
        &vwc("empty", vec![empty]),
    )
    .await;
    t.delete(
        "the empty configuration is deleted",
        &format!("{VALIDATING}/empty-{ns}"),
    )
    .await;

    let cases: Vec<(&str, Value)> = vec![
        (
            "a name with two segments",
            changed(json!({"name": "short.dev"})),
        ),
        (
            "a name that is not a subdomain",
            changed(json!({"name": "Bad_Name.example.dev"})),
        ),
        ("an empty name", changed(json!({"name": ""}))),
        (
            "operations: none, a wildcard with others, an unknown one",
            changed(json!({"rules": [
                rule(|r| r["operations"] = json!([])),
                rule(|r| r["operations"] = json!(["*", "CREATE", "PATCH"])),
            ]})),
        ),
        (
            "groups and versions: none, wildcards with others, an empty version",
            changed(json!({"rules": [
                rule(|r| { r["apiGroups"] = json!([]); r["apiVersions"] = json!([]); }),
                rule(|r| { r["apiGroups"] = json!(["*", "apps"]); r["apiVersions"] = json!(["*", ""]); }),
            ]})),
        ),
        (
            "resources: none, an empty one, and the wildcard rules",
            changed(json!({"rules": [
                rule(|r| r["resources"] = json!([])),
                rule(|r| r["resources"] = json!(["", "pods/*", "pods/status", "*/scale", "deployments/scale"])),
                rule(|r| r["resources"] = json!(["*/*", "pods"])),
                rule(|r| r["resources"] = json!(["*", "pods", "pods/log"])),
            ]})),
        ),
        (
            "an unknown scope",
            changed(json!({"rules": [rule(|r| r["scope"] = json!("Everywhere"))]})),
        ),
        (
            "unknown failure and match policies",
            changed(json!({"failurePolicy": "Maybe", "matchPolicy": "Roughly"})),
        ),
        ("no side effects", changed(json!({"sideEffects": null}))),
        ("side effects Some", changed(json!({"sideEffects": "Some"}))),
        (
            "side effects Unknown",
            changed(json!({"sideEffects": "Unknown"})),
        ),
        ("a timeout of 0", changed(json!({"timeoutSeconds": 0}))),
        ("a timeout of 31", changed(json!({"timeoutSeconds": 31}))),
        (
            "no review versions",
            changed(json!({"admissionReviewVersions": null})),
        ),
        (
            "review versions: unknown, duplicated, not a DNS label",
            changed(json!({"admissionReviewVersions": ["v2", "v2", "V1"]})),
        ),
        (
            "label selectors",
            changed(json!({
                "namespaceSelector": {"matchLabels": {"a/b/c": "x y", "ok": "fine"}},
                "objectSelector": {"matchExpressions": [
                    {"key": "k", "operator": "In", "values": []},
                    {"key": "k", "operator": "Exists", "values": ["v"]},
                    {"key": "-bad", "operator": "Near"},
                    {"key": "k", "operator": "NotIn", "values": ["a b"]},
                ]},
            })),
        ),
        ("no client config", changed(json!({"clientConfig": {}}))),
        (
            "both a url and a service",
            changed(
                json!({"clientConfig": {"url": "https://a.dev", "service": {"namespace": "a", "name": "b"}}}),
            ),
        ),
        (
            "a url with http, user, query and fragment",
            changed(json!({"clientConfig": {"url": "http://me:pw@a.dev/x?q=1#frag"}})),
        ),
        (
            "a url without a host",
            changed(json!({"clientConfig": {"url": "https:///path"}})),
        ),
        (
            "a service without name or namespace, with a bad port",
            changed(
                json!({"clientConfig": {"service": {"namespace": "", "name": "", "port": 70000}}}),
            ),
        ),
        (
            "service paths",
            changed(
                json!({"clientConfig": {"service": {"namespace": "a", "name": "b", "path": "x/Bad_Seg//y/"}}}),
            ),
        ),
        (
            "a service path of //",
            changed(
                json!({"clientConfig": {"service": {"namespace": "a", "name": "b", "path": "//"}}}),
            ),
        ),
        (
            "match conditions without name or expression, badly named, duplicated",
            changed(json!({"matchConditions": [
                {"name": "", "expression": ""},
                {"name": "a b", "expression": "true"},
                {"name": "-x", "expression": "  "},
                {"name": "dup", "expression": "true"},
                {"name": "dup", "expression": "true"},
            ]})),
        ),
        (
            "65 match conditions",
            changed(json!({"matchConditions": (0..65)
                .map(|i| json!({"name": format!("c{i}"), "expression": "true"}))
                .collect::<Vec<_>>()})),
        ),
        (
            "match conditions that do not parse",
            changed(json!({"matchConditions": conditions(&[
                ("a", "object.data.contains("),
                ("b", "'a' +"),
            ])})),
        ),
        (
            "match conditions that are not bools",
            changed(json!({"matchConditions": conditions(&[
                ("dyn", "object.spec.paused"),
                ("int", "1"),
                ("string", "request.operation"),
                ("list", "request.userInfo.groups"),
                ("object", "request.userInfo"),
                ("timestamp", "namespaceObject.metadata.creationTimestamp"),
                ("null", "null"),
                ("spaces", "  object.x  "),
            ])})),
        ),
        (
            "match conditions naming what is not declared",
            changed(json!({"matchConditions": conditions(&[
                ("params", "params.x == 1"),
                ("self", "self.x == 1"),
                ("field", "request.foo == 'a'"),
                ("nested", "request.userInfo.name == 'a' || request.kind.plural == 'b'"),
                ("namespace", "namespaceObject.metadata.labels['a'] == 'b' && namespaceObject.spec.nope"),
                ("two", "x == y"),
            ])})),
        ),
        (
            "match conditions comparing values no overload accepts",
            changed(json!({"matchConditions": conditions(&[
                ("bool-string", "request.dryRun == 'true'"),
                ("string-int", "request.operation < 1 || request.name != 2"),
                ("list-string", "request.userInfo.groups == 'x'"),
                ("numbers", "size(request.userInfo.groups) < 1.5"),
                ("dyn", "object.x == 1 && request.kind.kind == 'a'"),
                ("null", "request.operation == null"),
            ])})),
        ),
        (
            "match conditions calling functions that are not declared",
            changed(json!({"matchConditions": conditions(&[
                ("global", "nope(object)"),
                ("member", "request.name.nope() && request.dryRun"),
                ("bind", "cel.bind(x, 1, x == 1)"),
                ("authorizer", "authorizer.group('').resources('pods').check('get').allowed()"),
            ])})),
        ),
        (
            "match conditions passing arguments of the wrong types",
            changed(json!({"matchConditions": conditions(&[
                ("starts-with", "request.name.startsWith(1)"),
                ("quantity", "quantity(1).isInteger()"),
                ("group", "authorizer.group(1).resource('pods').check('get').allowed()"),
                ("size", "size(request.dryRun) == 1"),
                ("url", "url('https://a.dev').getHost() == 1"),
                ("matches", "request.userInfo.groups.matches('a')"),
            ])})),
        ),
        (
            "match conditions applying logical operators to what is not a bool",
            changed(json!({"matchConditions": conditions(&[
                ("not", "!request.name"),
                ("and", "request.dryRun && request.name"),
                ("or", "request.userInfo.groups || true"),
                ("in", "'a' in request.dryRun"),
                ("in-map", "1 in request.userInfo.extra"),
                ("ternary", "request.name ? true : false"),
            ])})),
        ),
        (
            "match conditions mixing types in arithmetic",
            changed(json!({"matchConditions": conditions(&[
                ("int-string", "1 + 'a' == 2"),
                ("int-double", "size(request.userInfo.groups) * 1.5 > 2.0"),
                ("uint-int", "1u - 1 == 0u"),
                ("negate", "-request.name == ''"),
                ("list-string", "request.userInfo.groups + 'x' == []"),
                ("timestamp", "namespaceObject.metadata.creationTimestamp + 1 > now()"),
                ("duration", "duration('1s') + 1 == duration('2s')"),
            ])})),
        ),
        (
            "match conditions misusing the authorizer",
            changed(json!({"matchConditions": conditions(&[
                ("field", "authorizer.user == 'a'"),
                ("decision", "authorizer.path('/healthz').check('get')"),
                ("order", "authorizer.resource('pods').check('get').allowed()"),
            ])})),
        ),
        (
            "several causes at once",
            changed(json!({
                "name": "bad",
                "failurePolicy": "Maybe",
                "sideEffects": null,
                "timeoutSeconds": 99,
                "clientConfig": {"url": "http://a.dev"},
                "rules": [rule(|r| r["operations"] = json!(["PATCH"]))],
                "matchConditions": conditions(&[("n", "object")]),
            })),
        ),
    ];
    for (label, webhook) in &cases {
        t.post(
            &format!("validating: {label}"),
            VALIDATING,
            &vwc("bad", vec![webhook.clone()]),
        )
        .await;
    }
    let mut misnamed = vwc("x", vec![changed(json!({"timeoutSeconds": 0}))]);
    misnamed["metadata"]["name"] = json!("Not_A_Name");
    t.post(
        "validating: an invalid configuration name and an invalid webhook",
        VALIDATING,
        &misnamed,
    )
    .await;
    t.post(
        "validating: duplicate webhook names",
        VALIDATING,
        &vwc("dup", vec![hook("a.example.dev"), hook("a.example.dev")]),
    )
    .await;
    let mut reinvoked = hook("a.example.dev");
    reinvoked["reinvocationPolicy"] = json!("Always");
    reinvoked["sideEffects"] = json!("NoneOnDryRun");
    t.post(
        "mutating: an unknown reinvocation policy",
        MUTATING,
        &mwc("bad", vec![reinvoked]),
    )
    .await;
    for (label, webhook) in cases.iter().filter(|(l, _)| {
        l.starts_with("several")
            || l.starts_with("match conditions naming")
            || l.starts_with("label")
    }) {
        t.post(
            &format!("mutating: {label}"),
            MUTATING,
            &mwc("bad", vec![webhook.clone()]),
        )
        .await;
    }

    // Updates.
    let mut stored = t
        .get(
            "the configuration to update",
            &format!("{VALIDATING}/defaults-{ns}"),
        )
        .await;
    stored["webhooks"][0]["timeoutSeconds"] = json!(0);
    stored["webhooks"][0]["matchConditions"] = conditions(&[("n", "object.x")]);
    t.put(
        "an update with a bad timeout and a condition that is not a bool",
        &format!("{VALIDATING}/defaults-{ns}"),
        &stored,
    )
    .await;
    stored["webhooks"][0]["timeoutSeconds"] = json!(5);
    stored["webhooks"][0]["matchConditions"] = conditions(&[("n", "object.x == 1")]);
    stored["webhooks"]
        .as_array_mut()
        .expect("webhooks")
        .push(hook("b.example.dev"));
    t.put(
        "a valid update adds a webhook and a condition",
        &format!("{VALIDATING}/defaults-{ns}"),
        &stored,
    )
    .await;
    let mut renamed = t
        .get(
            "the updated configuration",
            &format!("{VALIDATING}/defaults-{ns}"),
        )
        .await;
    renamed["webhooks"][1]["name"] = json!("a.example.dev");
    t.put(
        "an update that duplicates a webhook name",
        &format!("{VALIDATING}/defaults-{ns}"),
        &renamed,
    )
    .await;
    for (path, name) in [(VALIDATING, "defaults"), (MUTATING, "defaults")] {
        t.delete(
            &format!("the {name} configuration is deleted"),
            &format!("{path}/{name}-{ns}"),
        )
        .await;
    }
    t
}

#[tokio::test]
async fn webhook_configurations() {
    run("webhook_configurations", &[], scenario).await;
}
