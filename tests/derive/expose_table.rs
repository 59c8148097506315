//! Table tests of the `expose` example, a built-in kind as the parent (`Foreign<Service>`): one pass of its
//! reconciler over given state, the Ingress in place built from the operator's own desired function
//! (`Fixtures`). No case writes to the Service: its status is Kubernetes', and what would have been its
//! conditions are events.

use std::collections::BTreeMap;

use examples::expose::{EXPOSE, HOST, desired_ingress, reconciler};
use k8s_openapi::api::core::v1::{Service, ServicePort, ServiceSpec};
use k8s_openapi::api::networking::v1::Ingress;
use kube::runtime::reflector::ObjectRef;
use kubewright::Foreign;
use kubewright::testing::table::{EventExpectation, Fixtures, ReconcilerTestCase};

fn service(annotations: &[(&str, &str)]) -> Foreign<Service> {
    let mut svc = Service::default();
    svc.metadata.name = Some("web".into());
    svc.metadata.namespace = Some("default".into());
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
    Foreign::new(svc)
}

fn case(name: &str) -> ReconcilerTestCase<Foreign<Service>> {
    ReconcilerTestCase::new(name, ObjectRef::new("web").within("default"))
}

#[tokio::test]
async fn an_annotated_service_gets_its_ingress_and_nothing_else_is_written() -> anyhow::Result<()> {
    let fx = Fixtures::new(service(&[(EXPOSE, "true")]));
    case("annotated, no Ingress yet")
        .given(fx.parent())
        .expect_create(fx.child::<Ingress, _, _>(desired_ingress).await?)
        .expect_event(EventExpectation::normal("Created").note("Ingress default/web"))
        .run(reconciler())
        .await?;
    Ok(())
}

#[tokio::test]
async fn an_ingress_in_place_is_not_written_again() -> anyhow::Result<()> {
    let fx = Fixtures::new(service(&[(EXPOSE, "true")]));
    case("annotated, Ingress in place")
        .given(fx.parent())
        .given(fx.child::<Ingress, _, _>(desired_ingress).await?)
        .run(reconciler())
        .await?;
    Ok(())
}

#[tokio::test]
async fn a_new_host_applies_the_ingress() -> anyhow::Result<()> {
    let before = Fixtures::new(service(&[(EXPOSE, "true")]));
    let after = Fixtures::new(service(&[(EXPOSE, "true"), (HOST, "shop.example.dev")]));
    case("host annotated")
        .given(after.parent())
        .given(before.child::<Ingress, _, _>(desired_ingress).await?)
        .expect_apply(after.child::<Ingress, _, _>(desired_ingress).await?)
        .expect_event(EventExpectation::normal("Updated").note("Ingress default/web"))
        .run(reconciler())
        .await?;
    Ok(())
}

#[tokio::test]
async fn the_annotation_removed_deletes_the_ingress() -> anyhow::Result<()> {
    let exposed = Fixtures::new(service(&[(EXPOSE, "true")]));
    let quiet = Fixtures::new(service(&[]));
    case("annotation removed")
        .given(quiet.parent())
        .given(exposed.child::<Ingress, _, _>(desired_ingress).await?)
        .expect_delete::<Ingress>(Some("default"), "web")
        .expect_event(EventExpectation::normal("Deleted").note("Ingress default/web"))
        .run(reconciler())
        .await?;
    // A Service never exposed: nothing to do.
    case("never annotated")
        .given(quiet.parent())
        .run(reconciler())
        .await?;
    Ok(())
}

#[tokio::test]
async fn a_bad_host_is_a_warning_event_not_a_status_write() -> anyhow::Result<()> {
    let exposed = Fixtures::new(service(&[(EXPOSE, "true")]));
    let bad = Fixtures::new(service(&[(EXPOSE, "true"), (HOST, "Not A Host")]));
    case("bad host")
        .given(bad.parent())
        .given(exposed.child::<Ingress, _, _>(desired_ingress).await?)
        .expect_event(
            EventExpectation::warning("InvalidHost").note("\"Not A Host\" is not a DNS name"),
        )
        .expect_err("the invalid spec", |e| {
            e.to_string().contains("is not a DNS name")
        })
        .run(reconciler())
        .await?;
    Ok(())
}
