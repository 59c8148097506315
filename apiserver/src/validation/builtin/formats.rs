//! The string formats of apimachinery's `util/validation` and `api/validate/content` (label keys and values,
//! DNS labels and subdomains, config keys), each returning Go's messages for a value that breaks it.

const DNS1123_LABEL_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1035_LABEL_FMT: &str = "[a-z]([-a-z0-9]*[a-z0-9])?";
const DNS1035_LABEL_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
const CONFIG_KEY_FMT: &str = "[-._a-zA-Z0-9]+";
const CONFIG_KEY_MSG: &str =
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.'";

use crate::selector::{
    DNS1123_SUBDOMAIN_FMT, DNS1123_SUBDOMAIN_MSG, is_dns1123_subdomain, label_value_with,
    max_len_error, qualified_name_with, regex_error,
};

/// `content.MaxLenError` (bytes).
fn max_len_bytes(n: usize) -> String {
    format!("must be no more than {n} bytes")
}

fn lower_alnum(c: u8) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit()
}

fn dns1123_label_matches(s: &str) -> bool {
    let b = s.as_bytes();
    match (b.first(), b.last()) {
        (Some(f), Some(l)) => {
            lower_alnum(*f) && lower_alnum(*l) && b.iter().all(|&c| lower_alnum(c) || c == b'-')
        }
        _ => false,
    }
}

/// `IsDNS1123Label`.
pub(super) fn dns1123_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push(max_len_error(63));
    }
    if !dns1123_label_matches(value) {
        if is_dns1123_subdomain(value) {
            errs.push("must not contain dots".into());
        } else {
            errs.push(regex_error(
                DNS1123_LABEL_MSG,
                DNS1123_LABEL_FMT,
                &["my-name", "123-abc"],
            ));
        }
    }
    errs
}

/// `IsDNS1123Subdomain`.
pub(super) fn dns1123_subdomain(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 253 {
        errs.push(max_len_error(253));
    }
    if !is_dns1123_subdomain(value) {
        errs.push(regex_error(
            DNS1123_SUBDOMAIN_MSG,
            DNS1123_SUBDOMAIN_FMT,
            &["example.com"],
        ));
    }
    errs
}

/// `IsWildcardDNS1123Subdomain`: `*.` followed by a DNS subdomain.
pub(super) fn wildcard_dns1123_subdomain(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 253 {
        errs.push(max_len_error(253));
    }
    let matches = value
        .strip_prefix("*.")
        .is_some_and(|rest| !rest.is_empty() && is_dns1123_subdomain(rest));
    if !matches {
        let fmt = format!(r"\*\.{DNS1123_SUBDOMAIN_FMT}");
        errs.push(regex_error(
            "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must \
             consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character",
            &fmt,
            &["*.example.com"],
        ));
    }
    errs
}

/// `IsDNS1035Label`.
pub(super) fn dns1035_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push(max_len_error(63));
    }
    let b = value.as_bytes();
    let ok = match (b.first(), b.last()) {
        (Some(f), Some(l)) => {
            f.is_ascii_lowercase()
                && lower_alnum(*l)
                && b.iter().all(|&c| lower_alnum(c) || c == b'-')
        }
        _ => false,
    };
    if !ok {
        errs.push(regex_error(
            DNS1035_LABEL_MSG,
            DNS1035_LABEL_FMT,
            &["my-name", "abc-123"],
        ));
    }
    errs
}

/// `content.IsLabelKey`: `IsQualifiedName`'s rule, naming a label key and counting bytes.
pub(super) fn label_key(value: &str) -> Vec<String> {
    qualified_name_with(value, "a valid label key", max_len_bytes)
}

/// `content.IsLabelValue`: `IsValidLabelValue`'s rule, counting bytes.
pub(super) fn label_value(value: &str) -> Vec<String> {
    label_value_with(value, max_len_bytes)
}

/// `IsConfigMapKey`: a key of a ConfigMap's or Secret's data.
pub(super) fn config_key(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 253 {
        errs.push(max_len_error(253));
    }
    let ok = !value.is_empty()
        && value
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'.' | b'_'));
    if !ok {
        errs.push(regex_error(
            CONFIG_KEY_MSG,
            CONFIG_KEY_FMT,
            &["key.name", "KEY_NAME", "key-name"],
        ));
    }
    if value == "." {
        errs.push("must not be '.'".into());
    } else if value == ".." {
        errs.push("must not be '..'".into());
    } else if value.starts_with("..") {
        errs.push("must not start with '..'".into());
    }
    errs
}

/// `path.IsValidPathSegmentName`: not `.` or `..`, no `/` or `%`.
pub(super) fn path_segment(value: &str) -> Vec<String> {
    if value == "." || value == ".." {
        return vec![format!("may not be '{value}'")];
    }
    ["/", "%"]
        .iter()
        .filter(|c| value.contains(*c))
        .map(|c| format!("may not contain '{c}'"))
        .collect()
}

/// `IsQualifiedName`: an optional DNS subdomain prefix and `/`, then a name of at most 63 characters.
pub(super) fn qualified_name(value: &str) -> Vec<String> {
    crate::selector::qualified_name_errors(value)
}

/// `IsValidPortName`: an IANA service name.
pub(super) fn port_name(port: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if port.len() > 15 {
        errs.push(max_len_error(15));
    }
    if port.is_empty() || !port.bytes().all(|c| lower_alnum(c) || c == b'-') {
        errs.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)".into());
    }
    if !port.bytes().any(|c| c.is_ascii_lowercase()) {
        errs.push("must contain at least one letter (a-z)".into());
    }
    if port.contains("--") {
        errs.push("must not contain consecutive hyphens".into());
    }
    if port.starts_with('-') || port.ends_with('-') {
        errs.push("must not begin or end with a hyphen".into());
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert!(dns1123_label("ab-1").is_empty());
        assert_eq!(dns1123_label("a.b"), vec!["must not contain dots"]);
        assert!(dns1123_label("A")[0].starts_with("a lowercase RFC 1123 label"));
        assert!(dns1123_label("A")[0].contains("(e.g. 'my-name',  or '123-abc', regex"));
        assert!(dns1123_subdomain("a.b").is_empty());
        assert!(label_value("").is_empty());
        assert_eq!(label_value("a b").len(), 1);
        assert_eq!(label_key("a/b/c").len(), 1);
        assert!(label_key("example.com/x").is_empty());
        assert_eq!(config_key("..a"), vec!["must not start with '..'"]);
        assert_eq!(config_key("a b").len(), 1);
        assert!(dns1035_label("1a")[0].starts_with("a DNS-1035 label"));
    }
}
