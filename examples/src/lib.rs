//! Shared helpers for the runnable examples (`cargo run --example NAME`).

use std::path::PathBuf;

pub mod cli;
pub mod database;
pub mod teams;
pub mod tenants;
pub mod webapp;
pub mod webapp_derive;

/// Options every example that can run on the embedded cluster accepts.
#[derive(Debug, Clone, clap::Args)]
pub struct EmbeddedArgs {
    /// Serve the embedded cluster over HTTP on this address, e.g. 127.0.0.1:8001.
    #[arg(long)]
    pub listen: Option<std::net::SocketAddr>,
    /// Write a kubeconfig for the served embedded cluster to this file (needs --listen).
    #[arg(long, requires = "listen")]
    pub write_kubeconfig: Option<PathBuf>,
}

/// Installs a `tracing` subscriber that honours `RUST_LOG` (default `info`).
pub fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt().with_env_filter(filter).try_init();
}

/// Resolves when the process receives Ctrl-C (SIGINT) or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(e) = tokio::signal::ctrl_c().await {
            tracing::warn!(error = %e, "cannot listen for Ctrl-C");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
}
