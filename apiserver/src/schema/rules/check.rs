//! The part of cel-go's type check that rules most often fail, refused by kube-apiserver when the CRD is
//! written, with its error texts and positions: selecting a field the schema does not declare
//! (`self.replicsa`), comparing values of types no overload accepts (`self.replicas == 'a'`, an int with a
//! double under `==`), and a rule whose value is not a bool (`self.replicas`).
//!
//! Only what the schema pins down is checked: fields of objects (without `additionalProperties` or
//! `x-kubernetes-preserve-unknown-fields`), the root's and embedded resources' `apiVersion`, `kind` and
//! `metadata` (`name` and `generateName` only), through indexes and the variables of macros (`all`,
//! `exists`, `map`, `filter`); the types of scalar fields, literals and `size()`. Anything else (calls with
//! arguments of other types, the cost estimate) is left to evaluation.

use std::collections::HashMap;

use kube_cel::cel::common::ast::{Expr, IdedExpr, LiteralValue};

use super::super::compile::{Additional, Node};
use super::values::escape;
use crate::cel::errors::{OPERATORS, token_column};

/// What the checker knows of an expression's type.
#[derive(Clone, Copy)]
enum Ty<'n> {
    /// A schema node; `true` for the root or an embedded resource (which have `apiVersion`, `kind` and a
    /// reduced `metadata`).
    Node(&'n Node, bool),
    /// The reduced `metadata` of the root or an embedded resource.
    Meta,
    /// A value whose CEL type is known.
    Scalar(Prim),
    Unknown,
}

/// CEL's scalar types, as cel-go names them in its errors.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Prim {
    Int,
    Uint,
    Double,
    String,
    Bool,
    Bytes,
    Null,
    Timestamp,
    Duration,
}

impl Prim {
    fn name(self) -> &'static str {
        match self {
            Prim::Int => "int",
            Prim::Uint => "uint",
            Prim::Double => "double",
            Prim::String => "string",
            Prim::Bool => "bool",
            Prim::Bytes => "bytes",
            Prim::Null => "null_type",
            Prim::Timestamp => "google.protobuf.Timestamp",
            Prim::Duration => "google.protobuf.Duration",
        }
    }

    fn numeric(self) -> bool {
        matches!(self, Prim::Int | Prim::Uint | Prim::Double)
    }
}

/// The scalar type of a schema node's values, when it has one.
fn prim_of(n: &Node) -> Option<Prim> {
    if n.types.len() != 1 {
        return None;
    }
    Some(match n.types[0].as_str() {
        "integer" => Prim::Int,
        "number" => Prim::Double,
        "boolean" => Prim::Bool,
        "string" => match n.format.as_str() {
            "byte" => Prim::Bytes,
            "date-time" | "datetime" | "date" => Prim::Timestamp,
            "duration" => Prim::Duration,
            _ => Prim::String,
        },
        _ => return None,
    })
}

/// A call no overload accepts: the operator, its argument types, and which occurrence of the operator in
/// the source it is.
struct Mismatch {
    function: &'static str,
    token: &'static str,
    nth: usize,
    args: (Prim, Prim),
}

/// One undefined field, in the order the expression names them.
struct Undefined {
    field: String,
    /// Selected inside `has()`, which cel-go reports at the macro's parenthesis.
    in_has: bool,
}

/// What the type check found in one expression.
pub(super) struct Checked {
    /// cel-go's errors (undefined fields, operators no overload accepts), in source order.
    pub errors: Vec<String>,
    /// The expression's type is known and is not `bool`.
    pub not_bool: bool,
}

/// Type-checks `expr` (parsed from `source`) as cel-go does, as far as the schema pins types down: `self`
/// (and `oldSelf`) being `node` (`root` for the root or an embedded resource).
pub(super) fn check(source: &str, expr: &IdedExpr, node: &Node, root: bool) -> Checked {
    let mut checker = Checker {
        node,
        root,
        scopes: Vec::new(),
        found: Vec::new(),
        mismatches: Vec::new(),
        operators: HashMap::new(),
    };
    let result = checker.resolve(expr);
    let not_bool = match result {
        Ty::Scalar(p) => p != Prim::Bool,
        Ty::Meta => true,
        Ty::Node(n, _) => n.types.iter().any(|t| t == "object" || t == "array"),
        Ty::Unknown => false,
    };
    let mut located: Vec<(usize, String)> = Vec::new();
    let mut seen: HashMap<(String, bool), usize> = HashMap::new();
    for u in &checker.found {
        let nth = seen.entry((u.field.clone(), u.in_has)).or_default();
        let column = crate::cel::errors::select_column(source, &u.field, u.in_has, *nth);
        *nth += 1;
        located.push((column, format!("undefined field '{}'", u.field)));
    }
    for m in &checker.mismatches {
        let column = token_column(source, m.token, m.nth);
        located.push((
            column,
            format!(
                "found no matching overload for '{}' applied to '({}, {})'",
                m.function,
                m.args.0.name(),
                m.args.1.name()
            ),
        ));
    }
    located.sort_by_key(|(column, _)| *column);
    let errors = located
        .into_iter()
        .map(|(column, what)| crate::cel::errors::located(source, column, &what))
        .collect();
    Checked { errors, not_bool }
}

struct Checker<'n> {
    node: &'n Node,
    root: bool,
    /// Macro variables in scope, innermost last.
    scopes: Vec<(String, Ty<'n>)>,
    found: Vec<Undefined>,
    mismatches: Vec<Mismatch>,
    /// How many of each operator were passed, in source order.
    operators: HashMap<&'static str, usize>,
}

impl<'n> Checker<'n> {
    fn resolve(&mut self, e: &IdedExpr) -> Ty<'n> {
        match &e.expr {
            Expr::Ident(name) => {
                if let Some((_, ty)) = self.scopes.iter().rev().find(|(n, _)| n == name) {
                    return *ty;
                }
                match name.as_str() {
                    "self" | "oldSelf" => match prim_of(self.node) {
                        Some(prim) => Ty::Scalar(prim),
                        None => Ty::Node(self.node, self.root),
                    },
                    _ => Ty::Unknown,
                }
            }
            Expr::Select(s) => {
                let operand = self.resolve(&s.operand);
                match field_of(operand, &s.field) {
                    Some(ty) if s.test => {
                        let _ = ty;
                        Ty::Scalar(Prim::Bool)
                    }
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
                let function = call.func_name.as_str();
                let operator = OPERATORS.iter().find(|(f, _)| *f == function);
                let mut args: Vec<Ty<'n>> = Vec::new();
                for (i, a) in call.args.iter().enumerate() {
                    // The operator's token sits between its operands: count it in source order.
                    if i == 1
                        && let Some((f, _)) = operator
                    {
                        *self.operators.entry(f).or_default() += 1;
                    }
                    args.push(self.resolve(a));
                }
                if let (Some((f, token)), [Ty::Scalar(a), Ty::Scalar(b)]) =
                    (operator, args.as_slice())
                {
                    let ordering = !matches!(*f, "_==_" | "_!=_");
                    // Comparisons with null are left to evaluation (nullable fields compare with it).
                    let accepted = a == b
                        || *a == Prim::Null
                        || *b == Prim::Null
                        || (ordering && a.numeric() && b.numeric());
                    if !accepted {
                        self.mismatches.push(Mismatch {
                            function: f,
                            token,
                            nth: self.operators.get(f).copied().unwrap_or(1) - 1,
                            args: (*a, *b),
                        });
                    }
                    return Ty::Scalar(Prim::Bool);
                }
                match (function, target, args.first()) {
                    ("_[_]", None, Some(operand)) => element_of(*operand),
                    (f, _, _) if operator.is_some() || f == "_&&_" || f == "_||_" || f == "!_" => {
                        Ty::Scalar(Prim::Bool)
                    }
                    ("size", _, _) => Ty::Scalar(Prim::Int),
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
            Expr::Literal(l) => Ty::Scalar(match l {
                LiteralValue::Boolean(_) => Prim::Bool,
                LiteralValue::Bytes(_) => Prim::Bytes,
                LiteralValue::Double(_) => Prim::Double,
                LiteralValue::Int(_) => Prim::Int,
                LiteralValue::Null => Prim::Null,
                LiteralValue::String(_) => Prim::String,
                LiteralValue::UInt(_) => Prim::Uint,
            }),
            Expr::Unspecified => Ty::Unknown,
        }
    }
}

/// The type of `operand.field`; `None` when the schema says there is no such field.
fn field_of<'n>(operand: Ty<'n>, field: &str) -> Option<Ty<'n>> {
    match operand {
        Ty::Unknown => Some(Ty::Unknown),
        Ty::Meta => matches!(field, "name" | "generateName").then_some(Ty::Scalar(Prim::String)),
        Ty::Scalar(_) => Some(Ty::Unknown),
        Ty::Node(n, resource) => {
            if resource {
                match field {
                    "metadata" => return Some(Ty::Meta),
                    "apiVersion" | "kind" => return Some(Ty::Scalar(Prim::String)),
                    _ => {}
                }
            }
            if let Some(p) = n
                .properties
                .iter()
                .find(|(name, _)| escape(name).as_deref() == Some(field))
                .map(|(_, p)| p)
            {
                return Some(match prim_of(p) {
                    Some(prim) => Ty::Scalar(prim),
                    None => Ty::Node(p, p.embedded_resource),
                });
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

/// The type of a value at schema node `n`.
fn typed(n: &Node) -> Ty<'_> {
    match prim_of(n) {
        Some(prim) => Ty::Scalar(prim),
        None => Ty::Node(n, n.embedded_resource),
    }
}

/// The type of `operand[i]`: a list's items or a map's values.
fn element_of(operand: Ty<'_>) -> Ty<'_> {
    match operand {
        Ty::Node(n, _) => match (&n.items, &n.additional_properties) {
            (Some(items), _) => typed(items),
            (None, Some(Additional::Schema(values))) => typed(values),
            _ => Ty::Unknown,
        },
        _ => Ty::Unknown,
    }
}
