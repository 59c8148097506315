//! Who makes a request and what they may do: the review kinds' answers.
//!
//! The in-memory server authenticates no one: every request is made by one user, [`user::requester`]
//! (`system:admin` in `system:masters` and `system:authenticated`, the user admission reviews name too),
//! and no request is refused for its user. What it does answer is the review kinds, as kube-apiserver
//! answers them with `--authorization-mode=RBAC`: `rbac.rs` is its authorizer (members of `system:masters`
//! allowed, then the stored Roles, ClusterRoles and their bindings, with RBAC's `reason` texts), and
//! `reviews.rs` answers each review kind's create (`SelfSubjectReview` with the requester, `TokenReview`
//! with no token known, the access reviews and `SelfSubjectRulesReview` from the authorizer).

pub(crate) mod impersonation;
pub(crate) mod rbac;
pub(crate) mod reviews;
pub(crate) mod user;
