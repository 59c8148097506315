//! The WebApp admission webhooks driven through `kubectl apply`, the same on the embedded cluster and on a
//! real kube-apiserver: an image with neither tag nor digest is refused with the webhook's message (create
//! and update), a WebApp with 0 replicas gets the webhook's warning, and the defaulters' changes are stored.

use crate::kubectl::Kubectl;

/// The label the tests' extra defaulter sets, to see that mutation happened.
pub const ADMITTED_LABEL: &str = "example.dev/admitted";

/// The webhooks the tests serve: the example's, plus a defaulter that sets [`ADMITTED_LABEL`].
pub fn test_webhooks() -> kubewright::admission::Webhooks<examples::webapp::WebApp> {
    examples::webapp::webhooks().default(|app| {
        use kube::ResourceExt;
        app.labels_mut()
            .insert(ADMITTED_LABEL.into(), "true".into());
    })
}

fn webapp(name: &str, namespace: &str, image: &str, replicas: i32) -> String {
    format!(
        "apiVersion: example.dev/v2\nkind: WebApp\nmetadata:\n  name: {name}\n  namespace: {namespace}\nspec:\n  image: {image}\n  scale:\n    replicas: {replicas}\n"
    )
}

/// Applies WebApps named `NAME-*` in `namespace` through `kubectl` and checks what the webhooks refuse,
/// warn about and fill in (with `labelled`, the [`test_webhooks`]' label too); deletes what it created.
pub async fn kubectl_apply_meets_the_webhooks(
    k: &Kubectl,
    namespace: &str,
    name: &str,
    labelled: bool,
) {
    let untagged = format!("{name}-untagged");
    let (ok, out, err) = k
        .run(
            &["apply", "-f", "-"],
            Some(&webapp(&untagged, namespace, "nginx", 1)),
        )
        .await;
    assert!(!ok, "an untagged image was accepted: {out}");
    assert!(
        err.contains(r#"admission webhook "validate.webapps.example.dev" denied the request: image must name a tag or digest"#),
        "kubectl does not show the webhook's message: {err}"
    );
    let (found, _, _) = k
        .run(&["get", "webapp", &untagged, "-n", namespace], None)
        .await;
    assert!(!found, "the refused WebApp was stored");

    let idle = format!("{name}-idle");
    let (ok, _, err) = k
        .run(
            &["apply", "-f", "-"],
            Some(&webapp(&idle, namespace, "nginx:1.27", 0)),
        )
        .await;
    assert!(ok, "{err}");
    assert!(
        err.contains("Warning: spec.scale.replicas is 0: nothing will run"),
        "kubectl does not show the webhook's warning: {err}"
    );
    let stored = k
        .ok(&[
            "get",
            "webapp",
            &idle,
            "-n",
            namespace,
            "-o",
            r#"jsonpath={.metadata.labels.example\.dev/admitted} {.spec.ports[0].port}"#,
        ])
        .await;
    let want = if labelled { "true 8080" } else { " 8080" };
    assert_eq!(stored.trim_end(), want, "the defaulted fields are stored");

    let (ok, _, err) = k
        .run(
            &["apply", "-f", "-"],
            Some(&webapp(&idle, namespace, "nginx", 0)),
        )
        .await;
    assert!(!ok, "an update to an untagged image was accepted");
    assert!(err.contains("image must name a tag or digest"), "{err}");
    k.ok(&["delete", "webapp", &idle, "-n", namespace]).await;
}
