//! Development tasks.
//!
//! ```text
//! cargo xtask envtest                                  # build the control plane and cluster binaries (or reuse them)
//! cargo xtask control-plane --write-kubeconfig FILE    # run a control plane until Ctrl-C
//! cargo xtask control-plane --cluster                  # … with controller-manager, scheduler and kwok nodes
//! cargo xtask openapi-fields zz_generated.openapi.go > apiserver/src/openapi/fields.json
//! cargo xtask protobuf-schema > apiserver/src/protobuf/schema.json
//! cargo xtask bench-cluster --example webapp --parents 1000   # an example on a real control plane
//! cargo xtask e2e-apimachinery [--content-type json]           # Kubernetes' API-machinery e2e specs on both servers
//! cargo xtask e2e-apimachinery --ci                           # the CI part: fast specs, embedded cluster, checked
//! cargo xtask e2e-apimachinery --build-only                   # only build (or find) the specs' test binary
//! ```

mod bench;
mod build;
mod control_plane;
mod e2e;
mod openapi_fields;
mod protobuf_schema;

use clap::{Parser, Subcommand};

/// Development tasks of the operator framework.
#[derive(Debug, Parser)]
#[command(name = "cargo xtask")]
struct Cli {
    #[command(subcommand)]
    task: Task,
}

#[derive(Debug, Subcommand)]
enum Task {
    /// Build etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok from Go modules into the
    /// cache (or reuse them) and print, on the last line, the directory to use as KUBEBUILDER_ASSETS.
    Envtest(build::Args),
    /// Run a control plane (etcd and kube-apiserver; with --cluster also kube-controller-manager,
    /// kube-scheduler and kwok's simulated nodes) until Ctrl-C, building it first when needed.
    ControlPlane(control_plane::Args),
    /// Measure the webapp example converging WebApps on a fresh real control plane (release build): wall
    /// time, CPU, memory, requests by verb, idle and restart writes, patch-to-update latency.
    BenchCluster(bench::Args),
    /// Measure the webapp example sharded across 1, 2 and 4 replica processes (converge time, CPU and peak
    /// memory per replica), and check from kube-apiserver's audit log that a join, a SIGTERM and a SIGKILL
    /// during converges left no write to a parent or its children by a replica that did not own it.
    BenchShards(bench::shards::Args),
    /// Print the table of what kube-openapi's generated Go definitions of a Kubernetes release say of the
    /// built-in schemas that k8s-openapi does not (`apiserver/src/openapi/fields.json`): enum fields,
    /// required fields, extensions.
    OpenapiFields(openapi_fields::Args),
    /// Print the protobuf messages of the built-in kinds, read from the `generated.proto` files and Go types
    /// of the `k8s.io` modules in the Go module cache (`apiserver/src/protobuf/schema.json`).
    ProtobufSchema(protobuf_schema::Args),
    /// Build Kubernetes' API-machinery e2e specs (`test/e2e/apimachinery`, from `xtask/e2e`) and run a
    /// selection of them against the real control plane and the embedded cluster: prints `spec | real |
    /// embedded` and the counts, and compares them with `xtask/e2e/expected.md`.
    E2eApimachinery(e2e::Args),
    /// The embedded cluster over HTTP until killed (what `e2e-apimachinery` runs its specs against).
    #[command(hide = true)]
    ServeEmbedded(e2e::ServeArgs),
}

fn main() -> std::process::ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    let result = match Cli::parse().task {
        Task::Envtest(args) => build::run(&args).map(|assets| {
            println!("{}", assets.dir.display());
        }),
        Task::ControlPlane(args) => control_plane::run(args),
        Task::BenchCluster(args) => bench::run(args),
        Task::BenchShards(args) => bench::shards::run(args),
        Task::OpenapiFields(args) => openapi_fields::run(&args),
        Task::ProtobufSchema(args) => protobuf_schema::run(&args),
        Task::E2eApimachinery(args) => e2e::run(args),
        Task::ServeEmbedded(args) => e2e::serve(args),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
