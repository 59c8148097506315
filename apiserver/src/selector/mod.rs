//! Label and field selectors, parsed and evaluated the way kube-apiserver does it.
//!
//! [`LabelSelector`] covers both the `?labelSelector=` string syntax and the structured
//! `metav1.LabelSelector`; [`FieldSelector`] covers `?fieldSelector=`. Parse failures carry the
//! message the real server puts in its 400 `BadRequest` status.

mod error;
mod field;
mod label;
mod messages;
mod parse;
mod requirement;
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
