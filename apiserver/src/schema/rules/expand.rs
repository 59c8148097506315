//! The two-variable comprehension macros of cel-go (`all`, `exists` and `existsOne` with a key and a
//! value variable, `transformList`, `transformMap`, `transformMapEntry`), which the `cel` crate's parser
//! leaves as calls, expanded as cel-go expands them, so that they are type-checked and costed like the
//! other macros.

use kube_cel::cel::common::ast::{
    CallExpr, ComprehensionExpr, Expr, IdedExpr, ListExpr, LiteralValue, MapExpr,
};

use super::positions::children;

/// `e` with its two-variable `all`, `exists` and `existsOne` calls expanded into comprehensions (new
/// expressions get ids above every id of `e`); `None` when it has none.
pub(super) fn expand(e: &IdedExpr) -> Option<IdedExpr> {
    if !has_two_variable_macro(e) {
        return None;
    }
    let mut next = max_id(e);
    Some(rewrite(e, &mut next))
}

fn two_variable(call: &CallExpr) -> Option<(&str, &str)> {
    let arguments = match call.func_name.as_str() {
        "all" | "exists" | "existsOne" | "exists_one" => 3..=3,
        "transformList" | "transformMap" | "transformMapEntry" => 3..=4,
        _ => return None,
    };
    if call.target.is_none() || !arguments.contains(&call.args.len()) {
        return None;
    }
    match (&call.args[0].expr, &call.args[1].expr) {
        (Expr::Ident(k), Expr::Ident(v)) => Some((k, v)),
        _ => None,
    }
}

fn has_two_variable_macro(e: &IdedExpr) -> bool {
    if let Expr::Call(call) = &e.expr
        && two_variable(call).is_some()
    {
        return true;
    }
    children(e).into_iter().any(has_two_variable_macro)
}

fn max_id(e: &IdedExpr) -> u64 {
    children(e).into_iter().map(max_id).fold(e.id, u64::max)
}

fn new(next: &mut u64, expr: Expr) -> IdedExpr {
    *next += 1;
    IdedExpr { id: *next, expr }
}

fn call(next: &mut u64, name: &str, args: Vec<IdedExpr>) -> IdedExpr {
    new(
        next,
        Expr::Call(CallExpr {
            func_name: name.into(),
            target: None,
            args,
        }),
    )
}

fn rewrite(e: &IdedExpr, next: &mut u64) -> IdedExpr {
    if let Expr::Call(c) = &e.expr
        && let Some((key, value)) = two_variable(c)
        && let Some(target) = c.target.as_deref()
    {
        let range = rewrite(target, next);
        let predicate = rewrite(&c.args[2], next);
        let transform = c.args.get(3).map(|t| rewrite(t, next));
        let accu = "@result";
        let ident = |next: &mut u64| new(next, Expr::Ident(accu.into()));
        let (init, cond, step, result) = match c.func_name.as_str() {
            "all" => {
                let init = new(next, Expr::Literal(LiteralValue::Boolean(true.into())));
                let a = ident(next);
                let cond = call(next, "@not_strictly_false", vec![a]);
                let a = ident(next);
                let step = call(next, "_&&_", vec![a, predicate]);
                (init, cond, step, ident(next))
            }
            "exists" => {
                let init = new(next, Expr::Literal(LiteralValue::Boolean(false.into())));
                let a = ident(next);
                let not = call(next, "!_", vec![a]);
                let cond = call(next, "@not_strictly_false", vec![not]);
                let a = ident(next);
                let step = call(next, "_||_", vec![a, predicate]);
                (init, cond, step, ident(next))
            }
            "transformList" | "transformMap" | "transformMapEntry" => {
                // With four arguments the third is a filter.
                let (filter, transform) = match transform {
                    Some(t) => (Some(predicate), t),
                    None => (None, predicate),
                };
                let list = c.func_name == "transformList";
                let init = if list {
                    new(next, Expr::List(ListExpr::new(Vec::new())))
                } else {
                    new(
                        next,
                        Expr::Map(MapExpr {
                            entries: Vec::new(),
                        }),
                    )
                };
                let cond = new(next, Expr::Literal(LiteralValue::Boolean(true.into())));
                let a = ident(next);
                let mut step = if list {
                    let element = new(next, Expr::List(ListExpr::new(vec![transform])));
                    call(next, "_+_", vec![a, element])
                } else if c.func_name == "transformMap" {
                    let k = new(next, Expr::Ident(key.into()));
                    call(next, "cel.@mapInsert", vec![a, k, transform])
                } else {
                    call(next, "cel.@mapInsert", vec![a, transform])
                };
                if let Some(filter) = filter {
                    let a = ident(next);
                    step = call(next, "_?_:_", vec![filter, step, a]);
                }
                (init, cond, step, ident(next))
            }
            _ => {
                let init = new(next, Expr::Literal(LiteralValue::Int(0.into())));
                let cond = new(next, Expr::Literal(LiteralValue::Boolean(true.into())));
                let a = ident(next);
                let one = new(next, Expr::Literal(LiteralValue::Int(1.into())));
                let add = call(next, "_+_", vec![a, one]);
                let a = ident(next);
                let step = call(next, "_?_:_", vec![predicate, add, a]);
                let a = ident(next);
                let one = new(next, Expr::Literal(LiteralValue::Int(1.into())));
                let result = call(next, "_==_", vec![a, one]);
                (init, cond, step, result)
            }
        };
        return IdedExpr {
            id: e.id,
            expr: Expr::Comprehension(Box::new(ComprehensionExpr {
                iter_range: range,
                iter_var: key.into(),
                iter_var2: Some(value.into()),
                accu_var: accu.into(),
                accu_init: init,
                loop_cond: cond,
                loop_step: step,
                result,
            })),
        };
    }
    let mut out = e.clone();
    match &mut out.expr {
        Expr::Select(s) => *s.operand = rewrite(&s.operand, next),
        Expr::Call(c) => {
            if let Some(t) = c.target.as_deref_mut() {
                *t = rewrite(t, next);
            }
            for a in &mut c.args {
                *a = rewrite(a, next);
            }
        }
        Expr::List(l) => {
            for x in &mut l.elements {
                *x = rewrite(x, next);
            }
        }
        Expr::Map(m) => {
            for entry in &mut m.entries {
                if let kube_cel::cel::common::ast::EntryExpr::MapEntry(me) = &mut entry.expr {
                    me.key = rewrite(&me.key, next);
                    me.value = rewrite(&me.value, next);
                }
            }
        }
        Expr::Comprehension(c) => {
            c.iter_range = rewrite(&c.iter_range, next);
            c.accu_init = rewrite(&c.accu_init, next);
            c.loop_cond = rewrite(&c.loop_cond, next);
            c.loop_step = rewrite(&c.loop_step, next);
            c.result = rewrite(&c.result, next);
        }
        _ => {}
    }
    out
}
