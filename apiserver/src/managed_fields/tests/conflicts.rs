//! Tests of conflicts between appliers, their message and `force`.

use super::*;

#[test]
fn two_appliers_share_equal_values_and_conflict_on_differences() {
    let obj = create(&deployment(2, "nginx:1"), "kubectl-create");
    // Equal values: no conflict with the creator, shared ownership.
    let obj = apply_ok(
        Some(&obj),
        &json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web"}, "spec": {"replicas": 2}}),
        "alice",
        Scope::Main,
        T1,
    );
    let obj = apply_ok(
        Some(&obj),
        &json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web"}, "spec": {"replicas": 2}}),
        "bob",
        Scope::Main,
        T2,
    );
    for m in ["alice", "bob"] {
        assert_eq!(
            fields(&obj, m, "Apply"),
            json!({"f:spec": {"f:replicas": {}}})
        );
    }
    assert!(fields(&obj, "kubectl-create", "Update")["f:spec"]["f:replicas"].is_object());
    assert_eq!(
        managers(&obj),
        ["alice/Apply", "bob/Apply", "kubectl-create/Update"]
    );

    // A different value conflicts with every other owner.
    let err = apply(
        Some(&obj),
        &json!({"metadata": {"name": "web"}, "spec": {"replicas": 5}}),
        "bob",
        "apps/v1",
        Scope::Main,
        false,
        &TestSchema,
        T3,
    )
    .unwrap_err();
    assert_eq!(
        conflict_message(&err),
        "Apply failed with 2 conflicts: conflicts with \"alice\":\n- .spec.replicas\n\
         conflicts with \"kubectl-create\" using apps/v1:\n- .spec.replicas"
    );
    assert_eq!(err[0].manager, "alice");
    assert_eq!(err[0].operation, Operation::Apply);
    assert_eq!(
        err[1].to_string(),
        "conflict with \"kubectl-create\" using apps/v1: .spec.replicas"
    );
    assert_eq!(
        err[1].cause(),
        json!({"reason": "FieldManagerConflict", "message": "conflict with \"kubectl-create\" using apps/v1", "field": ".spec.replicas"})
    );
}

#[test]
fn single_conflict_message_is_exact() {
    let obj = apply_ok(None, &deployment(2, "nginx:1"), "alice", Scope::Main, T0);
    let mut cfg = deployment(2, "nginx:2");
    cfg["spec"] =
        json!({"template": {"spec": {"containers": [{"name": "app", "image": "nginx:2"}]}}});
    let err = apply(
        Some(&obj),
        &cfg,
        "bob",
        "apps/v1",
        Scope::Main,
        false,
        &TestSchema,
        T1,
    )
    .unwrap_err();
    assert_eq!(
        conflict_message(&err),
        "Apply failed with 1 conflict: conflict with \"alice\": .spec.template.spec.containers[name=\"app\"].image"
    );
    assert_eq!(err.len(), 1);
    assert_eq!(
        err[0].field,
        ".spec.template.spec.containers[name=\"app\"].image"
    );
    let labels = json!({"metadata": {"name": "web", "labels": {"app": "other"}}});
    let err = apply(
        Some(&obj),
        &labels,
        "bob",
        "apps/v1",
        Scope::Main,
        false,
        &TestSchema,
        T1,
    )
    .unwrap_err();
    assert_eq!(
        conflict_message(&err),
        "Apply failed with 1 conflict: conflict with \"alice\": .metadata.labels.app"
    );
}

#[test]
fn force_transfers_ownership() {
    let obj = apply_ok(None, &deployment(2, "nginx:1"), "alice", Scope::Main, T0);
    let cfg = json!({"metadata": {"name": "web"}, "spec": {"replicas": 7}});
    let obj = apply(
        Some(&obj),
        &cfg,
        "bob",
        "apps/v1",
        Scope::Main,
        true,
        &TestSchema,
        T1,
    )
    .unwrap();
    assert_eq!(obj["spec"]["replicas"], 7);
    assert_eq!(
        fields(&obj, "bob", "Apply"),
        json!({"f:spec": {"f:replicas": {}}})
    );
    assert!(
        fields(&obj, "alice", "Apply")["f:spec"]
            .get("f:replicas")
            .is_none()
    );
    assert!(fields(&obj, "alice", "Apply")["f:spec"]["f:template"].is_object());
    // alice's entry keeps its time; bob's is new.
    assert_eq!(entry(&obj, "alice", "Apply").unwrap()["time"], T0);
    assert_eq!(entry(&obj, "bob", "Apply").unwrap()["time"], T1);
    // alice re-applying her old value now conflicts with bob.
    let err = apply(
        Some(&obj),
        &deployment(2, "nginx:1"),
        "alice",
        "apps/v1",
        Scope::Main,
        false,
        &TestSchema,
        T2,
    )
    .unwrap_err();
    assert_eq!(
        conflict_message(&err),
        "Apply failed with 1 conflict: conflict with \"bob\": .spec.replicas"
    );
}
