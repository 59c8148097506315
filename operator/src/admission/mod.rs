//! Admission webhooks: validation and defaulting that the API server enforces, served by the operator.
//!
//! An author declares, per kind, validators (`create`, `update` with the old object, `delete`) and
//! defaulters (which fill the object in place) on a [`Webhooks`]. [`WebhookServer`] serves every declared
//! kind over HTTPS with the AdmissionReview v1 protocol, at `/validate/GROUP/VERSION/PLURAL` and
//! `/mutate/GROUP/VERSION/PLURAL`; [`WebhookServer::validating_configuration`] and
//! [`WebhookServer::mutating_configuration`] give the `ValidatingWebhookConfiguration` and
//! `MutatingWebhookConfiguration` that send the API server there, with the CA bundle of the server's
//! [`Certificates`] ([`WebhookServer::install`] writes them), and [`crate::manifests::Manifests::admission`]
//! puts them in an operator's manifests. A table test calls [`Webhooks::check`] and [`Webhooks::fill`]
//! (or the functions themselves) with no server at all, or [`ErasedWebhooks::review`] with an
//! AdmissionReview.
//!
//! ```
//! use kubewright::admission::{Verdict, Webhooks};
//! use k8s_openapi::api::core::v1::ConfigMap;
//!
//! let hooks = Webhooks::<ConfigMap>::new()
//!     .validate(|request| match request.object {
//!         Some(cm) if cm.data.as_ref().is_some_and(|d| d.contains_key("forbidden")) => {
//!             Verdict::deny("the key forbidden is not allowed")
//!         }
//!         _ => Verdict::allow(),
//!     })
//!     .default(|cm| {
//!         cm.data.get_or_insert_with(Default::default).entry("owner".into()).or_insert("me".into());
//!     });
//! # let _ = hooks;
//! ```

mod certs;
mod config;
mod reload;
mod review;
mod server;

use std::sync::Arc;

use kube::core::admission::Operation;

pub use certs::{CertificateError, Certificates};
pub use config::{ClientConfig, FailurePolicy, Scope, WebhookSpec, mutating, validating};
pub use reload::CHECK_EVERY as CERTIFICATE_CHECK_EVERY;
pub use review::ErasedWebhooks;
pub use server::{WebhookServer, WebhookServerError};

/// What a validator sees of one admission request.
#[derive(Debug, Clone)]
pub struct Request<'a, K> {
    /// `Create`, `Update` or `Delete`.
    pub operation: Operation,
    /// The object as it would be stored (absent on delete).
    pub object: Option<&'a K>,
    /// The stored object (on update and delete).
    pub old_object: Option<&'a K>,
    /// Whether the request is a dry run (nothing will be stored).
    pub dry_run: bool,
}

/// A validator's answer: allowed or denied with a message, with warnings for the client either way.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// Whether the request may proceed.
    pub allowed: bool,
    /// Why it was denied (shown by kubectl after `admission webhook "NAME" denied the request: `).
    pub message: Option<String>,
    /// Warnings the API server passes on to the client (`Warning:` lines in kubectl).
    pub warnings: Vec<String>,
}

impl Verdict {
    /// The request may proceed.
    pub fn allow() -> Self {
        Verdict {
            allowed: true,
            message: None,
            warnings: Vec::new(),
        }
    }

    /// The request is refused with `message`.
    pub fn deny(message: impl Into<String>) -> Self {
        Verdict {
            allowed: false,
            message: Some(message.into()),
            warnings: Vec::new(),
        }
    }

    /// Adds a warning for the client.
    #[must_use]
    pub fn warn(mut self, warning: impl Into<String>) -> Self {
        self.warnings.push(warning.into());
        self
    }
}

type Validator<K> = Arc<dyn Fn(&Request<'_, K>) -> Verdict + Send + Sync>;
type Defaulter<K> = Arc<dyn Fn(&mut K) + Send + Sync>;

/// The webhooks of one kind: validators and defaulters, with their failure policy and timeout.
pub struct Webhooks<K> {
    validators: Vec<Validator<K>>,
    defaulters: Vec<Defaulter<K>>,
    failure_policy: FailurePolicy,
    timeout_seconds: i32,
    validate_deletes: bool,
}

impl<K> Clone for Webhooks<K> {
    fn clone(&self) -> Self {
        Webhooks {
            validators: self.validators.clone(),
            defaulters: self.defaulters.clone(),
            failure_policy: self.failure_policy,
            timeout_seconds: self.timeout_seconds,
            validate_deletes: self.validate_deletes,
        }
    }
}

impl<K> Default for Webhooks<K> {
    fn default() -> Self {
        Webhooks {
            validators: Vec::new(),
            defaulters: Vec::new(),
            failure_policy: FailurePolicy::Fail,
            timeout_seconds: 10,
            validate_deletes: false,
        }
    }
}

impl<K> std::fmt::Debug for Webhooks<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Webhooks")
            .field("validators", &self.validators.len())
            .field("defaulters", &self.defaulters.len())
            .field("failure_policy", &self.failure_policy)
            .field("timeout_seconds", &self.timeout_seconds)
            .finish()
    }
}

impl<K> Webhooks<K> {
    /// No webhooks yet; failure policy `Fail`, a 10 s timeout.
    pub fn new() -> Self {
        <Self as Default>::default()
    }

    /// Adds a validator, run on create and update (and on delete after [`Webhooks::validate_deletes`]), in
    /// the order added; the first denial wins.
    #[must_use]
    pub fn validate(
        mut self,
        f: impl Fn(&Request<'_, K>) -> Verdict + Send + Sync + 'static,
    ) -> Self {
        self.validators.push(Arc::new(f));
        self
    }

    /// Adds a defaulter, run on create and update before any validation, in the order added.
    #[must_use]
    pub fn default(mut self, f: impl Fn(&mut K) + Send + Sync + 'static) -> Self {
        self.defaulters.push(Arc::new(f));
        self
    }

    /// Also sends deletes to the validators (`object` is absent, `old_object` the stored one).
    #[must_use]
    pub fn validate_deletes(mut self) -> Self {
        self.validate_deletes = true;
        self
    }

    /// What the API server does when the webhook cannot be reached or times out: refuse the request
    /// (`Fail`, the default) or let it through (`Ignore`).
    #[must_use]
    pub fn failure_policy(mut self, policy: FailurePolicy) -> Self {
        self.failure_policy = policy;
        self
    }

    /// How long the API server waits for an answer (1 to 30 seconds; 10 by default).
    #[must_use]
    pub fn timeout_seconds(mut self, seconds: i32) -> Self {
        self.timeout_seconds = seconds.clamp(1, 30);
        self
    }

    /// Whether any validator is declared.
    pub fn validates(&self) -> bool {
        !self.validators.is_empty()
    }

    /// Whether any defaulter is declared.
    pub fn defaults(&self) -> bool {
        !self.defaulters.is_empty()
    }

    /// Runs the validators on `request`: the first denial, or an allowance with every warning.
    pub fn check(&self, request: &Request<'_, K>) -> Verdict {
        let mut warnings = Vec::new();
        for v in &self.validators {
            let mut verdict = v(request);
            warnings.append(&mut verdict.warnings);
            if !verdict.allowed {
                verdict.warnings = warnings;
                return verdict;
            }
        }
        Verdict {
            allowed: true,
            message: None,
            warnings,
        }
    }

    /// Runs the defaulters on `object`.
    pub fn fill(&self, object: &mut K) {
        for d in &self.defaulters {
            d(object);
        }
    }
}
