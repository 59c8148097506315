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

// jemalloc rather than the C library's malloc: less CPU for about the same memory (see `examples/Cargo.toml`).
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), kubewright::cli::CliError> {
    examples::database::app()
        .about("Runs the Database operator (written with #[derive(Reconciler)]).")
        .run()
        .await
}
