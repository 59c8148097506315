//! apimachinery's `field.Error`: a field path, an error type, the bad value and a detail, rendered as
//! kube-apiserver renders a `StatusCause` (`Invalid value: "x": detail`).

use serde_json::Value;

use crate::error::Cause;

/// The type of a field error, with its reason and the words its message starts with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ErrorType {
    Required,
    Invalid,
    Forbidden,
    Duplicate,
    NotSupported,
    TooLong,
    NotFound,
}

impl ErrorType {
    fn reason(self) -> &'static str {
        match self {
            ErrorType::Required => "FieldValueRequired",
            ErrorType::Invalid => "FieldValueInvalid",
            ErrorType::Forbidden => "FieldValueForbidden",
            ErrorType::Duplicate => "FieldValueDuplicate",
            ErrorType::NotSupported => "FieldValueNotSupported",
            ErrorType::TooLong => "FieldValueTooLong",
            ErrorType::NotFound => "FieldValueNotFound",
        }
    }

    fn words(self) -> &'static str {
        match self {
            ErrorType::Required => "Required value",
            ErrorType::Invalid => "Invalid value",
            ErrorType::Forbidden => "Forbidden",
            ErrorType::Duplicate => "Duplicate value",
            ErrorType::NotSupported => "Unsupported value",
            ErrorType::TooLong => "Too long",
            ErrorType::NotFound => "Not found",
        }
    }
}

/// One field error.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct FieldError {
    kind: ErrorType,
    field: String,
    /// The bad value as Go prints it (`None` for the types that print none).
    value: Option<String>,
    detail: String,
}

/// The errors of one object, in the order the rules found them.
pub(super) type Errors = Vec<FieldError>;

impl FieldError {
    /// `field.Required(path, detail)`.
    pub(super) fn required(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(ErrorType::Required, field, None, detail)
    }

    /// `field.Forbidden(path, detail)`.
    pub(super) fn forbidden(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(ErrorType::Forbidden, field, None, detail)
    }

    /// `field.Invalid(path, value, detail)` with a string value (printed quoted, as Go's `%q`).
    pub(super) fn invalid(
        field: impl Into<String>,
        value: &str,
        detail: impl Into<String>,
    ) -> Self {
        Self::new(ErrorType::Invalid, field, Some(go_quote(value)), detail)
    }

    /// `field.Invalid(path, value, detail)` with a value Go marshals as JSON (maps, `metav1` structs) or prints
    /// plainly (numbers, booleans).
    pub(super) fn invalid_value(
        field: impl Into<String>,
        value: &Value,
        detail: impl Into<String>,
    ) -> Self {
        Self::new(ErrorType::Invalid, field, Some(go_value(value)), detail)
    }

    /// `field.Invalid(path, value, detail)` with the value already printed.
    pub(super) fn invalid_printed(
        field: impl Into<String>,
        printed: String,
        detail: impl Into<String>,
    ) -> Self {
        Self::new(ErrorType::Invalid, field, Some(printed), detail)
    }

    /// `field.Invalid(path, field.OmitValueType{}, detail)`: no value printed.
    pub(super) fn invalid_omitted(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::new(ErrorType::Invalid, field, None, detail)
    }

    /// `field.NotFound(path, value)` of a string.
    pub(super) fn not_found(field: impl Into<String>, value: &str) -> Self {
        Self::new(ErrorType::NotFound, field, Some(go_quote(value)), "")
    }

    /// `field.Duplicate(path, value)` of a string.
    pub(super) fn duplicate(field: impl Into<String>, value: &str) -> Self {
        Self::new(ErrorType::Duplicate, field, Some(go_quote(value)), "")
    }

    /// `field.Duplicate(path, value)` with the value already printed.
    pub(super) fn duplicate_printed(field: impl Into<String>, printed: String) -> Self {
        Self::new(ErrorType::Duplicate, field, Some(printed), "")
    }

    /// `field.NotSupported(path, value, valid)` of a string.
    pub(super) fn not_supported(field: impl Into<String>, value: &str, valid: &[&str]) -> Self {
        let quoted: Vec<String> = valid.iter().map(|v| go_quote(v)).collect();
        let detail = if quoted.is_empty() {
            String::new()
        } else {
            format!("supported values: {}", quoted.join(", "))
        };
        Self::new(
            ErrorType::NotSupported,
            field,
            Some(go_quote(value)),
            detail,
        )
    }

    /// `field.NotSupported(path, value, valid)` with the value already printed.
    pub(super) fn not_supported_printed(
        field: impl Into<String>,
        printed: String,
        valid: &[&str],
    ) -> Self {
        let quoted: Vec<String> = valid.iter().map(|v| go_quote(v)).collect();
        Self::new(
            ErrorType::NotSupported,
            field,
            Some(printed),
            format!("supported values: {}", quoted.join(", ")),
        )
    }

    /// `field.TooLong(path, "", max)`.
    pub(super) fn too_long(field: impl Into<String>, max: usize) -> Self {
        let unit = if max == 1 { "byte" } else { "bytes" };
        Self::new(
            ErrorType::TooLong,
            field,
            None,
            format!("may not be more than {max} {unit}"),
        )
    }

    fn new(
        kind: ErrorType,
        field: impl Into<String>,
        value: Option<String>,
        detail: impl Into<String>,
    ) -> Self {
        FieldError {
            kind,
            field: field.into(),
            value,
            detail: detail.into(),
        }
    }

    /// `field.Error.ErrorBody()`: the type's words, the value where the type prints one, then the detail.
    fn body(&self) -> String {
        let mut s = self.kind.words().to_string();
        if let Some(v) = &self.value {
            s.push_str(": ");
            s.push_str(v);
        }
        if !self.detail.is_empty() {
            s.push_str(": ");
            s.push_str(&self.detail);
        }
        s
    }

    /// The `StatusCause` kube-apiserver makes of this error.
    pub(super) fn cause(&self) -> Cause {
        Cause {
            reason: self.kind.reason().into(),
            message: self.body(),
            field: self.field.clone(),
        }
    }
}

/// Go's `%q` of a string.
pub(super) fn go_quote(s: &str) -> String {
    crate::selector::go_quote(s)
}

/// A bad value as `field.Error` prints it: a string quoted, a number or boolean plainly, anything else as
/// Go's `json.Marshal` writes it (map keys sorted, `<`, `>` and `&` escaped); `null` as Go's JSON `null`.
pub(super) fn go_value(v: &Value) -> String {
    match v {
        Value::String(s) => go_quote(s),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        other => go_json(other),
    }
}

/// Go's `json.Marshal` of a JSON value: keys sorted, HTML characters escaped.
pub(super) fn go_json(v: &Value) -> String {
    let sorted = sort_keys(v);
    serde_json::to_string(&sorted)
        .unwrap_or_default()
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

fn sort_keys(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            Value::Object(
                keys.into_iter()
                    .map(|k| (k.clone(), sort_keys(&m[k])))
                    .collect(),
            )
        }
        Value::Array(a) => Value::Array(a.iter().map(sort_keys).collect()),
        other => other.clone(),
    }
}

/// A field path's child: `spec` + `template` = `spec.template`.
pub(super) fn child(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

/// A field path's list index: `spec.containers[0]`.
pub(super) fn index(path: &str, i: usize) -> String {
    format!("{path}[{i}]")
}

/// A field path's map key: `data[my.key]`.
pub(super) fn key(path: &str, k: &str) -> String {
    format!("{path}[{k}]")
}

/// Each error as `field: message`, for tests.
#[cfg(test)]
pub(super) fn messages(errs: &Errors) -> Vec<String> {
    errs.iter()
        .map(|e| {
            let c = e.cause();
            format!("{}: {}", c.field, c.message)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn messages_follow_field_error_body() {
        let e = FieldError::invalid("metadata.labels", "a b", "bad");
        assert_eq!(e.cause().message, "Invalid value: \"a b\": bad");
        let e = FieldError::required("spec.selector", "");
        assert_eq!(e.cause().message, "Required value");
        assert_eq!(e.cause().reason, "FieldValueRequired");
        let e = FieldError::not_supported("x", "Always", &["OnFailure", "Never"]);
        assert_eq!(
            e.cause().message,
            "Unsupported value: \"Always\": supported values: \"OnFailure\", \"Never\""
        );
        let e = FieldError::invalid_value("x", &json!({"b": 1, "a": "<"}), "d");
        assert_eq!(
            e.cause().message,
            "Invalid value: {\"a\":\"\\u003c\",\"b\":1}: d"
        );
        assert_eq!(
            FieldError::too_long("", 1048576).cause().message,
            "Too long: may not be more than 1048576 bytes"
        );
    }
}
