//! Tests of lists merged by key, atomic lists and primitive lists.

use super::*;

#[test]
fn deployment_containers_merge_by_name() {
    let original = deployment(json!([
        {"name": "app", "image": "app:1", "ports": [{"containerPort": 80, "protocol": "TCP"}]},
        {"name": "sidecar", "image": "sidecar:1"}
    ]));
    let patch = json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "app:2"}]}}}});
    let out = smp("apps", "Deployment", original, patch);
    assert_eq!(
        containers_of(&out),
        &json!([
            {"name": "app", "image": "app:2", "ports": [{"containerPort": 80, "protocol": "TCP"}]},
            {"name": "sidecar", "image": "sidecar:1"}
        ])
    );
    assert_eq!(out["spec"]["replicas"], json!(1));
    assert_eq!(out["metadata"]["labels"], json!({"app": "web"}));
}

#[test]
fn env_merges_by_name_inside_a_container() {
    let original = deployment(json!([{
        "name": "app",
        "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]
    }]));
    let patch = json!({"spec": {"template": {"spec": {"containers": [{
        "name": "app",
        "env": [{"name": "B", "value": "3"}]
    }]}}}});
    let out = smp("apps", "Deployment", original, patch);
    assert_eq!(
        containers_of(&out)[0]["env"],
        json!([{"name": "A", "value": "1"}, {"name": "B", "value": "3"}])
    );
}

#[test]
fn env_value_from_replaces_value_with_null() {
    let original = deployment(json!([{"name": "app", "env": [{"name": "A", "value": "1"}]}]));
    let patch = json!({"spec": {"template": {"spec": {"containers": [{
        "name": "app",
        "env": [{"name": "A", "value": null, "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}]
    }]}}}});
    let out = smp("apps", "Deployment", original, patch);
    assert_eq!(
        containers_of(&out)[0]["env"],
        json!([{"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}])
    );
}

#[test]
fn new_items_follow_apimachinery_ordering() {
    // An item the patch names alone goes in front of the server's items ...
    let original = deployment(json!([{"name": "a"}, {"name": "b"}]));
    let patch = json!({"spec": {"template": {"spec": {"containers": [{"name": "c"}]}}}});
    let out = smp("apps", "Deployment", original.clone(), patch);
    assert_eq!(names(containers_of(&out)), ["c", "a", "b"]);

    // ... but after the server items that preceded an item the patch also names.
    let patch =
        json!({"spec": {"template": {"spec": {"containers": [{"name": "b"}, {"name": "c"}]}}}});
    let out = smp("apps", "Deployment", original, patch);
    assert_eq!(names(containers_of(&out)), ["a", "b", "c"]);
}

#[test]
fn patch_order_wins_for_named_items() {
    let original = deployment(json!([{"name": "1"}, {"name": "2", "image": "b"}, {"name": "3"}]));
    let patch = json!({"spec": {"template": {"spec": {"containers": [
        {"name": "3", "image": "c"}, {"name": "1", "image": "a"}
    ]}}}});
    let out = smp("apps", "Deployment", original, patch);
    assert_eq!(
        containers_of(&out),
        &json!([{"name": "2", "image": "b"}, {"name": "3", "image": "c"}, {"name": "1", "image": "a"}])
    );
}

#[test]
fn new_list_items_lose_nulls_and_directives() {
    let original = deployment(json!([{"name": "a"}]));
    let patch = json!({"spec": {"template": {"spec": {"containers": [{
        "name": "a",
        "volumeMounts": [{"mountPath": "/data", "name": "data", "readOnly": null}],
        "env": [{"name": "X", "value": "1", "$patch": "delete"}]
    }]}}}});
    let out = smp("apps", "Deployment", original, patch);
    assert_eq!(
        containers_of(&out)[0]["volumeMounts"],
        json!([{"mountPath": "/data", "name": "data"}])
    );
    assert_eq!(containers_of(&out)[0]["env"], json!([]));
    assert_no_directives(&out);
}

#[test]
fn service_ports_merge_by_port() {
    let original = json!({
        "metadata": {"name": "svc"},
        "spec": {"ports": [
            {"name": "http", "port": 80, "targetPort": 8080, "protocol": "TCP"},
            {"name": "https", "port": 443, "targetPort": 8443, "protocol": "TCP"}
        ]}
    });
    let patch = json!({"spec": {"ports": [{"port": 80, "targetPort": 9090}]}});
    let out = smp("", "Service", original, patch);
    assert_eq!(
        out["spec"]["ports"],
        json!([
            {"name": "http", "port": 80, "targetPort": 9090, "protocol": "TCP"},
            {"name": "https", "port": 443, "targetPort": 8443, "protocol": "TCP"}
        ])
    );
}

#[test]
fn container_ports_merge_by_container_port_only() {
    // SMP keys container ports by containerPort alone, so UDP 53 merges into TCP 53.
    let original = json!({"spec": {"containers": [{"name": "dns", "ports": [{"containerPort": 53, "protocol": "TCP"}]}]}});
    let patch = json!({"spec": {"containers": [{"name": "dns", "ports": [{"containerPort": 53, "protocol": "UDP"}]}]}});
    let out = smp("", "Pod", original, patch);
    assert_eq!(
        out["spec"]["containers"][0]["ports"],
        json!([{"containerPort": 53, "protocol": "UDP"}])
    );
}

#[test]
fn merge_keys_compare_numbers_by_json_type() {
    // 80.0 is a float and does not match the integer 80, as in Go.
    let original = json!({"spec": {"ports": [{"port": 80, "name": "a"}]}});
    let out = smp(
        "",
        "Service",
        original,
        json!({"spec": {"ports": [{"port": 80.0, "name": "b"}]}}),
    );
    assert_eq!(out["spec"]["ports"].as_array().map(Vec::len), Some(2));
}

#[test]
fn owner_references_merge_by_uid() {
    let original = json!({"metadata": {"name": "cm", "ownerReferences": [
        {"uid": "1", "name": "a", "kind": "X", "apiVersion": "v1"},
        {"uid": "2", "name": "b", "kind": "X", "apiVersion": "v1"}
    ]}});
    let patch = json!({"metadata": {"ownerReferences": [{"uid": "2", "controller": true}, {"$patch": "delete", "uid": "1"}]}});
    let out = smp("", "ConfigMap", original, patch);
    assert_eq!(
        out["metadata"]["ownerReferences"],
        json!([{"uid": "2", "name": "b", "kind": "X", "apiVersion": "v1", "controller": true}])
    );
}

#[test]
fn conditions_merge_by_type() {
    let original = json!({"status": {"conditions": [
        {"type": "Ready", "status": "False"},
        {"type": "PodScheduled", "status": "True"}
    ]}});
    let patch = json!({"status": {"conditions": [{"type": "Ready", "status": "True"}]}});
    for (group, kind) in [
        ("", "Pod"),
        ("apps", "Deployment"),
        ("batch", "Job"),
        ("", "Namespace"),
        ("", "Node"),
    ] {
        let out = smp(group, kind, original.clone(), patch.clone());
        assert_eq!(
            out["status"]["conditions"],
            json!([{"type": "Ready", "status": "True"}, {"type": "PodScheduled", "status": "True"}]),
            "{group}/{kind}"
        );
    }
}

#[test]
fn crd_conditions_have_no_patch_strategy() {
    let original = json!({"status": {"conditions": [{"type": "Established", "status": "True"}]}});
    let patch = json!({"status": {"conditions": [{"type": "NamesAccepted", "status": "True"}]}});
    let out = smp(
        "apiextensions.k8s.io",
        "CustomResourceDefinition",
        original,
        patch,
    );
    assert_eq!(
        out["status"]["conditions"],
        json!([{"type": "NamesAccepted", "status": "True"}])
    );
}

#[test]
fn cronjob_pod_template_is_reached() {
    let original = json!({"spec": {"jobTemplate": {"spec": {"template": {"spec": {"containers": [
        {"name": "a", "image": "a:1"}, {"name": "b", "image": "b:1"}
    ]}}}}}});
    let patch = json!({"spec": {"jobTemplate": {"spec": {"template": {"spec": {"containers": [
        {"name": "b", "image": "b:2"}
    ]}}}}}});
    let out = smp("batch", "CronJob", original, patch);
    assert_eq!(
        out["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"],
        json!([{"name": "a", "image": "a:1"}, {"name": "b", "image": "b:2"}])
    );
}

#[test]
fn service_account_secrets_and_volumes_merge_by_name() {
    let original = json!({"secrets": [{"name": "a"}, {"name": "b"}]});
    let out = smp(
        "",
        "ServiceAccount",
        original,
        json!({"secrets": [{"name": "b", "namespace": "x"}]}),
    );
    assert_eq!(
        out["secrets"],
        json!([{"name": "a"}, {"name": "b", "namespace": "x"}])
    );

    let original = json!({"spec": {"volumes": [{"name": "a", "emptyDir": {}}, {"name": "b", "emptyDir": {}}]}});
    let out = smp(
        "",
        "Pod",
        original,
        json!({"spec": {"volumes": [{"name": "b", "emptyDir": {"medium": "Memory"}}]}}),
    );
    assert_eq!(
        out["spec"]["volumes"],
        json!([{"name": "a", "emptyDir": {}}, {"name": "b", "emptyDir": {"medium": "Memory"}}])
    );
}

#[test]
fn atomic_lists_are_replaced() {
    let original = json!({"spec": {
        "tolerations": [{"key": "a", "operator": "Exists"}],
        "containers": [{"name": "c", "args": ["--a", "--b"], "command": ["run"]}]
    }});
    let patch = json!({"spec": {
        "tolerations": [{"key": "b", "operator": "Exists"}],
        "containers": [{"name": "c", "args": ["--c"]}]
    }});
    let out = smp("", "Pod", original, patch);
    assert_eq!(
        out["spec"]["tolerations"],
        json!([{"key": "b", "operator": "Exists"}])
    );
    assert_eq!(out["spec"]["containers"][0]["args"], json!(["--c"]));
    assert_eq!(out["spec"]["containers"][0]["command"], json!(["run"]));
}

#[test]
fn rbac_and_endpoints_lists_are_replaced() {
    let original = json!({"rules": [{"verbs": ["get"]}, {"verbs": ["list"]}]});
    let out = smp(
        "rbac.authorization.k8s.io",
        "ClusterRole",
        original,
        json!({"rules": [{"verbs": ["watch"]}]}),
    );
    assert_eq!(out["rules"], json!([{"verbs": ["watch"]}]));

    let original = json!({"subsets": [{"addresses": [{"ip": "1.1.1.1"}]}]});
    let out = smp(
        "",
        "Endpoints",
        original,
        json!({"subsets": [{"ports": [{"port": 1}]}]}),
    );
    assert_eq!(out["subsets"], json!([{"ports": [{"port": 1}]}]));
}

#[test]
fn replaced_atomic_lists_lose_directive_keys() {
    let original = json!({"spec": {"tolerations": [{"key": "a"}]}});
    let patch = json!({"spec": {"tolerations": [{"key": "b", "$patch": "delete", "value": null}]}});
    let out = smp("", "Pod", original, patch);
    assert_eq!(out["spec"]["tolerations"], json!([{"key": "b"}]));
}

#[test]
fn pdb_selector_has_replace_strategy() {
    let original = json!({"spec": {"selector": {"matchLabels": {"a": "1"}}, "minAvailable": 1}});
    let patch = json!({"spec": {"selector": {"matchLabels": {"b": "2"}}}});
    let out = smp("policy", "PodDisruptionBudget", original, patch);
    assert_eq!(
        out["spec"],
        json!({"selector": {"matchLabels": {"b": "2"}}, "minAvailable": 1})
    );
}

#[test]
fn finalizers_union_without_duplicates() {
    let original = json!({"metadata": {"name": "x", "finalizers": ["a", "b"]}});
    let out = smp(
        "",
        "ConfigMap",
        original.clone(),
        json!({"metadata": {"finalizers": ["b", "c"]}}),
    );
    assert_eq!(out["metadata"]["finalizers"], json!(["a", "b", "c"]));
    // Like apimachinery, a value the patch names alone goes first.
    let out = smp(
        "",
        "ConfigMap",
        original,
        json!({"metadata": {"finalizers": ["c"]}}),
    );
    assert_eq!(out["metadata"]["finalizers"], json!(["c", "a", "b"]));
}

#[test]
fn finalizers_union_applies_to_unknown_builtin_kinds() {
    let original = json!({"metadata": {"finalizers": ["a"]}});
    let out = smp(
        "coordination.k8s.io",
        "Lease",
        original,
        json!({"metadata": {"finalizers": ["a", "b"]}}),
    );
    assert_eq!(out["metadata"]["finalizers"], json!(["a", "b"]));
}

#[test]
fn delete_from_primitive_list() {
    let original = json!({"metadata": {"finalizers": ["a", "b", "c"]}});
    let patch = json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["b", "zzz"]}});
    let out = smp("", "Secret", original, patch);
    assert_eq!(out, json!({"metadata": {"finalizers": ["a", "c"]}}));
}

#[test]
fn delete_from_primitive_list_of_a_missing_field_adds_nothing() {
    let original = json!({"metadata": {"name": "x"}});
    let out = smp(
        "",
        "Secret",
        original.clone(),
        json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]}}),
    );
    assert_eq!(out, original);
}

#[test]
fn delete_from_primitive_list_works_on_atomic_lists_too() {
    let original = json!({"spec": {"containers": [{"name": "c", "args": ["1", "2", "3"]}]}});
    let patch =
        json!({"spec": {"containers": [{"name": "c", "$deleteFromPrimitiveList/args": ["2"]}]}});
    let out = smp("", "Pod", original, patch);
    assert_eq!(out["spec"]["containers"][0]["args"], json!(["1", "3"]));
}

#[test]
fn delete_and_add_in_one_patch() {
    let original = json!({"metadata": {"finalizers": ["a", "b"]}});
    let patch =
        json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"], "finalizers": ["c"]}});
    let out = smp("", "ConfigMap", original, patch);
    assert_eq!(out["metadata"]["finalizers"], json!(["c", "b"]));
}

#[test]
fn node_pod_cidrs_are_a_set() {
    let original = json!({"spec": {"podCIDRs": ["10.0.0.0/24"]}});
    let out = smp(
        "",
        "Node",
        original,
        json!({"spec": {"podCIDRs": ["10.0.0.0/24", "fd00::/64"]}}),
    );
    assert_eq!(out["spec"]["podCIDRs"], json!(["10.0.0.0/24", "fd00::/64"]));
}
