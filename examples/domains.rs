//! The Domain operator (`examples/src/domains.rs`): a cert-manager Certificate for every Domain, known by group,
//! version and kind only, and the Domain Ready when the Certificate is. The command line is the one every
//! example shares (`kubewright::cli::App`).
//!
//! ```text
//! # the embedded in-memory cluster, with a minimal Certificate CRD, a stand-in for cert-manager that issues
//! # every Certificate, and a sample Domain, served to kubectl:
//! cargo run --example domains -- --listen 127.0.0.1:8001 --write-kubeconfig /tmp/domains.kubeconfig
//! kubectl --kubeconfig /tmp/domains.kubeconfig get domains,certificates.cert-manager.io
//! # a real cluster with cert-manager installed:
//! cargo run --example domains -- --kubeconfig ~/.kube/config --install-crds
//! # the Domain CRD, ServiceAccount, ClusterRole (from the declared wiring), binding and Deployment:
//! cargo run --example domains -- manifests | kubectl apply -f -
//! ```

// jemalloc rather than the C library's malloc: less CPU for about the same memory (see `examples/Cargo.toml`).
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), kubewright::cli::CliError> {
    examples::domains::app()
        .about("Gets every Domain a cert-manager Certificate and reports it Ready when the Certificate is.")
        .run()
        .await
}
