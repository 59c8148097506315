//! The Tenant operator (`examples/src/tenants.rs`): a cluster-scoped `Tenant` owning, per entry, a Namespace
//! and in it a ResourceQuota and a RoleBinding, declared with three `#[children]` sets. The command line is the
//! one every example shares (`kubewright::cli::App`).
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

// jemalloc rather than the C library's malloc: less CPU for about the same memory (see `examples/Cargo.toml`).
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), kubewright::cli::CliError> {
    examples::tenants::app()
        .about("Runs the Tenant operator (written with #[derive(Reconciler)]).")
        .run()
        .await
}
