//! HorizontalPodAutoscaler rules (`autoscaling/v2` and `autoscaling/v1`): replica bounds, the scale target
//! reference, metrics (sources, targets) and behavior (policies, windows, select policies), each with a
//! valid control, an invalid create and a forbidden update, on both servers.

use kube::Client;
use serde_json::{Value, json};

use crate::builtin_validation::{Case, run_cases};
use crate::support::{Transcript, run};

fn hpa(version: &str, name: &str, spec: Value) -> Value {
    json!({"apiVersion": format!("autoscaling/{version}"), "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": name}, "spec": spec})
}

fn target() -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"})
}

fn cases() -> Vec<Case> {
    let valid = hpa(
        "v2",
        "hpa",
        json!({"scaleTargetRef": target(), "minReplicas": 2, "maxReplicas": 10,
            "metrics": [
                {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}}},
                {"type": "ContainerResource", "containerResource": {"name": "memory", "container": "app",
                    "target": {"type": "AverageValue", "averageValue": "500Mi"}}},
                {"type": "Pods", "pods": {"metric": {"name": "requests"}, "target": {"type": "AverageValue", "averageValue": "10"}}},
                {"type": "Object", "object": {"describedObject": {"apiVersion": "v1", "kind": "Service", "name": "web"},
                    "metric": {"name": "hits"}, "target": {"type": "Value", "value": "100"}}},
                {"type": "External", "external": {"metric": {"name": "queue"}, "target": {"type": "AverageValue", "averageValue": "30"}}},
            ],
            "behavior": {"scaleUp": {"stabilizationWindowSeconds": 60},
                "scaleDown": {"selectPolicy": "Min", "policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}]}}}),
    );
    let invalid = hpa(
        "v2",
        "hpa-bad",
        json!({"scaleTargetRef": {"apiVersion": "v1", "kind": "a/b", "name": ""}, "minReplicas": 0, "maxReplicas": 0,
            "metrics": [
                {"type": "Resource", "resource": {"name": "", "target": {"type": "Ratio", "averageUtilization": 0, "averageValue": "-1"}}},
                {"type": "ContainerResource", "containerResource": {"name": "cpu", "container": "Bad_Name", "target": {"type": "Utilization"}}},
                {"type": "Pods", "pods": {"metric": {"name": "a/b"}, "target": {"type": "Value", "value": "0"}}},
                {"type": "Object", "object": {"describedObject": {"apiVersion": "a/b/c", "kind": "Service", "name": "web"},
                    "metric": {"name": ""}, "target": {"type": "AverageValue"}}},
                {"type": "External", "external": {"metric": {"name": "q"}, "target": {"type": "Value", "value": "1", "averageValue": "2"}}},
                {"type": "Pods"},
                {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}},
                    "external": {"metric": {"name": "q"}, "target": {"type": "Value", "value": "1"}}},
                {"type": "Weird"},
                {"resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}},
            ],
            "behavior": {"scaleUp": {"stabilizationWindowSeconds": -1, "selectPolicy": "Sometimes"},
                "scaleDown": {"stabilizationWindowSeconds": 4000, "tolerance": "-0.1",
                    "policies": [{"type": "Ratio", "value": 0, "periodSeconds": 0}, {"type": "Pods", "value": 1, "periodSeconds": 1801}]}}}),
    );
    let v1 = hpa(
        "v1",
        "hpa-v1",
        json!({"scaleTargetRef": {"kind": "ReplicationController", "name": "rc"}, "maxReplicas": 3,
            "targetCPUUtilizationPercentage": 50}),
    );
    let v1_bad = hpa(
        "v1",
        "hpa-v1-bad",
        json!({"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "minReplicas": 5, "maxReplicas": 2,
            "targetCPUUtilizationPercentage": -5}),
    );
    vec![
        Case {
            name: "horizontal pod autoscaler v2",
            collection: |ns| {
                format!("/apis/autoscaling/v2/namespaces/{ns}/horizontalpodautoscalers")
            },
            valid,
            invalid: Some(invalid),
            forbidden: Some(
                json!({"spec": {"maxReplicas": 1, "scaleTargetRef": {"kind": "StatefulSet", "apiVersion": "v1"},
                "behavior": {"scaleDown": {"policies": [{"type": "Percent", "value": -1, "periodSeconds": 15}]}}}}),
            ),
        },
        Case {
            name: "horizontal pod autoscaler v1",
            collection: |ns| {
                format!("/apis/autoscaling/v1/namespaces/{ns}/horizontalpodautoscalers")
            },
            valid: v1,
            invalid: Some(v1_bad),
            forbidden: Some(
                json!({"spec": {"minReplicas": 0, "targetCPUUtilizationPercentage": 0}}),
            ),
        },
    ]
}

async fn rules(client: Client, ns: String) -> Transcript {
    let mut t = Transcript::new(client);
    run_cases(&mut t, &ns, cases()).await;
    t
}

#[tokio::test]
async fn horizontal_pod_autoscaler_rules_refuse_alike() {
    run("horizontal_pod_autoscaler_rules_refuse_alike", &[], rules).await;
}
