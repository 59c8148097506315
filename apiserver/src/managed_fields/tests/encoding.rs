//! Tests of the `FieldsV1` encoding of entries.

use super::*;

#[test]
fn fields_v1_encoding_of_apply_is_exact() {
    let obj = apply_ok(None, &deployment(2, "nginx:1"), "kubectl", Scope::Main, T0);
    let expected = concat!(
        r#"{"f:metadata":{"f:labels":{"f:app":{}}},"#,
        r#""f:spec":{"f:replicas":{},"f:selector":{},"f:template":{"f:metadata":{"f:labels":{"f:app":{}}},"#,
        r#""f:spec":{"f:containers":{"k:{\"name\":\"app\"}":{".":{},"f:image":{},"f:name":{},"#,
        r#""f:ports":{"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{},"f:protocol":{}}}}}}}}}"#
    );
    assert_eq!(fields(&obj, "kubectl", "Apply").to_string(), expected);
    assert_eq!(
        entries(&obj),
        vec![json!({
            "apiVersion": "apps/v1",
            "fieldsType": "FieldsV1",
            "fieldsV1": serde_json::from_str::<Value>(expected).unwrap(),
            "manager": "kubectl",
            "operation": "Apply",
            "time": T0,
        })]
    );
    // The object itself is the applied configuration.
    let mut stripped = obj.clone();
    stripped["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("managedFields");
    assert_eq!(stripped, deployment(2, "nginx:1"));
}

#[test]
fn fields_v1_encoding_of_create_marks_added_maps_and_lists() {
    let mut obj = deployment(2, "nginx:1");
    obj["metadata"]["finalizers"] = json!(["example.com/x"]);
    let created = create(&obj, "kubectl-create");
    let expected = concat!(
        r#"{"f:metadata":{"f:finalizers":{".":{},"v:\"example.com/x\"":{}},"f:labels":{".":{},"f:app":{}}},"#,
        r#""f:spec":{".":{},"f:replicas":{},"f:selector":{},"f:template":{".":{},"f:metadata":{".":{},"f:labels":{".":{},"f:app":{}}},"#,
        r#""f:spec":{".":{},"f:containers":{".":{},"k:{\"name\":\"app\"}":{".":{},"f:image":{},"f:name":{},"#,
        r#""f:ports":{".":{},"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{},"f:protocol":{}}}}}}}}}"#
    );
    assert_eq!(
        fields(&created, "kubectl-create", "Update").to_string(),
        expected
    );
    let e = entry(&created, "kubectl-create", "Update").unwrap();
    assert_eq!(e["apiVersion"], "apps/v1");
    assert_eq!(e["time"], T0);
    assert_eq!(e["fieldsType"], "FieldsV1");
    assert!(e.get("subresource").is_none());
}

#[test]
fn decoding_and_encoding_round_trip() {
    let text = r#"{"f:metadata":{"f:labels":{".":{},"f:a":{}}},"f:spec":{"f:ports":{"k:{\"protocol\":\"TCP\",\"containerPort\":80}":{".":{},"f:name":{}}}}}"#;
    let set = FieldSet::from_fields_v1(&serde_json::from_str(text).unwrap());
    assert_eq!(
        set.to_fields_v1().to_string(),
        r#"{"f:metadata":{"f:labels":{".":{},"f:a":{}}},"f:spec":{"f:ports":{"k:{\"containerPort\":80,\"protocol\":\"TCP\"}":{".":{},"f:name":{}}}}}"#
    );
    let paths: Vec<String> = set.paths().iter().map(|p| path_string(p)).collect();
    assert_eq!(
        paths,
        vec![
            ".metadata.labels",
            ".metadata.labels.a",
            r#".spec.ports[containerPort=80,protocol="TCP"]"#,
            r#".spec.ports[containerPort=80,protocol="TCP"].name"#,
        ]
    );
}
