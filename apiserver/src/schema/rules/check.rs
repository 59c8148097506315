//! cel-go's type check of a rule, as kube-apiserver runs it when a CRD is written: every expression gets
//! a type from the schema's declarations (`self`, `oldSelf`), the variables of macros, literals and the
//! overloads of the functions it calls ([`functions`](super::functions)); what does not type-check is
//! reported with cel-go's texts (`undefined field 'x'`, `found no matching overload for 'startsWith'
//! applied to 'int.(string)'`, `undeclared reference to 'f' (in container '')`, `expected type 'bool' but
//! found 'int'`, ...) at cel-go's positions.
//!
//! The types and overloads found are kept for the cost estimate ([`cost`](super::cost)).
//!
//! The same checker compiles webhooks' `matchConditions` ([`check_declared`]), with the admission
//! environment's variables (`admission/expression.rs`) in place of `self` and `oldSelf`.

use std::collections::HashMap;
use std::rc::Rc;

use kube_cel::cel::common::ast::{EntryExpr, Expr, IdedExpr, LiteralValue};

use super::expand::expand;
use super::functions::{fresh_pair, instantiate, overloads, type_ident};
use super::positions::{keys, locate, render};
use super::types::Decl;
use super::types::{Subst, Type};
use super::validators::validate;

/// What the type check found in one expression.
pub(super) struct Checked {
    /// cel-go's errors, rendered, in source order.
    pub(super) errors: Vec<String>,
    /// The expression's type (`dyn` where unknown).
    pub(super) output: Type,
    /// Every expression's type.
    pub(super) types: HashMap<u64, Type>,
    /// The overloads each call may resolve to.
    pub(super) overloads: HashMap<u64, Vec<String>>,
    /// Calls on a namespace (`optional.of(x)`, `format.named(n)`) resolved as global functions.
    pub(super) qualified: HashMap<u64, String>,
    /// The expression with its two-variable macros expanded, when it has some: what the types, overloads
    /// and positions are of.
    pub(super) expanded: Option<IdedExpr>,
    /// The expression uses a macro the parser does not expand (two-variable comprehensions, `cel.bind`,
    /// `optMap`, ...): nothing was checked.
    pub(super) unchecked: bool,
}

/// Macros of cel-go that the `cel` crate's parser leaves as calls.
const UNEXPANDED: &[&str] = &["optMap", "optFlatMap", "sortBy"];

/// Type-checks `expr` (parsed from `source`), `self` being of the declaration `decl`; `oldSelf` is
/// optional with `optional_old_self`.
pub(super) fn check(
    source: &str,
    expr: &IdedExpr,
    decl: &Rc<Decl>,
    optional_old_self: bool,
) -> Checked {
    let self_type = decl.cel_type();
    let old_self = if optional_old_self {
        Type::Optional(Box::new(self_type.clone()))
    } else {
        self_type.clone()
    };
    check_in(
        source,
        expr,
        vec![("self".into(), self_type), ("oldSelf".into(), old_self)],
    )
}

/// Type-checks `expr` (parsed from `source`) in an environment declaring `variables` (names may be
/// qualified, as `authorizer.requestResource` is) besides CEL's and Kubernetes' functions: cel-go's
/// rendered errors (`Err`), else the expression's type (`None` when it uses a macro the parser does not
/// expand, which is left unchecked).
pub(crate) fn check_declared(
    source: &str,
    expr: &IdedExpr,
    variables: Vec<(String, Type)>,
) -> Result<Option<Type>, Vec<String>> {
    let checked = check_in(source, expr, variables);
    if checked.unchecked {
        Ok(None)
    } else if checked.errors.is_empty() {
        Ok(Some(checked.output))
    } else {
        Err(checked.errors)
    }
}

/// Type-checks `expr` (parsed from `source`) with `variables` declared.
fn check_in(source: &str, expr: &IdedExpr, variables: Vec<(String, Type)>) -> Checked {
    let expanded = expand(expr);
    let expr = expanded.as_ref().unwrap_or(expr);
    let mut c = Checker {
        subst: Subst::default(),
        scopes: variables,
        types: HashMap::new(),
        overloads: HashMap::new(),
        qualified: HashMap::new(),
        errors: Vec::new(),
        unchecked: false,
    };
    let output = c.check(expr);
    let output = c.subst.apply(&output, true);
    let types = c
        .types
        .iter()
        .map(|(id, t)| (*id, c.subst.apply(t, true)))
        .collect();
    let mut found = c.errors;
    if found.is_empty() && !c.unchecked {
        found = validate(expr, &types);
    }
    let positions = keys(expr);
    let mut located: Vec<((usize, usize), String)> = found
        .iter()
        .map(|(id, message)| {
            let at = positions
                .get(id)
                .and_then(|(key, nth)| locate(source, key, *nth))
                .unwrap_or((1, 1));
            (at, message.clone())
        })
        .collect();
    located.sort_by_key(|(at, _)| *at);
    located.dedup();
    let errors = if c.unchecked {
        Vec::new()
    } else {
        located
            .into_iter()
            .map(|(at, message)| render(source, Some(at), &message))
            .collect()
    };
    Checked {
        errors,
        output,
        types,
        overloads: c.overloads,
        qualified: c.qualified,
        unchecked: c.unchecked,
        expanded,
    }
}

struct Checker {
    subst: Subst,
    /// Variables in scope, innermost last.
    scopes: Vec<(String, Type)>,
    types: HashMap<u64, Type>,
    overloads: HashMap<u64, Vec<String>>,
    qualified: HashMap<u64, String>,
    errors: Vec<(u64, String)>,
    unchecked: bool,
}

/// The dotted name an expression spells (`a.b.c`), if it is one.
fn qualified_name(e: &IdedExpr) -> Option<String> {
    match &e.expr {
        Expr::Ident(n) => Some(n.clone()),
        Expr::Select(s) if !s.test => Some(format!("{}.{}", qualified_name(&s.operand)?, s.field)),
        _ => None,
    }
}

impl Checker {
    fn check(&mut self, e: &IdedExpr) -> Type {
        let t = self.infer(e);
        self.types.insert(e.id, t.clone());
        t
    }

    fn error(&mut self, id: u64, message: String) -> Type {
        self.errors.push((id, message));
        Type::Error
    }

    fn lookup(&self, name: &str) -> Option<Type> {
        self.scopes
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, t)| t.clone())
    }

    fn infer(&mut self, e: &IdedExpr) -> Type {
        match &e.expr {
            Expr::Literal(l) => match l {
                LiteralValue::Boolean(_) => Type::Bool,
                LiteralValue::Bytes(_) => Type::Bytes,
                LiteralValue::Double(_) => Type::Double,
                LiteralValue::Int(_) => Type::Int,
                LiteralValue::Null => Type::Null,
                LiteralValue::String(_) => Type::String,
                LiteralValue::UInt(_) => Type::Uint,
            },
            Expr::Ident(name) => match self.lookup(name).or_else(|| type_ident(name)) {
                Some(t) => t,
                None => self.error(
                    e.id,
                    format!("undeclared reference to '{name}' (in container '')"),
                ),
            },
            Expr::Select(s) => {
                // A qualified variable (`authorizer.requestResource`) is resolved before selection.
                if !s.test
                    && let Some(t) = qualified_name(e).and_then(|n| self.lookup(&n))
                {
                    return t;
                }
                let operand = self.check(&s.operand);
                let operand = self.subst.apply(&operand, false);
                let field = self.select(e.id, &operand, &s.field);
                if s.test { Type::Bool } else { field }
            }
            Expr::Call(call) => self.call(e, call),
            Expr::List(l) => {
                let mut element: Option<Type> = None;
                for (i, x) in l.elements.iter().enumerate() {
                    let mut t = self.check(x);
                    if l.optional_indices.contains(&i)
                        && let Type::Optional(inner) = self.subst.apply(&t, false)
                    {
                        t = *inner;
                    }
                    element = Some(self.join(element, t));
                }
                let element = element.unwrap_or_else(|| self.subst.fresh());
                Type::list(element)
            }
            Expr::Map(m) => {
                let (mut key, mut value) = (None, None);
                for entry in &m.entries {
                    if let EntryExpr::MapEntry(me) = &entry.expr {
                        let k = self.check(&me.key);
                        key = Some(self.join(key, k));
                        let v = self.check(&me.value);
                        value = Some(self.join(value, v));
                    }
                }
                let key = key.unwrap_or_else(|| self.subst.fresh());
                let value = value.unwrap_or_else(|| self.subst.fresh());
                Type::Map(Box::new(key), Box::new(value))
            }
            Expr::Struct(s) => {
                for entry in &s.entries {
                    if let EntryExpr::StructField(f) = &entry.expr {
                        self.check(&f.value);
                    }
                }
                self.error(
                    e.id,
                    format!(
                        "undeclared reference to '{}' (in container '')",
                        s.type_name
                    ),
                )
            }
            Expr::Comprehension(c) => {
                let range = self.check(&c.iter_range);
                let range = self.subst.apply(&range, false);
                let (first, second) = match &range {
                    Type::List(el) => match &c.iter_var2 {
                        Some(_) => (Type::Int, (**el).clone()),
                        None => ((**el).clone(), Type::Dyn),
                    },
                    Type::Map(k, v) => ((**k).clone(), (**v).clone()),
                    Type::Dyn | Type::Error | Type::Param(_) => (Type::Dyn, Type::Dyn),
                    other => {
                        let message = format!(
                            "expression of type '{other}' cannot be range of a comprehension (must be list, map, or dynamic)"
                        );
                        self.error(c.iter_range.id, message);
                        (Type::Dyn, Type::Dyn)
                    }
                };
                let accu = self.check(&c.accu_init);
                self.scopes.push((c.accu_var.clone(), accu.clone()));
                self.scopes.push((c.iter_var.clone(), first));
                if let Some(v2) = &c.iter_var2 {
                    self.scopes.push((v2.clone(), second));
                }
                let cond = self.check(&c.loop_cond);
                if !self.subst.assignable(&Type::Bool, &cond) {
                    let found = self.subst.apply(&cond, true);
                    self.error(
                        c.loop_cond.id,
                        format!("expected type 'bool' but found '{found}'"),
                    );
                }
                let step = self.check(&c.loop_step);
                if !self.subst.assignable(&accu, &step) {
                    let (want, found) =
                        (self.subst.apply(&accu, true), self.subst.apply(&step, true));
                    self.error(
                        c.loop_step.id,
                        format!("expected type '{want}' but found '{found}'"),
                    );
                }
                self.scopes.pop();
                if c.iter_var2.is_some() {
                    self.scopes.pop();
                }
                let result = self.check(&c.result);
                self.scopes.pop();
                result
            }
            Expr::Unspecified => Type::Dyn,
        }
    }

    /// The type of `operand.field`.
    fn select(&mut self, id: u64, operand: &Type, field: &str) -> Type {
        match operand {
            Type::Object(d) => match d.field(field) {
                Some(f) => f.cel_type(),
                None => self.error(id, format!("undefined field '{field}'")),
            },
            // The authorizer library's types are declared without being known to the type provider.
            Type::Named(name, true) if name.starts_with("kubernetes.authorization.") => {
                self.error(id, format!("unexpected failed resolution of '{name}'"))
            }
            Type::Named(_, true) => self.error(id, format!("undefined field '{field}'")),
            Type::Map(_, v) => (**v).clone(),
            Type::Dyn | Type::Error | Type::Param(_) => Type::Dyn,
            Type::Optional(inner) => {
                let inner = self.select(id, inner, field);
                Type::Optional(Box::new(inner))
            }
            other => self.error(
                id,
                format!("type '{other}' does not support field selection"),
            ),
        }
    }

    /// `operand.?field`, which the parser writes as the call `_?._(operand, "field")`: the field's type,
    /// optional (cel-go's `checkOptSelect`; an optional operand is unwrapped first).
    fn optional_select(
        &mut self,
        e: &IdedExpr,
        call: &kube_cel::cel::common::ast::CallExpr,
    ) -> Type {
        let field = match (call.target.as_deref(), call.args.as_slice()) {
            (None, [_, f]) => match &f.expr {
                Expr::Literal(LiteralValue::String(s)) => s.to_string(),
                _ => {
                    return self.error(
                        f.id,
                        "unsupported optional field selection: the field is not a name".into(),
                    );
                }
            },
            (target, args) => {
                let member = if target.is_some() {
                    " member call with"
                } else {
                    ""
                };
                let message = format!(
                    "unsupported optional field selection: incorrect signature.{member} argument count: {}",
                    args.len()
                );
                return self.error(e.id, message);
            }
        };
        let operand = self.check(&call.args[0]);
        let operand = match self.subst.apply(&operand, false) {
            Type::Optional(inner) => *inner,
            other => other,
        };
        let selected = self.select(e.id, &operand, &field);
        self.overloads
            .insert(e.id, vec!["select_optional_field".to_string()]);
        Type::Optional(Box::new(selected))
    }

    /// The element type of a list or map literal so far, joined with `t` (`dyn` when they differ; the
    /// homogeneous-literal validator reports the difference).
    fn join(&mut self, previous: Option<Type>, t: Type) -> Type {
        let Some(previous) = previous else { return t };
        if self.subst.assignable(&previous, &t) {
            if matches!(self.subst.apply(&t, false), Type::Dyn) {
                return Type::Dyn;
            }
            return previous;
        }
        Type::Dyn
    }

    fn call(&mut self, e: &IdedExpr, call: &kube_cel::cel::common::ast::CallExpr) -> Type {
        let name = call.func_name.as_str();
        if name == "_?._" {
            return self.optional_select(e, call);
        }
        let macro_like = UNEXPANDED.contains(&name)
            || (call.target.is_some()
                && call.args.len() == 3
                && matches!(name, "all" | "exists" | "existsOne" | "exists_one"));
        if macro_like {
            self.unchecked = true;
            return Type::Dyn;
        }
        let arg_types: Vec<Type> = call.args.iter().map(|a| self.check(a)).collect();
        let Some(target) = call.target.as_deref() else {
            return self.resolve(e.id, name, None, &call.args, arg_types);
        };
        if let Some(prefix) = qualified_name(target) {
            let full = format!("{prefix}.{name}");
            if self.lookup(&prefix).is_none() && overloads(&full).is_some() {
                self.qualified.insert(e.id, full.clone());
                return self.resolve(e.id, &full, None, &call.args, arg_types);
            }
        }
        let t = self.check(target);
        self.resolve(e.id, name, Some(t), &call.args, arg_types)
    }

    fn resolve(
        &mut self,
        id: u64,
        name: &str,
        target: Option<Type>,
        args: &[IdedExpr],
        arg_types: Vec<Type>,
    ) -> Type {
        let Some(candidates) = overloads(name) else {
            return self.error(
                id,
                format!("undeclared reference to '{name}' (in container '')"),
            );
        };
        let member = target.is_some();
        let all: Vec<Type> = target.into_iter().chain(arg_types).collect();
        if name == "_&&_" || name == "_||_" {
            let mut failed = false;
            for (a, t) in args.iter().zip(&all) {
                if !self.subst.assignable(&Type::Bool, t) {
                    let found = self.subst.apply(t, true);
                    self.error(a.id, format!("expected type 'bool' but found '{found}'"));
                    failed = true;
                }
            }
            self.overloads.insert(
                id,
                vec![
                    if name == "_&&_" {
                        "logical_and"
                    } else {
                        "logical_or"
                    }
                    .into(),
                ],
            );
            return if failed { Type::Error } else { Type::Bool };
        }
        let mut result: Option<Type> = None;
        let mut matched = Vec::new();
        for o in candidates.iter().filter(|o| o.member == member) {
            if o.params.len() != all.len() {
                continue;
            }
            let (a, b) = fresh_pair(&mut self.subst);
            let mut trial = self.subst.clone();
            let fits = o
                .params
                .iter()
                .zip(&all)
                .all(|(p, t)| trial.assignable(&instantiate(p, &a, &b), t));
            if !fits {
                continue;
            }
            self.subst = trial;
            matched.push(o.id.clone());
            let r = self.subst.apply(&instantiate(&o.result, &a, &b), false);
            result = Some(match result {
                None => r,
                Some(prev) if prev.is_dyn_or_error() => prev,
                Some(prev) if format!("{prev}") == format!("{r}") => prev,
                Some(_) => Type::Dyn,
            });
        }
        match result {
            Some(r) => {
                self.overloads.insert(id, matched);
                r
            }
            None => {
                let shown: Vec<String> = all
                    .iter()
                    .map(|t| self.subst.apply(t, true).to_string())
                    .collect();
                let signature = if member {
                    format!("{}.({})", shown[0], shown[1..].join(", "))
                } else {
                    format!("({})", shown.join(", "))
                };
                self.error(
                    id,
                    format!("found no matching overload for '{name}' applied to '{signature}'"),
                )
            }
        }
    }
}
