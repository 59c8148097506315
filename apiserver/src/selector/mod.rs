//! Label and field selectors, parsed and evaluated the way kube-apiserver does it.
//!
//! [`LabelSelector`] covers both the `?labelSelector=` string syntax and the structured
//! `metav1.LabelSelector`; [`FieldSelector`] covers `?fieldSelector=`. Parse failures carry the
//! message the real server puts in its 400 `BadRequest` status.

mod field;
mod label;
mod messages;
mod parse;
#[cfg(test)]
mod tests;

pub use field::FieldSelector;
pub use label::LabelSelector;
/// Go's validation texts, for the checks of other objects that use the same helpers.
pub(crate) use messages::{
    DNS1123_SUBDOMAIN_FMT, DNS1123_SUBDOMAIN_MAX_LEN, DNS1123_SUBDOMAIN_MSG, go_quote,
    is_dns1123_subdomain, label_value_errors, label_value_with, max_len_error,
    qualified_name_errors, qualified_name_with, regex_error,
};

/// A selector that could not be parsed or converted.
///
/// Its `Display` text is the message the real API server returns in the `BadRequest` status.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct SelectorError {
    message: String,
}

impl SelectorError {
    fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }

    /// The error message, as it appears in `Status.message`.
    pub fn message(&self) -> &str {
        &self.message
    }
}
