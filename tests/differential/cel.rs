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

/// Rules as operators write them, over a realistic spec (bounded and unbounded fields, a root rule on
/// `metadata`, an embedded resource, a map list), each created with a dry run on both servers: both accept
/// the same ones and refuse the others with the same message.
#[tokio::test]
async fn cel_rules_as_written_in_the_wild() {
    run("cel_rules_as_written_in_the_wild", &[], rules_in_the_wild).await;
}

async fn rules_in_the_wild(client: Client, _ns: String) -> Transcript {
    let mut t = Transcript::new(client.clone());
    let spec = |rule: &str| {
        json!({"type": "object", "properties": {
            "replicas": {"type": "integer"}, "minReplicas": {"type": "integer"},
            "image": {"type": "string", "maxLength": 253}, "mode": {"type": "string", "enum": ["a", "b"]},
            "name": {"type": "string"}, "ratio": {"type": "number"}, "enabled": {"type": "boolean"},
            "timeout": {"type": "string", "format": "duration"}, "since": {"type": "string", "format": "date-time"},
            "memory": {"x-kubernetes-int-or-string": true},
            "hosts": {"type": "array", "maxItems": 16, "items": {"type": "string", "maxLength": 253}},
            "tags": {"type": "array", "items": {"type": "string"}},
            "labels": {"type": "object", "maxProperties": 32, "additionalProperties": {"type": "string", "maxLength": 63}},
            "annotations": {"type": "object", "additionalProperties": {"type": "string"}},
            "ports": {"type": "array", "maxItems": 8, "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                "items": {"type": "object", "required": ["name"], "properties": {
                    "name": {"type": "string", "maxLength": 15}, "port": {"type": "integer"}, "protocol": {"type": "string", "maxLength": 8}}}},
            "template": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}},
            "x-kubernetes-validations": [{"rule": rule}]})
    };
    let crds = Api::<CustomResourceDefinition>::all(client);
    let dry_run = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    let rules = [
        "self.minReplicas <= self.replicas",
        "!has(self.minReplicas) || self.minReplicas >= 0",
        "has(self.image) == has(self.name)",
        "self.image.matches('^[a-z0-9./-]+(:[a-z0-9.]+)?$')",
        "self.name.matches('^[a-z]+$')",
        "self.name.size() <= 63 && self.name.startsWith('a')",
        "self.mode in ['a', 'b']",
        "self.hosts.all(h, h.endsWith('.example.com'))",
        "self.tags.all(t, t.size() < 10)",
        "self.tags.exists(t, t == 'x')",
        "self.tags.size() <= 10",
        "self.hosts.filter(h, h.startsWith('a')).size() < 3",
        "self.hosts.map(h, h.size()).all(s, s > 0)",
        "self.labels.all(k, k.startsWith('app'))",
        "self.annotations.all(k, self.annotations[k].size() < 100)",
        "'app' in self.labels && self.labels['app'] != ''",
        "self.ports.all(p, p.port > 0 && p.port < 65536)",
        "self.ports.exists_one(p, p.name == 'http')",
        "self.ports.all(p, self.ports.exists_one(q, q.port == p.port))",
        "!has(self.ports) || self.ports.all(p, !has(p.protocol) || p.protocol in ['TCP', 'UDP'])",
        "self.ratio >= 0.0 && self.ratio <= 1.0",
        "self.ratio < 2",
        "self.enabled || self.replicas == 0",
        "self.timeout < duration('1h') && self.since > timestamp('2020-01-01T00:00:00Z')",
        "duration(self.name) > duration('0s')",
        "int(self.name) > 0 && string(self.replicas) != ''",
        "type(self.memory) == string ? quantity(self.memory).isLessThan(quantity('1Gi')) : self.memory < 1024",
        "self.template.apiVersion == 'v1' && self.template.kind == 'Pod' && self.template.metadata.name != ''",
        "self.template.spec.containers.size() > 0",
        "self.image.split(':').size() == 2 && self.image.split(':')[1] != 'latest'",
        "self.image.indexOf(':') > 0 && self.image.substring(0, 3) == 'reg' && self.image.charAt(0) == 'r'",
        "self.hosts.join(',').size() < 1000",
        "self.tags.join(',').size() < 1000",
        "self.annotations.exists(k, self.annotations[k].contains('x'))",
        "self.tags.all(a, self.tags.all(b, a == b))",
        "self.hosts.all(a, self.hosts.all(b, a.contains(b)))",
        "self.replicas == 1.0",
        "self.replicas + self.minReplicas > 2 && self.replicas * 2 < 100 && self.replicas % 2 == 0",
        "self.name + self.image != ''",
        "self.hosts + self.tags != []",
        "self.labels.exists(k, k == 'a') ? self.labels['a'] == 'b' : true",
        "self.hosts[0] == 'a'",
        "self.ports[0].port == 1",
        "self.labels.size() > 0 && size(self.hosts) > 0",
        "self.name.lowerAscii() == self.name && self.name.upperAscii() != '' && self.name.trim() == self.name",
        "self.name.replace('a', 'b') != ''",
        "self.hosts.isSorted() && self.hosts.sum() == ''",
        "[1, 2, 3].sum() == 6 && [self.replicas, 2].max() > 1",
        "lists.range(5).size() == 5 && self.hosts.slice(0, 1).size() <= 1 && self.hosts.reverse().size() >= 0",
        "self.hosts.distinct().size() == self.hosts.size() && self.hosts.sort() == self.hosts",
        "sets.equivalent(self.hosts, self.tags) && sets.intersects(self.hosts, ['a'])",
        "self.name.format([self.replicas]) != '' && strings.quote(self.name) != ''",
        "url(self.image).getScheme() == 'https' && url(self.image).getPort() == ''",
        "ip(self.name).isLoopback() && ip.isCanonical(self.name) && string(ip(self.name)) == self.name",
        "cidr(self.name).ip().family() == 4 && cidr(self.name).masked().prefixLength() == 8",
        "cidr(self.name).containsCIDR('10.0.0.0/24') && cidr(self.name).containsIP(ip('10.0.0.1'))",
        "semver(self.name).major() > 0 && isSemver(self.name, true)",
        "quantity(self.name).add(1).sub(quantity('1')).asInteger() > 0 && quantity(self.name).sign() == 1",
        "quantity(self.name).compareTo(quantity('1')) > 0 && quantity(self.name).asApproximateFloat() > 0.5",
        "format.named('dns1123Subdomain').value().validate(self.name).hasValue()",
        "self.since.getFullYear() > 2000 && self.since.getHours('UTC') < 24 && self.timeout.getSeconds() > 0",
        "self.name.startsWith(self.replicas)",
        "self.hosts.all(h, h)",
        "self.labels.size",
        "self.nope.size() > 0",
        "self.ports.all(p, p.nope > 0)",
        "self.name.exists(c, c == 'a')",
        "has(self.name.size)",
        "self.replicas.nope == 1",
        "self.name == 1 || self.replicas == 'a'",
        "dyn(self.name) == 1",
        "self.name.matches(self.image)",
        "self.tags.all(t, t.matches('^[a-z]+$'))",
        "self.annotations.all(k, self.annotations[k].matches('^[a-z]+$'))",
        "self.metadata.name.size() < 10",
        "size(self.image) < 10 && size(self.labels) < 10 && size(b'abc') == 3",
        "optional.ofNonZeroValue(self.name).or(optional.of('x')).value() != ''",
        "self.hosts.first().orValue('') != '' && self.hosts.last().hasValue()",
        // CEL's optional syntax, which kube-apiserver's environment enables.
        "self.?name.orValue('') != ''",
        "self.?labels.?app.orValue('x') != ''",
        "self.?ports.orValue([]).size() < 9",
        "self.hosts[?0].orValue('') != '' && self.labels[?'app'].hasValue()",
        "[?optional.of(1), ?optional.none()].size() == 1 && {?'a': optional.of(1)}.size() == 1",
        "self.?template.?spec.hasValue()",
        "self.?image.orValue('').size() < 100 && self.?tags.orValue([]).all(t, t.size() < 5)",
        "self.?annotations.orValue({}).all(k, k.matches('^[a-z]+$'))",
        "self.?nope.hasValue()",
        "self.?replicas.orValue('a') == 'a'",
        "self.?name.size() > 0",
        "self.?replicas.?x.hasValue()",
        "self.labels.exists(k, self.labels[k] == self.name)",
        "self.hosts.indexOf('a') == self.hosts.lastIndexOf('a')",
        "self.name.findAll('[a-z]', 2).size() < 3",
        "bytes(self.name).size() < 10 && string(bytes(self.name)) == self.name",
        "uint(self.replicas) > 1u && double(self.replicas) > 0.5",
        "timestamp(self.name) < self.since && self.since - duration('1h') < self.since",
        "-self.replicas < 0 && !self.enabled",
        "self.hosts.exists(h, h == self.name) == ('x' in self.hosts)",
        "sign(quantity(self.name)) == 1 && quantity(self.name).isInteger()",
        "self.hosts.min() != '' && self.ports.map(p, p.port).max() < 100",
        "self.hosts.sort().size() > 0 && self.tags.sort().size() >= 0",
        "[self.memory, 1].max() == 1",
        "self.name.matches('[') || self.image.matches('^a(')",
        "duration('1x') > self.timeout",
        "timestamp('yesterday') < self.since && timestamp(1) < self.since",
        "[1, 'a'].size() == 2 && {'a': 1, 'b': 'x'}.size() == 2",
        "[[1], ['a']].size() == 2",
        "self.hosts.all(h, h in ['a', self.name])",
        "optional.unwrap([optional.of(self.name)]).size() == 1 && [optional.of(1)].unwrapOpt().size() == 1",
        "optional.of(self.hosts)[0].hasValue() && optional.of(self.labels)['a'].orValue('') == ''",
        "self.hosts.unwrapOpt().size() == 0",
        "self.labels.all(k, v, k.startsWith('a') && v.size() < 10)",
        "self.hosts.exists(i, h, i > 0 && h == 'a') && self.hosts.existsOne(i, h, h == 'a')",
        "self.tags.all(i, t, t.matches('^[a-z]+$'))",
        "self.annotations.exists(k, v, v.contains(k))",
        "self.labels.all(k, v, v > 1)",
        "self.hosts.all(i, h, h)",
        "self.replicas.all(i, h, true)",
        "self.hosts.transformList(i, h, h.size()).all(s, s > 0)",
        "self.hosts.transformList(i, h, i > 0, h + 'x').size() >= 0",
        "self.labels.transformMap(k, v, v.size()).all(k, k != '')",
        "self.labels.transformMap(k, v, k != 'a', v + v).size() >= 0",
        "self.labels.transformMapEntry(k, v, {k + 'x': v}).size() >= 0",
        "self.tags.transformList(i, t, t.matches('^a')).size() > 0",
        "self.labels.transformMap(k, v, v > 1).size() > 0",
        "self.hosts.transformList(i, h, h, 1).size() > 0",
        "cel.bind(x, self.name, x.size() > 0)",
    ];
    // Rules whose estimated cost lands near the budget, to compare the estimates' factors.
    let costly = |rule: &str| {
        json!({"type": "object", "properties": {"items": {"type": "array", "items": {
            "type": "object", "required": ["name"], "properties": {
                "name": {"type": "string"}, "value": {"type": "integer"}, "short": {"type": "string", "maxLength": 20},
                "tags": {"type": "array", "maxItems": 5, "items": {"type": "string", "maxLength": 10}},
                "labels": {"type": "object", "maxProperties": 4, "additionalProperties": {"type": "string", "maxLength": 8}},
                "data": {"type": "string", "format": "byte"}, "any": {"x-kubernetes-int-or-string": true}},
            "x-kubernetes-validations": [{"rule": rule}]}}}})
    };
    let costly_rules = [
        "self.name.size() < 10",
        "self.name.startsWith('a') && self.name.endsWith('z')",
        "self.name.contains('-')",
        "self.name == 'x' || self.short == 'y'",
        "self.name + self.short != ''",
        "self.short.matches('^[a-z]+$')",
        "self.tags.all(t, t.matches('^[a-z]+$'))",
        "self.tags.exists(t, t == self.short)",
        "self.tags.map(t, t + '-').size() > 0",
        "self.tags.filter(t, t.size() > 2).size() > 0",
        "self.labels.all(k, self.labels[k].size() < 5)",
        "self.short in self.tags",
        "self.tags.join(',').size() < 100",
        "self.short.split(',').size() < 3",
        "self.short.lowerAscii().upperAscii() == self.short",
        "self.short.replace('a', 'bb').size() < 30",
        "self.short.replace('', 'xyz').size() < 30",
        "self.short.substring(1) != '' && self.short.trim() != ''",
        "self.short.indexOf('a') >= 0 && self.short.lastIndexOf('a') >= 0",
        "self.short.find('[0-9]+') != '' && self.short.findAll('[a-z]').size() > 0",
        "isURL(self.short) && url(self.short).getHost() != ''",
        "isIP(self.short) && ip(self.short).isGlobalUnicast()",
        "isCIDR(self.short) && cidr(self.short).containsIP(self.short) && cidr(self.short).containsCIDR(self.short)",
        "isQuantity(self.short) && quantity(self.short) == quantity('1')",
        "isSemver(self.short) && semver(self.short).isGreaterThan(semver('1.0.0'))",
        "format.dns1123Label().validate(self.short) == optional.none()",
        "format.named('dns1123Label').value().validate(self.name).hasValue()",
        "size(self.data) < 10 && self.data == b'abc'",
        "self.any == 1 || string(self.any) == 'x'",
        "[self.short, 'a'].exists(x, x == 'a') && {'a': self.short}['a'] != ''",
        "self.value > 0 ? self.tags.size() > 1 : self.labels.size() > 1",
        "sets.contains(self.tags, [self.short]) && self.tags.sort() == self.tags",
        "self.tags.distinct().size() == self.tags.size() && self.tags.reverse().size() > 0",
        "self.tags.slice(0, 2).size() == 2 && lists.range(3).size() == 3",
        "self.tags.isSorted() && self.tags.min() != self.tags.max()",
        "url('https://a.b') == url(self.short)",
        "ip(self.short) == ip('1.2.3.4') && cidr(self.short) == cidr('1.2.3.0/24')",
        "format.dns1123Label() == format.named('x').value()",
        "self.short.format([1, 'a']) != '' && strings.quote(self.short) != ''",
        "bytes(self.short).size() > 0 && string(self.data) != ''",
        "self.tags.all(a, self.tags.all(b, a != b || a == b))",
        "self.name.matches(self.short)",
        "self.tags.exists(i, t, t == self.short)",
        "self.labels.all(k, v, v.matches('^[a-z]+$') && k.size() > 0)",
        "self.tags.existsOne(i, t, i == 0 && t == self.short)",
        "self.tags.transformList(i, t, t + self.short).size() > 0",
        "self.labels.transformMap(k, v, k + v).all(x, x != '')",
        "self.labels.transformMapEntry(k, v, {v: k}).size() > 0",
    ];
    for (i, rule) in costly_rules.into_iter().enumerate() {
        let crd: CustomResourceDefinition =
            serde_json::from_value(named_crd(&format!("costly{i}"), costly(rule))).expect("a CRD");
        let answer = match crds.create(&dry_run, &crd).await {
            Ok(_) => json!("accepted"),
            Err(e) => json!(e.to_string()),
        };
        t.note(rule, answer);
    }
    for (i, rule) in rules.into_iter().enumerate() {
        let crd: CustomResourceDefinition =
            serde_json::from_value(named_crd(&format!("wild{i}"), spec(rule))).expect("a CRD");
        let answer = match crds.create(&dry_run, &crd).await {
            Ok(_) => json!("accepted"),
            Err(e) => json!(e.to_string()),
        };
        t.note(rule, answer);
    }
    t
}
