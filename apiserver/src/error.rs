//! API errors rendered as `metav1.Status` bodies, the way kube-apiserver writes them.

use serde_json::{Value, json};

/// A failed request: the HTTP status code and the `metav1.Status` the server answers with.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{code} {reason}: {message}")]
pub struct ApiError {
    /// HTTP status code (also `Status.code`).
    pub code: u16,
    /// `Status.reason`, e.g. `NotFound`, `AlreadyExists`, `Conflict`, `Invalid`.
    pub reason: String,
    /// `Status.message`.
    pub message: String,
    /// `Status.details`, when the real server fills it.
    pub details: Option<Value>,
}

/// A `metav1.StatusCause`.
#[derive(Debug, Clone, PartialEq)]
pub struct Cause {
    /// The cause's reason, e.g. `FieldValueRequired`.
    pub reason: String,
    /// The human-readable message.
    pub message: String,
    /// The field path the cause is about.
    pub field: String,
}

/// The resource a status message is about: `configmaps` or `deployments.apps`.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    /// The API group, empty for the core group.
    pub group: &'a str,
    /// The plural resource name.
    pub resource: &'a str,
}

impl Target<'_> {
    fn qualified(&self) -> String {
        if self.group.is_empty() {
            self.resource.to_string()
        } else {
            format!("{}.{}", self.resource, self.group)
        }
    }

    fn details(&self, name: &str) -> Value {
        let mut d = json!({ "kind": self.resource });
        if !name.is_empty() {
            d["name"] = json!(name);
        }
        if !self.group.is_empty() {
            d["group"] = json!(self.group);
        }
        d
    }
}

impl ApiError {
    /// An error with a code, reason and message and no details.
    pub fn new(code: u16, reason: &str, message: impl Into<String>) -> Self {
        Self {
            code,
            reason: reason.to_string(),
            message: message.into(),
            details: None,
        }
    }

    pub(crate) fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    /// 404 `configmaps "x" not found`.
    pub fn not_found(target: Target<'_>, name: &str) -> Self {
        Self::new(
            404,
            "NotFound",
            format!("{} \"{}\" not found", target.qualified(), name),
        )
        .with_details(target.details(name))
    }

    /// 404 for a path the server does not serve.
    pub fn no_route() -> Self {
        Self::new(404, "NotFound", "the server could not find the requested resource").with_details(
            json!({ "causes": [{ "reason": "UnexpectedServerResponse", "message": "404 page not found" }] }),
        )
    }

    /// 409 `configmaps "x" already exists`.
    pub fn already_exists(target: Target<'_>, name: &str) -> Self {
        Self::new(
            409,
            "AlreadyExists",
            format!("{} \"{}\" already exists", target.qualified(), name),
        )
        .with_details(target.details(name))
    }

    /// 409 for a stale `resourceVersion`.
    pub fn conflict(target: Target<'_>, name: &str) -> Self {
        Self::conflict_with(
            target,
            name,
            "the object has been modified; please apply your changes to the latest version and try again",
        )
    }

    /// 409 Conflict with a custom explanation.
    pub fn conflict_with(target: Target<'_>, name: &str, why: &str) -> Self {
        Self::new(
            409,
            "Conflict",
            format!(
                "Operation cannot be fulfilled on {} \"{}\": {}",
                target.qualified(),
                name,
                why
            ),
        )
        .with_details(target.details(name))
    }

    /// 403 `configmaps "x" is forbidden: WHY` (Go's `NewForbidden`).
    pub fn forbidden(target: Target<'_>, name: &str, why: &str) -> Self {
        let message = if name.is_empty() {
            format!("{} is forbidden: {why}", target.qualified())
        } else {
            format!("{} \"{name}\" is forbidden: {why}", target.qualified())
        };
        Self::new(403, "Forbidden", message).with_details(target.details(name))
    }

    /// 422 Invalid with field causes. `kind` is the object's kind, `group` its group.
    pub fn invalid(kind: &str, group: &str, name: &str, causes: Vec<Cause>) -> Self {
        let qualified = if group.is_empty() {
            kind.to_string()
        } else {
            format!("{kind}.{group}")
        };
        let mut rendered: Vec<String> = Vec::new();
        for c in &causes {
            let line = if c.field.is_empty() {
                c.message.clone()
            } else {
                format!("{}: {}", c.field, c.message)
            };
            // The real server's aggregate drops repeated messages.
            if !rendered.contains(&line) {
                rendered.push(line);
            }
        }
        let list = if rendered.len() == 1 {
            rendered[0].clone()
        } else {
            format!("[{}]", rendered.join(", "))
        };
        // Go leaves an empty kind out.
        let mut details = if kind.is_empty() {
            json!({})
        } else {
            json!({ "kind": kind })
        };
        if !name.is_empty() {
            details["name"] = json!(name);
        }
        if !group.is_empty() {
            details["group"] = json!(group);
        }
        details["causes"] = Value::Array(
            causes
                .iter()
                .map(|c| json!({ "reason": c.reason, "message": c.message, "field": c.field }))
                .collect(),
        );
        Self::new(
            422,
            "Invalid",
            format!("{qualified} \"{name}\" is invalid: {list}"),
        )
        .with_details(details)
    }

    /// 400 BadRequest.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message)
    }

    /// 405 MethodNotAllowed.
    pub fn method_not_allowed(message: impl Into<String>) -> Self {
        Self::new(405, "MethodNotAllowed", message)
    }

    /// 410 Gone for a resourceVersion older than the kept history.
    pub fn gone(message: impl Into<String>) -> Self {
        Self::new(410, "Expired", message)
    }

    /// 415 UnsupportedMediaType.
    pub fn unsupported_media_type(message: impl Into<String>) -> Self {
        Self::new(415, "UnsupportedMediaType", message)
    }

    /// 500 InternalError.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(
            500,
            "InternalError",
            format!("Internal error occurred: {}", message.into()),
        )
    }

    /// The `metav1.Status` body.
    pub fn to_status(&self) -> Value {
        let mut status = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        });
        if let Some(d) = &self.details {
            status["details"] = d.clone();
        }
        // Go leaves an empty reason out.
        if self.reason.is_empty()
            && let Some(m) = status.as_object_mut()
        {
            m.remove("reason");
        }
        status
    }
}

/// The `metav1.Status` a successful delete returns for built-in kinds.
pub fn success_status(target: Target<'_>, name: &str, uid: &str) -> Value {
    let mut details = target.details(name);
    details["uid"] = json!(uid);
    json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": details,
    })
}

/// The result of a handler.
pub type ApiResult<T> = Result<T, ApiError>;
