//! cel-go's texts for CEL errors, which kube-apiserver puts in its answers.

use kube_cel::cel::{ExecutionError, Value as Cel};

/// A parse error as cel-go prints it (`ERROR: <input>:1:5: ...` lines): each error's source line and caret
/// are indented by a space.
pub(crate) fn parse_error(text: &str) -> String {
    text.lines()
        .map(|l| {
            if l.starts_with('|') {
                format!(" {l}")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// An evaluation error as cel-go words it (`no such key: data`, `division by zero`, ...); errors cel-go
/// has no counterpart for keep the Rust crate's text.
pub(crate) fn runtime_error(e: &ExecutionError) -> String {
    match e {
        e if is_no_such_overload(e) => "no such overload".into(),
        ExecutionError::NoSuchKey(k) => format!("no such key: {k}"),
        ExecutionError::IndexOutOfBounds(i) => format!("index out of bounds: {}", scalar(i)),
        ExecutionError::DivisionByZero(_) => "division by zero".into(),
        ExecutionError::RemainderByZero(_) => "modulus by zero".into(),
        ExecutionError::Overflow(..) => "integer overflow".into(),
        other => other.to_string(),
    }
}

/// Whether `e` is what cel-go reports as `no such overload`: an operator or function applied to values of
/// types it has no overload for.
pub(crate) fn is_no_such_overload(e: &ExecutionError) -> bool {
    matches!(
        e,
        ExecutionError::NoSuchOverload
            | ExecutionError::UnsupportedBinaryOperator(..)
            | ExecutionError::UnsupportedUnaryOperator(..)
    )
}

/// A scalar as cel-go prints it in an error.
fn scalar(v: &Cel) -> String {
    match v {
        Cel::Int(i) => i.to_string(),
        Cel::UInt(u) => u.to_string(),
        Cel::String(s) => s.to_string(),
        other => format!("{other:?}"),
    }
}

/// The 1-based column of the `nth` occurrence of `word` in `source` that stands alone (not part of a longer
/// identifier, not selected with `.`): where cel-go reports an undeclared reference.
pub(crate) fn identifier_column(source: &str, word: &str, nth: usize) -> usize {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    source
        .match_indices(word)
        .filter(|(i, _)| {
            let before = source[..*i].chars().next_back();
            let after = source[i + word.len()..].chars().next();
            !before.is_some_and(|c| ident(c) || c == '.') && !after.is_some_and(ident)
        })
        .map(|(i, _)| i + 1)
        .nth(nth)
        .unwrap_or(1)
}

/// The 1-based column cel-go reports for the `nth` selection of `field` (`x.field`): the `.` before it, or
/// for a selection inside `has()`, the macro's parenthesis.
pub(crate) fn select_column(source: &str, field: &str, in_has: bool, nth: usize) -> usize {
    let needle = format!(".{field}");
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let dot = source
        .match_indices(&needle)
        .filter(|(i, _)| !source[i + needle.len()..].starts_with(ident))
        .map(|(i, _)| i)
        .nth(nth)
        .unwrap_or(0);
    if in_has {
        return source[..dot]
            .rfind("has(")
            .map(|h| h + 4)
            .unwrap_or(dot + 1);
    }
    dot + 1
}

/// The comparison operators whose overloads the type checks look at, with their tokens.
pub(crate) const OPERATORS: &[(&str, &str)] = &[
    ("_==_", "=="),
    ("_!=_", "!="),
    ("_<_", "<"),
    ("_<=_", "<="),
    ("_>_", ">"),
    ("_>=_", ">="),
];

/// The 1-based column of the `nth` occurrence of an operator token (`<` not being the start of `<=`).
pub(crate) fn token_column(source: &str, token: &str, nth: usize) -> usize {
    source
        .match_indices(token)
        .filter(|(i, _)| {
            let next = source[i + token.len()..].chars().next();
            !(token.len() == 1 && next == Some('='))
        })
        .map(|(i, _)| i + 1)
        .nth(nth)
        .unwrap_or(1)
}

/// One type-check error in cel-go's form: `ERROR: <input>:1:COLUMN: WHAT`, the source line and a caret.
pub(crate) fn located(source: &str, column: usize, what: &str) -> String {
    let caret = format!("{}^", ".".repeat(column.saturating_sub(1)));
    format!("ERROR: <input>:1:{column}: {what}\n | {source}\n | {caret}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selections_are_located_as_cel_go_does() {
        assert_eq!(select_column("self.a.b", "b", false, 0), 7);
        assert_eq!(select_column("has(self.a)", "a", true, 0), 4);
    }

    #[test]
    fn identifiers_are_found_alone() {
        assert_eq!(identifier_column("params.x && xparams", "params", 0), 1);
        assert_eq!(
            identifier_column("object.params || params", "params", 0),
            18
        );
        assert_eq!(
            located(
                "params",
                1,
                "undeclared reference to 'params' (in container '')"
            ),
            "ERROR: <input>:1:1: undeclared reference to 'params' (in container '')\n | params\n | ^"
        );
    }
}
