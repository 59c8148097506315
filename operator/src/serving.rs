//! Serving small HTTP endpoints (the health probes, the metrics): one task per connection, HTTP/1, answers
//! computed from the request's path alone.

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use futures::future::BoxFuture;
use http_body_util::Full;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;

/// Accepts connections on `listener` until dropped, answering each request with `answer(path)`; `what`
/// names the endpoint in logs.
pub(crate) fn serve(
    listener: tokio::net::TcpListener,
    what: &'static str,
    answer: impl Fn(&str) -> Response<Full<Bytes>> + Send + Sync + 'static,
) -> BoxFuture<'static, ()> {
    let answer = Arc::new(answer);
    Box::pin(async move {
        loop {
            let (stream, _) = match listener.accept().await {
                Ok(accepted) => accepted,
                Err(e) => {
                    tracing::warn!(error = %e, "{what} connection failed");
                    continue;
                }
            };
            let answer = answer.clone();
            tokio::spawn(async move {
                let service = service_fn(move |request: Request<hyper::body::Incoming>| {
                    let answer = answer.clone();
                    async move { Ok::<_, Infallible>(answer(request.uri().path())) }
                });
                if let Err(e) = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await
                {
                    tracing::debug!(error = %e, "{what} connection ended");
                }
            });
        }
    })
}
