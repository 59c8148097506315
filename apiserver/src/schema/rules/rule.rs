//! One compiled `x-kubernetes-validations` entry of a schema node, with what its compilation reported.

use std::sync::Arc;

use crate::cel::program::Program;

/// The `reason` a rule's failures are reported with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::schema) enum Reason {
    Invalid,
    Forbidden,
    Required,
    Duplicate,
}

/// One compiled `x-kubernetes-validations` entry.
#[derive(Clone)]
pub(in crate::schema) struct Rule {
    /// The expression as written.
    pub(in crate::schema) source: String,
    pub(in crate::schema) message: Option<String>,
    pub(in crate::schema) reason: Option<Reason>,
    /// Relative to the node, e.g. `.spec.mode` or `.items[0]`.
    pub(in crate::schema) field_path: Option<String>,
    pub(in crate::schema) optional_old_self: bool,
    /// Whether the rule reads `oldSelf` (a transition rule).
    pub(in crate::schema) transition: bool,
    pub(in crate::schema) program: Arc<Program>,
    pub(in crate::schema) message_program: Option<Arc<Program>>,
    /// The `messageExpression` as written, when it has one.
    pub(in crate::schema) message_expression: Option<String>,
    /// What kube-apiserver's compilation of the rule reports.
    pub(in crate::schema) errors: RuleErrors,
}

/// The errors of a rule's compilation, reported (after the schema's own errors) by `budget_errors`.
#[derive(Clone, Debug, Default)]
pub(in crate::schema) struct RuleErrors {
    /// The rule's: does not parse, does not type-check, is not a bool (`Invalid value: {...}: ...`).
    pub(in crate::schema) rule: Option<String>,
    /// The messageExpression's, likewise (compiled only when the rule compiled).
    pub(in crate::schema) message_expression: Option<String>,
    /// `optionalOldSelf` is set (to this) though the rule does not use `oldSelf`.
    pub(in crate::schema) optional_old_self: Option<bool>,
}

impl std::fmt::Debug for Rule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rule")
            .field("rule", &self.source)
            .field("message", &self.message)
            .field("reason", &self.reason)
            .field("field_path", &self.field_path)
            .finish_non_exhaustive()
    }
}

impl Rule {
    /// The rule as error messages name it: its message, else its expression (apiextensions'
    /// `ruleErrorString`).
    pub(in crate::schema) fn error_string(&self) -> &str {
        match &self.message {
            Some(m) if !m.trim().is_empty() => m.trim(),
            _ => self.source.trim(),
        }
    }

    /// The detail of a failure without a usable `messageExpression` (`ruleMessageOrDefault`).
    pub(in crate::schema) fn message_or_default(&self) -> String {
        match &self.message {
            Some(m) if !m.trim().is_empty() => m.trim().to_string(),
            _ => format!("failed rule: {}", self.source.trim()),
        }
    }
}
