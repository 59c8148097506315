//! The WebApp operator written with the runtime only (no derive): a Deployment and a Service per `WebApp`,
//! with the hash of a referenced ConfigMap on the pod template. The operator itself is in
//! `examples/src/webapp.rs`; this is its command line.
//!
//! ```text
//! # the embedded in-memory cluster, with a sample WebApp, served to kubectl:
//! cargo run --example webapp-by-hand -- --listen 127.0.0.1:8001 --write-kubeconfig /tmp/webapp.kubeconfig
//! kubectl --kubeconfig /tmp/webapp.kubeconfig get webapps,deployments,services
//! # a real cluster:
//! cargo run --example webapp-by-hand -- --kubeconfig ~/.kube/config
//! # the CRD:
//! cargo run --example webapp-by-hand -- manifests | kubectl apply -f -
//! ```

use examples::webapp::cli::run;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    examples::init_tracing();
    let cli = examples::cli::parse(
        "webapp-by-hand",
        "Runs the WebApp operator (written with the runtime only, no derive).\n\n\
         With `--kubeconfig FILE`, or `KUBECONFIG` set, it runs against that cluster (installing the CRD if \
         it is missing with `--install-crds`); with `--in-cluster`, against the cluster of its pod. Otherwise (or with `--embedded`) it \
         starts an in-memory cluster, installs the CRD, a sample ConfigMap and a sample WebApp, and logs what the \
         operator does.",
        "Print the CustomResourceDefinition as YAML (pipe it to `kubectl apply -f -`)",
    );
    run(cli, examples::shutdown_signal()).await
}
