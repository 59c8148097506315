//! The Database example operator as a binary of this package, so that integration tests can run it as a
//! process (`CARGO_BIN_EXE_database-operator`): kill it, stop it with SIGTERM, run two replicas. The same
//! command line as `cargo run --example database`.

#[tokio::main]
async fn main() -> Result<(), kubewright::cli::CliError> {
    examples::database::app()
        .about("The Database operator.")
        .run()
        .await
}
