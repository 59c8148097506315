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

// jemalloc rather than the C library's malloc: less CPU for about the same memory (see `examples/Cargo.toml`).
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), kubewright::cli::CliError> {
    examples::webapp::cli::on_embedded(examples::webapp_derive::app())
        .about("Runs the WebApp operator (written with #[derive(Reconciler)]).")
        .run()
        .await
}
