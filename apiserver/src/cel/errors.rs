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
