//! An operator's admission webhooks on the command line: registered in-process on the embedded cluster (no
//! flag needed), served over HTTPS for a real cluster with `--webhook-bind-address`.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use kube::Client;

use super::error::{CliError, Context as _};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;

use crate::admission::{Certificates, ClientConfig, ErasedWebhooks, WebhookServer};
use crate::conversion::{ErasedConversion, webhook_conversion};

/// The webhooks of an [`App`](super::App), one entry per kind, the conversions of its kinds with several
/// versions, and the name of their configurations.
#[derive(Clone, Default)]
pub(crate) struct Webhooks {
    pub(crate) kinds: Vec<Arc<dyn ErasedWebhooks>>,
    pub(crate) conversions: Vec<Arc<dyn ErasedConversion>>,
    /// `PLURAL-webhooks`, after the first CRD's plural.
    pub(crate) name: String,
}

/// The field manager that installs the webhook configurations.
const FIELD_MANAGER: &str = "operator-webhooks";

/// Serving the operator's admission webhooks.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct WebhookFlags {
    /// On a real cluster, serve the admission webhooks over HTTPS on this address: from outside the cluster,
    /// an address the API server reaches (e.g. `127.0.0.1:9443` for a local control plane), with webhook
    /// configurations installed that send the API server there; in a pod (`--in-cluster`), any address (the
    /// manifests' Deployment passes `0.0.0.0:9443`), the configurations being the manifests'. On the embedded
    /// cluster the webhooks are always served, in-process.
    #[arg(long, value_name = "HOST:PORT")]
    pub webhook_bind_address: Option<SocketAddr>,
    /// Read the serving certificate from `tls.crt`, `tls.key` and `ca.crt` in this directory (as cert-manager
    /// writes them) instead of generating one at start (required in a pod).
    #[arg(long, value_name = "DIR", requires = "webhook_bind_address")]
    pub webhook_cert_dir: Option<PathBuf>,
}

impl Webhooks {
    /// Whether there is anything to serve.
    pub(crate) fn is_empty(&self) -> bool {
        self.kinds.is_empty() && self.conversions.is_empty()
    }

    /// `crds` with those of kinds this operator converts pointed at `client_config` (trusting `ca_bundle`).
    pub(crate) fn point_crds(
        &self,
        crds: &[CustomResourceDefinition],
        client_config: &ClientConfig,
        ca_bundle: &str,
    ) -> Vec<CustomResourceDefinition> {
        crds.iter()
            .map(|crd| {
                let name = crd.metadata.name.as_deref().unwrap_or_default();
                match self.conversions.iter().find(|c| c.crd_name() == name) {
                    Some(c) => webhook_conversion(crd.clone(), client_config, &c.path(), ca_bundle),
                    None => crd.clone(),
                }
            })
            .collect()
    }
}

/// The webhooks as a server with `certs` (`None`: there are none).
fn webhook_server(webhooks: &Webhooks, certs: Certificates) -> Option<WebhookServer> {
    if webhooks.is_empty() {
        return None;
    }
    let server = webhooks
        .kinds
        .iter()
        .cloned()
        .fold(WebhookServer::new(certs), WebhookServer::erased);
    Some(
        webhooks
            .conversions
            .iter()
            .cloned()
            .fold(server, WebhookServer::conversion),
    )
}

/// In a pod with `--webhook-bind-address`: serves the operator's webhooks with the certificate in
/// `--webhook-cert-dir` (which cert-manager issues), installing nothing; the task serves until aborted.
pub(crate) async fn serve_in_cluster(
    hooks: &Webhooks,
    flags: &WebhookFlags,
) -> Result<Option<tokio::task::JoinHandle<()>>, CliError> {
    let Some(addr) = flags.webhook_bind_address else {
        return Ok(None);
    };
    let Some(dir) = &flags.webhook_cert_dir else {
        return Err(CliError::msg(
            "in a pod, --webhook-bind-address needs --webhook-cert-dir (the certificate the API server trusts)",
        ));
    };
    let certs = Certificates::from_dir(dir)
        .with_context(|| format!("cannot read the webhook certificates in {}", dir.display()))?;
    let Some(webhooks) = webhook_server(hooks, certs) else {
        return Ok(None);
    };
    let bound = webhooks
        .bind(addr)
        .await
        .with_context(|| format!("cannot serve the webhooks on {addr}"))?;
    tracing::info!(addr = %bound.local_addr(), "serving the admission webhooks");
    Ok(Some(tokio::spawn(bound.serve())))
}

/// The namespace of the Service the embedded cluster reaches the webhooks behind.
#[cfg(feature = "testing")]
const EMBEDDED_NAMESPACE: &str = "kube-system";

/// How the embedded cluster reaches the webhooks: the in-process Service named after them.
#[cfg(feature = "testing")]
pub(crate) fn embedded_client_config(hooks: &Webhooks) -> ClientConfig {
    ClientConfig::Service {
        namespace: EMBEDDED_NAMESPACE.into(),
        name: hooks.name.clone(),
        port: 443,
    }
}

/// On the embedded cluster: answers the operator's webhooks in-process, behind a Service of that name in
/// `kube-system`, and installs their configurations.
#[cfg(feature = "testing")]
pub(crate) async fn start_embedded(
    hooks: &Webhooks,
    server: &crate::testing::ApiServer,
    client: &Client,
) -> Result<(), CliError> {
    let certs = Certificates::generate(["localhost"]).context("cannot generate certificates")?;
    let Some(webhooks) = webhook_server(hooks, certs) else {
        return Ok(());
    };
    let name = hooks.name.clone();
    let answering = webhooks.clone();
    server.serve_webhook(
        EMBEDDED_NAMESPACE,
        &name,
        std::sync::Arc::new(move |path: &str, body: &[u8]| {
            answering.answer(path, body).unwrap_or_default()
        }),
    );
    let service = embedded_client_config(hooks);
    webhooks
        .install(client, &name, &service, FIELD_MANAGER)
        .await
        .context("cannot install the webhook configurations")?;
    tracing::info!(%name, "admission webhooks registered on the embedded cluster");
    Ok(())
}

/// Webhooks served for a real cluster: stop them with [`Serving::stop`], which also deletes their
/// configurations (the API server would otherwise refuse writes to a webhook that is gone).
pub(crate) struct Serving {
    task: tokio::task::JoinHandle<()>,
    server: WebhookServer,
    name: String,
    url: String,
}

impl Serving {
    /// `crds` with those of kinds the operator converts pointed at this server.
    pub(crate) fn point_crds(
        &self,
        hooks: &Webhooks,
        crds: &[CustomResourceDefinition],
    ) -> Vec<CustomResourceDefinition> {
        hooks.point_crds(
            crds,
            &ClientConfig::Url(self.url.clone()),
            self.server.certificates().ca_bundle(),
        )
    }

    /// Stops serving and deletes the configurations.
    pub(crate) async fn stop(self, client: &Client) {
        self.task.abort();
        if let Err(e) = self.server.uninstall(client, &self.name).await {
            tracing::warn!(error = %e, "cannot delete the webhook configurations");
        }
    }
}

/// On a real cluster with `--webhook-bind-address`: serves the operator's webhooks over HTTPS there and
/// installs configurations that send the API server to them, until [`Serving::stop`].
pub(crate) async fn start_on_cluster(
    hooks: &Webhooks,
    client: &Client,
    flags: &WebhookFlags,
) -> Result<Option<Serving>, CliError> {
    let Some(addr) = flags.webhook_bind_address.filter(|_| !hooks.is_empty()) else {
        return Ok(None);
    };
    if addr.ip().is_unspecified() {
        return Err(CliError::msg(format!(
            "--webhook-bind-address must be an address the API server can reach, not {addr}"
        )));
    }
    let certs = match &flags.webhook_cert_dir {
        Some(dir) => Certificates::from_dir(dir).with_context(|| {
            format!("cannot read the webhook certificates in {}", dir.display())
        })?,
        None => Certificates::generate([addr.ip().to_string()])
            .context("cannot generate certificates")?,
    };
    let Some(webhooks) = webhook_server(hooks, certs) else {
        return Ok(None);
    };
    let bound = webhooks
        .clone()
        .bind(addr)
        .await
        .with_context(|| format!("cannot serve the webhooks on {addr}"))?;
    let url = format!("https://{}", bound.local_addr());
    let serving = tokio::spawn(bound.serve());
    let name = hooks.name.clone();
    webhooks
        .install(
            client,
            &name,
            &ClientConfig::Url(url.clone()),
            FIELD_MANAGER,
        )
        .await
        .context("cannot install the webhook configurations")?;
    tracing::info!(%name, %url, "serving the webhooks");
    Ok(Some(Serving {
        task: serving,
        server: webhooks,
        name,
        url,
    }))
}
