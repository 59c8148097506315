//! How Go prints the values kube-apiserver's strict patch errors show: `%+v` of a decoded JSON value
//! (`map[a:1 b:[x y]]`), `%q` of a string, and `encoding/json`'s compact encoding.

use std::fmt::Write as _;

use serde_json::{Number, Value};

/// Go's `%+v` of the `map[string]interface{}` (or other value) `sigs.k8s.io/json` decodes: maps with sorted
/// keys as `map[k:v ...]`, slices as `[a b]`, strings bare, `null` as `<nil>`, integers as integers and other
/// numbers as `%v` prints a float64.
pub fn plus_v(v: &Value) -> String {
    let mut out = String::new();
    write_plus_v(v, &mut out);
    out
}

fn write_plus_v(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("<nil>"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&go_number(n)),
        Value::String(s) => out.push_str(s),
        Value::Array(a) => {
            out.push('[');
            for (i, item) in a.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                write_plus_v(item, out);
            }
            out.push(']');
        }
        Value::Object(m) => {
            out.push_str("map[");
            for (i, (k, item)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                out.push_str(k);
                out.push(':');
                write_plus_v(item, out);
            }
            out.push(']');
        }
    }
}

/// An int64 as Go prints it, anything else as `%v` prints a float64 (`2.5`, `1e+06`, `1.5e-07`).
fn go_number(n: &Number) -> String {
    if let Some(i) = n.as_i64() {
        return i.to_string();
    }
    go_float(n.as_f64().unwrap_or(0.0))
}

/// `strconv.FormatFloat(f, 'g', -1, 64)`: the shortest digits, in exponent form when the exponent is below -4
/// or at least 6 (the precision `%v` uses for the shortest representation).
pub fn go_float(f: f64) -> String {
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    if f.is_nan() {
        return "NaN".to_string();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf" } else { "-Inf" }.to_string();
    }
    // Rust's `{:e}` prints the shortest round-tripping digits: `d.ddde±x`.
    let sci = format!("{:e}", f.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let sign = if f < 0.0 { "-" } else { "" };
    if !(-4..6).contains(&exp) {
        let (first, rest) = digits.split_at(1);
        let frac = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let esign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{first}{frac}e{esign}{:02}", exp.abs());
    }
    let point = exp + 1;
    let text = if point <= 0 {
        format!("0.{}{digits}", "0".repeat(point.unsigned_abs() as usize))
    } else if point as usize >= digits.len() {
        format!("{digits}{}", "0".repeat(point as usize - digits.len()))
    } else {
        let (int, frac) = digits.split_at(point as usize);
        format!("{int}.{frac}")
    };
    format!("{sign}{text}")
}

/// Go's `%q` of a string: double-quoted with Go's escapes.
pub fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `encoding/json`'s compact encoding of a value with sorted keys: strings escape `<`, `>`, `&`, U+2028 and
/// U+2029 as Go does.
pub fn json(v: &Value) -> String {
    let mut out = String::new();
    write_json(v, &mut out);
    out
}

fn write_json(v: &Value, out: &mut String) {
    match v {
        Value::String(s) => write_json_string(s, out),
        Value::Array(a) => {
            out.push('[');
            for (i, item) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(item, out);
            }
            out.push(']');
        }
        Value::Object(m) => {
            out.push('{');
            for (i, (k, item)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json_string(k, out);
                out.push(':');
                write_json(item, out);
            }
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}

fn write_json_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn plus_v_as_go_prints_a_decoded_patch() {
        let v =
            json!({"spec": {"foo": 1, "bar": {"x": [1, "a", true, 2.5, null], "y": {"z": "w"}}}});
        assert_eq!(
            plus_v(&v),
            "map[spec:map[bar:map[x:[1 a true 2.5 <nil>] y:map[z:w]] foo:1]]"
        );
    }

    #[test]
    fn floats_as_percent_v() {
        assert_eq!(go_float(2.5), "2.5");
        assert_eq!(go_float(1.0), "1");
        assert_eq!(go_float(1e6), "1e+06");
        assert_eq!(go_float(123456.0), "123456");
        assert_eq!(go_float(1234567.5), "1.2345675e+06");
        assert_eq!(go_float(0.0001), "0.0001");
        assert_eq!(go_float(0.00001), "1e-05");
        assert_eq!(go_float(-0.5), "-0.5");
    }

    #[test]
    fn quote_and_json() {
        assert_eq!(quote("a\"b\\\n"), r#""a\"b\\\n""#);
        assert_eq!(
            json(&json!({"b": "<&>", "a": [1]})),
            r#"{"a":[1],"b":"\u003c\u0026\u003e"}"#
        );
    }
}
