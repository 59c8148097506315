//! Every example operator explored under perturbations (`operator::testing::explore`): a crash before and
//! after each of its writes, 409 and 500 answers, timeouts after the write, watches lost and caches stale.
//! Each test prints how many perturbations it explored and how long it took.

use kube::CustomResourceExt;
use operator::Reconciler;
use operator::testing::explore::{Explore, Scenario};
use serde_json::json;

#[tokio::test]
async fn webapp_by_hand_survives_every_perturbation() {
    use examples::webapp::{WebApp, reconciler, sample, sample_config_map};
    let scenario = Scenario::new()
        .apply(&sample_config_map("web-config"))
        .apply(&sample("web", Some("web-config")))
        .settle()
        .patch::<WebApp>(Some("default"), "web", json!({"spec": {"replicas": 3}}))
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
    use examples::webapp::sample_config_map;
    use examples::webapp_derive::{WebApp, WebAppSpec};
    let mut app = WebApp::new(
        "web",
        WebAppSpec {
            image: "nginx:1.27".into(),
            replicas: 2,
            port: 8080,
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
    use operator::CacheOptions;
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

/// A parent whose operator keeps one ConfigMap with a generated name.
mod generated {
    use futures::FutureExt;
    use k8s_openapi::api::core::v1::ConfigMap;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
    use kube::{CustomResource, Resource, ResourceExt};
    use operator::command::{Command, Target};
    use operator::{Outcome, Reconciler, ReconcilerStatus, SyncReconciler};
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};
    use serde_json::json;

    #[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
    #[kube(
        group = "example.dev",
        version = "v1",
        kind = "Holder",
        namespaced,
        status = "HolderStatus"
    )]
    pub struct HolderSpec {
        pub note: String,
    }

    #[derive(
        Clone, Debug, Default, Serialize, Deserialize, JsonSchema, PartialEq, ReconcilerStatus,
    )]
    #[serde(rename_all = "camelCase")]
    pub struct HolderStatus {
        pub observed_generation: Option<i64>,
        #[serde(default)]
        pub conditions: Vec<Condition>,
        /// Set by the edge-triggered operator in the pass that creates the ConfigMap.
        pub created: Option<bool>,
        /// The note of the ConfigMap `settings`, copied by the untracked operator.
        pub copied: Option<String>,
    }

    /// Creates a ConfigMap `<name>-xxxxx` whenever the cache shows none owned by the Holder: correct while
    /// the cache is current, a second ConfigMap when it is not.
    pub fn reconciler() -> Reconciler<Holder> {
        Reconciler::new("holder-controller").step(
            SyncReconciler::new_async("config", |holder: &mut Holder, cx| {
                async move {
                    let uid = holder.uid().unwrap_or_default();
                    let cache = cx.cache::<ConfigMap>()?;
                    if !cache.owned_by(&uid).is_empty() {
                        return Ok(Outcome::Continue);
                    }
                    let owner = holder.controller_owner_ref(&()).expect("a stored Holder");
                    let object = json!({
                        "apiVersion": "v1",
                        "kind": "ConfigMap",
                        "metadata": {
                            "generateName": format!("{}-", holder.name_any()),
                            "namespace": holder.namespace(),
                            "ownerReferences": [owner],
                        },
                        "data": {"note": holder.spec.note},
                    });
                    let mut target = Target::named::<ConfigMap>(holder.namespace().as_deref(), "");
                    target.name.clear();
                    cx.execute(Command::Create { target, object }).await?;
                    Ok(Outcome::Continue)
                }
                .boxed()
            })
            .wiring(|w| w.owns::<ConfigMap>()),
        )
    }

    /// Creates the ConfigMap `<name>-config` when the cache shows none, and says so in the status only in
    /// that pass: edge-triggered, so a crash between the create and the status write loses the news.
    pub fn edge_triggered() -> Reconciler<Holder> {
        Reconciler::new("holder-controller").step(
            SyncReconciler::new_async("config", |holder: &mut Holder, cx| {
                async move {
                let name = format!("{}-config", holder.name_any());
                let namespace = holder.namespace();
                if cx
                    .cache::<ConfigMap>()?
                    .get(namespace.as_deref(), &name)
                    .is_some()
                {
                    return Ok(Outcome::Continue);
                }
                let owner = holder.controller_owner_ref(&()).expect("a stored Holder");
                let object = json!({
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": name, "namespace": namespace, "ownerReferences": [owner]},
                });
                let target = Target::named::<ConfigMap>(namespace.as_deref(), &name);
                cx.execute(Command::Create { target, object }).await?;
                holder.status.get_or_insert_with(Default::default).created = Some(true);
                Ok(Outcome::Continue)
            }
            .boxed()
            })
            .wiring(|w| w.owns::<ConfigMap>()),
        )
    }
}

/// Copies the note of the ConfigMap `settings` into the status, reading it from the cache without tracking
/// it: a change to the ConfigMap reconciles no Holder.
pub fn untracked() -> Reconciler<generated::Holder> {
    use futures::FutureExt;
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::ResourceExt;
    use operator::{Outcome, SyncReconciler};
    Reconciler::new("holder-controller").step(
        SyncReconciler::new_async("copy", |holder: &mut generated::Holder, cx| {
            async move {
                let settings = cx
                    .cache::<ConfigMap>()?
                    .get(holder.namespace().as_deref(), "settings");
                let note = settings.and_then(|cm| cm.data.as_ref()?.get("note").cloned());
                holder.status.get_or_insert_with(Default::default).copied = note;
                Ok(Outcome::Continue)
            }
            .boxed()
        })
        .wiring(|w| w.tracks::<ConfigMap>()),
    )
}

#[tokio::test]
async fn a_read_that_is_not_tracked_is_found_by_the_round_over_every_parent() {
    use generated::{Holder, HolderSpec};
    use k8s_openapi::api::core::v1::ConfigMap;
    let mut holder = Holder::new("h", HolderSpec { note: "hi".into() });
    holder.metadata.namespace = Some("default".into());
    let mut settings = ConfigMap::default();
    settings.metadata.name = Some("settings".into());
    settings.metadata.namespace = Some("default".into());
    settings.data = Some([("note".to_string(), "one".to_string())].into());
    let scenario = Scenario::new()
        .apply(&settings)
        .apply(&holder)
        .settle()
        .patch::<ConfigMap>(
            Some("default"),
            "settings",
            json!({"data": {"note": "two"}}),
        );
    let failure = Explore::new(untracked)
        .crd(Holder::crd())
        .scenario(scenario)
        .run()
        .await
        .expect_err("the ConfigMap change reaches no Holder");
    let text = failure.to_string();
    println!("{text}");
    assert!(
        text.contains("the unperturbed run already breaks the oracle"),
        "{text}"
    );
    assert!(text.contains("a change reached no trigger"), "{text}");
    assert!(text.contains("status Holder default/h: ok"), "{text}");
}

#[tokio::test]
async fn a_status_set_only_when_a_child_is_created_is_lost_in_a_crash() {
    use generated::{Holder, HolderSpec, edge_triggered};
    let mut holder = Holder::new("h", HolderSpec { note: "hi".into() });
    holder.metadata.namespace = Some("default".into());
    let failure = Explore::new(edge_triggered)
        .crd(Holder::crd())
        .scenario(Scenario::new().apply(&holder))
        .run()
        .await
        .expect_err("the news of the create is lost in a crash after it");
    let text = failure.to_string();
    println!("{text}");
    assert!(
        text.contains("smallest: crash after write 1 (create ConfigMap default/h-config)"),
        "{text}"
    );
    assert!(text.contains("-  created: true"), "{text}");
}

#[tokio::test]
async fn a_create_that_trusts_a_stale_cache_is_found_and_shown() {
    use generated::{Holder, HolderSpec, reconciler};
    let mut holder = Holder::new("h", HolderSpec { note: "hi".into() });
    holder.metadata.namespace = Some("default".into());
    let failure = Explore::new(reconciler)
        .crd(Holder::crd())
        .scenario(Scenario::new().apply(&holder))
        .run()
        .await
        .expect_err("a second ConfigMap on a stale cache");
    let text = failure.to_string();
    println!("{text}");
    assert!(
        text.contains(
            "smallest: stale cache from write 1 (create ConfigMap default/h-<generated>)"
        ),
        "{text}"
    );
    assert!(
        text.contains("more than in the reference: [\"v1 ConfigMap default/h-<generated>\""),
        "{text}"
    );
    assert!(text.contains("+  name: h-<generated>"), "{text}");
}
