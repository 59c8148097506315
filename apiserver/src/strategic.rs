//! Strategic merge patch (`application/strategic-merge-patch+json`) for built-in kinds.
//!
//! This mirrors the behaviour of kube-apiserver, which applies such a patch to the
//! unstructured form of the stored object with apimachinery's `strategicpatch` package,
//! guided by the `patchStrategy`/`patchMergeKey` struct tags of `k8s.io/api`:
//!
//! * objects merge recursively, `null` deletes a key, any other value replaces;
//! * lists whose field carries `patchStrategy:"merge"` merge by their patch merge key
//!   (lists of scalars become a union), every other list is replaced wholesale;
//! * the directives `$patch` (`replace`, `delete`, and `merge` where allowed),
//!   `$retainKeys`, `$setElementOrder/<field>` and `$deleteFromPrimitiveList/<field>`
//!   are honoured and never left in the result;
//! * after a merge, list items named by the patch come in the patch's order, and the
//!   items only the server had are woven in by their old positions, exactly like
//!   apimachinery does. A new item that the patch names alone therefore lands at the
//!   *front* of the list, not at its end; `$setElementOrder` fixes the order outright.
//!
//! Custom resources do not support strategic merge patch: [`apply`] refuses them with
//! [`PatchError::Unsupported`], which the server answers with 415 like the real one.
//!
//! The same table of list semantics serves server-side apply through
//! [`builtin_list_type`], which reports what the OpenAPI schema says (`x-kubernetes-list-type`
//! and `x-kubernetes-list-map-keys`); this differs from the SMP merge key in a few places,
//! e.g. container ports are keyed by `containerPort` for SMP but by
//! `containerPort`+`protocol` for server-side apply.

use serde_json::{Map, Value};

/// How a list field of a built-in kind merges under server-side apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListType {
    /// The list is replaced as a whole (`x-kubernetes-list-type: atomic`, the default).
    Atomic,
    /// A list of scalars treated as a set (`x-kubernetes-list-type: set`).
    Set,
    /// An associative list whose items are identified by the values of these fields
    /// (`x-kubernetes-list-type: map` with `x-kubernetes-list-map-keys`).
    Map(Vec<String>),
}

/// Why a strategic merge patch could not be applied.
///
/// The texts follow apimachinery's; [`PatchError::status_code`] tells which HTTP status
/// kube-apiserver answers with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatchError {
    /// The kind does not support strategic merge patch (custom resources, aggregated APIs).
    /// The real server refuses the content type with 415 Unsupported Media Type.
    #[error(
        "the body of the request was in an unknown format - accepted media types include: \
         application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
    )]
    Unsupported {
        /// API group of the refused object (`""` for core).
        group: String,
        /// Kind of the refused object.
        kind: String,
    },
    /// The patch body is not a JSON object.
    #[error("json: cannot unmarshal {found} into Go value of type map[string]interface {{}}")]
    NotAnObject {
        /// The JSON type that was found instead (`array`, `string`, `number`, `bool`).
        found: &'static str,
    },
    /// A `$deleteFromPrimitiveList` key is malformed.
    #[error("invalid patch format of primitive list")]
    BadPatchFormatForPrimitiveList,
    /// A `$retainKeys` directive is not a list, or the patch sets a key it does not retain.
    #[error("invalid patch format of retainKeys")]
    BadPatchFormatForRetainKeys,
    /// A `$setElementOrder` key is malformed.
    #[error("invalid patch format of setElementOrder list")]
    BadPatchFormatForSetElementOrderList,
    /// A list holds lists.
    #[error("lists of lists are not supported")]
    NoListOfLists,
    /// An item of a list merged by key lacks the key.
    #[error("map: {map} does not contain declared merge key: {key}")]
    NoMergeKey {
        /// The offending item, formatted like Go's `%v`.
        map: String,
        /// The merge key.
        key: String,
    },
    /// A `$patch` directive has an unknown value.
    #[error("unknown patch type: {directive} in map: {map}")]
    UnknownPatchType {
        /// The directive's value.
        directive: String,
        /// The map holding it, formatted like Go's `%v`.
        map: String,
    },
    /// `$patch: merge` appeared as a list item.
    #[error("merging lists cannot yet be specified in the patch")]
    MergingListsNotSupported,
    /// The items of a patch list are not in the order its `$setElementOrder` list gives.
    #[error("the order in patch list:\n{patch}\n doesn't match $setElementOrder list:\n{order}")]
    SetElementOrderMismatch {
        /// The patch list, formatted like Go's `%v`.
        patch: String,
        /// The `$setElementOrder` list, formatted like Go's `%v`.
        order: String,
    },
    /// A value has the wrong JSON type for its place (Go type names, as apimachinery prints them).
    #[error("expected a {expected}, but received a {actual}")]
    BadArgType {
        /// The Go type that was expected.
        expected: &'static str,
        /// The Go type that was found.
        actual: &'static str,
    },
    /// Any other failure of the merge, with apimachinery's text.
    #[error("{0}")]
    Other(String),
}

impl PatchError {
    /// The HTTP status kube-apiserver answers this error with: 415 for unsupported kinds,
    /// 400 for a body that is no object and for malformed parallel-list directives, 422 for
    /// lists of lists, and 500 for every other merge failure (the real server passes those
    /// through as plain errors, which become 500 statuses with an empty reason).
    pub fn status_code(&self) -> u16 {
        match self {
            PatchError::Unsupported { .. } => 415,
            PatchError::NotAnObject { .. }
            | PatchError::BadPatchFormatForPrimitiveList
            | PatchError::BadPatchFormatForRetainKeys
            | PatchError::BadPatchFormatForSetElementOrderList => 400,
            PatchError::NoListOfLists => 422,
            _ => 500,
        }
    }

    /// The `reason` of the `Status` the real server answers with (`""` means
    /// `StatusReasonUnknown`, which is what a plain error becomes).
    pub fn reason(&self) -> &'static str {
        match self.status_code() {
            415 => "UnsupportedMediaType",
            400 => "BadRequest",
            422 => "Invalid",
            _ => "",
        }
    }
}

/// Whether objects of this group and kind accept strategic merge patches, i.e. whether
/// they are served from a built-in API group rather than by a custom resource definition
/// or an aggregated API server.
pub fn supports_strategic_merge_patch(group: &str, kind: &str) -> bool {
    root_for(group, kind).is_some()
}

/// List semantics of a field of a built-in kind, as server-side apply sees them.
///
/// `path` is the field path from the object root with list items elided, e.g.
/// `["spec","template","spec","containers","ports"]` for a Deployment's container ports.
/// `metadata.finalizers` and `metadata.ownerReferences` are reported for every kind,
/// custom resources included, since every object shares `ObjectMeta`. Anything the table
/// does not know is [`ListType::Atomic`].
pub fn builtin_list_type(group: &str, kind: &str, path: &[&str]) -> ListType {
    let Some((last, parents)) = path.split_last() else {
        return ListType::Atomic;
    };
    let mut ty = Ty::Root(root_for(group, kind).unwrap_or(Root::Generic));
    for segment in parents {
        ty = lookup(ty, segment).ty;
    }
    match lookup(ty, last).ssa {
        Ssa::Atomic => ListType::Atomic,
        Ssa::Set => ListType::Set,
        Ssa::Map(keys) => ListType::Map(keys.iter().map(|k| (*k).to_string()).collect()),
    }
}

/// Applies a strategic merge patch to `original`, an object of the given group and kind.
///
/// `group` is `""` for the core group. A `null` patch changes nothing; any other patch
/// that is not a JSON object is refused, and so is any kind that is not built in.
pub fn apply(
    group: &str,
    kind: &str,
    original: &Value,
    patch: &Value,
) -> Result<Value, PatchError> {
    let Some(root) = root_for(group, kind) else {
        return Err(PatchError::Unsupported {
            group: group.to_string(),
            kind: kind.to_string(),
        });
    };
    let patch = match patch {
        Value::Object(map) => map.clone(),
        Value::Null => return Ok(original.clone()),
        other => {
            return Err(PatchError::NotAnObject {
                found: json_type_name(other),
            });
        }
    };
    let Value::Object(original) = original else {
        return Err(PatchError::Other(format!(
            "the object to patch is a JSON {}, not an object",
            json_type_name(original)
        )));
    };
    merge_map(original.clone(), patch, Ty::Root(root)).map(Value::Object)
}

// ---------------------------------------------------------------------------------------
// Schema: the patch strategies of the built-in types.
// ---------------------------------------------------------------------------------------

/// API groups served by kube-apiserver itself (including apiextensions and the aggregator).
const BUILTIN_GROUPS: &[&str] = &[
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
enum Root {
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

fn root_for(group: &str, kind: &str) -> Option<Root> {
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
enum Ty {
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
enum Smp {
    /// No strategy: maps merge, lists are replaced.
    Default,
    /// `patchStrategy:"merge"`: lists merge, by this key (`""` for lists of scalars).
    Merge(&'static str),
    /// `patchStrategy:"replace"` on a map: the patch value replaces it.
    ReplaceMap,
}

/// Server-side apply list type of a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ssa {
    Atomic,
    Set,
    Map(&'static [&'static str]),
}

/// What the schema knows of one field.
#[derive(Debug, Clone, Copy)]
struct Field {
    /// Type of the value, or of each item for lists.
    ty: Ty,
    smp: Smp,
    ssa: Ssa,
}

const NAME: &[&str] = &["name"];
const TYPE: &[&str] = &["type"];
const UNKNOWN: Field = Field {
    ty: Ty::Unknown,
    smp: Smp::Default,
    ssa: Ssa::Atomic,
};

/// A struct-valued field (or a list without strategies whose items are `ty`).
const fn object(ty: Ty) -> Field {
    Field {
        ty,
        smp: Smp::Default,
        ssa: Ssa::Atomic,
    }
}

/// A list merged by `key` for SMP and keyed by `keys` for server-side apply.
const fn keyed(ty: Ty, key: &'static str, keys: &'static [&'static str]) -> Field {
    Field {
        ty,
        smp: Smp::Merge(key),
        ssa: Ssa::Map(keys),
    }
}

/// A list of scalars with `patchStrategy:"merge"` and `listType=set`.
const SET: Field = Field {
    ty: Ty::Unknown,
    smp: Smp::Merge(""),
    ssa: Ssa::Set,
};

/// `conditions` merged by `type`.
const CONDITIONS: Field = keyed(Ty::Unknown, "type", TYPE);

fn lookup(ty: Ty, name: &str) -> Field {
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

fn root_field(root: Root, name: &str) -> Field {
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

// ---------------------------------------------------------------------------------------
// The merge.
// ---------------------------------------------------------------------------------------

const DIRECTIVE: &str = "$patch";
const RETAIN_KEYS: &str = "$retainKeys";
const SET_ELEMENT_ORDER: &str = "$setElementOrder";
const DELETE_FROM_PRIMITIVE_LIST: &str = "$deleteFromPrimitiveList";

/// Whether a map key is one of the directives, which must never reach a stored object.
fn is_directive_key(key: &str) -> bool {
    key == DIRECTIVE
        || key == RETAIN_KEYS
        || key.starts_with(SET_ELEMENT_ORDER)
        || key.starts_with(DELETE_FROM_PRIMITIVE_LIST)
}

/// How a patch value that is taken over without merging is cleaned of directives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Clean {
    /// A value for a key the original lacks: apimachinery drops nulls and every map that
    /// carries `$patch` (with its key or list slot).
    Drop,
    /// A value that replaces wholesale (atomic lists, `$patch: replace`, new list items):
    /// apimachinery keeps it raw and the typed decode that follows ignores the directive
    /// keys and the nulls, so they are removed and the rest is kept.
    Strip,
}

/// Cleans a value taken from the patch; `None` means the value disappears.
fn clean(value: Value, mode: Clean) -> Option<Value> {
    match value {
        Value::Object(map) => {
            if mode == Clean::Drop && map.get(DIRECTIVE).is_some_and(|v| !v.is_null()) {
                return None;
            }
            let mut out = Map::new();
            for (key, item) in map {
                if item.is_null() || is_directive_key(&key) {
                    continue;
                }
                if let Some(item) = clean(item, mode) {
                    out.insert(key, item);
                }
            }
            Some(Value::Object(out))
        }
        Value::Array(items) => Some(Value::Array(clean_list(items, mode))),
        scalar => Some(scalar),
    }
}

fn clean_list(items: Vec<Value>, mode: Clean) -> Vec<Value> {
    items
        .into_iter()
        .filter_map(|item| clean(item, mode))
        .collect()
}

/// Merges `patch` into `original`, both maps of type `ty`.
fn merge_map(
    mut original: Map<String, Value>,
    mut patch: Map<String, Value>,
    ty: Ty,
) -> Result<Map<String, Value>, PatchError> {
    if let Some(directive) = patch.remove(DIRECTIVE) {
        return match directive.as_str() {
            Some("replace") => Ok(strip_map(patch)),
            Some("delete") => Ok(Map::new()),
            _ => {
                patch.insert(DIRECTIVE.to_string(), directive.clone());
                Err(unknown_patch_type(&directive, &patch))
            }
        };
    }

    apply_retain_keys(&mut original, &mut patch)?;
    merge_set_element_order(&mut original, &mut patch, ty)?;

    let mut keys: Vec<String> = patch.keys().cloned().collect();
    keys.sort();
    for patch_key in keys {
        let Some(patch_value) = patch.remove(&patch_key) else {
            continue;
        };
        let (key, delete_list) = if patch_key.starts_with(DELETE_FROM_PRIMITIVE_LIST) {
            (extract_key(&patch_key, DELETE_FROM_PRIMITIVE_LIST)?, true)
        } else {
            (patch_key, false)
        };

        if patch_value.is_null() {
            original.remove(&key);
            continue;
        }

        let Some(slot) = original.get_mut(&key) else {
            if !delete_list && let Some(value) = clean(patch_value, Clean::Drop) {
                original.insert(key, value);
            }
            continue;
        };

        match (slot, patch_value) {
            (Value::Object(current), Value::Object(patch_map)) => {
                let field = lookup(ty, &key);
                let current = std::mem::take(current);
                let merged = if field.smp == Smp::ReplaceMap {
                    strip_map(patch_map)
                } else {
                    merge_map(current, patch_map, field.ty)?
                };
                original.insert(key, Value::Object(merged));
            }
            (Value::Array(current), Value::Array(patch_list)) => {
                let field = lookup(ty, &key);
                let current = std::mem::take(current);
                let merged = merge_list_field(current, patch_list, field, delete_list)?;
                original.insert(key, Value::Array(merged));
            }
            (slot, patch_value) if go_type(slot) == go_type(&patch_value) => {
                // Two scalars of one type: the patch wins (even for a parallel delete list,
                // as in apimachinery).
                *slot = patch_value;
            }
            (_, patch_value) => {
                if delete_list {
                    continue;
                }
                match clean(patch_value, Clean::Drop) {
                    Some(value) => {
                        original.insert(key, value);
                    }
                    None => {
                        original.remove(&key);
                    }
                }
            }
        }
    }
    Ok(original)
}

fn strip_map(map: Map<String, Value>) -> Map<String, Value> {
    match clean(Value::Object(map), Clean::Strip) {
        Some(Value::Object(map)) => map,
        _ => Map::new(),
    }
}

/// Merges a list field according to its strategy.
fn merge_list_field(
    original: Vec<Value>,
    patch: Vec<Value>,
    field: Field,
    delete_list: bool,
) -> Result<Vec<Value>, PatchError> {
    match field.smp {
        Smp::Merge(key) => merge_list(original, patch, field.ty, key, delete_list),
        // A parallel delete list deletes whatever the field's strategy.
        _ if delete_list => merge_list(original, patch, field.ty, "", true),
        _ => Ok(clean_list(patch, Clean::Strip)),
    }
}

/// `$retainKeys`: drops the original's keys that are not listed.
fn apply_retain_keys(
    original: &mut Map<String, Value>,
    patch: &mut Map<String, Value>,
) -> Result<(), PatchError> {
    let Some(retain) = patch.remove(RETAIN_KEYS) else {
        return Ok(());
    };
    let Value::Array(retain) = retain else {
        return Err(PatchError::BadPatchFormatForRetainKeys);
    };
    let retained = |key: &str| retain.iter().any(|v| v.as_str() == Some(key));
    for (key, value) in patch.iter() {
        if value.is_null()
            || key.starts_with(DELETE_FROM_PRIMITIVE_LIST)
            || key.starts_with(SET_ELEMENT_ORDER)
        {
            continue;
        }
        if !retained(key) {
            return Err(PatchError::BadPatchFormatForRetainKeys);
        }
    }
    original.retain(|key, _| retained(key));
    Ok(())
}

/// `$setElementOrder/<field>`: merges `<field>` and puts it in the given order.
fn merge_set_element_order(
    original: &mut Map<String, Value>,
    patch: &mut Map<String, Value>,
    ty: Ty,
) -> Result<(), PatchError> {
    let mut directives: Vec<String> = patch
        .keys()
        .filter(|k| k.starts_with(SET_ELEMENT_ORDER))
        .cloned()
        .collect();
    directives.sort();
    for directive in directives {
        let Some(order) = patch.remove(&directive) else {
            continue;
        };
        let Value::Array(order) = order else {
            return Err(bad_arg_type("[]interface {}", &order));
        };
        let key = extract_key(&directive, SET_ELEMENT_ORDER)?;
        let original_list = match original.get(&key) {
            None => None,
            Some(Value::Array(list)) => Some(list.clone()),
            Some(other) => return Err(bad_arg_type("[]interface {}", other)),
        };
        let patch_list = match patch.get(&key) {
            None => None,
            Some(Value::Array(list)) => Some(list.clone()),
            Some(other) => return Err(bad_arg_type("[]interface {}", other)),
        };
        let field = lookup(ty, &key);
        let merge_key = match field.smp {
            Smp::Merge(k) => k,
            _ => "",
        };
        validate_patch_with_order(patch_list.as_deref().unwrap_or(&[]), &order, merge_key)?;

        let merged = match (&original_list, &patch_list) {
            (Some(current), None) => current.clone(),
            (None, Some(list)) => clean_list(list.clone(), Clean::Drop),
            (Some(current), Some(list)) => {
                merge_list_field(current.clone(), list.clone(), field, false)?
            }
            (None, None) => continue,
        };

        let (patch_items, server_only) = if merge_key.is_empty() {
            partition_scalars(merged, &order)
        } else {
            partition_maps(merged, &order, merge_key)?
        };
        let server_order = original_list.unwrap_or_default();
        let kind = element_kind(&[&server_order, patch_list.as_deref().unwrap_or(&[])])?;
        let ordered = normalize_order(
            patch_items,
            server_only,
            &order,
            &server_order,
            merge_key,
            kind,
        )?;
        original.insert(key.clone(), Value::Array(ordered));
        patch.remove(&key);
    }
    Ok(())
}

/// The items of the patch list (less deletions and directives) must come in the order of
/// the `$setElementOrder` list.
fn validate_patch_with_order(
    patch: &[Value],
    order: &[Value],
    merge_key: &str,
) -> Result<(), PatchError> {
    if order.is_empty() || patch.is_empty() {
        return Ok(());
    }
    let kept: Vec<&Value> = if merge_key.is_empty() {
        patch.iter().collect()
    } else {
        let mut kept = Vec::new();
        for item in patch {
            let Value::Object(map) = item else {
                return Err(bad_arg_type("map[string]interface {}", item));
            };
            if map.get(DIRECTIVE).and_then(Value::as_str) != Some("delete") {
                kept.push(item);
            }
        }
        kept
    };
    let (mut p, mut o) = (0, 0);
    while p < kept.len() && o < order.len() {
        if kept[p]
            .as_object()
            .is_some_and(|m| m.contains_key(DIRECTIVE))
        {
            p += 1;
            continue;
        }
        if merge_key_value_equal(kept[p], &order[o], merge_key)? {
            p += 1;
        }
        o += 1;
    }
    if p < kept.len() && o >= order.len() {
        return Err(PatchError::SetElementOrderMismatch {
            patch: go_fmt_list(patch),
            order: go_fmt_list(order),
        });
    }
    Ok(())
}

fn merge_key_value_equal(left: &Value, right: &Value, merge_key: &str) -> Result<bool, PatchError> {
    if merge_key.is_empty() {
        return Ok(left == right);
    }
    let left_key = merge_key_of(left, merge_key)?;
    let right_key = merge_key_of(right, merge_key)?;
    Ok(left_key == right_key)
}

fn merge_key_of<'a>(item: &'a Value, merge_key: &str) -> Result<&'a Value, PatchError> {
    let Value::Object(map) = item else {
        return Err(bad_arg_type("map[string]interface {}", item));
    };
    map.get(merge_key)
        .ok_or_else(|| no_merge_key(map, merge_key))
}

/// Merges two lists of a field with `patchStrategy:"merge"` (or a parallel delete list).
fn merge_list(
    original: Vec<Value>,
    patch: Vec<Value>,
    ty: Ty,
    merge_key: &str,
    delete_list: bool,
) -> Result<Vec<Value>, PatchError> {
    if original.is_empty() && patch.is_empty() {
        return Ok(original);
    }
    let kind = element_kind(&[&original, &patch])?;
    let (server_order, patch_items_order, merged) = if kind != Kind::Map {
        if delete_list {
            return Ok(original
                .into_iter()
                .filter(|item| !patch.contains(item))
                .collect());
        }
        let mut merged: Vec<Value> = Vec::with_capacity(original.len() + patch.len());
        for item in original.iter().chain(patch.iter()) {
            if !merged.contains(item) {
                merged.push(item.clone());
            }
        }
        (original, patch, merged)
    } else {
        if merge_key.is_empty() {
            return Err(PatchError::Other(format!(
                "cannot merge lists without merge key for {ty:?}"
            )));
        }
        let (original, patch) = apply_special_items(original, patch, merge_key)?;
        let merged = merge_items_by_key(original.clone(), &patch, ty, merge_key)?;
        (original, patch, merged)
    };

    let (patch_items, server_only) = if merge_key.is_empty() {
        partition_scalars(merged, &patch_items_order)
    } else {
        partition_maps(merged, &patch_items_order, merge_key)?
    };
    normalize_order(
        patch_items,
        server_only,
        &patch_items_order,
        &server_order,
        merge_key,
        kind,
    )
}

/// Handles the `$patch` items of a keyed list: deletions shrink the original, a
/// `replace` item makes the other patch items the whole list. Returns the new original
/// and the patch without those items.
fn apply_special_items(
    mut original: Vec<Value>,
    patch: Vec<Value>,
    merge_key: &str,
) -> Result<(Vec<Value>, Vec<Value>), PatchError> {
    let mut plain = Vec::with_capacity(patch.len());
    let mut replace = false;
    for item in patch {
        let Value::Object(map) = &item else {
            return Err(bad_arg_type("map[string]interface {}", &item));
        };
        let Some(directive) = map.get(DIRECTIVE) else {
            plain.push(item);
            continue;
        };
        match directive.as_str() {
            Some("delete") => {
                let value = map
                    .get(merge_key)
                    .ok_or_else(|| no_merge_key(map, merge_key))?;
                let mut kept = Vec::with_capacity(original.len());
                for existing in original {
                    let Value::Object(existing_map) = &existing else {
                        return Err(PatchError::Other(format!(
                            "value for key {} is not a map",
                            kept.len()
                        )));
                    };
                    if existing_map.get(merge_key) != Some(value) {
                        kept.push(existing);
                    }
                }
                original = kept;
            }
            Some("replace") => replace = true,
            Some("merge") => return Err(PatchError::MergingListsNotSupported),
            _ => return Err(unknown_patch_type(directive, map)),
        }
    }
    if replace {
        return Ok((clean_list(plain, Clean::Strip), Vec::new()));
    }
    Ok((original, plain))
}

/// Merges each patch item into the original item with the same key, or appends it.
fn merge_items_by_key(
    mut merged: Vec<Value>,
    patch: &[Value],
    ty: Ty,
    merge_key: &str,
) -> Result<Vec<Value>, PatchError> {
    for item in patch {
        let Value::Object(item_map) = item else {
            return Err(bad_arg_type("map[string]interface {}", item));
        };
        let value = item_map
            .get(merge_key)
            .ok_or_else(|| no_merge_key(item_map, merge_key))?;
        let mut found = None;
        for (index, existing) in merged.iter().enumerate() {
            let Value::Object(existing_map) = existing else {
                return Err(PatchError::Other(format!(
                    "value for key {index} is not a map"
                )));
            };
            if existing_map.get(merge_key) == Some(value) {
                found = Some(index);
                break;
            }
        }
        match found {
            Some(index) => {
                let current = match std::mem::take(&mut merged[index]) {
                    Value::Object(map) => map,
                    _ => Map::new(),
                };
                merged[index] = Value::Object(merge_map(current, item_map.clone(), ty)?);
            }
            None => merged.push(clean(item.clone(), Clean::Strip).unwrap_or(Value::Null)),
        }
    }
    Ok(merged)
}

/// Splits scalars into those present in `by` and the rest, keeping their order.
fn partition_scalars(items: Vec<Value>, by: &[Value]) -> (Vec<Value>, Vec<Value>) {
    items.into_iter().partition(|item| by.contains(item))
}

/// Splits maps into those whose merge key appears in `by` and the rest, keeping their order.
fn partition_maps(
    items: Vec<Value>,
    by: &[Value],
    merge_key: &str,
) -> Result<(Vec<Value>, Vec<Value>), PatchError> {
    let mut present = Vec::new();
    let mut rest = Vec::new();
    for item in items {
        let Value::Object(map) = &item else {
            return Err(bad_arg_type("map[string]interface {}", &item));
        };
        let value = map
            .get(merge_key)
            .ok_or_else(|| no_merge_key(map, merge_key))?;
        let mut found = false;
        for (index, candidate) in by.iter().enumerate() {
            let Value::Object(candidate) = candidate else {
                return Err(PatchError::Other(format!(
                    "value for key {index} is not a map"
                )));
            };
            if candidate.get(merge_key) == Some(value) {
                found = true;
                break;
            }
        }
        if found {
            present.push(item);
        } else {
            rest.push(item);
        }
    }
    Ok((present, rest))
}

/// Sorts the patch items by `patch_order` and the server-only items by `server_order`,
/// then weaves the server-only items in front of the first patch item they preceded in
/// the server's list.
fn normalize_order(
    patch_items: Vec<Value>,
    server_only: Vec<Value>,
    patch_order: &[Value],
    server_order: &[Value],
    merge_key: &str,
    kind: Kind,
) -> Result<Vec<Value>, PatchError> {
    let patch_items = sort_by_order(patch_items, patch_order, merge_key, kind)?;
    let server_only = sort_by_order(server_only, server_order, merge_key, kind)?;

    let mut out = Vec::with_capacity(patch_items.len() + server_only.len());
    let mut left = server_only.into_iter().peekable();
    let mut right = patch_items.into_iter().peekable();
    while let (Some(l), Some(r)) = (left.peek(), right.peek()) {
        let li = position(server_order, l, merge_key, kind);
        let ri = position(server_order, r, merge_key, kind);
        let take_left = matches!((li, ri), (Some(li), Some(ri)) if li < ri);
        let next = if take_left { left.next() } else { right.next() };
        out.extend(next);
    }
    out.extend(left);
    out.extend(right);
    Ok(out)
}

/// Orders `items` by their positions in `order` (Go's `sort.SliceStable` with
/// apimachinery's comparator, which is an insertion sort for short lists).
fn sort_by_order(
    items: Vec<Value>,
    order: &[Value],
    merge_key: &str,
    kind: Kind,
) -> Result<Vec<Value>, PatchError> {
    let (mut items, deletions) = if kind == Kind::Map {
        for item in items.iter().chain(order.iter()) {
            merge_key_of(item, merge_key)?;
        }
        items.into_iter().partition::<Vec<Value>, _>(|item| {
            item.get(DIRECTIVE).and_then(Value::as_str) != Some("delete")
        })
    } else {
        (items, Vec::new())
    };
    let less = |a: &Value, b: &Value| match (
        position(order, a, merge_key, kind),
        position(order, b, merge_key, kind),
    ) {
        (Some(a), Some(b)) => a < b,
        _ => true,
    };
    for i in 1..items.len() {
        let mut j = i;
        while j > 0 && less(&items[j], &items[j - 1]) {
            items.swap(j, j - 1);
            j -= 1;
        }
    }
    items.extend(deletions);
    Ok(items)
}

/// Index of `item` in `list`, comparing merge keys for maps and whole values otherwise.
fn position(list: &[Value], item: &Value, merge_key: &str, kind: Kind) -> Option<usize> {
    if kind == Kind::Map {
        fn key_of<'a>(value: &'a Value, merge_key: &str) -> Option<&'a Value> {
            value.as_object().and_then(|map| map.get(merge_key))
        }
        let wanted = key_of(item, merge_key);
        list.iter()
            .position(|candidate| key_of(candidate, merge_key) == wanted)
    } else {
        list.iter().position(|candidate| candidate == item)
    }
}

/// The kind of JSON value, distinguishing integers from floats like Go's decoded types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Null,
    Bool,
    Int,
    Float,
    String,
    Map,
    List,
}

fn go_type(value: &Value) -> Kind {
    match value {
        Value::Null => Kind::Null,
        Value::Bool(_) => Kind::Bool,
        Value::Number(n) if n.is_f64() => Kind::Float,
        Value::Number(_) => Kind::Int,
        Value::String(_) => Kind::String,
        Value::Array(_) => Kind::List,
        Value::Object(_) => Kind::Map,
    }
}

fn go_type_name(value: &Value) -> &'static str {
    match go_type(value) {
        Kind::Null => "<nil>",
        Kind::Bool => "bool",
        Kind::Int => "int64",
        Kind::Float => "float64",
        Kind::String => "string",
        Kind::List => "[]interface {}",
        Kind::Map => "map[string]interface {}",
    }
}

fn json_type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The common kind of the items of the lists; they must all have one and not be lists.
fn element_kind(lists: &[&[Value]]) -> Result<Kind, PatchError> {
    let mut kind = None;
    for item in lists.iter().flat_map(|list| list.iter()) {
        let current = go_type(item);
        match kind {
            None if current == Kind::List => return Err(PatchError::NoListOfLists),
            None => kind = Some(current),
            Some(previous) if previous != current => {
                let printed: Vec<String> = lists.iter().map(|list| go_fmt_list(list)).collect();
                return Err(PatchError::Other(format!(
                    "list element types are not identical: [{}]",
                    printed.join(" ")
                )));
            }
            Some(_) => {}
        }
    }
    kind.ok_or_else(|| PatchError::Other("no elements in any of the given slices".to_string()))
}

fn extract_key(key: &str, prefix: &str) -> Result<String, PatchError> {
    match key.split_once('/') {
        Some((head, rest)) if head == prefix => Ok(rest.to_string()),
        _ if prefix == DELETE_FROM_PRIMITIVE_LIST => {
            Err(PatchError::BadPatchFormatForPrimitiveList)
        }
        _ => Err(PatchError::BadPatchFormatForSetElementOrderList),
    }
}

fn bad_arg_type(expected: &'static str, actual: &Value) -> PatchError {
    PatchError::BadArgType {
        expected,
        actual: go_type_name(actual),
    }
}

fn no_merge_key(map: &Map<String, Value>, key: &str) -> PatchError {
    PatchError::NoMergeKey {
        map: go_fmt_map(map),
        key: key.to_string(),
    }
}

fn unknown_patch_type(directive: &Value, map: &Map<String, Value>) -> PatchError {
    let directive = match directive {
        Value::String(s) => s.clone(),
        other => format!("%!s({}={})", go_type_name(other), go_fmt(other)),
    };
    PatchError::UnknownPatchType {
        directive,
        map: go_fmt_map(map),
    }
}

/// Formats a value like Go's `%v` of the decoded JSON.
fn go_fmt(value: &Value) -> String {
    match value {
        Value::Null => "<nil>".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
        Value::Array(items) => go_fmt_list(items),
        Value::Object(map) => go_fmt_map(map),
    }
}

fn go_fmt_list(items: &[Value]) -> String {
    let parts: Vec<String> = items.iter().map(go_fmt).collect();
    format!("[{}]", parts.join(" "))
}

fn go_fmt_map(map: &Map<String, Value>) -> String {
    let mut entries: Vec<(&String, &Value)> = map.iter().collect();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    let parts: Vec<String> = entries
        .iter()
        .map(|(k, v)| format!("{k}:{}", go_fmt(v)))
        .collect();
    format!("map[{}]", parts.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn smp(group: &str, kind: &str, original: Value, patch: Value) -> Value {
        match apply(group, kind, &original, &patch) {
            Ok(v) => v,
            Err(e) => panic!("patch failed: {e}"),
        }
    }

    fn smp_err(group: &str, kind: &str, original: Value, patch: Value) -> PatchError {
        match apply(group, kind, &original, &patch) {
            Ok(v) => panic!("expected an error, got {v}"),
            Err(e) => e,
        }
    }

    fn deployment(containers: Value) -> Value {
        json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app": "web"}},
                "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": containers}
                }
            }
        })
    }

    fn containers_of(obj: &Value) -> &Value {
        &obj["spec"]["template"]["spec"]["containers"]
    }

    fn names(list: &Value) -> Vec<String> {
        list.as_array()
            .map(|items| {
                items
                    .iter()
                    .map(|i| i["name"].as_str().unwrap_or("?").to_string())
                    .collect()
            })
            .unwrap_or_default()
    }

    fn assert_no_directives(value: &Value) {
        match value {
            Value::Object(map) => {
                for (k, v) in map {
                    assert!(!is_directive_key(k), "directive {k} left in result");
                    assert_no_directives(v);
                }
            }
            Value::Array(items) => items.iter().for_each(assert_no_directives),
            _ => {}
        }
    }

    // ----- maps, nulls and scalars -------------------------------------------------------

    #[test]
    fn maps_merge_recursively_and_scalars_replace() {
        let original =
            json!({"metadata": {"name": "a", "labels": {"x": "1", "y": "2"}}, "data": {"k": "v"}});
        let patch = json!({"metadata": {"labels": {"y": "3", "z": "4"}}, "data": {"k2": "v2"}});
        let out = smp("", "ConfigMap", original, patch);
        assert_eq!(
            out,
            json!({"metadata": {"name": "a", "labels": {"x": "1", "y": "3", "z": "4"}}, "data": {"k": "v", "k2": "v2"}})
        );
    }

    #[test]
    fn null_deletes_keys() {
        let original =
            json!({"metadata": {"name": "a", "labels": {"x": "1", "y": "2"}}, "data": {"k": "v"}});
        let patch = json!({"metadata": {"labels": {"x": null}}, "data": null});
        let out = smp("", "ConfigMap", original, patch);
        assert_eq!(
            out,
            json!({"metadata": {"name": "a", "labels": {"y": "2"}}})
        );
    }

    #[test]
    fn null_for_a_missing_key_is_ignored() {
        let original = json!({"metadata": {"name": "a"}});
        let out = smp(
            "",
            "ConfigMap",
            original.clone(),
            json!({"data": null, "metadata": {"labels": null}}),
        );
        assert_eq!(out, original);
    }

    #[test]
    fn nested_nulls_in_new_values_are_discarded() {
        let original = json!({"metadata": {"name": "a"}});
        let patch = json!({"metadata": {"annotations": {"keep": "1", "drop": null}}, "data": {"x": {"y": null}}});
        let out = smp("", "ConfigMap", original, patch);
        assert_eq!(
            out,
            json!({"metadata": {"name": "a", "annotations": {"keep": "1"}}, "data": {"x": {}}})
        );
    }

    #[test]
    fn nulls_inside_scalar_lists_of_new_values_are_kept() {
        let out = smp(
            "",
            "ConfigMap",
            json!({}),
            json!({"extra": ["a", null, "b"]}),
        );
        assert_eq!(out, json!({"extra": ["a", null, "b"]}));
    }

    #[test]
    fn value_of_another_type_replaces() {
        let original = json!({"spec": {"replicas": 1, "selector": {"matchLabels": {"a": "b"}}}});
        let out = smp(
            "apps",
            "Deployment",
            original,
            json!({"spec": {"replicas": "two", "selector": "x"}}),
        );
        assert_eq!(out, json!({"spec": {"replicas": "two", "selector": "x"}}));
    }

    #[test]
    fn null_patch_changes_nothing() {
        let original = json!({"metadata": {"name": "a"}});
        assert_eq!(
            smp("", "ConfigMap", original.clone(), Value::Null),
            original
        );
    }

    #[test]
    fn non_object_patches_are_bad_requests() {
        for patch in [json!([1, 2]), json!("x"), json!(3), json!(true)] {
            let err = smp_err("", "ConfigMap", json!({}), patch);
            assert!(matches!(err, PatchError::NotAnObject { .. }), "{err:?}");
            assert_eq!(err.status_code(), 400);
        }
        let err = smp_err("", "ConfigMap", json!({}), json!([]));
        assert_eq!(
            err.to_string(),
            "json: cannot unmarshal array into Go value of type map[string]interface {}"
        );
    }

    // ----- lists merged by key -----------------------------------------------------------

    #[test]
    fn deployment_containers_merge_by_name() {
        let original = deployment(json!([
            {"name": "app", "image": "app:1", "ports": [{"containerPort": 80, "protocol": "TCP"}]},
            {"name": "sidecar", "image": "sidecar:1"}
        ]));
        let patch = json!({"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "app:2"}]}}}});
        let out = smp("apps", "Deployment", original, patch);
        assert_eq!(
            containers_of(&out),
            &json!([
                {"name": "app", "image": "app:2", "ports": [{"containerPort": 80, "protocol": "TCP"}]},
                {"name": "sidecar", "image": "sidecar:1"}
            ])
        );
        assert_eq!(out["spec"]["replicas"], json!(1));
        assert_eq!(out["metadata"]["labels"], json!({"app": "web"}));
    }

    #[test]
    fn env_merges_by_name_inside_a_container() {
        let original = deployment(json!([{
            "name": "app",
            "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]
        }]));
        let patch = json!({"spec": {"template": {"spec": {"containers": [{
            "name": "app",
            "env": [{"name": "B", "value": "3"}]
        }]}}}});
        let out = smp("apps", "Deployment", original, patch);
        assert_eq!(
            containers_of(&out)[0]["env"],
            json!([{"name": "A", "value": "1"}, {"name": "B", "value": "3"}])
        );
    }

    #[test]
    fn env_value_from_replaces_value_with_null() {
        let original = deployment(json!([{"name": "app", "env": [{"name": "A", "value": "1"}]}]));
        let patch = json!({"spec": {"template": {"spec": {"containers": [{
            "name": "app",
            "env": [{"name": "A", "value": null, "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}]
        }]}}}});
        let out = smp("apps", "Deployment", original, patch);
        assert_eq!(
            containers_of(&out)[0]["env"],
            json!([{"name": "A", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}])
        );
    }

    #[test]
    fn new_items_follow_apimachinery_ordering() {
        // An item the patch names alone goes in front of the server's items ...
        let original = deployment(json!([{"name": "a"}, {"name": "b"}]));
        let patch = json!({"spec": {"template": {"spec": {"containers": [{"name": "c"}]}}}});
        let out = smp("apps", "Deployment", original.clone(), patch);
        assert_eq!(names(containers_of(&out)), ["c", "a", "b"]);

        // ... but after the server items that preceded an item the patch also names.
        let patch =
            json!({"spec": {"template": {"spec": {"containers": [{"name": "b"}, {"name": "c"}]}}}});
        let out = smp("apps", "Deployment", original, patch);
        assert_eq!(names(containers_of(&out)), ["a", "b", "c"]);
    }

    #[test]
    fn patch_order_wins_for_named_items() {
        let original =
            deployment(json!([{"name": "1"}, {"name": "2", "image": "b"}, {"name": "3"}]));
        let patch = json!({"spec": {"template": {"spec": {"containers": [
            {"name": "3", "image": "c"}, {"name": "1", "image": "a"}
        ]}}}});
        let out = smp("apps", "Deployment", original, patch);
        assert_eq!(
            containers_of(&out),
            &json!([{"name": "2", "image": "b"}, {"name": "3", "image": "c"}, {"name": "1", "image": "a"}])
        );
    }

    #[test]
    fn new_list_items_lose_nulls_and_directives() {
        let original = deployment(json!([{"name": "a"}]));
        let patch = json!({"spec": {"template": {"spec": {"containers": [{
            "name": "a",
            "volumeMounts": [{"mountPath": "/data", "name": "data", "readOnly": null}],
            "env": [{"name": "X", "value": "1", "$patch": "delete"}]
        }]}}}});
        let out = smp("apps", "Deployment", original, patch);
        assert_eq!(
            containers_of(&out)[0]["volumeMounts"],
            json!([{"mountPath": "/data", "name": "data"}])
        );
        assert_eq!(containers_of(&out)[0]["env"], json!([]));
        assert_no_directives(&out);
    }

    #[test]
    fn service_ports_merge_by_port() {
        let original = json!({
            "metadata": {"name": "svc"},
            "spec": {"ports": [
                {"name": "http", "port": 80, "targetPort": 8080, "protocol": "TCP"},
                {"name": "https", "port": 443, "targetPort": 8443, "protocol": "TCP"}
            ]}
        });
        let patch = json!({"spec": {"ports": [{"port": 80, "targetPort": 9090}]}});
        let out = smp("", "Service", original, patch);
        assert_eq!(
            out["spec"]["ports"],
            json!([
                {"name": "http", "port": 80, "targetPort": 9090, "protocol": "TCP"},
                {"name": "https", "port": 443, "targetPort": 8443, "protocol": "TCP"}
            ])
        );
    }

    #[test]
    fn container_ports_merge_by_container_port_only() {
        // SMP keys container ports by containerPort alone, so UDP 53 merges into TCP 53.
        let original = json!({"spec": {"containers": [{"name": "dns", "ports": [{"containerPort": 53, "protocol": "TCP"}]}]}});
        let patch = json!({"spec": {"containers": [{"name": "dns", "ports": [{"containerPort": 53, "protocol": "UDP"}]}]}});
        let out = smp("", "Pod", original, patch);
        assert_eq!(
            out["spec"]["containers"][0]["ports"],
            json!([{"containerPort": 53, "protocol": "UDP"}])
        );
    }

    #[test]
    fn merge_keys_compare_numbers_by_json_type() {
        // 80.0 is a float and does not match the integer 80, as in Go.
        let original = json!({"spec": {"ports": [{"port": 80, "name": "a"}]}});
        let out = smp(
            "",
            "Service",
            original,
            json!({"spec": {"ports": [{"port": 80.0, "name": "b"}]}}),
        );
        assert_eq!(out["spec"]["ports"].as_array().map(Vec::len), Some(2));
    }

    #[test]
    fn owner_references_merge_by_uid() {
        let original = json!({"metadata": {"name": "cm", "ownerReferences": [
            {"uid": "1", "name": "a", "kind": "X", "apiVersion": "v1"},
            {"uid": "2", "name": "b", "kind": "X", "apiVersion": "v1"}
        ]}});
        let patch = json!({"metadata": {"ownerReferences": [{"uid": "2", "controller": true}, {"$patch": "delete", "uid": "1"}]}});
        let out = smp("", "ConfigMap", original, patch);
        assert_eq!(
            out["metadata"]["ownerReferences"],
            json!([{"uid": "2", "name": "b", "kind": "X", "apiVersion": "v1", "controller": true}])
        );
    }

    #[test]
    fn conditions_merge_by_type() {
        let original = json!({"status": {"conditions": [
            {"type": "Ready", "status": "False"},
            {"type": "PodScheduled", "status": "True"}
        ]}});
        let patch = json!({"status": {"conditions": [{"type": "Ready", "status": "True"}]}});
        for (group, kind) in [
            ("", "Pod"),
            ("apps", "Deployment"),
            ("batch", "Job"),
            ("", "Namespace"),
            ("", "Node"),
        ] {
            let out = smp(group, kind, original.clone(), patch.clone());
            assert_eq!(
                out["status"]["conditions"],
                json!([{"type": "Ready", "status": "True"}, {"type": "PodScheduled", "status": "True"}]),
                "{group}/{kind}"
            );
        }
    }

    #[test]
    fn crd_conditions_have_no_patch_strategy() {
        let original =
            json!({"status": {"conditions": [{"type": "Established", "status": "True"}]}});
        let patch =
            json!({"status": {"conditions": [{"type": "NamesAccepted", "status": "True"}]}});
        let out = smp(
            "apiextensions.k8s.io",
            "CustomResourceDefinition",
            original,
            patch,
        );
        assert_eq!(
            out["status"]["conditions"],
            json!([{"type": "NamesAccepted", "status": "True"}])
        );
    }

    #[test]
    fn cronjob_pod_template_is_reached() {
        let original = json!({"spec": {"jobTemplate": {"spec": {"template": {"spec": {"containers": [
            {"name": "a", "image": "a:1"}, {"name": "b", "image": "b:1"}
        ]}}}}}});
        let patch = json!({"spec": {"jobTemplate": {"spec": {"template": {"spec": {"containers": [
            {"name": "b", "image": "b:2"}
        ]}}}}}});
        let out = smp("batch", "CronJob", original, patch);
        assert_eq!(
            out["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"],
            json!([{"name": "a", "image": "a:1"}, {"name": "b", "image": "b:2"}])
        );
    }

    #[test]
    fn service_account_secrets_and_volumes_merge_by_name() {
        let original = json!({"secrets": [{"name": "a"}, {"name": "b"}]});
        let out = smp(
            "",
            "ServiceAccount",
            original,
            json!({"secrets": [{"name": "b", "namespace": "x"}]}),
        );
        assert_eq!(
            out["secrets"],
            json!([{"name": "a"}, {"name": "b", "namespace": "x"}])
        );

        let original = json!({"spec": {"volumes": [{"name": "a", "emptyDir": {}}, {"name": "b", "emptyDir": {}}]}});
        let out = smp(
            "",
            "Pod",
            original,
            json!({"spec": {"volumes": [{"name": "b", "emptyDir": {"medium": "Memory"}}]}}),
        );
        assert_eq!(
            out["spec"]["volumes"],
            json!([{"name": "a", "emptyDir": {}}, {"name": "b", "emptyDir": {"medium": "Memory"}}])
        );
    }

    // ----- atomic lists ------------------------------------------------------------------

    #[test]
    fn atomic_lists_are_replaced() {
        let original = json!({"spec": {
            "tolerations": [{"key": "a", "operator": "Exists"}],
            "containers": [{"name": "c", "args": ["--a", "--b"], "command": ["run"]}]
        }});
        let patch = json!({"spec": {
            "tolerations": [{"key": "b", "operator": "Exists"}],
            "containers": [{"name": "c", "args": ["--c"]}]
        }});
        let out = smp("", "Pod", original, patch);
        assert_eq!(
            out["spec"]["tolerations"],
            json!([{"key": "b", "operator": "Exists"}])
        );
        assert_eq!(out["spec"]["containers"][0]["args"], json!(["--c"]));
        assert_eq!(out["spec"]["containers"][0]["command"], json!(["run"]));
    }

    #[test]
    fn rbac_and_endpoints_lists_are_replaced() {
        let original = json!({"rules": [{"verbs": ["get"]}, {"verbs": ["list"]}]});
        let out = smp(
            "rbac.authorization.k8s.io",
            "ClusterRole",
            original,
            json!({"rules": [{"verbs": ["watch"]}]}),
        );
        assert_eq!(out["rules"], json!([{"verbs": ["watch"]}]));

        let original = json!({"subsets": [{"addresses": [{"ip": "1.1.1.1"}]}]});
        let out = smp(
            "",
            "Endpoints",
            original,
            json!({"subsets": [{"ports": [{"port": 1}]}]}),
        );
        assert_eq!(out["subsets"], json!([{"ports": [{"port": 1}]}]));
    }

    #[test]
    fn replaced_atomic_lists_lose_directive_keys() {
        let original = json!({"spec": {"tolerations": [{"key": "a"}]}});
        let patch =
            json!({"spec": {"tolerations": [{"key": "b", "$patch": "delete", "value": null}]}});
        let out = smp("", "Pod", original, patch);
        assert_eq!(out["spec"]["tolerations"], json!([{"key": "b"}]));
    }

    #[test]
    fn pdb_selector_has_replace_strategy() {
        let original =
            json!({"spec": {"selector": {"matchLabels": {"a": "1"}}, "minAvailable": 1}});
        let patch = json!({"spec": {"selector": {"matchLabels": {"b": "2"}}}});
        let out = smp("policy", "PodDisruptionBudget", original, patch);
        assert_eq!(
            out["spec"],
            json!({"selector": {"matchLabels": {"b": "2"}}, "minAvailable": 1})
        );
    }

    // ----- primitive lists ---------------------------------------------------------------

    #[test]
    fn finalizers_union_without_duplicates() {
        let original = json!({"metadata": {"name": "x", "finalizers": ["a", "b"]}});
        let out = smp(
            "",
            "ConfigMap",
            original.clone(),
            json!({"metadata": {"finalizers": ["b", "c"]}}),
        );
        assert_eq!(out["metadata"]["finalizers"], json!(["a", "b", "c"]));
        // Like apimachinery, a value the patch names alone goes first.
        let out = smp(
            "",
            "ConfigMap",
            original,
            json!({"metadata": {"finalizers": ["c"]}}),
        );
        assert_eq!(out["metadata"]["finalizers"], json!(["c", "a", "b"]));
    }

    #[test]
    fn finalizers_union_applies_to_unknown_builtin_kinds() {
        let original = json!({"metadata": {"finalizers": ["a"]}});
        let out = smp(
            "coordination.k8s.io",
            "Lease",
            original,
            json!({"metadata": {"finalizers": ["a", "b"]}}),
        );
        assert_eq!(out["metadata"]["finalizers"], json!(["a", "b"]));
    }

    #[test]
    fn delete_from_primitive_list() {
        let original = json!({"metadata": {"finalizers": ["a", "b", "c"]}});
        let patch = json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["b", "zzz"]}});
        let out = smp("", "Secret", original, patch);
        assert_eq!(out, json!({"metadata": {"finalizers": ["a", "c"]}}));
    }

    #[test]
    fn delete_from_primitive_list_of_a_missing_field_adds_nothing() {
        let original = json!({"metadata": {"name": "x"}});
        let out = smp(
            "",
            "Secret",
            original.clone(),
            json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]}}),
        );
        assert_eq!(out, original);
    }

    #[test]
    fn delete_from_primitive_list_works_on_atomic_lists_too() {
        let original = json!({"spec": {"containers": [{"name": "c", "args": ["1", "2", "3"]}]}});
        let patch = json!({"spec": {"containers": [{"name": "c", "$deleteFromPrimitiveList/args": ["2"]}]}});
        let out = smp("", "Pod", original, patch);
        assert_eq!(out["spec"]["containers"][0]["args"], json!(["1", "3"]));
    }

    #[test]
    fn delete_and_add_in_one_patch() {
        let original = json!({"metadata": {"finalizers": ["a", "b"]}});
        let patch = json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"], "finalizers": ["c"]}});
        let out = smp("", "ConfigMap", original, patch);
        assert_eq!(out["metadata"]["finalizers"], json!(["c", "b"]));
    }

    #[test]
    fn node_pod_cidrs_are_a_set() {
        let original = json!({"spec": {"podCIDRs": ["10.0.0.0/24"]}});
        let out = smp(
            "",
            "Node",
            original,
            json!({"spec": {"podCIDRs": ["10.0.0.0/24", "fd00::/64"]}}),
        );
        assert_eq!(out["spec"]["podCIDRs"], json!(["10.0.0.0/24", "fd00::/64"]));
    }

    // ----- $patch directives -------------------------------------------------------------

    #[test]
    fn patch_delete_item_removes_every_match() {
        let original =
            deployment(json!([{"name": "a"}, {"name": "b"}, {"name": "a", "image": "dup"}]));
        let patch = json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "$patch": "delete"}]}}}});
        let out = smp("apps", "Deployment", original, patch);
        assert_eq!(containers_of(&out), &json!([{"name": "b"}]));
    }

    #[test]
    fn patch_delete_item_for_a_missing_key_is_harmless() {
        let original = deployment(json!([{"name": "a"}]));
        let patch = json!({"spec": {"template": {"spec": {"containers": [{"name": "zzz", "$patch": "delete"}]}}}});
        let out = smp("apps", "Deployment", original, patch);
        assert_eq!(containers_of(&out), &json!([{"name": "a"}]));
    }

    #[test]
    fn patch_replace_item_replaces_the_list() {
        let original = deployment(json!([{"name": "a", "image": "a"}, {"name": "b"}]));
        let patch = json!({"spec": {"template": {"spec": {"containers": [
            {"name": "c", "image": "c", "env": null},
            {"$patch": "replace"}
        ]}}}});
        let out = smp("apps", "Deployment", original, patch);
        assert_eq!(containers_of(&out), &json!([{"name": "c", "image": "c"}]));
    }

    #[test]
    fn patch_replace_alone_empties_the_list() {
        let original = json!({"metadata": {"ownerReferences": [{"uid": "1"}]}});
        let out = smp(
            "",
            "ConfigMap",
            original,
            json!({"metadata": {"ownerReferences": [{"$patch": "replace"}]}}),
        );
        assert_eq!(out["metadata"]["ownerReferences"], json!([]));
    }

    #[test]
    fn patch_replace_in_a_map_replaces_it() {
        let original = json!({"metadata": {"labels": {"a": "1", "b": "2"}}});
        let patch = json!({"metadata": {"labels": {"$patch": "replace", "c": "3"}}});
        let out = smp("", "ConfigMap", original, patch);
        assert_eq!(out["metadata"]["labels"], json!({"c": "3"}));
    }

    #[test]
    fn patch_replace_at_the_top_replaces_the_object() {
        let original = json!({"metadata": {"name": "a"}, "data": {"x": "1"}});
        let out = smp(
            "",
            "ConfigMap",
            original,
            json!({"$patch": "replace", "metadata": {"name": "b"}}),
        );
        assert_eq!(out, json!({"metadata": {"name": "b"}}));
    }

    #[test]
    fn patch_delete_in_a_map_empties_it() {
        // apimachinery leaves an empty map where the deleted one was.
        let original = json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "resources": {"limits": {"cpu": "1"}}}]}}}});
        let patch = json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "resources": {"$patch": "delete"}}]}}}});
        let out = smp("apps", "Deployment", original, patch);
        assert_eq!(containers_of(&out)[0]["resources"], json!({}));
    }

    #[test]
    fn directive_maps_for_missing_keys_are_dropped() {
        let original = json!({"metadata": {"name": "a"}});
        let patch = json!({"metadata": {"labels": {"$patch": "delete"}, "annotations": {"$patch": "replace", "x": "1"}}});
        let out = smp("", "ConfigMap", original.clone(), patch);
        assert_eq!(out, original);
    }

    // ----- $setElementOrder -------------------------------------------------------------

    #[test]
    fn set_element_order_reorders_keyed_lists() {
        let original = deployment(json!([{"name": "a"}, {"name": "b"}, {"name": "c"}]));
        let patch = json!({"spec": {"template": {"spec": {
            "$setElementOrder/containers": [{"name": "c"}, {"name": "a"}, {"name": "d"}],
            "containers": [{"name": "d", "image": "d"}]
        }}}});
        let out = smp("apps", "Deployment", original, patch);
        // c, a and d come in the given order; b, which only the server had, goes before
        // the first listed item it preceded on the server (c), as apimachinery does.
        assert_eq!(names(containers_of(&out)), ["b", "c", "a", "d"]);
        assert_no_directives(&out);
    }

    #[test]
    fn set_element_order_appends_new_items_as_kubectl_sends_them() {
        let original = deployment(json!([{"name": "a"}, {"name": "b"}]));
        let patch = json!({"spec": {"template": {"spec": {
            "$setElementOrder/containers": [{"name": "a"}, {"name": "b"}, {"name": "c"}],
            "containers": [{"name": "c"}]
        }}}});
        let out = smp("apps", "Deployment", original, patch);
        assert_eq!(names(containers_of(&out)), ["a", "b", "c"]);
    }

    #[test]
    fn set_element_order_reorders_primitive_lists() {
        let original = json!({"metadata": {"finalizers": ["a", "b", "c"]}});
        let patch = json!({"metadata": {"$setElementOrder/finalizers": ["c", "b", "a"]}});
        let out = smp("", "ConfigMap", original, patch);
        assert_eq!(out, json!({"metadata": {"finalizers": ["c", "b", "a"]}}));
    }

    #[test]
    fn set_element_order_with_a_deletion() {
        let original = json!({"metadata": {"finalizers": ["a", "b"]}});
        let patch = json!({"metadata": {
            "$setElementOrder/finalizers": ["a"],
            "$deleteFromPrimitiveList/finalizers": ["b"]
        }});
        let out = smp("", "ConfigMap", original, patch);
        assert_eq!(out, json!({"metadata": {"finalizers": ["a"]}}));
    }

    #[test]
    fn set_element_order_for_a_new_list() {
        let original = json!({"metadata": {"name": "x"}});
        let patch = json!({"metadata": {"$setElementOrder/finalizers": ["b", "a"], "finalizers": ["b", "a"]}});
        let out = smp("", "ConfigMap", original, patch);
        assert_eq!(out["metadata"]["finalizers"], json!(["b", "a"]));
    }

    #[test]
    fn set_element_order_must_agree_with_the_patch_list() {
        let original = json!({"metadata": {"finalizers": ["a", "b", "c"]}});
        let patch = json!({"metadata": {"$setElementOrder/finalizers": ["a", "b", "c"], "finalizers": ["c", "a"]}});
        let err = smp_err("", "ConfigMap", original, patch);
        assert!(
            matches!(err, PatchError::SetElementOrderMismatch { .. }),
            "{err:?}"
        );
        assert!(err.to_string().contains("doesn't match"));
    }

    // ----- $retainKeys ------------------------------------------------------------------

    #[test]
    fn retain_keys_switches_deployment_strategy() {
        let original = deployment(json!([{"name": "a"}]));
        let patch = json!({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}});
        let out = smp("apps", "Deployment", original, patch);
        assert_eq!(out["spec"]["strategy"], json!({"type": "Recreate"}));
        assert_no_directives(&out);
    }

    #[test]
    fn retain_keys_switches_volume_source() {
        let original = json!({"spec": {"volumes": [{"name": "v", "emptyDir": {}}]}});
        let patch = json!({"spec": {"volumes": [{"name": "v", "$retainKeys": ["name", "configMap"], "configMap": {"name": "cm"}}]}});
        let out = smp("", "Pod", original, patch);
        assert_eq!(
            out["spec"]["volumes"],
            json!([{"name": "v", "configMap": {"name": "cm"}}])
        );
    }

    #[test]
    fn retain_keys_must_cover_the_patch() {
        let original = deployment(json!([]));
        let patch = json!({"spec": {"strategy": {"$retainKeys": ["type"], "type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}});
        let err = smp_err("apps", "Deployment", original.clone(), patch);
        assert_eq!(err, PatchError::BadPatchFormatForRetainKeys);
        assert_eq!(err.status_code(), 400);

        let patch = json!({"spec": {"strategy": {"$retainKeys": "type"}}});
        let err = smp_err("apps", "Deployment", original, patch);
        assert_eq!(err, PatchError::BadPatchFormatForRetainKeys);
    }

    // ----- malformed directives ----------------------------------------------------------

    #[test]
    fn unknown_patch_type_in_a_map_is_an_error() {
        let original = json!({"metadata": {"labels": {"a": "1"}}});
        let err = smp_err(
            "",
            "ConfigMap",
            original,
            json!({"metadata": {"labels": {"$patch": "foo"}}}),
        );
        assert_eq!(
            err.to_string(),
            "unknown patch type: foo in map: map[$patch:foo]"
        );
        assert_eq!(err.status_code(), 500);

        let err = smp_err("", "ConfigMap", json!({}), json!({"$patch": 1}));
        assert!(matches!(err, PatchError::UnknownPatchType { .. }));
        let err = smp_err("", "ConfigMap", json!({}), json!({"$patch": "merge"}));
        assert!(matches!(err, PatchError::UnknownPatchType { .. }));
    }

    #[test]
    fn unknown_patch_type_in_a_list_is_an_error() {
        let original = deployment(json!([{"name": "a"}]));
        let patch = json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "$patch": "foo"}]}}}});
        let err = smp_err("apps", "Deployment", original.clone(), patch);
        assert!(
            matches!(err, PatchError::UnknownPatchType { .. }),
            "{err:?}"
        );

        let patch = json!({"spec": {"template": {"spec": {"containers": [{"$patch": "merge"}]}}}});
        let err = smp_err("apps", "Deployment", original, patch);
        assert_eq!(err, PatchError::MergingListsNotSupported);
    }

    #[test]
    fn keyed_items_need_their_key() {
        let original = deployment(json!([{"name": "a"}]));
        let patch = json!({"spec": {"template": {"spec": {"containers": [{"image": "x"}]}}}});
        let err = smp_err("apps", "Deployment", original.clone(), patch);
        assert_eq!(
            err.to_string(),
            "map: map[image:x] does not contain declared merge key: name"
        );

        let patch = json!({"spec": {"template": {"spec": {"containers": [{"$patch": "delete"}]}}}});
        let err = smp_err("apps", "Deployment", original, patch);
        assert!(matches!(err, PatchError::NoMergeKey { .. }), "{err:?}");
    }

    #[test]
    fn malformed_parallel_list_keys_are_errors() {
        let original = json!({"metadata": {"finalizers": ["a"]}});
        let err = smp_err(
            "",
            "ConfigMap",
            original.clone(),
            json!({"metadata": {"$deleteFromPrimitiveListfinalizers": ["a"]}}),
        );
        assert_eq!(err, PatchError::BadPatchFormatForPrimitiveList);
        let err = smp_err(
            "",
            "ConfigMap",
            original.clone(),
            json!({"metadata": {"$setElementOrderfinalizers": ["a"]}}),
        );
        assert_eq!(err, PatchError::BadPatchFormatForSetElementOrderList);
        let err = smp_err(
            "",
            "ConfigMap",
            original,
            json!({"metadata": {"$setElementOrder/finalizers": "a"}}),
        );
        assert!(matches!(err, PatchError::BadArgType { .. }), "{err:?}");
    }

    #[test]
    fn mixed_and_nested_list_items_are_errors() {
        let original = json!({"metadata": {"finalizers": ["a"]}});
        let err = smp_err(
            "",
            "ConfigMap",
            original.clone(),
            json!({"metadata": {"finalizers": [1]}}),
        );
        assert!(
            err.to_string()
                .starts_with("list element types are not identical"),
            "{err}"
        );
        let err = smp_err(
            "",
            "ConfigMap",
            json!({"metadata": {"finalizers": []}}),
            json!({"metadata": {"finalizers": [["a"]]}}),
        );
        assert_eq!(err, PatchError::NoListOfLists);
        assert_eq!(err.status_code(), 422);
        let err = smp_err(
            "",
            "ConfigMap",
            original,
            json!({"metadata": {"finalizers": [{"a": 1}]}}),
        );
        assert!(matches!(err, PatchError::Other(_)), "{err:?}");
    }

    // ----- kinds ------------------------------------------------------------------------

    #[test]
    fn custom_kinds_are_refused() {
        let err = smp_err("example.com", "Widget", json!({}), json!({"spec": {}}));
        assert!(matches!(err, PatchError::Unsupported { .. }));
        assert_eq!(err.status_code(), 415);
        assert_eq!(err.reason(), "UnsupportedMediaType");
        assert!(
            err.to_string()
                .starts_with("the body of the request was in an unknown format")
        );
        assert!(!supports_strategic_merge_patch(
            "monitoring.coreos.com",
            "Prometheus"
        ));
        assert!(supports_strategic_merge_patch("", "ConfigMap"));
        assert!(supports_strategic_merge_patch("events.k8s.io", "Event"));
    }

    #[test]
    fn builtin_list_types_for_server_side_apply() {
        let map = |keys: &[&str]| ListType::Map(keys.iter().map(|k| (*k).to_string()).collect());
        let pod_spec_prefixes: [(&str, &str, &[&str]); 7] = [
            ("", "Pod", &["spec"]),
            ("apps", "Deployment", &["spec", "template", "spec"]),
            ("apps", "StatefulSet", &["spec", "template", "spec"]),
            ("apps", "DaemonSet", &["spec", "template", "spec"]),
            ("apps", "ReplicaSet", &["spec", "template", "spec"]),
            ("batch", "Job", &["spec", "template", "spec"]),
            (
                "batch",
                "CronJob",
                &["spec", "jobTemplate", "spec", "template", "spec"],
            ),
        ];
        for (group, kind, prefix) in pod_spec_prefixes {
            let at = |rest: &[&str]| {
                let path: Vec<&str> = prefix.iter().chain(rest.iter()).copied().collect();
                builtin_list_type(group, kind, &path)
            };
            for list in ["containers", "initContainers", "ephemeralContainers"] {
                assert_eq!(at(&[list]), map(&["name"]), "{kind} {list}");
                assert_eq!(at(&[list, "ports"]), map(&["containerPort", "protocol"]));
                assert_eq!(at(&[list, "env"]), map(&["name"]));
                assert_eq!(at(&[list, "volumeMounts"]), map(&["mountPath"]));
                assert_eq!(at(&[list, "volumeDevices"]), map(&["devicePath"]));
                assert_eq!(at(&[list, "args"]), ListType::Atomic);
                assert_eq!(at(&[list, "command"]), ListType::Atomic);
                assert_eq!(at(&[list, "envFrom"]), ListType::Atomic);
            }
            assert_eq!(at(&["volumes"]), map(&["name"]));
            assert_eq!(at(&["imagePullSecrets"]), map(&["name"]));
            assert_eq!(at(&["hostAliases"]), map(&["ip"]));
            assert_eq!(at(&["resourceClaims"]), map(&["name"]));
            assert_eq!(
                at(&["topologySpreadConstraints"]),
                map(&["topologyKey", "whenUnsatisfiable"])
            );
            assert_eq!(at(&["tolerations"]), ListType::Atomic);
        }
        for (group, kind) in [
            ("", "Pod"),
            ("apps", "Deployment"),
            ("apps", "StatefulSet"),
            ("apps", "DaemonSet"),
            ("apps", "ReplicaSet"),
            ("", "Namespace"),
            ("", "Node"),
            ("apiextensions.k8s.io", "CustomResourceDefinition"),
        ] {
            assert_eq!(
                builtin_list_type(group, kind, &["status", "conditions"]),
                map(&["type"]),
                "{kind}"
            );
        }
        // Job conditions merge by type for SMP but are atomic for server-side apply.
        assert_eq!(
            builtin_list_type("batch", "Job", &["status", "conditions"]),
            ListType::Atomic
        );
        for (group, kind) in [
            ("", "ConfigMap"),
            ("example.com", "Widget"),
            ("apps", "Deployment"),
        ] {
            assert_eq!(
                builtin_list_type(group, kind, &["metadata", "finalizers"]),
                ListType::Set
            );
            assert_eq!(
                builtin_list_type(group, kind, &["metadata", "ownerReferences"]),
                map(&["uid"])
            );
            assert_eq!(
                builtin_list_type(group, kind, &["metadata", "managedFields"]),
                ListType::Atomic
            );
        }
        assert_eq!(
            builtin_list_type(
                "apps",
                "Deployment",
                &["spec", "template", "metadata", "finalizers"]
            ),
            ListType::Set
        );
        assert_eq!(
            builtin_list_type("", "Service", &["spec", "ports"]),
            map(&["port", "protocol"])
        );
        assert_eq!(
            builtin_list_type("", "Service", &["status", "loadBalancer", "ingress"]),
            ListType::Atomic
        );
        assert_eq!(
            builtin_list_type("", "Endpoints", &["subsets"]),
            ListType::Atomic
        );
        assert_eq!(
            builtin_list_type("", "ServiceAccount", &["secrets"]),
            map(&["name"])
        );
        assert_eq!(
            builtin_list_type("rbac.authorization.k8s.io", "Role", &["rules"]),
            ListType::Atomic
        );
        assert_eq!(
            builtin_list_type("rbac.authorization.k8s.io", "ClusterRole", &["rules"]),
            ListType::Atomic
        );
        assert_eq!(
            builtin_list_type("rbac.authorization.k8s.io", "RoleBinding", &["subjects"]),
            ListType::Atomic
        );
        assert_eq!(
            builtin_list_type(
                "rbac.authorization.k8s.io",
                "ClusterRoleBinding",
                &["subjects"]
            ),
            ListType::Atomic
        );
        assert_eq!(
            builtin_list_type("apps", "StatefulSet", &["spec", "volumeClaimTemplates"]),
            ListType::Atomic
        );
        assert_eq!(
            builtin_list_type("", "ConfigMap", &["data"]),
            ListType::Atomic
        );
        assert_eq!(
            builtin_list_type("example.com", "Widget", &["spec", "items"]),
            ListType::Atomic
        );
        assert_eq!(builtin_list_type("", "Pod", &[]), ListType::Atomic);
        assert_eq!(
            builtin_list_type("", "Node", &["spec", "podCIDRs"]),
            ListType::Set
        );
    }

    // ----- robustness -------------------------------------------------------------------

    #[test]
    fn odd_inputs_never_panic() {
        let originals = [
            json!({}),
            json!({"metadata": {"finalizers": ["a", "b"], "labels": {"a": "1"}}}),
            json!({"spec": {"containers": [{"name": "a", "env": [{"name": "X"}]}, {"image": "nameless"}], "tolerations": [1]}}),
            json!({"spec": {"containers": "not a list", "volumes": [[1]]}, "status": {"conditions": [{"type": "A"}, null]}}),
            json!({"metadata": null, "spec": {"template": {"spec": {"containers": [{"name": 1}, {"name": 1.5}]}}}}),
            json!([1, 2, 3]),
            json!("scalar"),
            Value::Null,
        ];
        let patches = [
            json!({}),
            Value::Null,
            json!([]),
            json!(["x"]),
            json!(42),
            json!({"$patch": null}),
            json!({"$patch": ["replace"]}),
            json!({"$retainKeys": null}),
            json!({"$retainKeys": [1, null, "spec"], "spec": null}),
            json!({"$setElementOrder/": []}),
            json!({"$setElementOrder/spec": [1], "spec": {"a": 1}}),
            json!({"$deleteFromPrimitiveList/": [1]}),
            json!({"$deleteFromPrimitiveList/metadata": {"finalizers": ["a"]}}),
            json!({"$deleteFromPrimitiveList/metadata": "x"}),
            json!({"metadata": {"$deleteFromPrimitiveList/finalizers": null}}),
            json!({"metadata": {"$deleteFromPrimitiveList/finalizers": [{"a": 1}]}}),
            json!({"metadata": {"$setElementOrder/finalizers": [{"name": "a"}], "finalizers": null}}),
            json!({"metadata": {"$setElementOrder/finalizers": [], "finalizers": []}}),
            json!({"metadata": {"$setElementOrder/ownerReferences": [{"uid": "1"}, "x"], "ownerReferences": [{"uid": "1"}]}}),
            json!({"metadata": {"finalizers": [null, null], "labels": {"$patch": "delete", "x": null}}}),
            json!({"metadata": {"ownerReferences": [{"$patch": "replace"}, {"$patch": "delete", "uid": null}]}}),
            json!({"spec": {"containers": [{"name": "a", "env": [{"name": "X", "$patch": "delete"}, {"name": null}]}]}}),
            json!({"spec": {"containers": [{"name": 1}, {"name": "a", "$retainKeys": ["name"]}]}}),
            json!({"spec": {"containers": [[{"name": "a"}]], "volumes": [{"name": "v", "$patch": "replace"}]}}),
            json!({"spec": {"containers": [{"$setElementOrder/env": [{"name": "X"}], "name": "a", "env": [{"name": "X"}]}]}}),
            json!({"spec": {"tolerations": [{"$patch": "delete"}], "containers": null}}),
            json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "ports": [{"containerPort": null}]}]}}}}),
            json!({"status": {"conditions": [null, {"type": "A", "status": null}]}}),
            json!({"status": {"$setElementOrder/conditions": [{"type": "A"}], "conditions": [{"type": "B"}]}}),
            json!({"status": {"conditions": {"$patch": "replace"}}}),
            json!({"spec": {"selector": {"$patch": "delete"}, "strategy": {"$retainKeys": ["type"], "$patch": "replace"}}}),
        ];
        let kinds = [
            ("", "Pod"),
            ("", "ConfigMap"),
            ("apps", "Deployment"),
            ("batch", "CronJob"),
            ("", "Service"),
            ("policy", "PodDisruptionBudget"),
            ("example.com", "Widget"),
        ];
        for (group, kind) in kinds {
            for original in &originals {
                for patch in &patches {
                    if let Ok(out) = apply(group, kind, original, patch) {
                        assert_no_directives(&out);
                    }
                }
            }
        }
    }

    #[test]
    fn generated_patches_never_panic_or_leave_directives() {
        // A small deterministic generator of JSON trees sprinkled with directives.
        struct Rng(u64);
        impl Rng {
            fn next(&mut self, n: u64) -> u64 {
                self.0 ^= self.0 << 13;
                self.0 ^= self.0 >> 7;
                self.0 ^= self.0 << 17;
                self.0 % n
            }
        }
        const KEYS: &[&str] = &[
            "metadata",
            "spec",
            "status",
            "template",
            "containers",
            "env",
            "ports",
            "finalizers",
            "ownerReferences",
            "conditions",
            "name",
            "uid",
            "type",
            "port",
            "containerPort",
            "image",
            "$patch",
            "$retainKeys",
            "$setElementOrder/containers",
            "$setElementOrder/finalizers",
            "$deleteFromPrimitiveList/finalizers",
            "$deleteFromPrimitiveList/args",
        ];
        fn gen_value(rng: &mut Rng, depth: u32) -> Value {
            let choice = if depth == 0 { rng.next(5) } else { rng.next(8) };
            match choice {
                0 => Value::Null,
                1 => json!(rng.next(3)),
                2 => json!(["a", "b", "c", "replace", "delete"][rng.next(5) as usize]),
                3 => json!(rng.next(2) == 0),
                4 => json!(["name", "type", "a"][rng.next(3) as usize]),
                5 | 6 => {
                    let mut map = Map::new();
                    for _ in 0..rng.next(4) {
                        let key = KEYS[rng.next(KEYS.len() as u64) as usize];
                        map.insert(key.to_string(), gen_value(rng, depth - 1));
                    }
                    Value::Object(map)
                }
                _ => Value::Array(
                    (0..rng.next(4))
                        .map(|_| gen_value(rng, depth - 1))
                        .collect(),
                ),
            }
        }
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for _ in 0..3000 {
            let original = gen_value(&mut rng, 5);
            let patch = gen_value(&mut rng, 5);
            for (group, kind) in [("", "Pod"), ("apps", "Deployment"), ("", "Service")] {
                if let Ok(out) = apply(group, kind, &original, &patch) {
                    // The original may carry directive-like keys itself; only check patches
                    // against directive-free originals.
                    if !has_directive(&original) {
                        assert_no_directives(&out);
                    }
                }
            }
        }

        fn has_directive(value: &Value) -> bool {
            match value {
                Value::Object(map) => map
                    .iter()
                    .any(|(k, v)| is_directive_key(k) || has_directive(v)),
                Value::Array(items) => items.iter().any(has_directive),
                _ => false,
            }
        }
    }
}
