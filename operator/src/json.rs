//! Conversions between typed objects and JSON values, through JSON text.
//!
//! Each way of decoding or encoding a kind compiles the kind's whole deserializer or serializer once more:
//! `serde_json::from_value::<K>` for `Value`'s deserializer, `from_slice::<K>` for byte slices, beside
//! `from_str::<K>`, which kube's client uses for every answer and watch event. Nearly all of an operator's
//! machine code stays resident once it runs (the kernel maps a binary's text around each fault), so each copy
//! is memory held for the operator's life. The runtime therefore decodes and encodes kinds only as text,
//! here and in the cache: that took 0.9 MB off the webapp example's code. It costs one more serialization of an
//! object the runtime already holds (microseconds for a Deployment), once per child a pass compares or writes.

use serde::Serialize;
use serde::de::DeserializeOwned;

/// `from` as a `T`, through its JSON text: what `serde_json::from_value(serde_json::to_value(from)?)` gives,
/// and with `T` or `from` a `serde_json::Value`, what `from_value` or `to_value` gives.
pub(crate) fn convert<T: DeserializeOwned>(
    from: &(impl Serialize + ?Sized),
) -> serde_json::Result<T> {
    serde_json::from_str(&serde_json::to_string(from)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::ConfigMap;
    use serde_json::{Value, json};

    #[test]
    fn decodes_as_from_value_does() {
        let value = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"k": "v"}});
        let ours: ConfigMap = convert(&value).unwrap();
        let theirs: ConfigMap = serde_json::from_value(value).unwrap();
        assert_eq!(ours, theirs);
    }

    #[test]
    fn encodes_as_to_value_does() {
        let cm: ConfigMap =
            convert(&json!({"metadata": {"name": "a", "labels": {"b": "c"}}, "data": {"k": "v"}}))
                .unwrap();
        let ours: Value = convert(&cm).unwrap();
        assert_eq!(ours, serde_json::to_value(&cm).unwrap());
    }

    #[test]
    fn reports_what_does_not_decode() {
        let err = convert::<ConfigMap>(&json!({"metadata": {"name": 1}})).unwrap_err();
        assert!(err.to_string().contains("invalid type"), "{err}");
    }
}
