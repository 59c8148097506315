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

// jemalloc rather than the C library's malloc: less CPU for about the same memory (see `examples/Cargo.toml`).
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), kubewright::cli::CliError> {
    examples::teams::app()
        .about("Runs the Team operator (written with #[derive(Reconciler)]).")
        .run()
        .await
}
