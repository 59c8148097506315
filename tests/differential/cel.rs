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
             "reason": "FieldValueRequired"},
            {"rule": "self.?labels.?region.orValue('eu') != 'mars' && self.?hosts[?0].orValue('a') != 'b'",
             "message": "no region mars"},
            {"rule": "!has(self.labels) || self.labels.all(k, v, !(k == 'tier' && v == 'gold'))",
             "message": "no gold tier"},
            {"rule": "!has(self.hosts) || self.hosts.transformList(i, h, i).size() == self.hosts.size() && self.hosts.exists(i, h, i == 0)",
             "message": "hosts transform"},
            {"rule": "!has(self.labels) || self.labels.transformMap(k, v, v + '!').size() == self.labels.size() && self.labels.transformMapEntry(k, v, {v: k}).size() <= 10",
             "message": "labels transform"},
            {"rule": "!has(self.hosts) || (self.hosts.sortBy(h, h)[0] != 'b' && !optional.of(1).optFlatMap(x, optional.none()).hasValue()) || optional.of(self.hosts).optMap(l, l.size()).value() > 5",
             "message": "sorted hosts"}
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
pub(crate) fn named_crd(name: &str, spec: Value) -> Value {
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
        ("the optional syntax", json!({"labels": {"region": "mars"}})),
        ("the optional syntax on a list", json!({"hosts": ["b"]})),
        ("a two-variable macro", json!({"labels": {"tier": "gold"}})),
        (
            "two-variable transforms",
            json!({"labels": {"a": "x", "b": "y"}}),
        ),
        (
            "sortBy, optMap and optFlatMap",
            json!({"hosts": ["c", "b"]}),
        ),
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

/// The static checks kube-apiserver runs on rules when a CRD is written, on both servers: cel-go's type
/// check (overloads, argument counts, unknown functions, comprehension ranges) and the cost budgets (a rule
/// over an unbounded list, string or map exceeds the per-rule budget; the same rules with `maxItems`,
/// `maxLength` and `maxProperties` are accepted; rules inside nested lists exceed only the total budget of
/// the schema). Rules using the Kubernetes libraries are accepted by both (created with a dry run, so that
/// nothing is left behind).
#[tokio::test]
async fn cel_rule_costs_and_type_errors() {
    run("cel_rule_costs_and_type_errors", &[], rule_costs_and_types).await;
}

async fn rule_costs_and_types(client: Client, _ns: String) -> Transcript {
    let mut t = Transcript::new(client.clone());
    let crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    let typed = |rule: &str| {
        json!({"type": "object", "properties": {
            "a": {"type": "integer"}, "s": {"type": "string", "maxLength": 64},
            "l": {"type": "array", "maxItems": 10, "items": {"type": "string", "maxLength": 64}}},
            "x-kubernetes-validations": [{"rule": rule}]})
    };
    let list = |max: Option<(i64, i64)>, rule: &str| {
        let mut items = json!({"type": "string"});
        let mut names = json!({"type": "array"});
        if let Some((n, l)) = max {
            names["maxItems"] = json!(n);
            items["maxLength"] = json!(l);
        }
        names["items"] = items;
        json!({"type": "object", "properties": {"names": names}, "x-kubernetes-validations": [{"rule": rule}]})
    };
    let labels = |max: Option<(i64, i64)>| {
        let mut values = json!({"type": "string"});
        let mut labels = json!({"type": "object"});
        if let Some((n, l)) = max {
            labels["maxProperties"] = json!(n);
            values["maxLength"] = json!(l);
        }
        labels["additionalProperties"] = values;
        json!({"type": "object", "properties": {"labels": labels},
               "x-kubernetes-validations": [{"rule": "self.labels.all(k, self.labels[k].matches('^[a-z]+$'))"}]})
    };
    let text = |max: Option<(i64, i64)>| {
        let mut s = json!({"type": "string", "x-kubernetes-validations": [{"rule": "self.matches('^[a-z]+$')"}]});
        let mut names = json!({"type": "array"});
        if let Some((n, l)) = max {
            names["maxItems"] = json!(n);
            s["maxLength"] = json!(l);
        }
        names["items"] = s;
        json!({"type": "object", "properties": {"names": names}})
    };
    // Eleven rules under two nested lists of 100: each within the per-rule budget, over the total together.
    let nested = {
        let mut fields = serde_json::Map::new();
        let mut rules = Vec::new();
        for i in 0..11 {
            fields.insert(
                format!("f{i}"),
                json!({"type": "string", "maxLength": 2400 - 20 * i}),
            );
            rules.push(json!({"rule": format!("self.f{i}.contains('x')")}));
        }
        json!({"type": "object", "properties": {"groups": {"type": "array", "maxItems": 100, "items": {
            "type": "array", "maxItems": 100, "items": {
                "type": "object", "properties": fields, "x-kubernetes-validations": rules}}}}})
    };
    let nested_within = {
        let mut n = nested.clone();
        n["properties"]["groups"]["maxItems"] = json!(90);
        n
    };
    for (label, name, spec) in [
        (
            "an unbounded list of unbounded strings",
            "costa",
            list(None, "self.names.all(x, x.matches('^[a-z]+$'))"),
        ),
        (
            "a loop in a loop over an unbounded list",
            "costb",
            list(
                None,
                "self.names.all(a, self.names.all(b, a.startsWith(b)))",
            ),
        ),
        ("an unbounded map", "costc", labels(None)),
        ("a string rule under an unbounded list", "costd", text(None)),
        ("over the total budget only", "coste", nested.clone()),
        (
            "startsWith on an int",
            "typea",
            typed("self.a.startsWith('x')"),
        ),
        (
            "too many arguments",
            "typeb",
            typed("self.s.startsWith('x', 'y')"),
        ),
        ("an unknown function", "typec", typed("nope(self.a)")),
        ("size() of an int", "typed", typed("size(self.a) > 0")),
        (
            "a predicate that is not a bool",
            "typee",
            typed("self.l.all(x, x.size())"),
        ),
        (
            "a range that is not a list",
            "typef",
            typed("self.a.all(x, true)"),
        ),
        (
            "an unknown member function",
            "typeg",
            typed("self.s.reverse() == 'a'"),
        ),
        (
            "an undeclared namespace",
            "typeh",
            typed("math.greatest(self.a, 1) == 1"),
        ),
        (
            "a ternary of mixed types",
            "typei",
            typed("(self.a > 1 ? 'a' : 1) == 1"),
        ),
        (
            "a quantity compared to a string",
            "typej",
            typed("quantity(self.s) == '1'"),
        ),
        (
            "several errors on one node, in the server's order",
            "multia",
            {
                let mut n = list(None, "self.names.all(x, x.matches('^[a-z]+$'))");
                n["x-kubernetes-validations"] = json!([
                    {"rule": "self.names.all(x, x.matches('^[a-z]+$'))"},
                    {"rule": "self.names.size() == 'a'"},
                    {"rule": "self.names.size() > 0", "messageExpression": "1"},
                    {"rule": "self.names.size() > 0", "optionalOldSelf": true},
                    {"rule": "self.names.size() >"},
                    {"rule": "self.names.size() < 5", "messageExpression": "self.names.all(a, self.names.all(b, a.startsWith(b))) ? 'a' : 'b'"},
                ]);
                n
            },
        ),
        (
            "a rule on a node without a type",
            "multib",
            json!({"type": "object", "properties": {"free": {"x-kubernetes-preserve-unknown-fields": true,
                   "x-kubernetes-validations": [{"rule": "true"}]}}}),
        ),
        (
            "a comparison of an int with null",
            "typel",
            typed("self.a == null"),
        ),
        (
            "a rule under allOf",
            "typen",
            json!({"type": "object", "properties": {"a": {"type": "integer"}},
                   "allOf": [{"x-kubernetes-validations": [{"rule": "self.a.startsWith("}]}]}),
        ),
        (
            "a type error on the second line of a rule",
            "typeo",
            json!({"type": "object", "properties": {"a": {"type": "integer"}, "s": {"type": "string", "maxLength": 8}},
                   "x-kubernetes-validations": [{"rule": "self.s == 'é' &&\n  self.a.startsWith('x') ||\n\tsize(self.a) > 0", "message": "m"}]}),
        ),
        (
            "a type error after non-ASCII text",
            "typep",
            json!({"type": "object", "properties": {"a": {"type": "integer"}, "s": {"type": "string", "maxLength": 8}},
                   "x-kubernetes-validations": [{"rule": "self.s == 'héllo wörld' && self.a == 'x'"}]}),
        ),
        (
            "a syntax error after non-ASCII text and a tab",
            "typeq",
            json!({"type": "object", "properties": {"s": {"type": "string", "maxLength": 8}},
                   "x-kubernetes-validations": [{"rule": "self.s == 'wörld' &&\t)"}]}),
        ),
        (
            "an int-or-string as the rule's value",
            "typem",
            json!({"type": "object", "properties": {"v": {"x-kubernetes-int-or-string": true}},
                   "x-kubernetes-validations": [{"rule": "self.v"}]}),
        ),
        (
            "a field of an object that keeps unknown fields",
            "typek",
            json!({"type": "object", "properties": {"free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
                   "x-kubernetes-validations": [{"rule": "self.free.anything == 'x'"}]}),
        ),
    ] {
        t.post(label, crds, &named_crd(name, spec)).await;
    }
    // Accepted by both: bounded versions of the refused rules, and the libraries.
    let crds_api = Api::<CustomResourceDefinition>::all(client);
    let dry_run = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    for (label, name, spec) in [
        (
            "a bounded list",
            "oka",
            list(Some((20, 63)), "self.names.all(x, x.matches('^[a-z]+$'))"),
        ),
        (
            "a bounded loop in a loop",
            "okb",
            list(
                Some((20, 63)),
                "self.names.all(a, self.names.all(b, a.startsWith(b)))",
            ),
        ),
        ("a bounded map", "okc", labels(Some((20, 63)))),
        (
            "a string rule under a bounded list",
            "okd",
            text(Some((20, 253))),
        ),
        ("nested lists within the total budget", "oke", nested_within),
        (
            "quantity",
            "okf",
            typed("quantity(self.s).isGreaterThan(quantity('1')) && isQuantity(self.s)"),
        ),
        (
            "url",
            "okg",
            typed(
                "isURL(self.s) && url(self.s).getHost() == 'a' && url(self.s).getQuery().size() == 0",
            ),
        ),
        (
            "ip and cidr",
            "okh",
            typed(
                "isIP(self.s) && ip(self.s).family() == 4 && cidr('10.0.0.0/8').containsIP(self.s)",
            ),
        ),
        (
            "regex",
            "oki",
            typed(
                "self.s.matches('^a') && self.s.find('a') == 'a' && self.s.findAll('a').size() > 0",
            ),
        ),
        (
            "lists and sets",
            "okj",
            typed("self.l.isSorted() && self.l.indexOf('a') >= 0 && sets.contains(self.l, ['a'])"),
        ),
        (
            "optionals",
            "okk",
            typed("optional.of(self.a).hasValue() && optional.none().orValue(1) == 1"),
        ),
        (
            "format",
            "okl",
            typed(
                "!format.dns1123Label().validate(self.s).hasValue() && format.named('uri').hasValue()",
            ),
        ),
        (
            "macros and strings",
            "okm",
            typed(
                "self.l.map(x, x.size()).all(n, n > 0) && self.l.exists_one(x, x == 'a') && self.s.split(',').size() > 0",
            ),
        ),
        (
            "transition rules, optionals, durations, timestamps and int-or-strings",
            "oko",
            json!({"type": "object", "properties": {
                "s": {"type": "string", "maxLength": 64,
                      "x-kubernetes-validations": [{"rule": "oldSelf.hasValue() ? oldSelf.value() == self : true", "optionalOldSelf": true}]},
                "d": {"type": "string", "format": "duration"}, "t": {"type": "string", "format": "date-time"},
                "v": {"x-kubernetes-int-or-string": true}},
                "x-kubernetes-validations": [
                    {"rule": "self.d > duration('1s') && self.t < timestamp('2030-01-01T00:00:00Z')"},
                    {"rule": "type(self.v) == int ? self.v > 1 : self.v.matches('^[0-9]+%$')"},
                    {"rule": "self.s == oldSelf.s", "messageExpression": "'was ' + oldSelf.s"}]}),
        ),
        (
            "numbers across types",
            "okn",
            typed(
                "self.a < 1.5 && 1u < 2 && self.a in [1, 2] && (has(self.s) ? self.s.lowerAscii() == self.s : true)",
            ),
        ),
    ] {
        let crd: CustomResourceDefinition =
            serde_json::from_value(named_crd(name, spec)).expect("a CRD");
        let answer = match crds_api.create(&dry_run, &crd).await {
            Ok(_) => json!("accepted"),
            Err(e) => json!(e.to_string()),
        };
        t.note(label, answer);
    }
    t
}
