//! One `key op values` term of a label selector: built and validated as apimachinery's `NewRequirement`
//! does, matched against labels, written in its canonical form.

use std::fmt;

use serde_json::{Map, Value};

use super::error::SelectorError;
use super::messages::{
    aggregate, go_quote, go_string_slice, invalid, joined, label_value_errors,
    qualified_name_errors,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Operator {
    Equals,
    DoubleEquals,
    NotEquals,
    In,
    NotIn,
    Exists,
    DoesNotExist,
    GreaterThan,
    LessThan,
}

/// One `key op values` term of a label selector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Requirement {
    pub(super) key: String,
    pub(super) op: Operator,
    pub(super) values: Vec<String>,
}

impl Requirement {
    /// Validates and builds a requirement, as apimachinery's `NewRequirement` does.
    pub(super) fn new(
        key: &str,
        op: Operator,
        values: Vec<String>,
    ) -> Result<Requirement, SelectorError> {
        let mut errs = Vec::new();
        if let Some(detail) = joined(qualified_name_errors(key)) {
            errs.push(invalid("key", &go_quote(key), &detail));
        }
        match op {
            Operator::In | Operator::NotIn if values.is_empty() => errs.push(invalid(
                "values",
                &go_string_slice(&values),
                "for 'in', 'notin' operators, values set can't be empty",
            )),
            Operator::Equals | Operator::DoubleEquals | Operator::NotEquals
                if values.len() != 1 =>
            {
                errs.push(invalid(
                    "values",
                    &go_string_slice(&values),
                    "exact-match compatibility requires one single value",
                ));
            }
            Operator::Exists | Operator::DoesNotExist if !values.is_empty() => errs.push(invalid(
                "values",
                &go_string_slice(&values),
                "values set must be empty for exists and does not exist",
            )),
            Operator::GreaterThan | Operator::LessThan => {
                if values.len() != 1 {
                    errs.push(invalid(
                        "values",
                        &go_string_slice(&values),
                        "for 'Gt', 'Lt' operators, exactly one value is required",
                    ));
                }
                for (i, v) in values.iter().enumerate() {
                    if v.parse::<i64>().is_err() {
                        errs.push(invalid(
                            &format!("values[{i}]"),
                            &go_quote(v),
                            "for 'Gt', 'Lt' operators, the value must be an integer",
                        ));
                    }
                }
            }
            _ => {}
        }
        for (i, v) in values.iter().enumerate() {
            if let Some(detail) = joined(label_value_errors(v)) {
                errs.push(invalid(
                    &format!("values[{i}][{key}]"),
                    &go_quote(v),
                    &detail,
                ));
            }
        }
        match aggregate(errs) {
            Some(message) => Err(SelectorError::new(message)),
            None => Ok(Requirement {
                key: key.to_string(),
                op,
                values,
            }),
        }
    }

    pub(super) fn matches(&self, labels: Option<&Map<String, Value>>) -> bool {
        let value = labels
            .and_then(|l| l.get(&self.key))
            .and_then(Value::as_str);
        match self.op {
            Operator::In | Operator::Equals | Operator::DoubleEquals => {
                value.is_some_and(|v| self.has_value(v))
            }
            Operator::NotIn | Operator::NotEquals => value.is_none_or(|v| !self.has_value(v)),
            Operator::Exists => value.is_some(),
            Operator::DoesNotExist => value.is_none(),
            Operator::GreaterThan | Operator::LessThan => {
                let (Some(actual), [wanted]) = (value, self.values.as_slice()) else {
                    return false;
                };
                let (Ok(actual), Ok(wanted)) = (actual.parse::<i64>(), wanted.parse::<i64>())
                else {
                    return false;
                };
                if self.op == Operator::GreaterThan {
                    actual > wanted
                } else {
                    actual < wanted
                }
            }
        }
    }

    pub(super) fn has_value(&self, v: &str) -> bool {
        self.values.iter().any(|x| x == v)
    }
}

impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.op == Operator::DoesNotExist {
            f.write_str("!")?;
        }
        f.write_str(&self.key)?;
        let op = match self.op {
            Operator::Exists | Operator::DoesNotExist => return Ok(()),
            Operator::Equals => "=",
            Operator::DoubleEquals => "==",
            Operator::NotEquals => "!=",
            Operator::In => " in (",
            Operator::NotIn => " notin (",
            Operator::GreaterThan => ">",
            Operator::LessThan => "<",
        };
        f.write_str(op)?;
        let mut values: Vec<&str> = self.values.iter().map(String::as_str).collect();
        values.sort_unstable();
        f.write_str(&values.join(","))?;
        if matches!(self.op, Operator::In | Operator::NotIn) {
            f.write_str(")")?;
        }
        Ok(())
    }
}
