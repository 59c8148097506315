//! Quantities in canonical form, as kube-apiserver stores every `resource.Quantity` field of a built-in kind:
//! `1024Mi` becomes `1Gi`, `0.5` becomes `500m`, `1000` becomes `1k`.
//!
//! The rules are those of apimachinery's `Quantity.CanonicalizeBytes`: a decimal quantity keeps its kind of
//! suffix (SI or exponent) with the mantissa stripped of trailing zeros and the exponent a multiple of three; a
//! binary one (`Ki`…`Ei`) keeps a binary suffix when it is a whole number of at least 1024 in magnitude, and
//! is written in decimal SI otherwise. Precision finer than nano is rounded up. Which fields are quantities is
//! read from the k8s-openapi type's JSON schema (`io.k8s.apimachinery.pkg.api.resource.Quantity`).

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use k8s_openapi::schemars::{self, JsonSchema};
use serde_json::{Map, Value};

const QUANTITY_REF: &str = "#/$defs/io.k8s.apimachinery.pkg.api.resource.Quantity";

/// The kind of suffix a quantity was written with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    DecimalSi,
    DecimalExponent,
    BinarySi,
}

/// `mantissa × 10^exponent × 2^binary`.
#[derive(Debug, Clone, Copy)]
struct Parsed {
    mantissa: i128,
    exponent: i32,
    binary: u32,
    format: Format,
}

fn parse(s: &str) -> Option<Parsed> {
    let (negative, rest) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    let (number, suffix) = rest.split_at(end);
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if (whole.is_empty() && fraction.is_empty()) || fraction.contains('.') {
        return None;
    }
    let mut mantissa: i128 = 0;
    for d in whole.bytes().chain(fraction.bytes()) {
        mantissa = mantissa
            .checked_mul(10)?
            .checked_add(i128::from(d - b'0'))?;
    }
    if negative {
        mantissa = -mantissa;
    }
    let mut exponent = -i32::try_from(fraction.len()).ok()?;
    let (format, binary) = match suffix {
        "Ki" => (Format::BinarySi, 10),
        "Mi" => (Format::BinarySi, 20),
        "Gi" => (Format::BinarySi, 30),
        "Ti" => (Format::BinarySi, 40),
        "Pi" => (Format::BinarySi, 50),
        "Ei" => (Format::BinarySi, 60),
        "" | "n" | "u" | "m" | "k" | "M" | "G" | "T" | "P" | "E" => {
            exponent += match suffix {
                "n" => -9,
                "u" => -6,
                "m" => -3,
                "k" => 3,
                "M" => 6,
                "G" => 9,
                "T" => 12,
                "P" => 15,
                "E" => 18,
                _ => 0,
            };
            (Format::DecimalSi, 0)
        }
        other => {
            let e = other.strip_prefix(['e', 'E'])?;
            let digits = e.strip_prefix(['+', '-']).unwrap_or(e);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            exponent = exponent.checked_add(e.parse().ok()?)?;
            (Format::DecimalExponent, 0)
        }
    };
    Some(Parsed {
        mantissa,
        exponent,
        binary,
        format,
    })
}

/// `m × 10^e` with the mantissa stripped of factors of ten and the exponent a multiple of three (nano at least).
fn decimal_canonical(mut m: i128, mut e: i32) -> Option<(i128, i32)> {
    if e < -9 {
        // Finer than nano: round up (away from zero is how Go rounds a positive amount up; keep the sign).
        let div = 10i128.checked_pow(u32::try_from(-9 - e).ok()?)?;
        let q = m / div;
        m = if m % div == 0 {
            q
        } else if m > 0 {
            q + 1
        } else {
            q - 1
        };
        e = -9;
    }
    while m != 0 && m % 10 == 0 {
        m /= 10;
        e += 1;
    }
    match e.rem_euclid(3) {
        1 => {
            m = m.checked_mul(10)?;
            e -= 1;
        }
        2 => {
            m = m.checked_mul(100)?;
            e -= 2;
        }
        _ => {}
    }
    Some((m, e))
}

fn decimal_suffix(e: i32, format: Format) -> String {
    let si = match e {
        -9 => Some("n"),
        -6 => Some("u"),
        -3 => Some("m"),
        0 => Some(""),
        3 => Some("k"),
        6 => Some("M"),
        9 => Some("G"),
        12 => Some("T"),
        15 => Some("P"),
        18 => Some("E"),
        _ => None,
    };
    match (format, si) {
        (Format::DecimalSi, Some(s)) => s.to_string(),
        (_, _) if e == 0 => String::new(),
        _ => format!("e{e}"),
    }
}

/// A quantity in the form kube-apiserver stores it, or `None` when `s` is not a quantity this can represent
/// exactly (then it is left as written).
pub(crate) fn canonical(s: &str) -> Option<String> {
    let p = parse(s)?;
    if p.mantissa == 0 {
        return Some("0".into());
    }
    let with_binary = p.mantissa.checked_mul(2i128.checked_pow(p.binary)?)?;
    let mut format = p.format;
    if format == Format::BinarySi {
        // The value as an integer, if it is one.
        let integer = if p.exponent >= 0 {
            with_binary.checked_mul(10i128.checked_pow(u32::try_from(p.exponent).ok()?)?)
        } else {
            let div = 10i128.checked_pow(u32::try_from(-p.exponent).ok()?)?;
            (with_binary % div == 0).then(|| with_binary / div)
        };
        match integer {
            Some(mut v) if v.abs() >= 1024 => {
                let mut power = 0;
                while v % 1024 == 0 && power < 60 {
                    v /= 1024;
                    power += 10;
                }
                let suffix = match power {
                    10 => "Ki",
                    20 => "Mi",
                    30 => "Gi",
                    40 => "Ti",
                    50 => "Pi",
                    60 => "Ei",
                    _ => "",
                };
                return Some(format!("{v}{suffix}"));
            }
            _ => format = Format::DecimalSi,
        }
    }
    let (m, e) = decimal_canonical(with_binary, p.exponent)?;
    Some(format!("{m}{}", decimal_suffix(e, format)))
}

/// Compares two quantities by value (`Quantity.Cmp`), `None` when either is not a quantity or the comparison
/// does not fit exact arithmetic.
pub(crate) fn compare(a: &str, b: &str) -> Option<std::cmp::Ordering> {
    let (a, b) = (parse(a)?, parse(b)?);
    let scale = |p: Parsed, e: i32| -> Option<i128> {
        let m = p.mantissa.checked_mul(2i128.checked_pow(p.binary)?)?;
        m.checked_mul(10i128.checked_pow(u32::try_from(p.exponent - e).ok()?)?)
    };
    let e = a.exponent.min(b.exponent);
    Some(scale(a, e)?.cmp(&scale(b, e)?))
}

/// A quantity's value as a whole number, rounded away from zero (`Quantity.Value`), `None` when `s` is not a
/// quantity or its value does not fit exact arithmetic.
pub(crate) fn value(s: &str) -> Option<i128> {
    let p = parse(s)?;
    let m = p.mantissa.checked_mul(2i128.checked_pow(p.binary)?)?;
    if p.exponent >= 0 {
        return m.checked_mul(10i128.checked_pow(u32::try_from(p.exponent).ok()?)?);
    }
    let div = 10i128.checked_pow(u32::try_from(-p.exponent).ok()?)?;
    let q = m / div;
    Some(match m % div {
        0 => q,
        _ if m > 0 => q + 1,
        _ => q - 1,
    })
}

/// The JSON schema of a k8s-openapi type, generated once per type.
fn schema_of<K: JsonSchema + 'static>() -> Arc<Value> {
    static SCHEMAS: OnceLock<Mutex<HashMap<TypeId, Arc<Value>>>> = OnceLock::new();
    let mut schemas = SCHEMAS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    schemas
        .entry(TypeId::of::<K>())
        .or_insert_with(|| Arc::new(schemars::schema_for!(K).to_value()))
        .clone()
}

/// Puts every quantity field of `obj`, an object of the k8s-openapi type `K`, in canonical form.
pub(crate) fn canonicalize<K: JsonSchema + 'static>(obj: &mut Value) {
    let schema = schema_of::<K>();
    let Some(defs) = schema.get("$defs").and_then(Value::as_object) else {
        walk(obj, &schema, &Map::new(), 0);
        return;
    };
    walk(obj, &schema, defs, 0);
}

fn walk(value: &mut Value, schema: &Value, defs: &Map<String, Value>, depth: usize) {
    // Kubernetes objects nest a few dozen levels at most; the bound guards recursive schemas.
    if depth > 64 {
        return;
    }
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        if r == QUANTITY_REF {
            if let Value::String(s) = value
                && let Some(c) = canonical(s)
            {
                *s = c;
            }
            return;
        }
        if let Some(target) = r.strip_prefix("#/$defs/").and_then(|n| defs.get(n)) {
            walk(value, target, defs, depth + 1);
        }
        return;
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(parts) = schema.get(key).and_then(Value::as_array) {
            for part in parts {
                walk(value, part, defs, depth + 1);
            }
        }
    }
    match value {
        Value::Object(fields) => {
            let properties = schema.get("properties").and_then(Value::as_object);
            let additional = schema.get("additionalProperties").filter(|a| a.is_object());
            for (k, v) in fields.iter_mut() {
                match properties.and_then(|p| p.get(k)) {
                    Some(s) => walk(v, s, defs, depth + 1),
                    None => {
                        if let Some(s) = additional {
                            walk(v, s, defs, depth + 1);
                        }
                    }
                }
            }
        }
        Value::Array(items) => {
            if let Some(s) = schema.get("items") {
                for item in items {
                    walk(item, s, defs, depth + 1);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_round_away_from_zero() {
        assert_eq!(value("1Ki"), Some(1024));
        assert_eq!(value("1.5"), Some(2));
        assert_eq!(value("-500m"), Some(-1));
        assert_eq!(value("-2"), Some(-2));
        assert_eq!(value("2e3"), Some(2000));
        assert_eq!(value("x"), None);
    }

    #[test]
    fn canonical_forms_match_apimachinery() {
        for (written, stored) in [
            ("1024Mi", "1Gi"),
            ("1536Mi", "1536Mi"),
            ("1.5Gi", "1536Mi"),
            ("2048Ki", "2Mi"),
            ("0.5Ki", "512"),
            ("1Ki", "1Ki"),
            ("0.5", "500m"),
            ("1.5", "1500m"),
            ("1000m", "1"),
            ("1000", "1k"),
            ("2048", "2048"),
            ("100M", "100M"),
            ("1e3", "1e3"),
            ("1E3", "1e3"),
            ("1000e0", "1e3"),
            ("0.1", "100m"),
            ("10n", "10n"),
            ("0.0000000001", "1n"),
            ("0", "0"),
            ("0Gi", "0"),
            ("-1500m", "-1500m"),
            ("+2", "2"),
            ("12e1", "120"),
        ] {
            assert_eq!(canonical(written).as_deref(), Some(stored), "{written}");
        }
        assert_eq!(canonical("nginx"), None);
        assert_eq!(canonical("1e"), None);
    }

    #[test]
    fn quantity_fields_of_a_typed_object_are_canonicalized_and_others_left_alone() {
        use k8s_openapi::api::core::v1::Pod;
        let mut pod = json!({
            "metadata": {"name": "p", "labels": {"size": "1024Mi"}},
            "spec": {"containers": [{
                "name": "app",
                "image": "nginx",
                "env": [{"name": "LIMIT", "value": "1024Mi"}],
                "resources": {"limits": {"memory": "1024Mi", "cpu": "0.5"}, "requests": {"cpu": "1000m"}},
            }]},
        });
        canonicalize::<Pod>(&mut pod);
        let c = &pod["spec"]["containers"][0];
        assert_eq!(c["resources"]["limits"]["memory"], "1Gi");
        assert_eq!(c["resources"]["limits"]["cpu"], "500m");
        assert_eq!(c["resources"]["requests"]["cpu"], "1");
        assert_eq!(c["env"][0]["value"], "1024Mi", "not a quantity field");
        assert_eq!(pod["metadata"]["labels"]["size"], "1024Mi");
    }
}
