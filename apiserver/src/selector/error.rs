//! Why a selector could not be parsed or converted.

/// A selector that could not be parsed or converted.
///
/// Its `Display` text is the message the real API server returns in the `BadRequest` status.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct SelectorError {
    message: String,
}

impl SelectorError {
    pub(super) fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }

    /// The error message, as it appears in `Status.message`.
    pub fn message(&self) -> &str {
        &self.message
    }
}
