//! Go formatting (fmt, strconv, encoding/json) of values in the server's messages.

use serde_json::{Map, Value};

use super::go_regex::{printable_re, re_match};

/// A field error's value as apimachinery prints it: `%v` for numbers and booleans, `%q` for
/// strings, JSON for everything else.
pub(super) fn go_bad_value(v: &Value) -> String {
    match v {
        Value::Number(n) => match num(n) {
            Num::Int(i) => i.to_string(),
            Num::Float(f) => go_float_v(f),
        },
        Value::Bool(b) => b.to_string(),
        Value::String(s) => go_quote(s),
        other => go_json(other),
    }
}

/// Shortest decimal digits and decimal exponent of a positive finite float.
pub(super) fn float_digits(f: f64) -> (String, i32) {
    let s = format!("{f:e}");
    let (mantissa, exp) = s.split_once('e').unwrap_or((s.as_str(), "0"));
    (
        mantissa.chars().filter(char::is_ascii_digit).collect(),
        exp.parse().unwrap_or(0),
    )
}

pub(super) fn fmt_e(digits: &str, exp: i32) -> String {
    let (first, rest) = digits.split_at(digits.len().min(1));
    let mut s = if first.is_empty() {
        "0".to_string()
    } else {
        first.to_string()
    };
    if !rest.is_empty() {
        s.push('.');
        s.push_str(rest);
    }
    s.push_str(&format!(
        "e{}{:02}",
        if exp < 0 { '-' } else { '+' },
        exp.abs()
    ));
    s
}

pub(super) fn fmt_f(digits: &str, exp: i32) -> String {
    let dp = exp + 1;
    let nd = digits.len() as i32;
    if dp <= 0 {
        format!("0.{}{digits}", "0".repeat((-dp) as usize))
    } else if dp >= nd {
        format!("{digits}{}", "0".repeat((dp - nd) as usize))
    } else {
        format!("{}.{}", &digits[..dp as usize], &digits[dp as usize..])
    }
}

/// Go's `%v` of a float64 (`strconv.FormatFloat(f, 'g', -1, 64)`): `1e+06`, `0.5`, `123456`.
pub(crate) fn go_float_v(f: f64) -> String {
    if f.is_nan() {
        return "NaN".to_string();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf" } else { "-Inf" }.to_string();
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    let (digits, exp) = float_digits(f.abs());
    let body = if !(-4..6).contains(&exp) {
        fmt_e(&digits, exp)
    } else {
        fmt_f(&digits, exp)
    };
    if f < 0.0 { format!("-{body}") } else { body }
}

/// Go's `encoding/json` rendering of a float64.
pub(super) fn go_float_json(f: f64) -> String {
    if !f.is_finite() {
        return "null".to_string();
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    let abs = f.abs();
    let (digits, exp) = float_digits(abs);
    let body = if !(1e-6..1e21).contains(&abs) {
        let e = fmt_e(&digits, exp);
        match e.find("e-0") {
            Some(i) if e.len() == i + 4 => format!("{}e-{}", &e[..i], &e[i + 3..]),
            _ => e,
        }
    } else {
        fmt_f(&digits, exp)
    };
    if f < 0.0 { format!("-{body}") } else { body }
}

/// Go's `json.Marshal` of decoded JSON (sorted keys, HTML-safe escaping).
pub(crate) fn go_json(v: &Value) -> String {
    let mut out = String::new();
    write_go_json(v, &mut out);
    out
}

pub(super) fn write_go_json(v: &Value, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => match num(n) {
            Num::Int(i) => out.push_str(&i.to_string()),
            Num::Float(f) => out.push_str(&go_float_json(f)),
        },
        Value::String(s) => write_go_json_string(s, out),
        Value::Array(a) => {
            out.push('[');
            for (i, item) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_go_json(item, out);
            }
            out.push(']');
        }
        Value::Object(m) => {
            out.push('{');
            for (i, k) in sorted_keys(m).iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_go_json_string(k, out);
                out.push(':');
                if let Some(item) = m.get(k) {
                    write_go_json(item, out);
                }
            }
            out.push('}');
        }
    }
}

pub(super) fn write_go_json_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Go's `unicode.IsPrint`.
pub(super) fn is_go_print(c: char) -> bool {
    if c.is_ascii() {
        return (' '..='~').contains(&c);
    }
    let mut buf = [0u8; 4];
    re_match(printable_re(), c.encode_utf8(&mut buf))
}

/// Go's `strconv.Quote` (`%q`).
pub(crate) fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if is_go_print(c) => out.push(c),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    out.push('"');
    out
}

/// The keys of a JSON object in Go's order (sorted, as `encoding/json` writes a map).
pub(super) fn sorted_keys(m: &Map<String, Value>) -> Vec<String> {
    let mut keys: Vec<String> = m.keys().cloned().collect();
    keys.sort();
    keys
}

/// A JSON number as the server decodes it: integers that fit in int64 stay integers, everything
/// else is a float64.
#[derive(Debug, Clone, Copy)]
pub(super) enum Num {
    Int(i64),
    Float(f64),
}

pub(super) fn num(n: &serde_json::Number) -> Num {
    match n.as_i64() {
        Some(i) => Num::Int(i),
        None => Num::Float(n.as_f64().unwrap_or(0.0)),
    }
}
