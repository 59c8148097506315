//! Errors: why a schema does not compile, and the field errors of an object that fails validation.

use std::collections::HashSet;
use std::fmt;

use serde_json::Value;

use super::go_format::{go_bad_value, go_quote};

/// Why a schema could not be compiled (the server would reject such a CRD).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SchemaError {
    /// A `pattern` is not a valid regular expression.
    #[error(
        "{path}.pattern: Invalid value: {}: must be a valid regular expression, but isn't: {message}",
        go_quote(.pattern)
    )]
    InvalidPattern {
        /// Location of the schema node, e.g. `openAPIV3Schema.properties[spec]`.
        path: String,
        /// The pattern as written in the schema.
        pattern: String,
        /// The regular expression compiler's complaint, e.g.
        /// ``error parsing regexp: unclosed character class: `[` ``.
        message: String,
    },
    /// A CEL rule (or its `messageExpression`) that does not compile; reported by the server as a cause
    /// of its own on `spec.validation.<path>` (or `spec.versions[i].schema.<path>`).
    #[error("{path}: {message}")]
    Rule {
        /// Location of the rule's field, e.g.
        /// `openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule`.
        path: String,
        /// The cause's reason, e.g. `FieldValueInvalid`.
        reason: &'static str,
        /// The cause's message, e.g. `Invalid value: {"Rule":...}: compilation failed: ERROR: ...`.
        message: String,
    },
    /// Several CEL rule errors at once (rules over the cost budget), each a [`SchemaError::Rule`], in the
    /// server's order.
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    Rules(Vec<SchemaError>),
    /// Any other malformed or unsupported part of the schema.
    #[error("{path}: {message}")]
    Invalid {
        /// Location of the offending keyword, e.g. `openAPIV3Schema.properties[spec].type`.
        path: String,
        /// What is wrong with it, in the server's words where it has some, e.g.
        /// `Forbidden: $ref is not supported`.
        message: String,
    },
}

/// Server-side apply semantics of a list, from `x-kubernetes-list-type` and
/// `x-kubernetes-list-map-keys`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListType {
    /// Replaced as a whole (`atomic`, and every list without a list type).
    Atomic,
    /// A set of scalars (`set`).
    Set,
    /// An associative list keyed by these fields (`map`).
    Map(Vec<String>),
}

/// The kind of a field error, as apimachinery's `field.ErrorType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FieldErrorKind {
    /// `FieldValueRequired`: a required value is missing.
    Required,
    /// `FieldValueInvalid`: the value is malformed or out of bounds.
    Invalid,
    /// `FieldValueNotSupported`: the value is not one of the enumerated values.
    NotSupported,
    /// `FieldValueTooLong`: a string is longer than `maxLength`.
    TooLong,
    /// `FieldValueTooMany`: too many items or properties.
    TooMany,
    /// `FieldValueTypeInvalid`: the value has the wrong type (or format).
    TypeInvalid,
    /// `FieldValueDuplicate`: a duplicate in a `set` or `map` list.
    Duplicate,
    /// `FieldValueForbidden`: the value is not allowed (a CEL rule's `reason`).
    Forbidden,
}

impl FieldErrorKind {
    /// The `reason` of a `metav1.StatusCause` for this kind, e.g. `FieldValueRequired`.
    pub fn reason(self) -> &'static str {
        match self {
            FieldErrorKind::Required => "FieldValueRequired",
            FieldErrorKind::Invalid => "FieldValueInvalid",
            FieldErrorKind::NotSupported => "FieldValueNotSupported",
            FieldErrorKind::TooLong => "FieldValueTooLong",
            FieldErrorKind::TooMany => "FieldValueTooMany",
            FieldErrorKind::TypeInvalid => "FieldValueTypeInvalid",
            FieldErrorKind::Duplicate => "FieldValueDuplicate",
            FieldErrorKind::Forbidden => "FieldValueForbidden",
        }
    }

    /// The human-readable prefix of the error body, e.g. `Required value`.
    pub fn label(self) -> &'static str {
        match self {
            FieldErrorKind::Required => "Required value",
            FieldErrorKind::Invalid | FieldErrorKind::TypeInvalid => "Invalid value",
            FieldErrorKind::NotSupported => "Unsupported value",
            FieldErrorKind::TooLong => "Too long",
            FieldErrorKind::TooMany => "Too many",
            FieldErrorKind::Duplicate => "Duplicate value",
            FieldErrorKind::Forbidden => "Forbidden",
        }
    }
}

/// One validation failure, as apimachinery's `field.Error`.
///
/// Displays as the server prints it, e.g.
/// `spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// What went wrong.
    pub kind: FieldErrorKind,
    /// The field path, dotted from the root with list indexes (`spec.items[0].name`); `<nil>` for
    /// errors the server reports without a path (`allOf`, `anyOf`, `oneOf`, `not`).
    pub field: String,
    /// The explanation after the value.
    pub detail: String,
    /// The offending value as the server prints it; `None` when the server omits it
    /// (`Required value`, `Too long`).
    pub value: Option<Value>,
}

impl FieldError {
    /// A `Required value` error.
    pub fn required(field: impl Into<String>, detail: impl Into<String>) -> FieldError {
        FieldError {
            kind: FieldErrorKind::Required,
            field: field.into(),
            detail: detail.into(),
            value: None,
        }
    }

    /// An `Invalid value` error.
    pub fn invalid(
        field: impl Into<String>,
        value: Value,
        detail: impl Into<String>,
    ) -> FieldError {
        FieldError {
            kind: FieldErrorKind::Invalid,
            field: field.into(),
            detail: detail.into(),
            value: Some(value),
        }
    }

    /// A `Duplicate value` error.
    pub fn duplicate(field: impl Into<String>, value: Value) -> FieldError {
        FieldError {
            kind: FieldErrorKind::Duplicate,
            field: field.into(),
            detail: String::new(),
            value: Some(value),
        }
    }

    /// An `Unsupported value` error listing the supported values.
    pub fn not_supported(field: impl Into<String>, value: Value, supported: &[&str]) -> FieldError {
        let detail = if supported.is_empty() {
            String::new()
        } else {
            let quoted: Vec<String> = supported.iter().map(|s| go_quote(s)).collect();
            format!("supported values: {}", quoted.join(", "))
        };
        FieldError {
            kind: FieldErrorKind::NotSupported,
            field: field.into(),
            detail,
            value: Some(value),
        }
    }

    /// The cause `reason` string of a `metav1.StatusCause`, e.g. `FieldValueRequired`.
    pub fn reason(&self) -> &'static str {
        self.kind.reason()
    }

    /// The message without the field path (the `message` of a `metav1.StatusCause`), e.g.
    /// `Required value` or `Invalid value: "x": ...`.
    pub fn body(&self) -> String {
        let mut s = self.kind.label().to_string();
        match self.kind {
            FieldErrorKind::Required | FieldErrorKind::TooLong | FieldErrorKind::Forbidden => {}
            _ => {
                if let Some(v) = &self.value {
                    s.push_str(": ");
                    s.push_str(&go_bad_value(v));
                }
            }
        }
        if !self.detail.is_empty() {
            s.push_str(": ");
            s.push_str(&self.detail);
        }
        s
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.body())
    }
}

impl std::error::Error for FieldError {}

/// The `message` of the server's 422 `Invalid` status: `WebApp.example.dev "x" is invalid: <error>`
/// for one error, `... is invalid: [<error>, <error>]` for several (identical messages are listed
/// once), `... is invalid` for none. An empty `group` leaves out the `.group` suffix.
#[allow(dead_code, reason = "the server may build its Status message itself")]
pub fn invalid_message(kind: &str, group: &str, name: &str, errors: &[FieldError]) -> String {
    let gk = if group.is_empty() {
        kind.to_string()
    } else {
        format!("{kind}.{group}")
    };
    let mut seen = HashSet::new();
    let msgs: Vec<String> = errors
        .iter()
        .map(|e| e.to_string())
        .filter(|m| seen.insert(m.clone()))
        .collect();
    match msgs.len() {
        0 => format!("{gk} {} is invalid", go_quote(name)),
        1 => format!("{gk} {} is invalid: {}", go_quote(name), msgs[0]),
        _ => format!("{gk} {} is invalid: [{}]", go_quote(name), msgs.join(", ")),
    }
}
