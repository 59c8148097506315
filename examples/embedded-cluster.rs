//! Serves an empty in-memory Kubernetes cluster over HTTP until interrupted.
//!
//! ```text
//! cargo run --example embedded-cluster -- --listen 127.0.0.1:8001 --write-kubeconfig /tmp/embedded.kubeconfig
//! kubectl --kubeconfig /tmp/embedded.kubeconfig get namespaces
//! ```

use std::time::Duration;

use anyhow::Context;
use clap::Parser;
use kubewright::testing::ApiServer;

/// Serve an empty in-memory Kubernetes API server.
#[derive(Debug, Parser)]
struct Args {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8001")]
    listen: std::net::SocketAddr,
    /// Write a kubeconfig for kubectl and kube::Config to this file.
    #[arg(long)]
    write_kubeconfig: Option<std::path::PathBuf>,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    examples::init_tracing();
    let args = Args::parse();
    let server = ApiServer::new();
    let serving = server
        .serve(args.listen)
        .await
        .with_context(|| format!("cannot listen on {}", args.listen))?;
    if let Some(path) = &args.write_kubeconfig {
        serving
            .write_kubeconfig(path)
            .with_context(|| format!("cannot write the kubeconfig to {}", path.display()))?;
        tracing::info!(path = %path.display(), "wrote kubeconfig");
    }
    tracing::info!(url = %serving.url(), "serving an empty cluster; press Ctrl-C to stop");
    kubewright::shutdown_signal().await;
    tracing::info!("shutting down");
    serving.shutdown(Duration::from_secs(5)).await;
    Ok(())
}
