//! The core/v1 kinds kubectl's generators create: ConfigMap, Secret, Namespace, ServiceAccount, Service, Pod,
//! and the pod template the workloads share.

use std::collections::BTreeMap;

use base64::Engine;
use k8s_pb::api::core::v1::{
    ConfigMap, Container, ContainerPort, EnvVar, LocalObjectReference, Namespace, NamespaceSpec,
    ObjectReference, Pod, PodSpec, PodTemplateSpec, ResourceRequirements, Secret, Service,
    ServiceAccount, ServicePort, ServiceSpec,
};
use serde_json::Value;

use super::error::Result;
use super::json::{Obj, Ptr, list, opt, refuse};
use super::meta::{int_or_string, object_meta, quantities};

/// A ConfigMap.
pub(super) fn config_map(m: ConfigMap) -> Result<Value> {
    let ConfigMap {
        metadata,
        immutable,
        data,
        binary_data,
    } = m;
    Ok(Obj::new()
        .put("metadata", opt(metadata, object_meta)?)
        .put("immutable", Ptr(immutable))
        .put("data", data)
        .put("binaryData", bytes(binary_data))
        .done())
}

/// A Secret: `data` is base64 in JSON.
pub(super) fn secret(m: Secret) -> Result<Value> {
    let Secret {
        metadata,
        immutable,
        data,
        string_data,
        r#type,
    } = m;
    Ok(Obj::new()
        .put("metadata", opt(metadata, object_meta)?)
        .put("immutable", Ptr(immutable))
        .put("data", bytes(data))
        .put("stringData", string_data)
        .put("type", r#type)
        .done())
}

fn bytes(m: BTreeMap<String, Vec<u8>>) -> Option<Value> {
    let engine = base64::engine::general_purpose::STANDARD;
    (!m.is_empty()).then(|| {
        Value::Object(
            m.into_iter()
                .map(|(k, v)| (k, Value::String(engine.encode(v))))
                .collect(),
        )
    })
}

/// A Namespace.
pub(super) fn namespace(m: Namespace) -> Result<Value> {
    let Namespace {
        metadata,
        spec,
        // Reset on create and kept on update by kube-apiserver (see the module documentation).
        status: _,
    } = m;
    let spec = opt(spec, |NamespaceSpec { finalizers }| {
        Ok(Obj::new().put("finalizers", finalizers).done())
    })?;
    Ok(Obj::new()
        .put("metadata", opt(metadata, object_meta)?)
        .put("spec", spec)
        .done())
}

/// A ServiceAccount.
pub(super) fn service_account(m: ServiceAccount) -> Result<Value> {
    let ServiceAccount {
        metadata,
        secrets,
        image_pull_secrets,
        automount_service_account_token,
    } = m;
    Ok(Obj::new()
        .put("metadata", opt(metadata, object_meta)?)
        .put("secrets", list(secrets, object_reference)?)
        .put(
            "imagePullSecrets",
            list(image_pull_secrets, local_reference)?,
        )
        .put(
            "automountServiceAccountToken",
            Ptr(automount_service_account_token),
        )
        .done())
}

fn object_reference(r: ObjectReference) -> Result<Value> {
    let ObjectReference {
        kind,
        namespace,
        name,
        uid,
        api_version,
        resource_version,
        field_path,
    } = r;
    Ok(Obj::new()
        .put("kind", kind)
        .put("namespace", namespace)
        .put("name", name)
        .put("uid", uid)
        .put("apiVersion", api_version)
        .put("resourceVersion", resource_version)
        .put("fieldPath", field_path)
        .done())
}

fn local_reference(r: LocalObjectReference) -> Result<Value> {
    let LocalObjectReference { name } = r;
    Ok(Obj::new().put("name", name).done())
}

/// A Service.
pub(super) fn service(m: Service) -> Result<Value> {
    let Service {
        metadata,
        spec,
        // Reset on create and kept on update by kube-apiserver (see the module documentation).
        status: _,
    } = m;
    Ok(Obj::new()
        .put("metadata", opt(metadata, object_meta)?)
        .put("spec", opt(spec, service_spec)?)
        .done())
}

fn service_spec(s: ServiceSpec) -> Result<Value> {
    let ServiceSpec {
        ports,
        selector,
        cluster_ip,
        cluster_ips,
        r#type,
        external_ips,
        session_affinity,
        load_balancer_ip,
        load_balancer_source_ranges,
        external_name,
        external_traffic_policy,
        health_check_node_port,
        publish_not_ready_addresses,
        session_affinity_config,
        ip_families,
        ip_family_policy,
        allocate_load_balancer_node_ports,
        load_balancer_class,
        internal_traffic_policy,
        traffic_distribution,
    } = s;
    refuse("spec.sessionAffinityConfig", &session_affinity_config)?;
    Ok(Obj::new()
        .put("ports", list(ports, service_port)?)
        .put("selector", selector)
        .put("clusterIP", cluster_ip)
        .put("clusterIPs", cluster_ips)
        .put("type", r#type)
        .put("externalIPs", external_ips)
        .put("sessionAffinity", session_affinity)
        .put("loadBalancerIP", load_balancer_ip)
        .put("loadBalancerSourceRanges", load_balancer_source_ranges)
        .put("externalName", external_name)
        .put("externalTrafficPolicy", external_traffic_policy)
        .put("healthCheckNodePort", health_check_node_port)
        .put("publishNotReadyAddresses", publish_not_ready_addresses)
        .put("ipFamilies", ip_families)
        .put("ipFamilyPolicy", ip_family_policy)
        .put(
            "allocateLoadBalancerNodePorts",
            Ptr(allocate_load_balancer_node_ports),
        )
        .put("loadBalancerClass", load_balancer_class)
        .put("internalTrafficPolicy", internal_traffic_policy)
        .put("trafficDistribution", traffic_distribution)
        .done())
}

fn service_port(p: ServicePort) -> Result<Value> {
    let ServicePort {
        name,
        protocol,
        app_protocol,
        port,
        target_port,
        node_port,
    } = p;
    Ok(Obj::new()
        .put("name", name)
        .put("protocol", protocol)
        .put("appProtocol", app_protocol)
        .put("port", port)
        .put("targetPort", opt(target_port, int_or_string)?)
        .put("nodePort", node_port)
        .done())
}

/// A Pod.
pub(super) fn pod(m: Pod) -> Result<Value> {
    let Pod {
        metadata,
        spec,
        // Reset on create and kept on update by kube-apiserver (see the module documentation).
        status: _,
    } = m;
    Ok(Obj::new()
        .put("metadata", opt(metadata, object_meta)?)
        .put("spec", opt(spec, |s| pod_spec("spec", s))?)
        .done())
}

/// A pod template (`spec.template` of workloads), `path` its place in the object.
pub(super) fn pod_template(path: &str, t: PodTemplateSpec) -> Result<Value> {
    let PodTemplateSpec { metadata, spec } = t;
    Ok(Obj::new()
        .put("metadata", opt(metadata, object_meta)?)
        .put("spec", opt(spec, |s| pod_spec(&format!("{path}.spec"), s))?)
        .done())
}

/// The fields of a pod spec that kubectl's generators and simple manifests set; the others are refused.
fn pod_spec(path: &str, s: PodSpec) -> Result<Value> {
    let PodSpec {
        volumes,
        init_containers,
        containers,
        ephemeral_containers,
        restart_policy,
        termination_grace_period_seconds,
        active_deadline_seconds,
        dns_policy,
        node_selector,
        service_account_name,
        service_account,
        automount_service_account_token,
        node_name,
        host_network,
        host_pid,
        host_ipc,
        share_process_namespace,
        security_context,
        image_pull_secrets,
        hostname,
        subdomain,
        affinity,
        scheduler_name,
        tolerations,
        host_aliases,
        priority_class_name,
        priority,
        dns_config,
        readiness_gates,
        runtime_class_name,
        enable_service_links,
        preemption_policy,
        overhead,
        topology_spread_constraints,
        set_hostname_as_fqdn,
        os,
        host_users,
        scheduling_gates,
        resource_claims,
        resources,
        hostname_override,
        workload_ref,
    } = s;
    let at = |field: &str| format!("{path}.{field}");
    refuse(&at("volumes"), &volumes)?;
    refuse(&at("ephemeralContainers"), &ephemeral_containers)?;
    refuse(&at("securityContext"), &security_context)?;
    refuse(&at("affinity"), &affinity)?;
    refuse(&at("tolerations"), &tolerations)?;
    refuse(&at("hostAliases"), &host_aliases)?;
    refuse(&at("dnsConfig"), &dns_config)?;
    refuse(&at("readinessGates"), &readiness_gates)?;
    refuse(&at("overhead"), &overhead)?;
    refuse(
        &at("topologySpreadConstraints"),
        &topology_spread_constraints,
    )?;
    refuse(&at("os"), &os)?;
    refuse(&at("schedulingGates"), &scheduling_gates)?;
    refuse(&at("resourceClaims"), &resource_claims)?;
    refuse(&at("resources"), &resources)?;
    refuse(&at("workloadRef"), &workload_ref)?;
    let containers_at = at("containers");
    let init_at = at("initContainers");
    Ok(Obj::new()
        .put(
            "initContainers",
            list(init_containers, |c| container(&init_at, c))?,
        )
        .put(
            "containers",
            list(containers, |c| container(&containers_at, c))?,
        )
        .put("restartPolicy", restart_policy)
        .put(
            "terminationGracePeriodSeconds",
            Ptr(termination_grace_period_seconds),
        )
        .put("activeDeadlineSeconds", Ptr(active_deadline_seconds))
        .put("dnsPolicy", dns_policy)
        .put("nodeSelector", node_selector)
        .put("serviceAccountName", service_account_name)
        .put("serviceAccount", service_account)
        .put(
            "automountServiceAccountToken",
            Ptr(automount_service_account_token),
        )
        .put("nodeName", node_name)
        .put("hostNetwork", host_network)
        .put("hostPID", host_pid)
        .put("hostIPC", host_ipc)
        .put("shareProcessNamespace", Ptr(share_process_namespace))
        .put(
            "imagePullSecrets",
            list(image_pull_secrets, local_reference)?,
        )
        .put("hostname", hostname)
        .put("subdomain", subdomain)
        .put("schedulerName", scheduler_name)
        .put("priorityClassName", priority_class_name)
        .put("priority", Ptr(priority))
        .put("runtimeClassName", runtime_class_name)
        .put("enableServiceLinks", Ptr(enable_service_links))
        .put("preemptionPolicy", preemption_policy)
        .put("setHostnameAsFQDN", Ptr(set_hostname_as_fqdn))
        .put("hostUsers", Ptr(host_users))
        .put("hostnameOverride", hostname_override)
        .done())
}

fn container(path: &str, c: Container) -> Result<Value> {
    let Container {
        name,
        image,
        command,
        args,
        working_dir,
        ports,
        env_from,
        env,
        resources,
        resize_policy,
        restart_policy,
        restart_policy_rules,
        volume_mounts,
        volume_devices,
        liveness_probe,
        readiness_probe,
        startup_probe,
        lifecycle,
        termination_message_path,
        termination_message_policy,
        image_pull_policy,
        security_context,
        stdin,
        stdin_once,
        tty,
    } = c;
    let at = |field: &str| format!("{path}.{field}");
    refuse(&at("envFrom"), &env_from)?;
    refuse(&at("resizePolicy"), &resize_policy)?;
    refuse(&at("restartPolicyRules"), &restart_policy_rules)?;
    refuse(&at("volumeMounts"), &volume_mounts)?;
    refuse(&at("volumeDevices"), &volume_devices)?;
    refuse(&at("livenessProbe"), &liveness_probe)?;
    refuse(&at("readinessProbe"), &readiness_probe)?;
    refuse(&at("startupProbe"), &startup_probe)?;
    refuse(&at("lifecycle"), &lifecycle)?;
    refuse(&at("securityContext"), &security_context)?;
    let env_at = at("env");
    Ok(Obj::new()
        .put("name", name)
        .put("image", image)
        .put("command", command)
        .put("args", args)
        .put("workingDir", working_dir)
        .put("ports", list(ports, container_port)?)
        .put("env", list(env, |e| env_var(&env_at, e))?)
        .put(
            "resources",
            opt(resources, |r| resource_requirements(&at("resources"), r))?,
        )
        .put("restartPolicy", restart_policy)
        .put("terminationMessagePath", termination_message_path)
        .put("terminationMessagePolicy", termination_message_policy)
        .put("imagePullPolicy", image_pull_policy)
        .put("stdin", stdin)
        .put("stdinOnce", stdin_once)
        .put("tty", tty)
        .done())
}

fn container_port(p: ContainerPort) -> Result<Value> {
    let ContainerPort {
        name,
        host_port,
        container_port,
        protocol,
        host_ip,
    } = p;
    Ok(Obj::new()
        .put("name", name)
        .put("hostPort", host_port)
        .put("containerPort", container_port)
        .put("protocol", protocol)
        .put("hostIP", host_ip)
        .done())
}

fn env_var(path: &str, e: EnvVar) -> Result<Value> {
    let EnvVar {
        name,
        value,
        value_from,
    } = e;
    refuse(&format!("{path}.valueFrom"), &value_from)?;
    Ok(Obj::new().put("name", name).put("value", value).done())
}

fn resource_requirements(path: &str, r: ResourceRequirements) -> Result<Value> {
    let ResourceRequirements {
        limits,
        requests,
        claims,
    } = r;
    refuse(&format!("{path}.claims"), &claims)?;
    Ok(Obj::new()
        .put("limits", quantities(limits))
        .put("requests", quantities(requests))
        .done())
}
