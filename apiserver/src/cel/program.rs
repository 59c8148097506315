//! A compiled CEL expression, parsed as kube-apiserver's environments parse them: with CEL's optional syntax
//! (`object.?field`, `list[?index]`, `[?element]`, `{?key: value}`), which kube-apiserver enables for CRD
//! validation rules and admission expressions alike. The `cel` crate's own `Program::compile` parses without
//! it, so this wraps its parser and evaluator instead.

use kube_cel::cel::common::ast::{EntryExpr, Expr};
use kube_cel::cel::parser::{ExpressionReferences, ParseErrors, Parser};
use kube_cel::cel::{Context, ExecutionError, IdedExpr, Value};

/// A parsed expression, ready to be checked and evaluated.
#[derive(Debug)]
pub(crate) struct Program {
    /// As parsed: what the checker, the cost estimate and error positions read.
    expression: IdedExpr,
    /// What is evaluated: `operand.?field` rewritten as `operand[?'field']` (see [`runnable`]).
    runnable: IdedExpr,
}

impl Program {
    /// Parses `source` with the optional syntax enabled.
    pub(crate) fn compile(source: &str) -> Result<Program, ParseErrors> {
        Parser::default()
            .enable_optional_syntax(true)
            .parse(source)
            .map(|expression| {
                let mut runnable = expression.clone();
                runnable_in_place(&mut runnable);
                Program {
                    expression,
                    runnable,
                }
            })
    }

    /// Evaluates the expression with the variables and functions of `context`.
    pub(crate) fn execute(&self, context: &Context) -> Result<Value, ExecutionError> {
        Value::resolve(&self.runnable, context)
    }

    /// The variables and functions the expression refers to.
    pub(crate) fn references(&self) -> ExpressionReferences<'_> {
        self.expression.references()
    }

    /// The parsed expression.
    pub(crate) fn expression(&self) -> &IdedExpr {
        &self.expression
    }
}

/// `operand.?field` as the `cel` crate can evaluate it. Its evaluator fails an optional field selection on a
/// map without the key (`no such key`) where CEL gives `optional.none()`; the optional index `operand[?'field']`
/// means the same on the maps CEL sees here (objects are maps of their fields) and is evaluated right.
fn runnable_in_place(e: &mut IdedExpr) {
    match &mut e.expr {
        Expr::Call(c) => {
            if c.func_name == "_?._" && c.target.is_none() {
                c.func_name = "_[?_]".to_string();
            }
            if let Some(t) = c.target.as_deref_mut() {
                runnable_in_place(t);
            }
            c.args.iter_mut().for_each(runnable_in_place);
        }
        Expr::Comprehension(c) => {
            for part in [
                &mut c.iter_range,
                &mut c.accu_init,
                &mut c.loop_cond,
                &mut c.loop_step,
                &mut c.result,
            ] {
                runnable_in_place(part);
            }
        }
        Expr::List(l) => l.elements.iter_mut().for_each(runnable_in_place),
        Expr::Map(m) => {
            for entry in &mut m.entries {
                match &mut entry.expr {
                    EntryExpr::MapEntry(me) => {
                        runnable_in_place(&mut me.key);
                        runnable_in_place(&mut me.value);
                    }
                    EntryExpr::StructField(f) => runnable_in_place(&mut f.value),
                }
            }
        }
        Expr::Struct(st) => {
            for entry in &mut st.entries {
                match &mut entry.expr {
                    EntryExpr::MapEntry(me) => {
                        runnable_in_place(&mut me.key);
                        runnable_in_place(&mut me.value);
                    }
                    EntryExpr::StructField(f) => runnable_in_place(&mut f.value),
                }
            }
        }
        Expr::Select(sel) => runnable_in_place(&mut sel.operand),
        Expr::Ident(_) | Expr::Literal(_) | Expr::Unspecified => {}
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn eval(source: &str) -> Result<Value, ExecutionError> {
        let mut context = Context::default();
        let labels: HashMap<String, Value> = HashMap::from([("a".to_string(), Value::from("x"))]);
        let object: HashMap<String, Value> =
            HashMap::from([("labels".to_string(), Value::Map(labels.into()))]);
        context.add_variable_from_value("self", Value::Map(object.into()));
        Program::compile(source).expect("parses").execute(&context)
    }

    #[test]
    fn optional_selection_of_a_missing_field_is_none() {
        assert_eq!(eval("self.?nope.hasValue()"), Ok(Value::Bool(false)));
        assert_eq!(
            eval("self.?nope.?deeper.orValue('d')"),
            Ok(Value::from("d"))
        );
        assert_eq!(eval("self.?labels.?a.orValue('d')"), Ok(Value::from("x")));
        assert_eq!(eval("self.?labels.?b.orValue('d')"), Ok(Value::from("d")));
        assert_eq!(
            eval("[?self.?nope, ?self.?labels.?a].size()"),
            Ok(Value::Int(1))
        );
        assert_eq!(eval("{?'k': self.?nope}.size()"), Ok(Value::Int(0)));
    }
}
