//! The Team operator (`examples/src/teams.rs`): a child set of ServiceAccounts, one per member, and a `watches`
//! mapper from settings ConfigMaps to teams, declared with `#[derive(Reconciler)]`.
//!
//! On the embedded cluster it creates a sample team and its settings, then walks through a short script (a
//! member joins, the role changes, a member leaves), logging the accounts after each step; it then keeps
//! running until Ctrl-C, served to kubectl with `--listen`.
//!
//! ```text
//! cargo run --example teams -- --listen 127.0.0.1:8001 --write-kubeconfig /tmp/teams.kubeconfig
//! kubectl --kubeconfig /tmp/teams.kubeconfig get teams,serviceaccounts
//! cargo run --example teams -- manifests
//! ```

use std::time::Duration;

use anyhow::Context as _;
use clap::Parser;
use examples::EmbeddedArgs;
use examples::teams::{ROLE_ANNOTATION, Team, reconciler, sample, sample_settings};
use k8s_openapi::api::core::v1::{ConfigMap, ServiceAccount};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use kube::runtime::wait::{await_condition, conditions};
use kube::{CustomResourceExt, ResourceExt};
use operator::Operator;
use operator::manifests::Manifests;
use operator::testing::ApiServer;
use serde_json::json;

/// Runs the Team operator on the embedded in-memory cluster.
#[derive(Debug, Parser)]
#[command(name = "teams", version, about)]
struct Cli {
    /// `manifests`: print the CRD, ServiceAccount, ClusterRole, binding and Deployment instead.
    #[arg(value_parser = ["manifests"])]
    command: Option<String>,
    #[command(flatten)]
    serve: EmbeddedArgs,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    examples::init_tracing();
    let cli = Cli::parse();
    if cli.command.is_some() {
        let yaml = Manifests::new("teams-operator")
            .reconciler(&reconciler())
            .crd(Team::crd())
            .to_yaml()?;
        print!("{yaml}");
        return Ok(());
    }
    let server = ApiServer::new();
    let serving = match cli.serve.listen {
        Some(addr) => Some(
            server
                .serve(addr)
                .await
                .with_context(|| format!("cannot listen on {addr}"))?,
        ),
        None => None,
    };
    if let (Some(serving), Some(path)) = (&serving, &cli.serve.write_kubeconfig) {
        serving.write_kubeconfig(path)?;
        tracing::info!(path = %path.display(), "wrote kubeconfig");
    }
    let client = server.client();
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    crds.create(&PostParams::default(), &Team::crd()).await?;
    await_condition(crds, "teams.example.dev", conditions::is_crd_established()).await?;
    let operator = tokio::spawn(
        Operator::new(client.clone())
            .controller(reconciler())
            .run_until(examples::shutdown_signal()),
    );

    let teams: Api<Team> = Api::namespaced(client.clone(), "default");
    let settings: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let accounts: Api<ServiceAccount> = Api::namespaced(client, "default");
    let show = async |step: &str| -> anyhow::Result<()> {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let list = accounts
            .list(&ListParams::default().labels(examples::teams::MEMBER_LABEL))
            .await?;
        let summary: Vec<String> = list
            .items
            .iter()
            .map(|a| {
                format!(
                    "{} ({})",
                    a.name_any(),
                    a.annotations()
                        .get(ROLE_ANNOTATION)
                        .cloned()
                        .unwrap_or_default()
                )
            })
            .collect();
        let status = teams.get("platform").await?.status.unwrap_or_default();
        tracing::info!(step, accounts = ?summary, status.accounts = ?status.accounts, "team platform");
        Ok(())
    };
    settings
        .create(
            &PostParams::default(),
            &sample_settings("platform", "developer"),
        )
        .await?;
    teams
        .create(
            &PostParams::default(),
            &sample("platform", &["ada", "linus"]),
        )
        .await?;
    show("created with two members").await?;
    let patch =
        |members: serde_json::Value| Patch::Merge(json!({ "spec": { "members": members } }));
    teams
        .patch(
            "platform",
            &PatchParams::default(),
            &patch(json!(["ada", "linus", "grace"])),
        )
        .await?;
    show("grace joined").await?;
    settings
        .patch(
            "platform-settings",
            &PatchParams::default(),
            &Patch::Merge(json!({ "data": { "role": "admin" } })),
        )
        .await?;
    show("role changed in the settings ConfigMap (the watches mapper)").await?;
    teams
        .patch(
            "platform",
            &PatchParams::default(),
            &patch(json!(["ada", "grace"])),
        )
        .await?;
    show("linus left").await?;
    tracing::info!("running; press Ctrl-C to stop");
    operator.await??;
    Ok(())
}
