//! Evaluating the rules of a schema tree on an object: the walk, old-value correlation, ratcheting and
//! the server's error texts.

use std::sync::Arc;

use kube_cel::KubeCelExt;
use kube_cel::cel::objects::OptionalValue;
use kube_cel::cel::{Context, ExecutionError, Value as Cel};
use serde_json::{Value, json};

use super::super::errors::{FieldError, FieldErrorKind};
use super::super::node::{Additional, Node};
use super::rule::{Reason, Rule};
use super::runtime_cost::{PER_CALL_LIMIT, RUNTIME_BUDGET, actual_cost};
use super::values::to_cel;

/// A rule failure on a value the update did not change: the server lets the write through and warns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ratcheted(pub String);

/// Whether a schema error keeps the server from evaluating rules (apiextensions' `hasBlockingErr`):
/// a wrong type, a missing required field, an unsupported enum value, a string or list over its bound.
pub(in crate::schema) fn is_blocking(e: &FieldError) -> bool {
    matches!(
        e.kind,
        FieldErrorKind::TypeInvalid
            | FieldErrorKind::Required
            | FieldErrorKind::NotSupported
            | FieldErrorKind::TooLong
            | FieldErrorKind::TooMany
    )
}

/// The error the server adds instead of evaluating rules when [`is_blocking`] holds.
pub(in crate::schema) fn blocking_error() -> FieldError {
    FieldError::invalid(
        "<nil>",
        Value::Null,
        "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation",
    )
}

/// Evaluates every rule under `root` on `new` (with `old` on update). Returns the failures, and the
/// failures ratcheted into warnings (values the update left unchanged).
pub(in crate::schema) fn validate(
    root: &Node,
    new: &Value,
    old: Option<&Value>,
) -> (Vec<FieldError>, Vec<Ratcheted>) {
    let mut walk = Walk {
        ctx: None,
        errors: Vec::new(),
        ratcheted: Vec::new(),
        budget: RUNTIME_BUDGET,
        stopped: false,
    };
    walk.node(root, "", new, old, false, true);
    (walk.errors, walk.ratcheted)
}

/// Whether `n` or anything below it has rules.
pub(in crate::schema) fn has_rules(n: &Node) -> bool {
    !n.rules.is_empty()
        || n.properties.values().any(has_rules)
        || n.items.as_deref().is_some_and(has_rules)
        || n.additional_properties
            .as_ref()
            .and_then(Additional::schema)
            .is_some_and(has_rules)
}

struct Walk {
    /// Built on first use: the standard library and Kubernetes' functions.
    ctx: Option<Context<'static>>,
    errors: Vec<FieldError>,
    ratcheted: Vec<Ratcheted>,
    /// What is left of the runtime cost budget of the object's rules.
    budget: u64,
    /// A rule went over a cost limit: no further rule runs.
    stopped: bool,
}

impl Walk {
    /// Walks `node` at `path`. `old` is its correlated old value; `parent_unchanged` whether its nearest
    /// correlated ancestor is unchanged, which decides the ratcheting of a value with no old value of its own
    /// (an item of a set or atomic list), as apiextensions-apiserver's `shouldRatchetError` does.
    fn node(
        &mut self,
        node: &Node,
        path: &str,
        new: &Value,
        old: Option<&Value>,
        parent_unchanged: bool,
        root: bool,
    ) {
        // Only non-null values are validated: a rule about presence belongs to the parent.
        if new.is_null() || self.stopped {
            return;
        }
        let unchanged = old.map_or(parent_unchanged, |o| o == new);
        if !node.rules.is_empty() {
            self.rules(node, path, new, old, unchanged, root);
        }
        match new {
            Value::Object(m) => {
                let additional = node
                    .additional_properties
                    .as_ref()
                    .and_then(Additional::schema);
                for (k, v) in m {
                    let child = match node.properties.get(k) {
                        Some(p) => p,
                        None => match additional {
                            Some(a) => a,
                            None => continue,
                        },
                    };
                    if !has_rules(child) {
                        continue;
                    }
                    let child_path = if node.properties.contains_key(k) {
                        join(path, k)
                    } else {
                        format!("{path}[{k}]")
                    };
                    let child_old = old.and_then(|o| o.get(k));
                    self.node(child, &child_path, v, child_old, unchanged, false);
                }
            }
            Value::Array(items) => {
                let Some(item) = node.items.as_deref().filter(|i| has_rules(i)) else {
                    return;
                };
                let old_items = old.and_then(Value::as_array);
                for (i, v) in items.iter().enumerate() {
                    let item_old = old_items.and_then(|o| correlate(node, o, v));
                    self.node(item, &format!("{path}[{i}]"), v, item_old, unchanged, false);
                }
            }
            _ => {}
        }
    }

    fn rules(
        &mut self,
        node: &Node,
        path: &str,
        new: &Value,
        old: Option<&Value>,
        unchanged: bool,
        root: bool,
    ) {
        let this = to_cel(new, Some(node), root);
        let before = old.map(|o| to_cel(o, Some(node), root));
        let base = self.ctx.get_or_insert_with(|| {
            let mut context = Context::default().with_all();
            crate::cel::comprehensions::register(&mut context);
            context
        });
        let mut scope = base.new_inner_scope();
        scope.add_variable_from_value("self", this);
        let mut failures = Vec::new();
        for rule in &node.rules {
            let mut rule_scope = scope.new_inner_scope();
            match (&before, rule.transition) {
                (Some(o), _) if rule.optional_old_self => rule_scope.add_variable_from_value(
                    "oldSelf",
                    Cel::Opaque(Arc::new(OptionalValue::of(o.clone()))),
                ),
                (Some(o), _) => rule_scope.add_variable_from_value("oldSelf", o.clone()),
                (None, true) if rule.optional_old_self => rule_scope.add_variable_from_value(
                    "oldSelf",
                    Cel::Opaque(Arc::new(OptionalValue::none())),
                ),
                // Transition rules run only where there is an old value to compare with.
                (None, true) => continue,
                (None, false) => {}
            }
            // The cost limits, as cel-go counts the cost while it evaluates.
            let cost = actual_cost(rule, node, root || node.embedded_resource, new);
            let charged = cost.min(PER_CALL_LIMIT + 1);
            let type_name = json!(node.types.first().map(String::as_str).unwrap_or(""));
            if charged > self.budget {
                let detail = "validation failed due to running out of cost budget, no further validation rules will be run";
                failures.push((false, invalid(path, &type_name, detail.into())));
                self.stopped = true;
                break;
            }
            self.budget -= charged;
            if cost > PER_CALL_LIMIT {
                let detail = format!(
                    "'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: {}",
                    rule.error_string()
                );
                failures.push((false, invalid(path, &type_name, detail)));
                self.stopped = true;
                break;
            }
            // Only a rule that evaluated to false ratchets, and only if it does not read oldSelf.
            let (error, ratchets) = match rule.program.execute(&rule_scope) {
                Ok(Cel::Bool(true)) => continue,
                Ok(Cel::Bool(false)) => (failure(rule, path, new, &rule_scope), !rule.transition),
                Ok(_) => (
                    invalid(path, new, "cel expression must evaluate to a bool".into()),
                    false,
                ),
                Err(e) => (invalid(path, new, evaluation_error(&e, rule)), false),
            };
            failures.push((ratchets, error));
        }
        for (ratchets, error) in failures {
            if unchanged && ratchets {
                self.ratcheted.push(Ratcheted(error.to_string()));
            } else {
                self.errors.push(error);
            }
        }
    }
}

/// A failed rule's error: its reason, its field path, its message (or messageExpression).
fn failure(rule: &Rule, path: &str, value: &Value, scope: &Context<'_>) -> FieldError {
    let path = match &rule.field_path {
        Some(rel) => join_relative(path, rel),
        None => path.to_string(),
    };
    let detail = rule
        .message_program
        .as_ref()
        .and_then(|p| match p.execute(scope) {
            Ok(Cel::String(s)) if !s.trim().is_empty() && !s.contains('\n') => Some(s.to_string()),
            _ => None,
        })
        .unwrap_or_else(|| rule.message_or_default());
    match rule.reason {
        Some(Reason::Forbidden) => FieldError {
            kind: FieldErrorKind::Forbidden,
            field: field(&path),
            detail,
            value: None,
        },
        Some(Reason::Required) => FieldError::required(field(&path), detail),
        Some(Reason::Duplicate) => FieldError {
            kind: FieldErrorKind::Duplicate,
            field: field(&path),
            detail: String::new(),
            value: bad_value(value),
        },
        Some(Reason::Invalid) | None => invalid(&path, value, detail),
    }
}

/// `field.Invalid(path, value, detail)`: scalars are printed, objects and lists are not.
fn invalid(path: &str, value: &Value, detail: String) -> FieldError {
    FieldError {
        kind: FieldErrorKind::Invalid,
        field: field(path),
        detail,
        value: bad_value(value),
    }
}

fn bad_value(v: &Value) -> Option<Value> {
    match v {
        Value::Object(_) | Value::Array(_) => None,
        other => Some(other.clone()),
    }
}

/// A runtime error as the server words it (cel-go's error texts, then the rule).
fn evaluation_error(e: &ExecutionError, rule: &Rule) -> String {
    let what = rule.error_string();
    match e {
        e if crate::cel::errors::is_no_such_overload(e) => format!(
            "'no such overload': call arguments did not match a supported operator, function or macro signature for rule: {what}"
        ),
        other => format!(
            "{} evaluating rule: {what}",
            crate::cel::errors::runtime_error(other)
        ),
    }
}

/// The old item an item of a list is compared with: by key in `x-kubernetes-list-type: map` lists, by
/// value in `set` lists; items of atomic lists have none.
fn correlate<'o>(node: &Node, old: &'o [Value], item: &Value) -> Option<&'o Value> {
    match node.list_type.as_deref() {
        Some("map") if !node.list_map_keys.is_empty() => old.iter().find(|o| {
            node.list_map_keys
                .iter()
                .all(|k| o.get(k).is_some() && o.get(k) == item.get(k))
        }),
        // Only map lists correlate items (`MakeMapList`): a set's or an atomic list's items have no
        // `oldSelf`, and ratchet with the list.
        _ => None,
    }
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// A rule's `fieldPath` (`.a.b`, `.a[0]`, `.a['k']`) below the node's path.
fn join_relative(path: &str, rel: &str) -> String {
    let rel = rel.replace("['", "[").replace("']", "]");
    match rel.strip_prefix('.') {
        Some(r) => join(path, r),
        None => format!("{path}{rel}"),
    }
}

/// The root is reported as `<nil>`, like a nil `field.Path`.
fn field(path: &str) -> String {
    if path.is_empty() {
        "<nil>".into()
    } else {
        path.to_string()
    }
}
