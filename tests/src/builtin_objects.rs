//! One minimal valid object of each kind the embedded cluster serves beyond the first few (the ones
//! kube-apiserver accepts as they are), for round-trip tests on both servers.

use serde_json::{Value, json};

/// A minimal object: its collection path (with `{ns}` for the namespace), and the object.
pub struct Minimal {
    /// The collection path, e.g. `/api/v1/namespaces/{ns}/resourcequotas`.
    pub collection: &'static str,
    /// The object as a client sends it.
    pub object: Value,
}

impl Minimal {
    /// The collection path in namespace `ns`.
    pub fn collection_in(&self, ns: &str) -> String {
        self.collection.replace("{ns}", ns)
    }

    /// The object's name.
    pub fn name(&self) -> &str {
        self.object["metadata"]["name"].as_str().unwrap_or_default()
    }
}

fn object(api_version: &str, kind: &str, name: &str, body: Value) -> Value {
    let mut obj = json!({ "apiVersion": api_version, "kind": kind, "metadata": { "name": name } });
    if let (Some(o), Value::Object(fields)) = (obj.as_object_mut(), body) {
        o.extend(fields);
    }
    obj
}

fn minimal(collection: &'static str, api_version: &str, kind: &str, body: Value) -> Minimal {
    let name = format!("min-{}", kind.to_lowercase());
    Minimal {
        collection,
        object: object(api_version, kind, &name, body),
    }
}

const SELECTOR: &str = r#"{"matchLabels":{"app":"a"}}"#;

fn selector() -> Value {
    serde_json::from_str(SELECTOR).unwrap_or(Value::Null)
}

fn pod_template() -> Value {
    json!({ "metadata": { "labels": { "app": "a" } },
            "spec": { "containers": [{ "name": "c", "image": "nginx:1" }] } })
}

fn webhook() -> Value {
    json!({ "name": "check.example.dev", "sideEffects": "None", "admissionReviewVersions": ["v1"],
            "clientConfig": { "url": "https://hooks.example.dev/check" } })
}

/// Every minimal object, namespaced ones first.
pub fn all() -> Vec<Minimal> {
    vec![
        minimal(
            "/api/v1/namespaces/{ns}/resourcequotas",
            "v1",
            "ResourceQuota",
            json!({ "spec": { "hard": { "limits.cpu": "2" } } }),
        ),
        minimal(
            "/api/v1/namespaces/{ns}/limitranges",
            "v1",
            "LimitRange",
            json!({ "spec": { "limits": [{ "type": "Container", "max": { "cpu": "1" } }] } }),
        ),
        minimal(
            "/api/v1/namespaces/{ns}/podtemplates",
            "v1",
            "PodTemplate",
            json!({ "template": pod_template() }),
        ),
        minimal(
            "/api/v1/namespaces/{ns}/replicationcontrollers",
            "v1",
            "ReplicationController",
            json!({ "spec": { "replicas": 1, "selector": { "app": "a" }, "template": pod_template() } }),
        ),
        minimal(
            "/apis/apps/v1/namespaces/{ns}/controllerrevisions",
            "apps/v1",
            "ControllerRevision",
            json!({ "revision": 1, "data": { "spec": {} } }),
        ),
        minimal(
            "/apis/policy/v1/namespaces/{ns}/poddisruptionbudgets",
            "policy/v1",
            "PodDisruptionBudget",
            json!({ "spec": { "minAvailable": 1, "selector": selector() } }),
        ),
        minimal(
            "/apis/networking.k8s.io/v1/namespaces/{ns}/networkpolicies",
            "networking.k8s.io/v1",
            "NetworkPolicy",
            json!({ "spec": { "podSelector": {} } }),
        ),
        minimal(
            "/apis/networking.k8s.io/v1/namespaces/{ns}/ingresses",
            "networking.k8s.io/v1",
            "Ingress",
            json!({ "spec": { "defaultBackend": { "service": { "name": "s", "port": { "number": 80 } } } } }),
        ),
        minimal(
            "/apis/autoscaling/v2/namespaces/{ns}/horizontalpodautoscalers",
            "autoscaling/v2",
            "HorizontalPodAutoscaler",
            json!({ "spec": { "maxReplicas": 3,
                "scaleTargetRef": { "apiVersion": "apps/v1", "kind": "Deployment", "name": "d" } } }),
        ),
        minimal(
            "/apis/coordination.k8s.io/v1/namespaces/{ns}/leases",
            "coordination.k8s.io/v1",
            "Lease",
            json!({ "spec": { "holderIdentity": "me" } }),
        ),
        minimal(
            "/apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices",
            "discovery.k8s.io/v1",
            "EndpointSlice",
            json!({ "addressType": "IPv4", "endpoints": [{ "addresses": ["10.0.0.1"] }] }),
        ),
        minimal(
            "/apis/batch/v1/namespaces/{ns}/cronjobs",
            "batch/v1",
            "CronJob",
            json!({ "spec": { "schedule": "*/5 * * * *", "jobTemplate": { "spec": { "template": {
                "spec": { "restartPolicy": "OnFailure",
                          "containers": [{ "name": "c", "image": "busybox:1" }] } } } } } }),
        ),
        minimal(
            "/apis/storage.k8s.io/v1/namespaces/{ns}/csistoragecapacities",
            "storage.k8s.io/v1",
            "CSIStorageCapacity",
            json!({ "storageClassName": "standard" }),
        ),
        minimal(
            "/apis/resource.k8s.io/v1/namespaces/{ns}/resourceclaimtemplates",
            "resource.k8s.io/v1",
            "ResourceClaimTemplate",
            json!({ "spec": { "spec": {} } }),
        ),
        minimal(
            "/api/v1/persistentvolumes",
            "v1",
            "PersistentVolume",
            json!({ "spec": { "capacity": { "storage": "1Gi" }, "accessModes": ["ReadWriteOnce"],
                              "hostPath": { "path": "/tmp/pv" } } }),
        ),
        minimal(
            "/apis/scheduling.k8s.io/v1/priorityclasses",
            "scheduling.k8s.io/v1",
            "PriorityClass",
            json!({ "value": 1000 }),
        ),
        minimal(
            "/apis/storage.k8s.io/v1/storageclasses",
            "storage.k8s.io/v1",
            "StorageClass",
            json!({ "provisioner": "example.dev/disk" }),
        ),
        minimal(
            "/apis/storage.k8s.io/v1/csidrivers",
            "storage.k8s.io/v1",
            "CSIDriver",
            json!({ "spec": {} }),
        ),
        minimal(
            "/apis/storage.k8s.io/v1/volumeattributesclasses",
            "storage.k8s.io/v1",
            "VolumeAttributesClass",
            json!({ "driverName": "example.dev", "parameters": { "iops": "100" } }),
        ),
        minimal(
            "/apis/networking.k8s.io/v1/ingressclasses",
            "networking.k8s.io/v1",
            "IngressClass",
            json!({ "spec": { "controller": "example.dev/ingress" } }),
        ),
        minimal(
            "/apis/node.k8s.io/v1/runtimeclasses",
            "node.k8s.io/v1",
            "RuntimeClass",
            json!({ "handler": "runc" }),
        ),
        minimal(
            "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
            "admissionregistration.k8s.io/v1",
            "ValidatingWebhookConfiguration",
            json!({ "webhooks": [webhook()] }),
        ),
        minimal(
            "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations",
            "admissionregistration.k8s.io/v1",
            "MutatingWebhookConfiguration",
            json!({ "webhooks": [webhook()] }),
        ),
        minimal(
            "/apis/certificates.k8s.io/v1/certificatesigningrequests",
            "certificates.k8s.io/v1",
            "CertificateSigningRequest",
            json!({ "spec": { "request": CSR, "signerName": "example.dev/signer", "usages": ["digital signature"] } }),
        ),
        minimal(
            "/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations",
            "flowcontrol.apiserver.k8s.io/v1",
            "PriorityLevelConfiguration",
            json!({ "spec": { "type": "Limited", "limited": { "nominalConcurrencyShares": 5,
                "limitResponse": { "type": "Reject" } } } }),
        ),
        minimal(
            "/apis/resource.k8s.io/v1/deviceclasses",
            "resource.k8s.io/v1",
            "DeviceClass",
            json!({ "spec": {} }),
        ),
        minimal(
            "/apis/resource.k8s.io/v1/namespaces/{ns}/resourceclaims",
            "resource.k8s.io/v1",
            "ResourceClaim",
            json!({ "spec": {} }),
        ),
        minimal(
            "/apis/storage.k8s.io/v1/volumeattachments",
            "storage.k8s.io/v1",
            "VolumeAttachment",
            json!({ "spec": { "attacher": "example.dev", "nodeName": "n",
                              "source": { "persistentVolumeName": "pv" } } }),
        ),
        minimal(
            "/apis/storage.k8s.io/v1/csinodes",
            "storage.k8s.io/v1",
            "CSINode",
            json!({ "spec": { "drivers": [] } }),
        ),
        minimal(
            "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas",
            "flowcontrol.apiserver.k8s.io/v1",
            "FlowSchema",
            json!({ "spec": { "priorityLevelConfiguration": { "name": "global-default" } } }),
        ),
        minimal(
            "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies",
            "admissionregistration.k8s.io/v1",
            "ValidatingAdmissionPolicy",
            json!({ "spec": { "validations": [{ "expression": "true" }],
                "matchConstraints": { "resourceRules": [{ "apiGroups": [""], "apiVersions": ["v1"],
                    "operations": ["CREATE"], "resources": ["configmaps"] }] } } }),
        ),
        minimal(
            "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings",
            "admissionregistration.k8s.io/v1",
            "ValidatingAdmissionPolicyBinding",
            json!({ "spec": { "policyName": "p", "validationActions": ["Deny"] } }),
        ),
    ]
}

/// One minimal valid object of each kind [`all`] leaves out (but APIServices, which would register an API
/// group on the control plane): the kinds operators write most, `autoscaling/v1` HorizontalPodAutoscalers,
/// RBAC, events, IP addresses and service CIDRs, resource slices, CustomResourceDefinitions. `{ns}` in an object stands for the namespace, `{twin}`
/// for a token that tells two objects created side by side apart (in names and CRD groups).
pub fn first_kinds() -> Vec<Minimal> {
    let deployment_spec =
        || json!({ "spec": { "selector": selector(), "template": pod_template() } });
    vec![
        minimal(
            "/api/v1/namespaces/{ns}/configmaps",
            "v1",
            "ConfigMap",
            json!({ "data": { "a": "1" } }),
        ),
        minimal(
            "/api/v1/namespaces/{ns}/secrets",
            "v1",
            "Secret",
            json!({ "type": "Opaque", "data": { "k": "dg==" } }),
        ),
        minimal(
            "/api/v1/namespaces/{ns}/serviceaccounts",
            "v1",
            "ServiceAccount",
            json!({}),
        ),
        minimal(
            "/api/v1/namespaces/{ns}/services",
            "v1",
            "Service",
            json!({ "spec": { "selector": { "app": "a" }, "ports": [{ "port": 80, "targetPort": "http" }] } }),
        ),
        minimal(
            "/api/v1/namespaces/{ns}/pods",
            "v1",
            "Pod",
            json!({ "spec": pod_template()["spec"] }),
        ),
        minimal(
            "/api/v1/namespaces/{ns}/endpoints",
            "v1",
            "Endpoints",
            json!({ "subsets": [{ "addresses": [{ "ip": "10.1.2.3" }], "ports": [{ "port": 80 }] }] }),
        ),
        minimal(
            "/api/v1/namespaces/{ns}/events",
            "v1",
            "Event",
            json!({ "involvedObject": { "kind": "Pod", "name": "p", "namespace": "{ns}" },
                    "reason": "Started", "message": "started", "type": "Normal" }),
        ),
        minimal(
            "/api/v1/namespaces/{ns}/persistentvolumeclaims",
            "v1",
            "PersistentVolumeClaim",
            json!({ "spec": { "accessModes": ["ReadWriteOnce"], "resources": { "requests": { "storage": "1Gi" } } } }),
        ),
        minimal("/api/v1/namespaces", "v1", "Namespace", json!({})),
        minimal(
            "/api/v1/nodes",
            "v1",
            "Node",
            json!({ "spec": { "podCIDR": "10.244.0.0/24" } }),
        ),
        minimal(
            "/apis/apps/v1/namespaces/{ns}/deployments",
            "apps/v1",
            "Deployment",
            deployment_spec(),
        ),
        minimal(
            "/apis/apps/v1/namespaces/{ns}/replicasets",
            "apps/v1",
            "ReplicaSet",
            deployment_spec(),
        ),
        minimal(
            "/apis/apps/v1/namespaces/{ns}/daemonsets",
            "apps/v1",
            "DaemonSet",
            deployment_spec(),
        ),
        minimal(
            "/apis/apps/v1/namespaces/{ns}/statefulsets",
            "apps/v1",
            "StatefulSet",
            json!({ "spec": { "selector": selector(), "template": pod_template(), "serviceName": "s" } }),
        ),
        minimal(
            "/apis/batch/v1/namespaces/{ns}/jobs",
            "batch/v1",
            "Job",
            json!({ "spec": { "template": { "spec": { "restartPolicy": "Never",
                "containers": [{ "name": "c", "image": "busybox:1" }] } } } }),
        ),
        minimal(
            "/apis/autoscaling/v1/namespaces/{ns}/horizontalpodautoscalers",
            "autoscaling/v1",
            "HorizontalPodAutoscaler",
            json!({ "spec": { "scaleTargetRef": { "apiVersion": "apps/v1", "kind": "Deployment", "name": "d" },
                    "maxReplicas": 3, "targetCPUUtilizationPercentage": 50 } }),
        ),
        minimal(
            "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles",
            "rbac.authorization.k8s.io/v1",
            "Role",
            json!({ "rules": [{ "apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"] }] }),
        ),
        minimal(
            "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings",
            "rbac.authorization.k8s.io/v1",
            "RoleBinding",
            json!({ "roleRef": { "apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r" },
                    "subjects": [{ "kind": "ServiceAccount", "name": "default", "namespace": "{ns}" }] }),
        ),
        minimal(
            "/apis/rbac.authorization.k8s.io/v1/clusterroles",
            "rbac.authorization.k8s.io/v1",
            "ClusterRole",
            json!({ "rules": [{ "nonResourceURLs": ["/healthz"], "verbs": ["get"] }] }),
        ),
        minimal(
            "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
            "rbac.authorization.k8s.io/v1",
            "ClusterRoleBinding",
            json!({ "roleRef": { "apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view" },
                    "subjects": [{ "kind": "Group", "name": "g", "apiGroup": "rbac.authorization.k8s.io" }] }),
        ),
        minimal(
            "/apis/events.k8s.io/v1/namespaces/{ns}/events",
            "events.k8s.io/v1",
            "Event",
            json!({ "eventTime": "2026-01-01T00:00:00.000000Z", "reportingController": "example.dev/c",
                    "reportingInstance": "i", "action": "Started", "reason": "Started", "type": "Normal",
                    "regarding": { "kind": "Pod", "name": "p", "namespace": "{ns}" } }),
        ),
        Minimal {
            collection: "/apis/networking.k8s.io/v1/ipaddresses",
            object: json!({ "apiVersion": "networking.k8s.io/v1", "kind": "IPAddress",
                "metadata": { "name": "fd00::{twin}" },
                "spec": { "parentRef": { "group": "", "resource": "services", "name": "s", "namespace": "{ns}" } } }),
        },
        minimal(
            "/apis/networking.k8s.io/v1/servicecidrs",
            "networking.k8s.io/v1",
            "ServiceCIDR",
            json!({ "spec": { "cidrs": ["10.250.0.0/24"] } }),
        ),
        minimal(
            "/apis/resource.k8s.io/v1/resourceslices",
            "resource.k8s.io/v1",
            "ResourceSlice",
            json!({ "spec": { "driver": "example.dev", "allNodes": true,
                    "pool": { "name": "p", "generation": 1, "resourceSliceCount": 1 } } }),
        ),
        Minimal {
            collection: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            object: json!({ "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                "metadata": { "name": "gadgets.{twin}.{ns}.example.dev" },
                "spec": { "group": "{twin}.{ns}.example.dev", "scope": "Namespaced",
                    "names": { "plural": "gadgets", "singular": "gadget", "kind": "Gadget", "listKind": "GadgetList" },
                    "versions": [{ "name": "v1", "served": true, "storage": true,
                        "schema": { "openAPIV3Schema": { "type": "object",
                            "x-kubernetes-preserve-unknown-fields": true } } }] } }),
        },
    ]
}

/// A PEM certificate request (base64), as CertificateSigningRequests carry.
pub const CSR: &str = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0KTUlIR01HOENBUUF3RFRFTE1Ba0dBMVVFQXd3Q2JXVXdXVEFUQmdjcWhrak9QUUlCQmdncWhrak9QUU1CQndOQwpBQVQwTUJ6eHhxcnQrbUc3TnNPdGJpSXBycjNsUWllbS9XNHNVQjZnbDNacjlzblNrcnFsS2VCRUdtWFRtaXhYCmZLU3g2TDEwNkdhL0JqRnNoMzlSQko5N29BQXdDZ1lJS29aSXpqMEVBd0lEUndBd1JBSWdKK3k0N01PeTErRVgKZElKc0FOWmtjU1I5K1FRYkk2UitNR1RGRzM4SUxuMENJRVRYdWN0dXhMSFFUUm56YTlPZGtBTWMxVjhia0V5bApQWjBNdVo5d3d3OHAKLS0tLS1FTkQgQ0VSVElGSUNBVEUgUkVRVUVTVC0tLS0tCg==";
