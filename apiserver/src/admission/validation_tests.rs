//! The checks of webhook configurations, against the texts kube-apiserver answers with.

use serde_json::{Value, json};

use super::super::defaults::default_configuration;
use super::validate_configuration;

fn hook() -> Value {
    json!({
        "name": "a.example.dev",
        "clientConfig": {"url": "https://127.0.0.1:8443/validate"},
        "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"],
                   "operations": ["CREATE"]}],
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
    })
}

fn configuration(hooks: Vec<Value>) -> Value {
    let mut c = json!({"metadata": {"name": "c"}, "webhooks": hooks});
    default_configuration(&mut c, false);
    c
}

fn causes(c: &Value, old: Option<&Value>) -> Vec<(String, String, String)> {
    validate_configuration("ValidatingWebhookConfiguration", c, old)
        .into_iter()
        .map(|c| (c.field, c.reason, c.message))
        .collect()
}

fn one(field: &str, reason: &str, message: &str) -> Vec<(String, String, String)> {
    vec![(field.into(), reason.into(), message.into())]
}

#[test]
fn defaults_are_the_v1_api_s() {
    let mut h = hook();
    h["clientConfig"] = json!({"service": {"namespace": "ns", "name": "svc"}});
    let mut c = json!({"webhooks": [h]});
    default_configuration(&mut c, true);
    let w = &c["webhooks"][0];
    assert_eq!(w["failurePolicy"], "Fail");
    assert_eq!(w["matchPolicy"], "Equivalent");
    assert_eq!(w["namespaceSelector"], json!({}));
    assert_eq!(w["objectSelector"], json!({}));
    assert_eq!(w["timeoutSeconds"], 10);
    assert_eq!(w["reinvocationPolicy"], "Never");
    assert_eq!(w["rules"][0]["scope"], "*");
    assert_eq!(w["clientConfig"]["service"]["port"], 443);
}

#[test]
fn a_valid_configuration_passes() {
    assert!(causes(&configuration(vec![hook()]), None).is_empty());
}

#[test]
fn names_must_be_fully_qualified_and_unique() {
    let mut h = hook();
    h["name"] = json!("short.name");
    assert_eq!(
        causes(&configuration(vec![h]), None),
        one(
            "webhooks[0].name",
            "FieldValueInvalid",
            "Invalid value: \"short.name\": should be a domain with at least three segments separated by dots"
        )
    );
    assert_eq!(
        causes(&configuration(vec![hook(), hook()]), None),
        one(
            "webhooks[1].name",
            "FieldValueDuplicate",
            "Duplicate value: \"a.example.dev\""
        )
    );
}

#[test]
fn rules_and_policies() {
    let mut h = hook();
    h["rules"][0]["operations"] = json!(["*", "CREATE", "PATCH"]);
    h["rules"][0]["resources"] = json!(["*/*", "pods"]);
    h["rules"][0]["scope"] = json!("Everywhere");
    h["failurePolicy"] = json!("Maybe");
    h["sideEffects"] = json!("Some");
    h["timeoutSeconds"] = json!(31);
    let got = causes(&configuration(vec![h]), None);
    let messages: Vec<&str> = got.iter().map(|c| c.2.as_str()).collect();
    assert_eq!(
        messages,
        [
            "Invalid value: [\"*\",\"CREATE\",\"PATCH\"]: if '*' is present, must not specify other operations",
            "Unsupported value: \"PATCH\": supported values: \"*\", \"CONNECT\", \"CREATE\", \"DELETE\", \"UPDATE\"",
            "Invalid value: [\"*/*\",\"pods\"]: if '*/*' is present, must not specify other resources",
            "Unsupported value: \"Everywhere\": supported values: \"*\", \"Cluster\", \"Namespaced\"",
            "Unsupported value: \"Maybe\": supported values: \"Fail\", \"Ignore\"",
            "Unsupported value: \"Some\": supported values: \"None\", \"NoneOnDryRun\"",
            "Invalid value: 31: the timeout value must be between 1 and 30 seconds",
        ]
    );
}

#[test]
fn client_configs() {
    let mut h = hook();
    h["clientConfig"] = json!({"url": "http://user@/x?q=1#f"});
    let got: Vec<String> = causes(&configuration(vec![h]), None)
        .into_iter()
        .map(|c| c.2)
        .collect();
    assert_eq!(
        got,
        [
            "Invalid value: \"http\": 'https' is the only allowed URL scheme; desired format: https://host[/path]",
            "Invalid value: \"\": host must be specified; desired format: https://host[/path]",
            "Invalid value: \"user\": user information is not permitted in the URL",
            "Invalid value: \"f\": fragments are not permitted in the URL",
            "Invalid value: \"q=1\": query parameters are not permitted in the URL",
        ]
    );
    let mut h = hook();
    h["clientConfig"] = json!({});
    assert_eq!(
        causes(&configuration(vec![h]), None),
        one(
            "webhooks[0].clientConfig",
            "FieldValueRequired",
            "Required value: exactly one of url or service is required"
        )
    );
    let mut h = hook();
    h["clientConfig"] =
        json!({"service": {"name": "", "namespace": "ns", "port": 0, "path": "/a//B"}});
    let got: Vec<String> = causes(&configuration(vec![h]), None)
        .into_iter()
        .map(|c| format!("{}: {}", c.0, c.2))
        .collect();
    assert_eq!(
        got[0],
        "webhooks[0].clientConfig.service.name: Required value"
    );
    assert_eq!(
        got[1],
        "webhooks[0].clientConfig.service.port: Invalid value: 0: port is not valid: must be between 1 and 65535, inclusive"
    );
    assert_eq!(
        got[2],
        "webhooks[0].clientConfig.service.path: Invalid value: \"/a//B\": segment[1] may not be empty"
    );
    assert!(got[3].starts_with("webhooks[0].clientConfig.service.path: Invalid value: \"/a//B\": segment[2]: a lowercase RFC 1123 subdomain"));
}

#[test]
fn match_conditions() {
    let mut h = hook();
    h["matchConditions"] = json!([
        {"name": "", "expression": ""},
        {"name": "a b", "expression": "object.x"},
        {"name": "ok", "expression": "params.x == 1"},
        {"name": "ok", "expression": "true"},
    ]);
    let got: Vec<String> = causes(&configuration(vec![h]), None)
        .into_iter()
        .map(|c| format!("{}: {}", c.0, c.2))
        .collect();
    assert_eq!(
        got[0],
        "webhooks[0].matchConditions[0].expression: Required value"
    );
    assert_eq!(
        got[1],
        "webhooks[0].matchConditions[0].name: Required value"
    );
    assert_eq!(
        got[2],
        "webhooks[0].matchConditions[1].expression: Invalid value: \"object.x\": must evaluate to bool but got dyn"
    );
    assert!(got[3].starts_with(
        "webhooks[0].matchConditions[1].name: Invalid value: \"a b\": name part must consist of"
    ));
    assert_eq!(
        got[4],
        "webhooks[0].matchConditions[2].expression: Invalid value: \"params.x == 1\": compilation failed: ERROR: <input>:1:1: undeclared reference to 'params' (in container '')\n | params.x == 1\n | ^"
    );
    assert_eq!(
        got[5],
        "webhooks[0].matchConditions[3].name: Duplicate value: \"ok\""
    );
    assert_eq!(got.len(), 6);
}

#[test]
fn updates_keep_what_the_stored_configuration_has() {
    let mut h = hook();
    h["sideEffects"] = json!("Some");
    h["matchConditions"] = json!([{"name": "a", "expression": "object.x"}]);
    let old = configuration(vec![h.clone(), h.clone()]);
    let mut new = old.clone();
    new["webhooks"][1]["timeoutSeconds"] = json!(5);
    assert!(causes(&new, Some(&old)).is_empty());
    assert_eq!(causes(&new, None).len(), 5);
}

#[test]
fn selectors() {
    let mut h = hook();
    h["objectSelector"] = json!({"matchLabels": {"a/b/c": "x y"}, "matchExpressions": [
        {"key": "k", "operator": "In", "values": []},
        {"key": "k", "operator": "Exists", "values": ["v"]},
        {"key": "k", "operator": "Near"},
    ]});
    let got: Vec<String> = causes(&configuration(vec![h]), None)
        .into_iter()
        .map(|c| format!("{}: {} {}", c.0, c.1, c.2))
        .collect();
    assert!(got[0].starts_with("webhooks[0].objectSelector.matchLabels: FieldValueInvalid Invalid value: \"a/b/c\": a valid label key must consist of"), "{got:?}");
    assert!(got[1].starts_with("webhooks[0].objectSelector.matchLabels: FieldValueInvalid Invalid value: \"x y\": a valid label must be"), "{got:?}");
    assert_eq!(
        got[2],
        "webhooks[0].objectSelector.matchExpressions[0].values: FieldValueRequired Required value: must be specified when `operator` is 'In' or 'NotIn'"
    );
    assert_eq!(
        got[3],
        "webhooks[0].objectSelector.matchExpressions[1].values: FieldValueForbidden Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
    );
    assert_eq!(
        got[4],
        "webhooks[0].objectSelector.matchExpressions[2].operator: FieldValueInvalid Invalid value: \"Near\": not a valid selector operator"
    );
}
