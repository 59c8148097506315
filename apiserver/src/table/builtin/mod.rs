//! The rows of kube-apiserver's printers for built-in kinds (`pkg/printers/internalversion`), a file per few
//! API groups; the column definitions they fill are in `columns.json`.
//!
//! kube-apiserver prints from its internal types after defaulting, so a field left out reads as its default
//! here too (a Deployment's `replicas` as 1, a Secret's `type` as `Opaque`).

mod access;
mod autoscaling;
mod cells;
mod cluster;
mod core;
mod events;
mod flow;
mod network;
mod pod;
mod storage;
mod workloads;

use serde_json::Value;

use super::row::Row;
use super::time::Now;

/// Prints one object of a kind into its row.
pub(super) type PrintRow = fn(&Value, Now) -> Row;

/// The printer of a built-in kind (by the group it is stored in), if kube-apiserver has one that is written
/// here.
pub(super) fn printer(group: &str, kind: &str) -> Option<PrintRow> {
    let print: PrintRow = match (group, kind) {
        ("apps", "Deployment") => workloads::deployment,
        ("apps", "ReplicaSet") => workloads::replica_set,
        ("apps", "StatefulSet") => workloads::stateful_set,
        ("apps", "DaemonSet") => workloads::daemon_set,
        ("batch", "Job") => workloads::job,
        ("batch", "CronJob") => workloads::cron_job,
        ("", "Pod") => pod::pod,
        ("", "ConfigMap") => core::config_map,
        ("", "Secret") => core::secret,
        ("", "Namespace") => core::namespace,
        ("", "ServiceAccount") => core::service_account,
        ("", "PersistentVolumeClaim") => core::persistent_volume_claim,
        ("", "Event") => events::core_event,
        ("", "Service") => network::service,
        ("", "Endpoints") => network::endpoints,
        ("networking.k8s.io", "Ingress") => network::ingress,
        ("coordination.k8s.io", "Lease") => core::lease,
        ("", "ReplicationController") => workloads::replication_controller,
        ("", "PodTemplate") => workloads::pod_template,
        ("apps", "ControllerRevision") => workloads::controller_revision,
        ("networking.k8s.io", "IngressClass") => network::ingress_class,
        ("networking.k8s.io", "IPAddress") => network::ip_address,
        ("networking.k8s.io", "ServiceCIDR") => network::service_cidr,
        ("networking.k8s.io", "NetworkPolicy") => network::network_policy,
        ("discovery.k8s.io", "EndpointSlice") => network::endpoint_slice,
        ("", "PersistentVolume") => storage::persistent_volume,
        ("storage.k8s.io", "StorageClass") => storage::storage_class,
        ("storage.k8s.io", "CSIDriver") => storage::csi_driver,
        ("storage.k8s.io", "CSINode") => storage::csi_node,
        ("storage.k8s.io", "VolumeAttachment") => storage::volume_attachment,
        ("storage.k8s.io", "VolumeAttributesClass") => storage::volume_attributes_class,
        ("", "Node") => cluster::node,
        ("", "ResourceQuota") => cluster::resource_quota,
        ("scheduling.k8s.io", "PriorityClass") => cluster::priority_class,
        ("node.k8s.io", "RuntimeClass") => cluster::runtime_class,
        ("resource.k8s.io", "DeviceClass" | "ResourceClaimTemplate") => cluster::name_and_age,
        ("rbac.authorization.k8s.io", "RoleBinding" | "ClusterRoleBinding") => access::binding,
        ("policy", "PodDisruptionBudget") => access::pod_disruption_budget,
        (
            "admissionregistration.k8s.io",
            "MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration",
        ) => access::webhook_configuration,
        ("autoscaling", "HorizontalPodAutoscaler") => autoscaling::horizontal_pod_autoscaler,
        ("certificates.k8s.io", "CertificateSigningRequest") => access::certificate_signing_request,
        ("flowcontrol.apiserver.k8s.io", "FlowSchema") => flow::flow_schema,
        ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration") => {
            flow::priority_level_configuration
        }
        ("apiregistration.k8s.io", "APIService") => flow::api_service,
        ("resource.k8s.io", "ResourceClaim") => cluster::resource_claim,
        ("resource.k8s.io", "ResourceSlice") => cluster::resource_slice,
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy") => {
            access::validating_admission_policy
        }
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding") => {
            access::validating_admission_policy_binding
        }
        _ => return None,
    };
    Some(print)
}
