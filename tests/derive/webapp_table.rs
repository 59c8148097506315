//! The WebApp operator (the derive example) tested as its author would: passes that settle by themselves
//! (`TestEnv::converge`), and a table test whose children in place are built from the operator's own
//! desired functions (`Fixtures`), with no hash copied by hand.

use examples::webapp::{Port, Scale};
use examples::webapp_derive::{WebApp, WebAppSpec, desired_deployment, desired_service};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Service;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::CustomResourceExt;
use kube::runtime::reflector::ObjectRef;
use kubewright::testing::table::{EventExpectation, Fixtures, ReconcilerTestCase, TestEnv};
use serde_json::json;

fn web() -> WebApp {
    let mut app = WebApp::new(
        "web",
        WebAppSpec {
            image: "nginx:1.27".into(),
            scale: Scale {
                replicas: 2,
                max_surge: None,
            },
            ports: vec![Port::http(8080)],
            config_map: None,
        },
    );
    app.metadata.namespace = Some("default".into());
    app
}

#[tokio::test]
async fn a_new_webapp_settles_with_a_deployment_and_a_service() -> anyhow::Result<()> {
    let mut env = TestEnv::new();
    env.install_crd(&WebApp::crd()).await?;
    env.insert(&web())?;
    let done = env
        .converge(
            &WebApp::reconciler(),
            &ObjectRef::new("web").within("default"),
        )
        .await?;
    // The first pass creates both children and writes the status; the embedded cluster then reports the
    // Deployment available (as its controller would), which the second pass writes into the status (Ready);
    // the third finds nothing to do.
    let writes: Vec<Vec<String>> = done
        .writes
        .iter()
        .map(|pass| pass.iter().map(|w| w.to_string()).collect())
        .collect();
    assert_eq!(done.passes, 3, "{writes:#?}");
    assert_eq!(writes[1], ["status update webapps default/web"]);
    let deployment: Deployment = done.get(Some("default"), "web").await?.expect("Deployment");
    assert_eq!(deployment.spec.and_then(|s| s.replicas), Some(2));
    assert!(done.get::<Service>(Some("default"), "web").await?.is_some());
    let status = done.parent.and_then(|p| p.status).expect("status");
    assert_eq!(status.deployment.as_deref(), Some("web"));
    assert_eq!(status.observed_generation, Some(1));
    assert_eq!(status.available_replicas, Some(2));
    let ready = status.conditions.iter().find(|c| c.type_ == "Ready");
    assert_eq!(ready.map(|c| c.status.as_str()), Some("True"));
    Ok(())
}

#[tokio::test]
async fn children_in_place_are_not_written_again() -> anyhow::Result<()> {
    let fx = Fixtures::new(web());
    let deployment: Deployment = fx.child(desired_deployment).await?;
    let service: Service = fx.child(desired_service).await?;
    ReconcilerTestCase::new(
        "converged children",
        ObjectRef::new("web").within("default"),
    )
    .crd(WebApp::crd())
    .given(fx.parent())
    .given(deployment)
    .given(service)
    // Only the status is written: the children match what the desired functions return.
    .expect_status_update(json!({"deployment": "web", "service": "web", "observedGeneration": 1}))
    .run(WebApp::reconciler())
    .await?;
    Ok(())
}

#[tokio::test]
async fn a_scaled_webapp_applies_its_deployment_only() -> anyhow::Result<()> {
    let fx = Fixtures::new(web());
    let before: Deployment = fx.child(desired_deployment).await?;
    let service: Service = fx.child(desired_service).await?;
    let mut scaled = web();
    scaled.spec.scale.replicas = 3;
    let after: Deployment = Fixtures::new(scaled.clone())
        .child(desired_deployment)
        .await?;
    ReconcilerTestCase::new("scaled", ObjectRef::new("web").within("default"))
        .crd(WebApp::crd())
        .given(Fixtures::new(scaled).parent())
        .given(before)
        .given(service)
        .expect_apply(after)
        .expect_event(EventExpectation::normal("Updated").note("Deployment default/web"))
        .expect_status_update(json!({"deployment": "web"}))
        .run(WebApp::reconciler())
        .await?;
    Ok(())
}

/// The webhooks `#[admission(validate = validate_webapp, default = default_webapp)]` declares, called as a
/// table test calls them: no server, no cluster.
#[test]
fn the_admission_webhooks_are_called_directly() {
    use kube::core::admission::Operation;
    use kubewright::admission::{Request, Verdict};

    let hooks = WebApp::webhooks();
    let mut app = web();
    let create = |app: &WebApp| {
        hooks.check(&Request {
            operation: Operation::Create,
            object: Some(app),
            old_object: None,
            dry_run: false,
        })
    };
    assert_eq!(create(&app), Verdict::allow());
    app.spec.image = "nginx".into();
    assert_eq!(
        create(&app),
        Verdict::deny("image must name a tag or digest")
    );
    app.spec.image = "registry.example:5000/app@sha256:0123".into();
    app.spec.scale.replicas = 0;
    assert_eq!(
        create(&app),
        Verdict::allow().warn("spec.scale.replicas is 0: nothing will run")
    );
    // A port in the registry's host is not a tag.
    app.spec.image = "registry.example:5000/app".into();
    assert!(!create(&app).allowed);

    // The defaulter fills absent ports and keeps given ones.
    app.spec.ports = Vec::new();
    hooks.fill(&mut app);
    assert_eq!(app.spec.ports, [Port::http(8080)]);
    app.spec.ports = vec![
        Port::http(9000),
        Port {
            name: "metrics".into(),
            port: 9090,
        },
    ];
    hooks.fill(&mut app);
    assert_eq!(app.spec.ports[1].port, 9090);
}

/// What only `v2` expresses reaches the children: every port on the container and the Service, and
/// `maxSurge` as the Deployment's rolling update.
#[tokio::test]
async fn every_port_and_the_max_surge_reach_the_children() -> anyhow::Result<()> {
    let mut app = web();
    app.spec.scale.max_surge = Some(IntOrString::String("50%".into()));
    app.spec.ports.push(Port {
        name: "metrics".into(),
        port: 9090,
    });
    let fx = Fixtures::new(app);
    let deployment = serde_json::to_value(fx.child(desired_deployment).await?)?;
    let service = serde_json::to_value(fx.child(desired_service).await?)?;
    assert_eq!(
        deployment["spec"]["strategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "50%"}})
    );
    let container_ports: Vec<_> = deployment["spec"]["template"]["spec"]["containers"][0]["ports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["name"].clone(), p["containerPort"].clone()))
        .collect();
    assert_eq!(
        container_ports,
        [
            (json!("http"), json!(8080)),
            (json!("metrics"), json!(9090))
        ]
    );
    let service_ports: Vec<_> = service["spec"]["ports"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["name"].clone(),
                p["port"].clone(),
                p["targetPort"].clone(),
            )
        })
        .collect();
    assert_eq!(
        service_ports,
        [
            (json!("http"), json!(8080), json!(8080)),
            (json!("metrics"), json!(9090), json!(9090))
        ]
    );
    Ok(())
}
