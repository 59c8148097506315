//! The YAML gnostic keeps of a free value (an extension's value, a `default`, an `enum` member), written as
//! gnostic writes it (go-yaml v3, indent 2): block style, keys in order, a string quoted only when it would
//! otherwise read as something else. Strings with line breaks, which go-yaml writes as literal blocks, are
//! double-quoted here (no free value of a Kubernetes document has one).

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

/// A string as go-yaml writes it: double-quoted when YAML would read it as another type (empty, a null, a
/// YAML 1.1 boolean, a number) or it holds a character that needs escaping; single-quoted when it starts
/// with an indicator or holds one that would end a plain scalar (`: `, ` #`), or has spaces at its ends;
/// plain otherwise.
fn scalar_string(s: &str) -> String {
    let double = || serde_json::to_string(s).unwrap_or_default();
    if s.is_empty() || resolves_to_another_type(s) || s.chars().any(|c| c.is_control()) {
        return double();
    }
    let chars: Vec<char> = s.chars().collect();
    let spaced = |i: usize| chars.get(i).is_none_or(|c| *c == ' ');
    let indicator = "#,[]{}&*!|>'\"%@`".contains(chars[0])
        || ("?:-".contains(chars[0]) && spaced(1))
        || chars.iter().enumerate().any(|(i, c)| {
            (*c == ':' && spaced(i + 1)) || (*c == '#' && i > 0 && chars[i - 1] == ' ')
        })
        || s.starts_with(' ')
        || s.ends_with(' ');
    if indicator {
        format!("'{}'", s.replace('\'', "''"))
    } else {
        s.to_string()
    }
}

/// Whether YAML (go-yaml v3, which also quotes YAML 1.1's booleans) reads `s` as a null, a boolean or a
/// number.
fn resolves_to_another_type(s: &str) -> bool {
    const WORDS: &[&str] = &[
        "~", "null", "Null", "NULL", "true", "True", "TRUE", "false", "False", "FALSE", "y", "Y",
        "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF",
        ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF", ".nan",
        ".NaN", ".NAN",
    ];
    if WORDS.contains(&s) {
        return true;
    }
    let plain = s.replace('_', "");
    let unsigned = plain.trim_start_matches(['+', '-']);
    plain.parse::<f64>().is_ok()
        || unsigned
            .strip_prefix("0x")
            .is_some_and(|h| !h.is_empty() && h.chars().all(|c| c.is_ascii_hexdigit()))
        || unsigned
            .strip_prefix("0o")
            .is_some_and(|o| !o.is_empty() && o.chars().all(|c| ('0'..='7').contains(&c)))
        || unsigned
            .strip_prefix("0b")
            .is_some_and(|b| !b.is_empty() && b.chars().all(|c| c == '0' || c == '1'))
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
        assert_eq!(yaml(&json!("*")), "'*'\n");
        assert_eq!(yaml(&json!("SIGRTMIN+10")), "SIGRTMIN+10\n");
        assert_eq!(yaml(&json!("merge,retainKeys")), "merge,retainKeys\n");
        assert_eq!(yaml(&json!("cert sign")), "cert sign\n");
        assert_eq!(yaml(&json!("s/mime")), "s/mime\n");
        assert_eq!(yaml(&json!("yes")), "\"yes\"\n");
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
