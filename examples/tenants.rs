//! The Tenant operator (`examples/src/tenants.rs`): a cluster-scoped `Tenant` owning, per entry, a Namespace
//! and in it a ResourceQuota and a RoleBinding, declared with three `#[children]` sets. The command line is the
//! one every example shares (`examples/src/cli.rs`).
//!
//! ```text
//! # the embedded in-memory cluster, with a sample Tenant, served to kubectl:
//! cargo run --example tenants -- --listen 127.0.0.1:8001 --write-kubeconfig /tmp/tenants.kubeconfig
//! kubectl --kubeconfig /tmp/tenants.kubeconfig get tenants,namespaces,resourcequotas,rolebindings -A
//! # a real cluster:
//! cargo run --example tenants -- --kubeconfig ~/.kube/config
//! # the CRD, ServiceAccount, ClusterRole (from the declared wiring, bind narrowed to admin), binding and
//! # Deployment:
//! cargo run --example tenants -- manifests | kubectl apply -f -
//! ```

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    examples::init_tracing();
    let cli = examples::cli::parse(
        "tenants",
        "Runs the Tenant operator (written with #[derive(Reconciler)]).\n\n\
         With `--kubeconfig FILE`, or `KUBECONFIG` set, it runs against that cluster (installing the CRD \
         if it is missing with `--install-crds`); with `--in-cluster`, against the cluster of its pod. Otherwise (or with `--embedded`) \
         it starts an in-memory cluster, installs the CRD and a sample Tenant, and logs what the operator does.",
        "Print the CRD, ServiceAccount, ClusterRole, ClusterRoleBinding and Deployment as YAML (pipe it to \
         `kubectl apply -f -`)",
    );
    examples::cli::run(
        &examples::tenants::example(),
        cli,
        examples::shutdown_signal(),
    )
    .await
}
