//! The Team operator (`examples/src/teams.rs`): a child set of ServiceAccounts, one per member, and a `watches`
//! mapper from settings ConfigMaps to teams, declared with `#[derive(Reconciler)]`; the command line every
//! example shares.
//!
//! ```text
//! cargo run --example teams -- --listen 127.0.0.1:8001 --write-kubeconfig /tmp/teams.kubeconfig
//! kubectl --kubeconfig /tmp/teams.kubeconfig get teams,serviceaccounts,configmaps
//! kubectl --kubeconfig /tmp/teams.kubeconfig patch team platform --type merge -p '{"spec":{"members":["ada","grace"]}}'
//! kubectl --kubeconfig /tmp/teams.kubeconfig patch configmap platform-settings --type merge -p '{"data":{"role":"admin"}}'
//! cargo run --example teams -- manifests | kubectl apply -f -
//! ```

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    examples::init_tracing();
    let cli = examples::cli::parse(
        "teams",
        "Runs the Team operator (written with #[derive(Reconciler)]).\n\n\
         With `--kubeconfig FILE`, or `KUBECONFIG` set, it runs against that cluster (installing the CRD \
         if it is missing with `--install-crds`); with `--in-cluster`, against the cluster of its pod. Otherwise (or with `--embedded`) \
         it starts an in-memory cluster, installs the CRD, a sample Team and its settings ConfigMap, and logs \
         what the operator does.",
        "Print the CRD, Namespace, ServiceAccount, RBAC and Deployment as YAML (pipe it to `kubectl apply -f -`)",
    );
    examples::cli::run(
        &examples::teams::example(),
        cli,
        examples::shutdown_signal(),
    )
    .await
}
