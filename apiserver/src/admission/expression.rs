//! Compiling a `matchConditions` expression when a webhook configuration is written, as kube-apiserver's
//! CEL compiler for admission does: it must parse, name only the declared variables (`object`,
//! `oldObject`, `request`, `namespaceObject`, `authorizer`, `authorizer.requestResource`; `params` is not
//! declared for webhooks), select only declared fields of the typed `request` and `namespaceObject`, and
//! be of type `bool` (`object.spec.enabled` is `dyn`, which kube-apiserver refuses).
//!
//! The type check covers the variables, field selections, literals, operators, indexes, the macros and
//! `size()` and the conversion functions; anything else (other functions, their argument types, the cost
//! estimate) is left unchecked, and such an expression is accepted.

use std::collections::HashMap;

use kube_cel::cel::Program;
use kube_cel::cel::common::ast::{EntryExpr, Expr, IdedExpr, LiteralValue};

use crate::cel::errors::{
    OPERATORS, identifier_column, located, parse_error, select_column, token_column,
};

/// What cel-go knows of an expression's type.
#[derive(Debug, Clone, PartialEq)]
enum Ty {
    Dyn,
    Bool,
    Int,
    Uint,
    Double,
    String,
    Bytes,
    Null,
    Timestamp,
    Duration,
    List(Box<Ty>),
    Map(Box<Ty>, Box<Ty>),
    /// A declared object type, by cel-go's name (`kubernetes.AdmissionRequest`).
    Object(&'static str),
    /// Not worked out here: never reported.
    Unknown,
}

impl Ty {
    /// The type's name in cel-go's messages.
    fn name(&self) -> String {
        match self {
            Ty::Dyn | Ty::Unknown => "dyn".into(),
            Ty::Bool => "bool".into(),
            Ty::Int => "int".into(),
            Ty::Uint => "uint".into(),
            Ty::Double => "double".into(),
            Ty::String => "string".into(),
            Ty::Bytes => "bytes".into(),
            Ty::Null => "null_type".into(),
            Ty::Timestamp => "google.protobuf.Timestamp".into(),
            Ty::Duration => "google.protobuf.Duration".into(),
            Ty::List(e) => format!("list({})", e.name()),
            Ty::Map(k, v) => format!("map({}, {})", k.name(), v.name()),
            Ty::Object(n) => (*n).into(),
        }
    }

    /// The type's name in an overload error, where cel-go calls `null_type` `null`.
    fn operand_name(&self) -> String {
        match self {
            Ty::Null => "null".into(),
            other => other.name(),
        }
    }

    fn known(&self) -> bool {
        match self {
            Ty::Unknown => false,
            Ty::List(e) => e.known(),
            Ty::Map(k, v) => k.known() && v.known(),
            _ => true,
        }
    }
}

const REQUEST: &str = "kubernetes.AdmissionRequest";
const GVK: &str = "kubernetes.GroupVersionKind";
const GVR: &str = "kubernetes.GroupVersionResource";
const USER_INFO: &str = "kubernetes.UserInfo";
const NAMESPACE: &str = "kubernetes.Namespace";
const NAMESPACE_METADATA: &str = "kubernetes.NamespaceMetadata";
const NAMESPACE_SPEC: &str = "kubernetes.NamespaceSpec";
const NAMESPACE_STATUS: &str = "kubernetes.NamespaceStatus";
const NAMESPACE_CONDITION: &str = "kubernetes.NamespaceCondition";
const AUTHORIZER: &str = "kubernetes.authorization.Authorizer";
const RESOURCE_CHECK: &str = "kubernetes.authorization.ResourceCheck";

fn strings() -> Ty {
    Ty::List(Box::new(Ty::String))
}

/// The type of field `field` of the declared object type `object`: `None` when it has no such field,
/// `Some(Unknown)` for the opaque authorizer types.
fn field_type(object: &str, field: &str) -> Option<Ty> {
    Some(match (object, field) {
        (REQUEST, "kind" | "requestKind") => Ty::Object(GVK),
        (REQUEST, "resource" | "requestResource") => Ty::Object(GVR),
        (REQUEST, "subResource" | "requestSubResource" | "name" | "namespace" | "operation") => {
            Ty::String
        }
        (REQUEST, "userInfo") => Ty::Object(USER_INFO),
        (REQUEST, "dryRun") => Ty::Bool,
        (REQUEST, "options") => Ty::Dyn,
        (GVK, "group" | "version" | "kind") => Ty::String,
        (GVR, "group" | "version" | "resource") => Ty::String,
        (USER_INFO, "username" | "uid") => Ty::String,
        (USER_INFO, "groups") => strings(),
        (USER_INFO, "extra") => Ty::Map(Box::new(Ty::String), Box::new(strings())),
        (NAMESPACE, "metadata") => Ty::Object(NAMESPACE_METADATA),
        (NAMESPACE, "spec") => Ty::Object(NAMESPACE_SPEC),
        (NAMESPACE, "status") => Ty::Object(NAMESPACE_STATUS),
        (NAMESPACE_SPEC, "finalizers") => strings(),
        (NAMESPACE_STATUS, "conditions") => Ty::List(Box::new(Ty::Object(NAMESPACE_CONDITION))),
        (NAMESPACE_STATUS, "phase") => Ty::String,
        (NAMESPACE_CONDITION, "status" | "type" | "message" | "reason") => Ty::String,
        (NAMESPACE_CONDITION, "lastTransitionTime") => Ty::Timestamp,
        (NAMESPACE_METADATA, "name" | "generateName" | "namespace" | "UID" | "resourceVersion") => {
            Ty::String
        }
        (NAMESPACE_METADATA, "labels" | "annotations") => {
            Ty::Map(Box::new(Ty::String), Box::new(Ty::String))
        }
        (NAMESPACE_METADATA, "creationTimestamp" | "deletionTimestamp") => Ty::Timestamp,
        (NAMESPACE_METADATA, "deletionGracePeriodSeconds" | "generation") => Ty::Int,
        (NAMESPACE_METADATA, "finalizers") => strings(),
        (AUTHORIZER, "requestResource") => Ty::Object(RESOURCE_CHECK),
        (AUTHORIZER | RESOURCE_CHECK, _) => Ty::Unknown,
        _ => return None,
    })
}

/// Compiles a match condition's expression (already trimmed); `Err` with kube-apiserver's detail
/// (`compilation failed: ERROR: ...`, `must evaluate to bool but got dyn`).
pub(crate) fn check(expression: &str, allow_params: bool) -> Result<(), String> {
    let program = Program::compile(expression)
        .map_err(|e| format!("compilation failed: {}", parse_error(&e.to_string())))?;
    let mut checker = Checker {
        allow_params,
        scopes: Vec::new(),
        errors: Vec::new(),
        undeclared: HashMap::new(),
        selected: HashMap::new(),
        operators: HashMap::new(),
        source: expression,
    };
    let ty = checker.resolve(program.expression());
    if !checker.errors.is_empty() {
        checker.errors.sort_by_key(|(column, _)| *column);
        let errors: Vec<String> = checker
            .errors
            .iter()
            .map(|(column, what)| located(expression, *column, what))
            .collect();
        return Err(format!("compilation failed: {}", errors.join("\n")));
    }
    if ty.known() && ty != Ty::Bool {
        return Err(format!("must evaluate to bool but got {}", ty.name()));
    }
    Ok(())
}

struct Checker<'s> {
    allow_params: bool,
    /// Macro variables in scope, innermost last.
    scopes: Vec<(String, Ty)>,
    /// cel-go's errors with their columns.
    errors: Vec<(usize, String)>,
    /// How many times each undeclared name was reported (to find its next occurrence).
    undeclared: HashMap<String, usize>,
    /// How many of each comparison operator were passed, in source order.
    operators: HashMap<&'static str, usize>,
    /// How many times each field was selected (to find its next occurrence).
    selected: HashMap<(String, bool), usize>,
    source: &'s str,
}

impl Checker<'_> {
    fn resolve(&mut self, e: &IdedExpr) -> Ty {
        match &e.expr {
            Expr::Ident(name) => self.ident(name),
            Expr::Select(s) => {
                let operand = self.resolve(&s.operand);
                let nth = self.selected.entry((s.field.clone(), s.test)).or_default();
                let column = select_column(self.source, &s.field, s.test, *nth);
                *nth += 1;
                let ty = match &operand {
                    Ty::Object(object) => match field_type(object, &s.field) {
                        Some(ty) => ty,
                        None => {
                            self.errors
                                .push((column, format!("undefined field '{}'", s.field)));
                            Ty::Unknown
                        }
                    },
                    Ty::Dyn => Ty::Dyn,
                    Ty::Map(_, v) => (**v).clone(),
                    _ => Ty::Unknown,
                };
                if s.test { Ty::Bool } else { ty }
            }
            Expr::Call(call) => {
                let target = call.target.as_deref().map(|t| self.resolve(t));
                let operator = OPERATORS.iter().find(|(f, _)| *f == call.func_name);
                let mut args: Vec<Ty> = Vec::new();
                for (i, a) in call.args.iter().enumerate() {
                    // The operator's token sits between its operands: count it in source order.
                    if i == 1
                        && let Some((f, _)) = operator
                    {
                        *self.operators.entry(f).or_default() += 1;
                    }
                    args.push(self.resolve(a));
                }
                if let (Some((f, token)), [a, b]) = (operator, args.as_slice())
                    && !comparable(f, a, b)
                {
                    let nth = self.operators.get(f).copied().unwrap_or(1) - 1;
                    self.errors.push((
                        token_column(self.source, token, nth),
                        format!(
                            "found no matching overload for '{f}' applied to '({}, {})'",
                            a.operand_name(),
                            b.operand_name()
                        ),
                    ));
                }
                call_type(&call.func_name, target.as_ref(), &args)
            }
            Expr::Comprehension(c) => {
                let range = self.resolve(&c.iter_range);
                let element = match &range {
                    Ty::List(e) => (**e).clone(),
                    Ty::Map(k, _) => (**k).clone(),
                    Ty::Dyn => Ty::Dyn,
                    _ => Ty::Unknown,
                };
                let accu = self.resolve(&c.accu_init);
                let accu = if accu == Ty::Bool {
                    Ty::Bool
                } else {
                    Ty::Unknown
                };
                self.scopes.push((c.iter_var.clone(), element));
                if let Some(second) = &c.iter_var2 {
                    self.scopes.push((second.clone(), Ty::Unknown));
                }
                self.scopes.push((c.accu_var.clone(), accu));
                self.resolve(&c.loop_cond);
                self.resolve(&c.loop_step);
                let result = self.resolve(&c.result);
                self.scopes.pop();
                if c.iter_var2.is_some() {
                    self.scopes.pop();
                }
                self.scopes.pop();
                if result == Ty::Bool {
                    Ty::Bool
                } else {
                    Ty::Unknown
                }
            }
            Expr::List(l) => {
                let items: Vec<Ty> = l.elements.iter().map(|i| self.resolve(i)).collect();
                match items.split_first() {
                    Some((first, rest)) if rest.iter().all(|t| t == first) => {
                        Ty::List(Box::new(first.clone()))
                    }
                    _ => Ty::Unknown,
                }
            }
            Expr::Map(m) => {
                for entry in &m.entries {
                    if let EntryExpr::MapEntry(me) = &entry.expr {
                        self.resolve(&me.key);
                        self.resolve(&me.value);
                    }
                }
                Ty::Unknown
            }
            Expr::Struct(s) => {
                for entry in &s.entries {
                    if let EntryExpr::StructField(f) = &entry.expr {
                        self.resolve(&f.value);
                    }
                }
                Ty::Unknown
            }
            Expr::Literal(l) => match l {
                LiteralValue::Boolean(_) => Ty::Bool,
                LiteralValue::Bytes(_) => Ty::Bytes,
                LiteralValue::Double(_) => Ty::Double,
                LiteralValue::Int(_) => Ty::Int,
                LiteralValue::Null => Ty::Null,
                LiteralValue::String(_) => Ty::String,
                LiteralValue::UInt(_) => Ty::Uint,
            },
            Expr::Unspecified => Ty::Unknown,
        }
    }

    fn ident(&mut self, name: &str) -> Ty {
        if let Some((_, ty)) = self.scopes.iter().rev().find(|(n, _)| n == name) {
            return ty.clone();
        }
        match name {
            "object" | "oldObject" => Ty::Dyn,
            "params" if self.allow_params => Ty::Dyn,
            "request" => Ty::Object(REQUEST),
            "namespaceObject" => Ty::Object(NAMESPACE),
            "authorizer" => Ty::Object(AUTHORIZER),
            _ => {
                let nth = self.undeclared.entry(name.to_string()).or_default();
                let column = identifier_column(self.source, name, *nth);
                *nth += 1;
                self.errors.push((
                    column,
                    format!("undeclared reference to '{name}' (in container '')"),
                ));
                Ty::Unknown
            }
        }
    }
}

/// Whether cel-go has an overload of the comparison `function` for operands of types `a` and `b`: the same
/// type, numbers under an ordering, `null` with a message type; `dyn` and unknown types are left to
/// evaluation.
fn comparable(function: &str, a: &Ty, b: &Ty) -> bool {
    let numeric = |t: &Ty| matches!(t, Ty::Int | Ty::Uint | Ty::Double);
    let ordering = !matches!(function, "_==_" | "_!=_");
    // `null` compares with messages (objects, timestamps, durations) only.
    let nullable = |t: &Ty| {
        matches!(
            t,
            Ty::Null | Ty::Dyn | Ty::Object(_) | Ty::Timestamp | Ty::Duration
        )
    };
    if !a.known() || !b.known() || matches!(a, Ty::Dyn) || matches!(b, Ty::Dyn) {
        return true;
    }
    if *a == Ty::Null || *b == Ty::Null {
        return nullable(a) && nullable(b);
    }
    a == b || (ordering && numeric(a) && numeric(b))
}

/// The type of a call: operators, indexes, `size()`, the string predicates and conversions; `Unknown` for
/// anything else.
fn call_type(function: &str, target: Option<&Ty>, args: &[Ty]) -> Ty {
    let same = |a: &Ty, b: &Ty| {
        if a == b && a.known() {
            a.clone()
        } else if *a == Ty::Dyn || *b == Ty::Dyn {
            Ty::Dyn
        } else {
            Ty::Unknown
        }
    };
    match (function, target, args) {
        (
            "_==_"
            | "_!=_"
            | "_<_"
            | "_<=_"
            | "_>_"
            | "_>=_"
            | "_&&_"
            | "_||_"
            | "!_"
            | "@in"
            | "@not_strictly_false",
            None,
            _,
        ) => Ty::Bool,
        ("_+_" | "_-_" | "_*_" | "_/_" | "_%_", None, [a, b]) => same(a, b),
        ("-_", None, [a]) => a.clone(),
        ("_?_:_", None, [_, a, b]) => same(a, b),
        ("_[_]", None, [operand, _]) => match operand {
            Ty::List(e) => (**e).clone(),
            Ty::Map(_, v) => (**v).clone(),
            Ty::Dyn => Ty::Dyn,
            _ => Ty::Unknown,
        },
        ("size", _, _) => Ty::Int,
        ("startsWith" | "endsWith" | "contains" | "matches", Some(_), _) => Ty::Bool,
        ("string", None, [_]) => Ty::String,
        ("int", None, [_]) => Ty::Int,
        ("uint", None, [_]) => Ty::Uint,
        ("double", None, [_]) => Ty::Double,
        ("bool", None, [_]) => Ty::Bool,
        ("bytes", None, [_]) => Ty::Bytes,
        ("timestamp", None, [_]) => Ty::Timestamp,
        ("duration", None, [_]) => Ty::Duration,
        ("dyn", None, [_]) => Ty::Dyn,
        _ => Ty::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bool_expressions_compile() {
        for e in [
            "object.metadata.name == 'a'",
            "has(object.spec) && object.spec.x > 1",
            "request.userInfo.groups.exists(g, g == 'system:masters')",
            "'system:masters' in request.userInfo.groups",
            "request.operation == 'CREATE' || request.dryRun",
            "authorizer.group('apps').resource('deployments').check('get').allowed()",
            "object.data.all(k, k.startsWith('a'))",
            "size(request.userInfo.extra) == 0",
        ] {
            assert_eq!(check(e, false), Ok(()), "{e}");
        }
    }

    #[test]
    fn other_types_are_refused() {
        assert_eq!(
            check("object.spec.paused", false),
            Err("must evaluate to bool but got dyn".into())
        );
        assert_eq!(
            check("1", false),
            Err("must evaluate to bool but got int".into())
        );
        assert_eq!(
            check("request.userInfo.groups", false),
            Err("must evaluate to bool but got list(string)".into())
        );
        assert_eq!(
            check("request.userInfo", false),
            Err("must evaluate to bool but got kubernetes.UserInfo".into())
        );
    }

    #[test]
    fn undeclared_names_and_fields_are_refused() {
        assert_eq!(
            check("params.x == 1", false),
            Err("compilation failed: ERROR: <input>:1:1: undeclared reference to 'params' (in container '')\n | params.x == 1\n | ^".into())
        );
        assert_eq!(check("params.x == 1", true), Ok(()));
        assert_eq!(
            check("request.dryRun == 'true' || request.operation < 1", false),
            Err("compilation failed: ERROR: <input>:1:16: found no matching overload for '_==_' applied to '(bool, string)'\n | request.dryRun == 'true' || request.operation < 1\n | ...............^\nERROR: <input>:1:47: found no matching overload for '_<_' applied to '(string, int)'\n | request.dryRun == 'true' || request.operation < 1\n | ..............................................^".into())
        );
        assert_eq!(
            check("request.foo == 'a' && self.x", false),
            Err("compilation failed: ERROR: <input>:1:8: undefined field 'foo'\n | request.foo == 'a' && self.x\n | .......^\nERROR: <input>:1:23: undeclared reference to 'self' (in container '')\n | request.foo == 'a' && self.x\n | ......................^".into())
        );
    }

    #[test]
    fn parse_errors_are_cel_go_s() {
        let e = check("object.x ==", false).unwrap_err();
        assert!(
            e.starts_with("compilation failed: ERROR: <input>:1:"),
            "{e}"
        );
    }
}
