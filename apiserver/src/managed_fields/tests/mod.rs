//! Tests of field management: a test schema and helpers; one file per concept.

mod apply;
mod conflicts;
mod edge_cases;
mod encoding;
mod update;

use serde_json::{Value, json};

use super::apply::apply;
use super::conflicts::conflict_message;
use super::entries::managed_fields_of;
use super::field_set::{FieldSet, path_string};
use super::scope::Operation;
use super::update::update;
use super::*;

/// containers/initContainers/env by name, ports by (containerPort, protocol), finalizers a
/// set, ownerReferences by uid, everything else (args, command...) atomic; `spec.selector`
/// an atomic map.
struct TestSchema;

impl Schema for TestSchema {
    fn list_type(&self, path: &[&str]) -> ListType {
        let keys = |k: &[&str]| ListType::Map(k.iter().map(|s| s.to_string()).collect());
        match path.last().copied() {
            Some("containers" | "initContainers" | "env" | "volumes") => keys(&["name"]),
            Some("ports") => keys(&["containerPort", "protocol"]),
            Some("ownerReferences") => keys(&["uid"]),
            Some("conditions") => keys(&["type"]),
            Some("finalizers") => ListType::Set,
            _ => ListType::Atomic,
        }
    }

    fn map_is_atomic(&self, path: &[&str]) -> bool {
        path == ["spec", "selector"]
    }
}

const T0: &str = "2024-01-01T00:00:00Z";
const T1: &str = "2024-01-01T00:00:01Z";
const T2: &str = "2024-01-01T00:00:02Z";
const T3: &str = "2024-01-01T00:00:03Z";

fn deployment(replicas: i64, image: &str) -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{
                    "name": "app",
                    "image": image,
                    "ports": [{"containerPort": 80, "protocol": "TCP"}]
                }]}
            }
        }
    })
}

fn entries(obj: &Value) -> Vec<Value> {
    managed_fields_of(obj)
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

fn entry<'a>(obj: &'a Value, manager: &str, operation: &str) -> Option<&'a Value> {
    managed_fields_of(obj)?
        .as_array()?
        .iter()
        .find(|e| e["manager"] == json!(manager) && e["operation"] == json!(operation))
}

fn fields(obj: &Value, manager: &str, operation: &str) -> Value {
    entry(obj, manager, operation)
        .map(|e| e["fieldsV1"].clone())
        .unwrap_or(Value::Null)
}

fn managers(obj: &Value) -> Vec<String> {
    entries(obj)
        .iter()
        .map(|e| {
            format!(
                "{}/{}",
                e["manager"].as_str().unwrap(),
                e["operation"].as_str().unwrap()
            )
        })
        .collect()
}

fn apply_ok(live: Option<&Value>, cfg: &Value, manager: &str, scope: Scope, now: &str) -> Value {
    apply(
        live,
        cfg,
        manager,
        "apps/v1",
        scope,
        false,
        &TestSchema,
        now,
    )
    .unwrap_or_else(|c| panic!("unexpected conflicts: {}", conflict_message(&c)))
}

fn create(obj: &Value, manager: &str) -> Value {
    let mut new = obj.clone();
    update(
        None,
        &mut new,
        manager,
        "apps/v1",
        Scope::Main,
        &TestSchema,
        T0,
    );
    new
}
