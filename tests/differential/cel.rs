//! CEL validation rules (`x-kubernetes-validations`) on both servers: creates and updates refused with the
//! rule's message, reason and field path, transition rules, rules under lists and maps, Kubernetes library
//! functions, the blocking of rules by schema errors, ratcheting of values the update left unchanged (with
//! the server's warning), and CRDs whose rules do not compile.

use std::time::Duration;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Client;
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::{Value, json};

use crate::support::{MERGE, Transcript, run};

const CRD_NAME: &str = "rulebooks.cel.example.dev";

/// The Rulebook CRD, with `image_rule` on `spec.image`.
fn gadget_crd(image_rule: &str) -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": CRD_NAME},
        "spec": {
            "group": "cel.example.dev",
            "names": {"kind": "Rulebook", "plural": "rulebooks", "singular": "rulebook", "listKind": "RulebookList"},
            "scope": "Namespaced",
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "x-kubernetes-validations": [
                        {"rule": "self.metadata.name.startsWith('g')", "message": "name must start with g"}
                    ],
                    "properties": {
                        "spec": spec_schema(image_rule),
                        "status": {
                            "type": "object",
                            "properties": {"phase": {"type": "string", "maxLength": 10}},
                            "x-kubernetes-validations": [{"rule": "self.phase != 'bad'"}]
                        }
                    }
                }}
            }]
        }
    })
}

/// The schema of `spec`, with `image_rule` on `spec.image`.
fn spec_schema(image_rule: &str) -> Value {
    json!({
        "type": "object",
        "x-kubernetes-validations": [
            {"rule": "self.replicas <= 50", "message": "replicas must be at most 50"},
            {"rule": "self.minReplicas <= self.replicas"},
            {"rule": "!has(self.mode) || self.mode != 'off' || self.replicas == 0",
             "messageExpression": "'mode off needs 0 replicas'",
             "reason": "FieldValueForbidden", "fieldPath": ".mode"},
            {"rule": "self.replicas >= oldSelf.replicas", "message": "replicas may not shrink",
             "reason": "FieldValueRequired"}
        ],
        "properties": {
            "replicas": {"type": "integer", "maximum": 100},
            "minReplicas": {"type": "integer", "x-kubernetes-validations": [
                {"rule": "self < 10"},
                {"rule": "self < 8", "reason": "FieldValueDuplicate"},
                {"rule": "self < 7", "messageExpression": "'bad value'", "reason": "FieldValueInvalid"}
            ]},
            "mode": {"type": "string", "maxLength": 5},
            "image": {"type": "string", "x-kubernetes-validations": [
                {"rule": image_rule, "message": "image must name a tag or digest"}
            ]},
            "ports": {
                "type": "array", "maxItems": 10,
                "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                "items": {
                    "type": "object", "required": ["name"],
                    "properties": {"name": {"type": "string", "maxLength": 10}, "port": {"type": "integer"}},
                    "x-kubernetes-validations": [
                        {"rule": "self.port == oldSelf.port", "message": "port is immutable"}
                    ]
                }
            },
            "labels": {"type": "object", "maxProperties": 10, "additionalProperties": {
                "type": "string", "maxLength": 20,
                "x-kubernetes-validations": [{"rule": "size(self) < 5"}]
            }},
            "memory": {"x-kubernetes-int-or-string": true, "x-kubernetes-validations": [
                {"rule": "quantity(string(self)).compareTo(quantity('1Gi')) <= 0", "message": "at most 1Gi"}
            ]},
            "hosts": {"type": "array", "maxItems": 5, "items": {"type": "string", "maxLength": 64},
                "x-kubernetes-validations": [
                    {"rule": "self.all(h, h.matches('^[a-z.]+$'))", "message": "hosts are lowercase names"},
                    {"rule": "self.isSorted()", "message": "hosts are sorted"}
                ]}
        }
    })
}

/// The Rulebook CRD renamed to `NAMEs.cel.example.dev`, with `spec` as the schema of its spec.
fn named_crd(name: &str, spec: Value) -> Value {
    let mut crd = gadget_crd(FIRST_RULE);
    crd["metadata"]["name"] = json!(format!("{name}s.cel.example.dev"));
    crd["spec"]["names"] = json!({"kind": name, "plural": format!("{name}s"), "singular": name});
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"] = spec;
    crd
}

const FIRST_RULE: &str = "self.contains(':') || self.contains('@')";
const STRICTER_RULE: &str = "self.contains('@')";

fn gadget(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "cel.example.dev/v1", "kind": "Rulebook", "metadata": {"name": name}, "spec": spec})
}

fn ok_spec() -> Value {
    json!({"replicas": 3, "minReplicas": 1, "image": "nginx:1", "ports": [{"name": "a", "port": 1}],
           "labels": {"a": "b"}, "memory": "512Mi", "hosts": ["a.example", "b.example"]})
}

fn gadgets(ns: &str) -> String {
    format!("/apis/cel.example.dev/v1/namespaces/{ns}/rulebooks")
}

/// Creates or replaces the Rulebook CRD with `image_rule` and waits (bounded) until a dry-run create shows
/// the rule in force.
async fn install(client: &Client, ns: &str, image_rule: &str) {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let wanted: CustomResourceDefinition =
        serde_json::from_value(gadget_crd(image_rule)).expect("a CRD");
    match crds.get_opt(CRD_NAME).await.expect("the CRD is read") {
        None => {
            crds.create(&PostParams::default(), &wanted)
                .await
                .expect("the CRD is created");
        }
        Some(_) => {
            crds.patch(
                CRD_NAME,
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": wanted.spec})),
            )
            .await
            .expect("the CRD is updated");
        }
    }
    let gvk = GroupVersionKind::gvk("cel.example.dev", "v1", "Rulebook");
    let api: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        ns,
        &ApiResource::from_gvk_with_plural(&gvk, "rulebooks"),
    );
    // An image only the stricter rule refuses tells which rule is served.
    let probe: DynamicObject = serde_json::from_value(gadget(
        "gprobe",
        json!({"replicas": 1, "minReplicas": 1, "image": "x:1"}),
    ))
    .expect("a gadget");
    let dry = PostParams {
        dry_run: true,
        ..Default::default()
    };
    for _ in 0..400 {
        let refused =
            matches!(api.create(&dry, &probe).await, Err(kube::Error::Api(ref s)) if s.code == 422);
        let served = match api.create(&dry, &probe).await {
            Ok(_) => true,
            Err(kube::Error::Api(ref s)) => s.code == 422,
            Err(_) => false,
        };
        if served && refused == (image_rule == STRICTER_RULE) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the Rulebook CRD with rule {image_rule:?} is not served");
}

async fn rules(client: Client, ns: String) -> Transcript {
    install(&client, &ns, FIRST_RULE).await;
    let mut t = Transcript::new(client.clone()).with_warnings();
    let gs = gadgets(&ns);
    let gone = format!("{gs}/gone");
    t.post("create", &gs, &gadget("gone", ok_spec())).await;
    t.post("a root rule", &gs, &gadget("xone", ok_spec())).await;
    let mut bad = ok_spec();
    bad["replicas"] = json!(0);
    bad["minReplicas"] = json!(0);
    bad["mode"] = json!("off");
    t.post("no transition rule on create", &gs, &gadget("gzero", bad))
        .await;
    for (label, spec) in [
        ("a message", json!({"replicas": 60})),
        (
            "the default message and a duplicate",
            json!({"minReplicas": 9}),
        ),
        ("three rules on one field", json!({"minReplicas": 11})),
        ("reason and fieldPath", json!({"mode": "off"})),
        ("a transition rule", json!({"replicas": 2})),
        ("a rule on a string", json!({"image": "nginx"})),
        (
            "a map-list item keeps its old self",
            json!({"ports": [{"name": "a", "port": 2}]}),
        ),
        (
            "a new map-list item has none",
            json!({"ports": [{"name": "a", "port": 1}, {"name": "b", "port": 2}]}),
        ),
        ("a map value", json!({"labels": {"x": "toolong"}})),
        ("quantities", json!({"memory": "2Gi"})),
        ("an int-or-string given as an int", json!({"memory": 1024})),
        ("macros", json!({"hosts": ["A.example"]})),
        (
            "lists library",
            json!({"hosts": ["b.example", "a.example"]}),
        ),
        ("a type error blocks rules", json!({"replicas": "x"})),
        ("a too long string blocks rules", json!({"mode": "toolong"})),
        ("a bound does not block rules", json!({"replicas": 200})),
    ] {
        t.patch(label, &gone, MERGE, &json!({ "spec": spec })).await;
    }
    t.patch(
        "a status rule",
        &format!("{gone}/status"),
        MERGE,
        &json!({"status": {"phase": "bad"}}),
    )
    .await;
    t.get("unchanged", &gone).await;

    install(&client, &ns, STRICTER_RULE).await;
    t.patch(
        "an unchanged value ratchets",
        &gone,
        MERGE,
        &json!({"spec": {"labels": {"b": "c"}}}),
    )
    .await;
    t.patch(
        "a changed one does not",
        &gone,
        MERGE,
        &json!({"spec": {"image": "redis:7"}}),
    )
    .await;
    t.patch(
        "status writes ratchet too",
        &format!("{gone}/status"),
        MERGE,
        &json!({"status": {"phase": "ok"}}),
    )
    .await;
    install(&client, &ns, FIRST_RULE).await;
    t
}

#[tokio::test]
async fn cel_rules() {
    run("cel_rules", &[], rules).await;
}

async fn bad_rules(client: Client, _ns: String) -> Transcript {
    let mut t = Transcript::new(client.clone());
    let crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    let rule = |r: Value| json!({"type": "object", "x-kubernetes-validations": [r]});
    for (label, name, spec) in [
        (
            "a rule that does not parse",
            "bada",
            rule(json!({"rule": "self.contains("})),
        ),
        (
            "a messageExpression that does not parse",
            "badb",
            rule(json!({"rule": "true", "messageExpression": "'a' +"})),
        ),
        (
            "an empty rule",
            "badc",
            rule(json!({"rule": " ", "message": "m"})),
        ),
        (
            "an undefined field",
            "badd",
            rule(json!({"rule": "self.nope == 1"})),
        ),
        (
            "an undefined field in has()",
            "bade",
            rule(json!({"rule": "has(self.nope)"})),
        ),
        (
            "an undefined field in a messageExpression",
            "badg",
            rule(json!({"rule": "true", "messageExpression": "self.nope"})),
        ),
        (
            "an operator no overload accepts",
            "badh",
            json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string", "maxLength": 5}},
                   "x-kubernetes-validations": [{"rule": "self.a == 'x' || self.b > 1 || self.a < 1.5"}]}),
        ),
        (
            "a rule that is not a bool",
            "badi",
            json!({"type": "object", "properties": {"a": {"type": "integer"}},
                   "x-kubernetes-validations": [{"rule": "self.a"}]}),
        ),
        (
            "undefined fields through a macro and an index",
            "badf",
            json!({"type": "object", "properties": {"ports": {"type": "array", "maxItems": 5, "items": {
                "type": "object", "properties": {"port": {"type": "integer"}}}}},
                "x-kubernetes-validations": [{"rule": "self.ports.all(p, p.prt > 0) && self.ports[0].nme == 1 && self.nope"}]}),
        ),
    ] {
        t.post(label, crds, &named_crd(name, spec)).await;
    }
    // Accepted by both (the answer itself is a new CRD, compared elsewhere): a map's keys are not fields.
    let okmap = named_crd(
        "okmap",
        json!({"type": "object", "properties": {"labels": {"type": "object", "maxProperties": 5,
            "additionalProperties": {"type": "string", "maxLength": 10}}},
            "x-kubernetes-validations": [{"rule": "!has(self.labels) || self.labels.foo == 'x'"}]}),
    );
    let created = Api::<CustomResourceDefinition>::all(client)
        .create(
            &PostParams::default(),
            &serde_json::from_value(okmap).expect("a CRD"),
        )
        .await
        .is_ok();
    t.note("a map's keys are not fields", json!(created));
    t
}

#[tokio::test]
async fn cel_rules_that_do_not_compile() {
    run("cel_rules_that_do_not_compile", &[], bad_rules).await;
}

/// Pinned: kube-apiserver estimates the cost of rules when a CRD is written and refuses those over the budget
/// (a rule over a list without `maxItems`); the in-memory server does not, and accepts them. Type errors
/// beyond undefined fields, operators no overload accepts and rules that are not bools (e.g. a function called
/// with the wrong argument types) are refused by the real server and fail at evaluation in memory.
#[tokio::test]
async fn cel_rule_costs_and_type_errors_are_not_checked_in_memory() {
    let Some([memory, real]) =
        crate::support::both("cel_rule_costs_and_type_errors_are_not_checked_in_memory").await
    else {
        return;
    };
    let crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    let mistyped = named_crd(
        "typed",
        json!({"type": "object", "properties": {"a": {"type": "integer"}},
               "x-kubernetes-validations": [{"rule": "self.a.startsWith('x')"}]}),
    );
    let costly = named_crd(
        "costly",
        json!({"type": "object", "properties": {"items": {"type": "array", "items": {"type": "string"}}},
               "x-kubernetes-validations": [{"rule": "self.items.all(a, self.items.all(b, a.startsWith(b)))"}]}),
    );
    let mut statuses = Vec::new();
    for (client, _) in [memory, real] {
        let mut t = Transcript::new(client);
        let a = t.post("a type error", crds, &mistyped).await;
        let b = t.post("over the cost budget", crds, &costly).await;
        statuses.push((
            a["code"].clone(),
            b["code"].clone(),
            a["message"].clone(),
            b["message"].clone(),
        ));
    }
    assert_eq!(
        (&statuses[0].0, &statuses[0].1),
        (&Value::Null, &Value::Null),
        "accepted in memory: {statuses:?}"
    );
    assert_eq!(
        (&statuses[1].0, &statuses[1].1),
        (&json!(422), &json!(422)),
        "refused by kube-apiserver: {statuses:?}"
    );
    assert!(
        statuses[1]
            .2
            .as_str()
            .is_some_and(|m| m.contains("found no matching overload for 'startsWith'")),
        "{statuses:?}"
    );
    assert!(
        statuses[1]
            .3
            .as_str()
            .is_some_and(|m| m.contains("exceeds budget")),
        "{statuses:?}"
    );
}
