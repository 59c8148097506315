//! A complete operator binary from a few builder calls: [`App`] runs reconcilers on the embedded in-memory
//! cluster (the default, with feature `testing`), on the cluster of a kubeconfig (`--kubeconfig FILE` or
//! `KUBECONFIG`) or of its pod (`--in-cluster`), with controller-runtime's flags for probes, metrics, leader
//! election and namespaces ([`RunFlags`]), admission webhooks ([`WebhookFlags`]), and prints the manifests
//! an installation needs (`manifests`). Feature `cli`.
//!
//! ```no_run
//! # use kubewright::{ParentKind, Reconciler};
//! // `main` of an operator whose reconciler is `reconciler` (`Kind::reconciler()` with the derive).
//! async fn run<P: ParentKind>(reconciler: Reconciler<P>) -> Result<(), kubewright::cli::CliError> {
//!     kubewright::cli::App::new("tidy-operator")
//!         .about("Keeps things tidy.")
//!         .namespace("tidy-system")
//!         .image("example.dev/tidy-operator:latest")
//!         .reconciler(reconciler)
//!         .run()
//!         .await
//! }
//! ```
//!
//! An operator mostly waits on the API server, so one thread serves it well: the examples run it on tokio's
//! current-thread runtime (`#[tokio::main(flavor = "current_thread")]`). On the real control plane, converging
//! 1,000 WebApps took the `webapp` example 1.00 s of CPU on it against 1.30 s on the multi-threaded runtime
//! (three interleaved runs each; `cargo xtask bench-cluster`), whose threads wake each other for every
//! response. A step that blocks (heavy computation, a synchronous client) then holds up every other step:
//! run such work with `tokio::task::spawn_blocking`, or pick the multi-threaded runtime.

use std::ffi::OsString;
use std::future::Future;
use std::io::Write as _;
use std::path::PathBuf;
use std::sync::Arc;

use clap::{CommandFactory, FromArgMatches};
use futures::FutureExt;
use futures::future::BoxFuture;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::{Client, Resource};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::admission::ErasedWebhooks;
use crate::conversion::{ErasedConversion, VersionKind, Versions};
use crate::manifests::Manifests;
use crate::{Operator, ParentKind, Reconciler};

mod cluster;
mod embedded;
mod error;
mod flags;
mod observe;
mod operate;
mod plan;
mod webhooks;

pub use cluster::{ensure_crd, ensure_served, from_env, from_kubeconfig, in_cluster};
pub use embedded::EmbeddedArgs;
pub use error::CliError;
pub use flags::{BindAddress, RunFlags, parse_bind_address, run_operator};
pub use observe::{log_changes, ready};
pub use operate::Operate;
pub use plan::PLAN_SYNC_TIMEOUT;
pub use webhooks::WebhookFlags;

use embedded::Sample;
use error::Context as _;

/// The command line of an [`App`].
///
/// With `--kubeconfig FILE`, or `KUBECONFIG` set, it runs against that cluster (installing the CRDs if they
/// are missing with `--install-crds`, otherwise checking they are served); with `--in-cluster`, against the
/// cluster of its pod (whose CRDs the manifests installed). Otherwise (or with `--embedded`) it starts an
/// in-memory cluster, installs the CRDs and sample objects, and logs what the operator does.
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
    /// How the operator runs: probes, metrics, leader election, namespaces.
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
#[derive(Debug, Clone, PartialEq, Eq, clap::Subcommand)]
pub enum CliCommand {
    /// Print the manifests an installation needs as YAML (pipe it to `kubectl apply -f -`): the CRDs, the
    /// Namespace, ServiceAccount, RBAC derived from the reconcilers, and the operator's Deployment.
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
        /// Run this many replicas sharing the parents (`--sharded`) instead of one elected leader: the Role
        /// also lets them list Leases, the ClusterRole patch the parents' labels.
        #[arg(long, value_name = "REPLICAS")]
        sharded: Option<i32>,
    },
    /// Rewrite every stored object of the operator's CRDs at the storage version, then drop the other
    /// versions from each CRD's `status.storedVersions` (after a new storage version ships, before an old
    /// version is removed). Needs a cluster (`--kubeconfig`, `KUBECONFIG` or `--in-cluster`) whose CRDs are
    /// served with their conversion webhook running; safe to run twice and to run again after an interruption.
    Migrate,
    /// Print what the operator would write, without writing: one pass per parent with every write sent as a
    /// server-side dry run (`dryRun=All`), each write shown as a unified diff of the live object and the dry
    /// run's answer, as YAML without the metadata every write changes (managedFields, resourceVersion,
    /// generation, uid, creationTimestamp, the runtime's desired-hash annotation); no event is sent. Runs against
    /// `--kubeconfig`, `KUBECONFIG` or `--in-cluster` (a served embedded cluster's kubeconfig too), with the RBAC
    /// for the writes, or with `--embedded` on a new embedded cluster holding the samples. Exit code 0 when
    /// nothing would be written, 2 when something would, 1 when the plan cannot be made (a write refused,
    /// naming the request).
    Plan {
        /// Plan only this parent: `NAMESPACE/NAME`, or `NAME` for a cluster-scoped kind.
        #[arg(long, value_name = "NAMESPACE/NAME")]
        parent: Option<String>,
        /// With `--parent`, the parent's kind (`WebApp`) or plural (`webapps`), when the operator has several
        /// parent kinds.
        #[arg(long, requires = "parent")]
        kind: Option<String>,
    },
}

/// The client of the cluster a subcommand (`what`) needs: `--kubeconfig`, `--in-cluster` or `KUBECONFIG`.
async fn cluster_client(cli: &Cli, what: &str) -> Result<Client, CliError> {
    match (&cli.kubeconfig, cli.in_cluster) {
        (Some(path), _) => from_kubeconfig(path).await,
        (None, true) => in_cluster().await,
        (None, false) if std::env::var_os("KUBECONFIG").is_some_and(|v| !v.is_empty()) => {
            from_env().await
        }
        _ => Err(CliError::msg(format!(
            "{what} needs a cluster: --kubeconfig FILE, KUBECONFIG or --in-cluster"
        ))),
    }
}

/// What `--help` says of where the operator runs, after the app's own description.
const MODES: &str = "With `--kubeconfig FILE`, or `KUBECONFIG` set, it runs against that cluster (installing the \
CRDs if they are missing with `--install-crds`, otherwise checking they are served); with `--in-cluster`, against \
the cluster of its pod. Otherwise (or with `--embedded`) it starts an in-memory cluster, installs the CRDs and \
sample objects, and logs what the operator does; `--listen ADDR --write-kubeconfig FILE` serves it to kubectl.";

/// Watches the embedded cluster and logs, until aborted.
type Observer = Box<dyn Fn(Client) -> BoxFuture<'static, ()> + Send + Sync>;

/// Adds controllers (or cache options) to the operator.
type Configure = Box<dyn FnOnce(Operator) -> Operator + Send>;

/// An operator binary: its reconcilers, CRDs, webhooks and installation, and what to show on the embedded
/// cluster. [`run`](Self::run) parses the process's arguments ([`Cli`]) and does what they ask.
pub struct App {
    about: Option<String>,
    manifests: Manifests,
    configure: Vec<Configure>,
    crds: Vec<CustomResourceDefinition>,
    embedded_crds: Vec<CustomResourceDefinition>,
    webhooks: webhooks::Webhooks,
    samples: Vec<Sample>,
    invalid: Vec<CliError>,
    observers: Vec<Observer>,
    kubectl_hint: Option<String>,
}

impl std::fmt::Debug for App {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("App")
            .field("manifests", &self.manifests)
            .field("crds", &self.crds.len())
            .field("webhooks", &self.webhooks.kinds.len())
            .field("samples", &self.samples.len())
            .finish_non_exhaustive()
    }
}

impl App {
    /// The operator `name` (its command, and the name of its ServiceAccount, roles and Deployment). The
    /// installation runs it with `--in-cluster`, health probes on 8081, metrics on 8080 and leader election,
    /// all of which this command line serves.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            about: None,
            manifests: Manifests::new(name)
                .args(["--in-cluster"])
                .health_probes(8081)
                .metrics(8080)
                .leader_election(true),
            configure: Vec::new(),
            crds: Vec::new(),
            embedded_crds: Vec::new(),
            webhooks: webhooks::Webhooks::default(),
            samples: Vec::new(),
            invalid: Vec::new(),
            observers: Vec::new(),
            kubectl_hint: None,
        }
    }

    /// What `--help` says of the operator (its first line is the short help).
    pub fn about(mut self, about: impl Into<String>) -> Self {
        self.about = Some(about.into());
        self
    }

    /// Runs `reconciler`, and grants its wiring's RBAC in the manifests.
    pub fn reconciler<P: ParentKind>(mut self, reconciler: Reconciler<P>) -> Self {
        self.manifests = self.manifests.reconciler(&reconciler);
        self.configure
            .push(Box::new(move |op| op.controller(reconciler)));
        self
    }

    /// Runs the reconciler `#[derive(Reconciler)]` declared for `K`, and serves `K`'s CRD and the admission
    /// webhooks it declares: [`reconciler`](Self::reconciler), [`crd`](Self::crd) and
    /// [`webhooks`](Self::webhooks) in one call. A kind whose reconciler takes `data` adds them one by one. `K`
    /// may also be a marker struct with `#[reconciler(parent = Service)]`: its reconciler of a built-in or
    /// foreign kind runs, with no CRD ([`Operate`]).
    ///
    /// ```
    /// # use k8s_openapi::api::core::v1::ConfigMap;
    /// # use kubewright::prelude::*;
    /// # #[derive(CustomResource, Reconciler, Clone, Debug, Serialize, Deserialize, JsonSchema)]
    /// # #[kube(group = "example.dev", version = "v1", kind = "Note", namespaced, status = "NoteStatus")]
    /// # #[owns(ConfigMap)]
    /// # pub struct NoteSpec { pub text: String }
    /// # #[derive(Clone, Debug, Default, Serialize, Deserialize, JsonSchema, ReconcilerStatus)]
    /// # #[serde(rename_all = "camelCase")]
    /// # pub struct NoteStatus { pub observed_generation: Option<i64>, #[serde(default)] pub conditions: Vec<Condition> }
    /// let app = App::new("note-operator").operate::<Note>();
    /// assert_eq!(app.installation().crds().len(), 1);
    /// ```
    pub fn operate<K: Operate>(self) -> Self {
        K::operate(self)
    }

    /// Configures the operator further before it runs (cache options, another controller); what `configure`
    /// adds is not reflected in the manifests' RBAC: add its rules with [`manifests`](Self::manifests).
    pub fn configure(
        mut self,
        configure: impl FnOnce(Operator) -> Operator + Send + 'static,
    ) -> Self {
        self.configure.push(Box::new(configure));
        self
    }

    /// A CustomResourceDefinition the operator serves (`Kind::crd()`): in the manifests, installed on the
    /// embedded cluster, checked (or installed with `--install-crds`) on a real one.
    pub fn crd(mut self, crd: CustomResourceDefinition) -> Self {
        self.manifests = self.manifests.crd(crd.clone());
        if self.webhooks.name.is_empty() {
            self.webhooks.name = format!("{}-webhooks", crd.spec.names.plural);
        }
        self.crds.push(crd);
        self
    }

    /// The CRD of another project's kind the operator uses (a child or watched kind, such as cert-manager's
    /// `Certificate`), installed on the embedded cluster only, so that the binary runs there out of the box.
    /// On a real cluster that project installs it: the manifests leave it out, and the operator refuses to
    /// start while it is not served.
    pub fn embedded_crd(mut self, crd: CustomResourceDefinition) -> Self {
        self.embedded_crds.push(crd);
        self
    }

    /// The versions of a kind (`Kind::versions()`, or a [`Versions`] written by hand): their merged CRD
    /// replaces the kind's, and when there are several, the operator serves their conversion webhook
    /// (in-process on the embedded cluster, over HTTPS with `--webhook-bind-address`, and in the manifests
    /// behind the webhook Service, which then needs cert-manager).
    ///
    /// ```
    /// # use kubewright::prelude::*;
    /// # use kubewright::conversion::Versions;
    /// # #[derive(CustomResource, Clone, Debug, Serialize, Deserialize, JsonSchema)]
    /// # #[kube(group = "example.dev", version = "v1", kind = "Note", namespaced)]
    /// # pub struct NoteSpec { pub text: String }
    /// let app = App::new("note-operator").versions(Versions::<Note>::new().storage("v1"));
    /// assert_eq!(app.installation().crds()[0].spec.versions.len(), 1);
    /// ```
    pub fn versions<K>(mut self, versions: Versions<K>) -> Self
    where
        K: VersionKind,
        Versions<K>: Send + Sync,
    {
        match versions.crd() {
            Ok(crd) => {
                if let Some(same) = self
                    .crds
                    .iter_mut()
                    .find(|c| c.metadata.name == crd.metadata.name)
                {
                    *same = crd.clone();
                    self.manifests = self.manifests.crd(crd);
                } else {
                    self = self.crd(crd);
                }
            }
            Err(e) => self.invalid.push(CliError::msg(e.to_string())),
        }
        if versions.converts() {
            let conversion: Arc<dyn ErasedConversion> = Arc::new(versions);
            self.manifests = self.manifests.conversion(conversion.as_ref());
            self.webhooks.conversions.push(conversion);
        }
        self
    }

    /// The admission webhooks of a kind (`Kind::webhooks()`): in-process on the embedded cluster, over HTTPS
    /// with `--webhook-bind-address`, and in the manifests with `manifests --webhooks`.
    pub fn webhooks(mut self, webhooks: impl ErasedWebhooks + 'static) -> Self {
        self.webhooks.kinds.push(Arc::new(webhooks));
        self
    }

    /// The namespace of the installation's ServiceAccount and Deployment.
    pub fn namespace(mut self, namespace: impl Into<String>) -> Self {
        self.manifests = self.manifests.namespace(namespace);
        self
    }

    /// The image the installation's Deployment runs.
    pub fn image(mut self, image: impl Into<String>) -> Self {
        self.manifests = self.manifests.image(image);
        self
    }

    /// Changes the installation further (extra rules, no leader election, other ports).
    pub fn manifests(mut self, change: impl FnOnce(Manifests) -> Manifests) -> Self {
        self.manifests = change(self.manifests);
        self
    }

    /// An object to create on the embedded cluster (in its namespace, else `default`) once the CRDs are
    /// established, before the operator starts; samples are created in the order given.
    pub fn sample<K: Resource<DynamicType = ()> + Serialize>(mut self, object: K) -> Self {
        match Sample::of(&object) {
            Ok(sample) => self.samples.push(sample),
            Err(e) => self.invalid.push(e),
        }
        self
    }

    /// On the embedded cluster, logs `summary` of each object of kind `K` whenever it changes.
    pub fn log<K>(mut self, summary: fn(&K) -> String) -> Self
    where
        K: Resource<DynamicType = ()>
            + Clone
            + DeserializeOwned
            + std::fmt::Debug
            + Send
            + Sync
            + 'static,
    {
        self.observers
            .push(Box::new(move |client| log_changes(client, summary).boxed()));
        self
    }

    /// On the embedded cluster, runs `observe` beside the operator (it is aborted when the operator stops).
    pub fn observe(mut self, observe: fn(Client) -> BoxFuture<'static, ()>) -> Self {
        self.observers.push(Box::new(observe));
        self
    }

    /// What to try with kubectl on the served embedded cluster, e.g. `get webapps,deployments` (default:
    /// `get` the CRDs' plurals).
    pub fn kubectl_hint(mut self, hint: impl Into<String>) -> Self {
        self.kubectl_hint = Some(hint.into());
        self
    }

    /// The installation `manifests` prints with no flags.
    pub fn installation(&self) -> Manifests {
        self.manifests.clone()
    }

    /// `operator` with this app's reconcilers and configuration.
    pub fn operator(self, operator: Operator) -> Operator {
        self.configure.into_iter().fold(operator, |op, f| f(op))
    }

    /// The command line, parsed from the process's arguments (exits with clap's message and status on a
    /// mistake, and after `--help` or `--version`).
    pub fn parse(&self) -> Cli {
        match Cli::from_arg_matches(&self.command().get_matches()) {
            Ok(cli) => cli,
            Err(e) => e.exit(),
        }
    }

    /// The command line, parsed from `args` (the first is the program's name).
    pub fn try_parse_from(
        &self,
        args: impl IntoIterator<Item = impl Into<OsString> + Clone>,
    ) -> Result<Cli, clap::Error> {
        Cli::from_arg_matches(&self.command().try_get_matches_from(args)?)
    }

    fn command(&self) -> clap::Command {
        let mut command = Cli::command().name(self.manifests.name().to_string());
        if let Some(about) = &self.about {
            let short = about.lines().next().unwrap_or_default().to_string();
            command = command
                .about(short)
                .long_about(format!("{about}\n\n{MODES}"));
        }
        command
    }

    #[cfg(feature = "testing")]
    fn hint(&self) -> String {
        self.kubectl_hint.clone().unwrap_or_else(|| {
            let plurals: Vec<&str> = self
                .crds
                .iter()
                .map(|c| c.spec.names.plural.as_str())
                .collect();
            format!("get {}", plurals.join(","))
        })
    }

    /// Installs a `tracing` subscriber honouring `RUST_LOG` (default `info`) unless one is set, parses the
    /// process's arguments and does what they ask until Ctrl-C or SIGTERM. An error whose
    /// [`exit_code`](CliError::exit_code) is not 1 (`plan` with writes: 2) ends the process with that code.
    pub async fn run(self) -> Result<(), CliError> {
        let filter = tracing_subscriber::EnvFilter::try_from_default_env()
            .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
        let _ = tracing_subscriber::fmt().with_env_filter(filter).try_init();
        let cli = self.parse();
        match self.run_with(cli, crate::shutdown_signal()).await {
            // Not a failure: `plan` says that something would be written.
            Err(e) if e.exit_code() != 1 => {
                tracing::info!("{e}");
                std::process::exit(i32::from(e.exit_code()))
            }
            done => done,
        }
    }

    /// Does what `cli` asks until `shutdown` resolves.
    pub async fn run_with(
        mut self,
        cli: Cli,
        shutdown: impl Future<Output = ()> + Send,
    ) -> Result<(), CliError> {
        if let Some(e) = self.invalid.pop() {
            return Err(e);
        }
        if self.webhooks.name.is_empty() {
            self.webhooks.name = "operator-webhooks".into();
        }
        if let Some(CliCommand::Manifests {
            install_crds,
            namespaces,
            webhooks,
            sharded,
        }) = cli.command
        {
            if webhooks && self.webhooks.kinds.is_empty() {
                return Err(CliError::msg(
                    "this operator has no admission webhooks: --webhooks does not apply",
                ));
            }
            let hooks = if webhooks {
                self.webhooks.kinds.as_slice()
            } else {
                &[]
            };
            let yaml = hooks
                .iter()
                .fold(self.manifests, |m, k| m.admission(k.as_ref()))
                .install_crds(install_crds)
                .watch_namespaces(namespaces)
                .sharded(sharded)
                .to_yaml()
                .context("cannot render the manifests as YAML")?;
            return std::io::stdout()
                .write_all(yaml.as_bytes())
                .context("cannot write the manifests");
        }
        if cli.command == Some(CliCommand::Migrate) {
            let client = cluster_client(&cli, "migrate").await?;
            return self.migrate(&client).await;
        }
        if let Some(CliCommand::Plan { parent, kind }) = &cli.command {
            let selector = parent
                .as_deref()
                .map(|p| crate::plan::ParentSelector::parse(p, kind.as_deref()));
            if cli.embedded {
                return embedded::plan(self, &cli.run, selector).await;
            }
            let client = cluster_client(&cli, "plan").await?;
            return self.run_plan(client, &cli.run, selector).await;
        }
        if cli.in_cluster {
            let client = in_cluster().await?;
            // The manifests install the CRDs and the webhook configurations, and the ClusterRole they bind
            // grants nothing on either: serve and run only.
            let serving = webhooks::serve_in_cluster(&self.webhooks, &cli.webhooks).await?;
            let ran =
                run_operator(self.operator(cli.run.operator(client)), &cli.run, shutdown).await;
            if let Some(serving) = serving {
                serving.abort();
            }
            return ran;
        }
        let embedded = cli.embedded || cli.serve.listen.is_some();
        let kubeconfig_env = std::env::var_os("KUBECONFIG").filter(|v| !v.is_empty());
        let client = match (&cli.kubeconfig, kubeconfig_env) {
            (Some(path), _) => from_kubeconfig(path).await?,
            (None, Some(_)) if !embedded => from_env().await?,
            _ => return embedded::run(self, &cli.serve, &cli.run, shutdown).await,
        };
        self.run_on_cluster(client, cli.install_crds, &cli.run, &cli.webhooks, shutdown)
            .await
    }

    /// The `migrate` subcommand: [`crate::conversion::migrate`] for each CRD, one line each on stdout.
    pub async fn migrate(self, client: &Client) -> Result<(), CliError> {
        let names: Vec<String> = self
            .crds
            .iter()
            .filter_map(|crd| crd.metadata.name.clone())
            .collect();
        for name in names {
            let done = crate::conversion::migrate(client, &name)
                .await
                .with_context(|| format!("cannot migrate {name}"))?;
            let line = format!(
                "{}: {} objects read, {} rewritten at {}; storedVersions {:?} -> [{:?}]\n",
                done.crd,
                done.objects,
                done.rewritten,
                done.storage,
                done.stored_before,
                done.storage
            );
            std::io::stdout()
                .write_all(line.as_bytes())
                .context("cannot write to stdout")?;
        }
        Ok(())
    }

    /// Runs the operator against a real cluster: with `install_crds`, installs the CRDs first if they are
    /// missing; otherwise checks that their kinds are served (reading no CRD, so the operator's own RBAC
    /// suffices). Webhooks are served and their configurations installed when `webhook_flags` name an address.
    pub async fn run_on_cluster(
        self,
        client: Client,
        install_crds: bool,
        flags: &RunFlags,
        webhook_flags: &WebhookFlags,
        shutdown: impl Future<Output = ()> + Send,
    ) -> Result<(), CliError> {
        let serving = webhooks::start_on_cluster(&self.webhooks, &client, webhook_flags).await?;
        let crds = match &serving {
            Some(serving) => serving.point_crds(&self.webhooks, &self.crds),
            None => self.crds.clone(),
        };
        if install_crds
            && serving.is_none()
            && let Some(c) = self.webhooks.conversions.first()
        {
            return Err(CliError::msg(format!(
                "{} has several versions: installing its CRD needs the conversion webhook served, with --webhook-bind-address",
                c.crd_name()
            )));
        }
        for crd in &crds {
            if install_crds {
                ensure_crd(&client, crd.clone()).await?;
            } else {
                ensure_served(&client, crd, &flags.namespaces).await?;
            }
        }
        let ran = run_operator(
            self.operator(flags.operator(client.clone())),
            flags,
            shutdown,
        )
        .await;
        if let Some(serving) = serving {
            serving.stop(&client).await;
        }
        ran
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifests_take_their_flags() {
        let app = App::new("tidy-operator");
        let cli = app
            .try_parse_from(["tidy", "manifests", "--install-crds", "--namespace", "a"])
            .unwrap();
        assert_eq!(
            cli.command,
            Some(CliCommand::Manifests {
                install_crds: true,
                namespaces: vec!["a".into()],
                webhooks: false,
                sharded: None,
            })
        );
        let err = app
            .try_parse_from(["tidy", "--in-cluster", "--embedded"])
            .unwrap_err();
        assert!(err.to_string().contains("--embedded"), "{err}");
    }

    #[test]
    fn plan_takes_a_parent_and_its_kind() {
        let app = App::new("tidy-operator");
        let cli = app
            .try_parse_from(["tidy", "plan", "--parent", "ns/web", "--kind", "WebApp"])
            .unwrap();
        assert_eq!(
            cli.command,
            Some(CliCommand::Plan {
                parent: Some("ns/web".into()),
                kind: Some("WebApp".into())
            })
        );
        let err = app
            .try_parse_from(["tidy", "plan", "--kind", "WebApp"])
            .unwrap_err();
        assert!(err.to_string().contains("--parent"), "{err}");
    }

    #[tokio::test]
    async fn plan_needs_a_cluster() {
        let app = App::new("tidy-operator");
        let mut cli = app.try_parse_from(["tidy", "plan"]).unwrap();
        cli.kubeconfig = None;
        // With KUBECONFIG set, the plan would run against that cluster.
        if std::env::var_os("KUBECONFIG").is_some_and(|v| !v.is_empty()) {
            return;
        }
        let err = app.run_with(cli, std::future::pending()).await.unwrap_err();
        assert_eq!(err.exit_code(), 1);
        assert!(err.to_string().contains("plan needs a cluster"), "{err}");
    }
}
