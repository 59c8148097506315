//! The record of every request the server handled.

use serde_json::Value;

use super::request::Verb;

/// One handled request and its outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct RequestRecord {
    /// The verb, for resource requests.
    pub verb: Option<Verb>,
    /// HTTP method.
    pub method: String,
    /// Request path.
    pub path: String,
    /// Raw query string.
    pub query: String,
    /// API group of a resource request.
    pub group: String,
    /// Plural resource name of a resource request.
    pub resource: String,
    /// Subresource, if any.
    pub subresource: Option<String>,
    /// Namespace, if any.
    pub namespace: Option<String>,
    /// Object name, if any.
    pub name: Option<String>,
    /// `Content-Type` of the request.
    pub content_type: Option<String>,
    /// Request body of writes, parsed when it is JSON or YAML.
    pub body: Option<Value>,
    /// HTTP status code of the answer.
    pub code: u16,
    /// Response body of writes and errors.
    pub response: Option<Value>,
}

impl RequestRecord {
    /// Whether the request could have changed stored state and succeeded.
    pub fn is_write(&self) -> bool {
        self.verb.is_some_and(|v| v.is_mutating()) && (200..300).contains(&self.code)
    }
}
