//! The Expose operator (`examples/src/expose.rs`): an Ingress for every Service annotated
//! `example.dev/expose: "true"`, a built-in kind as the parent. The command line is the one every example
//! shares (`kubewright::cli::App`).
//!
//! ```text
//! # the embedded in-memory cluster, with a sample Service, served to kubectl:
//! cargo run --example expose -- --listen 127.0.0.1:8001 --write-kubeconfig /tmp/expose.kubeconfig
//! kubectl --kubeconfig /tmp/expose.kubeconfig get services,ingresses
//! # a real cluster:
//! cargo run --example expose -- --kubeconfig ~/.kube/config
//! # the ServiceAccount, ClusterRole (from the declared wiring), binding and Deployment:
//! cargo run --example expose -- manifests | kubectl apply -f -
//! ```

// jemalloc rather than the C library's malloc: less CPU for about the same memory (see `examples/Cargo.toml`).
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), kubewright::cli::CliError> {
    examples::expose::app()
        .about("Gives every annotated Service an Ingress.")
        .run()
        .await
}
