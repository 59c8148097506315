//! The Notes operator (`examples::notes`, two versions) as kubectl sees it on a cluster whose CRD converts
//! through the operator's webhook: objects written at `v1` read at `v2` and back, a patch at the deprecated
//! version, the reconciler working on `v2`, and a conversion that fails for one object.

use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::Client;
use kube::api::Api;
use serde_json::{Value, json};

use crate::kubectl::Kubectl;

/// The deprecation warning kubectl prints for a request at `v1`.
const WARNING: &str = "Warning: versions.example.dev/v1 Note is deprecated; use v2";

/// Runs the scenario in namespace `ns`, with the operator running and the CRD installed.
pub async fn converts_both_ways(k: &Kubectl, client: &Client, ns: &str) {
    let note = r#"
apiVersion: versions.example.dev/v1
kind: Note
metadata:
  name: list
  annotations:
    versions.example.dev/title: shopping
spec:
  text: "milk\neggs"
"#;
    let (ok, _, err) = k.run(&["apply", "-n", ns, "-f", "-"], Some(note)).await;
    assert!(ok, "{err}");
    assert!(err.contains(WARNING), "no deprecation warning: {err}");

    // Stored at v2: read there, the title is a field and the annotation is gone.
    let v2 = get(k, ns, "v2").await;
    assert_eq!(
        v2["spec"],
        json!({"lines": ["milk", "eggs"], "title": "shopping"})
    );
    assert!(
        v2["metadata"]["annotations"]
            .get("versions.example.dev/title")
            .is_none(),
        "{v2}"
    );

    // The reconciler works on v2 and its status reads at v1 too.
    lines_become(client, ns, &["milk", "eggs"]).await;
    ready_at_v1(k, ns).await;

    // A patch at the deprecated version keeps what only v2 holds.
    let patch = json!({"spec": {"text": "milk\neggs\nbread"}}).to_string();
    k.ok(&[
        "patch",
        "notes.v1.versions.example.dev",
        "list",
        "-n",
        ns,
        "--type",
        "merge",
        "-p",
        &patch,
    ])
    .await;
    let v2 = get(k, ns, "v2").await;
    assert_eq!(
        v2["spec"],
        json!({"lines": ["milk", "eggs", "bread"], "title": "shopping"})
    );
    lines_become(client, ns, &["milk", "eggs", "bread"]).await;

    // Listed at v1: converted, the title in its annotation.
    let list: Value = serde_json::from_str(
        &k.ok(&[
            "get",
            "notes.v1.versions.example.dev",
            "-n",
            ns,
            "-o",
            "json",
        ])
        .await,
    )
    .unwrap();
    let item = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["metadata"]["name"] == "list")
        .unwrap_or_else(|| panic!("no Note `list` listed: {list}"));
    assert_eq!(item["apiVersion"], "versions.example.dev/v1");
    assert_eq!(item["spec"]["text"], "milk\neggs\nbread");
    assert_eq!(
        item["metadata"]["annotations"]["versions.example.dev/title"],
        "shopping"
    );

    // A conversion that fails refuses that object, naming it and the reason; the webhook stays up.
    let bad = "apiVersion: versions.example.dev/v1\nkind: Note\nmetadata:\n  name: bad\nspec:\n  text: \"!unreadable\"\n";
    let (ok, _, err) = k.run(&["apply", "-n", ns, "-f", "-"], Some(bad)).await;
    assert!(!ok, "a note that cannot be converted was stored");
    assert!(
        err.contains(&format!("{ns}/bad: converting from versions.example.dev/v1 to versions.example.dev/v2: text \"!unreadable\" cannot be read")),
        "{err}"
    );
    assert_eq!(get(k, ns, "v1").await["spec"]["text"], "milk\neggs\nbread");
}

/// The Note `list` at `version`, as JSON.
async fn get(k: &Kubectl, ns: &str, version: &str) -> Value {
    let resource = format!("notes.{version}.versions.example.dev");
    serde_json::from_str(
        &k.ok(&["get", &resource, "list", "-n", ns, "-o", "json"])
            .await,
    )
    .unwrap()
}

/// Waits (about 60 s) until the Note's ConfigMap holds `lines`.
async fn lines_become(client: &Client, ns: &str, lines: &[&str]) {
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    let want: std::collections::BTreeMap<String, String> = lines
        .iter()
        .enumerate()
        .map(|(i, l)| (format!("line{i}"), l.to_string()))
        .collect();
    let mut last = None;
    for _ in 0..300 {
        last = cms.get_opt("list-lines").await.ok().flatten();
        if last.as_ref().and_then(|cm| cm.data.as_ref()) == Some(&want) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!("the ConfigMap never held {lines:?}: {last:?}");
}

/// Waits (about 60 s) until the Note read at `v1` has `Ready=True`.
async fn ready_at_v1(k: &Kubectl, ns: &str) {
    let mut last = Value::Null;
    for _ in 0..120 {
        last = get(k, ns, "v1").await;
        let ready = last["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| c["type"] == "Ready" && c["status"] == "True");
        if ready {
            return;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    panic!("the Note never read Ready at v1: {last}");
}
