//! Tests of server-side apply: removing fields, pruning and list merges.

use super::*;

#[test]
fn dropping_a_field_removes_it_unless_someone_else_owns_it() {
    let mut cfg = deployment(2, "nginx:1");
    cfg["metadata"]["labels"] = json!({"app": "web", "tier": "front"});
    cfg["metadata"]["annotations"] = json!({"note": "x"});
    let obj = apply_ok(None, &cfg, "alice", Scope::Main, T0);
    // bob shares replicas.
    let obj = apply_ok(
        Some(&obj),
        &json!({"metadata": {"name": "web"}, "spec": {"replicas": 2}}),
        "bob",
        Scope::Main,
        T1,
    );
    // alice drops tier, the annotations and replicas.
    let mut cfg2 = deployment(2, "nginx:1");
    cfg2["spec"].as_object_mut().unwrap().remove("replicas");
    let obj = apply_ok(Some(&obj), &cfg2, "alice", Scope::Main, T2);
    assert_eq!(obj["metadata"]["labels"], json!({"app": "web"}));
    assert!(obj["metadata"].get("annotations").is_none());
    assert_eq!(obj["spec"]["replicas"], 2, "bob still owns it");
    assert!(
        fields(&obj, "alice", "Apply")["f:spec"]
            .get("f:replicas")
            .is_none()
    );
    // bob drops it too: nobody owns it any more, it goes away and bob's entry is dropped.
    let obj = apply_ok(
        Some(&obj),
        &json!({"metadata": {"name": "web"}}),
        "bob",
        Scope::Main,
        T3,
    );
    assert!(obj["spec"].get("replicas").is_none());
    assert!(entry(&obj, "bob", "Apply").is_none());
    assert_eq!(managers(&obj), ["alice/Apply"]);
    // Applying nothing removes everything alice applied (and the emptied maps).
    let obj = apply_ok(
        Some(&obj),
        &json!({"metadata": {"name": "web"}}),
        "alice",
        Scope::Main,
        T3,
    );
    assert_eq!(
        obj,
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"}})
    );
}

#[test]
fn unowned_fields_survive_pruning() {
    let obj = apply_ok(
        None,
        &json!({"metadata": {"name": "a"}, "spec": {"x": 1, "y": 2}}),
        "alice",
        Scope::Whole,
        T0,
    );
    let mut obj = obj;
    obj["spec"]["unowned"] = json!(true);
    let obj = apply_ok(
        Some(&obj),
        &json!({"metadata": {"name": "a"}, "spec": {"x": 1}}),
        "alice",
        Scope::Whole,
        T1,
    );
    assert_eq!(obj["spec"], json!({"x": 1, "unowned": true}));
}

#[test]
fn associative_list_merge_and_item_removal() {
    let cfg =
        |containers: Value| json!({"metadata": {"name": "p"}, "spec": {"containers": containers}});
    let obj = apply_ok(
        None,
        &cfg(json!([
            {"name": "app", "image": "app:1", "env": [{"name": "A", "value": "1"}], "args": ["x", "y"]},
            {"name": "sidecar", "image": "side:1"}
        ])),
        "alice",
        Scope::Whole,
        T0,
    );
    // bob adds his own container and an env var to alice's container.
    let obj = apply_ok(
        Some(&obj),
        &cfg(json!([
            {"name": "app", "env": [{"name": "B", "value": "2"}]},
            {"name": "logger", "image": "log:1"}
        ])),
        "bob",
        Scope::Whole,
        T1,
    );
    assert_eq!(
        obj["spec"]["containers"],
        json!([
            {"name": "app", "image": "app:1", "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}], "args": ["x", "y"]},
            {"name": "sidecar", "image": "side:1"},
            {"name": "logger", "image": "log:1"}
        ])
    );
    assert_eq!(
        fields(&obj, "bob", "Apply").to_string(),
        r#"{"f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:env":{"k:{\"name\":\"B\"}":{".":{},"f:name":{},"f:value":{}}},"f:name":{}},"k:{\"name\":\"logger\"}":{".":{},"f:image":{},"f:name":{}}}}}"#
    );
    // alice drops the sidecar, env A and replaces the atomic args: the sidecar goes away, the
    // app container stays (bob owns it too).
    let obj = apply_ok(
        Some(&obj),
        &cfg(json!([{"name": "app", "image": "app:2", "args": ["z"]}])),
        "alice",
        Scope::Whole,
        T2,
    );
    assert_eq!(
        obj["spec"]["containers"],
        json!([
            {"name": "app", "image": "app:2", "env": [{"name": "B", "value": "2"}], "args": ["z"]},
            {"name": "logger", "image": "log:1"}
        ])
    );
    // bob drops everything: app stays for alice, env goes away, logger goes away.
    let obj = apply_ok(
        Some(&obj),
        &json!({"metadata": {"name": "p"}}),
        "bob",
        Scope::Whole,
        T3,
    );
    assert_eq!(
        obj["spec"]["containers"],
        json!([{"name": "app", "image": "app:2", "args": ["z"]}])
    );
}

#[test]
fn associative_list_order_follows_structured_merge_diff() {
    let cfg = |names: &[&str]| {
        json!({"metadata": {"name": "p"}, "spec": {"containers":
        names.iter().map(|n| json!({"name": n})).collect::<Vec<_>>()}})
    };
    let live = apply_ok(None, &cfg(&["a", "b", "c"]), "alice", Scope::Whole, T0);
    let names = |obj: &Value| -> Vec<String> {
        obj["spec"]["containers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        names(&apply_ok(
            Some(&live),
            &cfg(&["b", "x"]),
            "bob",
            Scope::Whole,
            T1
        )),
        ["a", "b", "c", "x"]
    );
    assert_eq!(
        names(&apply_ok(
            Some(&live),
            &cfg(&["x", "b"]),
            "bob",
            Scope::Whole,
            T1
        )),
        ["a", "x", "b", "c"]
    );
    assert_eq!(
        names(&apply_ok(
            Some(&live),
            &cfg(&["c", "a"]),
            "bob",
            Scope::Whole,
            T1
        )),
        ["b", "c", "a"]
    );
}

#[test]
fn set_list_finalizers() {
    let cfg = |f: Value| json!({"metadata": {"name": "p", "finalizers": f}});
    let obj = apply_ok(
        None,
        &cfg(json!(["a.io/x", "a.io/y"])),
        "alice",
        Scope::Whole,
        T0,
    );
    assert_eq!(
        fields(&obj, "alice", "Apply").to_string(),
        r#"{"f:metadata":{"f:finalizers":{"v:\"a.io/x\"":{},"v:\"a.io/y\"":{}}}}"#
    );
    // Union; like structured-merge-diff, a new item goes before the next shared one.
    let obj = apply_ok(
        Some(&obj),
        &cfg(json!(["b.io/z", "a.io/x"])),
        "bob",
        Scope::Whole,
        T1,
    );
    assert_eq!(
        obj["metadata"]["finalizers"],
        json!(["b.io/z", "a.io/x", "a.io/y"])
    );
    let obj = apply_ok(
        Some(&obj),
        &cfg(json!(["a.io/x", "b.io/z", "b.io/w"])),
        "bob",
        Scope::Whole,
        T1,
    );
    assert_eq!(
        obj["metadata"]["finalizers"],
        json!(["a.io/x", "a.io/y", "b.io/z", "b.io/w"])
    );
    // alice drops both of hers: x stays (bob owns it), y goes.
    let obj = apply_ok(
        Some(&obj),
        &json!({"metadata": {"name": "p"}}),
        "alice",
        Scope::Whole,
        T2,
    );
    assert_eq!(
        obj["metadata"]["finalizers"],
        json!(["a.io/x", "b.io/z", "b.io/w"])
    );
    assert!(entry(&obj, "alice", "Apply").is_none());
    // A controller removes a finalizer with an update: it leaves bob's set.
    let mut new = obj.clone();
    new["metadata"]["finalizers"] = json!(["b.io/z", "b.io/w"]);
    update(
        Some(&obj),
        &mut new,
        "ctrl",
        "v1",
        Scope::Whole,
        &TestSchema,
        T3,
    );
    assert_eq!(
        fields(&new, "bob", "Apply").to_string(),
        r#"{"f:metadata":{"f:finalizers":{"v:\"b.io/w\"":{},"v:\"b.io/z\"":{}}}}"#
    );
    assert!(
        entry(&new, "ctrl", "Update").is_none(),
        "removing fields owns nothing"
    );
}
