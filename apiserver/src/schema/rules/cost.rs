//! cel-go's static cost estimate of a type-checked rule (`checker.Cost`), with the estimates of the lists
//! and sets extensions and of Kubernetes' library (`library.CostEstimator`), and the sizes of values
//! from the schema's declarations (apiextensions' size estimator: a field's most elements, found by its
//! path from `self`).

use std::collections::HashMap;
use std::rc::Rc;

use kube_cel::cel::common::ast::{EntryExpr, Expr, IdedExpr, LiteralValue};

use super::check::Checked;
use super::types::Decl;
use super::types::Type;

pub(super) const STRING_TRAVERSAL: f64 = 0.1;
pub(super) const REGEX_LENGTH: f64 = 0.25;
pub(super) const LIST_CREATE: u64 = 10;
const MAP_CREATE: u64 = 30;
const STRUCT_CREATE: u64 = 40;
pub(super) const MAX_FORMAT_SIZE: u64 = 64;
pub(super) const MAX_NAME_FORMAT_REGEX_SIZE: f64 = 128.0;

/// A range of sizes or costs (cel-go's `SizeEstimate` and `CostEstimate`), saturating at `u64::MAX`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Est {
    /// The smallest.
    pub(super) min: u64,
    /// The largest.
    pub(super) max: u64,
}

pub(super) const UNKNOWN: Est = Est {
    min: 0,
    max: u64::MAX,
};

pub(super) fn fixed(v: u64) -> Est {
    Est { min: v, max: v }
}

fn by_factor(x: u64, y: f64) -> u64 {
    let xf = x as f64;
    if xf > 0.0 && y > 0.0 && xf > u64::MAX as f64 / y {
        return u64::MAX;
    }
    let ceil = (xf * y).ceil();
    if ceil >= 18_446_744_073_709_551_616.0 {
        return u64::MAX;
    }
    ceil as u64
}

impl Est {
    pub(super) fn add(self, o: Est) -> Est {
        Est {
            min: self.min.saturating_add(o.min),
            max: self.max.saturating_add(o.max),
        }
    }

    pub(super) fn mul(self, o: Est) -> Est {
        Est {
            min: self.min.saturating_mul(o.min),
            max: self.max.saturating_mul(o.max),
        }
    }

    pub(super) fn factor(self, y: f64) -> Est {
        Est {
            min: by_factor(self.min, y),
            max: by_factor(self.max, y),
        }
    }

    fn union(self, o: Est) -> Est {
        Est {
            min: self.min.min(o.min),
            max: self.max.max(o.max),
        }
    }
}

/// Sizes of a list's or map's entries.
#[derive(Clone, Copy)]
struct Entry {
    list: bool,
    key: Est,
    val: Est,
}

fn union_entries(a: Option<Entry>, b: Option<Entry>) -> Option<Entry> {
    let (a, b) = (a?, b?);
    Some(Entry {
        list: a.list,
        key: a.key.union(b.key),
        val: a.val.union(b.val),
    })
}

struct Local {
    path: Vec<String>,
    size: Option<Est>,
    entry: Option<Entry>,
}

/// What an estimate knows of an argument or receiver (cel-go's `AstNode`).
pub(super) struct Node<'e> {
    /// The path from `self` (`@items`, `@values`, `@keys` for elements), when there is one.
    pub(super) path: Option<Vec<String>>,
    /// The checked type.
    pub(super) ty: Type,
    /// The expression.
    pub(super) expr: Option<&'e IdedExpr>,
    /// The size computed for it, if any.
    pub(super) computed: Option<Est>,
}

/// The estimated cost range of `expr`, type-checked as `checked`, `self` being of `root`.
pub(super) fn estimate(expr: &IdedExpr, checked: &Checked, root: &Rc<Decl>) -> Est {
    let expr = checked.expanded.as_ref().unwrap_or(expr);
    let mut c = Coster {
        checked,
        root,
        paths: HashMap::new(),
        locals: HashMap::new(),
        sizes: HashMap::new(),
        entries: HashMap::new(),
    };
    c.cost(expr)
}

/// The state of one estimate (cel-go's `coster`).
pub(super) struct Coster<'c> {
    checked: &'c Checked,
    root: &'c Rc<Decl>,
    paths: HashMap<u64, Vec<String>>,
    locals: HashMap<String, Vec<Local>>,
    sizes: HashMap<u64, Est>,
    entries: HashMap<u64, Entry>,
}

impl<'c> Coster<'c> {
    fn ty(&self, e: &IdedExpr) -> Type {
        self.checked.types.get(&e.id).cloned().unwrap_or(Type::Dyn)
    }

    fn local(&self, name: &str) -> Option<&Local> {
        self.locals.get(name).and_then(|s| s.last())
    }

    fn path(&self, e: &IdedExpr) -> Vec<String> {
        if let Expr::Ident(n) = &e.expr
            && let Some(l) = self.local(n)
        {
            return l.path.clone();
        }
        self.paths.get(&e.id).cloned().unwrap_or_default()
    }

    /// The schema's size of the value at `path` (apiextensions' `sizeEstimator`).
    pub(super) fn schema_size(&self, path: &[String]) -> Option<Est> {
        if path.is_empty() {
            return None;
        }
        let mut node: &Rc<Decl> = self.root;
        let mut keys = false;
        for step in &path[1..] {
            if keys {
                return None;
            }
            match step.as_str() {
                "@items" | "@values" => node = node.element()?,
                // Map keys are strings of no declared size.
                "@keys" if node.has_keys() => keys = true,
                "@keys" => return None,
                field => node = node.field(field)?,
            }
        }
        Some(Est {
            min: 0,
            max: if keys { 0 } else { node.max_elements },
        })
    }

    fn size(&mut self, e: &IdedExpr) -> Option<Est> {
        if let Some(s) = self.sizes.get(&e.id) {
            return Some(*s);
        }
        let literal = match &e.expr {
            Expr::Literal(LiteralValue::String(s)) => Some(s.chars().count() as u64),
            Expr::Literal(LiteralValue::Bytes(b)) => Some(b.len() as u64),
            Expr::Literal(_) => Some(1),
            Expr::List(l) => Some(l.elements.len() as u64),
            Expr::Map(m) => Some(m.entries.len() as u64),
            _ => None,
        };
        if let Some(v) = literal {
            return Some(fixed(v));
        }
        if let Some(s) = self.schema_size(&self.path(e)) {
            self.sizes.insert(e.id, s);
            return Some(s);
        }
        if self.ty(e).is_scalar() {
            return Some(fixed(1));
        }
        if let Expr::Ident(n) = &e.expr {
            return self.local(n).and_then(|l| l.size);
        }
        None
    }

    fn size_or_unknown(&mut self, e: &IdedExpr) -> Est {
        self.size(e).unwrap_or(UNKNOWN)
    }

    fn entry(&self, e: &IdedExpr) -> Option<Entry> {
        if let Some(s) = self.entries.get(&e.id) {
            return Some(*s);
        }
        if let Expr::Ident(n) = &e.expr {
            return self.local(n).and_then(|l| l.entry);
        }
        None
    }

    fn node<'e>(&mut self, e: &'e IdedExpr) -> Node<'e> {
        let path = self.path(e);
        let path = match path.first().map(String::as_str) {
            Some("@result" | "__result__") => None,
            _ if path.is_empty() => None,
            _ => Some(path),
        };
        Node {
            path,
            ty: self.ty(e),
            expr: Some(e),
            computed: self.size(e),
        }
    }

    pub(super) fn node_size(&self, n: &Node<'_>) -> Est {
        n.computed
            .or_else(|| n.path.as_deref().and_then(|p| self.schema_size(p)))
            .unwrap_or(UNKNOWN)
    }

    fn cost(&mut self, e: &IdedExpr) -> Est {
        match &e.expr {
            Expr::Literal(_) => fixed(0),
            Expr::Ident(name) => {
                let path = match self.local(name) {
                    Some(l) => l.path.clone(),
                    None => vec![name.clone()],
                };
                self.paths.insert(e.id, path);
                fixed(1)
            }
            Expr::Select(s) => {
                // has() costs nothing itself (PresenceTestHasCost(false)).
                if s.test {
                    return self.cost(&s.operand);
                }
                let mut sum = self.cost(&s.operand);
                if self.ty(&s.operand).selection_costs() {
                    sum = sum.add(fixed(1));
                }
                let mut path = self.path(&s.operand);
                path.push(s.field.clone());
                self.paths.insert(e.id, path);
                sum
            }
            Expr::Call(call) => self.call(e, call),
            Expr::List(l) => {
                let mut sum = fixed(0);
                let mut item = Est {
                    min: if l.elements.is_empty() { 0 } else { u64::MAX },
                    max: 0,
                };
                for x in &l.elements {
                    sum = sum.add(self.cost(x));
                    item = item.union(self.size_or_unknown(x));
                }
                self.entries.insert(
                    e.id,
                    Entry {
                        list: true,
                        key: fixed(1),
                        val: item,
                    },
                );
                sum.add(fixed(LIST_CREATE))
            }
            Expr::Map(m) => {
                let mut sum = fixed(0);
                let start = if m.entries.is_empty() { 0 } else { u64::MAX };
                let mut key = Est { min: start, max: 0 };
                let mut val = key;
                for entry in &m.entries {
                    if let EntryExpr::MapEntry(me) = &entry.expr {
                        sum = sum.add(self.cost(&me.key)).add(self.cost(&me.value));
                        key = key.union(self.size_or_unknown(&me.key));
                        val = val.union(self.size_or_unknown(&me.value));
                    }
                }
                self.entries.insert(
                    e.id,
                    Entry {
                        list: false,
                        key,
                        val,
                    },
                );
                sum.add(fixed(MAP_CREATE))
            }
            Expr::Struct(s) => {
                let mut sum = fixed(0);
                for entry in &s.entries {
                    if let EntryExpr::StructField(f) = &entry.expr {
                        sum = sum.add(self.cost(&f.value));
                    }
                }
                sum.add(fixed(STRUCT_CREATE))
            }
            Expr::Comprehension(c) => {
                let mut sum = self.cost(&c.iter_range).add(self.cost(&c.accu_init));
                let accu = Local {
                    path: self.path(&c.accu_init),
                    size: self.size(&c.accu_init),
                    entry: self.entry(&c.accu_init),
                };
                self.locals
                    .entry(c.accu_var.clone())
                    .or_default()
                    .push(accu);
                let entry = self.entry(&c.iter_range);
                let list = match entry {
                    Some(en) => en.list,
                    None => matches!(self.ty(&c.iter_range), Type::List(_)),
                };
                let mut range_path = self.path(&c.iter_range);
                let pushed: Vec<String> = match &c.iter_var2 {
                    Some(v2) => {
                        let mut kp = range_path.clone();
                        kp.push(if list { "@indices" } else { "@keys" }.into());
                        let mut vp = range_path.clone();
                        vp.push(if list { "@items" } else { "@values" }.into());
                        let key = Local {
                            path: kp,
                            size: entry.map(|en| en.key),
                            entry: None,
                        };
                        let val = Local {
                            path: vp,
                            size: entry.map(|en| en.val),
                            entry: None,
                        };
                        self.locals.entry(c.iter_var.clone()).or_default().push(key);
                        self.locals.entry(v2.clone()).or_default().push(val);
                        vec![c.iter_var.clone(), v2.clone()]
                    }
                    None => {
                        range_path.push(if list { "@items" } else { "@keys" }.into());
                        let size = entry.map(|en| if list { en.val } else { en.key });
                        let v = Local {
                            path: range_path,
                            size,
                            entry: None,
                        };
                        self.locals.entry(c.iter_var.clone()).or_default().push(v);
                        vec![c.iter_var.clone()]
                    }
                };
                let loop_cost = self.cost(&c.loop_cond);
                let step_cost = self.cost(&c.loop_step);
                for v in &pushed {
                    if let Some(s) = self.locals.get_mut(v) {
                        s.pop();
                    }
                }
                sum = sum.add(self.cost(&c.result));
                if let Some(s) = self.locals.get_mut(&c.accu_var) {
                    s.pop();
                }
                let range = self.size_or_unknown(&c.iter_range);
                sum = sum.add(range.mul(step_cost.add(loop_cost)));
                match &c.accu_init.expr {
                    Expr::Literal(_) => {
                        if let Some(s) = self.size(&c.accu_init) {
                            self.sizes.insert(e.id, s);
                        }
                    }
                    Expr::List(_) | Expr::Map(_) => {
                        self.sizes.insert(e.id, range);
                        if let Some(en) = self.entry(&c.loop_step) {
                            self.entries.insert(e.id, en);
                        }
                    }
                    _ => {}
                }
                sum
            }
            Expr::Unspecified => fixed(0),
        }
    }

    fn call(&mut self, e: &IdedExpr, call: &kube_cel::cel::common::ast::CallExpr) -> Est {
        if call.func_name == "dyn"
            && call.target.is_none()
            && let Some(arg) = call.args.first()
        {
            let cost = self.cost(arg);
            if let Some(s) = self.size(arg) {
                self.sizes.insert(e.id, s);
            }
            if let Some(en) = self.entry(arg) {
                self.entries.insert(e.id, en);
            }
            return fixed(1).add(cost);
        }
        let arg_costs: Vec<Est> = call.args.iter().map(|a| self.cost(a)).collect();
        let args: Vec<Node<'_>> = call.args.iter().map(|a| self.node(a)).collect();
        let Some(ids) = self.checked.overloads.get(&e.id).cloned() else {
            return fixed(0);
        };
        let qualified = self.checked.qualified.get(&e.id);
        let function = qualified.cloned().unwrap_or_else(|| call.func_name.clone());
        let mut sum = fixed(0);
        let mut target = None;
        if qualified.is_none()
            && let Some(t) = call.target.as_deref()
        {
            sum = sum.add(self.cost(t));
            target = Some(self.node(t));
        }
        let mut cost = Est {
            min: u64::MAX,
            max: 0,
        };
        let mut result: Option<Est> = None;
        for id in &ids {
            let (c, r) = self.function(e, &function, id, target.as_ref(), &args, &arg_costs);
            cost = cost.union(c);
            if let Some(r) = r {
                result = Some(match result {
                    None => r,
                    Some(prev) => prev.union(r),
                });
            }
            if (id == "index_list" || id == "index_map")
                && let Some(first) = call.args.first()
            {
                result = self.entry(first).map(|en| en.val);
                let mut path = self.path(first);
                path.push(
                    if id == "index_list" {
                        "@items"
                    } else {
                        "@values"
                    }
                    .into(),
                );
                self.paths.insert(e.id, path);
            }
            if result.is_none() {
                result = self.size(e);
            }
        }
        if let Some(r) = result {
            self.sizes.insert(e.id, r);
        }
        sum.add(cost)
    }

    /// The cost (with the arguments') and result size of one overload of a call.
    fn function(
        &mut self,
        e: &IdedExpr,
        function: &str,
        overload: &str,
        target: Option<&Node<'_>>,
        args: &[Node<'_>],
        arg_costs: &[Est],
    ) -> (Est, Option<Est>) {
        let arg_sum = arg_costs.iter().fold(fixed(0), |s, c| s.add(*c));
        if let Some((c, r)) = self.extension(overload, target, args) {
            return (c.add(arg_sum), r);
        }
        if let Some((c, r)) = self.kubernetes(function, overload, target, args) {
            return (c.add(arg_sum), r);
        }
        match overload {
            "string_format" if target.is_some() => {
                if let Some(t) = target {
                    return (
                        self.node_size(t).factor(STRING_TRAVERSAL).add(arg_sum),
                        None,
                    );
                }
            }
            "string_to_bytes" if args.len() == 1 => {
                let s = self.node_size(&args[0]);
                let r = Est {
                    min: s.min,
                    max: s.max.saturating_mul(4),
                };
                return (s.factor(STRING_TRAVERSAL).add(arg_sum), Some(r));
            }
            "bytes_to_string" if args.len() == 1 => {
                let s = self.node_size(&args[0]);
                let r = Est {
                    min: s.min / 4,
                    max: s.max,
                };
                return (s.factor(STRING_TRAVERSAL).add(arg_sum), Some(r));
            }
            "strings_quote" if args.len() == 1 => {
                let s = self.node_size(&args[0]);
                let r = Est {
                    min: s.min.saturating_add(2),
                    max: s.max.saturating_mul(2).saturating_add(2),
                };
                return (s.factor(STRING_TRAVERSAL).add(arg_sum), Some(r));
            }
            "starts_with_string" | "ends_with_string" if args.len() == 1 => {
                return (
                    self.node_size(&args[0])
                        .factor(STRING_TRAVERSAL)
                        .add(arg_sum),
                    None,
                );
            }
            "in_list" if args.len() == 2 => {
                return (self.node_size(&args[1]).factor(1.0).add(arg_sum), None);
            }
            "matches_string" if args.len() == 1 => {
                if let Some(t) = target {
                    let s = self.node_size(t).add(fixed(1)).factor(STRING_TRAVERSAL);
                    let re = self.node_size(&args[0]).factor(REGEX_LENGTH);
                    return (s.mul(re).add(arg_sum), None);
                }
            }
            "contains_string" if args.len() == 1 => {
                if let Some(t) = target {
                    let s = self.node_size(t).factor(STRING_TRAVERSAL);
                    let sub = self.node_size(&args[0]).factor(STRING_TRAVERSAL);
                    return (s.mul(sub).add(arg_sum), None);
                }
            }
            "logical_or" | "logical_and" if arg_costs.len() == 2 => {
                let (l, r) = (arg_costs[0], arg_costs[1]);
                return (
                    Est {
                        min: l.min,
                        max: l.add(r).max,
                    },
                    None,
                );
            }
            "conditional" if args.len() == 3 => {
                let s = self.node_size(&args[1]).union(self.node_size(&args[2]));
                let entry = match (args[1].expr, args[2].expr) {
                    (Some(a), Some(b)) => union_entries(self.entry(a), self.entry(b)),
                    _ => None,
                };
                if let Some(en) = entry {
                    self.entries.insert(e.id, en);
                }
                let c = arg_costs[0].add(arg_costs[1].union(arg_costs[2]));
                return (c, Some(s));
            }
            "add_string" | "add_bytes" | "add_list" if args.len() == 2 => {
                let r = self.node_size(&args[0]).add(self.node_size(&args[1]));
                let entry = match (args[0].expr, args[1].expr) {
                    (Some(a), Some(b)) => union_entries(self.entry(a), self.entry(b)),
                    _ => None,
                };
                if let Some(en) = entry {
                    self.entries.insert(e.id, en);
                }
                if overload == "add_list" {
                    return (fixed(1).add(arg_sum), Some(r));
                }
                return (r.factor(STRING_TRAVERSAL).add(arg_sum), Some(r));
            }
            "less_string"
            | "greater_string"
            | "less_equals_string"
            | "greater_equals_string"
            | "less_bytes"
            | "greater_bytes"
            | "less_equals_bytes"
            | "greater_equals_bytes"
            | "equals"
            | "not_equals"
                if args.len() == 2 =>
            {
                let (l, r) = (self.node_size(&args[0]), self.node_size(&args[1]));
                let smallest = l.max.min(r.max);
                let min = u64::from(smallest > 0);
                let c = Est { min, max: smallest }.factor(STRING_TRAVERSAL);
                return (c.add(arg_sum), None);
            }
            _ => {}
        }
        (fixed(1).add(arg_sum), None)
    }
}
