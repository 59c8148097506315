//! A JSON document kept as the text a write sends.
//!
//! A child step's applied configuration is built from a typed object. Turning that object into a
//! `serde_json::Value` (a map per object, a string per field) only to print the `Value` again into the request
//! took about a twentieth of the operator's CPU while it converged on kube-apiserver. [`JsonText`] holds the
//! text and builds the `Value` only when something asks for it: a table test's assertion, a perturbation.

use std::fmt;
use std::ops::Index;
use std::sync::OnceLock;

use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;

/// A JSON document held as its text, read as a [`Value`] on demand.
///
/// Built from a `Value` (`json!(..).into()`) or from anything that serializes ([`JsonText::of`]). Indexing reads
/// it as a `Value`, so a test asserts on it as on one; two texts are equal when their values are.
///
/// ```
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kubewright::JsonText;
/// use serde_json::json;
///
/// let cm = ConfigMap {
///     metadata: kube::api::ObjectMeta { name: Some("settings".into()), ..Default::default() },
///     ..Default::default()
/// };
/// let text = JsonText::of(&cm).unwrap();
/// assert_eq!(text.as_str(), r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"settings"}}"#);
/// assert_eq!(text["metadata"]["name"], "settings");
/// assert_eq!(text, JsonText::from(json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "settings"}})));
/// ```
#[derive(Clone)]
pub struct JsonText {
    text: Box<RawValue>,
    value: OnceLock<Value>,
}

impl JsonText {
    /// `object`'s JSON text (what `serde_json::to_string` gives).
    pub fn of(object: &(impl Serialize + ?Sized)) -> serde_json::Result<Self> {
        Ok(JsonText {
            // Printed by serde_json, so not read again to be checked.
            text: serde_json::value::to_raw_value(object)?,
            value: OnceLock::new(),
        })
    }

    /// The text, as it is sent.
    pub fn as_str(&self) -> &str {
        self.text.get()
    }

    /// The text as a `Value`, read on the first call.
    pub fn value(&self) -> &Value {
        self.value.get_or_init(|| {
            // The text came from a serializer or a `Value`, so it is JSON; no text can fail to read but one deeper
            // than serde_json's recursion limit, which no Kubernetes object is.
            serde_json::from_str(self.text.get()).unwrap_or(Value::Null)
        })
    }

    /// The text, for a serializer that writes it as it is.
    pub(crate) fn raw(&self) -> &RawValue {
        &self.text
    }
}

impl From<Value> for JsonText {
    fn from(value: Value) -> Self {
        // A `Value` prints as JSON without fail (its maps have string keys); `null` stands in for the failure
        // that cannot happen, rather than a panic.
        let text =
            serde_json::value::to_raw_value(&value).unwrap_or_else(|_| RawValue::NULL.to_owned());
        JsonText {
            text,
            value: OnceLock::from(value),
        }
    }
}

impl Index<&str> for JsonText {
    type Output = Value;

    fn index(&self, key: &str) -> &Value {
        &self.value()[key]
    }
}

impl PartialEq for JsonText {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str() || self.value() == other.value()
    }
}

impl PartialEq<Value> for JsonText {
    fn eq(&self, other: &Value) -> bool {
        self.value() == other
    }
}

impl fmt::Debug for JsonText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.value(), f)
    }
}

impl fmt::Display for JsonText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_value_keeps_its_content_through_the_text() {
        let value = json!({"b": [1, "two", null], "a": {"c": true}});
        let text = JsonText::from(value.clone());
        assert_eq!(serde_json::from_str::<Value>(text.as_str()).unwrap(), value);
        assert_eq!(text.value(), &value);
        assert_eq!(text["b"][1], "two");
    }

    #[test]
    fn texts_are_equal_when_their_values_are() {
        let a = JsonText::of(&json!({"a": 1, "b": 2})).unwrap();
        let b = JsonText::from(serde_json::from_str::<Value>(r#"{"b":2,"a":1}"#).unwrap());
        assert_eq!(a, b);
        assert_ne!(a, JsonText::from(json!({"a": 1})));
        assert_eq!(a, json!({"b": 2, "a": 1}));
    }

    #[test]
    fn the_raw_text_is_what_a_serializer_writes() {
        let text = JsonText::from(json!({"k": "v"}));
        assert_eq!(serde_json::to_string(text.raw()).unwrap(), r#"{"k":"v"}"#);
    }
}
