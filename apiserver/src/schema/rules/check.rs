//! The part of cel-go's type check that rules most often fail: selecting a field the schema does not
//! declare (`self.replicsa`), refused by kube-apiserver when the CRD is written, with its error text.
//!
//! Only what the schema pins down is checked: fields of objects (without `additionalProperties` or
//! `x-kubernetes-preserve-unknown-fields`), the root's and embedded resources'
//! `apiVersion`, `kind` and `metadata` (`name` and `generateName` only), through indexes and the variables
//! of macros (`all`, `exists`, `map`, `filter`). Anything else (other type errors, the cost estimate) is
//! left to evaluation.

use std::collections::HashMap;

use kube_cel::cel::common::ast::{Expr, IdedExpr};

use super::super::compile::{Additional, Node};
use super::values::escape;

/// What the checker knows of an expression's type.
#[derive(Clone, Copy)]
enum Ty<'n> {
    /// A schema node; `true` for the root or an embedded resource (which have `apiVersion`, `kind` and a
    /// reduced `metadata`).
    Node(&'n Node, bool),
    /// The reduced `metadata` of the root or an embedded resource.
    Meta,
    Unknown,
}

/// One undefined field, in the order the expression names them.
struct Undefined {
    field: String,
    /// Selected inside `has()`, which cel-go reports at the macro's parenthesis.
    in_has: bool,
}

/// cel-go's errors for the undefined fields `expr` selects, `self` (and `oldSelf`) being `node`; empty
/// when there are none.
pub(super) fn undefined_fields(
    source: &str,
    expr: &IdedExpr,
    node: &Node,
    root: bool,
) -> Vec<String> {
    let mut checker = Checker {
        node,
        root,
        scopes: Vec::new(),
        found: Vec::new(),
    };
    checker.resolve(expr);
    let mut seen: HashMap<(String, bool), usize> = HashMap::new();
    checker
        .found
        .iter()
        .map(|u| {
            let nth = seen.entry((u.field.clone(), u.in_has)).or_default();
            let column = column_of(source, u, *nth);
            *nth += 1;
            let caret = format!("{}^", ".".repeat(column.saturating_sub(1)));
            format!(
                "ERROR: <input>:1:{column}: undefined field '{}'\n | {source}\n | {caret}",
                u.field
            )
        })
        .collect()
}

/// The 1-based column cel-go reports: the `.` before the field, or for `has()` its parenthesis.
fn column_of(source: &str, u: &Undefined, nth: usize) -> usize {
    let needle = format!(".{}", u.field);
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let dot = source
        .match_indices(&needle)
        .filter(|(i, _)| !source[i + needle.len()..].starts_with(ident))
        .map(|(i, _)| i)
        .nth(nth)
        .unwrap_or(0);
    if u.in_has {
        return source[..dot]
            .rfind("has(")
            .map(|h| h + 4)
            .unwrap_or(dot + 1);
    }
    dot + 1
}

struct Checker<'n> {
    node: &'n Node,
    root: bool,
    /// Macro variables in scope, innermost last.
    scopes: Vec<(String, Ty<'n>)>,
    found: Vec<Undefined>,
}

impl<'n> Checker<'n> {
    fn resolve(&mut self, e: &IdedExpr) -> Ty<'n> {
        match &e.expr {
            Expr::Ident(name) => {
                if let Some((_, ty)) = self.scopes.iter().rev().find(|(n, _)| n == name) {
                    return *ty;
                }
                match name.as_str() {
                    "self" | "oldSelf" => Ty::Node(self.node, self.root),
                    _ => Ty::Unknown,
                }
            }
            Expr::Select(s) => {
                let operand = self.resolve(&s.operand);
                match field_of(operand, &s.field) {
                    Some(ty) => ty,
                    None => {
                        self.found.push(Undefined {
                            field: s.field.clone(),
                            in_has: s.test,
                        });
                        Ty::Unknown
                    }
                }
            }
            Expr::Call(call) => {
                let target = call.target.as_deref().map(|t| self.resolve(t));
                let args: Vec<Ty<'n>> = call.args.iter().map(|a| self.resolve(a)).collect();
                match (call.func_name.as_str(), target, args.first()) {
                    ("_[_]", None, Some(operand)) => element_of(*operand),
                    _ => Ty::Unknown,
                }
            }
            Expr::Comprehension(c) => {
                let range = self.resolve(&c.iter_range);
                let element = match range {
                    Ty::Node(n, _) if n.items.is_some() => element_of(range),
                    _ => Ty::Unknown,
                };
                let accu = self.resolve(&c.accu_init);
                self.scopes.push((c.iter_var.clone(), element));
                if let Some(second) = &c.iter_var2 {
                    self.scopes.push((second.clone(), Ty::Unknown));
                }
                self.scopes.push((c.accu_var.clone(), accu));
                self.resolve(&c.loop_cond);
                self.resolve(&c.loop_step);
                self.resolve(&c.result);
                self.scopes.pop();
                if c.iter_var2.is_some() {
                    self.scopes.pop();
                }
                self.scopes.pop();
                Ty::Unknown
            }
            Expr::List(l) => {
                for item in &l.elements {
                    self.resolve(item);
                }
                Ty::Unknown
            }
            Expr::Map(m) => {
                for entry in &m.entries {
                    if let kube_cel::cel::common::ast::EntryExpr::MapEntry(me) = &entry.expr {
                        self.resolve(&me.key);
                        self.resolve(&me.value);
                    }
                }
                Ty::Unknown
            }
            Expr::Struct(s) => {
                for entry in &s.entries {
                    if let kube_cel::cel::common::ast::EntryExpr::StructField(f) = &entry.expr {
                        self.resolve(&f.value);
                    }
                }
                Ty::Unknown
            }
            Expr::Literal(_) | Expr::Unspecified => Ty::Unknown,
        }
    }
}

/// The type of `operand.field`; `None` when the schema says there is no such field.
fn field_of<'n>(operand: Ty<'n>, field: &str) -> Option<Ty<'n>> {
    match operand {
        Ty::Unknown => Some(Ty::Unknown),
        Ty::Meta => matches!(field, "name" | "generateName").then_some(Ty::Unknown),
        Ty::Node(n, resource) => {
            if resource {
                match field {
                    "metadata" => return Some(Ty::Meta),
                    "apiVersion" | "kind" => return Some(Ty::Unknown),
                    _ => {}
                }
            }
            if let Some(p) = n
                .properties
                .iter()
                .find(|(name, _)| escape(name).as_deref() == Some(field))
                .map(|(_, p)| p)
            {
                return Some(Ty::Node(p, p.embedded_resource));
            }
            match &n.additional_properties {
                Some(Additional::Schema(values)) => return Some(Ty::Node(values, false)),
                Some(Additional::Bool(true)) => return Some(Ty::Unknown),
                _ => {}
            }
            // An object that declares no properties (and keeps no unknown fields) has no fields at all.
            let object = n.types.iter().any(|t| t == "object");
            let declared = !n.properties.is_empty() || resource || object;
            if declared && !n.preserve_unknown_fields {
                None
            } else {
                Some(Ty::Unknown)
            }
        }
    }
}

/// The type of `operand[i]`: a list's items or a map's values.
fn element_of(operand: Ty<'_>) -> Ty<'_> {
    match operand {
        Ty::Node(n, _) => match (&n.items, &n.additional_properties) {
            (Some(items), _) => Ty::Node(items, items.embedded_resource),
            (None, Some(Additional::Schema(values))) => Ty::Node(values, values.embedded_resource),
            _ => Ty::Unknown,
        },
        _ => Ty::Unknown,
    }
}
