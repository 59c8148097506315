//! Regular expressions: the patterns the formats use, and Go (RE2) patterns translated for the `regex` crate.

use std::sync::OnceLock;

use regex::Regex;

/// Declares a function returning a regular expression that is compiled on first use.
macro_rules! lazy_regex {
    ($name:ident = $pattern:expr) => {
        pub(super) fn $name() -> Option<&'static Regex> {
            static CELL: OnceLock<Option<Regex>> = OnceLock::new();
            CELL.get_or_init(|| Regex::new(&$pattern).ok()).as_ref()
        }
    };
}

/// One IPv4 octet, as in govalidator's `RGBcolor`.
pub(super) const OCTET: &str = "(?:0|[1-9][0-9]?|1[0-9][0-9]?|2[0-4][0-9]|25[0-5])";
/// Go's `\s*`.
pub(super) const GO_SPACES: &str = "[\\t\\n\\f\\r ]*";

lazy_regex!(printable_re = "^[\\p{L}\\p{M}\\p{N}\\p{P}\\p{S}]$");
lazy_regex!(uuid_re = "(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$");
lazy_regex!(uuid3_re = "(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$");
lazy_regex!(
    uuid4_re = "(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$"
);
lazy_regex!(
    uuid5_re = "(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$"
);
lazy_regex!(hostname_single_re = "^[a-zA-Z0-9\\p{S}\\p{L}]-?[a-zA-Z0-9\\p{S}\\p{L}]*$");
lazy_regex!(
    hostname_label_re =
        "^[a-zA-Z0-9\\p{S}\\p{L}]([a-zA-Z0-9\\p{S}\\p{L}\\-]*[a-zA-Z0-9\\p{S}\\p{L}])?$"
);
lazy_regex!(hostname_tld_re = "^[a-zA-Z\\p{L}]+$");
lazy_regex!(hexcolor_re = "^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$");
lazy_regex!(
    rgbcolor_re = format!(
        "^rgb\\({GO_SPACES}{OCTET}{GO_SPACES},{GO_SPACES}{OCTET}{GO_SPACES},{GO_SPACES}{OCTET}{GO_SPACES}\\)$"
    )
);
lazy_regex!(
    base64_re = "^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$"
);
lazy_regex!(ssn_re = "^[0-9]{3}[- ]?[0-9]{2}[- ]?[0-9]{4}$");
lazy_regex!(isbn10_re = "^(?:[0-9]{9}X|[0-9]{10})$");
lazy_regex!(isbn13_re = "^(?:[0-9]{13})$");
lazy_regex!(
    creditcard_re = "^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35[0-9]{3})[0-9]{11})$"
);
lazy_regex!(
    datetime_re = "^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$"
);
lazy_regex!(duration_re = "([0-9]+)[\\t\\n\\f\\r ]*([A-Za-zµ]+)");
lazy_regex!(dns1035_re = "^[a-z]([-a-z0-9]*[a-z0-9])?$");
lazy_regex!(dns1123_label_re = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$");
lazy_regex!(
    dns1123_subdomain_re = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
);

pub(super) fn re_match(re: Option<&Regex>, s: &str) -> bool {
    re.is_some_and(|r| r.is_match(s))
}

/// Rewrites a Go (RE2) pattern for the `regex` crate: `\d`, `\s`, `\w` and `\b` are ASCII-only
/// in Go, `[` inside a class is literal unless it starts a POSIX class, `&` and `~` are literal in
/// classes, `\Q...\E` quotes, and a `{` that does not start a repetition is literal.
pub(super) fn translate_go_regex(p: &str) -> String {
    let chars: Vec<char> = p.chars().collect();
    let mut out = String::with_capacity(p.len() + 8);
    let mut i = 0;
    let mut in_class = false;
    let mut class_start = false;
    while i < chars.len() {
        let c = chars[i];
        if c == '\\' && i + 1 < chars.len() {
            let d = chars[i + 1];
            if d == 'Q' && !in_class {
                let rest: String = chars[i + 2..].iter().collect();
                let (quoted, consumed) = match rest.find("\\E") {
                    Some(end) => (rest[..end].to_string(), end + 2),
                    None => (rest.clone(), rest.len()),
                };
                out.push_str(&regex::escape(&quoted));
                i += 2 + rest[..consumed].chars().count();
                continue;
            }
            let replacement = match (d, in_class) {
                ('d', false) => Some("[0-9]"),
                ('d', true) => Some("0-9"),
                ('D', _) => Some("[^0-9]"),
                ('s', false) => Some("[\\t\\n\\f\\r ]"),
                ('s', true) => Some("\\t\\n\\f\\r "),
                ('S', _) => Some("[^\\t\\n\\f\\r ]"),
                ('w', false) => Some("[0-9A-Za-z_]"),
                ('w', true) => Some("0-9A-Za-z_"),
                ('W', _) => Some("[^0-9A-Za-z_]"),
                ('b', false) => Some("(?-u:\\b)"),
                ('B', false) => Some("(?-u:\\B)"),
                _ => None,
            };
            match replacement {
                Some(r) => out.push_str(r),
                None => {
                    out.push(c);
                    out.push(d);
                }
            }
            class_start = false;
            i += 2;
            continue;
        }
        if in_class {
            match c {
                ']' if !class_start => {
                    in_class = false;
                    out.push(']');
                }
                '[' if chars.get(i + 1) == Some(&':') => {
                    // A POSIX class such as [:alpha:]: copy it through its closing ":]".
                    let mut j = i + 2;
                    while j + 1 < chars.len() && !(chars[j] == ':' && chars[j + 1] == ']') {
                        j += 1;
                    }
                    let end = (j + 2).min(chars.len());
                    out.extend(&chars[i..end]);
                    i = end;
                    class_start = false;
                    continue;
                }
                '[' | '&' | '~' => {
                    out.push('\\');
                    out.push(c);
                }
                _ => out.push(c),
            }
            class_start = false;
        } else {
            match c {
                '[' => {
                    in_class = true;
                    class_start = true;
                    out.push('[');
                    if chars.get(i + 1) == Some(&'^') {
                        out.push('^');
                        i += 1;
                    }
                }
                '{' if !is_repetition(&chars[i..]) => out.push_str("\\{"),
                _ => out.push(c),
            }
        }
        i += 1;
    }
    out
}

/// Whether `s` starts with `{n}`, `{n,}` or `{n,m}`.
pub(super) fn is_repetition(s: &[char]) -> bool {
    let mut i = 1;
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < s.len() && s[*i].is_ascii_digit() {
            *i += 1;
        }
        *i > start
    };
    if !digits(&mut i) {
        return false;
    }
    if s.get(i) == Some(&',') {
        i += 1;
        digits(&mut i);
    }
    s.get(i) == Some(&'}')
}
