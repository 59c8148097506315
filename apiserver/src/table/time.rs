//! Ages the way kube-apiserver's printers write them (`k8s.io/apimachinery/pkg/util/duration.HumanDuration`).

use serde_json::Value;

/// The time ages are counted up to: the server's clock when the table is printed.
pub(super) type Now = chrono::DateTime<chrono::Utc>;

/// A duration the way kubectl prints ages (`45s`, `3m20s`, `5h`, `2d3h`).
/// A time more than a second in the future is `<invalid>`.
pub(super) fn human_duration(secs: i64) -> String {
    if secs < -1 {
        return "<invalid>".into();
    }
    let s = secs.max(0);
    let (m, h, d) = (s / 60, s / 3600, s / 86400);
    if s < 120 {
        format!("{s}s")
    } else if m < 10 {
        let rest = s % 60;
        if rest == 0 {
            format!("{m}m")
        } else {
            format!("{m}m{rest}s")
        }
    } else if h < 3 {
        format!("{m}m")
    } else if h < 8 {
        let rest = m % 60;
        if rest == 0 {
            format!("{h}h")
        } else {
            format!("{h}h{rest}m")
        }
    } else if h < 48 {
        format!("{h}h")
    } else if d < 8 {
        let rest = h % 24;
        if rest == 0 {
            format!("{d}d")
        } else {
            format!("{d}d{rest}h")
        }
    } else if d < 365 * 2 {
        format!("{d}d")
    } else if d < 365 * 8 {
        let rest = d % 365;
        if rest == 0 {
            format!("{}y", d / 365)
        } else {
            format!("{}y{rest}d", d / 365)
        }
    } else {
        format!("{}y", d / 365)
    }
}

/// An RFC 3339 timestamp, if `value` is one.
pub(super) fn parse(value: &Value) -> Option<chrono::DateTime<chrono::Utc>> {
    value
        .as_str()
        .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
        .map(|t| t.with_timezone(&chrono::Utc))
}

/// The time since a timestamp (`translateTimestampSince`): `<unknown>` when it is missing or not a time.
pub(super) fn since(timestamp: &Value, now: Now) -> String {
    match parse(timestamp) {
        Some(t) => human_duration((now - t).num_seconds()),
        None => "<unknown>".into(),
    }
}

/// The time between two timestamps, both present.
pub(super) fn between(start: &Value, end: &Value) -> Option<String> {
    Some(human_duration((parse(end)? - parse(start)?).num_seconds()))
}

/// An object's age, as the `Age` cell of most printers.
pub(super) fn age(obj: &Value, now: Now) -> Value {
    Value::String(since(&obj["metadata"]["creationTimestamp"], now))
}

#[cfg(test)]
mod tests {
    use super::human_duration;

    #[test]
    fn ages_read_like_kubectl() {
        assert_eq!(human_duration(45), "45s");
        assert_eq!(human_duration(200), "3m20s");
        assert_eq!(human_duration(3 * 3600 + 60), "3h1m");
        assert_eq!(human_duration(20 * 3600), "20h");
        assert_eq!(human_duration(3 * 86400 + 7200), "3d2h");
        assert_eq!(human_duration(30 * 86400), "30d");
        assert_eq!(human_duration(3 * 365 * 86400 + 5 * 86400), "3y5d");
        assert_eq!(human_duration(9 * 365 * 86400), "9y");
        assert_eq!(human_duration(-1), "0s");
        assert_eq!(human_duration(-5), "<invalid>");
    }
}
