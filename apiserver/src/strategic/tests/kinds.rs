//! Tests of which kinds support strategic merge patch, and of the list types for server-side apply.

use super::*;

#[test]
fn custom_kinds_are_refused() {
    let err = smp_err("example.com", "Widget", json!({}), json!({"spec": {}}));
    assert!(matches!(err, PatchError::Unsupported { .. }));
    assert_eq!(err.status_code(), 415);
    assert_eq!(err.reason(), "UnsupportedMediaType");
    assert!(
        err.to_string()
            .starts_with("the body of the request was in an unknown format")
    );
    assert!(!supports_strategic_merge_patch(
        "monitoring.coreos.com",
        "Prometheus"
    ));
    assert!(supports_strategic_merge_patch("", "ConfigMap"));
    assert!(supports_strategic_merge_patch("events.k8s.io", "Event"));
}

#[test]
fn builtin_list_types_for_server_side_apply() {
    let map = |keys: &[&str]| ListType::Map(keys.iter().map(|k| (*k).to_string()).collect());
    let pod_spec_prefixes: [(&str, &str, &[&str]); 7] = [
        ("", "Pod", &["spec"]),
        ("apps", "Deployment", &["spec", "template", "spec"]),
        ("apps", "StatefulSet", &["spec", "template", "spec"]),
        ("apps", "DaemonSet", &["spec", "template", "spec"]),
        ("apps", "ReplicaSet", &["spec", "template", "spec"]),
        ("batch", "Job", &["spec", "template", "spec"]),
        (
            "batch",
            "CronJob",
            &["spec", "jobTemplate", "spec", "template", "spec"],
        ),
    ];
    for (group, kind, prefix) in pod_spec_prefixes {
        let at = |rest: &[&str]| {
            let path: Vec<&str> = prefix.iter().chain(rest.iter()).copied().collect();
            builtin_list_type(group, kind, &path)
        };
        for list in ["containers", "initContainers", "ephemeralContainers"] {
            assert_eq!(at(&[list]), map(&["name"]), "{kind} {list}");
            assert_eq!(at(&[list, "ports"]), map(&["containerPort", "protocol"]));
            assert_eq!(at(&[list, "env"]), map(&["name"]));
            assert_eq!(at(&[list, "volumeMounts"]), map(&["mountPath"]));
            assert_eq!(at(&[list, "volumeDevices"]), map(&["devicePath"]));
            assert_eq!(at(&[list, "args"]), ListType::Atomic);
            assert_eq!(at(&[list, "command"]), ListType::Atomic);
            assert_eq!(at(&[list, "envFrom"]), ListType::Atomic);
        }
        assert_eq!(at(&["volumes"]), map(&["name"]));
        assert_eq!(at(&["imagePullSecrets"]), map(&["name"]));
        assert_eq!(at(&["hostAliases"]), map(&["ip"]));
        assert_eq!(at(&["resourceClaims"]), map(&["name"]));
        assert_eq!(
            at(&["topologySpreadConstraints"]),
            map(&["topologyKey", "whenUnsatisfiable"])
        );
        assert_eq!(at(&["tolerations"]), ListType::Atomic);
    }
    for (group, kind) in [
        ("", "Pod"),
        ("apps", "Deployment"),
        ("apps", "StatefulSet"),
        ("apps", "DaemonSet"),
        ("apps", "ReplicaSet"),
        ("", "Namespace"),
        ("", "Node"),
        ("apiextensions.k8s.io", "CustomResourceDefinition"),
    ] {
        assert_eq!(
            builtin_list_type(group, kind, &["status", "conditions"]),
            map(&["type"]),
            "{kind}"
        );
    }
    // Job conditions merge by type for SMP but are atomic for server-side apply.
    assert_eq!(
        builtin_list_type("batch", "Job", &["status", "conditions"]),
        ListType::Atomic
    );
    for (group, kind) in [
        ("", "ConfigMap"),
        ("example.com", "Widget"),
        ("apps", "Deployment"),
    ] {
        assert_eq!(
            builtin_list_type(group, kind, &["metadata", "finalizers"]),
            ListType::Set
        );
        assert_eq!(
            builtin_list_type(group, kind, &["metadata", "ownerReferences"]),
            map(&["uid"])
        );
        assert_eq!(
            builtin_list_type(group, kind, &["metadata", "managedFields"]),
            ListType::Atomic
        );
    }
    assert_eq!(
        builtin_list_type(
            "apps",
            "Deployment",
            &["spec", "template", "metadata", "finalizers"]
        ),
        ListType::Set
    );
    assert_eq!(
        builtin_list_type("", "Service", &["spec", "ports"]),
        map(&["port", "protocol"])
    );
    assert_eq!(
        builtin_list_type("", "Service", &["status", "loadBalancer", "ingress"]),
        ListType::Atomic
    );
    assert_eq!(
        builtin_list_type("", "Endpoints", &["subsets"]),
        ListType::Atomic
    );
    assert_eq!(
        builtin_list_type("", "ServiceAccount", &["secrets"]),
        map(&["name"])
    );
    assert_eq!(
        builtin_list_type("rbac.authorization.k8s.io", "Role", &["rules"]),
        ListType::Atomic
    );
    assert_eq!(
        builtin_list_type("rbac.authorization.k8s.io", "ClusterRole", &["rules"]),
        ListType::Atomic
    );
    assert_eq!(
        builtin_list_type("rbac.authorization.k8s.io", "RoleBinding", &["subjects"]),
        ListType::Atomic
    );
    assert_eq!(
        builtin_list_type(
            "rbac.authorization.k8s.io",
            "ClusterRoleBinding",
            &["subjects"]
        ),
        ListType::Atomic
    );
    assert_eq!(
        builtin_list_type("apps", "StatefulSet", &["spec", "volumeClaimTemplates"]),
        ListType::Atomic
    );
    assert_eq!(
        builtin_list_type("", "ConfigMap", &["data"]),
        ListType::Atomic
    );
    assert_eq!(
        builtin_list_type("example.com", "Widget", &["spec", "items"]),
        ListType::Atomic
    );
    assert_eq!(builtin_list_type("", "Pod", &[]), ListType::Atomic);
    assert_eq!(
        builtin_list_type("", "Node", &["spec", "podCIDRs"]),
        ListType::Set
    );
}
