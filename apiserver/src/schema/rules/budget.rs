//! The errors kube-apiserver reports about the rules of a CRD when it is written (apiextensions'
//! validation), after the schema's own: rules that do not compile, `optionalOldSelf` set on rules that do
//! not read `oldSelf`, and the cost budgets: each rule's estimated cost, multiplied by the most times it may run (the product of its
//! ancestors' `maxItems` and `maxProperties`, else as many values as the largest request holds), must
//! stay within `StaticEstimatedCostLimit`, and the sum over the whole schema within
//! `StaticEstimatedCRDCostLimit`.

use std::rc::Rc;

use super::super::errors::SchemaError;
use super::super::node::{Additional, Node};
use super::check::check;
use super::cost::estimate;
use super::decls::{MAX_REQUEST_SIZE, decl_of};
use super::types::Decl;

/// The most a single rule may cost, times its cardinality.
pub(super) const STATIC_ESTIMATED_COST_LIMIT: u64 = 10_000_000;
/// The most all the rules of a schema may cost together.
pub(super) const STATIC_ESTIMATED_CRD_COST_LIMIT: u64 = 100_000_000;

/// The sum of the rules' costs, and the most expensive ones (at most four, each at least 1% of the limit).
#[derive(Default)]
struct Total {
    total: u64,
    most_expensive: Vec<(String, u64)>,
}

impl Total {
    fn observe(&mut self, path: String, cost: u64) {
        self.total = self.total.saturating_add(cost);
        if cost < STATIC_ESTIMATED_CRD_COST_LIMIT / 100 {
            return;
        }
        self.most_expensive.push((path, cost));
        // Go's sort.Slice, descending by cost (ties keep no particular order there).
        self.most_expensive.sort_by_key(|e| std::cmp::Reverse(e.1));
        self.most_expensive.truncate(4);
    }
}

/// The message of a cost over its limit, with the factor formatted as the server formats it.
pub(super) fn cost_error_message(name: &str, cost: u64, limit: u64) -> String {
    let factor = cost as f64 / limit as f64;
    let factor = if factor > 100.0 {
        "more than 100x".to_string()
    } else if factor < 1.5 {
        format!("{factor:.6}x")
    } else {
        format!("{factor:.1}x")
    };
    format!(
        "{name} exceeds budget by factor of {factor} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
    )
}

fn forbidden(path: String, message: String) -> SchemaError {
    SchemaError::Rule {
        path,
        reason: "FieldValueForbidden",
        message: format!("Forbidden: {message}"),
    }
}

/// The budget errors of the schema rooted at `root` (`openAPIV3Schema`), in the server's order.
pub(in super::super) fn budget_errors(root: &Node) -> Vec<SchemaError> {
    let mut walk = Walk {
        errors: Vec::new(),
        total: Total::default(),
    };
    walk.node(root, "openAPIV3Schema", Some(1), true);
    let mut errors = walk.errors;
    if walk.total.total > STATIC_ESTIMATED_CRD_COST_LIMIT {
        for (path, _) in &walk.total.most_expensive {
            errors.push(forbidden(
                path.clone(),
                "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema".into(),
            ));
        }
        errors.push(forbidden(
            "openAPIV3Schema".into(),
            cost_error_message(
                "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema",
                walk.total.total,
                STATIC_ESTIMATED_CRD_COST_LIMIT,
            ),
        ));
    }
    errors
}

struct Walk {
    errors: Vec<SchemaError>,
    total: Total,
}

/// How many elements a node's value holds for its children's cardinality (`extractMaxElements`).
fn max_elements(n: &Node) -> Option<u64> {
    let bound = |v: Option<i64>| v.map(|v| u64::try_from(v).unwrap_or(0));
    match n.types.first().map(String::as_str) {
        Some("object") if n.types.len() == 1 => match n.additional_properties {
            Some(_) => bound(n.max_properties),
            None => Some(1),
        },
        Some("array") if n.types.len() == 1 => bound(n.max_items),
        _ => Some(1),
    }
}

fn times(cost: u64, cardinality: u64) -> u64 {
    if cost == 0 {
        0
    } else {
        cost.saturating_mul(cardinality)
    }
}

impl Walk {
    fn node(&mut self, n: &Node, path: &str, cardinality: Option<u64>, resource: bool) {
        let child_cardinality = match (cardinality, max_elements(n)) {
            (Some(c), Some(m)) => Some(times(c, m)),
            _ => None,
        };
        if let Some(Additional::Schema(values)) = &n.additional_properties {
            self.node(
                values,
                &format!("{path}.additionalProperties"),
                child_cardinality,
                values.embedded_resource,
            );
        }
        for (name, p) in &n.properties {
            self.node(
                p,
                &format!("{path}.properties[{name}]"),
                child_cardinality,
                p.embedded_resource,
            );
        }
        if let Some(items) = &n.items {
            self.node(
                items,
                &format!("{path}.items"),
                child_cardinality,
                items.embedded_resource,
            );
        }
        if n.rules.is_empty() {
            return;
        }
        let Some(decl) = decl_of(n, resource, "selfType") else {
            self.errors.push(SchemaError::Rule {
                path: format!("{path}.x-kubernetes-validations"),
                reason: "InternalError",
                message: "Internal error: internal error: failed to construct type information for x-kubernetes-validations rules: unable to convert structural schema to CEL declarations".into(),
            });
            return;
        };
        for (i, rule) in n.rules.iter().enumerate() {
            let at = |field: &str| format!("{path}.x-kubernetes-validations[{i}].{field}");
            let rule_path = at("rule");
            let cost = if rule.errors.rule.is_some() {
                0
            } else {
                rule_cost(
                    &rule.source,
                    rule.program.expression(),
                    &decl,
                    rule.optional_old_self,
                )
            };
            let by_request = (MAX_REQUEST_SIZE / (decl.min_size + 1)) as u64;
            let expression_cost = times(cost, cardinality.unwrap_or(by_request));
            if expression_cost > STATIC_ESTIMATED_COST_LIMIT {
                self.errors.push(forbidden(
                    rule_path.clone(),
                    cost_error_message(
                        "estimated rule cost",
                        expression_cost,
                        STATIC_ESTIMATED_COST_LIMIT,
                    ),
                ));
            }
            self.total.observe(rule_path.clone(), expression_cost);
            if let Some(message) = &rule.errors.rule {
                self.errors.push(invalid(rule_path, message.clone()));
            }
            if let Some(message) = &rule.errors.message_expression {
                self.errors
                    .push(invalid(at("messageExpression"), message.clone()));
            } else if let (Some(program), Some(source)) =
                (&rule.message_program, &rule.message_expression)
            {
                let cost = rule_cost(source, program.expression(), &decl, rule.optional_old_self);
                let message_path = at("messageExpression");
                if cost > STATIC_ESTIMATED_COST_LIMIT {
                    self.errors.push(forbidden(
                        message_path.clone(),
                        cost_error_message(
                            "estimated messageExpression cost",
                            cost,
                            STATIC_ESTIMATED_COST_LIMIT,
                        ),
                    ));
                }
                self.total.observe(message_path, cost);
            }
            if let Some(set) = rule.errors.optional_old_self {
                self.errors.push(invalid(
                    at("optionalOldSelf"),
                    format!("Invalid value: {set}: may not be set if oldSelf is not used in rule"),
                ));
            }
        }
    }
}

fn invalid(path: String, message: String) -> SchemaError {
    SchemaError::Rule {
        path,
        reason: "FieldValueInvalid",
        message,
    }
}

/// The estimated maximum cost of one evaluation of an expression; 0 for expressions not checked.
fn rule_cost(
    source: &str,
    expr: &kube_cel::cel::common::ast::IdedExpr,
    decl: &Rc<Decl>,
    optional_old_self: bool,
) -> u64 {
    let checked = check(source, expr, decl, optional_old_self);
    if checked.unchecked || !checked.errors.is_empty() {
        return 0;
    }
    estimate(expr, &checked, decl).max
}
