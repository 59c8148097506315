//! The known deviations: each accepted by name in the scenarios that meet it, and pinned here on both
//! servers, so that a change on either side fails a test.

use serde_json::{Value, json};

use crate::support::{
    Deviation, Transcript, both, configmaps, deployment, deployments, widget, widgets,
};

/// kube-apiserver records who asked for a CertificateSigningRequest in `spec.username` (and `groups`, `uid`);
/// the in-memory server authenticates no one and leaves them out, so the Requestor cell of its table row is
/// empty.
pub const CSR_REQUESTOR: Deviation = Deviation {
    name: "the requesting user of a CertificateSigningRequest",
    paths: &["certificatesigningrequest:/body/rows/*/cells/3"],
};

#[tokio::test]
async fn csrs_name_their_requestor_on_kube_apiserver_only() {
    let Some([memory, real]) = both("csrs_name_their_requestor_on_kube_apiserver_only").await
    else {
        return;
    };
    let mut users = Vec::new();
    for (client, ns) in [memory, real] {
        let mut t = Transcript::new(client);
        let csr = json!({
            "apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
            "metadata": {"name": format!("{ns}-csr")},
            "spec": {"request": tests::builtin_objects::CSR, "signerName": "example.dev/signer",
                     "usages": ["digital signature"]},
        });
        let created = t
            .post(
                "create",
                "/apis/certificates.k8s.io/v1/certificatesigningrequests",
                &csr,
            )
            .await;
        users.push(created["spec"]["username"].clone());
    }
    assert_eq!(users[0], Value::Null, "in-memory: no requestor");
    assert!(
        users[1].as_str().is_some_and(|u| !u.is_empty()),
        "kube-apiserver: the client's user, got {}",
        users[1]
    );
}

/// A write to `/status` that also changes metadata: neither server applies the change, but kube-apiserver
/// records the metadata fields in the status entry of `managedFields` (custom resources reset only `spec`);
/// the in-memory server records only `status`.
pub const STATUS_WRITE_METADATA_OWNERSHIP: Deviation = Deviation {
    name: "metadata changed through /status is owned in managedFields on kube-apiserver only",
    paths: &["*:/body/metadata/managedFields/*/fieldsV1/f:metadata"],
};

fn status_entry(obj: &Value) -> Value {
    obj["metadata"]["managedFields"]
        .as_array()
        .and_then(|entries| entries.iter().find(|e| e["subresource"] == "status"))
        .cloned()
        .unwrap_or(Value::Null)
}

#[tokio::test]
async fn status_writes_own_metadata_on_kube_apiserver_only() {
    let Some([memory, real]) = both("status_writes_own_metadata_on_kube_apiserver_only").await
    else {
        return;
    };
    let mut owned = Vec::new();
    for (client, ns) in [memory, real] {
        let mut t = Transcript::new(client);
        let w = format!("{}/w", widgets(&ns));
        let mut current = t
            .post("create", &widgets(&ns), &widget("w", 1, "red"))
            .await;
        current["status"] = json!({"phase": "Put"});
        current["metadata"]["labels"] = json!({"from": "status"});
        let updated = t
            .put("update /status", &format!("{w}/status"), &current)
            .await;
        assert_eq!(updated["status"]["phase"], "Put");
        assert_eq!(updated["metadata"].get("labels"), None, "not applied");
        owned.push(status_entry(&updated)["fieldsV1"].clone());
    }
    assert_eq!(
        owned[0],
        json!({"f:status": {".": {}, "f:phase": {}}}),
        "in-memory"
    );
    assert_eq!(
        owned[1],
        json!({
            "f:metadata": {"f:labels": {".": {}, "f:from": {}}},
            "f:status": {".": {}, "f:phase": {}}
        }),
        "kube-apiserver"
    );
}

/// An invalid continue token: kube-apiserver ends the message with Go's JSON decoding error, the in-memory
/// server with the token.
pub const CONTINUE_TOKEN_ERROR: Deviation = Deviation {
    name: "the message of an invalid continue token",
    paths: &["a bad continue token:/body/message"],
};

#[tokio::test]
async fn invalid_continue_tokens_are_worded_differently() {
    let Some([memory, real]) = both("invalid_continue_tokens_are_worded_differently").await else {
        return;
    };
    let mut messages = Vec::new();
    for (client, ns) in [memory, real] {
        let mut t = Transcript::new(client);
        let path = format!("{}?limit=1&continue=bm90LWEtdG9rZW4", configmaps(&ns));
        let status = t.get("list", &path).await;
        assert_eq!(
            (status["code"].as_i64(), status["reason"].as_str()),
            (Some(400), Some("BadRequest"))
        );
        messages.push(status["message"].clone());
    }
    assert_eq!(
        messages,
        [
            "invalid continue token: continue key is not valid: bm90LWEtdG9rZW4",
            "invalid continue token: continue key is not valid: invalid character 'o' in literal null (expecting 'u')"
        ]
    );
}

/// The managedFields of built-in kinds: kube-apiserver diffs a new object against Go's zero value, so the
/// structs a zero value already has (`spec`, `spec.template`, `spec.strategy`, …) get no `.` entry, and it
/// treats atomic structs (`LabelSelector`) as one field; the in-memory server marks every struct with `.` and
/// tracks a selector's labels one by one.
pub const BUILTIN_MANAGED_FIELDS_SHAPE: Deviation = Deviation {
    name: "zero-value structs and atomic structs in the managedFields of built-in kinds",
    paths: &["*:/body/metadata/managedFields/*/fieldsV1/f:spec/*"],
};

/// A new Deployment (any built-in kind whose Go status is a plain struct) has `status: {}` on kube-apiserver;
/// the in-memory server leaves `status` out until something sets it.
pub const EMPTY_BUILTIN_STATUS: Deviation = Deviation {
    name: "status: {} of new built-in objects",
    paths: &["*:/body/status"],
};

#[tokio::test]
async fn new_deployments_differ_in_managed_fields_shape_and_empty_status() {
    let Some([memory, real]) =
        both("new_deployments_differ_in_managed_fields_shape_and_empty_status").await
    else {
        return;
    };
    let mut created = Vec::new();
    for (client, ns) in [memory, real] {
        let mut t = Transcript::new(client);
        created.push(t.post("create", &deployments(&ns), &deployment("d")).await);
    }
    let spec = |d: &Value| d["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"].clone();
    let (memory, real) = (&created[0], &created[1]);
    assert_eq!(spec(memory)["."], json!({}), "in-memory marks spec");
    assert_eq!(
        spec(memory)["f:selector"],
        json!({".": {}, "f:matchLabels": {".": {}, "f:app": {}}}),
        "in-memory tracks the selector's labels"
    );
    assert_eq!(memory.get("status"), None, "in-memory has no status");
    assert_eq!(
        spec(real).get("."),
        None,
        "kube-apiserver does not mark spec"
    );
    assert_eq!(
        spec(real)["f:selector"],
        json!({}),
        "kube-apiserver: an atomic selector"
    );
    assert_eq!(real["status"], json!({}), "kube-apiserver: status {{}}");
}

/// A custom resource's object in protobuf (a create, an update, a `status` write): kube-apiserver 1.35
/// fails the request without an answer (its decoder of custom resources dereferences a nil pointer and the
/// handler's panic aborts the stream); the in-memory server answers `415`.
#[tokio::test]
async fn protobuf_custom_resources_get_no_answer_on_kube_apiserver() {
    let Some([memory, real]) =
        both("protobuf_custom_resources_get_no_answer_on_kube_apiserver").await
    else {
        return;
    };
    let mut body = b"k8s\0".to_vec();
    // runtime.Unknown { typeMeta: { apiVersion: diff.example.dev/v1, kind: Widget } }, no raw.
    let type_meta = [
        &[0x0a, 19][..],
        b"diff.example.dev/v1",
        &[0x12, 6][..],
        b"Widget",
    ]
    .concat();
    body.extend([0x0a, type_meta.len() as u8]);
    body.extend(type_meta);
    let mut answers = Vec::new();
    for (client, ns) in [memory, real] {
        let request = http::Request::post(crate::support::widgets(&ns))
            .header("content-type", "application/vnd.kubernetes.protobuf")
            .header("accept", "application/json")
            .body(kube::client::Body::from(body.clone()))
            .expect("a request");
        answers.push(match client.send(request).await {
            Ok(response) => Some(response.status().as_u16()),
            Err(_) => None,
        });
    }
    assert_eq!(answers[0], Some(415), "in-memory: 415");
    assert_eq!(answers[1], None, "kube-apiserver: no answer");
}

/// A `metav1.Condition` of a built-in kind without `lastTransitionTime`: both refuse it, the in-memory server
/// with `400 BadRequest` (its typed decoding needs the field), kube-apiserver with `422 Invalid` (it decodes
/// Go's zero time, which validation then requires).
pub const CONDITION_WITHOUT_TRANSITION_TIME: Deviation = Deviation {
    name: "a metav1.Condition without lastTransitionTime: 400 in memory, 422 on kube-apiserver",
    paths: &["a condition without a transition time:*"],
};

#[tokio::test]
async fn conditions_without_a_transition_time_are_refused_differently() {
    let Some([memory, real]) =
        both("conditions_without_a_transition_time_are_refused_differently").await
    else {
        return;
    };
    let mut answers = Vec::new();
    for (client, ns) in [memory, real] {
        let mut t = Transcript::new(client);
        let pdbs = format!("/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets");
        let pdb = json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
            "metadata": {"name": "p"}, "spec": {"minAvailable": 1}});
        t.post("create", &pdbs, &pdb).await;
        let answer = t
            .patch(
                "a condition without a transition time",
                &format!("{pdbs}/p/status"),
                crate::support::MERGE,
                &json!({"status": {"conditions": [{"type": "Ok", "status": "True", "reason": "Fine",
                    "message": ""}]}}),
            )
            .await;
        answers.push((answer["code"].clone(), answer["details"]["causes"].clone()));
    }
    assert_eq!(answers[0], (json!(400), Value::Null), "in memory");
    assert_eq!(
        answers[1],
        (
            json!(422),
            json!([{"field": "status.conditions[0].lastTransitionTime", "message": "Required value",
                "reason": "FieldValueRequired"}])
        ),
        "on kube-apiserver"
    );
}
