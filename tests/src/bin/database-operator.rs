//! The Database example operator as a binary of this package, so that integration tests can run it as a
//! process (`CARGO_BIN_EXE_database-operator`): kill it, stop it with SIGTERM, run two replicas. The same
//! command line as `cargo run --example database`.

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    examples::init_tracing();
    let cli = examples::cli::parse("database-operator", "The Database operator.", "");
    examples::cli::run(
        &examples::database::example(),
        cli,
        examples::shutdown_signal(),
    )
    .await?;
    Ok(())
}
