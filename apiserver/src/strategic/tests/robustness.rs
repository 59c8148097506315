//! Tests that odd and generated patches never panic or leave directives behind.

use super::*;

#[test]
fn odd_inputs_never_panic() {
    let originals = [
        json!({}),
        json!({"metadata": {"finalizers": ["a", "b"], "labels": {"a": "1"}}}),
        json!({"spec": {"containers": [{"name": "a", "env": [{"name": "X"}]}, {"image": "nameless"}], "tolerations": [1]}}),
        json!({"spec": {"containers": "not a list", "volumes": [[1]]}, "status": {"conditions": [{"type": "A"}, null]}}),
        json!({"metadata": null, "spec": {"template": {"spec": {"containers": [{"name": 1}, {"name": 1.5}]}}}}),
        json!([1, 2, 3]),
        json!("scalar"),
        Value::Null,
    ];
    let patches = [
        json!({}),
        Value::Null,
        json!([]),
        json!(["x"]),
        json!(42),
        json!({"$patch": null}),
        json!({"$patch": ["replace"]}),
        json!({"$retainKeys": null}),
        json!({"$retainKeys": [1, null, "spec"], "spec": null}),
        json!({"$setElementOrder/": []}),
        json!({"$setElementOrder/spec": [1], "spec": {"a": 1}}),
        json!({"$deleteFromPrimitiveList/": [1]}),
        json!({"$deleteFromPrimitiveList/metadata": {"finalizers": ["a"]}}),
        json!({"$deleteFromPrimitiveList/metadata": "x"}),
        json!({"metadata": {"$deleteFromPrimitiveList/finalizers": null}}),
        json!({"metadata": {"$deleteFromPrimitiveList/finalizers": [{"a": 1}]}}),
        json!({"metadata": {"$setElementOrder/finalizers": [{"name": "a"}], "finalizers": null}}),
        json!({"metadata": {"$setElementOrder/finalizers": [], "finalizers": []}}),
        json!({"metadata": {"$setElementOrder/ownerReferences": [{"uid": "1"}, "x"], "ownerReferences": [{"uid": "1"}]}}),
        json!({"metadata": {"finalizers": [null, null], "labels": {"$patch": "delete", "x": null}}}),
        json!({"metadata": {"ownerReferences": [{"$patch": "replace"}, {"$patch": "delete", "uid": null}]}}),
        json!({"spec": {"containers": [{"name": "a", "env": [{"name": "X", "$patch": "delete"}, {"name": null}]}]}}),
        json!({"spec": {"containers": [{"name": 1}, {"name": "a", "$retainKeys": ["name"]}]}}),
        json!({"spec": {"containers": [[{"name": "a"}]], "volumes": [{"name": "v", "$patch": "replace"}]}}),
        json!({"spec": {"containers": [{"$setElementOrder/env": [{"name": "X"}], "name": "a", "env": [{"name": "X"}]}]}}),
        json!({"spec": {"tolerations": [{"$patch": "delete"}], "containers": null}}),
        json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "ports": [{"containerPort": null}]}]}}}}),
        json!({"status": {"conditions": [null, {"type": "A", "status": null}]}}),
        json!({"status": {"$setElementOrder/conditions": [{"type": "A"}], "conditions": [{"type": "B"}]}}),
        json!({"status": {"conditions": {"$patch": "replace"}}}),
        json!({"spec": {"selector": {"$patch": "delete"}, "strategy": {"$retainKeys": ["type"], "$patch": "replace"}}}),
    ];
    let kinds = [
        ("", "Pod"),
        ("", "ConfigMap"),
        ("apps", "Deployment"),
        ("batch", "CronJob"),
        ("", "Service"),
        ("policy", "PodDisruptionBudget"),
        ("example.com", "Widget"),
    ];
    for (group, kind) in kinds {
        for original in &originals {
            for patch in &patches {
                if let Ok(out) = apply(group, kind, original, patch) {
                    assert_no_directives(&out);
                }
            }
        }
    }
}

#[test]
fn generated_patches_never_panic_or_leave_directives() {
    // A small deterministic generator of JSON trees sprinkled with directives.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }
    const KEYS: &[&str] = &[
        "metadata",
        "spec",
        "status",
        "template",
        "containers",
        "env",
        "ports",
        "finalizers",
        "ownerReferences",
        "conditions",
        "name",
        "uid",
        "type",
        "port",
        "containerPort",
        "image",
        "$patch",
        "$retainKeys",
        "$setElementOrder/containers",
        "$setElementOrder/finalizers",
        "$deleteFromPrimitiveList/finalizers",
        "$deleteFromPrimitiveList/args",
    ];
    fn gen_value(rng: &mut Rng, depth: u32) -> Value {
        let choice = if depth == 0 { rng.next(5) } else { rng.next(8) };
        match choice {
            0 => Value::Null,
            1 => json!(rng.next(3)),
            2 => json!(["a", "b", "c", "replace", "delete"][rng.next(5) as usize]),
            3 => json!(rng.next(2) == 0),
            4 => json!(["name", "type", "a"][rng.next(3) as usize]),
            5 | 6 => {
                let mut map = Map::new();
                for _ in 0..rng.next(4) {
                    let key = KEYS[rng.next(KEYS.len() as u64) as usize];
                    map.insert(key.to_string(), gen_value(rng, depth - 1));
                }
                Value::Object(map)
            }
            _ => Value::Array(
                (0..rng.next(4))
                    .map(|_| gen_value(rng, depth - 1))
                    .collect(),
            ),
        }
    }
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for _ in 0..3000 {
        let original = gen_value(&mut rng, 5);
        let patch = gen_value(&mut rng, 5);
        for (group, kind) in [("", "Pod"), ("apps", "Deployment"), ("", "Service")] {
            if let Ok(out) = apply(group, kind, &original, &patch) {
                // The original may carry directive-like keys itself; only check patches
                // against directive-free originals.
                if !has_directive(&original) {
                    assert_no_directives(&out);
                }
            }
        }
    }

    fn has_directive(value: &Value) -> bool {
        match value {
            Value::Object(map) => map
                .iter()
                .any(|(k, v)| is_directive_key(k) || has_directive(v)),
            Value::Array(items) => items.iter().any(has_directive),
            _ => false,
        }
    }
}
