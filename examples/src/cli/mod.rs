//! The command line the example operators share: run the operator on a cluster (`--kubeconfig FILE` or
//! `KUBECONFIG`, `--in-cluster`) or on the embedded in-memory one with sample objects (the default; `--listen`
//! and `--write-kubeconfig` serve it to kubectl), or print its manifests (`manifests`).
//!
//! An example describes itself with an [`Example`] (its CRDs, controller, manifests, sample objects and what
//! to log of them); the binaries are [`parse`] and [`run`], and tests call [`run`] directly.

use std::ffi::OsString;
use std::future::Future;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context as _;
use clap::{CommandFactory, FromArgMatches};
use futures::future::BoxFuture;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::runtime::wait::{await_condition, conditions};
use kube::{Client, ResourceExt};
use operator::Operator;
use operator::manifests::Manifests;

use crate::EmbeddedArgs;

mod observe;
mod run_flags;
mod webhooks;
pub use observe::{log_changes, ready};
pub use run_flags::{BindAddress, RunFlags, parse_bind_address, run_operator};
pub use webhooks::WebhookFlags;

/// Runs an example operator.
///
/// With `--kubeconfig FILE`, or `KUBECONFIG` set, it runs against that cluster (installing the CRD if it is
/// missing with `--install-crds`, otherwise checking it is served); with `--in-cluster`, against the cluster of its pod (whose CRD the manifests installed). Otherwise (or with `--embedded`) it starts an in-memory cluster, installs the CRD and sample
/// objects, and logs what the operator does.
#[derive(Debug, clap::Parser)]
#[command(version, about)]
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
    /// On a real cluster, install the CRDs when they are missing (needs RBAC to read and create
    /// CustomResourceDefinitions; `manifests --install-crds` grants it). Without it the operator only checks
    /// that its kinds are served.
    #[arg(long)]
    pub install_crds: bool,
    /// How the operator runs: probes, leader election.
    #[command(flatten)]
    pub run: RunFlags,
    /// Serving the admission webhooks on a real cluster.
    #[command(flatten)]
    pub webhooks: WebhookFlags,
    /// Serving the embedded cluster to kubectl.
    #[command(flatten)]
    pub serve: EmbeddedArgs,
}

/// Subcommands.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum CliCommand {
    /// Print the manifests an installation needs as YAML (pipe it to `kubectl apply -f -`).
    Manifests {
        /// The operator installs its CRDs itself: its Deployment runs with `--install-crds` and its
        /// ClusterRole may read and create CustomResourceDefinitions.
        #[arg(long)]
        install_crds: bool,
        /// The operator watches only this namespace (repeat for several): its Deployment runs with
        /// `--namespace` for each, and a Role and RoleBinding in each replace the ClusterRole's rules on
        /// namespaced kinds.
        #[arg(long = "namespace", value_name = "NAMESPACE")]
        namespaces: Vec<String>,
        /// Also the admission webhooks: the Deployment serves them, a Service fronts them, webhook
        /// configurations send the API server there, and cert-manager (which must be installed) issues the
        /// serving certificate and injects its CA.
        #[arg(long)]
        webhooks: bool,
    },
}

/// Parses the process's arguments as the command line of the example `name`, described by `about` (the first
/// line is the short help) and with `manifests` described by `manifests_about`.
pub fn parse(name: &'static str, about: &'static str, manifests_about: &'static str) -> Cli {
    let matches = command(name, about, manifests_about).get_matches();
    match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    }
}

/// [`parse`] over given arguments (the first is the program name), for tests.
pub fn try_parse_from(
    name: &'static str,
    args: impl IntoIterator<Item = impl Into<OsString> + Clone>,
) -> Result<Cli, clap::Error> {
    let matches = command(name, "", "").try_get_matches_from(args)?;
    Cli::from_arg_matches(&matches)
}

fn command(
    name: &'static str,
    about: &'static str,
    manifests_about: &'static str,
) -> clap::Command {
    let short = about.lines().next().unwrap_or_default().to_string();
    let mut command = Cli::command().name(name).bin_name(name);
    if !about.is_empty() {
        command = command.about(short).long_about(about);
    }
    if !manifests_about.is_empty() {
        command = command.mut_subcommand("manifests", |c| c.about(manifests_about));
    }
    command
}

/// The embedded in-memory cluster (feature `embedded`).
#[cfg(feature = "embedded")]
pub type EmbeddedServer = operator::testing::ApiServer;

/// The embedded in-memory cluster, left out of this build (feature `embedded` off): no value exists.
#[cfg(not(feature = "embedded"))]
#[derive(Debug)]
pub enum EmbeddedServer {}

/// Seeds the embedded cluster or watches it, given a client.
pub type ClientTask<T> = fn(Client) -> BoxFuture<'static, T>;

/// An example's admission webhooks, one entry per kind.
pub type WebhookKinds = fn() -> Vec<std::sync::Arc<dyn operator::admission::ErasedWebhooks>>;

/// What an example brings to the shared command line.
#[derive(Debug, Clone, Copy)]
pub struct Example {
    /// The CRDs the operator serves, installed when missing.
    pub crds: fn() -> Vec<CustomResourceDefinition>,
    /// Adds the example's controller to an operator.
    pub controller: fn(Operator) -> Operator,
    /// What the `manifests` subcommand prints.
    pub manifests: fn() -> anyhow::Result<String>,
    /// The installation behind `manifests`, for `manifests --install-crds` (`None`: the example's manifests
    /// are its CRDs only).
    pub installation: Option<fn() -> Manifests>,
    /// Prepares a fresh embedded cluster before anything is installed (e.g. registers kinds it lacks).
    pub prepare_embedded: fn(&EmbeddedServer),
    /// Creates the sample objects on the embedded cluster (after the CRDs are established).
    pub seed: ClientTask<anyhow::Result<()>>,
    /// Logs what changes on the embedded cluster, until aborted.
    pub observe: ClientTask<()>,
    /// What to try with kubectl on the served embedded cluster, e.g. `get webapps,deployments`.
    pub kubectl_hint: &'static str,
    /// The example's admission webhooks, one entry per kind (`None`: it has none).
    pub webhooks: Option<WebhookKinds>,
}

/// Runs what the command line asks for until `shutdown` resolves (the binary passes Ctrl-C or SIGTERM).
pub async fn run(
    example: &Example,
    cli: Cli,
    shutdown: impl Future<Output = ()> + Send,
) -> anyhow::Result<()> {
    if let Some(CliCommand::Manifests {
        install_crds,
        namespaces,
        webhooks,
    }) = cli.command
    {
        let kinds = match (webhooks, example.webhooks) {
            (false, _) => Vec::new(),
            (true, Some(kinds)) => kinds(),
            (true, None) => {
                anyhow::bail!("this example has no admission webhooks: --webhooks does not apply")
            }
        };
        let customized = install_crds || !namespaces.is_empty() || webhooks;
        let yaml = match (customized, example.installation) {
            (false, _) => (example.manifests)()?,
            (true, Some(installation)) => kinds
                .iter()
                .fold(installation(), |m, k| m.admission(k.as_ref()))
                .install_crds(install_crds)
                .watch_namespaces(namespaces)
                .to_yaml()
                .context("cannot render the manifests as YAML")?,
            (true, None) => {
                anyhow::bail!(
                    "this example's manifests are its CRDs only: --install-crds, --namespace and --webhooks do not apply"
                )
            }
        };
        print!("{yaml}");
        return Ok(());
    }
    let embedded = cli.embedded || cli.serve.listen.is_some();
    if cli.in_cluster {
        let config = kube::Config::incluster()
            .context("cannot load the in-cluster configuration (is this running in a pod?)")?;
        tracing::info!(server = %config.cluster_url, "running against the cluster of this pod");
        let client = operator::client::client(config).context("cannot build a client")?;
        // The manifests install the CRDs and the webhook configurations, and the ClusterRole they bind grants
        // nothing on either: serve and run only.
        let serving = webhooks::serve_in_cluster(example, &cli.webhooks).await?;
        let ran = run_operator(
            (example.controller)(Operator::new(client)),
            &cli.run,
            shutdown,
        )
        .await;
        if let Some(serving) = serving {
            serving.abort();
        }
        ran?;
        return Ok(());
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
            let client = operator::client::client(config).context("cannot build a client")?;
            run_on_cluster(
                example,
                client,
                cli.install_crds,
                &cli.run,
                &cli.webhooks,
                shutdown,
            )
            .await
        }
        (None, Some(env)) if !embedded => {
            let config = kube::Config::infer()
                .await
                .context("cannot load the kubeconfig named by KUBECONFIG")?;
            tracing::info!(server = %config.cluster_url, kubeconfig = ?env, "running against a cluster (KUBECONFIG)");
            let client = operator::client::client(config).context("cannot build a client")?;
            run_on_cluster(
                example,
                client,
                cli.install_crds,
                &cli.run,
                &cli.webhooks,
                shutdown,
            )
            .await
        }
        _ => run_embedded(example, &cli.serve, &cli.run, shutdown).await,
    }
}

/// Runs the operator against a real cluster: with `install_crds`, installs the CRDs first if they are
/// missing; otherwise checks that their kinds are served (reading no CRD, so the operator's own RBAC suffices).
pub async fn run_on_cluster(
    example: &Example,
    client: Client,
    install_crds: bool,
    flags: &RunFlags,
    webhook_flags: &WebhookFlags,
    shutdown: impl Future<Output = ()> + Send,
) -> anyhow::Result<()> {
    for crd in (example.crds)() {
        if install_crds {
            ensure_crd(&client, crd).await?;
        } else {
            ensure_served(&client, &crd, &flags.namespaces).await?;
        }
    }
    let webhooks = webhooks::start_on_cluster(example, &client, webhook_flags).await?;
    let ran = run_operator(
        (example.controller)(flags.operator(client.clone())),
        flags,
        shutdown,
    )
    .await;
    if let Some(serving) = webhooks {
        serving.stop(&client).await;
    }
    ran
}

/// Starts the embedded in-memory cluster (served over HTTP with `--listen`), installs the CRDs and the
/// sample objects, and runs the operator on it, logging what happens.
#[cfg(feature = "embedded")]
pub async fn run_embedded(
    example: &Example,
    serve: &EmbeddedArgs,
    flags: &RunFlags,
    shutdown: impl Future<Output = ()> + Send,
) -> anyhow::Result<()> {
    let server = EmbeddedServer::new();
    (example.prepare_embedded)(&server);
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
    for crd in (example.crds)() {
        ensure_crd(&client, crd).await?;
    }
    webhooks::start_embedded(example, &server, &client).await?;
    (example.seed)(client.clone()).await?;

    if let (Some(serving), Some(path)) = (&serving, &serve.write_kubeconfig) {
        serving
            .write_kubeconfig(path)
            .with_context(|| format!("cannot write the kubeconfig to {}", path.display()))?;
        tracing::info!(
            path = %path.display(),
            "wrote kubeconfig; try: kubectl --kubeconfig {} {}",
            path.display(),
            example.kubectl_hint,
        );
    }
    if let Some(serving) = &serving {
        tracing::info!(url = %serving.url(), "serving the embedded cluster; press Ctrl-C to stop");
    } else {
        tracing::info!(
            "running on the embedded cluster; press Ctrl-C to stop (--listen ADDR serves it to kubectl)"
        );
    }

    let observer = tokio::spawn((example.observe)(client.clone()));
    let ran = run_operator(
        (example.controller)(flags.operator(client)),
        flags,
        shutdown,
    )
    .await;
    observer.abort();
    let _ = observer.await;
    if let Some(serving) = serving {
        serving.shutdown(Duration::from_secs(5)).await;
    }
    ran
}

/// A build without the embedded cluster (feature `embedded` off) runs only against a real cluster.
#[cfg(not(feature = "embedded"))]
pub async fn run_embedded(
    _example: &Example,
    _serve: &EmbeddedArgs,
    _flags: &RunFlags,
    _shutdown: impl Future<Output = ()> + Send,
) -> anyhow::Result<()> {
    anyhow::bail!(
        "this binary was built without the embedded cluster (the `embedded` feature): run it against a cluster with --kubeconfig FILE, KUBECONFIG or --in-cluster"
    )
}

/// Checks that the kind a CRD defines is served, with one list of at most one object (what the operator may do
/// anyway: in the first of `namespaces` when it watches only those); a missing CRD is an error saying how to
/// install it.
pub async fn ensure_served(
    client: &Client,
    crd: &CustomResourceDefinition,
    namespaces: &[String],
) -> anyhow::Result<()> {
    let spec = &crd.spec;
    let Some(version) = spec
        .versions
        .iter()
        .find(|v| v.storage)
        .or(spec.versions.first())
    else {
        anyhow::bail!("CRD {} has no version", crd.name_any());
    };
    let resource = kube::api::ApiResource {
        group: spec.group.clone(),
        version: version.name.clone(),
        api_version: format!("{}/{}", spec.group, version.name),
        kind: spec.names.kind.clone(),
        plural: spec.names.plural.clone(),
    };
    let api: Api<kube::api::DynamicObject> = match namespaces.first() {
        Some(namespace) if spec.scope == "Namespaced" => {
            Api::namespaced_with(client.clone(), namespace, &resource)
        }
        _ => Api::all_with(client.clone(), &resource),
    };
    match api.list(&kube::api::ListParams::default().limit(1)).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(e)) if e.code == 404 => anyhow::bail!(
            "{} ({}) is not served: its CRD is not installed; apply the manifests (`manifests | kubectl apply -f -`) or run with --install-crds",
            spec.names.kind,
            crd.name_any()
        ),
        Err(e) => Err(anyhow::Error::new(e).context(format!("cannot list {}", spec.names.plural))),
    }
}

/// Creates a CRD unless it exists, and waits (up to 30 s) until it is established.
pub async fn ensure_crd(client: &Client, crd: CustomResourceDefinition) -> anyhow::Result<()> {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
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
