//! `fieldValidation` on patches, as kube-apiserver's patch handler applies it: the strict errors of the patch
//! body (duplicate keys; a JSON patch operation's unknown fields), those of the patched object, the 422 that
//! `Strict` answers (`patch: Invalid value: "...": strict decoding error: ...`), and the server-side apply
//! checks (fields the schema does not declare, duplicate YAML keys).

pub mod go_text;
pub mod json;
mod undeclared;
pub mod yaml;

pub use undeclared::undeclared;

use serde_json::{Value, json};

use crate::error::ApiError;

/// What strict decoding found in a patch (JSON, merge or strategic merge), and the value kube-apiserver's
/// 422 shows for it.
#[derive(Debug, Clone, Default)]
pub struct PatchFindings {
    /// The strict errors of the patch body, in document order (`duplicate field "a.b"`, `json patch unknown
    /// field "[0].x"`).
    pub patch: Vec<String>,
    /// The strict errors of decoding the patched object other than its unknown fields: the duplicate keys a
    /// JSON patch's values carry into it.
    pub object: Vec<String>,
    /// The value the 422 shows, unquoted: the patched object as JSON for a JSON or merge patch, Go's `%+v` of
    /// the decoded patch for a strategic merge patch.
    pub shown: String,
}

impl PatchFindings {
    /// Every strict error, with the patched object's `unknown` fields (paths) after the others, in the order
    /// kube-apiserver lists them.
    pub fn errors(&self, unknown: &[String]) -> Vec<String> {
        self.patch
            .iter()
            .chain(&self.object)
            .cloned()
            .chain(unknown.iter().map(|u| format!("unknown field \"{u}\"")))
            .collect()
    }
}

/// The 422 of a patch refused under `fieldValidation=Strict` (kube-apiserver's `NewInvalid` with no kind and
/// no name, one cause on the field `patch`).
pub fn invalid_patch(shown: &str, errors: &[String]) -> ApiError {
    let message = format!(
        "Invalid value: {}: strict decoding error: {}",
        go_text::quote(shown),
        errors.join(", ")
    );
    ApiError::new(422, "Invalid", format!(" \"\" is invalid: patch: {message}")).with_details(
        json!({ "causes": [{ "reason": "FieldValueInvalid", "message": message, "field": "patch" }] }),
    )
}

/// The findings of a JSON patch `ops` (decoded with `errors`) applied to give `patched`: the errors get kube-apiserver's
/// `json patch ` prefix, and a duplicate key inside an added or replaced value is found again in the object, at
/// the place the operation put it.
pub fn json_patch_findings(ops: &Value, errors: Vec<String>, patched: &Value) -> PatchFindings {
    let mut object = Vec::new();
    for e in &errors {
        let Some(path) = e
            .strip_prefix("duplicate field \"")
            .and_then(|p| p.strip_suffix('"'))
        else {
            continue;
        };
        let Some((index, rest)) = path.strip_prefix('[').and_then(|p| p.split_once("].value"))
        else {
            continue;
        };
        if rest.is_empty() {
            continue;
        }
        let op = index.parse::<usize>().ok().and_then(|i| ops.get(i));
        let Some(op) = op.filter(|op| matches!(op["op"].as_str(), Some("add" | "replace"))) else {
            continue;
        };
        if let Some(at) = op["path"].as_str().and_then(|p| dotted(p, patched)) {
            let rest = if at.is_empty() {
                rest.trim_start_matches('.')
            } else {
                rest
            };
            object.push(format!("duplicate field \"{at}{rest}\""));
        }
    }
    PatchFindings {
        patch: errors
            .into_iter()
            .map(|e| format!("json patch {e}"))
            .collect(),
        object,
        shown: go_text::json(patched),
    }
}

/// A JSON pointer as a strict-decoding path in `doc` (`/spec/containers/0/env` is `spec.containers[0].env`).
fn dotted(pointer: &str, doc: &Value) -> Option<String> {
    let mut out = String::new();
    let mut at = doc;
    for raw in pointer.split('/').skip(1) {
        let seg = raw.replace("~1", "/").replace("~0", "~");
        match at {
            Value::Array(items) => {
                let i = if seg == "-" {
                    items.len().checked_sub(1)?
                } else {
                    seg.parse().ok()?
                };
                out.push_str(&format!("[{i}]"));
                at = items.get(i)?;
            }
            Value::Object(m) => {
                out = json::child(&out, &seg);
                at = m.get(&seg)?;
            }
            _ => return None,
        }
    }
    Some(out)
}

/// The 400 of a server-side apply refused under `Strict` for its duplicate keys (`lines` from
/// [`yaml::duplicate_keys`]).
pub fn duplicate_yaml_keys(lines: &[String]) -> ApiError {
    ApiError::bad_request(format!(
        "error strict decoding YAML: error converting YAML to JSON: yaml: unmarshal errors:\n  {}",
        lines.join("\n  ")
    ))
}

/// The 500 of a server-side apply whose configuration has fields the schema does not declare, as
/// structured-merge-diff refuses it (`paths` in its form, `.spec.foo`), whatever `fieldValidation` says.
pub fn undeclared_fields(namespace: &str, name: &str, gvk: &str, paths: &[String]) -> ApiError {
    let errors = if let [one] = paths {
        format!("{one}: field not declared in schema")
    } else {
        let lines: Vec<String> = paths
            .iter()
            .map(|p| format!("  {p}: field not declared in schema"))
            .collect();
        format!("errors:\n{}", lines.join("\n"))
    };
    // Not a Status error in kube-apiserver: answered as a 500 without a reason.
    ApiError::new(
        500,
        "",
        format!("failed to create typed patch object ({namespace}/{name}; {gvk}): {errors}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_duplicate_in_an_added_value_is_found_in_the_object() {
        let body = br#"[{"op":"add","path":"/metadata/labels","value":{"e":"1","e":"2"}}]"#;
        let (ops, errors) = json::decode(body, json::Shape::Operations).unwrap();
        let patched = serde_json::json!({"metadata": {"labels": {"e": "2"}}});
        let f = json_patch_findings(&ops, errors, &patched);
        assert_eq!(
            f.errors(&[]),
            [
                r#"json patch duplicate field "[0].value.e""#,
                r#"duplicate field "metadata.labels.e""#
            ]
        );
    }
}
