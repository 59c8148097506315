//! A rule's expressions compiled as kube-apiserver's `compileRule` compiles them: parsed, type-checked
//! against the node's declaration, the rule required to be a `bool`; then (only if the rule compiled)
//! its `messageExpression`, required to be a `string`. Failures are kept as the details kube-apiserver
//! reports (`compilation failed: ERROR: <input>:1:5: ...`), not returned: the server reports them after
//! the schema's own errors, next to the rules' costs.

use std::rc::Rc;

use crate::cel::program::Program;

use super::check::check;
use super::positions;
use super::types::Decl;
use super::types::Type;

/// The compiled expressions of a rule, and the details of their failures.
pub(super) struct Compiled {
    /// The rule's program (`None` when it does not parse).
    pub(super) program: Option<Program>,
    /// The messageExpression's program, when it has one that compiled.
    pub(super) message_program: Option<Program>,
    /// Why the rule does not compile.
    pub(super) rule_error: Option<String>,
    /// Why the messageExpression does not compile.
    pub(super) message_error: Option<String>,
    /// The rule compiled and reads `oldSelf`.
    pub(super) uses_old_self: bool,
}

/// The outcome of one expression: its program, or the detail of its failure.
fn one(
    source: &str,
    decl: Option<&Rc<Decl>>,
    optional_old_self: bool,
    what: &str,
    wanted: &Type,
    not_wanted: &str,
) -> Result<Program, String> {
    let program = Program::compile(source)
        .map_err(|e| format!("{what} failed: {}", go_cel_error(source, &e.to_string())))?;
    if let Some(decl) = decl {
        let found = check(source, program.expression(), decl, optional_old_self);
        if !found.unchecked {
            if !found.errors.is_empty() {
                return Err(format!("{what} failed: {}", found.errors.join("\n")));
            }
            if found.output.to_string() != wanted.to_string() {
                return Err(not_wanted.to_string());
            }
        }
    }
    Ok(program)
}

/// Compiles `rule` and `message_expression`, `self` being of `decl` (`None` when the node has no CEL
/// declaration: the expressions are parsed only).
pub(super) fn compile(
    rule: &str,
    message_expression: Option<&str>,
    decl: Option<&Rc<Decl>>,
    optional_old_self: bool,
) -> Compiled {
    let rule_program = one(
        rule,
        decl,
        optional_old_self,
        "compilation",
        &Type::Bool,
        "cel expression must evaluate to a bool",
    );
    let (program, rule_error) = match rule_program {
        Ok(p) => (Some(p), None),
        Err(e) => (Program::compile(rule).ok(), Some(e)),
    };
    let uses_old_self = rule_error.is_none()
        && program
            .as_ref()
            .is_some_and(|p| p.references().has_variable("oldSelf"));
    let (message_program, message_error) = match message_expression {
        Some(source) if rule_error.is_none() => match one(
            source,
            decl,
            optional_old_self,
            "messageExpression compilation",
            &Type::String,
            "messageExpression must evaluate to a string",
        ) {
            Ok(p) => (Some(p), None),
            Err(e) => (None, Some(e)),
        },
        _ => (None, None),
    };
    Compiled {
        program,
        message_program,
        rule_error,
        message_error,
        uses_old_self,
    }
}

/// Parse errors of `source` as cel-go prints them: each error's location and message, then its source
/// line and caret drawn as cel-go draws them ([`positions::render`]).
pub(super) fn go_cel_error(source: &str, text: &str) -> String {
    text.lines()
        .filter(|l| !l.starts_with('|'))
        .map(|l| {
            let located = l.strip_prefix("ERROR: <input>:").and_then(|rest| {
                let mut parts = rest.splitn(3, ':');
                let line = parts.next()?.parse::<usize>().ok()?;
                let column = parts.next()?.parse::<usize>().ok()?;
                let message = parts.next()?.strip_prefix(' ')?;
                Some(positions::render(source, Some((line, column)), message))
            });
            located.unwrap_or_else(|| l.to_string())
        })
        .collect::<Vec<_>>()
        .join("\n")
}
