//! Every example operator explored under perturbations (`kubewright::testing::explore`): a crash before and
//! after each of its writes, 409 and 500 answers, timeouts after the write, watches lost, caches stale, and a take-over
//! by another sharded member.
//! Each test prints how many perturbations it explored and how long it took, and the writes of the unperturbed
//! run (`cargo test --test runtime explore -- --nocapture`). What the explorer finds in broken operators is in
//! `explore_planted.rs`.

use kube::CustomResourceExt;
use kubewright::testing::explore::{Explore, Scenario};
use serde_json::json;

#[tokio::test]
async fn webapp_by_hand_survives_every_perturbation() {
    use examples::webapp::{WebApp, reconciler, sample, sample_config_map};
    let scenario = Scenario::new()
        .apply(&sample_config_map("web-config"))
        .apply(&sample("web", Some("web-config")))
        .settle()
        .patch::<WebApp>(
            Some("default"),
            "web",
            json!({"spec": {"scale": {"replicas": 3}}}),
        )
        .patch::<k8s_openapi::api::core::v1::ConfigMap>(
            Some("default"),
            "web-config",
            json!({"data": {"index.html": "changed"}}),
        )
        .settle()
        .delete::<WebApp>(Some("default"), "web");
    let explored = Explore::new(reconciler)
        .crd(WebApp::crd())
        .scenario(scenario)
        .run()
        .await
        .unwrap();
    println!("webapp-by-hand: {explored:#}");
}

#[tokio::test]
async fn webapp_survives_every_perturbation() {
    use examples::webapp::{Port, Scale, sample_config_map};
    use examples::webapp_derive::{WebApp, WebAppSpec};
    let mut app = WebApp::new(
        "web",
        WebAppSpec {
            image: "nginx:1.27".into(),
            scale: Scale {
                replicas: 2,
                max_surge: None,
            },
            ports: vec![Port::http(8080)],
            config_map: Some("web-config".into()),
        },
    );
    app.metadata.namespace = Some("default".into());
    let scenario = Scenario::new()
        .apply(&sample_config_map("web-config"))
        .apply(&app)
        .settle()
        .patch::<WebApp>(
            Some("default"),
            "web",
            json!({"spec": {"image": "nginx:1.28"}}),
        )
        .settle()
        .delete::<WebApp>(Some("default"), "web");
    let explored = Explore::new(WebApp::reconciler)
        .crd(WebApp::crd())
        .scenario(scenario)
        .run()
        .await
        .unwrap();
    println!("webapp: {explored:#}");
}

#[tokio::test]
async fn teams_survive_every_perturbation() {
    use examples::teams::{Team, reconciler, sample, sample_settings};
    let scenario = Scenario::new()
        .apply(&sample_settings("core", "view"))
        .apply(&sample("core", &["ada", "linus"]))
        .settle()
        .patch::<Team>(
            Some("default"),
            "core",
            json!({"spec": {"members": ["ada", "grace"]}}),
        )
        .settle()
        .delete::<Team>(Some("default"), "core");
    let explored = Explore::new(reconciler)
        .crd(Team::crd())
        .scenario(scenario)
        .run()
        .await
        .unwrap();
    println!("teams: {explored:#}");
}

#[tokio::test]
async fn databases_survive_every_perturbation() {
    use examples::database::{Database, reconciler, sample};
    use k8s_openapi::api::core::v1::Secret;
    use kubewright::CacheOptions;
    let scenario = Scenario::new()
        .apply(&sample("orders", "16"))
        .settle()
        .patch::<Database>(Some("default"), "orders", json!({"spec": {"replicas": 2}}))
        .settle()
        .patch::<Database>(Some("default"), "orders", json!({"spec": {"version": "9"}}))
        .settle()
        .delete::<Database>(Some("default"), "orders");
    let explored = Explore::new(reconciler)
        .crd(Database::crd())
        .cache::<Secret>(CacheOptions::owned())
        .scenario(scenario)
        // The password is random in every run (and must never change within one: the scenario tests check that).
        .normalize(|o| {
            if o["kind"] == "Secret" && !o["data"]["password"].is_null() {
                o["data"]["password"] = json!("<random>");
            }
        })
        .run()
        .await
        .unwrap();
    println!("database: {explored:#}");
}

#[tokio::test]
async fn tenants_survive_every_perturbation() {
    use examples::tenants::{Tenant, reconciler, sample};
    use k8s_openapi::api::core::v1::Namespace;
    let mut foreign = Namespace::default();
    foreign.metadata.name = Some("acme-prod".into());
    let scenario = Scenario::new()
        .apply(&foreign)
        .apply(&sample("acme", &["dev", "prod", "test"], "4", &["alice"]))
        .settle()
        .patch::<Tenant>(
            None,
            "acme",
            json!({"spec": {"namespaces": ["dev", "prod"]}}),
        )
        .settle()
        .delete::<Tenant>(None, "acme");
    let explored = Explore::new(reconciler)
        .crd(Tenant::crd())
        .scenario(scenario)
        .run()
        .await
        .unwrap();
    println!("tenants: {explored:#}");
}

#[tokio::test]
async fn an_operator_of_two_controllers_survives_every_perturbation() {
    use examples::teams::{Team, sample as team, sample_settings};
    use examples::webapp::{Port, Scale};
    use examples::webapp_derive::{WebApp, WebAppSpec};
    let mut app = WebApp::new(
        "web",
        WebAppSpec {
            image: "nginx:1.27".into(),
            scale: Scale {
                replicas: 1,
                max_surge: None,
            },
            ports: vec![Port::http(8080)],
            config_map: None,
        },
    );
    app.metadata.namespace = Some("default".into());
    let scenario = Scenario::new()
        .apply(&sample_settings("core", "view"))
        .apply(&team("core", &["ada"]))
        .apply(&app)
        .settle()
        .delete::<Team>(Some("default"), "core");
    let explored = Explore::new(WebApp::reconciler)
        .controller(examples::teams::reconciler)
        .crd(WebApp::crd())
        .crd(Team::crd())
        .scenario(scenario)
        .run()
        .await
        .unwrap();
    println!("webapp and teams in one operator: {explored:#}");
    assert!(
        explored
            .writes
            .iter()
            .any(|w| w.contains("ServiceAccount default/core-ada"))
    );
    assert!(
        explored
            .writes
            .iter()
            .any(|w| w.contains("Deployment default/web"))
    );
}
