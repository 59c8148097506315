//! A webhook's `matchConditions`: CEL expressions evaluated after its rules and selectors matched, as
//! kube-apiserver's `matchconditions` matcher does (Kubernetes 1.35).
//!
//! The variables are `object` and `oldObject` (null where the operation has none), `request` (the
//! AdmissionRequest without `uid`, `object` and `oldObject`; fields Go leaves out when empty are absent),
//! `namespaceObject` (null, as for webhooks) and `authorizer` (every check allowed, as this server
//! authorizes every request; `authorizer.rs`). Every condition is evaluated; one that is false skips the
//! webhook; otherwise evaluation errors refuse the request under `failurePolicy: Fail` and skip the webhook
//! under `Ignore`.
//!
//! Not done here: the runtime cost budget. A field selected from a null `object` fails with `no such key`
//! as in cel-go where the expression only selects from it (see `evaluate`); in one that also compares it
//! (`object.a == 1 && object == null`) the Rust `cel` crate selects `false` from null, where cel-go fails.

use kube_cel::KubeCelExt;
use kube_cel::cel::common::ast::{EntryExpr, Expr, IdedExpr};
use kube_cel::cel::{Context, Value as Cel};

use crate::cel::program::Program;
use serde_json::Value;

use crate::cel::errors::{parse_error, runtime_error};
use crate::cel::values::{json, map};

/// What a webhook's match conditions decide.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Decision {
    /// No condition is false and none failed: the webhook is called.
    Call,
    /// A condition is false, or one failed under `failurePolicy: Ignore`: the webhook is skipped.
    Skip,
    /// Conditions failed to evaluate (and none is false) under `failurePolicy: Fail`: the request is refused
    /// with this text (Go's aggregate of the errors).
    Refuse(String),
}

/// The variables the conditions see.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Inputs<'a> {
    pub object: Option<&'a Value>,
    pub old_object: Option<&'a Value>,
    /// The AdmissionRequest as sent to webhooks (its `object`, `oldObject` and `uid` are not exposed).
    pub request: &'a Value,
}

/// Evaluates `conditions` (a webhook's `matchConditions`) on `inputs`; `fail_open` for
/// `failurePolicy: Ignore`.
pub(crate) fn decide(conditions: &Value, inputs: Inputs<'_>, fail_open: bool) -> Decision {
    let Some(list) = conditions.as_array().filter(|l| !l.is_empty()) else {
        return Decision::Call;
    };
    let mut context = Context::default().with_all();
    crate::cel::comprehensions::register(&mut context);
    super::authorizer::register(&mut context);
    context.add_variable_from_value("authorizer", super::authorizer::value());
    context.add_variable_from_value("object", inputs.object.map_or(Cel::Null, json));
    context.add_variable_from_value("oldObject", inputs.old_object.map_or(Cel::Null, json));
    context.add_variable_from_value("request", request_value(inputs.request));
    context.add_variable_from_value("namespaceObject", Cel::Null);
    let nulls: Vec<&str> = [
        ("object", inputs.object.is_none()),
        ("oldObject", inputs.old_object.is_none()),
    ]
    .into_iter()
    .filter_map(|(name, null)| null.then_some(name))
    .collect();
    let mut errors: Vec<String> = Vec::new();
    let mut any_false = false;
    for condition in list {
        let expression = condition["expression"].as_str().unwrap_or_default();
        match evaluate(expression, &context, &nulls) {
            Ok(Cel::Bool(false)) => any_false = true,
            Ok(_) => {}
            Err(e) => errors.push(e),
        }
    }
    if any_false {
        return Decision::Skip;
    }
    if errors.is_empty() {
        Decision::Call
    } else if fail_open {
        Decision::Skip
    } else {
        Decision::Refuse(aggregate(&errors))
    }
}

/// One expression's value, or its error as kube-apiserver words it. `nulls` are the variables bound to
/// null.
///
/// cel-go fails to select a field of null (`no such key: metadata`), the Rust `cel` crate selects `false`.
/// A null variable that the expression only selects fields of is therefore bound to an empty map, whose
/// selections fail as cel-go's do; one it also compares or tests keeps its null.
pub(super) fn evaluate(
    expression: &str,
    context: &Context<'_>,
    nulls: &[&str],
) -> Result<Cel, String> {
    let program = Program::compile(expression).map_err(|e| {
        format!(
            "compilation error: compilation failed: {}",
            parse_error(&e.to_string())
        )
    })?;
    let selected: Vec<&str> = nulls
        .iter()
        .copied()
        .filter(|name| only_selected(program.expression(), name))
        .collect();
    let mut scope = context.new_inner_scope();
    for name in selected {
        scope.add_variable_from_value(name, map(std::iter::empty()));
    }
    program.execute(&scope).map_err(|e| {
        format!(
            "expression '{expression}' resulted in error: {}",
            runtime_error(&e)
        )
    })
}

/// Whether `name` occurs in `expr`, and only as the operand of field selections (`name.field`, not in
/// `has()`).
fn only_selected(expr: &IdedExpr, name: &str) -> bool {
    let mut walk = Occurrences {
        name,
        selected: false,
        other: false,
    };
    walk.visit(expr);
    walk.selected && !walk.other
}

/// How a variable occurs in an expression.
struct Occurrences<'n> {
    name: &'n str,
    /// As the operand of a field selection.
    selected: bool,
    /// Any other way.
    other: bool,
}

impl Occurrences<'_> {
    fn visit(&mut self, e: &IdedExpr) {
        match &e.expr {
            Expr::Ident(n) if n == self.name => self.other = true,
            Expr::Select(s) => match &s.operand.expr {
                Expr::Ident(n) if n == self.name => {
                    if s.test {
                        self.other = true;
                    } else {
                        self.selected = true;
                    }
                }
                _ => self.visit(&s.operand),
            },
            Expr::Call(c) => {
                if let Some(t) = &c.target {
                    self.visit(t);
                }
                c.args.iter().for_each(|a| self.visit(a));
            }
            Expr::Comprehension(c) => {
                for part in [
                    &c.iter_range,
                    &c.accu_init,
                    &c.loop_cond,
                    &c.loop_step,
                    &c.result,
                ] {
                    self.visit(part);
                }
            }
            Expr::List(l) => l.elements.iter().for_each(|i| self.visit(i)),
            Expr::Map(m) => {
                for entry in &m.entries {
                    if let EntryExpr::MapEntry(me) = &entry.expr {
                        self.visit(&me.key);
                        self.visit(&me.value);
                    }
                }
            }
            Expr::Struct(st) => {
                for entry in &st.entries {
                    if let EntryExpr::StructField(f) = &entry.expr {
                        self.visit(&f.value);
                    }
                }
            }
            Expr::Ident(_) | Expr::Literal(_) | Expr::Unspecified => {}
        }
    }
}

/// The `request` variable: the AdmissionRequest as JSON, without what CEL does not see, and without the
/// fields Go's JSON leaves out when empty.
pub(super) fn request_value(request: &Value) -> Cel {
    let mut r = request.clone();
    if let Some(m) = r.as_object_mut() {
        for k in ["uid", "object", "oldObject"] {
            m.remove(k);
        }
        for k in ["name", "namespace", "subResource", "requestSubResource"] {
            if m.get(k).and_then(Value::as_str) == Some("") {
                m.remove(k);
            }
        }
    }
    json(&r)
}

/// Go's `utilerrors.NewAggregate(errs).Error()`: one error as it is, several in brackets, repeats dropped.
pub(super) fn aggregate(errors: &[String]) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for e in errors {
        if !seen.contains(&e.as_str()) {
            seen.push(e);
        }
    }
    if seen.len() == 1 {
        seen[0].to_string()
    } else {
        format!("[{}]", seen.join(", "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json as j;

    fn conditions(expressions: &[&str]) -> Value {
        Value::Array(
            expressions
                .iter()
                .enumerate()
                .map(|(i, e)| j!({"name": format!("c{i}"), "expression": e}))
                .collect(),
        )
    }

    fn decide_on(expressions: &[&str], fail_open: bool) -> Decision {
        let object = j!({"metadata": {"name": "a", "labels": {"x": "1"}}, "data": {"k": "v"}});
        let old = j!({"metadata": {"name": "a"}, "data": {"k": "old"}});
        let request = j!({"uid": "u", "operation": "UPDATE", "name": "a", "namespace": "ns",
            "userInfo": {"username": "system:admin", "groups": ["system:masters"]},
            "kind": {"group": "", "version": "v1", "kind": "ConfigMap"}, "dryRun": false});
        decide(
            &conditions(expressions),
            Inputs {
                object: Some(&object),
                old_object: Some(&old),
                request: &request,
            },
            fail_open,
        )
    }

    #[test]
    fn true_conditions_call_the_webhook() {
        assert_eq!(decide_on(&[], false), Decision::Call);
        assert_eq!(
            decide_on(
                &[
                    "object.data.k == 'v'",
                    "oldObject.data.k == 'old'",
                    "request.operation == 'UPDATE' && request.namespace == 'ns'",
                    "'system:masters' in request.userInfo.groups",
                    "!has(request.uid) && request.kind.kind == 'ConfigMap'",
                    "authorizer.group('').resource('configmaps').namespace('ns').name('a').check('update').allowed()",
                    "authorizer.requestResource.subresource('').check('get').allowed()",
                    "!authorizer.path('/healthz').check('get').errored()",
                    "authorizer.serviceAccount('ns', 'sa').group('apps').resource('deployments').check('list').reason() == ''",
                ],
                false
            ),
            Decision::Call
        );
    }

    #[test]
    fn a_false_condition_skips_even_after_errors() {
        assert_eq!(
            decide_on(
                &["object.data.missing == 'x'", "object.data.k == 'no'"],
                false
            ),
            Decision::Skip
        );
    }

    #[test]
    fn selecting_from_a_null_object_fails_as_in_cel_go() {
        let request = j!({"operation": "DELETE"});
        let on_delete = |expressions: &[&str]| {
            let old = j!({"metadata": {"name": "a"}});
            decide(
                &conditions(expressions),
                Inputs {
                    object: None,
                    old_object: Some(&old),
                    request: &request,
                },
                false,
            )
        };
        assert_eq!(
            on_delete(&["object.metadata.name == 'a'"]),
            Decision::Refuse(
                "expression 'object.metadata.name == 'a'' resulted in error: no such key: metadata"
                    .into()
            )
        );
        assert_eq!(
            on_delete(&["object == null || object.metadata.name == 'a'"]),
            Decision::Call
        );
        assert_eq!(on_delete(&["object != null"]), Decision::Skip);
    }

    #[test]
    fn errors_follow_the_failure_policy() {
        assert_eq!(
            decide_on(&["object.data.missing == 'x'"], false),
            Decision::Refuse(
                "expression 'object.data.missing == 'x'' resulted in error: no such key: missing"
                    .into()
            )
        );
        assert_eq!(
            decide_on(&["object.data.missing == 'x'"], true),
            Decision::Skip
        );
        assert_eq!(
            decide_on(&["object.nope", "1 / 0 == 1", "object.nope"], false),
            Decision::Refuse(
                "[expression 'object.nope' resulted in error: no such key: nope, expression '1 / 0 == 1' resulted in error: division by zero]"
                    .into()
            )
        );
    }
}
