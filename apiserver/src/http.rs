//! The HTTP front: serving an [`ApiServer`] on a TCP port, and the kubeconfig that points kubectl at it.
//!
//! It sits above the service it serves and nothing in the service depends on it.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::server::ApiServer;

/// A running HTTP endpoint for an [`ApiServer`]. Stop it with [`Serving::shutdown`]; dropping it stops it too.
#[derive(Debug)]
pub struct Serving {
    addr: SocketAddr,
    stop: watch::Sender<bool>,
    task: Option<JoinHandle<()>>,
    server: ApiServer,
}

impl Serving {
    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The server's URL, e.g. `http://127.0.0.1:41234`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// A kubeconfig (YAML) that kubectl and `kube::Config` accept, with context `embedded`.
    pub fn kubeconfig(&self) -> String {
        kubeconfig(&self.url())
    }

    /// Writes [`Serving::kubeconfig`] to a file.
    pub fn write_kubeconfig(&self, path: impl AsRef<Path>) -> std::io::Result<()> {
        std::fs::write(path, self.kubeconfig())
    }

    /// Stops accepting connections, ends open watches, and waits up to `deadline` for requests in flight.
    pub async fn shutdown(mut self, deadline: Duration) {
        let _ = self.stop.send(true);
        self.server.drop_watches();
        if let Some(task) = self.task.take() {
            let abort = task.abort_handle();
            if tokio::time::timeout(deadline, task).await.is_err() {
                abort.abort();
            }
        }
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

/// A kubeconfig for an HTTP server URL.
pub fn kubeconfig(url: &str) -> String {
    format!(
        "apiVersion: v1
kind: Config
clusters:
- name: embedded
  cluster:
    server: {url}
contexts:
- name: embedded
  context:
    cluster: embedded
    user: embedded
    namespace: default
current-context: embedded
users:
- name: embedded
  user: {{}}
preferences: {{}}
"
    )
}

impl ApiServer {
    /// Serves the API over HTTP on `addr` (e.g. `127.0.0.1:0`) for kubectl and other clients.
    pub async fn serve(&self, addr: SocketAddr) -> std::io::Result<Serving> {
        serve(self.clone(), addr).await
    }
}

async fn serve(server: ApiServer, addr: SocketAddr) -> std::io::Result<Serving> {
    let listener = TcpListener::bind(addr).await?;
    let addr = listener.local_addr()?;
    let (stop, mut stopped) = watch::channel(false);
    let srv = server.clone();
    let task = tokio::spawn(async move {
        let graceful = hyper_util::server::graceful::GracefulShutdown::new();
        loop {
            tokio::select! {
                accepted = listener.accept() => {
                    let Ok((stream, _)) = accepted else { continue };
                    let srv = srv.clone();
                    let service = hyper::service::service_fn(move |req: ::http::Request<Incoming>| {
                        let mut srv = srv.clone();
                        async move {
                            Ok::<_, Infallible>(tower::Service::call(&mut srv, req).await.unwrap_or_else(|e| match e {}))
                        }
                    });
                    let conn = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service);
                    let conn = graceful.watch(conn);
                    tokio::spawn(async move {
                        if let Err(e) = conn.await {
                            tracing::debug!(error = %e, "connection ended with an error");
                        }
                    });
                }
                _ = stopped.changed() => break,
            }
        }
        graceful.shutdown().await;
    });
    tracing::info!(%addr, "in-memory API server listening");
    Ok(Serving {
        addr,
        stop,
        task: Some(task),
        server,
    })
}
