//! JSON values as CEL values, as kube-apiserver converts unstructured objects (`UnstructuredToVal` without a
//! schema): integers are `int` (`uint` beyond `int`'s range), other numbers `double`, objects maps with
//! string keys.

use std::collections::HashMap;
use std::sync::Arc;

use kube_cel::cel::Value as Cel;
use kube_cel::cel::objects::{Key, Map as CelMap};
use serde_json::{Number, Value};

/// A JSON number as CEL sees it; `double` when a schema declares `type: number`.
pub(crate) fn number(n: &Number, double: bool) -> Cel {
    match (n.as_i64(), double) {
        (_, true) => Cel::Float(n.as_f64().unwrap_or(f64::NAN)),
        (Some(i), false) => Cel::Int(i),
        (None, false) => match n.as_u64() {
            Some(u) => Cel::UInt(u),
            None => Cel::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
    }
}

/// `v` as a CEL value with no schema.
pub(crate) fn json(v: &Value) -> Cel {
    match v {
        Value::Null => Cel::Null,
        Value::Bool(b) => Cel::Bool(*b),
        Value::Number(n) => number(n, false),
        Value::String(s) => Cel::String(Arc::new(s.clone())),
        Value::Array(items) => Cel::List(Arc::new(items.iter().map(json).collect())),
        Value::Object(m) => map(m.iter().map(|(k, v)| (k.clone(), json(v)))),
    }
}

/// A CEL map with string keys.
pub(crate) fn map(entries: impl IntoIterator<Item = (String, Cel)>) -> Cel {
    let out: HashMap<Key, Cel> = entries
        .into_iter()
        .map(|(k, v)| (Key::String(Arc::new(k)), v))
        .collect();
    Cel::Map(CelMap { map: Arc::new(out) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json as j;

    #[test]
    fn numbers_keep_their_kind() {
        assert_eq!(json(&j!(3)), Cel::Int(3));
        assert_eq!(json(&j!(1.5)), Cel::Float(1.5));
        assert_eq!(json(&j!(u64::MAX)), Cel::UInt(u64::MAX));
        assert_eq!(number(&Number::from(2), true), Cel::Float(2.0));
    }
}
