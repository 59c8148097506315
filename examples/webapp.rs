//! The WebApp operator written with `#[derive(Reconciler)]` (`examples/src/webapp_derive.rs`): the same
//! operator and command line as `webapp-by-hand`, and `manifests` prints everything an installation needs.
//!
//! ```text
//! # the embedded in-memory cluster, with a sample WebApp, served to kubectl:
//! cargo run --example webapp -- --listen 127.0.0.1:8001 --write-kubeconfig /tmp/webapp.kubeconfig
//! kubectl --kubeconfig /tmp/webapp.kubeconfig get webapps,deployments,services
//! # a real cluster:
//! cargo run --example webapp -- --kubeconfig ~/.kube/config
//! # the CRD, ServiceAccount, ClusterRole (from the declared wiring), binding and Deployment:
//! cargo run --example webapp -- manifests | kubectl apply -f -
//! ```

use examples::webapp::cli::{Variant, run_variant};
use examples::webapp_derive::{controller, installation, manifests, webhooks};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    examples::init_tracing();
    let cli = examples::cli::parse(
        "webapp",
        "Runs the WebApp operator (written with #[derive(Reconciler)]).\n\n\
         With `--kubeconfig FILE`, or `KUBECONFIG` set, it runs against that cluster (installing the CRD \
         if it is missing with `--install-crds`); with `--in-cluster`, against the cluster of its pod. Otherwise (or with `--embedded`) \
         it starts an in-memory cluster, installs the CRD, a sample ConfigMap and a sample WebApp, and logs \
         what the operator does.",
        "Print the CRD, ServiceAccount, ClusterRole, ClusterRoleBinding and Deployment as YAML (pipe it to \
         `kubectl apply -f -`)",
    );
    let variant = Variant {
        controller,
        manifests,
        installation: Some(installation),
        webhooks,
    };
    run_variant(variant, cli, examples::shutdown_signal()).await
}
