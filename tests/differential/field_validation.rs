//! `fieldValidation` on patches: unknown and duplicate fields in JSON, merge and strategic merge patches and
//! in server-side apply, under each mode (the default, `Warn`, `Ignore`, `Strict`), on a Deployment, on a
//! custom resource whose schema is closed (Widget) and on one whose `spec` keeps unknown fields (Gadget).

use kube::Client;
use serde_json::{Value, json};

use crate::deviations::{BUILTIN_MANAGED_FIELDS_SHAPE, EMPTY_BUILTIN_STATUS};
use crate::support::{
    APPLY, JSON_PATCH, MERGE, STRATEGIC, Transcript, deployment, deployments, run, widget, widgets,
};

/// The modes, as a label and the query that asks for them.
const MODES: [(&str, &str); 4] = [
    ("default", ""),
    ("Warn", "fieldValidation=Warn"),
    ("Ignore", "fieldValidation=Ignore"),
    ("Strict", "fieldValidation=Strict"),
];

/// One object the patches are sent to.
struct Target {
    label: &'static str,
    path: String,
    api_version: &'static str,
    kind: &'static str,
    /// Whether strategic merge patches apply (built-in kinds only).
    strategic: bool,
}

fn gadget(name: &str) -> Value {
    json!({
        "apiVersion": "tables.example.dev/v1", "kind": "Gadget",
        "metadata": { "name": name },
        "spec": { "count": 1 },
    })
}

/// A path with the mode's query (and `fieldManager` for apply).
fn with_query(path: &str, query: &str, apply: bool) -> String {
    let mut q: Vec<&str> = Vec::new();
    if apply {
        q.push("fieldManager=tester");
    }
    if !query.is_empty() {
        q.push(query);
    }
    if q.is_empty() {
        path.to_string()
    } else {
        format!("{path}?{}", q.join("&"))
    }
}

async fn patch_raw(t: &mut Transcript, label: &str, path: &str, kind: &str, body: &str) {
    t.send_bytes(
        label,
        "PATCH",
        path,
        "application/json",
        kind,
        Some(body.as_bytes().to_vec()),
    )
    .await;
    unquote_patched_object(t, label);
}

async fn patch(t: &mut Transcript, label: &str, path: &str, kind: &str, body: &Value) {
    t.patch(label, path, kind, body).await;
    unquote_patched_object(t, label);
}

/// The 422 of a JSON or merge patch under `Strict` quotes the whole patched object, with its timestamps and
/// resourceVersion, and its keys in the order Go's encoder gives the kind's fields: the message keeps a
/// placeholder, and the object is compared as a note after it (`LABEL (patched object)`), as JSON.
fn unquote_patched_object(t: &mut Transcript, label: &str) {
    const PREFIX: &str = "Invalid value: \"";
    let Some(body) = t.last_answer_mut() else {
        return;
    };
    let Some(message) = body["message"].as_str().map(str::to_string) else {
        return;
    };
    let Some(start) = message.find(PREFIX).map(|i| i + PREFIX.len() - 1) else {
        return;
    };
    let Some((text, len)) = go_unquote(&message[start..]) else {
        return;
    };
    let Ok(object) = serde_json::from_str::<Value>(&text) else {
        return;
    };
    let quoted = &message[start..start + len];
    let placeholder = "\"<the patched object>\"";
    body["message"] = json!(message.replace(quoted, placeholder));
    if let Some(causes) = body["details"]["causes"].as_array_mut() {
        for c in causes {
            if let Some(m) = c["message"].as_str() {
                c["message"] = json!(m.replace(quoted, placeholder));
            }
        }
    }
    t.note(&format!("{label} (patched object)"), object);
}

/// The Go-quoted string at the start of `s`: its text and the length of the quoted form.
fn go_unquote(s: &str) -> Option<(String, usize)> {
    let mut chars = s.char_indices();
    if chars.next()?.1 != '"' {
        return None;
    }
    let mut out = String::new();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Some((out, i + 1)),
            '\\' => match chars.next()?.1 {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'r' => out.push('\r'),
                'u' => {
                    let hex: String = (0..4)
                        .filter_map(|_| chars.next().map(|(_, c)| c))
                        .collect();
                    out.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
                }
                'x' => {
                    let hex: String = (0..2)
                        .filter_map(|_| chars.next().map(|(_, c)| c))
                        .collect();
                    out.push(char::from(u8::from_str_radix(&hex, 16).ok()?));
                }
                other => out.push(other),
            },
            c => out.push(c),
        }
    }
    None
}

async fn patches_of(t: &mut Transcript, target: &Target) {
    let unknown =
        json!({"spec": {"foo": 1, "bar": {"x": [1, "a", true, 2.5, null], "y": {"z": "w"}}}});
    let unknown_root = json!({"extra": {"a": 1}, "metadata": {"labels": {"u": "1"}}});
    for (mode, query) in MODES {
        let l = |what: &str| format!("{}, {mode}: {what}", target.label);
        let path = with_query(&target.path, query, false);
        patch(t, &l("merge, unknown fields"), &path, MERGE, &unknown).await;
        patch(
            t,
            &l("merge, an unknown root field"),
            &path,
            MERGE,
            &unknown_root,
        )
        .await;
        patch_raw(
            t,
            &l("merge, a duplicate field"),
            &path,
            MERGE,
            r#"{"metadata":{"labels":{"a":"1","a":"2"}}}"#,
        )
        .await;
        patch_raw(
            t,
            &l("merge, unknown and duplicate fields"),
            &path,
            MERGE,
            r#"{"spec":{"foo":"x","foo":"y"},"metadata":{"labels":{"b":"1","b":"2"}}}"#,
        )
        .await;
        patch(
            t,
            &l("json, an unknown field"),
            &path,
            JSON_PATCH,
            &json!([{"op": "add", "path": "/spec/foo", "value": {"k": [1, 2]}}]),
        )
        .await;
        patch(
            t,
            &l("json, an unknown field in an operation"),
            &path,
            JSON_PATCH,
            &json!([{"op": "add", "path": "/metadata/labels/c", "value": "x", "extra": 1}]),
        )
        .await;
        patch_raw(
            t,
            &l("json, a duplicate field in an operation"),
            &path,
            JSON_PATCH,
            r#"[{"op":"add","path":"/metadata/labels/d","value":"1","value":"2"}]"#,
        )
        .await;
        patch_raw(
            t,
            &l("json, a duplicate field in a value"),
            &path,
            JSON_PATCH,
            r#"[{"op":"add","path":"/metadata/labels","value":{"e":"1","e":"2"}}]"#,
        )
        .await;
        if target.strategic {
            patch(
                t,
                &l("strategic, unknown fields"),
                &path,
                STRATEGIC,
                &unknown,
            )
            .await;
            patch_raw(
                t,
                &l("strategic, a duplicate field"),
                &path,
                STRATEGIC,
                r#"{"metadata":{"labels":{"f":"1","f":"2"}}}"#,
            )
            .await;
        }
        let apply_path = with_query(&target.path, query, true);
        let head = format!(
            "apiVersion: {}\nkind: {}\nmetadata:\n  name: {}\n",
            target.api_version,
            target.kind,
            target.path.rsplit('/').next().unwrap_or_default()
        );
        patch_raw(
            t,
            &l("apply, an unknown field"),
            &apply_path,
            APPLY,
            &format!("{head}spec:\n  foo: 1\n"),
        )
        .await;
        patch_raw(
            t,
            &l("apply, an unknown root field"),
            &apply_path,
            APPLY,
            &format!("{head}extra: 1\n"),
        )
        .await;
        patch_raw(
            t,
            &l("apply, a duplicate field"),
            &apply_path,
            APPLY,
            &format!("{head}  labels:\n    g: \"1\"\n    g: \"2\"\n"),
        )
        .await;
        t.get(&l("after the patches"), &target.path).await;
    }
}

async fn field_validation_on_patches(client: Client, ns: String) -> Transcript {
    let mut t = Transcript::new(client).with_warnings();
    let gadgets = format!("/apis/tables.example.dev/v1/namespaces/{ns}/gadgets");
    t.post("create a deployment", &deployments(&ns), &deployment("d"))
        .await;
    t.post("create a widget", &widgets(&ns), &widget("w", 1, "red"))
        .await;
    t.post("create a gadget", &gadgets, &gadget("g")).await;
    let targets = [
        Target {
            label: "deployment",
            path: format!("{}/d", deployments(&ns)),
            api_version: "apps/v1",
            kind: "Deployment",
            strategic: true,
        },
        Target {
            label: "widget",
            path: format!("{}/w", widgets(&ns)),
            api_version: "diff.example.dev/v1",
            kind: "Widget",
            strategic: false,
        },
        Target {
            label: "gadget",
            path: format!("{gadgets}/g"),
            api_version: "tables.example.dev/v1",
            kind: "Gadget",
            strategic: false,
        },
    ];
    for target in &targets {
        patches_of(&mut t, target).await;
    }
    t
}

#[tokio::test]
async fn field_validation_of_patches() {
    run(
        "field_validation_of_patches",
        &[BUILTIN_MANAGED_FIELDS_SHAPE, EMPTY_BUILTIN_STATUS],
        field_validation_on_patches,
    )
    .await;
}
