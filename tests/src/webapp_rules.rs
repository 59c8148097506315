//! The WebApp CRD's validation rule driven through `kubectl apply`, the same on the embedded cluster and on
//! a real kube-apiserver: a WebApp with more than 50 replicas is refused with the rule's message, on create
//! and on update, and nothing is stored.

use crate::kubectl::Kubectl;

fn webapp(name: &str, namespace: &str, replicas: i32) -> String {
    format!(
        "apiVersion: example.dev/v2\nkind: WebApp\nmetadata:\n  name: {name}\n  namespace: {namespace}\nspec:\n  image: nginx:1.27\n  scale:\n    replicas: {replicas}\n"
    )
}

/// Applies WebApps named `NAME-big` and `NAME-ok` in `namespace` through `kubectl` and checks what the
/// server refuses and keeps; deletes what it created.
pub async fn kubectl_apply_is_refused_with_the_rule_message(
    k: &Kubectl,
    namespace: &str,
    name: &str,
) {
    let big = format!("{name}-big");
    let (ok, out, err) = k
        .run(&["apply", "-f", "-"], Some(&webapp(&big, namespace, 60)))
        .await;
    assert!(!ok, "a WebApp with 60 replicas was accepted: {out}");
    assert!(
        err.contains("replicas must be at most 50"),
        "kubectl does not show the rule's message: {err}"
    );
    let (found, _, _) = k.run(&["get", "webapp", &big, "-n", namespace], None).await;
    assert!(!found, "the refused WebApp was stored");

    let small = format!("{name}-ok");
    k.ok_with(&["apply", "-f", "-"], Some(&webapp(&small, namespace, 50)))
        .await;
    let (ok, _, err) = k
        .run(&["apply", "-f", "-"], Some(&webapp(&small, namespace, 51)))
        .await;
    assert!(!ok, "scaling past 50 was accepted");
    assert!(err.contains("replicas must be at most 50"), "{err}");
    let replicas = k
        .ok(&[
            "get",
            "webapp",
            &small,
            "-n",
            namespace,
            "-o",
            "jsonpath={.spec.scale.replicas}",
        ])
        .await;
    assert_eq!(
        replicas.trim(),
        "50",
        "the refused update left the stored WebApp alone"
    );
    k.ok(&["delete", "webapp", &small, "-n", namespace]).await;
}
