//! Tests of strategic merge patch: helpers; one file per concept.

mod directives;
mod kinds;
mod lists;
mod maps;
mod robustness;

use serde_json::{Map, json};

use super::directives::is_directive_key;
use super::*;

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
