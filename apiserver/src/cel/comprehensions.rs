//! CEL's two-variable comprehensions, evaluated: `all`, `exists` and `existsOne` with an index (or key) and
//! a value variable, `transformList`, `transformMap` and `transformMapEntry`, as kube-apiserver's CEL
//! environment offers them. The `cel` crate's parser leaves these as calls (its one-variable macros are
//! expanded while parsing), so they are registered here as functions that receive the unevaluated
//! arguments and evaluate them once per element, with the two variables in an inner scope.
//!
//! On a list the first variable is the index and the second the element; on a map, the key and the value.

use std::collections::HashMap;
use std::sync::Arc;

use kube_cel::cel::common::ast::Expr;
use kube_cel::cel::objects::{Key, Map};
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
        // One-variable macros are the parser's, untouched.
        t("[1, 2].all(v, v > 0) && [1, 2].exists(v, v == 2)");
    }
}
