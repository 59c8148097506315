//! The runtime's typed errors.

/// Everything that can go wrong in a reconcile pass.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An API request failed.
    #[error("{context}: {source}")]
    Kube {
        /// What the runtime was doing.
        context: String,
        /// The client error.
        #[source]
        source: kube::Error,
    },
    /// The parent's spec cannot be realised; becomes `Ready=False` with this reason, and an event.
    #[error("invalid spec ({reason}): {message}")]
    InvalidSpec {
        /// A CamelCase reason for the condition.
        reason: String,
        /// A human-readable message.
        message: String,
    },
    /// A stash key was read before any step stored it.
    #[error("no value in the stash for key `{0}`")]
    MissingStash(&'static str),
    /// A step of a [`Sequence`](crate::Sequence) read a stash key no earlier step stored this pass: which key,
    /// which step, and the steps seen storing it.
    #[error(
        "step `{step}` read the stash key `{key}` before any step stored it this pass; {stored_by}"
    )]
    StashNotStored {
        /// The key.
        key: &'static str,
        /// The step that read it.
        step: String,
        /// The steps seen storing the key in this sequence (and whether they run after the reader), or that
        /// none was.
        stored_by: String,
    },
    /// A stash key's value has another type than the key says (two keys share a name).
    #[error("the stash value for key `{key}` is not a `{expected}`")]
    StashType {
        /// The key.
        key: &'static str,
        /// The type the key expected.
        expected: &'static str,
    },
    /// A kind is read from a cache that the controller does not keep.
    #[error(
        "kind {0} is not cached by this controller: declare it with `owns`, `watches` or `tracks`"
    )]
    NotCached(String),
    /// An owner reference the runtime refuses to set.
    #[error("cannot own {child}: {reason}")]
    Ownership {
        /// The child.
        child: String,
        /// Why.
        reason: String,
    },
    /// A cache's options do not fit how a step uses the kind.
    #[error(transparent)]
    CacheOptions(#[from] crate::cache::CacheOptionsError),
    /// (De)serialization failed.
    #[error("serialization failed: {0}")]
    Serde(#[from] serde_json::Error),
    /// In one-action mode, the pass used its one mutating command and ends here.
    #[error("the pass performed its one mutating command")]
    Yield,
    /// A step panicked; the pass failed with the panic's message, and the controller goes on.
    #[error("a step panicked: {0}")]
    Panicked(String),
    /// The pass ran longer than the reconciler's timeout ([`Reconciler::timeout`](crate::Reconciler::timeout))
    /// and was cancelled; retried with backoff like any error.
    #[error("the pass took longer than {after:?} and was cancelled in step `{step}`")]
    TimedOut {
        /// The step that was running (the innermost step a [`Sequence`](crate::Sequence) started).
        step: String,
        /// The timeout.
        after: std::time::Duration,
    },
    /// Any other failure reported by an author's step.
    #[error("{0}")]
    Custom(String),
}

impl Error {
    /// An invalid-spec error: the spec cannot be realised as written. The pass ends with `Ready=False` (this
    /// reason and message) and one Warning event when the condition starts saying so. It is not retried with
    /// backoff, since only a change can fix it: the parent is reconciled again when it or anything its pass
    /// tracked or owns changes, or after [`INVALID_SPEC_RECHECK`](crate::controller::INVALID_SPEC_RECHECK) (ten
    /// minutes) without a change. The controller logs it once per reason and message, not once per pass.
    pub fn invalid_spec(reason: impl Into<String>, message: impl Into<String>) -> Self {
        Error::InvalidSpec {
            reason: reason.into(),
            message: message.into(),
        }
    }

    /// The reason of an [`InvalidSpec`](Error::InvalidSpec) error (the condition's reason), `None` for any
    /// other error.
    ///
    /// ```
    /// use kubewright::Error;
    ///
    /// assert_eq!(Error::invalid_spec("InvalidSchedule", "\"x\": no").reason(), Some("InvalidSchedule"));
    /// assert_eq!(Error::custom("boom").reason(), None);
    /// ```
    pub fn reason(&self) -> Option<&str> {
        match self {
            Error::InvalidSpec { reason, .. } => Some(reason),
            _ => None,
        }
    }

    /// Any author error.
    pub fn custom(message: impl std::fmt::Display) -> Self {
        Error::Custom(message.to_string())
    }

    /// Wraps a client error with what was being done.
    pub fn kube(context: impl Into<String>, source: kube::Error) -> Self {
        Error::Kube {
            context: context.into(),
            source,
        }
    }

    /// The HTTP status code of an API error, if this is one.
    pub fn code(&self) -> Option<u16> {
        match self {
            Error::Kube {
                source: kube::Error::Api(s),
                ..
            } => Some(s.code),
            _ => None,
        }
    }

    /// Whether this is a 409 (stale resourceVersion or AlreadyExists from a lagging cache): retry, do not shout.
    pub fn is_conflict(&self) -> bool {
        self.code() == Some(409)
    }

    /// Whether this is a 409 saying the object to create exists already (reason `AlreadyExists`).
    pub fn is_already_exists(&self) -> bool {
        matches!(self, Error::Kube { source: kube::Error::Api(s), .. } if s.code == 409 && s.reason == "AlreadyExists")
    }

    /// Whether this is a 404.
    pub fn is_not_found(&self) -> bool {
        self.code() == Some(404)
    }

    /// A write of a desired child that the API server refused as invalid (`422`, reason `Invalid`: a Job
    /// template without containers, a field kube-apiserver holds immutable) as an invalid spec of the parent:
    /// the desired state the spec gives cannot be stored. The reason is `<Kind>Invalid` (`JobInvalid`), the
    /// message the server's, which names the field. Any other error is returned as it is.
    pub fn refused_child(self, kind: &str) -> Self {
        match &self {
            Error::Kube {
                source: kube::Error::Api(s),
                ..
            } if s.code == 422 => Error::invalid_spec(format!("{kind}Invalid"), s.message.clone()),
            _ => self,
        }
    }
}

/// The runtime's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    fn api(code: u16, reason: &str, message: &str) -> Error {
        let status = kube::core::Status::failure(message, reason).with_code(code);
        Error::kube("create Job default/a", kube::Error::Api(status.boxed()))
    }

    #[test]
    fn a_child_refused_as_invalid_is_an_invalid_spec_naming_the_field() {
        let message = "Job.batch \"a\" is invalid: spec.template.spec.containers: Required value";
        match api(422, "Invalid", message).refused_child("Job") {
            Error::InvalidSpec { reason, message: m } => {
                assert_eq!(reason, "JobInvalid");
                assert_eq!(m, message);
            }
            other => panic!("{other:?}"),
        }
        // Any other refusal stays what it was.
        let conflict = api(409, "Conflict", "modified").refused_child("Job");
        assert!(conflict.is_conflict());
        assert!(matches!(
            api(500, "InternalError", "x").refused_child("Job"),
            Error::Kube { .. }
        ));
    }
}
