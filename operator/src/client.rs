//! A `kube::Client` for operators: kube's own layers (base URI, retries of server errors, authentication,
//! extra headers, timeouts) over a connector with `TCP_NODELAY` on.
//!
//! kube's `Client::try_from(Config)` leaves Nagle's algorithm on. A write is a small request (headers, then a
//! body) on a kept-alive connection: with Nagle on, the body can wait for the ACK of the headers, which the
//! server delays (delayed ACK), adding tens of milliseconds to a request now and then. Controllers make many
//! such writes; this client sends every segment at once.

use hyper_timeout::TimeoutConnector;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use kube::client::ConfigExt;
use kube::client::retry::RetryPolicy;
use kube::{Client, Config};
use tower::retry::RetryLayer;
use tower::{BoxError, ServiceBuilder};

/// A client for `config`, like `Client::try_from(config)` but with `TCP_NODELAY` on every connection, and
/// every request (each retry too) counted in `rest_client_requests_total` ([`crate::metrics`]).
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// let config = kube::Config::infer().await?;
/// let client = kubewright::client::client(config)?;
/// # let _ = client; Ok(()) }
/// ```
pub fn client(config: Config) -> Result<Client, kube::Error> {
    let mut http = HttpConnector::new();
    http.enforce_http(false);
    http.set_nodelay(true);
    let https = config.rustls_https_connector_with_connector(http)?;
    let mut connector = TimeoutConnector::new(https);
    connector.set_connect_timeout(config.connect_timeout);
    connector.set_read_timeout(config.read_timeout);
    connector.set_write_timeout(config.write_timeout);
    let hyper_client: hyper_util::client::legacy::Client<_, kube::client::Body> =
        hyper_util::client::legacy::Client::builder(TokioExecutor::new()).build(connector);
    let retry = config
        .default_retry
        .then(|| RetryLayer::new(RetryPolicy::server_retry()));
    let service = ServiceBuilder::new()
        .layer(config.base_uri_layer())
        .option_layer(retry)
        .option_layer(config.auth_layer()?)
        .layer(config.extra_headers_layer()?)
        .map_err(BoxError::from)
        .layer_fn(|inner| Counted { inner })
        .service(hyper_client);
    Ok(Client::new(service, config.default_namespace))
}

/// Counts each request by method and response code (`<error>` when none came) into the process's metrics.
#[derive(Clone)]
struct Counted<S> {
    inner: S,
}

impl<S, B, R> tower::Service<http::Request<B>> for Counted<S>
where
    S: tower::Service<http::Request<B>, Response = http::Response<R>>,
    S::Future: Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = futures::future::BoxFuture<'static, Result<S::Response, S::Error>>;

    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let method = request.method().to_string();
        let response = self.inner.call(request);
        Box::pin(async move {
            let response = response.await;
            let metrics = crate::metrics::Metrics::global();
            match &response {
                Ok(r) => metrics.request(&method, &r.status().as_u16().to_string()),
                Err(_) => metrics.request(&method, "<error>"),
            }
            response
        })
    }
}
