//! Kubernetes quantities (`1Gi`, `500m`, `1e3`) compared by value.
//!
//! kube-apiserver stores every quantity of a built-in kind in canonical form: `1024Mi` comes back as `1Gi`,
//! `0.5` as `500m`. A child whose desired state says `1024Mi` must not look drifted because the server wrote
//! `1Gi`, or the runtime would apply it again on every pass.

/// A quantity as `mantissa × 2^binary × 10^decimal`, exact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Parsed {
    mantissa: i128,
    binary: u32,
    decimal: i32,
}

/// Parses a quantity in Kubernetes' grammar: a signed decimal number followed by a binary suffix
/// (`Ki`…`Ei`), a decimal suffix (`n u m k M G T P E`) or an exponent (`e3`, `E-2`), or nothing.
fn parse(s: &str) -> Option<Parsed> {
    let (negative, rest) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let number_end = rest
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(rest.len());
    let (number, suffix) = rest.split_at(number_end);
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() && fraction.is_empty() || fraction.contains('.') {
        return None;
    }
    let digits = format!("{whole}{fraction}");
    let mut mantissa: i128 = 0;
    for d in digits.bytes() {
        mantissa = mantissa
            .checked_mul(10)?
            .checked_add(i128::from(d - b'0'))?;
    }
    if negative {
        mantissa = -mantissa;
    }
    let mut decimal = -i32::try_from(fraction.len()).ok()?;
    let mut binary = 0;
    match suffix {
        "" => {}
        "Ki" => binary = 10,
        "Mi" => binary = 20,
        "Gi" => binary = 30,
        "Ti" => binary = 40,
        "Pi" => binary = 50,
        "Ei" => binary = 60,
        "n" => decimal -= 9,
        "u" => decimal -= 6,
        "m" => decimal -= 3,
        "k" => decimal += 3,
        "M" => decimal += 6,
        "G" => decimal += 9,
        "T" => decimal += 12,
        "P" => decimal += 15,
        "E" => decimal += 18,
        exponent => {
            let e = exponent
                .strip_prefix('e')
                .or_else(|| exponent.strip_prefix('E'))?;
            let valid = !e.is_empty()
                && e.trim_start_matches(['+', '-'])
                    .bytes()
                    .all(|b| b.is_ascii_digit())
                && !e.trim_start_matches(['+', '-']).is_empty();
            if !valid {
                return None;
            }
            decimal = decimal.checked_add(e.parse::<i32>().ok()?)?;
        }
    }
    Some(Parsed {
        mantissa,
        binary,
        decimal,
    })
}

/// `m × 2^b × 10^d` for non-negative `b` and `d`, if it fits.
fn scaled(m: i128, b: u32, d: u32) -> Option<i128> {
    m.checked_mul(2i128.checked_pow(b)?)?
        .checked_mul(10i128.checked_pow(d)?)
}

/// Whether two strings are both quantities of the same value (`1024Mi` and `1Gi`, `0.5` and `500m`). Strings
/// that are not quantities, or too large to compare exactly, are never equal here.
///
/// ```
/// use kubewright::quantity::same_quantity;
/// assert!(same_quantity("1024Mi", "1Gi"));
/// assert!(same_quantity("0.5", "500m"));
/// assert!(same_quantity("1e3", "1k"));
/// assert!(!same_quantity("1Gi", "1G"));
/// assert!(!same_quantity("postgres", "postgres"));
/// ```
pub fn same_quantity(a: &str, b: &str) -> bool {
    let (Some(a), Some(b)) = (parse(a), parse(b)) else {
        return false;
    };
    let binary = a.binary.min(b.binary);
    let decimal = a.decimal.min(b.decimal);
    let side = |p: Parsed| {
        scaled(
            p.mantissa,
            p.binary - binary,
            u32::try_from(p.decimal - decimal).ok()?,
        )
    };
    matches!((side(a), side(b)), (Some(x), Some(y)) if x == y)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_forms_the_server_writes_are_the_same_quantity() {
        for (a, b) in [
            ("1024Mi", "1Gi"),
            ("1Gi", "1073741824"),
            ("0.5", "500m"),
            ("1000m", "1"),
            ("1.5Gi", "1536Mi"),
            ("2048Ki", "2Mi"),
            ("1e3", "1k"),
            ("1E-3", "1m"),
            ("+1", "1"),
            ("-1500m", "-1.5"),
            ("100M", "100000k"),
        ] {
            assert!(same_quantity(a, b), "{a} = {b}");
            assert!(same_quantity(b, a), "{b} = {a}");
        }
    }

    #[test]
    fn different_values_and_non_quantities_differ() {
        for (a, b) in [
            ("1Gi", "1G"),
            ("1", "2"),
            ("500m", "0.4"),
            ("nginx:1.27", "nginx:1.27"),
            ("1Gi ", "1Gi"),
            ("", ""),
            (".", "0"),
            ("1e", "1"),
            ("1ki", "1Ki"),
            ("1..0", "1"),
        ] {
            assert!(!same_quantity(a, b), "{a} != {b}");
        }
    }
}
