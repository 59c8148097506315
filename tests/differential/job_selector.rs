//! The selector kube-apiserver generates for a new Job: without `manualSelector` the Job gets the selector
//! `batch.kubernetes.io/controller-uid=<uid>` and its template the four labels naming its uid and name (a
//! selector of the user's own is refused, and so is a conflicting label); with `manualSelector` the selector is
//! required and must match the template. On both servers, the created Job compared with its uid masked.

use kube::Client;
use serde_json::{Value, json};

use crate::builtin_validation::{Case, summarize};
use crate::support::{Deviation, MERGE, Transcript, run};

/// kube-apiserver prints the immutable template as its internal Go type (as `builtin_validation`'s
/// `INTERNAL_VALUES`).
const INTERNAL_VALUES: Deviation = Deviation {
    name: "immutable struct values are printed as JSON, not as kube-apiserver's internal types",
    paths: &[
        "job template label conflicting with the generated ones: forbidden update:/body/message",
        "job template label conflicting with the generated ones: forbidden update:/body/causes/1/message",
    ],
};

fn job(name: &str, spec: Value) -> Value {
    let mut spec = spec;
    spec["template"]["spec"] = json!({"restartPolicy": "Never",
        "containers": [{"name": "app", "image": "busybox:1"}]});
    json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name}, "spec": spec})
}

fn jobs(ns: &str) -> String {
    format!("/apis/batch/v1/namespaces/{ns}/jobs")
}

/// The created Job's generated parts, its uid written `<uid>`: the selector, the template's and the Job's
/// labels, and which of them its manager owns.
fn generated_parts(t: &mut Transcript) {
    if let Some(body) = t.last_answer_mut() {
        let uid = body["metadata"]["uid"].as_str().unwrap_or("").to_string();
        let owned = &body["metadata"]["managedFields"][0]["fieldsV1"];
        let parts = json!({
            "selector": body["spec"]["selector"],
            "templateLabels": body["spec"]["template"]["metadata"]["labels"],
            "labels": body["metadata"]["labels"],
            "ownedTemplateLabels": owned["f:spec"]["f:template"]["f:metadata"]["f:labels"],
            "ownedLabels": owned["f:metadata"]["f:labels"],
        });
        let text = parts.to_string();
        let masked = if uid.is_empty() {
            text
        } else {
            text.replace(&uid, "<uid>")
        };
        *body = serde_json::from_str(&masked).unwrap_or(Value::Null);
    }
}

fn cases() -> Vec<Case> {
    let app = json!({"app": "a"});
    vec![
        Case {
            name: "job selector given without manualSelector",
            collection: |ns| jobs(ns),
            valid: job(
                "given-labels",
                json!({"template": {"metadata": {"labels": app.clone()}}}),
            ),
            invalid: Some(job(
                "own-selector",
                json!({"selector": {"matchLabels": app.clone()}, "template": {"metadata": {"labels": app.clone()}}}),
            )),
            forbidden: Some(json!({"spec": {"selector": {"matchLabels": {"app": "a"}}}})),
        },
        Case {
            name: "job template label conflicting with the generated ones",
            collection: |ns| jobs(ns),
            valid: job("plain", json!({})),
            invalid: Some(job(
                "conflict",
                json!({"template": {"metadata": {"labels": {"controller-uid": "wrong", "job-name": "other"}}}}),
            )),
            forbidden: Some(
                json!({"spec": {"template": {"metadata": {"labels": {"controller-uid": "changed"}}}}}),
            ),
        },
        Case {
            name: "job manual selector",
            collection: |ns| jobs(ns),
            valid: job(
                "manual",
                json!({"manualSelector": true, "selector": {"matchLabels": app.clone()},
                    "template": {"metadata": {"labels": app.clone()}}}),
            ),
            invalid: Some(job(
                "manual-missing",
                json!({"manualSelector": true, "template": {"metadata": {"labels": app.clone()}}}),
            )),
            forbidden: Some(json!({"spec": {"selector": null}})),
        },
    ]
}

/// `text` with every UUID (a refused Job's uid in a message) written `<uid>`.
fn mask_uuids(text: &str) -> String {
    let shape = |s: &[u8]| {
        s.len() == 36
            && s.iter().enumerate().all(|(i, c)| match i {
                8 | 13 | 18 | 23 => *c == b'-',
                _ => c.is_ascii_hexdigit(),
            })
    };
    let bytes = text.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    while i < bytes.len() {
        if i + 36 <= bytes.len() && shape(&bytes[i..i + 36]) {
            out.push_str("<uid>");
            i += 36;
        } else {
            let c = text[i..].chars().next().unwrap_or_default();
            out.push(c);
            i += c.len_utf8().max(1);
        }
    }
    out
}

async fn scenario(client: Client, ns: String) -> Transcript {
    let mut t = Transcript::new(client);
    for (label, body) in [
        ("create without a selector", job("generated", json!({}))),
        (
            "create with template labels",
            job(
                "labelled",
                json!({"template": {"metadata": {"labels": {"app": "a"}}}}),
            ),
        ),
        (
            "create with a manual selector",
            job(
                "manual-kept",
                json!({"manualSelector": true, "selector": {"matchLabels": {"app": "a"}},
                    "template": {"metadata": {"labels": {"app": "a"}}}}),
            ),
        ),
    ] {
        t.post(label, &jobs(&ns), &body).await;
        generated_parts(&mut t);
    }
    for case in cases() {
        let path = (case.collection)(&ns);
        t.post(&format!("{}: valid", case.name), &path, &case.valid)
            .await;
        masked_summary(&mut t);
        if let Some(invalid) = &case.invalid {
            t.post(&format!("{}: invalid create", case.name), &path, invalid)
                .await;
            masked_summary(&mut t);
        }
        if let Some(patch) = &case.forbidden {
            let name = case.valid["metadata"]["name"].as_str().expect("a name");
            let label = format!("{}: forbidden update", case.name);
            t.patch(&label, &format!("{path}/{name}"), MERGE, patch)
                .await;
            masked_summary(&mut t);
        }
    }
    t
}

/// The last answer summarized as the validation tables do, the Jobs' uids in its messages written `<uid>`.
fn masked_summary(t: &mut Transcript) {
    summarize(t);
    if let Some(body) = t.last_answer_mut() {
        *body = serde_json::from_str(&mask_uuids(&body.to_string())).unwrap_or(Value::Null);
    }
}

#[tokio::test]
async fn jobs_get_the_generated_selector_alike() {
    run(
        "jobs_get_the_generated_selector_alike",
        &[INTERNAL_VALUES],
        scenario,
    )
    .await;
}
