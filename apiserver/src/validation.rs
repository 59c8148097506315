//! Content checks on writes: the k8s-openapi round trip for built-in kinds, the CRD schema for custom ones,
//! names, and the defaults the real server fills in for built-in kinds.

use std::sync::Arc;

use serde_json::{Value, json};

use super::admission;
use super::error::{ApiError, ApiResult, Cause};
use super::managed_fields;
use super::registry::ResourceType;
use super::schema::{self, Schema};
use super::strategic;

mod builtin;

/// What is wrong with `name` as the name of an object of `rt`'s kind, in kube-apiserver's words (nothing when
/// it is a valid name).
pub fn name_messages(rt: &ResourceType, name: &str) -> Vec<String> {
    builtin::name_messages(rt, name)
}

/// `IsDNS1035Label`'s messages for `value` (nothing when it is one).
pub fn dns1035_label_messages(value: &str) -> Vec<String> {
    builtin::dns1035_label(value)
}

/// What kube-apiserver's storage does to an update before validating it (a Service keeps its allocated cluster
/// IPs when the update leaves them out).
pub fn prepare_update(rt: &ResourceType, new: &mut Value, old: &Value) {
    builtin::prepare_update(rt, new, old);
}

/// A Namespace's update keeps its `spec.finalizers`, after field management has seen the request.
pub fn keep_namespace_finalizers(rt: &ResourceType, new: &mut Value, old: &Value) {
    builtin::keep_namespace_finalizers(rt, new, old);
}

/// What [`check`] found in an object it accepted.
#[derive(Debug, Default)]
pub struct Checked {
    /// The paths of unknown fields that were dropped.
    pub unknown: Vec<String>,
    /// Warnings of CEL rules that failed on values the update did not change (ratcheting).
    pub warnings: Vec<String>,
}

/// Defaults, prunes and (with `validate`) validates `obj` for `rt`, `old` being the stored object on update
/// (for CEL transition rules and ratcheting); `status` for a write of the `status` subresource (a built-in
/// kind's status rules).
pub fn check(
    rt: &ResourceType,
    obj: &mut Value,
    old: Option<&Value>,
    name: &str,
    validate: bool,
    status: bool,
) -> ApiResult<Checked> {
    if let Some(s) = &rt.schema {
        return check_custom(rt, s, obj, old, name, validate);
    }
    let Some(typed) = rt.typed else {
        return Ok(Checked::default());
    };
    builtin_defaults(rt, obj);
    let normalized = typed(obj.clone()).map_err(|e| {
        ApiError::bad_request(format!(
            "{kind} in version \"{v}\" cannot be handled as a {kind}: {e}",
            kind = rt.kind,
            v = rt.version
        ))
    })?;
    let mut unknown = Vec::new();
    unknown_fields(obj, &normalized, String::new(), &mut unknown);
    if validate {
        // Webhook configurations are validated as sent (the typed round trip fills absent required fields),
        // the other kinds after it (quantities in canonical form, absent and empty alike).
        let mut causes = if is_webhook_configuration(rt) {
            admission::validate_configuration(&rt.kind, obj, old)
        } else {
            match old {
                Some(old) if status => builtin::status_causes(rt, &normalized, old),
                _ => builtin::causes(rt, &normalized, old),
            }
        };
        if rt.group == "admissionregistration.k8s.io" && rt.kind == "ValidatingAdmissionPolicy" {
            causes.extend(admission::validate_policy(&normalized));
        }
        if !causes.is_empty() {
            return Err(ApiError::invalid(&rt.kind, &rt.group, name, causes));
        }
    }
    *obj = normalized;
    Ok(Checked {
        unknown,
        warnings: Vec::new(),
    })
}

/// The fields of `obj` that `rt`'s schema does not declare (`spec.foo`, `spec.items[0].x`), sorted; none for a
/// built-in object that does not decode (what server-side apply checks before merging a configuration).
pub fn undeclared_paths(rt: &ResourceType, obj: &Value) -> Vec<String> {
    if let Some(s) = &rt.schema {
        let mut pruned = obj.clone();
        return s.prune(&mut pruned);
    }
    let Some(typed) = rt.typed else {
        return Vec::new();
    };
    let Ok(normalized) = typed(obj.clone()) else {
        return Vec::new();
    };
    let mut unknown = Vec::new();
    unknown_fields(obj, &normalized, String::new(), &mut unknown);
    unknown.sort();
    unknown
}

/// The causes of the checks a kind has of its own (webhook configurations', a built-in kind's rules), on `obj` as sent for a create,
/// defaulted first: for the request refused for its metadata, whose causes kube-apiserver lists with these.
pub fn kind_causes(rt: &ResourceType, obj: &Value) -> Vec<Cause> {
    let mut defaulted = obj.clone();
    builtin_defaults(rt, &mut defaulted);
    if is_webhook_configuration(rt) {
        return admission::validate_configuration(&rt.kind, &defaulted, None);
    }
    if rt.schema.is_some() || rt.typed.is_none() {
        return Vec::new();
    }
    builtin::causes(rt, &defaulted, None)
}

fn is_webhook_configuration(rt: &ResourceType) -> bool {
    rt.group == "admissionregistration.k8s.io"
        && matches!(
            rt.kind.as_str(),
            "ValidatingWebhookConfiguration" | "MutatingWebhookConfiguration"
        )
}

fn check_custom(
    rt: &ResourceType,
    s: &Schema,
    obj: &mut Value,
    old: Option<&Value>,
    name: &str,
    validate: bool,
) -> ApiResult<Checked> {
    if !obj.is_object() {
        return Err(ApiError::bad_request("Object 'Kind' is missing in 'null'"));
    }
    let unknown = s.prune(obj);
    s.apply_defaults(obj);
    if !validate {
        return Ok(Checked {
            unknown,
            warnings: Vec::new(),
        });
    }
    let errors = s.validate_update(obj, old);
    let cause = |e: &schema::FieldError| Cause {
        reason: e.reason().to_string(),
        message: e.body(),
        field: e.field.clone(),
    };
    let mut causes: Vec<Cause> = errors.iter().map(cause).collect();
    causes.extend(scale_causes(rt, obj));
    // Then the CEL rules, as apiextensions' strategy does, on the old object as stored.
    let (rule_errors, warnings) = s.validate_rules(obj, old, &errors);
    causes.extend(rule_errors.iter().map(cause));
    if causes.is_empty() {
        return Ok(Checked { unknown, warnings });
    }
    Err(ApiError::invalid(&rt.kind, &rt.group, name, causes))
}

/// The checks apiextensions-apiserver makes on the fields behind a `scale` subresource, after the schema's:
/// the replica counts are integers from 0 to 2^31-1, the label selector a string (where present).
fn scale_causes(rt: &ResourceType, obj: &Value) -> Vec<Cause> {
    let Some(scale) = &rt.scale else {
        return Vec::new();
    };
    let mut causes = Vec::new();
    for path in [&scale.spec_replicas_path, &scale.status_replicas_path] {
        let field = format!(".{path}");
        let invalid = |value: &str, why: String| Cause {
            reason: "FieldValueInvalid".into(),
            message: format!("Invalid value: {value}: {why}"),
            field: field.clone(),
        };
        match nested(obj, path) {
            Ok(None) => {}
            Ok(Some(v)) => match v.as_i64() {
                Some(n) if n < 0 => causes.push(invalid(
                    &n.to_string(),
                    "should be a non-negative integer".into(),
                )),
                Some(n) if n > i64::from(i32::MAX) => causes.push(invalid(
                    &n.to_string(),
                    format!("should be less than or equal to {}", i32::MAX),
                )),
                Some(_) => {}
                None => causes.push(invalid("0", accessor_error(path, v, "int64"))),
            },
            Err(why) => causes.push(invalid("0", why)),
        }
    }
    if let Some(path) = &scale.label_selector_path {
        let err = match nested(obj, path) {
            Ok(Some(v)) if !v.is_string() => Some(accessor_error(path, v, "string")),
            Ok(_) => None,
            Err(why) => Some(why),
        };
        if let Some(why) = err {
            causes.push(Cause {
                reason: "FieldValueInvalid".into(),
                message: format!("Invalid value: \"\": {why}"),
                field: format!(".{path}"),
            });
        }
    }
    causes
}

/// `unstructured.NestedFieldNoCopy`: the value at a dotted path, `None` when absent, an accessor error when
/// something on the way is not an object.
fn nested<'v>(obj: &'v Value, path: &str) -> Result<Option<&'v Value>, String> {
    let fields: Vec<&str> = path.split('.').collect();
    let mut at = obj;
    for (i, field) in fields.iter().enumerate() {
        match at {
            Value::Object(m) => match m.get(*field) {
                Some(v) => at = v,
                None => return Ok(None),
            },
            Value::Null => return Ok(None),
            other => {
                return Err(accessor_error(
                    &fields[..=i].join("."),
                    other,
                    "map[string]interface{}",
                ));
            }
        }
    }
    Ok(Some(at))
}

/// `.spec.replicas accessor error: three is of the type string, expected int64`, as Go formats it.
fn accessor_error(path: &str, v: &Value, expected: &str) -> String {
    let (shown, ty) = match v {
        Value::String(s) => (s.clone(), "string"),
        Value::Bool(b) => (b.to_string(), "bool"),
        Value::Number(n) => (n.to_string(), if n.is_f64() { "float64" } else { "int64" }),
        Value::Array(_) => (v.to_string(), "[]interface {}"),
        Value::Object(_) => (v.to_string(), "map[string]interface {}"),
        Value::Null => ("<nil>".into(), "<nil>"),
    };
    format!(".{path} accessor error: {shown} is of the type {ty}, expected {expected}")
}

/// Paths present in `input` but not in `output`.
fn unknown_fields(input: &Value, output: &Value, path: String, out: &mut Vec<String>) {
    match (input, output) {
        (Value::Object(i), Value::Object(o)) => {
            for (k, v) in i {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                match o.get(k) {
                    Some(ov) => unknown_fields(v, ov, p, out),
                    None if v.is_null() => {}
                    // Known empty maps and lists (`labels: {}` after a patch removed the last label) are left out
                    // by the typed round trip as Go leaves them out; they are not unknown.
                    None if v.as_object().is_some_and(|m| m.is_empty())
                        || v.as_array().is_some_and(|a| a.is_empty()) => {}
                    None => out.push(p),
                }
            }
        }
        (Value::Array(i), Value::Array(o)) if i.len() == o.len() => {
            for (n, (a, b)) in i.iter().zip(o).enumerate() {
                unknown_fields(a, b, format!("{path}[{n}]"), out);
            }
        }
        _ => {}
    }
}

/// Sets `key` when it is absent or null (Go decodes a null into the zero value its defaulting fills).
fn set_default(obj: &mut Value, key: &str, value: Value) {
    if let Some(m) = obj.as_object_mut() {
        let slot = m.entry(key.to_string()).or_insert(Value::Null);
        if slot.is_null() {
            *slot = value;
        }
    }
}

fn pod_spec_defaults(spec: &mut Value) {
    if !spec.is_object() {
        return;
    }
    set_default(spec, "restartPolicy", json!("Always"));
    set_default(spec, "terminationGracePeriodSeconds", json!(30));
    set_default(spec, "dnsPolicy", json!("ClusterFirst"));
    set_default(spec, "securityContext", json!({}));
    set_default(spec, "schedulerName", json!("default-scheduler"));
    for list in ["containers", "initContainers"] {
        if let Some(cs) = spec[list].as_array_mut() {
            for c in cs.iter_mut().filter(|c| c.is_object()) {
                let image = c["image"].as_str().unwrap_or("").to_string();
                let tag = image.rsplit('/').next().unwrap_or("");
                let latest = !tag.contains(':') || tag.ends_with(":latest");
                let policy = if latest && !image.contains('@') {
                    "Always"
                } else {
                    "IfNotPresent"
                };
                set_default(c, "imagePullPolicy", json!(policy));
                set_default(c, "terminationMessagePath", json!("/dev/termination-log"));
                set_default(c, "terminationMessagePolicy", json!("File"));
                set_default(c, "resources", json!({}));
                if let Some(ports) = c["ports"].as_array_mut() {
                    for p in ports.iter_mut() {
                        set_default(p, "protocol", json!("TCP"));
                    }
                }
            }
        }
    }
}

/// `SetDefaults_Pod`: what a Pod gets and a pod template does not. A container's limits fill in its missing
/// requests, `enableServiceLinks` is true when unset, and with the host's network a port's `hostPort` is its
/// `containerPort`. (Pod-level `resources` get no defaults here.)
fn pod_only_defaults(spec: &mut Value) {
    if !spec.is_object() {
        return;
    }
    let host_network = spec["hostNetwork"].as_bool() == Some(true);
    for list in ["containers", "initContainers"] {
        let Some(cs) = spec[list].as_array_mut() else {
            continue;
        };
        for c in cs.iter_mut().filter(|c| c.is_object()) {
            let resources = &mut c["resources"];
            if let Some(limits) = resources["limits"].as_object().cloned() {
                if !resources["requests"].is_object() {
                    resources["requests"] = json!({});
                }
                if let Some(requests) = resources["requests"].as_object_mut() {
                    for (name, quantity) in limits {
                        requests.entry(name).or_insert(quantity);
                    }
                }
            }
            if host_network && let Some(ports) = c["ports"].as_array_mut() {
                for p in ports.iter_mut().filter(|p| p.is_object()) {
                    if p["hostPort"].as_i64().unwrap_or(0) == 0 {
                        p["hostPort"] = p["containerPort"].clone();
                    }
                }
            }
        }
    }
    set_default(spec, "enableServiceLinks", json!(true));
}

/// A Secret's `stringData` is write-only: kube-apiserver merges it into `data` (base64, its keys winning over
/// `data`'s) and never stores it.
fn merge_string_data(obj: &mut Value) {
    use base64::Engine;
    let Some(string_data) = obj.as_object_mut().and_then(|m| m.remove("stringData")) else {
        return;
    };
    let Some(entries) = string_data.as_object() else {
        return;
    };
    if entries.is_empty() {
        return;
    }
    if !obj["data"].is_object() {
        obj["data"] = json!({});
    }
    for (key, value) in entries {
        if let Some(text) = value.as_str() {
            obj["data"][key] = json!(base64::engine::general_purpose::STANDARD.encode(text));
        }
    }
}

/// A Deployment's `strategy` as kube-apiserver defaults it: the type `RollingUpdate` when unset (also in an
/// empty `strategy: {}`, which kubectl's `create deployment` sends), and 25% for an unset `maxUnavailable` or
/// `maxSurge` of a rolling update.
fn deployment_strategy_defaults(spec: &mut Value) {
    if !spec["strategy"].is_object() {
        spec["strategy"] = json!({});
    }
    let strategy = &mut spec["strategy"];
    set_default(strategy, "type", json!("RollingUpdate"));
    if strategy["type"] == "RollingUpdate" {
        if !strategy["rollingUpdate"].is_object() {
            strategy["rollingUpdate"] = json!({});
        }
        let rolling = &mut strategy["rollingUpdate"];
        set_default(rolling, "maxUnavailable", json!("25%"));
        set_default(rolling, "maxSurge", json!("25%"));
    }
}

/// The defaults kube-apiserver fills in for the built-in kinds operators manage most often (Pod templates,
/// PodTemplates, ReplicationControllers, bindings' groups, Deployments, StatefulSets, CronJobs, Services, Secrets' `stringData`), so that semantic comparisons meet what a real cluster returns.
pub fn builtin_defaults(rt: &ResourceType, obj: &mut Value) {
    match (rt.group.as_str(), rt.kind.as_str()) {
        ("", "Pod") => {
            pod_spec_defaults(&mut obj["spec"]);
            pod_only_defaults(&mut obj["spec"]);
        }
        ("", "Secret") => {
            merge_string_data(obj);
            set_default(obj, "type", json!("Opaque"));
        }
        ("flowcontrol.apiserver.k8s.io", "FlowSchema") => flow_schema_defaults(obj),
        ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration") => {
            priority_level_defaults(obj)
        }
        ("apps", "Deployment") => {
            let spec = &mut obj["spec"];
            if !spec.is_object() {
                return;
            }
            set_default(spec, "replicas", json!(1));
            set_default(spec, "revisionHistoryLimit", json!(10));
            set_default(spec, "progressDeadlineSeconds", json!(600));
            deployment_strategy_defaults(spec);
            pod_spec_defaults(&mut spec["template"]["spec"]);
        }
        ("apps", "StatefulSet") => {
            let spec = &mut obj["spec"];
            if !spec.is_object() {
                return;
            }
            set_default(spec, "replicas", json!(1));
            set_default(spec, "podManagementPolicy", json!("OrderedReady"));
            set_default(spec, "revisionHistoryLimit", json!(10));
            // As Go defaults it: a type when unset (also in an empty `updateStrategy: {}`, which Go writes into
            // every protobuf body), with a rolling update whose partition is 0.
            if !spec["updateStrategy"].is_object() {
                spec["updateStrategy"] = json!({});
            }
            let strategy = &mut spec["updateStrategy"];
            if strategy["type"].as_str().is_none_or(str::is_empty) {
                strategy["type"] = json!("RollingUpdate");
                set_default(strategy, "rollingUpdate", json!({}));
            }
            if strategy["type"] == "RollingUpdate" && strategy["rollingUpdate"].is_object() {
                set_default(&mut strategy["rollingUpdate"], "partition", json!(0));
            }
            pod_spec_defaults(&mut spec["template"]["spec"]);
        }
        ("batch", "CronJob") => {
            let spec = &mut obj["spec"];
            if !spec.is_object() {
                return;
            }
            set_default(spec, "concurrencyPolicy", json!("Allow"));
            set_default(spec, "suspend", json!(false));
            set_default(spec, "successfulJobsHistoryLimit", json!(3));
            set_default(spec, "failedJobsHistoryLimit", json!(1));
            if spec["jobTemplate"]["spec"]["template"]["spec"].is_object() {
                pod_spec_defaults(&mut spec["jobTemplate"]["spec"]["template"]["spec"]);
            }
        }
        ("", "PodTemplate") if obj["template"]["spec"].is_object() => {
            pod_spec_defaults(&mut obj["template"]["spec"]);
        }
        ("", "ReplicationController") if obj["spec"]["template"]["spec"].is_object() => {
            pod_spec_defaults(&mut obj["spec"]["template"]["spec"]);
        }
        ("apps", "DaemonSet") | ("apps", "ReplicaSet") | ("batch", "Job")
            if obj["spec"]["template"]["spec"].is_object() =>
        {
            pod_spec_defaults(&mut obj["spec"]["template"]["spec"]);
        }
        ("rbac.authorization.k8s.io", "RoleBinding" | "ClusterRoleBinding")
        | ("networking.k8s.io", "IngressClass") => {
            builtin::defaults(rt, obj);
        }
        ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration") => {
            admission::default_configuration(obj, false);
        }
        ("admissionregistration.k8s.io", "MutatingWebhookConfiguration") => {
            admission::default_configuration(obj, true);
        }
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy") => {
            admission::default_policy(obj, false);
        }
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding") => {
            admission::default_policy(obj, true);
        }
        ("", "Service") => {
            let spec = &mut obj["spec"];
            if !spec.is_object() {
                return;
            }
            set_default(spec, "type", json!("ClusterIP"));
            set_default(spec, "sessionAffinity", json!("None"));
            if spec["sessionAffinity"] == "None"
                && let Some(s) = spec.as_object_mut()
            {
                s.remove("sessionAffinityConfig");
            }
            if spec["sessionAffinity"] == "ClientIP"
                && spec["sessionAffinityConfig"]["clientIP"]["timeoutSeconds"].is_null()
            {
                spec["sessionAffinityConfig"] = json!({"clientIP": {"timeoutSeconds": 10800}});
            }
            let external = matches!(spec["type"].as_str(), Some("NodePort" | "LoadBalancer"))
                || (spec["type"] == "ClusterIP"
                    && spec["externalIPs"]
                        .as_array()
                        .is_some_and(|a| !a.is_empty()));
            if external
                && spec["externalTrafficPolicy"]
                    .as_str()
                    .is_none_or(str::is_empty)
            {
                spec["externalTrafficPolicy"] = json!("Cluster");
            }
            if matches!(
                spec["type"].as_str(),
                Some("ClusterIP" | "NodePort" | "LoadBalancer")
            ) {
                set_default(spec, "internalTrafficPolicy", json!("Cluster"));
            }
            if spec["type"] == "LoadBalancer" {
                set_default(spec, "allocateLoadBalancerNodePorts", json!(true));
            }
            if let Some(ports) = spec["ports"].as_array_mut() {
                for p in ports.iter_mut().filter(|p| p.is_object()) {
                    set_default(p, "protocol", json!("TCP"));
                    // A zero target port (`0` or `""`) is the port, as an absent one.
                    if p["targetPort"] == 0 || p["targetPort"] == "" {
                        p["targetPort"] = p["port"].clone();
                    }
                    let port = p["port"].clone();
                    set_default(p, "targetPort", port);
                }
            }
            // A load balancer's ingress with an IP is a `VIP` unless it says otherwise.
            if obj["spec"]["type"] == "LoadBalancer"
                && let Some(ingress) = obj
                    .pointer_mut("/status/loadBalancer/ingress")
                    .and_then(Value::as_array_mut)
            {
                for entry in ingress.iter_mut().filter(|e| {
                    e["ip"].as_str().is_some_and(|ip| !ip.is_empty()) && e["ipMode"].is_null()
                }) {
                    entry["ipMode"] = json!("VIP");
                }
            }
        }
        _ => {}
    }
}

fn convert_list_type(t: schema::ListType) -> managed_fields::ListType {
    match t {
        schema::ListType::Atomic => managed_fields::ListType::Atomic,
        schema::ListType::Set => managed_fields::ListType::Set,
        schema::ListType::Map(keys) => managed_fields::ListType::Map(keys),
    }
}

fn convert_builtin_list_type(t: strategic::ListType) -> managed_fields::ListType {
    match t {
        strategic::ListType::Atomic => managed_fields::ListType::Atomic,
        strategic::ListType::Set => managed_fields::ListType::Set,
        strategic::ListType::Map(keys) => managed_fields::ListType::Map(keys),
    }
}

/// Field-management schema of a custom resource, from its CRD.
pub struct CustomSchema(pub Arc<Schema>);

impl managed_fields::Schema for CustomSchema {
    fn list_type(&self, path: &[&str]) -> managed_fields::ListType {
        match path {
            ["metadata", "finalizers"] => managed_fields::ListType::Set,
            ["metadata", "ownerReferences"] => managed_fields::ListType::Map(vec!["uid".into()]),
            _ => convert_list_type(self.0.list_type(path)),
        }
    }

    fn map_is_atomic(&self, path: &[&str]) -> bool {
        self.0.map_is_atomic(path)
    }

    fn list_key_default(&self, path: &[&str], key: &str) -> Option<Value> {
        self.0.list_key_default(path, key)
    }
}

/// Field-management schema of a built-in kind.
pub struct BuiltinSchema {
    /// The kind's group.
    pub group: String,
    /// The kind.
    pub kind: String,
}

impl managed_fields::Schema for BuiltinSchema {
    fn list_type(&self, path: &[&str]) -> managed_fields::ListType {
        convert_builtin_list_type(strategic::builtin_list_type(&self.group, &self.kind, path))
    }

    /// Every built-in associative list keyed by `protocol` (container, Service and endpoint ports)
    /// defaults it to `TCP`.
    fn list_key_default(&self, _path: &[&str], key: &str) -> Option<Value> {
        (key == "protocol").then(|| json!("TCP"))
    }
}

/// `pkg/apis/flowcontrol/v1`'s `SetDefaults_FlowSchemaSpec`: a `matchingPrecedence` of 0 is 1000.
fn flow_schema_defaults(obj: &mut Value) {
    let Some(spec) = obj.get_mut("spec").filter(|s| s.is_object()) else {
        return;
    };
    if spec["matchingPrecedence"].as_i64().unwrap_or(0) == 0 {
        spec["matchingPrecedence"] = json!(1000);
    }
}

/// `pkg/apis/flowcontrol/v1`'s defaults of a priority level: shares (30 when limited, 0 when exempt), a
/// lendable percent of 0, and the queuing's hand size 8, 64 queues and a queue length limit of 50.
fn priority_level_defaults(obj: &mut Value) {
    let Some(spec) = obj.get_mut("spec") else {
        return;
    };
    if let Some(exempt) = spec.get_mut("exempt").filter(|e| e.is_object()) {
        set_default(exempt, "nominalConcurrencyShares", json!(0));
        set_default(exempt, "lendablePercent", json!(0));
    }
    if let Some(limited) = spec.get_mut("limited").filter(|l| l.is_object()) {
        set_default(limited, "nominalConcurrencyShares", json!(30));
        set_default(limited, "lendablePercent", json!(0));
        if let Some(queuing) = limited
            .get_mut("limitResponse")
            .and_then(|r| r.get_mut("queuing"))
            .filter(|q| q.is_object())
        {
            for (field, default) in [("handSize", 8), ("queues", 64), ("queueLengthLimit", 50)] {
                if queuing[field].as_i64().unwrap_or(0) == 0 {
                    queuing[field] = json!(default);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_field_paths() {
        let mut out = Vec::new();
        unknown_fields(
            &json!({"a": 1, "b": {"c": 1, "d": 2}, "e": [{"f": 1, "g": 2}], "n": null}),
            &json!({"a": 1, "b": {"c": 1}, "e": [{"f": 1}]}),
            String::new(),
            &mut out,
        );
        assert_eq!(out, vec!["b.d", "e[0].g"]);
    }

    #[test]
    fn deployment_defaults() {
        let reg = super::super::registry::Registry::with_builtins();
        let rt = reg.get("apps", "v1", "deployments").unwrap();
        let mut d = json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "image": "nginx:1.2", "ports": [{"containerPort": 80}]}]}}}});
        builtin_defaults(&rt, &mut d);
        assert_eq!(d["spec"]["replicas"], 1);
        let c = &d["spec"]["template"]["spec"]["containers"][0];
        assert_eq!(c["imagePullPolicy"], "IfNotPresent");
        assert_eq!(c["ports"][0]["protocol"], "TCP");
        // A template's containers keep their requests as written, and no service links are set.
        assert!(d["spec"]["template"]["spec"]["enableServiceLinks"].is_null());
    }

    #[test]
    fn pod_defaults_fill_requests_from_limits() {
        let reg = super::super::registry::Registry::with_builtins();
        let rt = reg.get("", "v1", "pods").unwrap();
        let mut pod = json!({"spec": {"hostNetwork": true, "enableServiceLinks": null, "containers": [
            {"name": "a", "image": "x", "ports": [{"containerPort": 8080}],
                "resources": {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "100m"}}}],
            "initContainers": [{"name": "b", "image": "x", "resources": {"limits": {"cpu": "2"}}}]}});
        builtin_defaults(&rt, &mut pod);
        let spec = &pod["spec"];
        assert_eq!(
            spec["containers"][0]["resources"]["requests"],
            json!({"cpu": "100m", "memory": "1Gi"})
        );
        assert_eq!(
            spec["initContainers"][0]["resources"]["requests"],
            json!({"cpu": "2"})
        );
        assert_eq!(spec["containers"][0]["ports"][0]["hostPort"], 8080);
        assert_eq!(spec["enableServiceLinks"], true);
    }
}
