//! The patch strategies of the built-in types: which list fields merge by which key under strategic
//! merge patch, and their list type under server-side apply.

/// API groups served by kube-apiserver itself (including apiextensions and the aggregator).
pub(super) const BUILTIN_GROUPS: &[&str] = &[
    "",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "apiregistration.k8s.io",
    "apps",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "autoscaling",
    "batch",
    "certificates.k8s.io",
    "coordination.k8s.io",
    "discovery.k8s.io",
    "events.k8s.io",
    "extensions",
    "flowcontrol.apiserver.k8s.io",
    "internal.apiserver.k8s.io",
    "networking.k8s.io",
    "node.k8s.io",
    "policy",
    "rbac.authorization.k8s.io",
    "resource.k8s.io",
    "scheduling.k8s.io",
    "storage.k8s.io",
    "storagemigration.k8s.io",
];

/// The top-level types whose fields have patch strategies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Root {
    /// Any other built-in kind: only `ObjectMeta` has strategies.
    Generic,
    Pod,
    PodTemplate,
    /// Deployment, StatefulSet, DaemonSet, ReplicaSet, ReplicationController.
    Workload,
    Job,
    CronJob,
    Service,
    ServiceAccount,
    /// Kinds whose only merged list is `status.conditions` keyed by `type`.
    StatusConditions,
    Node,
    ComponentStatus,
    CustomResourceDefinition,
    PodDisruptionBudget,
    WebhookConfiguration,
    ValidatingAdmissionPolicy,
    MutatingAdmissionPolicy,
    CsiNode,
    ResourceClaim,
}

pub(super) fn root_for(group: &str, kind: &str) -> Option<Root> {
    if !BUILTIN_GROUPS.contains(&group) {
        return None;
    }
    Some(match (group, kind) {
        ("", "Pod") => Root::Pod,
        ("", "PodTemplate") => Root::PodTemplate,
        ("", "ReplicationController")
        | ("apps" | "extensions", "Deployment" | "StatefulSet" | "DaemonSet" | "ReplicaSet") => {
            Root::Workload
        }
        ("batch", "Job") => Root::Job,
        ("batch", "CronJob") => Root::CronJob,
        ("", "Service") => Root::Service,
        ("", "ServiceAccount") => Root::ServiceAccount,
        ("", "Namespace" | "PersistentVolumeClaim")
        | ("autoscaling", "HorizontalPodAutoscaler")
        | ("flowcontrol.apiserver.k8s.io", "FlowSchema" | "PriorityLevelConfiguration")
        | ("networking.k8s.io", "ServiceCIDR")
        | ("certificates.k8s.io", "PodCertificateRequest")
        | ("resource.k8s.io", "DeviceTaintRule") => Root::StatusConditions,
        ("", "Node") => Root::Node,
        ("", "ComponentStatus") => Root::ComponentStatus,
        ("apiextensions.k8s.io", "CustomResourceDefinition") => Root::CustomResourceDefinition,
        ("policy", "PodDisruptionBudget") => Root::PodDisruptionBudget,
        (
            "admissionregistration.k8s.io",
            "ValidatingWebhookConfiguration" | "MutatingWebhookConfiguration",
        ) => Root::WebhookConfiguration,
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy") => {
            Root::ValidatingAdmissionPolicy
        }
        ("admissionregistration.k8s.io", "MutatingAdmissionPolicy") => {
            Root::MutatingAdmissionPolicy
        }
        ("storage.k8s.io", "CSINode") => Root::CsiNode,
        ("resource.k8s.io", "ResourceClaim") => Root::ResourceClaim,
        _ => Root::Generic,
    })
}

/// The Go types that matter for patch strategies; everything else is `Unknown`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ty {
    Unknown,
    Root(Root),
    ObjectMeta,
    PodTemplateSpec,
    PodSpec,
    Container,
    ResourceRequirements,
    PodStatus,
    /// A workload spec whose `template` is a `PodTemplateSpec`.
    WorkloadSpec,
    /// A status whose `conditions` merge by `type`.
    ConditionsStatus,
    JobTemplateSpec,
    JobSpec,
    JobStatus,
    UncountedTerminatedPods,
    CronJobSpec,
    ServiceSpec,
    NodeSpec,
    NodeStatus,
    CustomResourceDefinitionStatus,
    PodDisruptionBudgetSpec,
    Webhook,
    ValidatingAdmissionPolicySpec,
    MutatingAdmissionPolicySpec,
    CsiNodeSpec,
    ResourceClaimStatus,
}

/// Strategic merge patch strategy of a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Smp {
    /// No strategy: maps merge, lists are replaced.
    Default,
    /// `patchStrategy:"merge"`: lists merge, by this key (`""` for lists of scalars).
    Merge(&'static str),
    /// `patchStrategy:"replace"` on a map: the patch value replaces it.
    ReplaceMap,
}

/// Server-side apply list type of a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ssa {
    Atomic,
    Set,
    Map(&'static [&'static str]),
}

/// What the schema knows of one field.
#[derive(Debug, Clone, Copy)]
pub(super) struct Field {
    /// Type of the value, or of each item for lists.
    pub(super) ty: Ty,
    pub(super) smp: Smp,
    pub(super) ssa: Ssa,
}

pub(super) const NAME: &[&str] = &["name"];
pub(super) const TYPE: &[&str] = &["type"];
pub(super) const UNKNOWN: Field = Field {
    ty: Ty::Unknown,
    smp: Smp::Default,
    ssa: Ssa::Atomic,
};

/// A struct-valued field (or a list without strategies whose items are `ty`).
pub(super) const fn object(ty: Ty) -> Field {
    Field {
        ty,
        smp: Smp::Default,
        ssa: Ssa::Atomic,
    }
}

/// A list merged by `key` for SMP and keyed by `keys` for server-side apply.
pub(super) const fn keyed(ty: Ty, key: &'static str, keys: &'static [&'static str]) -> Field {
    Field {
        ty,
        smp: Smp::Merge(key),
        ssa: Ssa::Map(keys),
    }
}

/// A list of scalars with `patchStrategy:"merge"` and `listType=set`.
pub(super) const SET: Field = Field {
    ty: Ty::Unknown,
    smp: Smp::Merge(""),
    ssa: Ssa::Set,
};

/// `conditions` merged by `type`.
pub(super) const CONDITIONS: Field = keyed(Ty::Unknown, "type", TYPE);

pub(super) fn lookup(ty: Ty, name: &str) -> Field {
    match ty {
        Ty::Unknown => UNKNOWN,
        Ty::Root(_) if name == "metadata" => object(Ty::ObjectMeta),
        Ty::Root(root) => root_field(root, name),
        Ty::ObjectMeta => match name {
            "finalizers" => SET,
            "ownerReferences" => keyed(Ty::Unknown, "uid", &["uid"]),
            _ => UNKNOWN,
        },
        Ty::PodTemplateSpec => match name {
            "metadata" => object(Ty::ObjectMeta),
            "spec" => object(Ty::PodSpec),
            _ => UNKNOWN,
        },
        Ty::PodSpec => match name {
            "containers" | "initContainers" | "ephemeralContainers" => {
                keyed(Ty::Container, "name", NAME)
            }
            "volumes" | "imagePullSecrets" | "schedulingGates" | "resourceClaims"
            | "evictionResponders" => keyed(Ty::Unknown, "name", NAME),
            "hostAliases" => keyed(Ty::Unknown, "ip", &["ip"]),
            "topologySpreadConstraints" => keyed(
                Ty::Unknown,
                "topologyKey",
                &["topologyKey", "whenUnsatisfiable"],
            ),
            _ => UNKNOWN,
        },
        Ty::Container => match name {
            "ports" => keyed(Ty::Unknown, "containerPort", &["containerPort", "protocol"]),
            "env" => keyed(Ty::Unknown, "name", NAME),
            "volumeMounts" => keyed(Ty::Unknown, "mountPath", &["mountPath"]),
            "volumeDevices" => keyed(Ty::Unknown, "devicePath", &["devicePath"]),
            "resources" => object(Ty::ResourceRequirements),
            _ => UNKNOWN,
        },
        Ty::ResourceRequirements => match name {
            "claims" => Field {
                ty: Ty::Unknown,
                smp: Smp::Default,
                ssa: Ssa::Map(NAME),
            },
            _ => UNKNOWN,
        },
        Ty::PodStatus => match name {
            "conditions" => CONDITIONS,
            "podIPs" => keyed(Ty::Unknown, "ip", &["ip"]),
            "hostIPs" => Field {
                ty: Ty::Unknown,
                smp: Smp::Merge("ip"),
                ssa: Ssa::Atomic,
            },
            "resourceClaimStatuses" => keyed(Ty::Unknown, "name", NAME),
            "nodeAllocatableResourceClaimStatuses" => {
                keyed(Ty::Unknown, "resourceClaimName", &["resourceClaimName"])
            }
            "volumeHealth" => Field {
                ty: Ty::Unknown,
                smp: Smp::Default,
                ssa: Ssa::Map(NAME),
            },
            _ => UNKNOWN,
        },
        Ty::WorkloadSpec | Ty::JobSpec => match name {
            "template" => object(Ty::PodTemplateSpec),
            _ => UNKNOWN,
        },
        Ty::ConditionsStatus => match name {
            "conditions" => CONDITIONS,
            _ => UNKNOWN,
        },
        Ty::JobTemplateSpec => match name {
            "metadata" => object(Ty::ObjectMeta),
            "spec" => object(Ty::JobSpec),
            _ => UNKNOWN,
        },
        Ty::JobStatus => match name {
            // patchStrategy merge by type, but `+listType=atomic` for server-side apply.
            "conditions" => Field {
                ty: Ty::Unknown,
                smp: Smp::Merge("type"),
                ssa: Ssa::Atomic,
            },
            "uncountedTerminatedPods" => object(Ty::UncountedTerminatedPods),
            _ => UNKNOWN,
        },
        Ty::UncountedTerminatedPods => match name {
            "succeeded" | "failed" => Field {
                ty: Ty::Unknown,
                smp: Smp::Default,
                ssa: Ssa::Set,
            },
            _ => UNKNOWN,
        },
        Ty::CronJobSpec => match name {
            "jobTemplate" => object(Ty::JobTemplateSpec),
            _ => UNKNOWN,
        },
        Ty::ServiceSpec => match name {
            "ports" => keyed(Ty::Unknown, "port", &["port", "protocol"]),
            _ => UNKNOWN,
        },
        Ty::NodeSpec => match name {
            "podCIDRs" => SET,
            _ => UNKNOWN,
        },
        Ty::NodeStatus => match name {
            "conditions" | "addresses" => CONDITIONS,
            _ => UNKNOWN,
        },
        Ty::CustomResourceDefinitionStatus => match name {
            // No patch tags in apiextensions: SMP replaces, server-side apply keys by type.
            "conditions" => Field {
                ty: Ty::Unknown,
                smp: Smp::Default,
                ssa: Ssa::Map(TYPE),
            },
            _ => UNKNOWN,
        },
        Ty::PodDisruptionBudgetSpec => match name {
            "selector" => Field {
                ty: Ty::Unknown,
                smp: Smp::ReplaceMap,
                ssa: Ssa::Atomic,
            },
            _ => UNKNOWN,
        },
        Ty::Webhook | Ty::MutatingAdmissionPolicySpec => match name {
            "matchConditions" => keyed(Ty::Unknown, "name", NAME),
            _ => UNKNOWN,
        },
        Ty::ValidatingAdmissionPolicySpec => match name {
            "matchConditions" | "variables" => keyed(Ty::Unknown, "name", NAME),
            _ => UNKNOWN,
        },
        Ty::CsiNodeSpec => match name {
            "drivers" => keyed(Ty::Unknown, "name", NAME),
            _ => UNKNOWN,
        },
        Ty::ResourceClaimStatus => match name {
            "reservedFor" => keyed(Ty::Unknown, "uid", &["uid"]),
            _ => UNKNOWN,
        },
    }
}

pub(super) fn root_field(root: Root, name: &str) -> Field {
    match (root, name) {
        (Root::Pod, "spec") => object(Ty::PodSpec),
        (Root::Pod, "status") => object(Ty::PodStatus),
        (Root::PodTemplate, "template") => object(Ty::PodTemplateSpec),
        (Root::Workload, "spec") => object(Ty::WorkloadSpec),
        (
            Root::Workload | Root::Service | Root::StatusConditions | Root::PodDisruptionBudget,
            "status",
        ) => object(Ty::ConditionsStatus),
        (Root::Job, "spec") => object(Ty::JobSpec),
        (Root::Job, "status") => object(Ty::JobStatus),
        (Root::CronJob, "spec") => object(Ty::CronJobSpec),
        (Root::Service, "spec") => object(Ty::ServiceSpec),
        (Root::ServiceAccount, "secrets") => keyed(Ty::Unknown, "name", NAME),
        (Root::Node, "spec") => object(Ty::NodeSpec),
        (Root::Node, "status") => object(Ty::NodeStatus),
        (Root::ComponentStatus, "conditions") => CONDITIONS,
        (Root::CustomResourceDefinition, "status") => object(Ty::CustomResourceDefinitionStatus),
        (Root::PodDisruptionBudget, "spec") => object(Ty::PodDisruptionBudgetSpec),
        (Root::WebhookConfiguration, "webhooks") => keyed(Ty::Webhook, "name", NAME),
        (Root::ValidatingAdmissionPolicy, "spec") => object(Ty::ValidatingAdmissionPolicySpec),
        (Root::MutatingAdmissionPolicy, "spec") => object(Ty::MutatingAdmissionPolicySpec),
        (Root::CsiNode, "spec") => object(Ty::CsiNodeSpec),
        (Root::ResourceClaim, "status") => object(Ty::ResourceClaimStatus),
        _ => UNKNOWN,
    }
}
