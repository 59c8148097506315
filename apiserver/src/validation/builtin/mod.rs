//! kube-apiserver's validation of built-in kinds, the part of it this server has, one file per API group:
//! each rule is the Go rule of `pkg/apis/<group>/validation` (and apimachinery's metadata rules) with its
//! field path, its error type and its message, in the order kube-apiserver finds them, so a refused write
//! is the same `422 Invalid` on both servers. The crate docs list what is not validated.
//!
//! The object checked is the request's object after defaulting and the typed round trip; `old` is the
//! stored object on update. Names, owner references and finalizers are checked by the write pipeline.

mod apps;
mod apps_status;
mod autoscaling;
mod batch;
mod batch_status;
mod container;
mod coordination;
mod core;
mod core_status;
mod field;
mod formats;
mod ingress;
mod ip;
mod meta;
mod networking;
mod policy;
mod rbac;
mod security;
mod service;
mod service_allocator;
mod service_spec;
mod volumes;

use serde_json::Value;

use crate::error::Cause;
use crate::registry::ResourceType;

/// The causes of the rules of `rt`'s kind that `obj` breaks (on update, `old` being the stored object), in
/// kube-apiserver's order; empty when it breaks none.
pub(crate) fn causes(rt: &ResourceType, obj: &Value, old: Option<&Value>) -> Vec<Cause> {
    errors(rt, obj, old)
        .iter()
        .map(field::FieldError::cause)
        .collect()
}

/// The causes of a write to a built-in object's `status`: the common metadata checks, then the kind's status
/// rules (`ValidateXStatusUpdate`) for the kinds whose status rules this server has, else the rules of an
/// update.
pub(crate) fn status_causes(rt: &ResourceType, obj: &Value, old: &Value) -> Vec<Cause> {
    let Some(status_errs) = status_rules(rt, obj, old) else {
        return causes(rt, obj, Some(old));
    };
    let mut errs = meta::object(obj);
    errs.extend(meta::object_update(obj));
    errs.extend(status_errs);
    errs.iter().map(field::FieldError::cause).collect()
}

/// The status rules of `rt`'s kind (`None` for a kind without them here). Their metadata checks find nothing
/// beyond the common ones: a status write keeps the stored metadata.
fn status_rules(rt: &ResourceType, obj: &Value, old: &Value) -> Option<field::Errors> {
    use apps::Kind;
    let lb = |path: &str| &obj["status"][path];
    Some(match (rt.group.as_str(), rt.kind.as_str()) {
        ("apps", "Deployment") => apps_status::status_update(Kind::Deployment, obj, old),
        ("apps", "ReplicaSet") => apps_status::status_update(Kind::ReplicaSet, obj, old),
        ("apps", "DaemonSet") => apps_status::status_update(Kind::DaemonSet, obj, old),
        ("apps", "StatefulSet") => apps_status::status_update(Kind::StatefulSet, obj, old),
        ("batch", "Job") => batch_status::job_status_update(obj, old),
        // `cronJobStatusStrategy.ValidateUpdate` finds nothing.
        ("batch", "CronJob") => field::Errors::new(),
        ("", "Service") => core_status::service_status(obj, old),
        ("", "Namespace") => core_status::namespace_status(obj),
        ("", "PersistentVolumeClaim") => core_status::persistent_volume_claim_status(obj),
        ("", "Pod") => core_status::pod_status(obj, old),
        ("policy", "PodDisruptionBudget") => policy::pod_disruption_budget_status(obj),
        ("autoscaling", "HorizontalPodAutoscaler") => {
            autoscaling::horizontal_pod_autoscaler_status(obj)
        }
        ("networking.k8s.io", "Ingress") => core_status::load_balancer(
            lb("loadBalancer"),
            &old["status"]["loadBalancer"],
            "status.loadBalancer",
            None,
        ),
        _ => return None,
    })
}

fn errors(rt: &ResourceType, obj: &Value, old: Option<&Value>) -> field::Errors {
    let mut errs = field::Errors::new();
    if old.is_some() {
        // `rest.BeforeUpdate` checks the common metadata fields (`ValidateObjectMetaAccessor`, then its update
        // form) before the kind's own rules, which check them again: a bad label is reported several times.
        errs.extend(meta::object(obj));
        errs.extend(meta::object_update(obj));
    }
    errs.extend(kind_errors(rt, obj, old));
    errs
}

fn kind_errors(rt: &ResourceType, obj: &Value, old: Option<&Value>) -> field::Errors {
    use apps::Kind;
    let app = |kind: Kind| match old {
        None => apps::create(kind, obj),
        Some(old) => apps::update(kind, obj, old),
    };
    match (rt.group.as_str(), rt.kind.as_str(), old) {
        ("", "Namespace", None) => core::namespace(obj),
        ("", "ConfigMap", None) => core::config_map(obj),
        ("", "ConfigMap", Some(old)) => core::config_map_update(obj, old),
        ("", "Secret", None) => core::secret(obj),
        ("", "Secret", Some(old)) => core::secret_update(obj, old),
        ("", "Service", None) => service::create(obj),
        ("", "Service", Some(old)) => service::update(obj, old),
        ("", "PersistentVolumeClaim", Some(old)) => core::persistent_volume_claim_update(obj, old),
        ("", "Pod", None) => {
            let mut errs = meta::object(obj);
            errs.extend(core::pod_spec(&obj["spec"], "spec"));
            errs
        }
        ("", "Pod", Some(old)) => core::pod_update(obj, old),
        ("", "PodTemplate", None) => {
            let mut errs = meta::object(obj);
            errs.extend(core::pod_template(&obj["template"], "template"));
            errs
        }
        ("apps", "Deployment", _) => app(Kind::Deployment),
        ("apps", "ReplicaSet", _) => app(Kind::ReplicaSet),
        ("apps", "DaemonSet", _) => app(Kind::DaemonSet),
        ("apps", "StatefulSet", _) => app(Kind::StatefulSet),
        ("policy", "PodDisruptionBudget", old) => policy::pod_disruption_budget(obj, old.is_some()),
        ("networking.k8s.io", "NetworkPolicy", old) => networking::network_policy(obj, old),
        ("autoscaling", "HorizontalPodAutoscaler", old) => {
            autoscaling::horizontal_pod_autoscaler(obj, old)
        }
        ("networking.k8s.io", "Ingress", old) => ingress::ingress(obj, old),
        ("networking.k8s.io", "IngressClass", old) => ingress::ingress_class(obj, old),
        ("coordination.k8s.io", "Lease", old) => coordination::lease(obj, old.is_some()),
        ("batch", "Job", None) => batch::job(obj),
        ("batch", "Job", Some(old)) => batch::job_update(obj, old),
        ("batch", "CronJob", None) => batch::cron_job(obj),
        ("batch", "CronJob", Some(old)) => batch::cron_job_update(obj, old),
        ("rbac.authorization.k8s.io", "Role", old) => rbac::role(obj, true, old.is_some()),
        ("rbac.authorization.k8s.io", "ClusterRole", old) => rbac::role(obj, false, old.is_some()),
        ("rbac.authorization.k8s.io", "RoleBinding", None) => rbac::binding(obj, true),
        ("rbac.authorization.k8s.io", "ClusterRoleBinding", None) => rbac::binding(obj, false),
        ("rbac.authorization.k8s.io", "RoleBinding", Some(old)) => {
            rbac::binding_update(obj, old, true)
        }
        ("rbac.authorization.k8s.io", "ClusterRoleBinding", Some(old)) => {
            rbac::binding_update(obj, old, false)
        }
        // Every other kind: the metadata rules alone (an update, as most kinds' `ValidateXUpdate`, checks the
        // metadata's update rules, then the new object's).
        (_, _, None) => meta::object(obj),
        (_, _, Some(_)) => {
            let mut errs = meta::object_update(obj);
            errs.extend(meta::object(obj));
            errs
        }
    }
}

/// `IsDNS1035Label`'s messages for `value`.
pub(crate) fn dns1035_label(value: &str) -> Vec<String> {
    formats::dns1035_label(value)
}

/// What kube-apiserver's storage does to an update of `rt`'s kind before validating it: a Service keeps its
/// allocated cluster IPs when the update leaves them out.
pub(crate) fn prepare_update(rt: &ResourceType, new: &mut Value, old: &Value) {
    if rt.group.is_empty() && rt.kind == "Service" {
        service::keep_allocated(new, old);
    }
}

/// A Namespace's update keeps its `spec.finalizers` (only its `finalize` subresource changes them); on
/// kube-apiserver the strategy resets them after field management saw the request, so the request's
/// manager still owns them.
pub(crate) fn keep_namespace_finalizers(rt: &ResourceType, new: &mut Value, old: &Value) {
    if rt.is_namespace() {
        if new.get("spec").is_none_or(Value::is_null) {
            new["spec"] = Value::Object(Default::default());
        }
        if let Some(spec) = new.get_mut("spec").and_then(Value::as_object_mut) {
            match old.pointer("/spec/finalizers") {
                Some(f) => spec.insert("finalizers".into(), f.clone()),
                None => spec.remove("finalizers"),
            };
        }
    }
}

/// The defaults of the kinds whose rules need them: a binding's `roleRef` group and its subjects' groups, an
/// IngressClass's parameters' scope.
pub(crate) fn defaults(rt: &ResourceType, obj: &mut Value) {
    if rt.group == "rbac.authorization.k8s.io"
        && matches!(rt.kind.as_str(), "RoleBinding" | "ClusterRoleBinding")
    {
        rbac::binding_defaults(obj);
    }
    // `SetDefaults_IngressClass`: parameters without a scope are cluster-scoped.
    if rt.group == "networking.k8s.io"
        && rt.kind == "IngressClass"
        && let Some(params) = obj
            .pointer_mut("/spec/parameters")
            .and_then(Value::as_object_mut)
        && !params.contains_key("scope")
    {
        params.insert("scope".into(), Value::String("Cluster".into()));
    }
}

/// What is wrong with `name` as the name of an object of `rt`'s kind (the kind's `ValidateNameFunc`): a DNS-1035
/// label for Services, an RFC 1123 label for Namespaces and StatefulSets, a path segment for the RBAC kinds,
/// an RFC 1123 subdomain for every other kind.
pub(crate) fn name_messages(rt: &ResourceType, name: &str) -> Vec<String> {
    match (rt.group.as_str(), rt.kind.as_str()) {
        ("", "Service") => formats::dns1035_label(name),
        ("", "Namespace") | ("apps", "StatefulSet") => formats::dns1123_label(name),
        (
            "rbac.authorization.k8s.io",
            "Role" | "ClusterRole" | "RoleBinding" | "ClusterRoleBinding",
        ) => formats::path_segment(name),
        // `ValidateIPAddressName`: an IP address in canonical form.
        ("networking.k8s.io", "IPAddress") => match name.parse::<std::net::IpAddr>() {
            Ok(ip) if ip.to_string() == name => Vec::new(),
            Ok(_) => vec!["must be a canonical format IP address".into()],
            Err(_) => vec![format!("ParseAddr({name:?}): unable to parse IP")],
        },
        _ => formats::dns1123_subdomain(name),
    }
}
