//! The HTTPS server of the webhooks: TLS from [`Certificates`], HTTP/1.1, one route per kind and hook.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::service::service_fn;
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use kube::Resource;
use kube::api::{Api, Patch, PatchParams};
use serde::Serialize;
use serde::de::DeserializeOwned;

use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use super::config::{self, ClientConfig, Scope, WebhookSpec, path};
use super::review::{ErasedWebhooks, Hook};
use super::{CertificateError, Certificates, Webhooks};
use crate::conversion::ErasedConversion;

/// The largest AdmissionReview read (kube-apiserver's objects are at most 3 MiB, plus the old object).
const MAX_BODY: usize = 8 << 20;

/// Why the webhook server could not start or install its configurations.
#[derive(Debug, thiserror::Error)]
pub enum WebhookServerError {
    /// The certificates do not make a TLS configuration.
    #[error(transparent)]
    Certificates(#[from] CertificateError),
    /// The address could not be bound.
    #[error("binding the webhook server to {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The error.
        source: std::io::Error,
    },
    /// Writing or deleting a webhook configuration failed.
    #[error("writing the webhook configuration {name}: {source}")]
    Install {
        /// The configuration's name.
        name: String,
        /// The API error.
        source: kube::Error,
    },
}

/// The webhooks of every kind an operator admits (and the conversions of every kind with several versions),
/// with the certificates they are served with.
#[derive(Clone)]
pub struct WebhookServer {
    hooks: Vec<Arc<dyn ErasedWebhooks>>,
    conversions: Vec<Arc<dyn ErasedConversion>>,
    certs: Certificates,
    namespace_selector: Option<LabelSelector>,
}

impl std::fmt::Debug for WebhookServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebhookServer")
            .field("kinds", &self.hooks.len())
            .field("conversions", &self.conversions.len())
            .finish_non_exhaustive()
    }
}

impl WebhookServer {
    /// A server with no kinds yet, serving with `certs`.
    pub fn new(certs: Certificates) -> Self {
        WebhookServer {
            hooks: Vec::new(),
            conversions: Vec::new(),
            certs,
            namespace_selector: None,
        }
    }

    /// Sends the API server only the requests in namespaces `selector` picks (every webhook's
    /// `namespaceSelector`); by default, every namespace.
    #[must_use]
    pub fn namespace_selector(mut self, selector: LabelSelector) -> Self {
        self.namespace_selector = Some(selector);
        self
    }

    /// The validating configuration named `name` (`None` when no kind validates).
    pub fn validating_configuration(
        &self,
        name: &str,
        client_config: &ClientConfig,
    ) -> Option<ValidatingWebhookConfiguration> {
        config::validating(
            name,
            &self.specs(),
            client_config,
            self.certs.ca_bundle(),
            &self.scope(),
        )
    }

    /// The mutating configuration named `name` (`None` when no kind defaults).
    pub fn mutating_configuration(
        &self,
        name: &str,
        client_config: &ClientConfig,
    ) -> Option<MutatingWebhookConfiguration> {
        config::mutating(
            name,
            &self.specs(),
            client_config,
            self.certs.ca_bundle(),
            &self.scope(),
        )
    }

    fn specs(&self) -> Vec<WebhookSpec> {
        self.hooks
            .iter()
            .map(|w| WebhookSpec::of(w.as_ref()))
            .collect()
    }

    /// Adds webhooks already erased (e.g. [`Webhooks`] of several kinds collected by an application).
    #[must_use]
    pub fn erased(mut self, hooks: Arc<dyn ErasedWebhooks>) -> Self {
        self.hooks.push(hooks);
        self
    }

    fn scope(&self) -> Scope<'_> {
        Scope {
            namespace_selector: self.namespace_selector.as_ref(),
        }
    }

    /// Adds the webhooks of kind `K`.
    #[must_use]
    pub fn kind<K>(mut self, hooks: Webhooks<K>) -> Self
    where
        K: Resource<DynamicType = ()>
            + Clone
            + Serialize
            + DeserializeOwned
            + Send
            + Sync
            + 'static,
    {
        self.hooks.push(Arc::new(hooks));
        self
    }

    /// Answers the ConversionReviews of a kind with several versions at its
    /// [`path`](ErasedConversion::path).
    #[must_use]
    pub fn conversion(mut self, conversion: Arc<dyn ErasedConversion>) -> Self {
        self.conversions.push(conversion);
        self
    }

    /// The conversions served.
    pub fn conversions(&self) -> &[Arc<dyn ErasedConversion>] {
        &self.conversions
    }

    /// The declared kinds' webhooks.
    pub fn hooks(&self) -> &[Arc<dyn ErasedWebhooks>] {
        &self.hooks
    }

    /// The certificates served.
    pub fn certificates(&self) -> &Certificates {
        &self.certs
    }

    /// Creates or updates (server-side apply, as `field_manager`) the validating and mutating
    /// configurations named `name` that send the API server to `client_config`.
    pub async fn install(
        &self,
        client: &kube::Client,
        name: &str,
        client_config: &ClientConfig,
        field_manager: &str,
    ) -> Result<(), WebhookServerError> {
        let params = PatchParams::apply(field_manager).force();
        if let Some(v) = self.validating_configuration(name, client_config) {
            let api: Api<ValidatingWebhookConfiguration> = Api::all(client.clone());
            api.patch(name, &params, &Patch::Apply(&v))
                .await
                .map_err(|source| WebhookServerError::Install {
                    name: name.to_string(),
                    source,
                })?;
        }
        if let Some(m) = self.mutating_configuration(name, client_config) {
            let api: Api<MutatingWebhookConfiguration> = Api::all(client.clone());
            api.patch(name, &params, &Patch::Apply(&m))
                .await
                .map_err(|source| WebhookServerError::Install {
                    name: name.to_string(),
                    source,
                })?;
        }
        Ok(())
    }

    /// Deletes the configurations named `name` (what an operator serving its webhooks from outside the
    /// cluster does when it stops, so that the API server does not refuse writes to a webhook that is gone).
    /// Missing configurations are not an error.
    pub async fn uninstall(
        &self,
        client: &kube::Client,
        name: &str,
    ) -> Result<(), WebhookServerError> {
        let params = kube::api::DeleteParams::default();
        let gone = |r: Result<_, kube::Error>| match r {
            Ok(_) => Ok(()),
            Err(kube::Error::Api(s)) if s.code == 404 => Ok(()),
            Err(source) => Err(WebhookServerError::Install {
                name: name.to_string(),
                source,
            }),
        };
        gone(
            Api::<ValidatingWebhookConfiguration>::all(client.clone())
                .delete(name, &params)
                .await
                .map(|_| ()),
        )?;
        gone(
            Api::<MutatingWebhookConfiguration>::all(client.clone())
                .delete(name, &params)
                .await
                .map(|_| ()),
        )
    }

    /// Answers one AdmissionReview or ConversionReview (JSON) sent to `path`, as the server does; `None`
    /// when no webhook is served there.
    pub fn answer(&self, path: &str, body: &[u8]) -> Option<Vec<u8>> {
        self.route(path).map(|route| route.answer(body))
    }

    fn route(&self, p: &str) -> Option<Route<'_>> {
        if let Some(c) = self.conversions.iter().find(|c| c.path() == p) {
            return Some(Route::Convert(c.as_ref()));
        }
        route(&self.hooks, p).map(|(hook, w)| Route::Admit(hook, w))
    }

    /// Binds `addr` (port 0 picks a free one).
    pub async fn bind(self, addr: SocketAddr) -> Result<BoundWebhookServer, WebhookServerError> {
        let config = self.certs.server_config()?;
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|source| WebhookServerError::Bind { addr, source })?;
        let local = listener
            .local_addr()
            .map_err(|source| WebhookServerError::Bind { addr, source })?;
        Ok(BoundWebhookServer {
            listener,
            local,
            acceptor: tokio_rustls::TlsAcceptor::from(config),
            server: Arc::new(self),
        })
    }
}

/// A webhook server bound to its address, ready to serve.
pub struct BoundWebhookServer {
    listener: tokio::net::TcpListener,
    local: SocketAddr,
    acceptor: tokio_rustls::TlsAcceptor,
    server: Arc<WebhookServer>,
}

impl std::fmt::Debug for BoundWebhookServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BoundWebhookServer")
            .field("local", &self.local)
            .finish_non_exhaustive()
    }
}

impl BoundWebhookServer {
    /// The address bound.
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// Serves until the returned future is dropped: one task per connection.
    pub async fn serve(self) {
        loop {
            let (stream, peer) = match self.listener.accept().await {
                Ok(accepted) => accepted,
                Err(e) => {
                    tracing::warn!(error = %e, "webhook connection failed");
                    continue;
                }
            };
            let acceptor = self.acceptor.clone();
            let server = self.server.clone();
            tokio::spawn(async move {
                let tls =
                    match tokio::time::timeout(Duration::from_secs(10), acceptor.accept(stream))
                        .await
                    {
                        Ok(Ok(tls)) => tls,
                        Ok(Err(e)) => {
                            tracing::debug!(%peer, error = %e, "webhook TLS handshake failed");
                            return;
                        }
                        Err(_) => {
                            tracing::debug!(%peer, "webhook TLS handshake timed out");
                            return;
                        }
                    };
                let service = service_fn(move |request: Request<hyper::body::Incoming>| {
                    let server = server.clone();
                    async move { Ok::<_, Infallible>(handle(&server, request).await) }
                });
                if let Err(e) = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tls), service)
                    .await
                {
                    tracing::debug!(%peer, error = %e, "webhook connection ended");
                }
            });
        }
    }
}

/// Where a request path leads.
enum Route<'s> {
    Admit(Hook, &'s dyn ErasedWebhooks),
    Convert(&'s dyn ErasedConversion),
}

impl Route<'_> {
    fn answer(&self, body: &[u8]) -> Vec<u8> {
        match self {
            Route::Admit(hook, w) => w.review(*hook, body),
            Route::Convert(c) => c.review(body),
        }
    }
}

fn route<'h>(
    hooks: &'h [Arc<dyn ErasedWebhooks>],
    p: &str,
) -> Option<(Hook, &'h dyn ErasedWebhooks)> {
    hooks.iter().find_map(|w| {
        let (group, version, plural) = (w.group(), w.version(), w.plural());
        if w.validating().is_some() && p == path(Hook::Validate, &group, &version, &plural) {
            Some((Hook::Validate, w.as_ref()))
        } else if w.mutating() && p == path(Hook::Mutate, &group, &version, &plural) {
            Some((Hook::Mutate, w.as_ref()))
        } else {
            None
        }
    })
}

async fn handle(
    server: &WebhookServer,
    request: Request<hyper::body::Incoming>,
) -> Response<Full<Bytes>> {
    let reply = |status: StatusCode, body: Vec<u8>| {
        let mut r = Response::new(Full::new(Bytes::from(body)));
        *r.status_mut() = status;
        r.headers_mut().insert(
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_static("application/json"),
        );
        r
    };
    let path = request.uri().path().to_string();
    let Some(route) = server.route(&path) else {
        return reply(StatusCode::NOT_FOUND, b"{}".to_vec());
    };
    if request.method() != Method::POST {
        return reply(StatusCode::METHOD_NOT_ALLOWED, b"{}".to_vec());
    }
    let body = match Limited::new(request.into_body(), MAX_BODY).collect().await {
        Ok(b) => b.to_bytes(),
        Err(e) => {
            tracing::warn!(%path, error = %e, "reading a review failed");
            return reply(StatusCode::BAD_REQUEST, b"{}".to_vec());
        }
    };
    let answer = route.answer(&body);
    tracing::debug!(%path, "answered a review");
    reply(StatusCode::OK, answer)
}
