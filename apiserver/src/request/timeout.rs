//! The `timeout` query parameter: apiserver's request-deadline filter refuses every request that is not
//! long-running (a watch) whose `timeout` Go's `time.ParseDuration` cannot read, before any handler runs.

use super::{Query, Route, Verb};
use crate::error::ApiError;

/// The `400 BadRequest` kube-apiserver answers when `query`'s `timeout` is not a Go duration, if `route` is
/// not a watch (long-running requests are not given a deadline, so their `timeout` is not read).
pub fn check(route: &Route, query: &Query) -> Result<(), ApiError> {
    if let Route::Resource(rr) = route
        && rr.verb == Verb::Watch
    {
        return Ok(());
    }
    let Some(value) = query.get("timeout") else {
        return Ok(());
    };
    match go_duration_nanos(value) {
        Ok(_) => Ok(()),
        Err(e) => Err(ApiError::bad_request(format!(
            "invalid timeout specified in the request URL - {e}"
        ))),
    }
}

/// Go's `time.ParseDuration` in nanoseconds, or its error message (`time: invalid duration "x"`).
fn go_duration_nanos(orig: &str) -> Result<i64, String> {
    let invalid = || format!("time: invalid duration {}", quote(orig));
    let mut s = orig;
    let mut negative = false;
    if let Some(rest) = s.strip_prefix('-') {
        negative = true;
        s = rest;
    } else if let Some(rest) = s.strip_prefix('+') {
        s = rest;
    }
    if s == "0" {
        return Ok(0);
    }
    if s.is_empty() {
        return Err(invalid());
    }
    let mut total: u64 = 0;
    while !s.is_empty() {
        let first = s.as_bytes()[0];
        if !(first == b'.' || first.is_ascii_digit()) {
            return Err(invalid());
        }
        // The integer part.
        let digits = s.bytes().take_while(u8::is_ascii_digit).count();
        let mut value: u64 = 0;
        for d in s[..digits].bytes() {
            value = value
                .checked_mul(10)
                .and_then(|v| v.checked_add(u64::from(d - b'0')))
                .filter(|v| *v <= 1 << 63)
                .ok_or_else(invalid)?;
        }
        let pre = digits > 0;
        s = &s[digits..];
        // The fraction, as value / scale.
        let (mut fraction, mut scale, mut post) = (0u64, 1f64, false);
        if let Some(rest) = s.strip_prefix('.') {
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            let mut overflow = false;
            for d in rest[..digits].bytes() {
                if overflow {
                    continue;
                }
                match fraction
                    .checked_mul(10)
                    .and_then(|v| v.checked_add(u64::from(d - b'0')))
                    .filter(|v| *v <= 1 << 63)
                {
                    Some(v) => {
                        fraction = v;
                        scale *= 10.0;
                    }
                    None => overflow = true,
                }
            }
            post = digits > 0;
            s = &rest[digits..];
        }
        if !pre && !post {
            return Err(invalid());
        }
        let unit_len = s
            .char_indices()
            .find(|(_, c)| *c == '.' || c.is_ascii_digit())
            .map_or(s.len(), |(i, _)| i);
        if unit_len == 0 {
            return Err(format!("time: missing unit in duration {}", quote(orig)));
        }
        let unit = &s[..unit_len];
        s = &s[unit_len..];
        let nanos: u64 = match unit {
            "ns" => 1,
            "us" | "\u{b5}s" | "\u{3bc}s" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60 * 1_000_000_000,
            "h" => 3_600 * 1_000_000_000,
            _ => {
                return Err(format!(
                    "time: unknown unit {} in duration {}",
                    quote(unit),
                    quote(orig)
                ));
            }
        };
        if value > (1 << 63) / nanos {
            return Err(invalid());
        }
        value *= nanos;
        if fraction > 0 {
            // Go adds the fraction in floating point, truncated.
            value = value
                .checked_add((fraction as f64 * (nanos as f64 / scale)) as u64)
                .filter(|v| *v <= 1 << 63)
                .ok_or_else(invalid)?;
        }
        total = total
            .checked_add(value)
            .filter(|v| *v <= 1 << 63)
            .ok_or_else(invalid)?;
    }
    if negative {
        Ok(0i64.wrapping_sub_unsigned(total))
    } else {
        i64::try_from(total).map_err(|_| invalid())
    }
}

/// Go's `time.quote`: double quotes, `"` and `\` escaped, bytes of control and non-ASCII characters as `\xNN`.
fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        if c < ' ' || !c.is_ascii() {
            let mut buf = [0u8; 4];
            for b in c.encode_utf8(&mut buf).bytes() {
                out.push_str(&format!("\\x{b:02x}"));
            }
        } else {
            if c == '"' || c == '\\' {
                out.push('\\');
            }
            out.push(c);
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_as_go_reads_them() {
        assert_eq!(go_duration_nanos("1h1m"), Ok(3_660_000_000_000));
        assert_eq!(go_duration_nanos(".5s"), Ok(500_000_000));
        assert_eq!(go_duration_nanos("1.s"), Ok(1_000_000_000));
        assert_eq!(go_duration_nanos("-0"), Ok(0));
        assert_eq!(go_duration_nanos("-1.5us"), Ok(-1_500));
        assert_eq!(go_duration_nanos("1µs"), Ok(1_000));
    }

    #[test]
    fn errors_are_gos() {
        assert_eq!(
            go_duration_nanos("invalid").unwrap_err(),
            r#"time: invalid duration "invalid""#
        );
        assert_eq!(
            go_duration_nanos("5").unwrap_err(),
            r#"time: missing unit in duration "5""#
        );
        assert_eq!(
            go_duration_nanos("1e3s").unwrap_err(),
            r#"time: unknown unit "e" in duration "1e3s""#
        );
        assert_eq!(
            go_duration_nanos(" 1s").unwrap_err(),
            r#"time: invalid duration " 1s""#
        );
        assert_eq!(
            go_duration_nanos("1x").unwrap_err(),
            r#"time: unknown unit "x" in duration "1x""#
        );
        assert_eq!(
            go_duration_nanos("99999999999h").unwrap_err(),
            r#"time: invalid duration "99999999999h""#
        );
    }
}
