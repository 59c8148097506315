//! The API server's answer to a write, kept as the JSON text it came as.
//!
//! The text is read once when it comes, for what the runtime's memories of its own writes need: the uid, the
//! `resourceVersion`, a hash of the content and where the status is. Beyond that, a child step decodes its
//! typed child once, and the status memory keeps the status's text as it is. Decoding every answer into a `serde_json::Value` first (a map per object, a string per field, then
//! printed again to be decoded as the kind) took about a tenth of the operator's CPU on kube-apiserver.

mod read;

use serde::Deserialize;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_json::value::RawValue;

use read::Read;

/// What the API server answered to a write: the object as stored, as JSON text.
///
/// ```
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kubewright::Answer;
///
/// let answer = Answer::from_json(r#"{"metadata":{"name":"settings","uid":"u1"}}"#.into()).unwrap();
/// let cm: ConfigMap = answer.object().unwrap();
/// assert_eq!(cm.metadata.name.as_deref(), Some("settings"));
/// assert_eq!(answer.to_value().unwrap()["metadata"]["uid"], "u1");
/// assert!(!answer.created());
/// assert!(answer.with_created(true).created());
/// ```
#[derive(Debug, Clone)]
pub struct Answer {
    text: Box<str>,
    /// The server answered `201 Created`: the write created the object.
    created: bool,
    /// What the runtime reads of every answer, read while the text is checked to be JSON.
    read: Read,
}

impl PartialEq for Answer {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text && self.created == other.created
    }
}

impl<'de> Deserialize<'de> for Answer {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = Box::<RawValue>::deserialize(deserializer)?;
        Answer::from_json(String::from(Box::<str>::from(raw))).map_err(serde::de::Error::custom)
    }
}

/// What an apply left: the stored object's uid and `resourceVersion`, and a hash of its content
/// ([`Answer::content`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Content {
    pub(crate) uid: String,
    pub(crate) version: String,
    pub(crate) hash: u64,
}

impl Answer {
    /// An answer from JSON text (checked to be JSON).
    pub fn from_json(text: String) -> serde_json::Result<Self> {
        let read = Read::of(&text)?;
        Ok(Answer {
            text: text.into_boxed_str(),
            created: false,
            read,
        })
    }

    /// An answer holding `value` as JSON (what a dispatcher with no server answers: the object as sent).
    pub fn of(value: &impl Serialize) -> serde_json::Result<Self> {
        Answer::from_json(serde_json::to_string(value)?)
    }

    /// This answer, saying whether the write created the object (the server answered `201 Created`, which
    /// kube-apiserver does for a create and for an apply that creates).
    pub fn with_created(self, created: bool) -> Self {
        Answer { created, ..self }
    }

    /// Whether the write created the object: what tells a first apply from one repeated on a cache that had
    /// not shown the first yet.
    pub fn created(&self) -> bool {
        self.created
    }

    /// The JSON text.
    pub fn json(&self) -> &str {
        &self.text
    }

    /// The object, decoded as `T` (a kind, or any type its JSON fits).
    pub fn object<T: DeserializeOwned>(&self) -> serde_json::Result<T> {
        serde_json::from_str(&self.text)
    }

    /// The object as a JSON value.
    pub fn to_value(&self) -> serde_json::Result<Value> {
        self.object()
    }

    /// The stored object's uid and `resourceVersion`, when the answer holds both.
    pub(crate) fn stored(&self) -> Option<(String, String)> {
        Some((
            self.read.uid.as_deref()?.into(),
            self.read.version.as_deref()?.into(),
        ))
    }

    /// The stored object's `resourceVersion`.
    pub(crate) fn resource_version(&self) -> Option<String> {
        self.read.version.as_deref().map(Into::into)
    }

    /// The stored object's `resourceVersion` and the JSON text of its status, when it has both.
    pub(crate) fn status(&self) -> Option<(String, Box<str>)> {
        let version = self.read.version.as_deref()?.into();
        let status = self.text.get(self.read.status.clone()?)?;
        Some((version, status.into()))
    }

    /// The stored object's uid and `resourceVersion`, with a hash of what an apply can change: the object
    /// without its status and the metadata the server keeps (`resourceVersion`, `managedFields`), its fields
    /// hashed in key order from their text as it stands (the API server prints one stored object the same way
    /// every time). `None` for an answer that is not an object with a uid and a `resourceVersion`.
    pub(crate) fn content(&self) -> Option<Content> {
        Some(Content {
            uid: self.read.uid.as_deref()?.into(),
            version: self.read.version.as_deref()?.into(),
            hash: self.read.hash?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn answer(v: Value) -> Answer {
        Answer::of(&v).unwrap()
    }

    #[test]
    fn the_identity_and_status_are_read_from_the_text() {
        let a = answer(json!({
            "metadata": {"name": "x", "uid": "u1", "resourceVersion": "7", "labels": {"a": "b"}},
            "spec": {"replicas": 2},
            "status": {"ready": true, "message": "quoted \"text\""}
        }));
        assert_eq!(a.stored(), Some(("u1".into(), "7".into())));
        let (version, status) = a.status().unwrap();
        assert_eq!(version, "7");
        assert_eq!(
            serde_json::from_str::<Value>(&status).unwrap(),
            json!({"ready": true, "message": "quoted \"text\""})
        );
        assert_eq!(answer(json!({"metadata": {"uid": "u1"}})).stored(), None);
        assert_eq!(answer(json!({"metadata": {}})).status(), None);
        assert_eq!(answer(Value::Null).stored(), None);
    }

    #[test]
    fn any_json_is_an_answer_and_only_json_is() {
        for text in [
            "[1, 2]",
            "null",
            r#"{"metadata": 3}"#,
            r#" {"metadata": {"uid": 1}} "#,
        ] {
            let a = Answer::from_json(text.into()).unwrap();
            assert_eq!(a.json(), text);
            assert_eq!(a.stored(), None);
        }
        for text in ["{", r#"{"metadata": {}} x"#, ""] {
            assert!(Answer::from_json(text.into()).is_err(), "{text}");
        }
        let spaced = Answer::from_json(
            r#"  { "status" : { "a" : "b\"c" } , "metadata" : { "resourceVersion" : "9" } }"#
                .into(),
        )
        .unwrap();
        assert_eq!(
            spaced.status(),
            Some(("9".into(), r#"{ "a" : "b\"c" }"#.into()))
        );
    }

    #[test]
    fn the_content_hash_ignores_status_version_and_managed_fields_only_and_reads_the_identity() {
        let base = json!({
            "apiVersion": "v1",
            "metadata": {"name": "x", "uid": "u", "resourceVersion": "1", "managedFields": [{"manager": "a"}]},
            "data": {"k": "v"},
            "status": {"n": 1}
        });
        let hash = |v: &Value| answer(v.clone()).content().unwrap().hash;
        let mut other = base.clone();
        other["metadata"]["resourceVersion"] = json!("2");
        other["metadata"]["managedFields"] = json!([{"manager": "b"}]);
        other["status"] = json!({"n": 2});
        assert_eq!(hash(&base), hash(&other));
        let mut changed = base.clone();
        changed["data"]["k"] = json!("w");
        assert_ne!(hash(&base), hash(&changed));
        let mut labelled = base.clone();
        labelled["metadata"]["labels"] = json!({"a": "b"});
        assert_ne!(hash(&base), hash(&labelled));
        let content = answer(other.clone()).content().unwrap();
        assert_eq!((content.uid.as_str(), content.version.as_str()), ("u", "2"));
        assert_eq!(answer(Value::Null).content(), None);
        assert_eq!(answer(json!({"metadata": {"uid": "u"}})).content(), None);
    }

    #[test]
    fn an_answer_decodes_as_any_type_its_json_fits() {
        let a = Answer::from_json(r#"{"metadata":{"name":"n"},"data":{"k":"v"}}"#.into()).unwrap();
        let cm: k8s_openapi::api::core::v1::ConfigMap = a.object().unwrap();
        assert_eq!(cm.data.unwrap()["k"], "v");
        assert!(Answer::from_json("{not json".into()).is_err());
        assert_eq!(a, a.clone());
    }
}
