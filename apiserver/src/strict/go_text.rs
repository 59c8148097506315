//! How Go prints the values kube-apiserver's strict patch errors show: `%+v` of a decoded JSON value
//! (`map[a:1 b:[x y]]`), `%q` of a string, and `encoding/json`'s compact encoding.

use serde_json::{Number, Value};

/// `%v` of a float64, `%q` of a string and `encoding/json`'s compact encoding (sorted keys, HTML-safe), as
/// the schema's field errors print them.
pub(crate) use crate::schema::go_format::{
    go_float_v as go_float, go_json as json, go_quote as quote,
};

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
