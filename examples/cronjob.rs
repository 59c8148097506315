//! The CronJob operator (`examples/src/cronjob.rs`): the kubebuilder book's CronJob tutorial, declared with a
//! create-once child set of Jobs and its history. The command line is the one every example shares
//! (`kubewright::cli::App`).
//!
//! ```text
//! # the embedded in-memory cluster, with a sample CronJob that runs every minute, served to kubectl:
//! cargo run --example cronjob -- --listen 127.0.0.1:8001 --write-kubeconfig /tmp/cronjob.kubeconfig
//! kubectl --kubeconfig /tmp/cronjob.kubeconfig get cronjobs.batch.tutorial.kubebuilder.io,jobs
//! # a real cluster:
//! cargo run --example cronjob -- --kubeconfig ~/.kube/config
//! # the CRD, ServiceAccount, ClusterRole (from the declared wiring), binding and Deployment:
//! cargo run --example cronjob -- manifests | kubectl apply -f -
//! ```

// jemalloc rather than the C library's malloc: less CPU for about the same memory (see `examples/Cargo.toml`).
#[cfg(not(target_env = "msvc"))]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), kubewright::cli::CliError> {
    examples::cronjob::app()
        .about("Runs the CronJob operator of the kubebuilder tutorial.")
        .run()
        .await
}
