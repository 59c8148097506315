//! The YAML gnostic keeps of a free value (an extension's value, a `default`, an `enum` member), written as
//! gnostic writes it (go-yaml v3, indent 2): block style, keys in order, a string quoted only when it would
//! otherwise read as something else.

use serde_json::Value;

/// `v` as YAML, ending with a newline.
pub(super) fn yaml(v: &Value) -> String {
    let mut out = String::new();
    node(v, 0, &mut out);
    out
}

/// Writes `v` at `indent`, starting on the current line (a scalar or an empty collection) or on new lines.
fn node(v: &Value, indent: usize, out: &mut String) {
    match v {
        Value::Object(map) if !map.is_empty() => {
            for (i, (k, v)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(&" ".repeat(indent));
                }
                out.push_str(&scalar_string(k));
                out.push(':');
                child(v, indent + 2, out);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(&" ".repeat(indent));
                }
                out.push_str("- ");
                node(item, indent + 2, out);
            }
        }
        _ => {
            out.push_str(&scalar(v));
            out.push('\n');
        }
    }
}

/// Writes the value of a mapping key: a scalar after the colon, a collection on the next lines.
fn child(v: &Value, indent: usize, out: &mut String) {
    match v {
        Value::Object(map) if !map.is_empty() => {
            out.push('\n');
            out.push_str(&" ".repeat(indent));
            node(v, indent, out);
        }
        Value::Array(items) if !items.is_empty() => {
            out.push('\n');
            out.push_str(&" ".repeat(indent));
            node(v, indent, out);
        }
        _ => {
            out.push(' ');
            node(v, indent, out);
        }
    }
}

fn scalar(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => scalar_string(s),
        Value::Array(_) => "[]".into(),
        Value::Object(_) => "{}".into(),
    }
}

/// A string, plain when YAML reads it back as that string, double-quoted otherwise.
fn scalar_string(s: &str) -> String {
    let reserved = [
        "true", "false", "yes", "no", "on", "off", "y", "n", "null", "~",
    ];
    let plain = !s.is_empty()
        && !reserved.contains(&s.to_ascii_lowercase().as_str())
        && s.parse::<f64>().is_err()
        && s.chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '/' || c == '_')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || " ._/-()".contains(c))
        && !s.ends_with(' ');
    if plain {
        s.to_string()
    } else {
        serde_json::to_string(s).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn values_are_written_as_go_yaml_writes_them() {
        assert_eq!(yaml(&json!(true)), "true\n");
        assert_eq!(yaml(&json!("TCP")), "TCP\n");
        assert_eq!(yaml(&json!("")), "\"\"\n");
        assert_eq!(yaml(&json!("80")), "\"80\"\n");
        assert_eq!(yaml(&json!(["port", "protocol"])), "- port\n- protocol\n");
        assert_eq!(
            yaml(&json!([{ "group": "", "kind": "ConfigMap", "version": "v1" }])),
            "- group: \"\"\n  kind: ConfigMap\n  version: v1\n"
        );
        assert_eq!(
            yaml(&json!({ "a": { "b": [1, 2] }, "c": {} })),
            "a:\n  b:\n    - 1\n    - 2\nc: {}\n"
        );
    }
}
