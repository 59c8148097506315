//! The runtime cost of a rule, for kube-apiserver's limits on evaluating `x-kubernetes-validations`: a
//! rule whose evaluation costs more than `PerCallLimit` fails with `call cost exceeds limit`, and the
//! rules of one object may cost `RuntimeCELCostBudget` in all; either stops every further rule.
//!
//! cel-go counts the cost as it evaluates. Here it is the cost estimator's largest cost (`cost.rs`) for
//! the values at hand: the schema's declarations with the sizes of the actual lists, maps and strings.
//! That is never less than cel-go's count, and equal where the evaluation visits every element (no
//! `exists` that stops early, no `&&` cut short); near the limits a rule cel-go stops early may be
//! counted as over them here.

use std::collections::BTreeMap;
use std::rc::Rc;

use serde_json::Value;

use super::super::node::Node;
use super::check::check;
use super::cost::estimate;
use super::decls::decl_of;
use super::rule::Rule;
use super::types::{Decl, DeclKind};

/// `PerCallLimit`: the most one evaluation of a rule may cost.
pub(super) const PER_CALL_LIMIT: u64 = 1_000_000;
/// `RuntimeCELCostBudget`: the most the rules of one object may cost together.
pub(super) const RUNTIME_BUDGET: u64 = 10_000_000;

/// The cost of evaluating `rule` (of the schema node `node`, `resource` for the root or an embedded
/// resource) on `value`; 0 when the rule does not type-check (it is refused when the CRD is written).
pub(super) fn actual_cost(rule: &Rule, node: &Node, resource: bool, value: &Value) -> u64 {
    let Some(declared) = decl_of(node, resource, "") else {
        return 0;
    };
    let sized = resize(&declared, value);
    let expr = rule.program.expression();
    let checked = check(&rule.source, expr, &sized, rule.optional_old_self);
    if checked.unchecked || !checked.errors.is_empty() {
        return 0;
    }
    estimate(expr, &checked, &sized).max
}

/// `d` with the sizes of `v`: a string's length, a list's or map's number of elements, their elements'
/// declarations merged to the largest of each size.
fn resize(d: &Rc<Decl>, v: &Value) -> Rc<Decl> {
    let with = |kind: DeclKind, max_elements: u64| {
        Rc::new(Decl {
            kind,
            max_elements,
            min_size: d.min_size,
            name: d.name.clone(),
        })
    };
    match (&d.kind, v) {
        (DeclKind::Scalar(t), Value::String(s)) => {
            with(DeclKind::Scalar(t.clone()), s.len() as u64)
        }
        (DeclKind::List(item), Value::Array(items)) => {
            let merged = items
                .iter()
                .map(|i| resize(item, i))
                .reduce(|a, b| merge(&a, &b))
                .unwrap_or_else(|| item.clone());
            with(DeclKind::List(merged), items.len() as u64)
        }
        (DeclKind::Map(value), Value::Object(m)) => {
            let merged = m
                .values()
                .map(|i| resize(value, i))
                .reduce(|a, b| merge(&a, &b))
                .unwrap_or_else(|| value.clone());
            with(DeclKind::Map(merged), m.len() as u64)
        }
        (DeclKind::Object(fields), Value::Object(m)) => {
            let fields: BTreeMap<String, Rc<Decl>> = fields
                .iter()
                .map(|(name, f)| {
                    let sized = m.get(name).map_or_else(|| f.clone(), |fv| resize(f, fv));
                    (name.clone(), sized)
                })
                .collect();
            with(DeclKind::Object(fields), d.max_elements)
        }
        _ => d.clone(),
    }
}

/// The larger of two declarations of the same shape, size by size.
fn merge(a: &Rc<Decl>, b: &Rc<Decl>) -> Rc<Decl> {
    let kind = match (&a.kind, &b.kind) {
        (DeclKind::List(x), DeclKind::List(y)) => DeclKind::List(merge(x, y)),
        (DeclKind::Map(x), DeclKind::Map(y)) => DeclKind::Map(merge(x, y)),
        (DeclKind::Object(x), DeclKind::Object(y)) => DeclKind::Object(
            x.iter()
                .map(|(k, f)| {
                    let merged = y.get(k).map_or_else(|| f.clone(), |g| merge(f, g));
                    (k.clone(), merged)
                })
                .collect(),
        ),
        (DeclKind::Scalar(t), _) => DeclKind::Scalar(t.clone()),
        _ => return a.clone(),
    };
    Rc::new(Decl {
        kind,
        max_elements: a.max_elements.max(b.max_elements),
        min_size: a.min_size,
        name: a.name.clone(),
    })
}
