//! The macros of kube-apiserver's CEL environment that the `cel` crate's parser leaves as calls (it expands
//! only the one-variable `all`, `exists`, `exists_one`, `map`, `filter` and `has`), evaluated: the
//! two-variable comprehensions `all`, `exists` and `existsOne` with an index (or key) and a value variable,
//! `transformList`, `transformMap` and `transformMapEntry`; the optional library's `optMap` and
//! `optFlatMap`; the lists library's `sortBy`. They are registered as functions that receive the unevaluated
//! arguments and evaluate them per element, with the variables in an inner scope.
//!
//! On a list the first variable is the index and the second the element; on a map, the key and the value.

use std::collections::HashMap;
use std::sync::Arc;

use kube_cel::cel::common::ast::Expr;
use kube_cel::cel::objects::{Key, Map, OptionalValue};
use kube_cel::cel::{Context, ExecutionError, FunctionContext, IdedExpr, Value};

type Result<T> = std::result::Result<T, ExecutionError>;

/// Registers the two-variable comprehensions in `context`.
pub(crate) fn register(context: &mut Context<'_>) {
    context.add_function("all", |ftx: &FunctionContext| {
        quantifier(ftx, Quantifier::All)
    });
    context.add_function("exists", |ftx: &FunctionContext| {
        quantifier(ftx, Quantifier::Exists)
    });
    context.add_function("existsOne", |ftx: &FunctionContext| {
        quantifier(ftx, Quantifier::ExistsOne)
    });
    context.add_function("exists_one", |ftx: &FunctionContext| {
        quantifier(ftx, Quantifier::ExistsOne)
    });
    context.add_function("transformList", transform_list);
    context.add_function("transformMap", transform_map);
    context.add_function("transformMapEntry", transform_map_entry);
    context.add_function("optMap", opt_map);
    context.add_function("optFlatMap", opt_flat_map);
    context.add_function("sortBy", sort_by);
}

#[derive(Clone, Copy)]
enum Quantifier {
    All,
    Exists,
    ExistsOne,
}

/// The (first, second) variable pairs of the target: (index, element) of a list, (key, value) of a map.
fn pairs(ftx: &FunctionContext) -> Result<Vec<(Value, Value)>> {
    match &ftx.this {
        Some(Value::List(items)) => Ok(items
            .iter()
            .enumerate()
            .map(|(i, v)| (Value::Int(i as i64), v.clone()))
            .collect()),
        Some(Value::Map(m)) => Ok(m
            .map
            .iter()
            .map(|(k, v)| (Value::from(k), v.clone()))
            .collect()),
        Some(other) => Err(ExecutionError::unsupported_target_type(other.clone())),
        None => Err(ExecutionError::missing_argument_or_target()),
    }
}

/// The two variable names (the first two arguments, identifiers).
fn names<'a>(ftx: &'a FunctionContext) -> Result<(&'a str, &'a str)> {
    let name = |e: Option<&'a IdedExpr>| match e.map(|e| &e.expr) {
        Some(Expr::Ident(n)) => Ok(n.as_str()),
        _ => Err(ExecutionError::function_error(
            ftx.name,
            "the first two arguments must be variable names",
        )),
    };
    Ok((name(ftx.args.first())?, name(ftx.args.get(1))?))
}

/// Evaluates `e` with the two variables bound.
fn eval(
    ftx: &FunctionContext,
    (first, second): (&str, &str),
    (a, b): &(Value, Value),
    e: &IdedExpr,
) -> Result<Value> {
    let mut scope = ftx.ptx.new_inner_scope();
    scope.add_variable_from_value(first, a.clone());
    scope.add_variable_from_value(second, b.clone());
    Value::resolve(e, &scope)
}

fn predicate(ftx: &FunctionContext, v: Result<Value>) -> Result<bool> {
    match v? {
        Value::Bool(b) => Ok(b),
        _ => Err(ExecutionError::function_error(ftx.name, "no such overload")),
    }
}

/// `all`, `exists`, `existsOne`: like the one-variable macros, a false (`all`) or true (`exists`) result
/// wins over an error in another element; `existsOne` fails on any error.
fn quantifier(ftx: &FunctionContext, q: Quantifier) -> Result<Value> {
    let vars = names(ftx)?;
    let body = ftx
        .args
        .get(2)
        .ok_or_else(|| ExecutionError::invalid_argument_count(3, ftx.args.len()))?;
    let mut error = None;
    let mut count = 0usize;
    for pair in pairs(ftx)? {
        match (q, predicate(ftx, eval(ftx, vars, &pair, body))) {
            (Quantifier::All, Ok(false)) => return Ok(Value::Bool(false)),
            (Quantifier::Exists, Ok(true)) => return Ok(Value::Bool(true)),
            (Quantifier::ExistsOne, Ok(true)) => count += 1,
            (Quantifier::ExistsOne, Err(e)) => return Err(e),
            (_, Err(e)) => error = error.or(Some(e)),
            _ => {}
        }
    }
    match (q, error) {
        (Quantifier::ExistsOne, _) => Ok(Value::Bool(count == 1)),
        (_, Some(e)) => Err(e),
        (Quantifier::All, None) => Ok(Value::Bool(true)),
        (Quantifier::Exists, None) => Ok(Value::Bool(false)),
    }
}

/// The (filter, transform) of `transform*(a, b, [filter,] transform)`.
fn filter_and_transform<'a>(
    ftx: &'a FunctionContext,
) -> Result<(Option<&'a IdedExpr>, &'a IdedExpr)> {
    match ftx.args {
        [_, _, t] => Ok((None, t)),
        [_, _, f, t] => Ok((Some(f), t)),
        args => Err(ExecutionError::invalid_argument_count(3, args.len())),
    }
}

/// The pairs the filter keeps, with the transform's value of each.
fn transformed(ftx: &FunctionContext) -> Result<Vec<((Value, Value), Value)>> {
    let vars = names(ftx)?;
    let (filter, transform) = filter_and_transform(ftx)?;
    let mut out = Vec::new();
    for pair in pairs(ftx)? {
        if let Some(f) = filter
            && !predicate(ftx, eval(ftx, vars, &pair, f))?
        {
            continue;
        }
        let value = eval(ftx, vars, &pair, transform)?;
        out.push((pair, value));
    }
    Ok(out)
}

fn key(ftx: &FunctionContext, v: Value) -> Result<Key> {
    match v {
        Value::Int(i) => Ok(Key::Int(i)),
        Value::UInt(u) => Ok(Key::Uint(u)),
        Value::Bool(b) => Ok(Key::Bool(b)),
        Value::String(s) => Ok(Key::String(s)),
        other => Err(ExecutionError::function_error(
            ftx.name,
            format!("unsupported key type: {other:?}"),
        )),
    }
}

/// `transformList(i, v, [filter,] expr)`: the list of `expr`'s values.
fn transform_list(ftx: &FunctionContext) -> Result<Value> {
    let values: Vec<Value> = transformed(ftx)?.into_iter().map(|(_, v)| v).collect();
    Ok(Value::List(Arc::new(values)))
}

/// `transformMap(k, v, [filter,] expr)`: the first variable mapped to `expr`'s value.
fn transform_map(ftx: &FunctionContext) -> Result<Value> {
    let mut out = HashMap::new();
    for ((first, _), value) in transformed(ftx)? {
        out.insert(key(ftx, first)?, value);
    }
    Ok(Value::Map(Map { map: Arc::new(out) }))
}

/// `transformMapEntry(k, v, [filter,] expr)`: the union of the one-entry maps `expr` gives; a key given
/// twice is an error.
fn transform_map_entry(ftx: &FunctionContext) -> Result<Value> {
    let mut out: HashMap<Key, Value> = HashMap::new();
    for (_, entry) in transformed(ftx)? {
        let Value::Map(m) = entry else {
            return Err(ExecutionError::function_error(ftx.name, "no such overload"));
        };
        for (k, v) in m.map.iter() {
            if out.insert(k.clone(), v.clone()).is_some() {
                return Err(ExecutionError::function_error(
                    ftx.name,
                    format!("insert failed: key {k:?} already exists"),
                ));
            }
        }
    }
    Ok(Value::Map(Map { map: Arc::new(out) }))
}

/// `opt.optMap(x, expr)`: `optional.of(expr)` with `x` the optional's value, or `optional.none()`.
fn opt_map(ftx: &FunctionContext) -> Result<Value> {
    optional_then(ftx, |value| {
        Ok(Value::Opaque(Arc::new(OptionalValue::of(value))))
    })
}

/// `opt.optFlatMap(x, expr)`: `expr` (an optional) with `x` the optional's value, or `optional.none()`.
fn opt_flat_map(ftx: &FunctionContext) -> Result<Value> {
    optional_then(ftx, |value| match &value {
        Value::Opaque(o) if o.downcast_ref::<OptionalValue>().is_some() => Ok(value),
        _ => Err(ExecutionError::function_error(ftx.name, "no such overload")),
    })
}

/// Evaluates `expr` (the second argument) with the first argument bound to the target optional's value and
/// passes the result to `then`; `optional.none()` when the optional is empty.
fn optional_then(
    ftx: &FunctionContext,
    then: impl FnOnce(Value) -> Result<Value>,
) -> Result<Value> {
    let optional = match &ftx.this {
        Some(Value::Opaque(o)) => o.downcast_ref::<OptionalValue>(),
        _ => None,
    }
    .ok_or_else(|| ExecutionError::function_error(ftx.name, "no such overload"))?;
    let (name, expr) = match ftx.args {
        [
            IdedExpr {
                expr: Expr::Ident(name),
                ..
            },
            expr,
        ] => (name.as_str(), expr),
        args => return Err(ExecutionError::invalid_argument_count(2, args.len())),
    };
    let Some(value) = optional.value() else {
        return Ok(Value::Opaque(Arc::new(OptionalValue::none())));
    };
    let mut scope = ftx.ptx.new_inner_scope();
    scope.add_variable_from_value(name, value.clone());
    then(Value::resolve(expr, &scope)?)
}

/// `list.sortBy(x, key)`: the list sorted (stably, ascending) by `key` evaluated for each element.
fn sort_by(ftx: &FunctionContext) -> Result<Value> {
    let Some(Value::List(items)) = &ftx.this else {
        return Err(ExecutionError::function_error(ftx.name, "no such overload"));
    };
    let (name, expr) = match ftx.args {
        [
            IdedExpr {
                expr: Expr::Ident(name),
                ..
            },
            expr,
        ] => (name.as_str(), expr),
        args => return Err(ExecutionError::invalid_argument_count(2, args.len())),
    };
    let mut keyed = Vec::with_capacity(items.len());
    for item in items.iter() {
        let mut scope = ftx.ptx.new_inner_scope();
        scope.add_variable_from_value(name, item.clone());
        keyed.push((Value::resolve(expr, &scope)?, item.clone()));
    }
    let mut incomparable = false;
    keyed.sort_by(|(a, _), (b, _)| {
        a.partial_cmp(b).unwrap_or_else(|| {
            incomparable = true;
            std::cmp::Ordering::Equal
        })
    });
    if incomparable {
        return Err(ExecutionError::function_error(
            ftx.name,
            "sortBy keys must be comparable values of one type",
        ));
    }
    Ok(Value::List(Arc::new(
        keyed.into_iter().map(|(_, item)| item).collect(),
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cel::program::Program;

    fn eval(source: &str) -> Result<Value> {
        let mut context = Context::default();
        register(&mut context);
        Program::compile(source).expect("parses").execute(&context)
    }

    #[test]
    fn two_variable_comprehensions_evaluate() {
        let t = |s: &str| assert_eq!(eval(s), Ok(Value::Bool(true)), "{s}");
        t("[10, 20].all(i, v, v == (i + 1) * 10)");
        t("!{'a': 1, 'b': 2}.all(k, v, v == 1)");
        t("{'a': 1, 'b': 2}.exists(k, v, k == 'b' && v == 2)");
        t("!['x'].exists(i, v, v == 'y')");
        t("[1, 2, 3].existsOne(i, v, v > i + 1) == false");
        t("[1, 5].existsOne(i, v, v > 4)");
        t("[1, 2, 3].transformList(i, v, v * i) == [0, 2, 6]");
        t("[1, 2, 3].transformList(i, v, i > 0, v) == [2, 3]");
        t("{'a': 1}.transformMap(k, v, v + 1) == {'a': 2}");
        t("[5].transformMap(i, v, v) == {0: 5}");
        t("{'a': 'x', 'b': 'y'}.transformMapEntry(k, v, {v: k}) == {'x': 'a', 'y': 'b'}");
        t("[1, 2].all(i, v, [3, 4].exists(j, w, w == v + 2))");
        assert!(eval("{'a': 'x', 'b': 'x'}.transformMapEntry(k, v, {v: k})").is_err());
        t(
            "optional.of(2).optMap(x, x * 3).value() == 6 && !optional.none().optMap(x, x).hasValue()",
        );
        t("optional.of(2).optFlatMap(x, optional.of(x + 1)).value() == 3");
        t("!optional.of(2).optFlatMap(x, optional.none()).hasValue()");
        t(
            "['b', 'c', 'a'].sortBy(s, s) == ['a', 'b', 'c'] && [3, 1, 2].sortBy(n, -n) == [3, 2, 1]",
        );
        assert!(eval("[1, 'a'].sortBy(x, x)").is_err());
        // One-variable macros are the parser's, untouched.
        t("[1, 2].all(v, v > 0) && [1, 2].exists(v, v == 2)");
    }
}
