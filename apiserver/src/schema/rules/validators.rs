//! The AST validators kube-apiserver adds to cel-go's type check (they run only on expressions that
//! type-checked): literal arguments of `duration()`, `timestamp()` and `matches()` must be valid, and
//! list and map literals homogeneous (`expected type 'int' but found 'string'`) except in arguments of
//! `format`. The strings extension's check of literal format strings against literal arguments is not
//! done.

use std::collections::HashMap;

use kube_cel::cel::Context;
use kube_cel::cel::common::ast::{EntryExpr, Expr, IdedExpr, LiteralValue};

use crate::cel::program::Program;
use regex::Regex;

use super::super::go_regex::translate_go_regex;
use super::positions::children;
use super::types::Type;

/// The validators' errors in `e`, by expression id, given every expression's type.
pub(super) fn validate(e: &IdedExpr, types: &HashMap<u64, Type>) -> Vec<(u64, String)> {
    let mut errors = Vec::new();
    visit(e, types, false, &mut errors);
    errors
}

fn type_of(types: &HashMap<u64, Type>, e: &IdedExpr) -> String {
    types
        .get(&e.id)
        .map_or_else(|| "dyn".into(), ToString::to_string)
}

/// `exempt`: inside a call of `format` (the strings extension exempts its arguments from homogeneity).
fn visit(e: &IdedExpr, types: &HashMap<u64, Type>, exempt: bool, errors: &mut Vec<(u64, String)>) {
    let mut exempt = exempt;
    match &e.expr {
        Expr::Call(call) => {
            let name = call.func_name.as_str();
            exempt |= name == "format";
            if let Some(arg) = call.args.first()
                && let Expr::Literal(literal) = &arg.expr
                && !valid_literal_argument(name, literal)
            {
                errors.push((arg.id, format!("invalid {name} argument")));
            }
        }
        Expr::List(_) | Expr::Map(_) if exempt => {}
        Expr::List(l) => {
            let mut first: Option<String> = None;
            for (i, x) in l.elements.iter().enumerate() {
                let mut t = type_of(types, x);
                if l.optional_indices.contains(&i)
                    && let Some(Type::Optional(inner)) = types.get(&x.id)
                {
                    t = inner.to_string();
                }
                match &first {
                    None => first = Some(t),
                    Some(f) if *f != t => {
                        errors.push((x.id, format!("expected type '{f}' but found '{t}'")));
                        break;
                    }
                    Some(_) => {}
                }
            }
        }
        Expr::Map(m) => {
            let mut first: Option<(String, String)> = None;
            for entry in &m.entries {
                if let EntryExpr::MapEntry(me) = &entry.expr {
                    let (k, mut v) = (type_of(types, &me.key), type_of(types, &me.value));
                    if me.optional
                        && let Some(Type::Optional(inner)) = types.get(&me.value.id)
                    {
                        v = inner.to_string();
                    }
                    match &first {
                        None => first = Some((k, v)),
                        Some((fk, fv)) => {
                            if *fk != k {
                                errors.push((
                                    me.key.id,
                                    format!("expected type '{fk}' but found '{k}'"),
                                ));
                            }
                            if *fv != v {
                                errors.push((
                                    me.value.id,
                                    format!("expected type '{fv}' but found '{v}'"),
                                ));
                            }
                        }
                    }
                }
            }
        }
        _ => {}
    }
    for child in children(e) {
        visit(child, types, exempt, errors);
    }
}

/// Whether a literal first argument of `function` is valid (`duration('1x')`, `matches('[')` are not).
fn valid_literal_argument(function: &str, literal: &LiteralValue) -> bool {
    match (function, literal) {
        ("matches", LiteralValue::String(s)) => Regex::new(&translate_go_regex(s)).is_ok(),
        ("duration" | "timestamp", _) => {
            let argument = match literal {
                LiteralValue::String(s) => {
                    format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
                }
                _ => return true,
            };
            Program::compile(&format!("{function}({argument})"))
                .map(|p| p.execute(&Context::default()).is_ok())
                .unwrap_or(true)
        }
        _ => true,
    }
}
