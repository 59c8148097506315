//! The embedded in-memory cluster on the command line (the default when no cluster is named): the CRDs and
//! the sample objects installed, served to kubectl with `--listen`, the operator run on it.

use std::future::Future;
use std::path::PathBuf;

use kube::Resource;
use kube::api::{ApiResource, DynamicObject};
#[cfg(feature = "testing")]
use kube::{
    Client,
    api::{Api, PostParams},
};
use serde::Serialize;

use super::error::{CliError, Context as _};

/// Options of a run on the embedded cluster.
#[derive(Debug, Clone, Default, PartialEq, Eq, clap::Args)]
pub struct EmbeddedArgs {
    /// Serve the embedded cluster over HTTP on this address, e.g. 127.0.0.1:8001.
    #[arg(long)]
    pub listen: Option<std::net::SocketAddr>,
    /// Write a kubeconfig for the served embedded cluster to this file (needs --listen).
    #[arg(long, requires = "listen")]
    pub write_kubeconfig: Option<PathBuf>,
}

/// An object created on the embedded cluster before the operator starts: its kind, and the object as JSON.
#[derive(Debug, Clone)]
#[cfg_attr(not(feature = "testing"), allow(dead_code))]
pub(crate) struct Sample {
    resource: ApiResource,
    namespaced: bool,
    object: DynamicObject,
}

impl Sample {
    /// `object`, which serializes as a `K`.
    pub(crate) fn of<K>(object: &K) -> Result<Self, CliError>
    where
        K: Resource<DynamicType = ()> + Serialize,
    {
        let resource = ApiResource::erase::<K>(&());
        let mut json = serde_json::to_value(object)
            .with_context(|| format!("cannot serialize the sample {}", resource.kind))?;
        if let Some(map) = json.as_object_mut() {
            map.insert("apiVersion".into(), resource.api_version.clone().into());
            map.insert("kind".into(), resource.kind.clone().into());
        }
        let object = serde_json::from_value(json)
            .with_context(|| format!("the sample {} is not an object", resource.kind))?;
        Ok(Self {
            resource,
            namespaced: crate::cache::is_namespaced::<K>(),
            object,
        })
    }

    /// Creates the object (in its namespace, else `default`).
    #[cfg(feature = "testing")]
    async fn create(&self, client: &Client) -> Result<(), CliError> {
        let name = self.object.metadata.name.clone().unwrap_or_default();
        let api: Api<DynamicObject> = if self.namespaced {
            let ns = self
                .object
                .metadata
                .namespace
                .as_deref()
                .unwrap_or("default");
            Api::namespaced_with(client.clone(), ns, &self.resource)
        } else {
            Api::all_with(client.clone(), &self.resource)
        };
        api.create(&PostParams::default(), &self.object)
            .await
            .with_context(|| format!("cannot create the sample {} {name}", self.resource.kind))?;
        tracing::info!(kind = %self.resource.kind, %name, "created a sample object");
        Ok(())
    }
}

/// Creates `samples` in order.
#[cfg(feature = "testing")]
pub(crate) async fn create_samples(client: &Client, samples: &[Sample]) -> Result<(), CliError> {
    for sample in samples {
        sample.create(client).await?;
    }
    Ok(())
}

/// Starts the embedded in-memory cluster (served over HTTP with `--listen`), installs the CRDs, the webhooks
/// and the samples, and runs the operator on it until `shutdown`, with the app's observers logging.
#[cfg(feature = "testing")]
pub(crate) async fn run(
    app: super::App,
    serve: &EmbeddedArgs,
    flags: &super::RunFlags,
    shutdown: impl Future<Output = ()> + Send,
) -> Result<(), CliError> {
    use std::time::Duration;
    let server = crate::testing::ApiServer::new();
    let serving = match serve.listen {
        Some(addr) => Some(
            server
                .serve(addr)
                .await
                .with_context(|| format!("cannot listen on {addr}"))?,
        ),
        None => None,
    };
    let client = install(&app, &server).await?;
    if let (Some(serving), Some(path)) = (&serving, &serve.write_kubeconfig) {
        serving
            .write_kubeconfig(path)
            .with_context(|| format!("cannot write the kubeconfig to {}", path.display()))?;
        tracing::info!(
            path = %path.display(),
            "wrote kubeconfig; try: kubectl --kubeconfig {} {}",
            path.display(),
            app.hint(),
        );
    }
    match &serving {
        Some(serving) => {
            tracing::info!(url = %serving.url(), "serving the embedded cluster; press Ctrl-C to stop")
        }
        None => tracing::info!(
            "running on the embedded cluster; press Ctrl-C to stop (--listen ADDR serves it to kubectl)"
        ),
    }
    let observers: Vec<_> = app
        .observers
        .iter()
        .map(|observe| tokio::spawn(observe(client.clone())))
        .collect();
    let operator = app.operator(flags.operator(client));
    let ran = super::run_operator(operator, flags, shutdown).await;
    for observer in observers {
        observer.abort();
        let _ = observer.await;
    }
    if let Some(serving) = serving {
        serving.shutdown(Duration::from_secs(5)).await;
    }
    ran
}

/// Installs the app's CRDs (those of other projects too), its webhooks and its samples on `server`: the client
/// of the cluster made ready.
#[cfg(feature = "testing")]
fn install<'a>(
    app: &'a super::App,
    server: &'a crate::testing::ApiServer,
) -> impl Future<Output = Result<Client, CliError>> + Send + 'a {
    // The fields, not the app: a reference to the app (whose configuration is not `Sync`) held across an await
    // would make the future not `Send`.
    let (webhooks, crds, embedded_crds, samples) =
        (&app.webhooks, &app.crds, &app.embedded_crds, &app.samples);
    async move {
        let client = server.client();
        let config = super::webhooks::embedded_client_config(webhooks);
        for crd in webhooks.point_crds(crds, &config, "") {
            super::ensure_crd(&client, crd).await?;
        }
        for crd in embedded_crds {
            super::ensure_crd(&client, crd.clone()).await?;
        }
        super::webhooks::start_embedded(webhooks, server, &client).await?;
        create_samples(&client, samples).await?;
        Ok(client)
    }
}

/// `plan --embedded`: a new embedded cluster with the CRDs and the samples, and the plan of the operator's first
/// passes over them ([`App::run_plan`](super::App::run_plan)).
#[cfg(feature = "testing")]
pub(crate) async fn plan(
    app: super::App,
    flags: &super::RunFlags,
    selector: Option<crate::plan::ParentSelector>,
) -> Result<(), CliError> {
    let server = crate::testing::ApiServer::new();
    let client = install(&app, &server).await?;
    app.run_plan(client, flags, selector).await
}

/// A build without the embedded cluster runs `plan` only against a real cluster.
#[cfg(not(feature = "testing"))]
pub(crate) async fn plan(
    _app: super::App,
    _flags: &super::RunFlags,
    _selector: Option<crate::plan::ParentSelector>,
) -> Result<(), CliError> {
    Err(CliError::msg(
        "this binary was built without the embedded cluster (the `kubewright` crate's `testing` feature): plan against a cluster with --kubeconfig FILE, KUBECONFIG or --in-cluster",
    ))
}

/// A build without the embedded cluster (the `kubewright` crate's feature `testing` off) runs only against a
/// real cluster.
#[cfg(not(feature = "testing"))]
pub(crate) async fn run(
    _app: super::App,
    _serve: &EmbeddedArgs,
    _flags: &super::RunFlags,
    _shutdown: impl Future<Output = ()> + Send,
) -> Result<(), CliError> {
    Err(CliError::msg(
        "this binary was built without the embedded cluster (the `kubewright` crate's `testing` feature): run it against a cluster with --kubeconfig FILE, KUBECONFIG or --in-cluster",
    ))
}
