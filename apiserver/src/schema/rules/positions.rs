//! Where in a rule's source cel-go reports an error about an expression.
//!
//! The `cel` crate's parser keeps no positions in the expressions it returns, so they are recovered:
//! the expressions are visited in source order, each named by the token cel-go places it at (the `.`
//! of a field selection, the `(` of a call, the operator of an operation, the identifier itself) and
//! its rank among the expressions with that token; the source is then lexed and the token of that rank
//! found.

use std::collections::HashMap;

use kube_cel::cel::common::ast::{EntryExpr, Expr, IdedExpr, LiteralValue};

/// The token an expression sits at.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub(super) enum Key {
    /// An identifier that is not called.
    Ident(String),
    /// The `.` of a field selection.
    Dot(String),
    /// The `.` of an optional field selection (`.?name`).
    OptionalDot(String),
    /// The `(` of a call on a receiver (`x.name(`), also of a macro.
    Member(String),
    /// The `(` of a global call (`name(`), also of `has(`.
    Global(String),
    /// An operator, `[` (index and list) or `{` (map).
    Op(&'static str),
}

/// For every expression id, its token and rank.
pub(super) fn keys(e: &IdedExpr) -> HashMap<u64, (Key, usize)> {
    let mut v = Visitor::default();
    v.visit(e);
    v.found
}

#[derive(Default)]
struct Visitor {
    counts: HashMap<Key, usize>,
    found: HashMap<u64, (Key, usize)>,
}

fn operator(f: &str) -> Option<&'static str> {
    Some(match f {
        "_==_" => "==",
        "_!=_" => "!=",
        "_<_" => "<",
        "_<=_" => "<=",
        "_>_" => ">",
        "_>=_" => ">=",
        "_&&_" => "&&",
        "_||_" => "||",
        "_+_" => "+",
        "_-_" | "-_" => "-",
        "_*_" => "*",
        "_/_" => "/",
        "_%_" => "%",
        "!_" => "!",
        "_?_:_" => "?",
        "_[_]" | "_[?_]" => "[",
        "@in" => "in",
        _ => return None,
    })
}

impl Visitor {
    fn mark(&mut self, id: u64, key: Key) {
        let n = self.counts.entry(key.clone()).or_default();
        self.found.insert(id, (key, *n));
        *n += 1;
    }

    fn skip(&mut self, key: Key) {
        *self.counts.entry(key).or_default() += 1;
    }

    /// Gives every expression under `e` not yet named the key of `id` (macro expansions).
    fn synthesized(&mut self, e: &IdedExpr, id: u64) {
        if !self.found.contains_key(&e.id)
            && let Some(k) = self.found.get(&id).cloned()
        {
            self.found.insert(e.id, k);
        }
        for child in children(e) {
            self.synthesized(child, id);
        }
    }

    fn visit(&mut self, e: &IdedExpr) {
        match &e.expr {
            Expr::Ident(name) => self.mark(e.id, Key::Ident(name.clone())),
            Expr::Literal(LiteralValue::String(_) | LiteralValue::Bytes(_)) => {
                self.mark(e.id, Key::Op("\""));
            }
            Expr::Literal(LiteralValue::Boolean(b)) => {
                self.mark(e.id, Key::Op(if **b { "true" } else { "false" }));
            }
            Expr::Literal(LiteralValue::Null) => self.mark(e.id, Key::Op("null")),
            Expr::Literal(_) => self.mark(e.id, Key::Op("0")),
            Expr::Unspecified => {}
            Expr::Select(s) if s.test => {
                self.mark(e.id, Key::Global("has".into()));
                self.visit(&s.operand);
                self.skip(Key::Dot(s.field.clone()));
            }
            Expr::Select(s) => {
                self.visit(&s.operand);
                self.mark(e.id, Key::Dot(s.field.clone()));
            }
            // `operand.?field`: the parser's `_?._(operand, "field")`, whose literal is not in the source.
            Expr::Call(c) if c.func_name == "_?._" && c.target.is_none() && c.args.len() == 2 => {
                self.visit(&c.args[0]);
                if let Expr::Literal(LiteralValue::String(field)) = &c.args[1].expr {
                    self.mark(e.id, Key::OptionalDot(field.to_string()));
                }
            }
            Expr::Call(c) => match (&c.target, operator(&c.func_name)) {
                (None, Some(op)) if c.args.len() >= 2 => {
                    self.visit(&c.args[0]);
                    self.mark(e.id, Key::Op(op));
                    for a in &c.args[1..] {
                        self.visit(a);
                    }
                }
                (None, Some(op)) => {
                    self.mark(e.id, Key::Op(op));
                    for a in &c.args {
                        self.visit(a);
                    }
                }
                (None, None) => {
                    self.mark(e.id, Key::Global(c.func_name.clone()));
                    for a in &c.args {
                        self.visit(a);
                    }
                }
                (Some(t), _) => {
                    self.visit(t);
                    self.mark(e.id, Key::Member(c.func_name.clone()));
                    for a in &c.args {
                        self.visit(a);
                    }
                }
            },
            Expr::List(l) => {
                self.mark(e.id, Key::Op("["));
                for x in &l.elements {
                    self.visit(x);
                }
            }
            Expr::Map(m) => {
                self.mark(e.id, Key::Op("{"));
                for entry in &m.entries {
                    if let EntryExpr::MapEntry(me) = &entry.expr {
                        self.visit(&me.key);
                        self.visit(&me.value);
                    }
                }
            }
            Expr::Struct(s) => {
                for entry in &s.entries {
                    if let EntryExpr::StructField(f) = &entry.expr {
                        self.visit(&f.value);
                    }
                }
            }
            Expr::Comprehension(c) => {
                self.visit(&c.iter_range);
                let (name, user) = macro_parts(c);
                self.mark(e.id, Key::Member(name.into()));
                // The variable's declaration is an identifier in the source.
                self.skip(Key::Ident(c.iter_var.clone()));
                if let Some(v2) = &c.iter_var2 {
                    self.skip(Key::Ident(v2.clone()));
                }
                for u in &user {
                    self.visit(u);
                }
                for part in [&c.accu_init, &c.loop_cond, &c.loop_step, &c.result] {
                    self.synthesized(part, e.id);
                }
            }
        }
    }
}

/// The macro a comprehension was expanded from, and its arguments as written, in source order.
fn macro_parts(
    c: &kube_cel::cel::common::ast::ComprehensionExpr,
) -> (&'static str, Vec<&IdedExpr>) {
    let step = match &c.loop_step.expr {
        Expr::Call(call) => Some(call),
        _ => None,
    };
    let arg = |i: usize| step.and_then(|s| s.args.get(i));
    match (&c.accu_init.expr, step.map(|s| s.func_name.as_str())) {
        (Expr::Literal(LiteralValue::Boolean(b)), _) if **b => {
            ("all", arg(1).into_iter().collect())
        }
        (Expr::Literal(LiteralValue::Boolean(_)), _) => ("exists", arg(1).into_iter().collect()),
        (Expr::Literal(LiteralValue::Int(_)), _) => ("exists_one", arg(0).into_iter().collect()),
        (Expr::List(_), _) if c.iter_var2.is_some() => {
            // transformList: the filter (if any), then the transform.
            match step.map(|s| s.func_name.as_str()) {
                Some("_?_:_") => {
                    let transform =
                        step.and_then(|s| s.args.get(1))
                            .and_then(|add| match &add.expr {
                                Expr::Call(a) => listed(a.args.get(1)),
                                _ => None,
                            });
                    (
                        "transformList",
                        arg(0).into_iter().chain(transform).collect(),
                    )
                }
                _ => ("transformList", listed(arg(1)).into_iter().collect()),
            }
        }
        (Expr::Map(_), _) => {
            let (filter, insert) = match step.map(|s| s.func_name.as_str()) {
                Some("_?_:_") => (arg(0), step.and_then(|s| s.args.get(1))),
                _ => (None, Some(&c.loop_step)),
            };
            let insert = insert.and_then(|i| match &i.expr {
                Expr::Call(call) => Some(call),
                _ => None,
            });
            let entry = insert.is_some_and(|i| i.args.len() == 2);
            let transform = insert.and_then(|i| i.args.last());
            let name = if entry {
                "transformMapEntry"
            } else {
                "transformMap"
            };
            (name, filter.into_iter().chain(transform).collect())
        }
        (_, Some("_+_")) => ("map", listed(arg(1)).into_iter().collect()),
        (_, Some("_?_:_")) => {
            let element = step
                .and_then(|s| s.args.get(1))
                .and_then(|add| match &add.expr {
                    Expr::Call(a) => listed(a.args.get(1)),
                    _ => None,
                });
            match element {
                Some(x) if matches!(&x.expr, Expr::Ident(n) if *n == c.iter_var) => {
                    ("filter", arg(0).into_iter().collect())
                }
                Some(x) => ("map", arg(0).into_iter().chain([x]).collect()),
                None => ("filter", arg(0).into_iter().collect()),
            }
        }
        _ => ("all", Vec::new()),
    }
}

fn listed(e: Option<&IdedExpr>) -> Option<&IdedExpr> {
    match &e?.expr {
        Expr::List(l) => l.elements.first(),
        _ => None,
    }
}

/// The direct subexpressions of `e`.
pub(super) fn children(e: &IdedExpr) -> Vec<&IdedExpr> {
    match &e.expr {
        Expr::Select(s) => vec![&s.operand],
        Expr::Call(c) => c.target.as_deref().into_iter().chain(&c.args).collect(),
        Expr::List(l) => l.elements.iter().collect(),
        Expr::Map(m) => m
            .entries
            .iter()
            .flat_map(|en| match &en.expr {
                EntryExpr::MapEntry(me) => vec![&me.key, &me.value],
                EntryExpr::StructField(f) => vec![&f.value],
            })
            .collect(),
        Expr::Struct(s) => s
            .entries
            .iter()
            .flat_map(|en| match &en.expr {
                EntryExpr::MapEntry(me) => vec![&me.key, &me.value],
                EntryExpr::StructField(f) => vec![&f.value],
            })
            .collect(),
        Expr::Comprehension(c) => vec![
            &c.iter_range,
            &c.accu_init,
            &c.loop_cond,
            &c.loop_step,
            &c.result,
        ],
        _ => Vec::new(),
    }
}

/// One token of the source: its text and the index of its first character.
struct Token {
    text: String,
    at: usize,
    ident: bool,
}

fn lex(source: &str) -> Vec<Token> {
    let chars: Vec<char> = source.chars().collect();
    let mut out: Vec<Token> = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '/' && chars.get(i + 1) == Some(&'/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '"'
            || c == '\''
            || (matches!(c, 'r' | 'R' | 'b' | 'B') && string_start(&chars, i + 1))
        {
            let start = i;
            let mut raw = false;
            while matches!(chars[i], 'r' | 'R' | 'b' | 'B') {
                raw |= matches!(chars[i], 'r' | 'R');
                i += 1;
            }
            let q = chars[i];
            let triple = chars.get(i + 1) == Some(&q) && chars.get(i + 2) == Some(&q);
            i += if triple { 3 } else { 1 };
            while i < chars.len() {
                if !raw && chars[i] == '\\' {
                    i += 2;
                    continue;
                }
                if chars[i] == q
                    && (!triple || (chars.get(i + 1) == Some(&q) && chars.get(i + 2) == Some(&q)))
                {
                    i += if triple { 3 } else { 1 };
                    break;
                }
                i += 1;
            }
            out.push(Token {
                text: "\"".into(),
                at: start,
                ident: false,
            });
        } else if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            let text: String = chars[start..i].iter().collect();
            let ident = !matches!(text.as_str(), "in" | "true" | "false" | "null");
            out.push(Token {
                text,
                at: start,
                ident,
            });
        } else if c.is_ascii_digit()
            || (c == '.' && chars.get(i + 1).is_some_and(char::is_ascii_digit))
        {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '.') {
                i += 1;
            }
            // A `-` in front of a number where an operand is expected belongs to the literal.
            let folded = out.last().is_some_and(|t| {
                t.text == "-"
                    && !out.len().checked_sub(2).map(|p| &out[p]).is_some_and(|p| {
                        p.ident
                            || p.text == "\""
                            || p.text == ")"
                            || p.text == "]"
                            || p.text == "}"
                            || p.text.starts_with(|c: char| c.is_ascii_digit())
                    })
            });
            if folded {
                out.pop();
            }
            out.push(Token {
                text: "0".into(),
                at: start,
                ident: false,
            });
        } else {
            let two: String = chars[i..(i + 2).min(chars.len())].iter().collect();
            let len = if ["==", "!=", "<=", ">=", "&&", "||"].contains(&two.as_str()) {
                2
            } else {
                1
            };
            out.push(Token {
                text: chars[i..i + len].iter().collect(),
                at: i,
                ident: false,
            });
            i += len;
        }
    }
    out
}

fn string_start(chars: &[char], mut i: usize) -> bool {
    while chars
        .get(i)
        .is_some_and(|c| matches!(c, 'r' | 'R' | 'b' | 'B'))
    {
        i += 1;
    }
    chars.get(i).is_some_and(|c| *c == '"' || *c == '\'')
}

/// The line and column (1-based, in characters) of the `nth` expression with token `key`.
pub(super) fn locate(source: &str, key: &Key, nth: usize) -> Option<(usize, usize)> {
    let tokens = lex(source);
    let is = |i: usize, text: &str| tokens.get(i).is_some_and(|t| t.text == text);
    let mut matches = (0..tokens.len()).filter_map(|i| {
        let t = &tokens[i];
        let after_dot = i > 0 && is(i - 1, ".");
        match key {
            Key::Ident(name) => {
                (t.ident && t.text == *name && !after_dot && !is(i + 1, "(")).then_some(t.at)
            }
            Key::Global(name) => (t.ident && t.text == *name && !after_dot && is(i + 1, "("))
                .then(|| tokens[i + 1].at),
            Key::Member(name) => {
                let named =
                    t.ident && (t.text == *name || (name == "exists_one" && t.text == "existsOne"));
                (named && after_dot && is(i + 1, "(")).then(|| tokens[i + 1].at)
            }
            Key::Dot(name) => (t.text == "."
                && tokens.get(i + 1).is_some_and(|n| n.text == *name)
                && !is(i + 2, "("))
            .then_some(t.at),
            Key::OptionalDot(name) => (t.text == "."
                && is(i + 1, "?")
                && tokens.get(i + 2).is_some_and(|n| n.text == *name))
            .then_some(t.at),
            Key::Op(op) => (t.text == *op).then_some(t.at),
        }
    });
    let at = matches.nth(nth)?;
    let mut line = 1;
    let mut column = 1;
    for c in source.chars().take(at) {
        if c == '\n' {
            line += 1;
            column = 1;
        } else {
            column += 1;
        }
    }
    Some((line, column))
}

/// An error as cel-go prints it: the location, the message, the source line (tabs as spaces, omitted
/// beyond 16384 characters) and a caret, with full-width dots and caret for multi-byte characters.
pub(super) fn render(source: &str, at: Option<(usize, usize)>, message: &str) -> String {
    let (line, column) = at.unwrap_or((1, 1));
    let mut out = format!("ERROR: <input>:{line}:{column}: {message}");
    let text = source
        .split('\n')
        .nth(line - 1)
        .unwrap_or("")
        .replace('\t', " ");
    if text.chars().count() <= 16384 {
        let mut chars = text.chars();
        let mut caret = String::new();
        for c in chars.by_ref().take(column.saturating_sub(1)) {
            caret.push(if c.len_utf8() > 1 { '\u{ff0e}' } else { '.' });
        }
        let wide = chars.next().is_some_and(|c| c.len_utf8() > 1);
        caret.push(if wide { '\u{ff3e}' } else { '^' });
        out.push_str(&format!("\n | {text}\n | {caret}"));
    }
    out
}
