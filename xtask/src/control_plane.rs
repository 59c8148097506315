//! `cargo xtask control-plane`: a real control plane for development, until Ctrl-C.

use std::path::PathBuf;

use anyhow::Context;
use kubewright_envtest::{Assets, ClusterAssets, ClusterOptions, ControlPlane};

/// Options of `cargo xtask control-plane`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Write the admin kubeconfig here (for kubectl and the examples' --kubeconfig).
    #[arg(long)]
    write_kubeconfig: Option<PathBuf>,
    /// kube-apiserver's --secure-port (default: a free port).
    #[arg(long)]
    port: Option<u16>,
    /// etcd's client port (default: a free port).
    #[arg(long)]
    etcd_port: Option<u16>,
    /// Also run kube-controller-manager, kube-scheduler and kwok with simulated nodes: a whole cluster
    /// without containers.
    #[arg(long)]
    cluster: bool,
    /// How many simulated nodes a --cluster has.
    #[arg(long, default_value_t = 3, requires = "cluster")]
    nodes: usize,
}

/// Finds (or builds) the binaries, starts them, waits for Ctrl-C or SIGTERM, and stops them.
pub fn run(args: Args) -> anyhow::Result<()> {
    let located = Assets::locate().and_then(|assets| {
        if args.cluster {
            ClusterAssets::beside(&assets)?;
        }
        Ok(assets)
    });
    let assets = match located {
        Ok(assets) => assets,
        Err(e) if e.is_no_assets() => {
            eprintln!("xtask control-plane: {e}; building them now");
            super::build::run(&super::build::Args::default())?
        }
        Err(e) => return Err(e.into()),
    };
    let runtime = tokio::runtime::Runtime::new().context("starting a tokio runtime")?;
    runtime.block_on(async move {
        let mut builder = ControlPlane::builder().assets(assets);
        if let Some(port) = args.port {
            builder = builder.apiserver_port(port);
        }
        if let Some(port) = args.etcd_port {
            builder = builder.etcd_port(port);
        }
        if args.cluster {
            builder = builder.cluster_options(ClusterOptions {
                nodes: args.nodes,
                ..ClusterOptions::default()
            });
        }
        let cp = builder.start().await?;
        let times = cp.startup_times();
        eprintln!(
            "xtask control-plane: kube-apiserver {} at {} (etcd ready in {:.1?}, kube-apiserver in {:.1?})",
            cp.assets().kubernetes_version,
            cp.url(),
            times.etcd,
            times.apiserver
        );
        if let Some(cluster) = times.cluster {
            eprintln!(
                "xtask control-plane: cluster ready: kube-controller-manager in {:.1?}, kube-scheduler in {:.1?}, \
                 {} kwok nodes Ready in {:.1?}",
                cluster.controller_manager, cluster.scheduler, args.nodes, cluster.nodes
            );
        }
        for log in cp.logs() {
            eprintln!("xtask control-plane: log {}", log.display());
        }
        if let Some(path) = &args.write_kubeconfig {
            cp.write_kubeconfig(path)?;
            eprintln!(
                "xtask control-plane: wrote {}; try: kubectl --kubeconfig {} get namespaces",
                path.display(),
                path.display()
            );
        }
        eprintln!("xtask control-plane: press Ctrl-C to stop");
        shutdown_signal().await;
        eprintln!("xtask control-plane: stopping");
        cp.stop();
        anyhow::Ok(())
    })
}

/// Waits for Ctrl-C or SIGTERM.
pub(crate) async fn shutdown_signal() {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).ok();
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = async {
            match term.as_mut() {
                Some(term) => { term.recv().await; }
                None => std::future::pending::<()>().await,
            }
        } => {}
    }
}
