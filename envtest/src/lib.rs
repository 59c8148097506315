//! A real control plane for integration tests: etcd and kube-apiserver started from `KUBEBUILDER_ASSETS`,
//! the way controller-runtime's envtest starts them.
//!
//! It stands on its own, beside `cargo xtask envtest` which builds the binaries; the `kubewright` runtime
//! re-exports it as `kubewright::testing::envtest` (feature `envtest`). The binaries come from
//! `KUBEBUILDER_ASSETS` (any envtest binaries, e.g. from `setup-envtest`), or from the cache that `cargo xtask envtest` builds from Go modules
//! ([`default_assets_dir`]). A [`ControlPlane`] is a running etcd and kube-apiserver on random localhost
//! ports, with a fresh CA, an admin client certificate in `system:masters`, RBAC authorization, and a
//! service-account issuer. By default no kube-controller-manager runs, so there is no garbage collection, no
//! namespace deletion and no Deployment controller; a [cluster](Builder::cluster) adds kube-controller-manager,
//! kube-scheduler and kwok's simulated nodes ([`ControlPlane::cluster`], [`ControlPlane::shared_cluster`]).
//!
//! Every process it starts is stopped when the last handle is dropped, when the test binary exits (the
//! [shared](ControlPlane::shared) one), and, on Linux, when the test binary is killed.
//!
//! ```no_run
//! # async fn run() -> Result<(), kubewright_envtest::Error> {
//! use kubewright_envtest::ControlPlane;
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube::api::{Api, PostParams};
//!
//! // One control plane for every test in this binary; `None` (with a message) when no binaries are found.
//! let Some(cp) = ControlPlane::shared_or_skip("config_maps_round_trip").await else {
//!     return Ok(());
//! };
//! let client = cp.client()?;
//! let ns = cp.namespace().await?;
//! let cms: Api<ConfigMap> = Api::namespaced(client, &ns);
//! let mut cm = ConfigMap::default();
//! cm.metadata.name = Some("a".into());
//! cms.create(&PostParams::default(), &cm).await.expect("created");
//! # Ok(()) }
//! ```

#![deny(unsafe_code)]
#![warn(missing_docs)]

mod assets;
mod certs;
mod client;
pub mod cluster;
mod error;
mod health;
pub mod metrics;
mod process;

use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};

pub use assets::{
    ASSETS_ENV, Assets, CACHE_ENV, ETCD_VERSION, KUBERNETES_VERSION, REQUIRE_ENV, assets_dir_name,
    cache_root, control_plane_required, default_assets_dir,
};
use certs::Certificates;
use cluster::Components;
pub use cluster::{ClusterAssets, ClusterOptions, ClusterStartup, KWOK_VERSION};
pub use error::Error;
use process::Process;

/// How a [`ControlPlane`] is started.
#[derive(Debug, Clone)]
pub struct Builder {
    assets: Option<Assets>,
    etcd_port: Option<u16>,
    apiserver_port: Option<u16>,
    start_timeout: Duration,
    apiserver_args: Vec<String>,
    name: Option<String>,
    cluster: Option<ClusterOptions>,
    cluster_assets: Option<ClusterAssets>,
}

impl Default for Builder {
    fn default() -> Self {
        Builder {
            name: None,
            assets: None,
            etcd_port: None,
            apiserver_port: None,
            start_timeout: Duration::from_secs(120),
            apiserver_args: Vec::new(),
            cluster: None,
            cluster_assets: None,
        }
    }
}

impl Builder {
    /// Use these binaries instead of [`Assets::locate`].
    pub fn assets(mut self, assets: Assets) -> Self {
        self.assets = Some(assets);
        self
    }

    /// A name for the control plane's directory (`operator-envtest-<name>-XXXXXX`, holding certificates,
    /// etcd's data and the logs), to tell the processes and logs of one test from another's.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// etcd's client port (default: a free port).
    pub fn etcd_port(mut self, port: u16) -> Self {
        self.etcd_port = Some(port);
        self
    }

    /// kube-apiserver's `--secure-port` (default: a free port).
    pub fn apiserver_port(mut self, port: u16) -> Self {
        self.apiserver_port = Some(port);
        self
    }

    /// How long each process gets to become ready (default 120 s: a cold start on a loaded two-core machine
    /// takes about ten).
    pub fn start_timeout(mut self, timeout: Duration) -> Self {
        self.start_timeout = timeout;
        self
    }

    /// An extra kube-apiserver flag, e.g. `--feature-gates=…`; it comes after (and so overrides) the defaults.
    pub fn apiserver_arg(mut self, arg: impl Into<String>) -> Self {
        self.apiserver_args.push(arg.into());
        self
    }

    /// Also start kube-controller-manager, kube-scheduler and kwok with three simulated nodes (binaries from
    /// [`ClusterAssets::beside`] the control plane's), so Deployments get ReplicaSets and Pods that become
    /// `Ready`, Jobs complete, and deletion of namespaces and garbage collection happen.
    pub fn cluster(self) -> Self {
        self.cluster_options(ClusterOptions::default())
    }

    /// A [cluster](Builder::cluster) with these options (nodes, client rates).
    pub fn cluster_options(mut self, options: ClusterOptions) -> Self {
        self.cluster = Some(options);
        self
    }

    /// Use these cluster binaries instead of [`ClusterAssets::beside`]; implies [`Builder::cluster`] unless
    /// options were given.
    pub fn cluster_assets(mut self, assets: ClusterAssets) -> Self {
        self.cluster_assets = Some(assets);
        self.cluster.get_or_insert_with(ClusterOptions::default);
        self
    }

    /// Starts etcd and kube-apiserver and waits until both are ready; for a [cluster](Builder::cluster), then
    /// kube-controller-manager, kube-scheduler and kwok, each until it works. On any error every process already
    /// started is stopped. Random ports that turn out to be taken by the time a process binds them are
    /// retried with new ones.
    pub async fn start(self) -> Result<ControlPlane, Error> {
        let assets = match &self.assets {
            Some(assets) => assets.clone(),
            None => Assets::locate()?,
        };
        let cluster_assets = match (&self.cluster, &self.cluster_assets) {
            (None, _) => None,
            (Some(_), Some(given)) => Some(given.clone()),
            (Some(_), None) => Some(ClusterAssets::beside(&assets)?),
        };
        let mut attempt = 0;
        loop {
            attempt += 1;
            match self.start_once(&assets, cluster_assets.as_ref()).await {
                Err(Error::PortInUse { .. })
                    if attempt < 3 && self.etcd_port.is_none() && self.apiserver_port.is_none() =>
                {
                    tracing::debug!(attempt, "a random port was taken; retrying");
                }
                other => return other,
            }
        }
    }

    async fn start_once(
        &self,
        assets: &Assets,
        cluster_assets: Option<&ClusterAssets>,
    ) -> Result<ControlPlane, Error> {
        let prefix = match &self.name {
            Some(name) => format!("operator-envtest-{name}-"),
            None => "operator-envtest-".to_string(),
        };
        let dir = tempfile::Builder::new()
            .prefix(&prefix)
            .tempdir()
            .map_err(|source| Error::Io {
                context: "creating the control plane's directory".into(),
                source,
            })?;
        let certs = Certificates::generate(dir.path())?;
        let etcd_port = port("etcd", "--listen-client-urls", self.etcd_port)?;
        let apiserver_port = port("kube-apiserver", "--secure-port", self.apiserver_port)?;

        let started = Instant::now();
        let etcd_url = format!("http://127.0.0.1:{etcd_port}");
        let mut etcd = Process::spawn(
            "etcd",
            &assets.etcd,
            etcd_args(dir.path(), &etcd_url),
            dir.path().join("etcd.log"),
        )?;
        health::wait_for_etcd(&mut etcd, etcd_port, self.start_timeout).await?;
        let etcd_ready = started.elapsed();

        let started = Instant::now();
        let mut args = apiserver_args(dir.path(), &certs, &etcd_url, apiserver_port);
        if self.cluster.is_some() {
            // No node-lifecycle controller runs to lift the `not-ready` taint this plugin puts on a new Node:
            // kwok's nodes start untainted instead.
            args.push(
                "--disable-admission-plugins=ServiceAccount,TaintNodesByCondition".to_string(),
            );
        }
        args.extend(self.apiserver_args.iter().cloned());
        let mut apiserver = Process::spawn(
            "kube-apiserver",
            &assets.kube_apiserver,
            args,
            dir.path().join("kube-apiserver.log"),
        )?;
        let url = format!("https://127.0.0.1:{apiserver_port}");
        let kubeconfig_yaml = kubeconfig_yaml(&url, &certs);
        let kubeconfig = Kubeconfig::from_yaml(&kubeconfig_yaml)
            .map_err(|e| Error::Kubeconfig(e.to_string()))?;
        let config =
            Config::from_custom_kubeconfig(kubeconfig.clone(), &KubeConfigOptions::default())
                .await
                .map_err(|e| Error::Kubeconfig(e.to_string()))?;
        health::wait_for_apiserver(&mut apiserver, &config, self.start_timeout).await?;
        let apiserver_ready = started.elapsed();
        tracing::info!(%url, ?etcd_ready, ?apiserver_ready, "control plane ready");

        let (components, cluster) = match (&self.cluster, cluster_assets) {
            (Some(options), Some(cluster_assets)) => {
                let joining = cluster::Joining {
                    dir: dir.path(),
                    certs: &certs,
                    config: &config,
                    kubeconfig_yaml: &kubeconfig_yaml,
                    timeout: self.start_timeout,
                };
                let (components, times) = cluster::start(joining, cluster_assets, options).await?;
                tracing::info!(?times, "cluster components ready");
                (components, Some(times))
            }
            _ => (Components::default(), None),
        };

        Ok(ControlPlane {
            inner: Arc::new(Inner {
                assets: assets.clone(),
                url,
                kubeconfig,
                kubeconfig_yaml,
                config,
                start_timeout: self.start_timeout,
                startup: StartupTimes {
                    etcd: etcd_ready,
                    apiserver: apiserver_ready,
                    cluster,
                },
                running: Mutex::new(Running {
                    components,
                    apiserver: Some(apiserver),
                    etcd: Some(etcd),
                    restarts: 0,
                    dir: Some(dir),
                }),
            }),
        })
    }
}

/// How long each process took to become ready.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StartupTimes {
    /// From spawning etcd until `/health` answered.
    pub etcd: Duration,
    /// From spawning kube-apiserver until `/readyz` answered `ok`.
    pub apiserver: Duration,
    /// The cluster components, when they run.
    pub cluster: Option<ClusterStartup>,
}

/// A running etcd and kube-apiserver. Cheap to clone; the processes stop when the last clone is dropped
/// (or with [`ControlPlane::stop`]).
#[derive(Debug, Clone)]
pub struct ControlPlane {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    assets: Assets,
    url: String,
    kubeconfig: Kubeconfig,
    kubeconfig_yaml: String,
    config: Config,
    start_timeout: Duration,
    startup: StartupTimes,
    running: Mutex<Running>,
}

#[derive(Debug)]
struct Running {
    components: Components,
    apiserver: Option<Process>,
    etcd: Option<Process>,
    restarts: usize,
    dir: Option<tempfile::TempDir>,
}

impl Running {
    /// Stops the cluster components, kube-apiserver, then etcd, then removes the directory. Safe to call twice.
    fn shutdown(&mut self) {
        self.components.stop();
        if let Some(mut apiserver) = self.apiserver.take() {
            apiserver.stop(Duration::from_secs(5));
        }
        if let Some(mut etcd) = self.etcd.take() {
            etcd.stop(Duration::from_secs(5));
        }
        if let Some(dir) = self.dir.take()
            && let Err(e) = dir.close()
        {
            tracing::warn!(error = %e, "removing the control plane's directory");
        }
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        match self.running.get_mut() {
            Ok(running) => running.shutdown(),
            Err(poisoned) => poisoned.into_inner().shutdown(),
        }
    }
}

static SHARED: OnceLock<Result<ControlPlane, Arc<Error>>> = OnceLock::new();
static SHARED_CLUSTER: OnceLock<Result<ControlPlane, Arc<Error>>> = OnceLock::new();

impl ControlPlane {
    /// A builder, for ports, timeouts, binaries and extra flags.
    pub fn builder() -> Builder {
        Builder::default()
    }

    /// Starts a control plane of its own (binaries from [`Assets::locate`]).
    pub async fn start() -> Result<ControlPlane, Error> {
        Builder::default().start().await
    }

    /// Starts a control plane with kube-controller-manager, kube-scheduler and three simulated nodes
    /// ([`Builder::cluster`]).
    pub async fn cluster() -> Result<ControlPlane, Error> {
        Builder::default().cluster().start().await
    }

    /// One control plane for the whole test binary, started by the first caller; later callers (in any test
    /// and on any runtime) get a handle to the same one. It is stopped when the test binary exits.
    pub async fn shared() -> Result<ControlPlane, Error> {
        Self::shared_in(&SHARED, Builder::default()).await
    }

    /// One [cluster](ControlPlane::cluster) for the whole test binary, as [`ControlPlane::shared`] is one
    /// bare control plane (the two are different control planes).
    pub async fn shared_cluster() -> Result<ControlPlane, Error> {
        Self::shared_in(
            &SHARED_CLUSTER,
            Builder::default().name("cluster").cluster(),
        )
        .await
    }

    /// For tests: the [shared cluster](ControlPlane::shared_cluster), or `None` after printing a visible
    /// "skipped" line when no binaries are found and [`REQUIRE_ENV`] is not set.
    ///
    /// # Panics
    /// When binaries are found but fail to start, or when none are found and [`REQUIRE_ENV`] is set.
    pub async fn shared_cluster_or_skip(test: &str) -> Option<ControlPlane> {
        match Self::shared_cluster().await {
            Ok(cp) => Some(cp),
            Err(e) => skip_or_panic(test, e),
        }
    }

    async fn shared_in(
        cell: &'static OnceLock<Result<ControlPlane, Arc<Error>>>,
        builder: Builder,
    ) -> Result<ControlPlane, Error> {
        let started = tokio::task::spawn_blocking(move || {
            cell.get_or_init(|| {
                let started = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|source| Error::Io {
                        context: "starting a runtime for the shared control plane".into(),
                        source,
                    })
                    .and_then(|rt| rt.block_on(builder.start()));
                if started.is_ok() {
                    stop_shared_at_exit();
                }
                started.map_err(Arc::new)
            })
            .clone()
        })
        .await
        .map_err(|e| Error::Io {
            context: "starting the shared control plane".into(),
            source: std::io::Error::other(e.to_string()),
        })?;
        started.map_err(Error::Shared)
    }

    /// For tests: the [shared](ControlPlane::shared) control plane, or `None` after printing a visible
    /// "skipped" line when no binaries are found and [`REQUIRE_ENV`] is not set.
    ///
    /// # Panics
    /// When binaries are found but fail to start, or when none are found and [`REQUIRE_ENV`] is set.
    pub async fn shared_or_skip(test: &str) -> Option<ControlPlane> {
        match Self::shared().await {
            Ok(cp) => Some(cp),
            Err(e) => skip_or_panic(test, e),
        }
    }

    /// A new client (on the current runtime) authenticated as the admin user, with `TCP_NODELAY` on as Go's
    /// clients have it (kube's `Client::try_from` leaves it off).
    pub fn client(&self) -> Result<Client, Error> {
        client::client(self.inner.config.clone()).map_err(|source| Error::Kube {
            context: "building a client for the control plane".into(),
            source,
        })
    }

    /// The `kube::Config` of the admin user.
    pub fn config(&self) -> &Config {
        &self.inner.config
    }

    /// The kubeconfig of the admin user (context `envtest`).
    pub fn kubeconfig(&self) -> &Kubeconfig {
        &self.inner.kubeconfig
    }

    /// The kubeconfig as YAML, as kubectl reads it.
    pub fn kubeconfig_yaml(&self) -> &str {
        &self.inner.kubeconfig_yaml
    }

    /// Writes [`ControlPlane::kubeconfig_yaml`] to `path`.
    pub fn write_kubeconfig(&self, path: impl AsRef<Path>) -> Result<(), Error> {
        let path = path.as_ref();
        std::fs::write(path, &self.inner.kubeconfig_yaml).map_err(|source| Error::Io {
            context: format!("writing the kubeconfig {}", path.display()),
            source,
        })
    }

    /// The API server's URL, `https://127.0.0.1:<port>`.
    pub fn url(&self) -> &str {
        &self.inner.url
    }

    /// The binaries it runs.
    pub fn assets(&self) -> &Assets {
        &self.inner.assets
    }

    /// How long etcd and kube-apiserver took to become ready.
    pub fn startup_times(&self) -> StartupTimes {
        self.inner.startup
    }

    /// The directory holding certificates, etcd's data and the logs (`None` once stopped).
    pub fn dir(&self) -> Option<PathBuf> {
        self.running().dir.as_ref().map(|d| d.path().to_path_buf())
    }

    /// The process ids of etcd, kube-apiserver and the cluster components while they run.
    pub fn pids(&self) -> Vec<u32> {
        let running = self.running();
        running
            .etcd
            .iter()
            .chain(running.apiserver.iter())
            .chain(running.components.processes())
            .filter_map(Process::pid)
            .collect()
    }

    /// The log files of the running processes (etcd, kube-apiserver, then the cluster components), for a
    /// failing test to show.
    pub fn logs(&self) -> Vec<PathBuf> {
        let running = self.running();
        running
            .etcd
            .iter()
            .chain(running.apiserver.iter())
            .chain(running.components.processes())
            .map(|p| p.log().to_path_buf())
            .collect()
    }

    /// Whether kube-controller-manager, kube-scheduler and kwok run beside kube-apiserver.
    pub fn is_cluster(&self) -> bool {
        self.inner.startup.cluster.is_some()
    }

    /// Creates a namespace with a fresh name (`envtest-xxxxx`) and returns the name. Namespaces are never
    /// deleted: without kube-controller-manager (not a [cluster](Builder::cluster)) a deleted namespace stays
    /// `Terminating`.
    pub async fn namespace(&self) -> Result<String, Error> {
        let api: Api<Namespace> = Api::all(self.client()?);
        let mut ns = Namespace::default();
        ns.metadata.generate_name = Some("envtest-".into());
        let created = api
            .create(&PostParams::default(), &ns)
            .await
            .map_err(|source| Error::Kube {
                context: "creating a test namespace".into(),
                source,
            })?;
        Ok(created.metadata.name.unwrap_or_default())
    }

    /// Applies the CRDs (server-side, so installing the same CRD from several tests is harmless) and waits
    /// until each is established and its resources are served.
    pub async fn install_crds(
        &self,
        crds: impl IntoIterator<Item = CustomResourceDefinition>,
    ) -> Result<(), Error> {
        let client = self.client()?;
        let api: Api<CustomResourceDefinition> = Api::all(client.clone());
        let crds: Vec<CustomResourceDefinition> = crds.into_iter().collect();
        for crd in &crds {
            let name = crd.metadata.name.clone().unwrap_or_default();
            let mut crd = crd.clone();
            crd.metadata.managed_fields = None;
            crd.metadata.resource_version = None;
            crd.status = None;
            api.patch(
                &name,
                &PatchParams::apply("envtest").force(),
                &Patch::Apply(&crd),
            )
            .await
            .map_err(|source| Error::Kube {
                context: format!("installing CustomResourceDefinition {name}"),
                source,
            })?;
        }
        for crd in &crds {
            health::wait_for_crd(&client, crd, self.inner.start_timeout).await?;
        }
        Ok(())
    }

    /// Stops kube-apiserver (SIGKILL, like a crash) and starts it again on the same port and etcd, then waits
    /// until it is ready. Every open watch ends; clients reconnect. Not for a shared control plane that other
    /// tests are using at the same time.
    pub async fn restart_apiserver(&self) -> Result<(), Error> {
        let (path, args, log) = {
            let mut running = self.running();
            running.restarts += 1;
            let restarts = running.restarts;
            let Some(mut old) = running.apiserver.take() else {
                return Err(Error::Io {
                    context: "restarting kube-apiserver".into(),
                    source: std::io::Error::other("the control plane was stopped"),
                });
            };
            old.stop(Duration::ZERO);
            let log = old
                .log()
                .with_file_name(format!("kube-apiserver-{restarts}.log"));
            (old.path().to_path_buf(), old.args().to_vec(), log)
        };
        let mut apiserver = Process::spawn("kube-apiserver", &path, args, log)?;
        health::wait_for_apiserver(&mut apiserver, &self.inner.config, self.inner.start_timeout)
            .await?;
        self.running().apiserver = Some(apiserver);
        Ok(())
    }

    /// Stops every process and removes the directory (certificates, etcd data, logs). Other clones of this
    /// handle then talk to nothing.
    pub fn stop(&self) {
        self.running().shutdown();
    }

    fn running(&self) -> std::sync::MutexGuard<'_, Running> {
        self.inner
            .running
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// For tests that start a control plane of their own: the binaries, or `None` after printing a visible
/// "skipped" line when there are none and [`REQUIRE_ENV`] is not set.
///
/// # Panics
/// When binaries are named but unusable, or when none are found and [`REQUIRE_ENV`] is set.
pub fn assets_or_skip(test: &str) -> Option<Assets> {
    match Assets::locate() {
        Ok(assets) => Some(assets),
        Err(e) => skip_or_panic(test, e),
    }
}

/// `None` with a "skipped" line for a missing control plane that is not required; a panic otherwise.
fn skip_or_panic<T>(test: &str, e: Error) -> Option<T> {
    if !e.is_no_assets() || control_plane_required() {
        panic!("{test}: no control plane: {e}");
    }
    use std::io::Write;
    static EXPLAINED: std::sync::Once = std::sync::Once::new();
    // Straight to the terminal: the test harness hides the captured output of passing tests.
    let mut stderr = std::io::stderr();
    EXPLAINED.call_once(|| {
        let _ = writeln!(stderr, "SKIPPING the tests that need a control plane: {e}");
    });
    let _ = writeln!(
        stderr,
        "SKIPPED {test}: no control plane (set {REQUIRE_ENV}=1 to make this a failure)"
    );
    None
}

/// Registers (once) a process-exit hook that stops the shared control planes: statics are never dropped, and
/// the test harness exits through `exit`, which runs these hooks.
fn stop_shared_at_exit() {
    extern "C" fn stop_shared() {
        for cell in [&SHARED, &SHARED_CLUSTER] {
            if let Some(Ok(cp)) = cell.get() {
                cp.stop();
            }
        }
    }
    static REGISTERED: std::sync::Once = std::sync::Once::new();
    REGISTERED.call_once(|| {
        #[allow(unsafe_code)]
        // SAFETY: `atexit` only stores the function pointer; `stop_shared` does not unwind (it only stops
        // processes and removes a directory, ignoring errors).
        let registered = unsafe { atexit(stop_shared) };
        if registered != 0 {
            tracing::warn!("could not register the shared control plane's exit hook");
        }
    });
}

#[allow(unsafe_code)]
unsafe extern "C" {
    fn atexit(f: extern "C" fn()) -> std::ffi::c_int;
}

/// `requested` after checking that it is free, or a free port.
pub(crate) fn port(binary: &'static str, flag: &str, requested: Option<u16>) -> Result<u16, Error> {
    let bind = |port| TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, port)));
    match requested {
        Some(port) => match bind(port) {
            Ok(_) => Ok(port),
            Err(_) => Err(Error::PortInUse {
                binary,
                flag: flag.to_string(),
                port,
            }),
        },
        None => bind(0)
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .map_err(|source| Error::Io {
                context: format!("finding a free port for {binary} {flag}"),
                source,
            }),
    }
}

fn etcd_args(dir: &Path, client_url: &str) -> Vec<String> {
    vec![
        format!("--data-dir={}", dir.join("etcd").display()),
        format!("--listen-client-urls={client_url}"),
        format!("--advertise-client-urls={client_url}"),
        // A single member needs no reachable peer port; port 0 avoids a second port that could collide.
        "--listen-peer-urls=http://127.0.0.1:0".to_string(),
        "--unsafe-no-fsync=true".to_string(),
        "--log-level=warn".to_string(),
    ]
}

fn apiserver_args(dir: &Path, certs: &Certificates, etcd_url: &str, port: u16) -> Vec<String> {
    let path = |p: &Path| p.display().to_string();
    vec![
        format!("--etcd-servers={etcd_url}"),
        format!("--cert-dir={}", dir.join("apiserver-certs").display()),
        format!("--tls-cert-file={}", path(&certs.serving_cert_file)),
        format!("--tls-private-key-file={}", path(&certs.serving_key_file)),
        format!("--client-ca-file={}", path(&certs.ca_file)),
        format!("--secure-port={port}"),
        "--bind-address=127.0.0.1".to_string(),
        "--advertise-address=127.0.0.1".to_string(),
        // Room for 65,000 Services: a /24 caps a cluster at 254, short of a benchmark's thousands of WebApps.
        "--service-cluster-ip-range=10.0.0.0/16".to_string(),
        "--allow-privileged=true".to_string(),
        "--authorization-mode=RBAC".to_string(),
        "--disable-admission-plugins=ServiceAccount".to_string(),
        format!("--service-account-issuer=https://127.0.0.1:{port}/"),
        format!(
            "--service-account-key-file={}",
            path(&certs.service_account_public_file)
        ),
        format!(
            "--service-account-signing-key-file={}",
            path(&certs.service_account_key_file)
        ),
    ]
}

fn kubeconfig_yaml(url: &str, certs: &Certificates) -> String {
    use base64::Engine;
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    format!(
        "apiVersion: v1
kind: Config
clusters:
- name: envtest
  cluster:
    server: {url}
    certificate-authority-data: {ca}
users:
- name: envtest-admin
  user:
    client-certificate-data: {cert}
    client-key-data: {key}
contexts:
- name: envtest
  context:
    cluster: envtest
    user: envtest-admin
    namespace: default
current-context: envtest
",
        ca = b64(&certs.ca_pem),
        cert = b64(&certs.admin_cert_pem),
        key = b64(&certs.admin_key_pem),
    )
}
