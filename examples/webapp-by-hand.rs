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
//! # the installation (CRD, Namespace, ServiceAccount, RBAC, Deployment):
//! cargo run --example webapp-by-hand -- manifests | kubectl apply -f -
//! ```

// jemalloc rather than the C library's malloc: less CPU for about the same memory (see `examples/Cargo.toml`).
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), kubewright::cli::CliError> {
    examples::webapp::cli::by_hand()
        .about("Runs the WebApp operator (written with the runtime only, no derive).")
        .run()
        .await
}
