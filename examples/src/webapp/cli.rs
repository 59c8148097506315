//! The command line of `webapp-by-hand` and `webapp`: run the operator on a cluster or on the embedded
//! in-memory one, or print its manifests. The binaries are [`Cli::parse`] and [`run`] (or [`run_variant`] with
//! the derived operator); tests call them directly. Only the controller and the manifests differ between the
//! two binaries ([`Variant`]); everything else (flags, sample objects, logs) is this one module.

use std::collections::HashMap;
use std::future::Future;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::runtime::wait::{await_condition, conditions};
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Client, CustomResourceExt, ResourceExt};
use operator::Operator;
use operator::testing::ApiServer;

use super::{CONFIG_HASH_ANNOTATION, WebApp, reconciler, sample, sample_config_map};
use crate::EmbeddedArgs;

/// The name of the sample WebApp created on the embedded cluster.
pub const SAMPLE_NAME: &str = "sample";

/// The name of the sample ConfigMap created on the embedded cluster.
pub const SAMPLE_CONFIG_MAP: &str = "sample-config";

/// Runs the WebApp operator (written with the runtime only, no derive).
///
/// With `--kubeconfig FILE`, or `KUBECONFIG` set, it runs against that cluster and installs the CRD if it is
/// missing. Otherwise (or with `--embedded`) it starts an in-memory cluster, installs the CRD, a sample
/// ConfigMap and a sample WebApp, and logs what the operator does.
#[derive(Debug, clap::Parser)]
#[command(name = "webapp-by-hand", version, about)]
pub struct Cli {
    /// What to do instead of running the operator.
    #[command(subcommand)]
    pub command: Option<CliCommand>,
    /// Run against the cluster of this kubeconfig (default: `KUBECONFIG`, if set).
    #[arg(long, conflicts_with_all = ["embedded", "listen"])]
    pub kubeconfig: Option<PathBuf>,
    /// Run on the embedded in-memory cluster even when `KUBECONFIG` is set (implied by `--listen`).
    #[arg(long)]
    pub embedded: bool,
    /// Run against the cluster this pod runs in, with its service account (as the manifests' Deployment does).
    #[arg(long, conflicts_with_all = ["kubeconfig", "embedded", "listen"])]
    pub in_cluster: bool,
    /// Serving the embedded cluster to kubectl.
    #[command(flatten)]
    pub serve: EmbeddedArgs,
}

/// Subcommands.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum CliCommand {
    /// Print the CustomResourceDefinition as YAML (pipe it to `kubectl apply -f -`).
    Manifests,
}

/// The manifests an installation needs: the WebApp CustomResourceDefinition, as YAML.
pub fn manifests() -> anyhow::Result<String> {
    serde_yaml::to_string(&WebApp::crd()).context("cannot render the CRD as YAML")
}

/// What differs between the WebApp binaries: the controller they run and what `manifests` prints.
#[derive(Debug, Clone, Copy)]
pub struct Variant {
    /// Adds the WebApp controller to an operator.
    pub controller: fn(Operator) -> Operator,
    /// What the `manifests` subcommand prints.
    pub manifests: fn() -> anyhow::Result<String>,
}

/// `webapp-by-hand`: the runtime-only [`reconciler`], and the CRD as manifests.
pub const BY_HAND: Variant = Variant {
    controller: |operator| operator.controller(reconciler()),
    manifests,
};

/// Runs what the command line asks for until `shutdown` resolves (the binary passes Ctrl-C or SIGTERM).
pub async fn run(cli: Cli, shutdown: impl Future<Output = ()> + Send) -> anyhow::Result<()> {
    run_variant(BY_HAND, cli, shutdown).await
}

/// [`run`] with another controller and manifests (the `webapp` example's derived operator).
pub async fn run_variant(
    variant: Variant,
    cli: Cli,
    shutdown: impl Future<Output = ()> + Send,
) -> anyhow::Result<()> {
    if let Some(CliCommand::Manifests) = cli.command {
        print!("{}", (variant.manifests)()?);
        return Ok(());
    }
    let embedded = cli.embedded || cli.serve.listen.is_some();
    if cli.in_cluster {
        let config = kube::Config::incluster()
            .context("cannot load the in-cluster configuration (is this running in a pod?)")?;
        tracing::info!(server = %config.cluster_url, "running against the cluster of this pod");
        let client = Client::try_from(config).context("cannot build a client")?;
        return run_on_cluster_variant(variant, client, shutdown).await;
    }
    let kubeconfig_env = std::env::var_os("KUBECONFIG").filter(|v| !v.is_empty());
    match (&cli.kubeconfig, kubeconfig_env) {
        (Some(path), _) => {
            let kubeconfig = Kubeconfig::read_from(path)
                .with_context(|| format!("cannot read the kubeconfig {}", path.display()))?;
            let config =
                kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
                    .await
                    .with_context(|| format!("invalid kubeconfig {}", path.display()))?;
            tracing::info!(server = %config.cluster_url, kubeconfig = %path.display(), "running against a cluster");
            let client = Client::try_from(config).context("cannot build a client")?;
            run_on_cluster_variant(variant, client, shutdown).await
        }
        (None, Some(env)) if !embedded => {
            let config = kube::Config::infer()
                .await
                .context("cannot load the kubeconfig named by KUBECONFIG")?;
            tracing::info!(server = %config.cluster_url, kubeconfig = ?env, "running against a cluster (KUBECONFIG)");
            let client = Client::try_from(config).context("cannot build a client")?;
            run_on_cluster_variant(variant, client, shutdown).await
        }
        _ => run_embedded_variant(variant, &cli.serve, shutdown).await,
    }
}

/// Runs the operator against a real cluster, installing the CRD first if it is missing.
pub async fn run_on_cluster(
    client: Client,
    shutdown: impl Future<Output = ()> + Send,
) -> anyhow::Result<()> {
    run_on_cluster_variant(BY_HAND, client, shutdown).await
}

async fn run_on_cluster_variant(
    variant: Variant,
    client: Client,
    shutdown: impl Future<Output = ()> + Send,
) -> anyhow::Result<()> {
    ensure_crd(&client).await?;
    (variant.controller)(Operator::new(client))
        .run_until(shutdown)
        .await;
    Ok(())
}

/// Starts the embedded in-memory cluster (served over HTTP with `--listen`), installs the CRD, a sample
/// ConfigMap and a sample WebApp, and runs the operator on it, logging what happens.
pub async fn run_embedded(
    serve: &EmbeddedArgs,
    shutdown: impl Future<Output = ()> + Send,
) -> anyhow::Result<()> {
    run_embedded_variant(BY_HAND, serve, shutdown).await
}

async fn run_embedded_variant(
    variant: Variant,
    serve: &EmbeddedArgs,
    shutdown: impl Future<Output = ()> + Send,
) -> anyhow::Result<()> {
    let server = ApiServer::new();
    let serving = match serve.listen {
        Some(addr) => {
            let serving = server
                .serve(addr)
                .await
                .with_context(|| format!("cannot listen on {addr}"))?;
            Some(serving)
        }
        None => None,
    };
    let client = server.client();
    ensure_crd(&client).await?;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    cms.create(
        &PostParams::default(),
        &sample_config_map(SAMPLE_CONFIG_MAP),
    )
    .await
    .context("cannot create the sample ConfigMap")?;
    let apps: Api<WebApp> = Api::namespaced(client.clone(), "default");
    apps.create(
        &PostParams::default(),
        &sample(SAMPLE_NAME, Some(SAMPLE_CONFIG_MAP)),
    )
    .await
    .context("cannot create the sample WebApp")?;
    tracing::info!(
        webapp = SAMPLE_NAME,
        configmap = SAMPLE_CONFIG_MAP,
        "created the sample WebApp and its ConfigMap"
    );

    if let (Some(serving), Some(path)) = (&serving, &serve.write_kubeconfig) {
        serving
            .write_kubeconfig(path)
            .with_context(|| format!("cannot write the kubeconfig to {}", path.display()))?;
        tracing::info!(
            path = %path.display(),
            "wrote kubeconfig; try: kubectl --kubeconfig {} get webapps,deployments,services",
            path.display()
        );
    }
    if let Some(serving) = &serving {
        tracing::info!(url = %serving.url(), "serving the embedded cluster; press Ctrl-C to stop");
    } else {
        tracing::info!(
            "running on the embedded cluster; press Ctrl-C to stop (--listen ADDR serves it to kubectl)"
        );
    }

    let observer = tokio::spawn(observe(client.clone()));
    (variant.controller)(Operator::new(client))
        .run_until(shutdown)
        .await;
    observer.abort();
    let _ = observer.await;
    if let Some(serving) = serving {
        serving.shutdown(Duration::from_secs(5)).await;
    }
    Ok(())
}

/// Creates the WebApp CRD unless it exists, and waits until it is established.
pub async fn ensure_crd(client: &Client) -> anyhow::Result<()> {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let crd = WebApp::crd();
    let name = crd.name_any();
    if crds
        .get_opt(&name)
        .await
        .with_context(|| format!("cannot read CRD {name}"))?
        .is_none()
    {
        crds.create(&PostParams::default(), &crd)
            .await
            .with_context(|| format!("cannot create CRD {name}"))?;
        tracing::info!(crd = %name, "installed the CRD");
    }
    tokio::time::timeout(
        Duration::from_secs(30),
        await_condition(crds, &name, conditions::is_crd_established()),
    )
    .await
    .with_context(|| format!("CRD {name} not established within 30s"))?
    .with_context(|| format!("cannot watch CRD {name}"))?;
    Ok(())
}

/// Logs every change to the WebApps' status and to their Deployments, so the embedded run shows what the
/// operator does.
async fn observe(client: Client) {
    let apps = watcher(
        Api::<WebApp>::all(client.clone()),
        watcher::Config::default(),
    )
    .default_backoff()
    .applied_objects()
    .map_ok(|app| {
        let status = app.status.clone().unwrap_or_default();
        let ready = status
            .conditions
            .iter()
            .find(|c| c.type_ == "Ready")
            .map(|c| format!("{} ({}) {}", c.status, c.reason, c.message));
        let summary = format!(
            "generation={:?} observedGeneration={:?} ready={} deployment={:?} service={:?} availableReplicas={:?}",
            app.metadata.generation,
            status.observed_generation,
            ready.unwrap_or_else(|| "unknown".into()),
            status.deployment,
            status.service,
            status.available_replicas,
        );
        (format!("WebApp {}", app.name_any()), summary)
    })
    .boxed();
    let deployments = watcher(
        Api::<Deployment>::all(client),
        watcher::Config::default().labels(super::NAME_LABEL),
    )
    .default_backoff()
    .applied_objects()
    .map_ok(|d| {
        let spec = d.spec.clone().unwrap_or_default();
        let image = spec
            .template
            .spec
            .as_ref()
            .and_then(|s| s.containers.first())
            .and_then(|c| c.image.clone());
        let hash = spec
            .template
            .metadata
            .as_ref()
            .and_then(|m| m.annotations.as_ref())
            .and_then(|a| a.get(CONFIG_HASH_ANNOTATION).cloned());
        let summary = format!(
            "replicas={:?} image={:?} configHash={:?}",
            spec.replicas, image, hash
        );
        (format!("Deployment {}", d.name_any()), summary)
    })
    .boxed();
    let mut seen: HashMap<String, String> = HashMap::new();
    let mut changes = futures::stream::select(apps, deployments);
    while let Some(change) = changes.next().await {
        match change {
            Ok((what, summary)) => {
                if seen.get(&what) != Some(&summary) {
                    tracing::info!(object = %what, "{summary}");
                    seen.insert(what, summary);
                }
            }
            Err(e) => tracing::warn!(error = %e, "watch failed; retrying"),
        }
    }
}
