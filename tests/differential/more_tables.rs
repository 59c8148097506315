//! `kubectl get` tables of the other built-in kinds kube-apiserver has printers for: controllers' leftovers
//! (ReplicationControllers, PodTemplates, ControllerRevisions), networking, storage, nodes, quotas,
//! scheduling, RBAC bindings, disruption budgets and admission configuration. Cluster-scoped objects are named
//! after the namespace (kube-apiserver's are shared by every scenario) and read one by one.

use kube::Client;
use serde_json::json;

use crate::deviations::CSR_REQUESTOR;
use crate::support::{Transcript, run};
use crate::tables::{core, create, group, object, pod_template, status, table};

/// The table of one cluster-scoped object, without the object.
async fn one(t: &mut Transcript, label: &str, collection: &str, name: &str) {
    table(t, label, &format!("{collection}/{name}?includeObject=None")).await;
}

async fn namespaced(client: Client, ns: String) -> Transcript {
    let c = &client;
    let rcs = core(&ns, "replicationcontrollers");
    let rc = json!({ "spec": { "replicas": 2, "selector": { "app": "rc" }, "template": pod_template("rc") } });
    create(c, &rcs, object("v1", "ReplicationController", "legacy", rc)).await;
    let templates = core(&ns, "podtemplates");
    let template = json!({ "template": pod_template("tpl") });
    create(c, &templates, object("v1", "PodTemplate", "tpl", template)).await;

    let revisions = group(&ns, "apps/v1", "controllerrevisions");
    let mut owned = object(
        "apps/v1",
        "ControllerRevision",
        "agent-1",
        json!({ "revision": 3, "data": {} }),
    );
    owned["metadata"]["ownerReferences"] = json!([{
        "apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent", "controller": true,
        "uid": "6b1f6bd8-0c2e-4a53-9d8e-1f5c4a9b0c11",
    }]);
    create(c, &revisions, owned).await;
    let orphan = object(
        "apps/v1",
        "ControllerRevision",
        "orphan-1",
        json!({ "revision": 1, "data": {} }),
    );
    create(c, &revisions, orphan).await;

    let quotas = core(&ns, "resourcequotas");
    let quota = json!({ "spec": { "hard": { "pods": "10", "requests.cpu": "2", "limits.memory": "2Gi", "limits.cpu": "4" } } });
    create(
        c,
        &quotas,
        object("v1", "ResourceQuota", "quota", quota.clone()),
    )
    .await;
    create(c, &quotas, object("v1", "ResourceQuota", "counted", quota)).await;
    status(c, &format!("{quotas}/counted"), json!({
        "hard": { "pods": "10", "requests.cpu": "2", "limits.memory": "2Gi", "limits.cpu": "4" },
        "used": { "pods": "3", "limits.memory": "512Mi" },
    })).await;

    let policies = group(&ns, "networking.k8s.io/v1", "networkpolicies");
    let deny = json!({ "spec": { "podSelector": {} } });
    create(
        c,
        &policies,
        object("networking.k8s.io/v1", "NetworkPolicy", "deny", deny),
    )
    .await;
    let web = json!({ "spec": { "podSelector": { "matchLabels": { "app": "web" } } } });
    create(
        c,
        &policies,
        object("networking.k8s.io/v1", "NetworkPolicy", "web", web),
    )
    .await;

    let slices = group(&ns, "discovery.k8s.io/v1", "endpointslices");
    let slice = json!({
        "addressType": "IPv4",
        "ports": [{ "name": "http", "port": 80 }, { "name": "named" }, { "name": "https", "port": 443 }, { "name": "alt", "port": 8080 }],
        "endpoints": [{ "addresses": ["10.1.0.1"] }, { "addresses": ["10.1.0.2"] }],
    });
    create(
        c,
        &slices,
        object("discovery.k8s.io/v1", "EndpointSlice", "web-abc", slice),
    )
    .await;
    let empty = json!({ "addressType": "IPv6", "endpoints": [] });
    create(
        c,
        &slices,
        object("discovery.k8s.io/v1", "EndpointSlice", "empty", empty),
    )
    .await;

    let budgets = group(&ns, "policy/v1", "poddisruptionbudgets");
    let min =
        json!({ "spec": { "minAvailable": 2, "selector": { "matchLabels": { "app": "web" } } } });
    create(
        c,
        &budgets,
        object("policy/v1", "PodDisruptionBudget", "min", min),
    )
    .await;
    let max = json!({ "spec": { "maxUnavailable": "25%", "selector": { "matchLabels": { "app": "web" } } } });
    create(
        c,
        &budgets,
        object("policy/v1", "PodDisruptionBudget", "max", max),
    )
    .await;

    let bindings = group(&ns, "rbac.authorization.k8s.io/v1", "rolebindings");
    let binding = json!({
        "roleRef": { "apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view" },
        "subjects": [
            { "kind": "User", "name": "alice", "apiGroup": "rbac.authorization.k8s.io" },
            { "kind": "User", "name": "bob", "apiGroup": "rbac.authorization.k8s.io" },
            { "kind": "Group", "name": "devs", "apiGroup": "rbac.authorization.k8s.io" },
            { "kind": "ServiceAccount", "name": "robot", "namespace": ns },
        ],
    });
    create(
        c,
        &bindings,
        object(
            "rbac.authorization.k8s.io/v1",
            "RoleBinding",
            "viewers",
            binding,
        ),
    )
    .await;

    let claims = group(&ns, "resource.k8s.io/v1", "resourceclaimtemplates");
    let template = json!({ "spec": { "spec": {} } });
    create(
        c,
        &claims,
        object(
            "resource.k8s.io/v1",
            "ResourceClaimTemplate",
            "gpu",
            template,
        ),
    )
    .await;

    let autoscalers = group(&ns, "autoscaling/v2", "horizontalpodautoscalers");
    let target = json!({ "apiVersion": "apps/v1", "kind": "Deployment", "name": "web" });
    let hpa = json!({ "spec": { "scaleTargetRef": target, "minReplicas": 2, "maxReplicas": 5, "metrics": [
        { "type": "Resource", "resource": { "name": "cpu", "target": { "type": "Utilization", "averageUtilization": 60 } } },
        { "type": "Pods", "pods": { "metric": { "name": "qps" }, "target": { "type": "AverageValue", "averageValue": "10" } } },
        { "type": "External", "external": { "metric": { "name": "queue" }, "target": { "type": "Value", "value": "30" } } },
    ] } });
    create(
        c,
        &autoscalers,
        object("autoscaling/v2", "HorizontalPodAutoscaler", "busy", hpa),
    )
    .await;
    status(c, &format!("{autoscalers}/busy"), json!({
        "currentReplicas": 3, "desiredReplicas": 3,
        "currentMetrics": [{ "type": "Resource", "resource": { "name": "cpu", "current": { "averageUtilization": 45, "averageValue": "100m" } } }],
    })).await;
    let defaulted = json!({ "spec": { "scaleTargetRef": target, "maxReplicas": 3 } });
    create(
        c,
        &autoscalers,
        object(
            "autoscaling/v2",
            "HorizontalPodAutoscaler",
            "plain",
            defaulted,
        ),
    )
    .await;

    let claims_v1 = group(&ns, "resource.k8s.io/v1", "resourceclaims");
    let claim = json!({ "spec": { "devices": { "requests": [{ "name": "gpu", "exactly": { "deviceClassName": "gpu" } }] } } });
    create(
        c,
        &claims_v1,
        object("resource.k8s.io/v1", "ResourceClaim", "gpu", claim),
    )
    .await;

    let mut t = Transcript::new(client.clone());
    let none = |path: &str| format!("{path}?includeObject=None");
    table(&mut t, "autoscalers", &none(&autoscalers)).await;
    let v1 = group(&ns, "autoscaling/v1", "horizontalpodautoscalers");
    table(&mut t, "autoscalers through v1", &none(&v1)).await;
    table(&mut t, "resourceclaims", &none(&claims_v1)).await;
    table(&mut t, "replicationcontrollers", &none(&rcs)).await;
    table(&mut t, "podtemplates", &none(&templates)).await;
    table(&mut t, "controllerrevisions", &none(&revisions)).await;
    table(&mut t, "resourcequotas", &none(&quotas)).await;
    table(&mut t, "networkpolicies", &none(&policies)).await;
    table(&mut t, "endpointslices", &none(&slices)).await;
    table(&mut t, "poddisruptionbudgets", &none(&budgets)).await;
    table(&mut t, "rolebindings", &none(&bindings)).await;
    table(&mut t, "resourceclaimtemplates", &none(&claims)).await;
    t
}

#[tokio::test]
async fn tables_of_other_namespaced_kinds_match() {
    run("tables_of_other_namespaced_kinds_match", &[], namespaced).await;
}

async fn cluster_scoped(client: Client, ns: String) -> Transcript {
    let c = &client;
    let name = |suffix: &str| format!("{ns}-{suffix}");

    let nodes = "/api/v1/nodes".to_string();
    let mut node = object(
        "v1",
        "Node",
        &name("node"),
        json!({ "spec": { "unschedulable": true } }),
    );
    node["metadata"]["labels"] = json!({
        "node-role.kubernetes.io/control-plane": "", "node-role.kubernetes.io/worker": "",
        "kubernetes.io/role": "edge",
    });
    create(c, &nodes, node).await;
    status(c, &format!("{nodes}/{}", name("node")), json!({
        "conditions": [{ "type": "Ready", "status": "True", "reason": "KubeletReady", "message": "ready" }],
        "addresses": [{ "type": "InternalIP", "address": "192.0.2.10" }, { "type": "Hostname", "address": "n1" }],
        "nodeInfo": {
            "kubeletVersion": "v1.35.4", "osImage": "Debian", "kernelVersion": "6.1.0",
            "containerRuntimeVersion": "containerd://2.0.0", "machineID": "", "systemUUID": "", "bootID": "",
            "kubeProxyVersion": "", "operatingSystem": "linux", "architecture": "amd64",
        },
    })).await;
    create(c, &nodes, object("v1", "Node", &name("bare"), json!({}))).await;

    let volumes = "/api/v1/persistentvolumes".to_string();
    let pv = json!({ "spec": {
        "capacity": { "storage": "2Gi" }, "accessModes": ["ReadOnlyMany", "ReadWriteOnce"],
        "hostPath": { "path": "/tmp/pv" }, "storageClassName": "fast",
        "claimRef": { "namespace": ns, "name": "data" }, "persistentVolumeReclaimPolicy": "Delete",
    } });
    create(
        c,
        &volumes,
        object("v1", "PersistentVolume", &name("pv"), pv),
    )
    .await;

    let classes = "/apis/storage.k8s.io/v1/storageclasses".to_string();
    let mut class = object(
        "storage.k8s.io/v1",
        "StorageClass",
        &name("sc"),
        json!({
            "provisioner": "disk.example.dev", "allowVolumeExpansion": true, "volumeBindingMode": "WaitForFirstConsumer",
        }),
    );
    class["metadata"]["annotations"] =
        json!({ "storageclass.kubernetes.io/is-default-class": "true" });
    create(c, &classes, class).await;

    let drivers = "/apis/storage.k8s.io/v1/csidrivers".to_string();
    let driver_name = format!("{ns}.csi.example.dev");
    create(
        c,
        &drivers,
        object(
            "storage.k8s.io/v1",
            "CSIDriver",
            &driver_name,
            json!({ "spec": {} }),
        ),
    )
    .await;
    let tokens = json!({ "spec": {
        "attachRequired": false, "podInfoOnMount": true,
        "tokenRequests": [{ "audience": "a" }, { "audience": "b" }],
        "volumeLifecycleModes": ["Persistent", "Ephemeral"],
    } });
    let token_driver = format!("{ns}.tokens.example.dev");
    create(
        c,
        &drivers,
        object("storage.k8s.io/v1", "CSIDriver", &token_driver, tokens),
    )
    .await;

    let csinodes = "/apis/storage.k8s.io/v1/csinodes".to_string();
    let csinode =
        json!({ "spec": { "drivers": [{ "name": "disk.example.dev", "nodeID": "n1" }] } });
    create(
        c,
        &csinodes,
        object("storage.k8s.io/v1", "CSINode", &name("node"), csinode),
    )
    .await;

    let attachments = "/apis/storage.k8s.io/v1/volumeattachments".to_string();
    let attachment = json!({ "spec": {
        "attacher": "disk.example.dev", "nodeName": "n1", "source": { "persistentVolumeName": name("pv") },
    } });
    create(
        c,
        &attachments,
        object(
            "storage.k8s.io/v1",
            "VolumeAttachment",
            &name("va"),
            attachment,
        ),
    )
    .await;
    status(
        c,
        &format!("{attachments}/{}", name("va")),
        json!({ "attached": true }),
    )
    .await;

    let attribute_classes = "/apis/storage.k8s.io/v1/volumeattributesclasses".to_string();
    let vac = json!({ "driverName": "disk.example.dev", "parameters": { "iops": "100" } });
    create(
        c,
        &attribute_classes,
        object(
            "storage.k8s.io/v1",
            "VolumeAttributesClass",
            &name("vac"),
            vac,
        ),
    )
    .await;

    let priorities = "/apis/scheduling.k8s.io/v1/priorityclasses".to_string();
    let priority = json!({ "value": 1000, "preemptionPolicy": "Never", "description": "low" });
    create(
        c,
        &priorities,
        object(
            "scheduling.k8s.io/v1",
            "PriorityClass",
            &name("low"),
            priority,
        ),
    )
    .await;

    let runtimes = "/apis/node.k8s.io/v1/runtimeclasses".to_string();
    create(
        c,
        &runtimes,
        object(
            "node.k8s.io/v1",
            "RuntimeClass",
            &name("rt"),
            json!({ "handler": "runc" }),
        ),
    )
    .await;

    let ingress_classes = "/apis/networking.k8s.io/v1/ingressclasses".to_string();
    let params = json!({ "spec": { "controller": "example.dev/ingress", "parameters": {
        "apiGroup": "example.dev", "kind": "Params", "name": "p", "scope": "Cluster",
    } } });
    create(
        c,
        &ingress_classes,
        object("networking.k8s.io/v1", "IngressClass", &name("ic"), params),
    )
    .await;
    let plain = json!({ "spec": { "controller": "example.dev/plain" } });
    create(
        c,
        &ingress_classes,
        object(
            "networking.k8s.io/v1",
            "IngressClass",
            &name("plain"),
            plain,
        ),
    )
    .await;

    let cidrs = "/apis/networking.k8s.io/v1/servicecidrs".to_string();
    let cidr = json!({ "spec": { "cidrs": ["10.99.0.0/24", "fd00:99::/112"] } });
    create(
        c,
        &cidrs,
        object("networking.k8s.io/v1", "ServiceCIDR", &name("cidr"), cidr),
    )
    .await;

    let bindings = "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings".to_string();
    let binding = json!({
        "roleRef": { "apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view" },
        "subjects": [{ "kind": "Group", "name": "auditors", "apiGroup": "rbac.authorization.k8s.io" }],
    });
    create(
        c,
        &bindings,
        object(
            "rbac.authorization.k8s.io/v1",
            "ClusterRoleBinding",
            &name("crb"),
            binding,
        ),
    )
    .await;

    let admission = "/apis/admissionregistration.k8s.io/v1";
    let webhook = json!({
        "name": "check.example.dev", "clientConfig": { "url": "https://example.dev/check" },
        "sideEffects": "None", "admissionReviewVersions": ["v1"], "rules": [],
    });
    let mut other = webhook.clone();
    other["name"] = json!("other.example.dev");
    let hooks = json!({ "webhooks": [webhook, other] });
    let validating = format!("{admission}/validatingwebhookconfigurations");
    let mutating = format!("{admission}/mutatingwebhookconfigurations");
    let admission_v1 = "admissionregistration.k8s.io/v1";
    create(
        c,
        &validating,
        object(
            admission_v1,
            "ValidatingWebhookConfiguration",
            &name("vwc"),
            hooks.clone(),
        ),
    )
    .await;
    create(
        c,
        &mutating,
        object(
            admission_v1,
            "MutatingWebhookConfiguration",
            &name("mwc"),
            json!({}),
        ),
    )
    .await;
    let policies = format!("{admission}/validatingadmissionpolicies");
    let policy = json!({ "spec": {
        "paramKind": { "apiVersion": "v1", "kind": "ConfigMap" },
        "matchConstraints": { "resourceRules": [{
            "apiGroups": ["example.dev"], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["nothings"],
        }] },
        "validations": [{ "expression": "true" }, { "expression": "1 == 1" }],
    } });
    create(
        c,
        &policies,
        object(
            admission_v1,
            "ValidatingAdmissionPolicy",
            &name("vap"),
            policy,
        ),
    )
    .await;
    let policy_bindings = format!("{admission}/validatingadmissionpolicybindings");
    let with_param = json!({ "spec": {
        "policyName": name("vap"), "validationActions": ["Deny"],
        "paramRef": { "name": "limits", "namespace": ns, "parameterNotFoundAction": "Allow" },
    } });
    create(
        c,
        &policy_bindings,
        object(
            admission_v1,
            "ValidatingAdmissionPolicyBinding",
            &name("vapb"),
            with_param,
        ),
    )
    .await;
    let bare = json!({ "spec": { "policyName": name("vap"), "validationActions": ["Audit"] } });
    create(
        c,
        &policy_bindings,
        object(
            admission_v1,
            "ValidatingAdmissionPolicyBinding",
            &name("bare"),
            bare,
        ),
    )
    .await;

    let devices = "/apis/resource.k8s.io/v1/deviceclasses".to_string();
    create(
        c,
        &devices,
        object(
            "resource.k8s.io/v1",
            "DeviceClass",
            &name("gpu"),
            json!({ "spec": {} }),
        ),
    )
    .await;

    let flow = "/apis/flowcontrol.apiserver.k8s.io/v1";
    let levels = format!("{flow}/prioritylevelconfigurations");
    let queued = json!({ "spec": { "type": "Limited", "limited": { "nominalConcurrencyShares": 5,
        "limitResponse": { "type": "Queue", "queuing": { "queues": 16 } } } } });
    create(
        c,
        &levels,
        object(
            "flowcontrol.apiserver.k8s.io/v1",
            "PriorityLevelConfiguration",
            &name("queued"),
            queued,
        ),
    )
    .await;
    let rejecting = json!({ "spec": { "type": "Limited", "limited": { "limitResponse": { "type": "Reject" } } } });
    create(
        c,
        &levels,
        object(
            "flowcontrol.apiserver.k8s.io/v1",
            "PriorityLevelConfiguration",
            &name("reject"),
            rejecting,
        ),
    )
    .await;
    let schemas = format!("{flow}/flowschemas");
    let schema = json!({ "spec": {
        "priorityLevelConfiguration": { "name": name("queued") }, "matchingPrecedence": 5000,
        "distinguisherMethod": { "type": "ByUser" },
    } });
    create(
        c,
        &schemas,
        object(
            "flowcontrol.apiserver.k8s.io/v1",
            "FlowSchema",
            &name("fs"),
            schema,
        ),
    )
    .await;
    status(c, &format!("{schemas}/{}", name("fs")), json!({ "conditions": [{
        "type": "Dangling", "status": "False", "reason": "Found", "lastTransitionTime": "2026-01-01T00:00:00Z",
        "message": format!("This FlowSchema references the PriorityLevelConfiguration object named \"{}\" and it exists", name("queued")),
    }] })).await;

    let addresses = "/apis/networking.k8s.io/v1/ipaddresses".to_string();
    let address = json!({ "spec": { "parentRef": {
        "group": "", "resource": "services", "namespace": ns, "name": "web",
    } } });
    create(
        c,
        &addresses,
        object("networking.k8s.io/v1", "IPAddress", "10.99.0.77", address),
    )
    .await;

    let slices = "/apis/resource.k8s.io/v1/resourceslices".to_string();
    let slice = json!({ "spec": {
        "driver": "gpu.example.dev", "nodeName": "n1", "devices": [],
        "pool": { "name": "pool-a", "generation": 1, "resourceSliceCount": 1 },
    } });
    create(
        c,
        &slices,
        object("resource.k8s.io/v1", "ResourceSlice", &name("slice"), slice),
    )
    .await;

    let requests = "/apis/certificates.k8s.io/v1/certificatesigningrequests".to_string();
    let csr = json!({ "spec": {
        "request": tests::builtin_objects::CSR, "signerName": "example.dev/signer",
        "usages": ["digital signature"], "expirationSeconds": 7200,
    } });
    create(
        c,
        &requests,
        object(
            "certificates.k8s.io/v1",
            "CertificateSigningRequest",
            &name("csr"),
            csr,
        ),
    )
    .await;

    let mut t = Transcript::new(client.clone());
    one(&mut t, "node", &nodes, &name("node")).await;
    one(&mut t, "bare node", &nodes, &name("bare")).await;
    one(&mut t, "persistentvolume", &volumes, &name("pv")).await;
    one(&mut t, "storageclass", &classes, &name("sc")).await;
    one(&mut t, "csidriver", &drivers, &driver_name).await;
    one(&mut t, "csidriver with tokens", &drivers, &token_driver).await;
    one(&mut t, "csinode", &csinodes, &name("node")).await;
    one(&mut t, "volumeattachment", &attachments, &name("va")).await;
    one(
        &mut t,
        "volumeattributesclass",
        &attribute_classes,
        &name("vac"),
    )
    .await;
    one(&mut t, "priorityclass", &priorities, &name("low")).await;
    one(&mut t, "runtimeclass", &runtimes, &name("rt")).await;
    one(&mut t, "ingressclass", &ingress_classes, &name("ic")).await;
    one(
        &mut t,
        "plain ingressclass",
        &ingress_classes,
        &name("plain"),
    )
    .await;
    one(&mut t, "servicecidr", &cidrs, &name("cidr")).await;
    one(&mut t, "clusterrolebinding", &bindings, &name("crb")).await;
    one(
        &mut t,
        "validatingwebhookconfiguration",
        &validating,
        &name("vwc"),
    )
    .await;
    one(
        &mut t,
        "mutatingwebhookconfiguration",
        &mutating,
        &name("mwc"),
    )
    .await;
    one(&mut t, "validatingadmissionpolicy", &policies, &name("vap")).await;
    one(
        &mut t,
        "binding with a param",
        &policy_bindings,
        &name("vapb"),
    )
    .await;
    one(&mut t, "binding without", &policy_bindings, &name("bare")).await;
    one(&mut t, "deviceclass", &devices, &name("gpu")).await;
    one(&mut t, "queued priority level", &levels, &name("queued")).await;
    one(&mut t, "rejecting priority level", &levels, &name("reject")).await;
    one(&mut t, "flowschema", &schemas, &name("fs")).await;
    one(&mut t, "resourceslice", &slices, &name("slice")).await;
    one(&mut t, "ipaddress", &addresses, "10.99.0.77").await;
    one(&mut t, "certificatesigningrequest", &requests, &name("csr")).await;
    t
}

#[tokio::test]
async fn tables_of_cluster_scoped_kinds_match() {
    run(
        "tables_of_cluster_scoped_kinds_match",
        &[CSR_REQUESTOR],
        cluster_scoped,
    )
    .await;
}
