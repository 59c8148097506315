//! `/healthz`, `/livez` and `/readyz`: kube-apiserver's health endpoints, their checks one by one
//! (`/livez/etcd`) and their `verbose` and `exclude` lists, as apiserver's `healthz` package writes them.
//!
//! The checks are the ones kube-apiserver v1.35 registers, in its order; the in-memory server has nothing
//! that could fail, so every check passes.

/// The checks every endpoint lists, before the post-start hooks.
const BASE: [&str; 3] = ["ping", "log", "etcd"];

/// The checks only `/readyz` adds after [`BASE`].
const READY_EXTRA: [&str; 2] = ["etcd-readiness", "informer-sync"];

/// kube-apiserver's post-start hooks, each a check `poststarthook/<name>`, in the order it lists them.
const POST_START_HOOKS: [&str; 26] = [
    "start-apiserver-admission-initializer",
    "generic-apiserver-start-informers",
    "priority-and-fairness-config-consumer",
    "priority-and-fairness-filter",
    "storage-object-count-tracker-hook",
    "start-apiextensions-informers",
    "start-apiextensions-controllers",
    "crd-informer-synced",
    "start-system-namespaces-controller",
    "start-cluster-authentication-info-controller",
    "start-kube-apiserver-identity-lease-controller",
    "start-kube-apiserver-identity-lease-garbage-collector",
    "start-legacy-token-tracking-controller",
    "start-service-ip-repair-controllers",
    "rbac/bootstrap-roles",
    "scheduling/bootstrap-system-priority-classes",
    "priority-and-fairness-config-producer",
    "bootstrap-controller",
    "start-kubernetes-service-cidr-controller",
    "start-kube-aggregator-informers",
    "apiservice-status-local-available-controller",
    "apiservice-status-remote-available-controller",
    "apiservice-registration-controller",
    "apiservice-discovery-controller",
    "kube-apiserver-autoregistration",
    // Not a post-start hook: listed between them.
    "autoregister-completion",
];

/// The post-start hooks listed after `autoregister-completion`.
const LATE_HOOKS: [&str; 2] = [
    "apiservice-openapi-controller",
    "apiservice-openapiv3-controller",
];

/// The checks of an endpoint (`healthz`, `livez` or `readyz`), in kube-apiserver's order.
fn checks(endpoint: &str) -> Vec<String> {
    let mut checks: Vec<String> = BASE.iter().map(|c| c.to_string()).collect();
    if endpoint == "readyz" {
        checks.extend(READY_EXTRA.iter().map(|c| c.to_string()));
    }
    for hook in POST_START_HOOKS {
        checks.push(if hook == "autoregister-completion" {
            hook.to_string()
        } else {
            format!("poststarthook/{hook}")
        });
    }
    checks.extend(LATE_HOOKS.iter().map(|h| format!("poststarthook/{h}")));
    if endpoint == "readyz" {
        checks.push("shutdown".into());
    }
    checks
}

/// The answer to `GET /<endpoint>[/<check>]?<raw_query>`: a status code and its `text/plain` body (Go's
/// `404 page not found` when the path names no check).
pub fn respond(endpoint: &str, check: Option<&str>, raw_query: &str) -> (u16, String) {
    let checks = checks(endpoint);
    if let Some(check) = check {
        return if checks.iter().any(|c| c == check) {
            (200, "ok".to_string())
        } else {
            (404, "404 page not found\n".to_string())
        };
    }
    let mut verbose = false;
    let mut exclude: Vec<String> = Vec::new();
    for (key, value) in form_urlencoded::parse(raw_query.as_bytes()) {
        match &*key {
            "verbose" => verbose = true,
            // `exclude=a&exclude=b`; apiserver also splits each value at commas.
            "exclude" => exclude.extend(
                value
                    .split(',')
                    .map(str::trim)
                    .filter(|v| !v.is_empty())
                    .map(str::to_string),
            ),
            _ => {}
        }
    }
    if !verbose {
        return (200, "ok".to_string());
    }
    let mut body = String::new();
    for check in &checks {
        if exclude.contains(check) {
            body.push_str(&format!("[+]{check} excluded: ok\n"));
        } else {
            body.push_str(&format!("[+]{check} ok\n"));
        }
    }
    let unknown: Vec<String> = exclude
        .iter()
        .filter(|e| !checks.contains(e))
        .map(|e| format!("{e:?}"))
        .collect();
    if !unknown.is_empty() {
        body.push_str(&format!(
            "warn: some health checks cannot be excluded: no matches for {}\n",
            unknown.join(",")
        ));
    }
    body.push_str(&format!("{endpoint} check passed\n"));
    (200, body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbose_lists_every_check_and_the_verdict() {
        let (code, body) = respond("readyz", None, "verbose");
        assert_eq!(code, 200);
        let lines: Vec<&str> = body.lines().collect();
        assert_eq!(lines[0], "[+]ping ok");
        assert_eq!(lines[3], "[+]etcd-readiness ok");
        assert_eq!(lines[lines.len() - 2], "[+]shutdown ok");
        assert_eq!(lines[lines.len() - 1], "readyz check passed");
        let (_, livez) = respond("livez", None, "verbose=1&exclude=etcd&exclude=nope");
        assert!(livez.contains("[+]etcd excluded: ok\n"), "{livez}");
        assert!(livez.contains("no matches for \"nope\"\n"), "{livez}");
        assert!(!livez.contains("shutdown"), "{livez}");
    }

    #[test]
    fn one_check_answers_ok_and_an_unknown_one_is_not_found() {
        assert_eq!(
            respond("healthz", Some("poststarthook/rbac/bootstrap-roles"), ""),
            (200, "ok".into())
        );
        assert_eq!(respond("livez", Some("nope"), "").0, 404);
        assert_eq!(respond("healthz", None, ""), (200, "ok".into()));
    }
}
