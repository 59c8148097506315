//! One scenario of the `domains` example (an untyped child: cert-manager's Certificate, known by group,
//! version and kind only), run on the embedded cluster and on a real kube-apiserver: the Certificate CRD
//! installed from a minimal schema, the test playing cert-manager by writing the Certificate's status. The
//! Domain is `Ready` exactly when its Certificate's own `Ready` condition is `True` for the Certificate's
//! current generation.

use examples::domains::{Certificate, Domain, DomainSpec, certificate_crd};
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::{Client, CustomResourceExt, ResourceExt};
use kubewright::Operator;
use serde_json::json;

use crate::tenants_scenario::eventually;

/// The Domain `name` for `host`.
pub fn domain(name: &str, host: &str) -> Domain {
    Domain::new(
        name,
        DomainSpec {
            host: host.into(),
            issuer: None,
        },
    )
}

/// The Domain's `Ready` condition, `(status, reason)`, once its status describes its current generation.
async fn ready(domains: &Api<Domain>, name: &str) -> Option<(String, String)> {
    let d = domains.get(name).await.expect("get the Domain");
    let status = d.status?;
    if status.observed_generation != d.metadata.generation {
        return None;
    }
    status
        .conditions
        .into_iter()
        .find(|c| c.type_ == "Ready")
        .map(|c| (c.status, c.reason))
}

async fn ready_is(domains: &Api<Domain>, name: &str, want: (&str, &str)) {
    eventually(&format!("Domain {name} Ready {want:?}"), async || {
        let got = ready(domains, name).await;
        match &got {
            Some((s, r)) if s == want.0 && r == want.1 => Ok(()),
            _ => Err(got),
        }
    })
    .await;
}

/// Plays cert-manager: reports the Certificate `name` `Ready` as `status` for its current generation.
async fn report(certs: &Api<Certificate>, name: &str, status: &str, reason: &str) -> i64 {
    let cert = certs.get(name).await.expect("get the Certificate");
    let generation = cert.metadata.generation.expect("a generation");
    let patch = json!({"status": {"conditions": [{
        "type": "Ready", "status": status, "reason": reason, "message": "played by the test",
        "observedGeneration": generation, "lastTransitionTime": "2026-01-01T00:00:00Z",
    }]}});
    certs
        .patch_status(name, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("write the Certificate's status");
    generation
}

/// Runs the scenario in `namespace`: `admin` installs both CRDs (the Domain's and the minimal Certificate's),
/// plays the user and cert-manager; the operator runs with `operator` until the scenario ends.
pub async fn run(admin: Client, operator: Client, namespace: &str) {
    kubewright::cli::ensure_crd(&admin, Domain::crd())
        .await
        .expect("install the Domain CRD");
    kubewright::cli::ensure_crd(&admin, certificate_crd())
        .await
        .expect("install the Certificate CRD");
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(
        Operator::new(operator)
            .controller(Domain::reconciler())
            .run_until(async move {
                let _ = stop_rx.await;
            }),
    );
    let domains: Api<Domain> = Api::namespaced(admin.clone(), namespace);
    let certs: Api<Certificate> = Api::namespaced(admin.clone(), namespace);
    domains
        .create(&PostParams::default(), &domain("shop", "shop.example.dev"))
        .await
        .expect("create the Domain");

    // The Certificate is made from the Domain, untyped, owned by it; cert-manager has not reported yet.
    let cert = eventually("the Certificate", async || {
        certs.get_opt("shop").await.expect("get").ok_or(())
    })
    .await;
    assert_eq!(cert.data["spec"]["dnsNames"], json!(["shop.example.dev"]));
    assert_eq!(cert.data["spec"]["secretName"], "shop-tls");
    assert_eq!(cert.data["spec"]["issuerRef"]["kind"], "ClusterIssuer");
    let owner = &cert.owner_references()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.name.as_str()),
        ("Domain", "shop")
    );
    assert_eq!(owner.controller, Some(true));
    ready_is(&domains, "shop", ("False", "AwaitingStatus")).await;

    // cert-manager issues: not yet, then ready.
    report(&certs, "shop", "False", "Issuing").await;
    ready_is(&domains, "shop", ("False", "Issuing")).await;
    let issued = report(&certs, "shop", "True", "Ready").await;
    ready_is(&domains, "shop", ("True", "Ready")).await;

    // The host changes: the Certificate follows (a new generation), and the Domain is not ready until
    // cert-manager has observed it.
    domains
        .patch(
            "shop",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"host": "store.example.dev"}})),
        )
        .await
        .expect("change the host");
    ready_is(&domains, "shop", ("False", "NotObserved")).await;
    let cert = certs.get("shop").await.expect("get the Certificate");
    assert_eq!(cert.data["spec"]["dnsNames"], json!(["store.example.dev"]));
    assert!(cert.metadata.generation > Some(issued));
    report(&certs, "shop", "True", "Ready").await;
    ready_is(&domains, "shop", ("True", "Ready")).await;

    let _ = stop_tx.send(());
    running
        .await
        .expect("the operator task")
        .expect("the operator ran");
}
