//! One scenario of the `expose` example (a built-in kind, the Service, as the parent), run on the embedded
//! cluster and on a real kube-apiserver (there under the operator's own service account, whose RBAC cannot
//! write Service status): an annotated Service gets its Ingress, owned by it; a Service without the annotation
//! gets none; a host that is no DNS name is a Warning event on the Service, the Ingress left as it was; the
//! annotation removed deletes the Ingress; and the operator writes nothing to any Service.

use std::collections::BTreeMap;

use examples::expose::{EXPOSE, HOST, reconciler};
use k8s_openapi::api::core::v1::{Service, ServicePort, ServiceSpec};
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::api::networking::v1::Ingress;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::{Client, ResourceExt};
use kubewright::Operator;
use serde_json::json;

use crate::tenants_scenario::eventually;

/// A Service named `name` with one port and these annotations.
pub fn service(name: &str, annotations: &[(&str, &str)]) -> Service {
    let mut svc = Service::default();
    svc.metadata.name = Some(name.into());
    svc.metadata.annotations = Some(
        annotations
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect::<BTreeMap<_, _>>(),
    );
    svc.spec = Some(ServiceSpec {
        ports: Some(vec![ServicePort {
            port: 8080,
            ..Default::default()
        }]),
        ..Default::default()
    });
    svc
}

/// No field manager of the Service is the operator's: it never wrote to it (spec, metadata or status).
async fn untouched(services: &Api<Service>, name: &str) {
    let svc = services.get(name).await.expect("get the Service");
    let managers: Vec<String> = svc
        .managed_fields()
        .iter()
        .filter_map(|m| m.manager.clone())
        .collect();
    assert!(
        !managers.iter().any(|m| m.contains("expose")),
        "the operator wrote to Service {name}: {managers:?}"
    );
}

/// Runs the scenario in `namespace`. `admin` plays the user; the operator runs with `operator` until the
/// scenario ends.
pub async fn run(admin: Client, operator: Client, namespace: &str) {
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(Operator::new(operator).controller(reconciler()).run_until(
        async move {
            let _ = stop_rx.await;
        },
    ));
    let services: Api<Service> = Api::namespaced(admin.clone(), namespace);
    let ingresses: Api<Ingress> = Api::namespaced(admin.clone(), namespace);
    let pp = PostParams::default();
    services
        .create(&pp, &service("web", &[(EXPOSE, "true")]))
        .await
        .expect("create web");
    services
        .create(&pp, &service("quiet", &[]))
        .await
        .expect("create quiet");

    let made = eventually("the Ingress of web", async || {
        ingresses.get_opt("web").await.expect("get").ok_or(())
    })
    .await;
    let rule = &made
        .spec
        .as_ref()
        .expect("spec")
        .rules
        .as_ref()
        .expect("rules")[0];
    assert_eq!(
        rule.host.as_deref(),
        Some(format!("web.{namespace}.example.dev").as_str())
    );
    let backend = rule.http.as_ref().expect("http").paths[0]
        .backend
        .service
        .as_ref()
        .expect("a service backend");
    assert_eq!(backend.name, "web");
    assert_eq!(backend.port.as_ref().and_then(|p| p.number), Some(8080));
    let owner = &made.owner_references()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str()),
        ("Service", "web")
    );
    assert_eq!(owner.controller, Some(true));

    // A host that is no DNS name: a Warning event on the Service, and the Ingress as it was.
    services
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"annotations": {HOST: "Not A Host"}}})),
        )
        .await
        .expect("annotate web");
    let events: Api<Event> = Api::namespaced(admin.clone(), namespace);
    let warning = eventually("a Warning event InvalidHost", async || {
        events
            .list(&Default::default())
            .await
            .expect("list events")
            .items
            .into_iter()
            .find(|e| e.reason.as_deref() == Some("InvalidHost"))
            .ok_or(())
    })
    .await;
    assert_eq!(warning.type_.as_deref(), Some("Warning"));
    let regarding = warning.regarding.as_ref().expect("regarding");
    assert_eq!(
        (regarding.kind.as_deref(), regarding.name.as_deref()),
        (Some("Service"), Some("web"))
    );
    assert!(
        warning
            .note
            .as_deref()
            .unwrap_or_default()
            .contains("\"Not A Host\" is not a DNS name"),
        "{warning:?}"
    );
    let kept = ingresses.get("web").await.expect("the Ingress kept");
    assert_eq!(
        kept.spec.and_then(|s| s.rules).expect("rules")[0].host,
        rule.host
    );

    // A good host: the Ingress follows.
    services
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"annotations": {HOST: "shop.example.dev"}}})),
        )
        .await
        .expect("annotate web");
    eventually("the Ingress on the new host", async || {
        let ingress = ingresses.get("web").await.expect("get");
        let host = ingress.spec.and_then(|s| s.rules).expect("rules")[0]
            .host
            .clone();
        (host.as_deref() == Some("shop.example.dev"))
            .then_some(())
            .ok_or(host)
    })
    .await;

    // The annotation goes: so does the Ingress.
    services
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"annotations": {EXPOSE: null, HOST: null}}})),
        )
        .await
        .expect("remove the annotation");
    eventually("the Ingress of web gone", async || {
        match ingresses.get_opt("web").await.expect("get") {
            None => Ok(()),
            Some(i) => Err(i.metadata.deletion_timestamp),
        }
    })
    .await;

    assert!(ingresses.get_opt("quiet").await.expect("get").is_none());
    untouched(&services, "web").await;
    untouched(&services, "quiet").await;
    let _ = stop_tx.send(());
    running
        .await
        .expect("the operator task")
        .expect("the operator ran");
}
