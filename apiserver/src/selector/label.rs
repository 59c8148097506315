//! Label selectors: the requirements they hold, matching labels, the structured `metav1.LabelSelector`
//! form, and their canonical string.

use std::fmt;
use std::str::FromStr;

use serde_json::{Map, Value};

use super::error::SelectorError;
use super::messages::go_quote;
use super::parse::Parser;
use super::requirement::{Operator, Requirement};

/// A label selector: a conjunction of requirements on an object's `metadata.labels`.
///
/// The default value has no requirements and matches every object.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelSelector {
    /// Sorted by key (stable), as apimachinery sorts them.
    pub(super) requirements: Vec<Requirement>,
}

impl LabelSelector {
    /// Parses the string form used by `?labelSelector=`, e.g. `app=web,tier notin (db),!canary`.
    ///
    /// An empty (or all-whitespace) string selects everything.
    pub fn parse(s: &str) -> Result<LabelSelector, SelectorError> {
        let mut requirements = Parser::new(s).parse()?;
        requirements.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(LabelSelector { requirements })
    }

    /// Converts a structured `metav1.LabelSelector` (`matchLabels` and `matchExpressions`).
    ///
    /// `null` and `{}` both select everything. (apimachinery's `LabelSelectorAsSelector` maps a
    /// nil selector to "nothing"; callers that need that must check for `null` themselves.)
    /// Validation and error messages follow `labels.NewRequirement`.
    pub fn from_label_selector(v: &Value) -> Result<LabelSelector, SelectorError> {
        let obj = match v {
            Value::Null => return Ok(LabelSelector::default()),
            Value::Object(obj) => obj,
            other => {
                return Err(unmarshal_error(other, "Go value of type v1.LabelSelector"));
            }
        };
        let mut requirements = Vec::new();
        match obj.get("matchLabels") {
            None | Some(Value::Null) => {}
            Some(Value::Object(labels)) => {
                for (k, v) in labels {
                    let value = match v {
                        Value::Null => String::new(),
                        Value::String(s) => s.clone(),
                        other => {
                            return Err(unmarshal_error(
                                other,
                                "Go struct field LabelSelector.matchLabels of type string",
                            ));
                        }
                    };
                    requirements.push(Requirement::new(k, Operator::Equals, vec![value])?);
                }
            }
            Some(other) => {
                return Err(unmarshal_error(
                    other,
                    "Go struct field LabelSelector.matchLabels of type map[string]string",
                ));
            }
        }
        match obj.get("matchExpressions") {
            None | Some(Value::Null) => {}
            Some(Value::Array(exprs)) => {
                for expr in exprs {
                    requirements.push(expression_requirement(expr)?);
                }
            }
            Some(other) => {
                return Err(unmarshal_error(
                    other,
                    "Go struct field LabelSelector.matchExpressions of type \
                     []v1.LabelSelectorRequirement",
                ));
            }
        }
        requirements.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(LabelSelector { requirements })
    }

    /// Whether an object with these `metadata.labels` is selected.
    ///
    /// Label values that are not JSON strings are treated as absent; `None` means no labels.
    pub fn matches(&self, labels: Option<&Map<String, Value>>) -> bool {
        self.requirements.iter().all(|r| r.matches(labels))
    }

    /// Whether the selector has no requirements, i.e. selects everything.
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }
}

impl FromStr for LabelSelector {
    type Err = SelectorError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

/// The canonical string form: requirements sorted by key, values sorted, joined by `,`.
impl fmt::Display for LabelSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, r) in self.requirements.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{r}")?;
        }
        Ok(())
    }
}

/// Converts one `matchExpressions` entry (`{key, operator, values}`).
pub(super) fn expression_requirement(expr: &Value) -> Result<Requirement, SelectorError> {
    const STRUCT: &str = "Go struct field LabelSelector.matchExpressions";
    let empty = Map::new();
    let obj = match expr {
        Value::Null => &empty,
        Value::Object(obj) => obj,
        other => {
            return Err(unmarshal_error(
                other,
                &format!("{STRUCT} of type v1.LabelSelectorRequirement"),
            ));
        }
    };
    let string_field = |name: &str| match obj.get(name) {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => Err(unmarshal_error(
            other,
            &format!("{STRUCT}.{name} of type string"),
        )),
    };
    let key = string_field("key")?;
    let operator = string_field("operator")?;
    let values = match obj.get("values") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| match item {
                Value::Null => Ok(String::new()),
                Value::String(s) => Ok(s.clone()),
                other => Err(unmarshal_error(
                    other,
                    &format!("{STRUCT}.values of type string"),
                )),
            })
            .collect::<Result<Vec<_>, _>>()?,
        Some(other) => {
            return Err(unmarshal_error(
                other,
                &format!("{STRUCT}.values of type []string"),
            ));
        }
    };
    let op = match operator.as_str() {
        "In" => Operator::In,
        "NotIn" => Operator::NotIn,
        "Exists" => Operator::Exists,
        "DoesNotExist" => Operator::DoesNotExist,
        _ => {
            return Err(SelectorError::new(format!(
                "{} is not a valid label selector operator",
                go_quote(&operator)
            )));
        }
    };
    let mut r = Requirement::new(&key, op, values)?;
    r.values.sort_unstable();
    r.values.dedup();
    Ok(r)
}

/// Go's `encoding/json` type-mismatch message, for structurally wrong selector JSON.
pub(super) fn unmarshal_error(value: &Value, target: &str) -> SelectorError {
    let kind = match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    SelectorError::new(format!("json: cannot unmarshal {kind} into {target}"))
}
