//! Shared helpers for the runnable examples (`cargo run --example NAME`).

pub mod cronjob;
pub mod database;
pub mod domains;
pub mod expose;
pub mod notes;
pub mod teams;
pub mod tenants;
pub mod webapp;
pub mod webapp_derive;

/// Installs a `tracing` subscriber that honours `RUST_LOG` (default `info`).
pub fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = tracing_subscriber::fmt().with_env_filter(filter).try_init();
}
