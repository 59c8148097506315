//! Fault injection: make matching requests fail, slow down, or cut watches short.

use std::time::Duration;

use super::error::ApiError;
use super::request::{ResourceRequest, Verb};

/// What a fault does to a matching request.
#[derive(Debug, Clone, PartialEq)]
pub enum FaultAction {
    /// Answer with this error instead of serving the request.
    Fail(ApiError),
    /// Wait this long, then serve the request.
    Delay(Duration),
    /// Serve a watch, but end it after this long.
    EndWatchAfter(Duration),
}

/// A rule matching requests by verb, resource, subresource, namespace and name.
///
/// ```
/// use kubewright_apiserver::{Fault, Verb};
/// // The next two creates of ConfigMaps fail with 500.
/// let fault = Fault::on(Verb::Create).resource("configmaps").fail(500, "InternalError").times(2);
/// # let _ = fault;
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Fault {
    verbs: Vec<Verb>,
    resource: Option<String>,
    subresource: Option<String>,
    namespace: Option<String>,
    name: Option<String>,
    action: Option<FaultAction>,
    remaining: Option<usize>,
}

impl Fault {
    /// A fault on requests with this verb.
    pub fn on(verb: Verb) -> Self {
        Self::any().verb(verb)
    }

    /// A fault on every resource request.
    pub fn any() -> Self {
        Self {
            verbs: Vec::new(),
            resource: None,
            subresource: None,
            namespace: None,
            name: None,
            action: None,
            remaining: None,
        }
    }

    /// Also matches this verb.
    pub fn verb(mut self, verb: Verb) -> Self {
        self.verbs.push(verb);
        self
    }

    /// Only requests for this plural resource name (e.g. `configmaps`).
    pub fn resource(mut self, plural: &str) -> Self {
        self.resource = Some(plural.to_string());
        self
    }

    /// Only requests for this subresource (e.g. `status`).
    pub fn subresource(mut self, sub: &str) -> Self {
        self.subresource = Some(sub.to_string());
        self
    }

    /// Only requests in this namespace.
    pub fn namespace(mut self, ns: &str) -> Self {
        self.namespace = Some(ns.to_string());
        self
    }

    /// Only requests for the object with this name.
    pub fn name(mut self, name: &str) -> Self {
        self.name = Some(name.to_string());
        self
    }

    /// Fail with a status code and reason (message derived from them).
    pub fn fail(self, code: u16, reason: &str) -> Self {
        let message = format!("injected fault: {reason}");
        self.error(ApiError::new(code, reason, message))
    }

    /// Fail with this error.
    pub fn error(mut self, error: ApiError) -> Self {
        self.action = Some(FaultAction::Fail(error));
        self
    }

    /// Delay matching requests.
    pub fn delay(mut self, d: Duration) -> Self {
        self.action = Some(FaultAction::Delay(d));
        self
    }

    /// End matching watches after `d`.
    pub fn end_watch_after(mut self, d: Duration) -> Self {
        self.action = Some(FaultAction::EndWatchAfter(d));
        self
    }

    /// Apply to the next `n` matching requests only.
    pub fn times(mut self, n: usize) -> Self {
        self.remaining = Some(n);
        self
    }

    /// Whether the rule matches a request.
    pub fn matches(&self, req: &ResourceRequest) -> bool {
        (self.verbs.is_empty() || self.verbs.contains(&req.verb))
            && self.resource.as_ref().is_none_or(|r| r == &req.resource)
            && self.subresource.as_deref()
                == req
                    .subresource
                    .as_deref()
                    .filter(|_| self.subresource.is_some())
            && self
                .namespace
                .as_ref()
                .is_none_or(|n| Some(n) == req.namespace.as_ref())
            && self
                .name
                .as_ref()
                .is_none_or(|n| Some(n) == req.name.as_ref())
    }
}

/// The active faults.
#[derive(Debug, Default)]
pub struct Faults {
    rules: Vec<Fault>,
}

impl Faults {
    /// Adds a rule.
    pub fn add(&mut self, fault: Fault) {
        self.rules.push(fault);
    }

    /// Removes every rule.
    pub fn clear(&mut self) {
        self.rules.clear();
    }

    /// The actions for a request, consuming counted rules.
    pub fn take(&mut self, req: &ResourceRequest) -> Vec<FaultAction> {
        let mut actions = Vec::new();
        for rule in self.rules.iter_mut() {
            if rule.remaining == Some(0) || !rule.matches(req) {
                continue;
            }
            if let Some(n) = rule.remaining.as_mut() {
                *n -= 1;
            }
            if let Some(a) = &rule.action {
                actions.push(a.clone());
            }
        }
        self.rules.retain(|r| r.remaining != Some(0));
        actions
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(verb: Verb, resource: &str, sub: Option<&str>) -> ResourceRequest {
        ResourceRequest {
            verb,
            group: String::new(),
            version: "v1".into(),
            resource: resource.into(),
            subresource: sub.map(str::to_string),
            namespace: Some("ns".into()),
            name: Some("x".into()),
        }
    }

    #[test]
    fn counted_rules_expire() {
        let mut f = Faults::default();
        f.add(
            Fault::on(Verb::Create)
                .resource("configmaps")
                .fail(500, "InternalError")
                .times(1),
        );
        assert!(f.take(&req(Verb::Get, "configmaps", None)).is_empty());
        assert!(f.take(&req(Verb::Create, "secrets", None)).is_empty());
        assert_eq!(f.take(&req(Verb::Create, "configmaps", None)).len(), 1);
        assert!(f.take(&req(Verb::Create, "configmaps", None)).is_empty());
    }

    #[test]
    fn subresource_must_match_when_set() {
        let f = Fault::on(Verb::Update)
            .subresource("status")
            .fail(409, "Conflict");
        assert!(f.matches(&req(Verb::Update, "pods", Some("status"))));
        assert!(!f.matches(&req(Verb::Update, "pods", None)));
        let any = Fault::on(Verb::Update).fail(409, "Conflict");
        assert!(any.matches(&req(Verb::Update, "pods", Some("status"))));
    }
}
