//! `/metrics` over HTTPS for the callers the cluster allows, as kubebuilder's scaffolds serve it
//! (`--metrics-secure`): each request's bearer token is reviewed by the API server (a `TokenReview`), and its
//! user must be allowed to `get` the non-resource URL `/metrics` (a `SubjectAccessReview`). No token or one the
//! API server does not accept: 401; a user without the permission: 403. A token's answer is kept for
//! [`REVIEW_TTL`], so a scrape every few seconds costs the API server two requests per token and period.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures::future::BoxFuture;
use http_body_util::Full;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use k8s_openapi::api::authentication::v1::{TokenReview, TokenReviewSpec};
use k8s_openapi::api::authorization::v1::{
    NonResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use kube::api::{Api, PostParams};

use crate::admission::Certificates;
use crate::metrics::{Metrics, MetricsError};

/// How long a token's verdict is kept.
pub const REVIEW_TTL: Duration = Duration::from_secs(10);

/// What the API server said of a token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    /// Not authenticated.
    Unauthenticated,
    /// Authenticated, not allowed to get /metrics.
    Forbidden,
    /// Allowed.
    Allowed,
}

/// The reviews of tokens, kept for [`REVIEW_TTL`].
struct Reviewer {
    client: kube::Client,
    cache: Mutex<HashMap<String, (Instant, Verdict)>>,
}

impl Reviewer {
    async fn verdict(&self, token: &str) -> Verdict {
        if let Ok(cache) = self.cache.lock()
            && let Some((at, v)) = cache.get(token)
            && at.elapsed() < REVIEW_TTL
        {
            return *v;
        }
        let verdict = match self.review(token).await {
            Ok(v) => v,
            Err(e) => {
                // Not cached: the next scrape asks again.
                tracing::warn!(error = %e, "cannot review a metrics scraper's token");
                return Verdict::Unauthenticated;
            }
        };
        if let Ok(mut cache) = self.cache.lock() {
            cache.retain(|_, (at, _)| at.elapsed() < REVIEW_TTL);
            cache.insert(token.to_string(), (Instant::now(), verdict));
        }
        verdict
    }

    // `.into()` converts to `Option<String>` before Kubernetes 1.36 and to `String` itself from 1.36 on.
    #[allow(clippy::useless_conversion)]
    async fn review(&self, token: &str) -> Result<Verdict, kube::Error> {
        let review = TokenReview {
            spec: TokenReviewSpec {
                token: token.to_string().into(),
                ..Default::default()
            },
            ..Default::default()
        };
        let reviewed = Api::<TokenReview>::all(self.client.clone())
            .create(&PostParams::default(), &review)
            .await?;
        let Some(status) = reviewed.status.filter(|s| s.authenticated == Some(true)) else {
            return Ok(Verdict::Unauthenticated);
        };
        let user = status.user.unwrap_or_default();
        let access = SubjectAccessReview {
            spec: SubjectAccessReviewSpec {
                user: user.username,
                groups: user.groups,
                uid: user.uid,
                extra: user.extra,
                non_resource_attributes: Some(NonResourceAttributes {
                    path: Some("/metrics".into()),
                    verb: Some("get".into()),
                }),
                ..Default::default()
            },
            ..Default::default()
        };
        let answered = Api::<SubjectAccessReview>::all(self.client.clone())
            .create(&PostParams::default(), &access)
            .await?;
        Ok(if answered.status.is_some_and(|s| s.allowed) {
            Verdict::Allowed
        } else {
            Verdict::Forbidden
        })
    }
}

/// Binds `addr` and returns the HTTPS server of `/metrics` with `certs` (read again when their files change,
/// for certificates from a directory), admitting the callers `client`'s API server allows; to spawn.
pub async fn serve_secure(
    addr: SocketAddr,
    metrics: Metrics,
    client: kube::Client,
    certs: Certificates,
) -> Result<BoxFuture<'static, ()>, MetricsError> {
    let config = certs.server_config().map_err(|e| MetricsError::Bind {
        addr,
        source: std::io::Error::other(e.to_string()),
    })?;
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|source| MetricsError::Bind { addr, source })?;
    tracing::info!(addr = %addr, "serving metrics over HTTPS (/metrics, authenticated and authorized)");
    let acceptor = tokio_rustls::TlsAcceptor::from(config);
    let reviewer = Arc::new(Reviewer {
        client,
        cache: Mutex::default(),
    });
    Ok(Box::pin(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let (acceptor, reviewer, metrics) =
                (acceptor.clone(), reviewer.clone(), metrics.clone());
            tokio::spawn(async move {
                let Ok(Ok(tls)) =
                    tokio::time::timeout(Duration::from_secs(10), acceptor.accept(stream)).await
                else {
                    return;
                };
                let service = service_fn(move |request: Request<hyper::body::Incoming>| {
                    let (reviewer, metrics) = (reviewer.clone(), metrics.clone());
                    async move {
                        Ok::<_, std::convert::Infallible>(
                            answer(&reviewer, &metrics, &request).await,
                        )
                    }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tls), service)
                    .await;
            });
        }
    }))
}

async fn answer(
    reviewer: &Reviewer,
    metrics: &Metrics,
    request: &Request<hyper::body::Incoming>,
) -> Response<Full<Bytes>> {
    let token = request
        .headers()
        .get(hyper::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
        .filter(|t| !t.is_empty());
    let refused = |status: StatusCode, text: &'static str| {
        let mut r = Response::new(Full::new(Bytes::from_static(text.as_bytes())));
        *r.status_mut() = status;
        r
    };
    let Some(token) = token else {
        return refused(StatusCode::UNAUTHORIZED, "Unauthorized");
    };
    match reviewer.verdict(token).await {
        Verdict::Unauthenticated => refused(StatusCode::UNAUTHORIZED, "Unauthorized"),
        Verdict::Forbidden => refused(StatusCode::FORBIDDEN, "Forbidden"),
        Verdict::Allowed => crate::metrics::answer(metrics, request.uri().path()),
    }
}
