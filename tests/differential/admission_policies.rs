//! ValidatingAdmissionPolicies and their bindings enforced on both servers, on ConfigMaps of the scenario's
//! namespace (each binding picked by the object's `mode` label): validations refusing with their
//! `message`, `messageExpression`, `reason` (422 and 403) or the expression itself, `variables`,
//! `namespaceObject`, `matchConditions`, `Warn` (a warning header) and `Audit` actions, params found by
//! selector and missing under `parameterNotFoundAction: Deny`, `excludeResourceRules` by name, expressions
//! that fail under `failurePolicy` `Fail` and `Ignore`, updates (`oldObject`), deletes (a null `object`)
//! and dry runs. The stored policies show kube-apiserver's defaults (their `status` is left out: the
//! in-memory server does not type-check policies).
//!
//! kube-apiserver enforces a policy once its informers saw it: the scenario first waits (unrecorded) until
//! a probe object of every binding meets it.

use std::time::Duration;

use http_body_util::BodyExt;
use kube::Client;
use serde_json::{Value, json};

use crate::support::{Transcript, configmap, configmaps, run};

const POLICIES: &str = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies";
const BINDINGS: &str = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings";

fn rules(operations: &[&str]) -> Value {
    json!([{"apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"], "operations": operations}])
}

/// The policies, named after the namespace (policies are cluster-scoped).
fn policies(ns: &str) -> Vec<Value> {
    let constraints = |operations: &[&str]| {
        json!({"resourceRules": rules(operations),
               "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": ns}}})
    };
    vec![
        json!({"metadata": {"name": format!("rules.{ns}")}, "spec": {
            "matchConstraints": constraints(&["CREATE", "UPDATE"]),
            "matchConditions": [{"name": "not-skipped", "expression": "!('skip' in object.metadata.labels)"}],
            "variables": [
                {"name": "keys", "expression": "has(object.data) ? object.data.size() : 0"},
                {"name": "many", "expression": "variables.keys > 2"}
            ],
            "validations": [
                {"expression": "!variables.many", "message": " at most two keys "},
                {"expression": "!has(object.data) || !has(object.data.bad)",
                 "messageExpression": "'bad key: ' + object.data.bad", "reason": "Forbidden"},
                {"expression": "object.metadata.name != 'plain'"},
                {"expression": "namespaceObject.metadata.name == request.namespace",
                 "message": "namespaceObject is the request's"},
                {"expression": "oldObject == null || !has(oldObject.data) || !has(object.data) || oldObject.data == object.data || !has(oldObject.data.frozen)",
                 "messageExpression": "'frozen since ' + oldObject.metadata.name", "reason": "Invalid"},
                {"expression": "object.metadata.name != 'newline'", "messageExpression": "'two\\nlines'",
                 "message": "a message instead of two lines"}
            ]
        }}),
        json!({"metadata": {"name": format!("params.{ns}")}, "spec": {
            "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
            "matchConstraints": {
                "resourceRules": rules(&["CREATE"]),
                "excludeResourceRules": [{"apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"],
                                          "operations": ["*"], "resourceNames": ["excluded"]}],
                "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": ns}}
            },
            "validations": [
                {"expression": "!has(object.data) || !has(object.data.k) || object.data.k != params.data.forbidden",
                 "messageExpression": "'value ' + params.data.forbidden + ' is forbidden by ' + params.metadata.name"}
            ]
        }}),
        json!({"metadata": {"name": format!("failing.{ns}")}, "spec": {
            "matchConstraints": constraints(&["CREATE"]),
            "validations": [{"expression": "object.data.missing == 'x'"}]
        }}),
        json!({"metadata": {"name": format!("ignoring.{ns}")}, "spec": {
            "failurePolicy": "Ignore",
            "matchConstraints": constraints(&["CREATE"]),
            "validations": [{"expression": "object.data.missing == 'x'"}]
        }}),
        json!({"metadata": {"name": format!("deletes.{ns}")}, "spec": {
            "matchConstraints": constraints(&["DELETE"]),
            "validations": [{"expression": "object == null && oldObject.metadata.name != 'keep'",
                             "message": "keep stays"}]
        }}),
    ]
}

/// The bindings: name, policy, actions, the `mode` they bind, the paramRef.
fn bindings(ns: &str) -> Vec<Value> {
    let binding = |name: &str, policy: &str, actions: &[&str], mode: &str, param_ref: Value| {
        let mut b = json!({"metadata": {"name": format!("{name}.{ns}")}, "spec": {
            "policyName": format!("{policy}.{ns}"),
            "validationActions": actions,
            "matchResources": {"objectSelector": {"matchLabels": {"mode": mode}}}
        }});
        if !param_ref.is_null() {
            b["spec"]["paramRef"] = param_ref;
        }
        b
    };
    vec![
        binding("deny", "rules", &["Deny"], "deny", Value::Null),
        binding("warn", "rules", &["Warn", "Audit"], "warn", Value::Null),
        binding("audit", "rules", &["Audit"], "audit", Value::Null),
        binding(
            "by-selector",
            "params",
            &["Deny"],
            "param",
            json!({"namespace": ns, "selector": {"matchLabels": {"role": "param"}},
                   "parameterNotFoundAction": "Deny"}),
        ),
        binding(
            "missing",
            "params",
            &["Deny"],
            "noparam",
            json!({"name": "nothing-here", "parameterNotFoundAction": "Deny"}),
        ),
        binding(
            "allow-missing",
            "params",
            &["Deny"],
            "allowparam",
            json!({"name": "nothing-here", "parameterNotFoundAction": "Allow"}),
        ),
        binding("failing", "failing", &["Deny"], "error", Value::Null),
        binding(
            "ignoring",
            "ignoring",
            &["Deny"],
            "error-ignored",
            Value::Null,
        ),
        binding("deletes", "deletes", &["Deny"], "delete", Value::Null),
    ]
}

fn labelled(name: &str, mode: &str, data: Value) -> Value {
    let mut cm = configmap(name, data);
    cm["metadata"]["labels"] = json!({"mode": mode});
    cm
}

/// Whether `method` on `uri` (with `body`, when given) is answered with `code` (and a warning, when
/// `warned`); else the answer.
async fn answered(
    client: &Client,
    method: &str,
    uri: &str,
    body: Option<&Value>,
    code: u16,
    warned: bool,
) -> Result<(), String> {
    let body = body.map_or_else(Vec::new, |b| serde_json::to_vec(b).expect("JSON"));
    let content_type = if method == "PATCH" {
        crate::support::MERGE
    } else {
        "application/json"
    };
    let request = http::Request::builder()
        .method(method)
        .uri(uri)
        .header("content-type", content_type)
        .body(kube::client::Body::from(body))
        .expect("a request");
    match client.send(request).await {
        Ok(response) => {
            let status = response.status().as_u16();
            let warning = response.headers().contains_key("warning");
            let body = response.into_body().collect().await.map(|b| b.to_bytes());
            if status == code && (!warned || warning) {
                Ok(())
            } else {
                Err(format!(
                    "{method} {uri}: {status} (warned: {warning}): {body:?}"
                ))
            }
        }
        Err(e) => Err(e.to_string()),
    }
}

/// Waits (bounded) until every binding is in force: a dry-run create meets each create binding, and a
/// dry-run delete of a `keep` labelled for the delete binding is refused. That `keep` is then unlabelled
/// (out of the binding's reach) and deleted, so the scenario creates its own.
async fn in_force(client: &Client, ns: &str) {
    let dry_run = format!("{}?dryRun=All", configmaps(ns));
    let keep = format!("{}/keep", configmaps(ns));
    let probes = [
        (labelled("probe", "deny", json!({"bad": "x"})), 403, false),
        (labelled("probe", "warn", json!({"bad": "x"})), 201, true),
        (labelled("probe", "param", json!({"k": "v1"})), 422, false),
        (labelled("probe", "noparam", json!({})), 422, false),
        (labelled("probe", "error", json!({})), 422, false),
    ];
    let keep_object = labelled("keep", "delete", json!({}));
    answered(
        client,
        "POST",
        &configmaps(ns),
        Some(&keep_object),
        201,
        false,
    )
    .await
    .expect("the delete probe is created");
    let mut last = Vec::new();
    for _ in 0..300 {
        last.clear();
        for (object, code, warned) in &probes {
            if let Err(e) = answered(client, "POST", &dry_run, Some(object), *code, *warned).await {
                last.push(e);
            }
        }
        let delete = format!("{keep}?dryRun=All");
        if let Err(e) = answered(client, "DELETE", &delete, None, 422, false).await {
            last.push(e);
        }
        if last.is_empty() {
            let unlabel = json!({"metadata": {"labels": null}});
            answered(client, "PATCH", &keep, Some(&unlabel), 200, false)
                .await
                .expect("the delete probe is unlabelled");
            answered(client, "DELETE", &keep, None, 200, false)
                .await
                .expect("the delete probe is deleted");
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the policies are not in force: {last:?}");
}

/// The stored policy or binding without what the servers write differently (managedFields, status).
fn trim(t: &mut Transcript) {
    if let Some(body) = t.last_answer_mut()
        && let Some(m) = body.as_object_mut()
    {
        m.remove("status");
        if let Some(meta) = m.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.remove("managedFields");
        }
    }
}

async fn scenario(client: Client, ns: String) -> Transcript {
    let mut t = Transcript::new(client.clone()).with_warnings();
    let cms = configmaps(&ns);
    let mut param = configmap("limits", json!({"forbidden": "v1"}));
    param["metadata"]["labels"] = json!({"role": "param"});
    t.post("the param", &cms, &param).await;
    for mut policy in policies(&ns) {
        policy["apiVersion"] = json!("admissionregistration.k8s.io/v1");
        policy["kind"] = json!("ValidatingAdmissionPolicy");
        t.post("create a policy", POLICIES, &policy).await;
        trim(&mut t);
    }
    for mut binding in bindings(&ns) {
        binding["apiVersion"] = json!("admissionregistration.k8s.io/v1");
        binding["kind"] = json!("ValidatingAdmissionPolicyBinding");
        t.post("create a binding", BINDINGS, &binding).await;
        trim(&mut t);
    }
    in_force(&client, &ns).await;

    let cases = [
        ("allowed", labelled("fine", "deny", json!({"a": "1"}))),
        (
            "too many keys",
            labelled("many", "deny", json!({"a": "1", "b": "2", "c": "3"})),
        ),
        (
            "a bad key (Forbidden)",
            labelled("badkey", "deny", json!({"bad": "x"})),
        ),
        ("no message", labelled("plain", "deny", json!({}))),
        (
            "a message with two lines",
            labelled("newline", "deny", json!({})),
        ),
        (
            "warned",
            labelled("warned", "warn", json!({"bad": "x", "a": "1", "b": "2"})),
        ),
        ("audited", labelled("audited", "audit", json!({"bad": "x"}))),
        (
            "a param forbids it",
            labelled("byparam", "param", json!({"k": "v1"})),
        ),
        (
            "a param allows it",
            labelled("paramok", "param", json!({"k": "v2"})),
        ),
        (
            "excluded by name",
            labelled("excluded", "param", json!({"k": "v1"})),
        ),
        ("no param, Deny", labelled("noparam", "noparam", json!({}))),
        (
            "no param, Allow",
            labelled("allowparam", "allowparam", json!({})),
        ),
        (
            "an error under Fail",
            labelled("failing", "error", json!({})),
        ),
        (
            "an error under Ignore",
            labelled("ignored", "error-ignored", json!({})),
        ),
        ("to keep", labelled("keep", "delete", json!({}))),
        ("to delete", labelled("gone", "delete", json!({}))),
    ];
    for (label, object) in &cases {
        t.post(label, &cms, object).await;
    }
    let mut skipped = labelled("skipped", "deny", json!({"bad": "x"}));
    skipped["metadata"]["labels"]["skip"] = json!("yes");
    t.post("a false match condition", &cms, &skipped).await;
    t.post(
        "a dry run is refused too",
        &format!("{cms}?dryRun=All"),
        &labelled("dry", "deny", json!({"bad": "x"})),
    )
    .await;

    let mut frozen = labelled("frozen", "deny", json!({"frozen": "1"}));
    t.post("create frozen", &cms, &frozen).await;
    frozen["data"] = json!({"frozen": "2"});
    t.put("update frozen", &format!("{cms}/frozen"), &frozen)
        .await;
    t.patch(
        "patch fine with a bad key",
        &format!("{cms}/fine"),
        crate::support::MERGE,
        &json!({"data": {"bad": "y"}}),
    )
    .await;
    t.delete("delete keep", &format!("{cms}/keep")).await;
    t.delete("delete gone", &format!("{cms}/gone")).await;

    for binding in bindings(&ns) {
        let name = binding["metadata"]["name"].as_str().unwrap_or_default();
        t.delete("delete a binding", &format!("{BINDINGS}/{name}"))
            .await;
        *t.last_answer_mut().expect("an answer") = json!("deleted");
    }
    for policy in policies(&ns) {
        let name = policy["metadata"]["name"].as_str().unwrap_or_default();
        t.delete("delete a policy", &format!("{POLICIES}/{name}"))
            .await;
        *t.last_answer_mut().expect("an answer") = json!("deleted");
    }
    t
}

#[tokio::test]
async fn validating_admission_policies() {
    run("validating_admission_policies", &[], scenario).await;
}

/// Policies whose expressions do not compile are refused when written, a cause per expression.
async fn uncompiled(client: Client, ns: String) -> Transcript {
    let mut t = Transcript::new(client);
    let policy = |name: &str, spec: Value| {
        let mut spec = spec;
        spec["matchConstraints"] = json!({"resourceRules": rules(&["CREATE"])});
        json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
               "metadata": {"name": format!("{name}.{ns}")}, "spec": spec})
    };
    let cases = [
        (
            "params without a paramKind",
            policy(
                "noparams",
                json!({
            "validations": [{"expression": "params.data.x == 'y'"}]}),
            ),
        ),
        (
            "not a bool, not a string",
            policy(
                "types",
                json!({
            "validations": [{"expression": "object.metadata.name", "messageExpression": "1 + 2"},
                            {"expression": "'a' > 1"}]}),
            ),
        ),
        (
            "a syntax error and an undeclared variable",
            policy(
                "syntax",
                json!({
            "variables": [{"name": "a", "expression": "object.metadata.name"},
                          {"name": "b", "expression": "variables.c + 'x'"}],
            "matchConditions": [{"name": "m", "expression": "object.metadata.name =="}],
            "validations": [{"expression": "variables.a == 'x' && variables.nope"}]}),
            ),
        ),
        (
            "variables typed by their expressions",
            policy(
                "typed",
                json!({
            "variables": [{"name": "replicas", "expression": "object.spec.replicas"},
                          {"name": "odd", "expression": "variables.replicas % 2 == 1"},
                          {"name": "names", "expression": "['a', 'b']"},
                          {"name": "name", "expression": "variables.names[0]"},
                          {"name": "count", "expression": "size(variables.names)"},
                          {"name": "user", "expression": "request.userInfo"},
                          {"name": "broken", "expression": "1 +"}],
            "validations": [{"expression": "variables.odd"},
                            {"expression": "variables.replicas > 1"},
                            {"expression": "variables.broken"},
                            {"expression": "variables.user"},
                            {"expression": "variables.name"},
                            {"expression": "variables.count"},
                            {"expression": "variables.names"}]}),
            ),
        ),
        (
            "compiles",
            policy(
                "fine",
                json!({
            "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
            "variables": [{"name": "a", "expression": "object.metadata.name"}],
            "matchConditions": [{"name": "m", "expression": "has(object.metadata.labels)"}],
            "validations": [{"expression": "params.data.x == variables.a", "messageExpression": "'no ' + variables.a"}]}),
            ),
        ),
    ];
    for (label, body) in &cases {
        t.post(label, POLICIES, body).await;
        trim(&mut t);
    }
    t.delete("delete", &format!("{POLICIES}/fine.{ns}")).await;
    *t.last_answer_mut().expect("an answer") = json!("deleted");
    t
}

#[tokio::test]
async fn validating_admission_policies_are_compiled_when_written() {
    run(
        "validating_admission_policies_are_compiled_when_written",
        &[],
        uncompiled,
    )
    .await;
}
