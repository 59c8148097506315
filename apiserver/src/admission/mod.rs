//! Admission webhooks and policies: the `MutatingWebhookConfiguration`s and `ValidatingWebhookConfiguration`s stored in
//! the server are called on writes, in kube-apiserver's order (mutating webhooks, then the schema and CEL
//! checks, then validating webhooks), over HTTPS or in-process.
//!
//! A webhook matches a request by its rules (groups, versions, resources with `*` and `resource/*`,
//! operations, scope), its `namespaceSelector` and `objectSelector`, then its `matchConditions` (CEL over
//! `object`, `oldObject` and `request`, see `conditions.rs`): a false condition skips the webhook, one that
//! fails to evaluate refuses the request (403) under `failurePolicy: Fail` and skips the webhook under
//! `Ignore`. It is reached at `clientConfig.url`, verified with `clientConfig.caBundle`, or, for
//! `clientConfig.service`, at the in-process handler registered for that Service
//! ([`crate::ApiServer::serve_webhook`]). Denials, warnings, JSON patches, timeouts and `failurePolicy` are
//! handled as kube-apiserver does; the warnings of the webhooks that answered come with a refusal too.
//!
//! Under `matchPolicy: Equivalent` (the default) a webhook whose rules name another version of the
//! requested resource (or another resource stored with it, see `equivalents.rs`) is called with the object
//! converted to that version, `kind` and `resource` of that version and `requestKind`/`requestResource` of
//! the request. Mutating webhooks with `reinvocationPolicy: IfNeeded` are called once more when a later
//! webhook changed the object (`server/mutate.rs`). Validating webhooks are called side by side, all of
//! them, and the first refusal is the answer.
//!
//! `ValidatingAdmissionPolicy`s and their bindings are enforced after the object's validation and before
//! the validating webhooks (`policies.rs`); policies are compiled when written (`policy_validation.rs`).
//!
//! The configurations themselves are defaulted and validated when written, as kube-apiserver does
//! (`defaults.rs`, `validation.rs`; match condition expressions are compiled and type-checked by
//! `expression.rs`).
//!
//! How it is done here: the write is first run as a dry run that stops before validation, to learn the
//! object the mutating webhooks see (decoded, patched and defaulted); their patches are applied; the
//! resulting write is validated in a second dry run, whose object the validating webhooks see; then it is
//! made. A mutated object is written as an update (or create) of the whole object, keeping the request's
//! own `managedFields` (the webhooks' changes are owned by no manager, as on kube-apiserver).
//!
//! The `authorizer` variable of match conditions allows every check (this server authorizes every
//! request). Not done here: the runtime cost budget of match conditions; a field selected from a null
//! `object` in an expression that also compares it is `false`, where cel-go fails (`conditions.rs`);
//! a built-in object is not defaulted again between two mutating webhooks (kube-apiserver applies its
//! defaulting functions after each patch; custom resources get their schema's defaults here too); a patch
//! changes the object when its JSON changes (kube-apiserver compares built-in kinds as Go structs, where an
//! empty map equals a missing one); the first refusal and the warnings of validating webhooks come in the
//! webhooks' order, where kube-apiserver takes them in the order the answers arrive.

mod authorizer;
mod conditions;
mod defaults;
mod equivalent;
mod equivalents;
mod expression;
mod policies;
mod policy_validation;
pub(crate) mod review;
pub(crate) mod transport;
mod validation;

pub(crate) use conditions::{Decision, Inputs, decide};
pub(crate) use defaults::{default_configuration, default_policy};
pub(crate) use equivalents::{default_in, equivalents, unversioned, versioned};
pub(crate) use policies::{ParamObjects, Policies, enforce};
pub(crate) use policy_validation::validate_policy;
pub(crate) use review::{
    Hook, Review, Verdict, hook, matching, ordered, request as review_request, verdict,
};
pub use transport::WebhookHandler;
pub(crate) use transport::{Call, call};
pub(crate) use validation::validate_configuration;
