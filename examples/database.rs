//! The Database operator (`examples/src/database.rs`): a PostgreSQL StatefulSet, a headless Service and a
//! generated password, written with `#[derive(Reconciler)]`; the command line every example shares.
//!
//! ```text
//! cargo run --example database                          # embedded cluster with a sample Database
//! cargo run --example database -- --listen 127.0.0.1:8001 --write-kubeconfig /tmp/db.kubeconfig
//! kubectl --kubeconfig /tmp/db.kubeconfig get databases,statefulsets,services,secrets
//! cargo run --example database -- --kubeconfig ~/.kube/config --install-crds   # a real cluster
//! cargo run --example database -- manifests | kubectl apply -f -
//! ```

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    examples::init_tracing();
    let cli = examples::cli::parse(
        "database",
        "Runs the Database operator (written with #[derive(Reconciler)]).\n\n\
         With `--kubeconfig FILE`, or `KUBECONFIG` set, it runs against that cluster (installing the CRD \
         if it is missing with `--install-crds`); with `--in-cluster`, against the cluster of its pod. Otherwise (or with `--embedded`) \
         it starts an in-memory cluster, installs the CRD and a sample Database, and logs what the operator \
         does.",
        "Print the CRD, ServiceAccount, ClusterRole, ClusterRoleBinding and Deployment as YAML (pipe it to \
         `kubectl apply -f -`)",
    );
    examples::cli::run(
        &examples::database::example(),
        cli,
        examples::shutdown_signal(),
    )
    .await
}
