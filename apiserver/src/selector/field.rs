//! Field selectors (`?fieldSelector=`): terms, escaping, and matching against an object's fields.

use std::fmt;
use std::str::FromStr;

use super::error::SelectorError;

/// A field selector: a conjunction of `field=value` / `field!=value` terms.
///
/// The default value has no terms and matches every object.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSelector {
    pub(super) terms: Vec<FieldTerm>,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct FieldTerm {
    pub(super) field: String,
    pub(super) negated: bool,
    pub(super) value: String,
}

impl FieldSelector {
    /// Parses the string form used by `?fieldSelector=`, e.g. `metadata.name=a,status.phase!=Failed`.
    ///
    /// Values may escape `\`, `,` and `=` with a backslash. Field names are taken verbatim (no
    /// whitespace trimming), as the real server does. An empty string selects everything.
    pub fn parse(s: &str) -> Result<FieldSelector, SelectorError> {
        let mut parts = split_terms(s);
        parts.sort_unstable();
        let mut terms = Vec::with_capacity(parts.len());
        for part in parts {
            if part.is_empty() {
                continue;
            }
            let Some((field, op, raw)) = split_term(part) else {
                return Err(SelectorError::new(format!(
                    "invalid selector: '{s}'; can't understand '{part}'"
                )));
            };
            terms.push(FieldTerm {
                field: field.to_string(),
                negated: op == "!=",
                value: unescape_value(raw)?,
            });
        }
        Ok(FieldSelector { terms })
    }

    /// The field paths the selector refers to, in term order (duplicates included).
    pub fn fields(&self) -> impl Iterator<Item = &str> {
        self.terms.iter().map(|t| t.field.as_str())
    }

    /// Whether an object is selected; `get` returns a field's value, `None` when it is absent.
    ///
    /// An absent field compares as the empty string.
    pub fn matches(&self, get: impl Fn(&str) -> Option<String>) -> bool {
        self.terms.iter().all(|t| {
            let actual = get(&t.field).unwrap_or_default();
            (actual == t.value) != t.negated
        })
    }

    /// Whether the selector has no terms, i.e. selects everything.
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }
}

impl FromStr for FieldSelector {
    type Err = SelectorError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

/// The canonical string form: `field=value` / `field!=value` terms joined by `,`, values escaped.
impl fmt::Display for FieldSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, t) in self.terms.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            let op = if t.negated { "!=" } else { "=" };
            write!(f, "{}{op}{}", t.field, escape_value(&t.value))?;
        }
        Ok(())
    }
}

/// Splits on commas not preceded by a backslash; escapes stay in the returned terms.
pub(super) fn split_terms(s: &str) -> Vec<&str> {
    if s.is_empty() {
        return Vec::new();
    }
    let mut terms = Vec::new();
    let mut start = 0;
    let mut in_slash = false;
    for (i, c) in s.char_indices() {
        if in_slash {
            in_slash = false;
        } else if c == '\\' {
            in_slash = true;
        } else if c == ',' {
            terms.push(s.get(start..i).unwrap_or_default());
            start = i + 1;
        }
    }
    terms.push(s.get(start..).unwrap_or_default());
    terms
}

/// Splits a term at the first operator (`!=`, `==`, then `=` at each position).
pub(super) fn split_term(term: &str) -> Option<(&str, &str, &str)> {
    for (i, _) in term.char_indices() {
        let rest = term.get(i..)?;
        for op in ["!=", "==", "="] {
            if let Some(rhs) = rest.strip_prefix(op) {
                return Some((term.get(..i)?, op, rhs));
            }
        }
    }
    None
}

/// `fields.EscapeValue`.
pub(super) fn escape_value(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '\\' | ',' | '=') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `fields.UnescapeValue`: `\\`, `\,` and `\=` are the only escapes; bare `,`/`=` are errors.
pub(super) fn unescape_value(s: &str) -> Result<String, SelectorError> {
    let mut out = String::with_capacity(s.len());
    let mut in_slash = false;
    for c in s.chars() {
        if in_slash {
            if !matches!(c, '\\' | ',' | '=') {
                return Err(SelectorError::new(format!(
                    "invalid field selector: invalid escape sequence: \\{c}"
                )));
            }
            out.push(c);
            in_slash = false;
            continue;
        }
        match c {
            '\\' => in_slash = true,
            // Go prints the rune with %v, i.e. as its code point number.
            ',' | '=' => {
                return Err(SelectorError::new(format!(
                    "invalid field selector: unescaped character in value: {}",
                    c as u32
                )));
            }
            c => out.push(c),
        }
    }
    if in_slash {
        return Err(SelectorError::new(
            "invalid field selector: invalid escape sequence: \\",
        ));
    }
    Ok(out)
}
