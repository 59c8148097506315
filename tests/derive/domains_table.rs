//! Table tests of the `domains` example, an untyped child (`Untyped<CertificateKind>`, cert-manager's
//! Certificate known by group, version and kind only): the Certificate made from the Domain, and the Domain's
//! `Ready` following the Certificate's own `Ready` condition for its current generation.

use examples::domains::{Certificate, Domain, DomainSpec, certificate_crd, desired_certificate};
use kube::CustomResourceExt;
use kube::runtime::reflector::ObjectRef;
use kubewright::testing::table::{EventExpectation, Fixtures, ReconcilerTestCase};
use serde_json::json;

fn domain(host: &str) -> Fixtures<Domain> {
    Fixtures::new(Domain::new(
        "shop",
        DomainSpec {
            host: host.into(),
            issuer: None,
        },
    ))
}

fn case(name: &str) -> ReconcilerTestCase<Domain> {
    ReconcilerTestCase::new(name, ObjectRef::new("shop").within("default"))
        .crd(Domain::crd())
        .crd(certificate_crd())
}

/// The Certificate in place, with cert-manager's `Ready` condition for generation `observed`.
async fn certificate(
    fx: &Fixtures<Domain>,
    ready: &str,
    observed: i64,
) -> anyhow::Result<Certificate> {
    let mut cert: Certificate = fx.child(desired_certificate).await?;
    cert.metadata.generation = Some(1);
    cert.data.insert(
        "status".into(),
        json!({"conditions": [{
            "type": "Ready", "status": ready, "reason": if ready == "True" { "Ready" } else { "Issuing" },
            "message": "", "observedGeneration": observed, "lastTransitionTime": "2026-01-01T00:00:00Z",
        }]}),
    );
    Ok(cert)
}

#[tokio::test]
async fn a_new_domain_creates_its_certificate_and_waits_for_cert_manager() -> anyhow::Result<()> {
    let fx = domain("shop.example.dev");
    let cert: Certificate = fx.child(desired_certificate).await?;
    assert_eq!(cert.data["spec"]["dnsNames"], json!(["shop.example.dev"]));
    case("new domain")
        .given(fx.parent())
        .expect_create(cert)
        .expect_event(EventExpectation::normal("Created").note("Certificate default/shop"))
        .expect_status_update(json!({
            "observedGeneration": 1,
            "certificate": "shop",
            "conditions": [
                {"type": "CertificateReady", "status": "False", "reason": "AwaitingStatus"},
                {"type": "Ready", "status": "False", "reason": "AwaitingStatus"},
            ],
        }))
        .run(Domain::reconciler())
        .await?;
    Ok(())
}

#[tokio::test]
async fn the_domain_is_ready_when_its_certificate_is_for_its_generation() -> anyhow::Result<()> {
    let fx = domain("shop.example.dev");
    case("certificate ready")
        .given(fx.parent())
        .given(certificate(&fx, "True", 1).await?)
        .expect_status_update(json!({
            "conditions": [
                {"type": "CertificateReady", "status": "True"},
                {"type": "Ready", "status": "True", "reason": "Ready"},
            ],
        }))
        .run(Domain::reconciler())
        .await?;
    case("certificate issuing")
        .given(fx.parent())
        .given(certificate(&fx, "False", 1).await?)
        .expect_status_update(json!({
            "conditions": [
                {"type": "CertificateReady", "status": "False", "reason": "Issuing"},
                {"type": "Ready", "status": "False", "reason": "Issuing"},
            ],
        }))
        .run(Domain::reconciler())
        .await?;
    // Ready for an older generation of the Certificate is not ready.
    case("certificate ready for an older generation")
        .given(fx.parent())
        .given(certificate(&fx, "True", 0).await?)
        .expect_status_update(json!({
            "conditions": [
                {"type": "CertificateReady", "status": "False", "reason": "NotObserved"},
                {"type": "Ready", "status": "False", "reason": "NotObserved"},
            ],
        }))
        .run(Domain::reconciler())
        .await?;
    Ok(())
}

#[tokio::test]
async fn a_new_host_applies_the_certificate() -> anyhow::Result<()> {
    let before = domain("shop.example.dev");
    let after = domain("store.example.dev");
    case("host changed")
        .given(after.parent())
        .given(certificate(&before, "True", 1).await?)
        .expect_apply(
            after
                .child::<Certificate, _, _>(desired_certificate)
                .await?,
        )
        .expect_event(EventExpectation::normal("Updated").note("Certificate default/shop"))
        .expect_status_update(json!({"certificate": "shop"}))
        .run(Domain::reconciler())
        .await?;
    Ok(())
}
