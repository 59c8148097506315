//! The validation messages of keys and values (k8s.io/apimachinery/pkg/util/validation), in Go's words.

pub(crate) const QUALIFIED_NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
pub(crate) const QUALIFIED_NAME_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', \
     and must start and end with an alphanumeric character";
pub(crate) const QUALIFIED_NAME_MAX_LEN: usize = 63;
pub(crate) const DNS1123_SUBDOMAIN_FMT: &str =
    r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
pub(crate) const DNS1123_SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case \
     alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
pub(crate) const DNS1123_SUBDOMAIN_MAX_LEN: usize = 253;
pub(crate) const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
pub(crate) const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric \
     characters, '-', '_' or '.', and must start and end with an alphanumeric character";
pub(crate) const LABEL_VALUE_MAX_LEN: usize = 63;

pub(crate) fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
    let examples: String = examples
        .iter()
        .enumerate()
        .map(|(i, e)| {
            if i == 0 {
                format!("'{e}', ")
            } else {
                format!(" or '{e}', ")
            }
        })
        .collect();
    format!("{msg} (e.g. {examples}regex used for validation is '{fmt}')")
}

pub(crate) fn max_len_error(n: usize) -> String {
    format!("must be no more than {n} characters")
}

/// `[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?`
pub(crate) fn is_qualified_name_part(s: &str) -> bool {
    let b = s.as_bytes();
    match (b.first(), b.last()) {
        (Some(first), Some(last)) => {
            first.is_ascii_alphanumeric()
                && last.is_ascii_alphanumeric()
                && b.iter()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        }
        _ => false,
    }
}

/// Dot-separated RFC 1123 labels: `[a-z0-9]([-a-z0-9]*[a-z0-9])?`.
pub(crate) fn is_dns1123_subdomain(s: &str) -> bool {
    s.split('.').all(|label| {
        let b = label.as_bytes();
        match (b.first(), b.last()) {
            (Some(first), Some(last)) => {
                is_lower_alnum(*first)
                    && is_lower_alnum(*last)
                    && b.iter().all(|&c| is_lower_alnum(c) || c == b'-')
            }
            _ => false,
        }
    })
}

pub(crate) fn is_lower_alnum(c: u8) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit()
}

/// `IsQualifiedName`: an optional DNS subdomain prefix and `/`, then a name of at most 63 chars.
pub(crate) fn qualified_name_errors(value: &str) -> Vec<String> {
    qualified_name_with(value, "a qualified name", max_len_error)
}

/// The rule of `IsQualifiedName` and of `content.IsLabelKey`, which differ in what they call the value
/// (`noun`) and in whether a length is counted in characters or bytes (`max_len`).
pub(crate) fn qualified_name_with(
    value: &str,
    noun: &str,
    max_len: fn(usize) -> String,
) -> Vec<String> {
    let mut errs = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                if prefix.len() > DNS1123_SUBDOMAIN_MAX_LEN {
                    errs.push(format!(
                        "prefix part {}",
                        max_len(DNS1123_SUBDOMAIN_MAX_LEN)
                    ));
                }
                if !is_dns1123_subdomain(prefix) {
                    errs.push(format!(
                        "prefix part {}",
                        regex_error(
                            DNS1123_SUBDOMAIN_MSG,
                            DNS1123_SUBDOMAIN_FMT,
                            &["example.com"]
                        )
                    ));
                }
            }
            *name
        }
        _ => {
            errs.push(format!(
                "{noun} {} with an optional DNS subdomain prefix and '/' \
                 (e.g. 'example.com/MyName')",
                regex_error(
                    QUALIFIED_NAME_MSG,
                    QUALIFIED_NAME_FMT,
                    &["MyName", "my.name", "123-abc"]
                )
            ));
            return errs;
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > QUALIFIED_NAME_MAX_LEN {
        errs.push(format!("name part {}", max_len(QUALIFIED_NAME_MAX_LEN)));
    }
    if !is_qualified_name_part(name) {
        errs.push(format!(
            "name part {}",
            regex_error(
                QUALIFIED_NAME_MSG,
                QUALIFIED_NAME_FMT,
                &["MyName", "my.name", "123-abc"]
            )
        ));
    }
    errs
}

/// `IsValidLabelValue`: empty, or at most 63 chars of the qualified-name pattern.
pub(crate) fn label_value_errors(value: &str) -> Vec<String> {
    label_value_with(value, max_len_error)
}

/// The rule of `IsValidLabelValue` and of `content.IsLabelValue`, which counts a length in bytes.
pub(crate) fn label_value_with(value: &str, max_len: fn(usize) -> String) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > LABEL_VALUE_MAX_LEN {
        errs.push(max_len(LABEL_VALUE_MAX_LEN));
    }
    if !value.is_empty() && !is_qualified_name_part(value) {
        errs.push(regex_error(
            LABEL_VALUE_MSG,
            LABEL_VALUE_FMT,
            &["MyValue", "my_value", "12345"],
        ));
    }
    errs
}

pub(crate) fn joined(errs: Vec<String>) -> Option<String> {
    (!errs.is_empty()).then(|| errs.join("; "))
}

/// A `field.Invalid` error: `path: Invalid value: <value>: detail`.
pub(crate) fn invalid(path: &str, bad_value: &str, detail: &str) -> String {
    format!("{path}: Invalid value: {bad_value}: {detail}")
}

/// `utilerrors.NewAggregate(...).Error()`: one message alone, several deduplicated in brackets.
pub(crate) fn aggregate(errs: Vec<String>) -> Option<String> {
    match errs.len() {
        0 => None,
        1 => errs.into_iter().next(),
        _ => {
            let mut seen: Vec<String> = Vec::new();
            for e in errs {
                if !seen.contains(&e) {
                    seen.push(e);
                }
            }
            if seen.len() == 1 {
                seen.pop()
            } else {
                Some(format!("[{}]", seen.join(", ")))
            }
        }
    }
}

/// Go's `%q` formatting of a string.
pub(crate) fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Go's `%#v` formatting of a `[]string` (empty ones are nil where this is used).
pub(crate) fn go_string_slice(values: &[String]) -> String {
    if values.is_empty() {
        return "[]string(nil)".to_string();
    }
    let quoted: Vec<String> = values.iter().map(|v| go_quote(v)).collect();
    format!("[]string{{{}}}", quoted.join(", "))
}
