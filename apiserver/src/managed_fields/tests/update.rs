//! Tests of `Update` entries, the status scope and the order of entries.

use super::*;

#[test]
fn update_steals_ownership_then_applier_conflicts() {
    let obj = apply_ok(None, &deployment(2, "nginx:1"), "alice", Scope::Main, T0);
    // kubectl scale/edit changes replicas with a PUT that echoes managedFields.
    let mut new = obj.clone();
    new["spec"]["replicas"] = json!(5);
    update(
        Some(&obj),
        &mut new,
        "kubectl-edit",
        "apps/v1",
        Scope::Main,
        &TestSchema,
        T1,
    );
    assert_eq!(
        fields(&new, "kubectl-edit", "Update"),
        json!({"f:spec": {"f:replicas": {}}})
    );
    assert!(
        fields(&new, "alice", "Apply")["f:spec"]
            .get("f:replicas")
            .is_none()
    );
    assert_eq!(entry(&new, "alice", "Apply").unwrap()["time"], T0);
    assert_eq!(managers(&new), ["alice/Apply", "kubectl-edit/Update"]);
    // Re-applying the same configuration now conflicts.
    let err = apply(
        Some(&new),
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
        "Apply failed with 1 conflict: conflict with \"kubectl-edit\" using apps/v1: .spec.replicas"
    );
    // Applying without replicas does not remove it (alice does not own it any more).
    let mut cfg = deployment(2, "nginx:1");
    cfg["spec"].as_object_mut().unwrap().remove("replicas");
    let applied = apply_ok(Some(&new), &cfg, "alice", Scope::Main, T2);
    assert_eq!(applied["spec"]["replicas"], 5);
    // A second update by the same manager merges into its entry; a different apiVersion is
    // a different entry.
    let mut newer = new.clone();
    newer["metadata"]["labels"]["extra"] = json!("1");
    update(
        Some(&new),
        &mut newer,
        "kubectl-edit",
        "apps/v1",
        Scope::Main,
        &TestSchema,
        T3,
    );
    assert_eq!(
        fields(&newer, "kubectl-edit", "Update"),
        json!({"f:metadata": {"f:labels": {"f:extra": {}}}, "f:spec": {"f:replicas": {}}})
    );
    assert_eq!(entry(&newer, "kubectl-edit", "Update").unwrap()["time"], T3);
    let mut newest = newer.clone();
    newest["metadata"]["labels"]["other"] = json!("1");
    update(
        Some(&newer),
        &mut newest,
        "kubectl-edit",
        "apps/v1beta1",
        Scope::Main,
        &TestSchema,
        T3,
    );
    assert_eq!(entries(&newest).len(), 3);
}

#[test]
fn apply_replaces_own_apply_entry_and_keeps_own_update_entries() {
    let obj = create(
        &json!({"metadata": {"name": "a", "labels": {"x": "1"}}, "spec": {"a": 1}}),
        "ctrl",
    );
    let obj = apply_ok(
        Some(&obj),
        &json!({"metadata": {"name": "a"}, "spec": {"b": 1}}),
        "ctrl",
        Scope::Whole,
        T1,
    );
    let obj = apply_ok(
        Some(&obj),
        &json!({"metadata": {"name": "a"}, "spec": {"c": 1}}),
        "ctrl",
        Scope::Whole,
        T2,
    );
    assert_eq!(obj["spec"], json!({"a": 1, "c": 1}));
    assert_eq!(managers(&obj), ["ctrl/Apply", "ctrl/Update"]);
    assert_eq!(
        fields(&obj, "ctrl", "Apply"),
        json!({"f:spec": {"f:c": {}}})
    );
    // The update entry of the same manager is another manager: changing its fields conflicts.
    let err = apply(
        Some(&obj),
        &json!({"spec": {"a": 2}}),
        "ctrl",
        "apps/v1",
        Scope::Whole,
        false,
        &TestSchema,
        T3,
    )
    .unwrap_err();
    assert_eq!(
        conflict_message(&err),
        "Apply failed with 1 conflict: conflict with \"ctrl\" using apps/v1: .spec.a"
    );
}

#[test]
fn status_scope_is_separate() {
    let cfg = json!({"apiVersion": "v1", "kind": "Thing", "metadata": {"name": "a"},
        "spec": {"size": 1}, "status": {"phase": "Pending"}});
    // Main scope ignores status.
    let obj = apply_ok(None, &cfg, "user", Scope::Main, T0);
    assert!(obj.get("status").is_none());
    assert_eq!(
        fields(&obj, "user", "Apply"),
        json!({"f:spec": {"f:size": {}}})
    );
    // Status scope only considers status, and tags the entry.
    let obj = apply_ok(
        Some(&obj),
        &json!({"metadata": {"name": "a", "labels": {"no": "pe"}},
        "spec": {"size": 9}, "status": {"phase": "Ready", "conditions": [{"type": "Ready", "status": "True"}]}}),
        "ctrl",
        Scope::Status,
        T1,
    );
    assert_eq!(obj["spec"], json!({"size": 1}));
    assert!(obj["metadata"].get("labels").is_none());
    assert_eq!(obj["status"]["phase"], "Ready");
    let e = entry(&obj, "ctrl", "Apply").unwrap();
    assert_eq!(e["subresource"], "status");
    assert_eq!(
        e["fieldsV1"].to_string(),
        r#"{"f:status":{"f:conditions":{"k:{\"type\":\"Ready\"}":{".":{},"f:status":{},"f:type":{}}},"f:phase":{}}}"#
    );
    // The same manager applying to the main resource is another entry; main applies do not
    // touch status and do not conflict with status owners.
    let obj = apply_ok(
        Some(&obj),
        &json!({"metadata": {"name": "a"}, "spec": {"size": 1}, "status": {"phase": "X"}}),
        "ctrl",
        Scope::Main,
        T2,
    );
    assert_eq!(obj["status"]["phase"], "Ready");
    assert_eq!(managers(&obj), ["user/Apply", "ctrl/Apply", "ctrl/Apply"]);
    // A status update by another manager steals the phase from the status applier.
    let mut new = obj.clone();
    new["status"]["phase"] = json!("Failed");
    new["spec"]["size"] = json!(100); // ignored: not in scope
    update(
        Some(&obj),
        &mut new,
        "kubelet",
        "v1",
        Scope::Status,
        &TestSchema,
        T3,
    );
    let e = entry(&new, "kubelet", "Update").unwrap();
    assert_eq!(e["subresource"], "status");
    assert_eq!(e["fieldsV1"], json!({"f:status": {"f:phase": {}}}));
    let status_apply = managed_fields_of(&new)
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["manager"] == "ctrl" && e.get("subresource").is_some())
        .unwrap();
    assert!(
        status_apply["fieldsV1"]["f:status"]
            .get("f:phase")
            .is_none()
    );
    let err = apply(
        Some(&new),
        &json!({"status": {"phase": "Ready", "conditions": [{"type": "Ready", "status": "True"}]}}),
        "ctrl",
        "v1",
        Scope::Status,
        false,
        &TestSchema,
        T3,
    )
    .unwrap_err();
    assert_eq!(
        conflict_message(&err),
        "Apply failed with 1 conflict: conflict with \"kubelet\" with subresource \"status\" using v1: .status.phase"
    );
}

#[test]
fn update_tracks_removals_and_drops_empty_entries() {
    let obj = create(
        &json!({"metadata": {"name": "a", "labels": {"x": "1"}}, "spec": {"a": 1, "b": {"c": 1}}}),
        "creator",
    );
    assert_eq!(
        fields(&obj, "creator", "Update").to_string(),
        r#"{"f:metadata":{"f:labels":{".":{},"f:x":{}}},"f:spec":{".":{},"f:a":{},"f:b":{".":{},"f:c":{}}}}"#
    );
    // Another writer replaces everything: the creator loses all of it but `.spec` itself
    // (a member without children encodes as `{}`).
    let mut new = json!({"metadata": {"name": "a", "managedFields": obj["metadata"]["managedFields"].clone()}, "spec": {"a": 2}});
    update(
        Some(&obj),
        &mut new,
        "other",
        "v1",
        Scope::Whole,
        &TestSchema,
        T1,
    );
    assert_eq!(managers(&new), ["creator/Update", "other/Update"]);
    assert_eq!(fields(&new, "creator", "Update"), json!({"f:spec": {}}));
    assert_eq!(
        fields(&new, "other", "Update"),
        json!({"f:spec": {"f:a": {}}})
    );
    // A write that only removes fields owns nothing; with nobody left the key disappears.
    let mut newer = json!({"metadata": {"name": "a", "managedFields": new["metadata"]["managedFields"].clone()}});
    update(
        Some(&new),
        &mut newer,
        "third",
        "v1",
        Scope::Whole,
        &TestSchema,
        T2,
    );
    assert!(newer["metadata"].get("managedFields").is_none());
}

#[test]
fn update_uses_live_entries_when_request_omits_them_and_resets_on_empty_entry() {
    let obj = create(
        &json!({"metadata": {"name": "a"}, "spec": {"a": 1}}),
        "creator",
    );
    let mut new = json!({"metadata": {"name": "a"}, "spec": {"a": 1, "b": 2}});
    update(
        Some(&obj),
        &mut new,
        "writer",
        "v1",
        Scope::Whole,
        &TestSchema,
        T1,
    );
    assert_eq!(managers(&new), ["creator/Update", "writer/Update"]);
    // Entries sorted by time: the older one first.
    assert_eq!(entries(&new)[0]["time"], T0);
    let mut reset = new.clone();
    reset["metadata"]["managedFields"] = json!([{}]);
    update(
        Some(&new),
        &mut reset,
        "writer",
        "v1",
        Scope::Whole,
        &TestSchema,
        T2,
    );
    assert!(reset["metadata"].get("managedFields").is_none());
    // Unchanged writes leave the entries (and their times) alone.
    let mut same = new.clone();
    update(
        Some(&new),
        &mut same,
        "writer",
        "v1",
        Scope::Whole,
        &TestSchema,
        T3,
    );
    assert_eq!(same, new);
}

#[test]
fn entries_are_sorted_like_the_real_server() {
    let obj = create(&json!({"metadata": {"name": "a"}, "spec": {"a": 1}}), "zed");
    let obj = apply_ok(
        Some(&obj),
        &json!({"spec": {"b": 1}}),
        "bob",
        Scope::Whole,
        T2,
    );
    let obj = apply_ok(
        Some(&obj),
        &json!({"spec": {"c": 1}}),
        "alice",
        Scope::Whole,
        T2,
    );
    assert_eq!(managers(&obj), ["alice/Apply", "bob/Apply", "zed/Update"]);
}
