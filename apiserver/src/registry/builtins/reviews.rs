//! The review kinds: `authentication.k8s.io/v1` TokenReview and SelfSubjectReview, `authorization.k8s.io/v1`
//! SubjectAccessReview, SelfSubjectAccessReview, LocalSubjectAccessReview and SelfSubjectRulesReview. Each is
//! created only (discovery lists the one verb `create`), answered by [`crate::auth`] and never stored.

use k8s_openapi::api::{authentication::v1 as authentication, authorization::v1 as authorization};

use super::typed::builtin;
use crate::registry::resource_type::ResourceType;

/// The review kinds.
pub(super) fn kinds() -> Vec<ResourceType> {
    vec![
        builtin::<authentication::TokenReview>().review(),
        builtin::<authentication::SelfSubjectReview>().review(),
        builtin::<authorization::SubjectAccessReview>().review(),
        builtin::<authorization::SelfSubjectAccessReview>().review(),
        builtin::<authorization::LocalSubjectAccessReview>().review(),
        builtin::<authorization::SelfSubjectRulesReview>().review(),
    ]
}
