//! `cargo xtask bench-cluster`: an example operator on a real control plane, measured from outside.
//!
//! Builds the example (`--example webapp`, the default, or `database`) in release, starts a fresh etcd and
//! kube-apiserver, creates N parents (WebApps with the ConfigMap they name, or Databases) before the operator
//! starts, then runs the operator as its own process with `--kubeconfig`, as a user would, and prints:
//! converge wall time (until every parent's status describes its generation and names its children), the
//! operator's CPU seconds (user + system, from `/proc`), its peak and steady resident memory (and the peak of the
//! operator restarted on the converged objects), API requests by
//! verb during the converge (from kube-apiserver's `apiserver_request_total`, the benchmark's own lists taken
//! out), writes while idle and after a restart, the passes in the 15 s after the restart, and the latency
//! from a spec patch to the workload's update (p50 / p99), each patch sent to an idle operator, and again with the patches back to back (one patch of
//! another parent goes first and is printed apart: it opens the benchmark's own connection for writes); for the
//! idle patches, also the slowest three in parts, the patch
//! request alone, the operator's time in its work queue (`workqueue_queue_duration_seconds`), the API server's own time per write of the workload (from its
//! `apiserver_request_duration_seconds`), and the operator's share: from the patched parent seen on a watch to the
//! workload's update seen on another. No kube-controller-manager runs, so workloads never become ready: converged means written.
//! Figures, not assertions: run it on a quiet machine, several times, and read medians: `--runs N` repeats the
//! whole measurement on a fresh control plane each time and prints the median and range of every figure;
//! `--against BINARY` (another build of the same example, e.g. from an earlier commit) interleaves its runs with
//! this build's (this, other, this, other, ...), so both meet the same load on a shared machine.
//!
//! `--cluster` runs the whole cluster instead (kube-controller-manager, kube-scheduler and kwok's simulated
//! nodes): every Deployment the operator creates gets a ReplicaSet, Pods that become Ready and status updates,
//! converged means Ready too, and the run also reports the operator's own requests and 409 conflicts (from its
//! client metrics, as the API server's count holds the controllers' requests too), the 409s the API server
//! answered by verb and resource (whose writes met them), passes per parent (and, where the operator reports
//! it, how many wrote nothing), and the pods by phase at the end of the converge (a node simulation that did not
//! keep up shows there). Before the restart the operator is stopped
//! once the last patched parent's status reports its rollout finished (`--settle-seconds`), so that the restart
//! finds nothing that changed while it was down, and the API server's writes of the restart's window are printed
//! by verb and resource.

mod audit;
mod cluster;
mod converge;
mod latency;
mod process;
mod requests;
pub mod shards;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use kube::Client;
use kube::api::{Api, ApiResource, DynamicObject, ListParams, PostParams};
use kubewright_envtest::{Assets, ControlPlane};
use serde_json::{Value, json};

use converge::{report_unconverged, wait_converged};
use latency::{median, patch_latencies, percentile};
use process::{QUEUE_WAIT, free_port, metric_sums, metrics_page, passes, spawn, stop, usage};
use requests::{delta, describe, is_write, list_counts, request_counts, write_durations};

/// Options of `cargo xtask bench-cluster`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Which example to measure.
    #[arg(long, value_enum, default_value_t = Example::Webapp)]
    example: Example,
    /// How many parents (WebApps or Databases) to converge.
    #[arg(long, alias = "webapps", default_value_t = 1000)]
    parents: usize,
    /// How many spec patches to time.
    #[arg(long, default_value_t = 100)]
    patches: usize,
    /// How many times to measure (each on a fresh control plane); with more than one, medians are printed.
    #[arg(long, default_value_t = 1)]
    runs: usize,
    /// Another build of the same example to measure in turn with this one (`--runs` times each).
    #[arg(long)]
    against: Option<PathBuf>,
    /// Measure the default build, which links the embedded in-memory cluster (by default the benchmark
    /// measures the build the `Dockerfile` makes for a real cluster, without it).
    #[arg(long)]
    with_embedded: bool,
    /// Measure this operator binary instead of building the example (e.g. a copy of an earlier build, to
    /// compare two versions on the same machine).
    #[arg(long, value_name = "PATH")]
    binary: Option<PathBuf>,
    /// Run the whole cluster: kube-controller-manager, kube-scheduler and kwok's simulated nodes.
    #[arg(long)]
    cluster: bool,
    /// How long the converged operator is watched idle before the patches (writes and conflicts counted).
    #[arg(long, default_value_t = 10)]
    idle_seconds: u64,
    /// On a whole cluster, how long at most to wait after the last patch for the patched parents' statuses
    /// to report their workloads rolled out before the operator is stopped and restarted (0: stop at once).
    /// The wait ends as soon as they do: seconds at 1,000 parents, minutes on a cluster busy with 10,000.
    #[arg(long, default_value_t = 300)]
    settle_seconds: u64,
}

/// The example operators the benchmark knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Example {
    /// WebApps: a Deployment and a Service each, and one ConfigMap they all name.
    Webapp,
    /// Databases: a Secret, a headless Service and a StatefulSet each.
    Database,
}

impl Example {
    fn name(self) -> &'static str {
        match self {
            Example::Webapp => "webapp",
            Example::Database => "database",
        }
    }

    fn kind(self) -> (&'static str, &'static str) {
        match self {
            Example::Webapp => ("WebApp", "webapps"),
            Example::Database => ("Database", "databases"),
        }
    }

    /// The plural of the workload each parent's patch changes.
    fn workload_resource(self) -> &'static str {
        match self {
            Example::Webapp => "deployments",
            Example::Database => "statefulsets",
        }
    }

    /// The `i`-th parent, written at `version` (the CRD's storage version: a WebApp of this build at `v2`, of a
    /// build before `v2` existed, or of the controller-runtime operator, at `v1`; the same WebApp either way).
    fn parent(self, i: usize, version: &str) -> Value {
        match self {
            Example::Webapp if version == "v2" => {
                json!({"apiVersion": "example.dev/v2", "kind": "WebApp",
                "metadata": {"name": format!("app-{i}")},
                "spec": {"image": "nginx:1.27", "scale": {"replicas": 1},
                    "ports": [{"name": "http", "port": 8080}], "configMap": "site"}})
            }
            Example::Webapp => json!({"apiVersion": "example.dev/v1", "kind": "WebApp",
                "metadata": {"name": format!("app-{i}")},
                "spec": {"image": "nginx:1.27", "replicas": 1, "port": 8080, "configMap": "site"}}),
            Example::Database => json!({"apiVersion": "example.dev/v1", "kind": "Database",
                "metadata": {"name": format!("app-{i}")},
                "spec": {"version": "16", "replicas": 1, "storage": "1Gi"}}),
        }
    }

    /// Whether a parent's status describes its generation and names its children (and, on a whole cluster,
    /// says `Ready=True`: its workload rolled out).
    fn converged(self, parent: &DynamicObject, cluster: bool) -> bool {
        let status = &parent.data["status"];
        let ready = || {
            status["conditions"].as_array().is_some_and(|cs| {
                cs.iter()
                    .any(|c| c["type"] == "Ready" && c["status"] == "True")
            })
        };
        (!cluster || ready())
            && status["observedGeneration"].as_i64() == parent.metadata.generation
            && match self {
                Example::Webapp => {
                    status["deployment"].is_string() && status["service"].is_string()
                }
                Example::Database => {
                    status["secretName"].is_string() && status["endpoint"].is_string()
                }
            }
    }
}

const NAMESPACE: &str = "default";

pub fn run(args: Args) -> anyhow::Result<()> {
    let binary = match &args.binary {
        Some(path) => path.clone(),
        None => build_example(args.example.name(), args.with_embedded)?,
    };
    let assets = match Assets::locate() {
        Ok(assets) => assets,
        Err(e) if e.is_no_assets() => super::build::run(&super::build::Args::default())?,
        Err(e) => return Err(e.into()),
    };
    let runtime = tokio::runtime::Runtime::new().context("starting a tokio runtime")?;
    let mut builds = vec![("this build".to_string(), binary, Vec::new())];
    if let Some(other) = &args.against {
        if !other.exists() {
            bail!("--against {}: no such file", other.display());
        }
        builds.push((other.display().to_string(), other.clone(), Vec::new()));
    }
    // A run that fails (an operator that does not converge within the bound) is reported and the others go
    // on: one side failing leaves the other's figures, and the benchmark fails at the end.
    let mut failed = Vec::new();
    for run in 0..args.runs.max(1) {
        for (name, binary, figures) in &mut builds {
            eprintln!(
                "bench-cluster: run {} of {}: {name}",
                run + 1,
                args.runs.max(1)
            );
            match runtime.block_on(measure(&args, binary, assets.clone())) {
                Ok(figures_of_run) => figures.push(figures_of_run),
                Err(e) => {
                    let failure = format!("run {} of {name} failed: {e:#}", run + 1);
                    eprintln!("bench-cluster: {failure}");
                    failed.push(failure);
                }
            }
        }
    }
    if args.runs > 1 || builds.len() > 1 {
        for (name, _, figures) in &builds {
            if figures.is_empty() {
                println!("bench-cluster: {name}: no run completed");
            } else {
                summarize(name, figures);
            }
        }
    }
    if !failed.is_empty() {
        bail!(
            "{} of {} runs failed:\n{}",
            failed.len(),
            args.runs.max(1) * builds.len(),
            failed.join("\n")
        );
    }
    Ok(())
}

/// What one run measured.
struct Figures {
    converge_s: f64,
    cpu_s: f64,
    peak_mib: f64,
    /// Reconciler passes while converging, by the operator's own metrics.
    passes: u64,
    /// Of those, the passes that wrote nothing, where the operator reports them.
    passes_without_writes: Option<u64>,
    steady_mib: f64,
    restart_peak_mib: f64,
    /// Reconciler passes in the 15 s after the restart.
    restart_passes: u64,
    p50_ms: f64,
    p99_ms: f64,
    /// The p99 with the patches back to back.
    busy_p99_ms: f64,
    /// From the patched parent seen on a watch to the workload's update seen (each patch to an idle operator).
    seen_p50_ms: f64,
    seen_p99_ms: f64,
    /// Writes while idle and after a restart, all verbs together.
    idle_writes: u64,
    restart_writes: u64,
    /// On a whole cluster: the operator's 409 answers while converging and while idle.
    conflicts: Option<(u64, u64)>,
    /// Passes per parent while converging.
    passes_per_parent: f64,
}

/// Prints the median and range of every figure of `runs`.
fn summarize(name: &str, runs: &[Figures]) {
    println!(
        "bench-cluster: {name}, median [min - max] of {} runs",
        runs.len()
    );
    let line = |label: &str, unit: &str, get: fn(&Figures) -> f64| {
        let values: Vec<f64> = runs.iter().map(get).collect();
        let min = values.iter().cloned().fold(f64::INFINITY, f64::min);
        let max = values.iter().cloned().fold(0.0, f64::max);
        println!(
            "{label:<26}{:>10.2} {unit} [{min:.2} - {max:.2}]",
            median(&values)
        );
    };
    line("converge wall time", "s", |f| f.converge_s);
    line("operator CPU (user+sys)", "s", |f| f.cpu_s);
    line("peak resident memory", "MiB", |f| f.peak_mib);
    line("steady resident memory", "MiB", |f| f.steady_mib);
    line("peak after a restart", "MiB", |f| f.restart_peak_mib);
    line("passes after a restart", "", |f| f.restart_passes as f64);
    line("passes while converging", "", |f| f.passes as f64);
    line("  per parent", "", |f| f.passes_per_parent);
    if runs.iter().all(|f| f.passes_without_writes.is_some()) {
        line("  that wrote nothing", "", |f| {
            f.passes_without_writes.unwrap_or_default() as f64
        });
    }
    line("spec patch -> workload p50", "ms", |f| f.p50_ms);
    line("spec patch -> workload p99", "ms", |f| f.p99_ms);
    line("  back to back, p99", "ms", |f| f.busy_p99_ms);
    line("parent seen -> workload p50", "ms", |f| f.seen_p50_ms);
    line("parent seen -> workload p99", "ms", |f| f.seen_p99_ms);
    let idle: u64 = runs.iter().map(|f| f.idle_writes).sum();
    let restart: u64 = runs.iter().map(|f| f.restart_writes).sum();
    println!("writes idle / restarted   {idle} / {restart} (all runs together)");
    let conflicts: Vec<(u64, u64)> = runs.iter().filter_map(|f| f.conflicts).collect();
    if !conflicts.is_empty() {
        let converge: Vec<String> = conflicts.iter().map(|c| c.0.to_string()).collect();
        let idle: Vec<String> = conflicts.iter().map(|c| c.1.to_string()).collect();
        println!(
            "409s converge / idle      {} / {} (each run)",
            converge.join(", "),
            idle.join(", ")
        );
    }
}

/// `cargo build --release -p examples --example NAME` (with `--no-default-features` unless `with_embedded`:
/// the build for a real cluster, as the `Dockerfile` makes it), returning the binary's path.
fn build_example(name: &str, with_embedded: bool) -> anyhow::Result<PathBuf> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut build = Command::new(cargo);
    build.args(["build", "--release", "-p", "examples", "--example", name]);
    if !with_embedded {
        build.arg("--no-default-features");
    }
    let status = build.status().context("running cargo build")?;
    if !status.success() {
        bail!("cargo build --release --example {name} failed");
    }
    let target = std::env::var("CARGO_TARGET_DIR").unwrap_or_else(|_| "target".into());
    let binary = Path::new(&target).join("release/examples").join(name);
    if !binary.exists() {
        bail!("{} was not built", binary.display());
    }
    Ok(binary)
}

async fn measure(args: &Args, binary: &Path, assets: Assets) -> anyhow::Result<Figures> {
    let mut builder = ControlPlane::builder().assets(assets).name("bench-cluster");
    if args.cluster {
        builder = builder.cluster();
    }
    let cp = builder.start().await?;
    if let Some(times) = cp.startup_times().cluster {
        eprintln!(
            "bench-cluster: cluster ready: kube-apiserver in {:.1?}, kube-controller-manager in {:.1?}, \
             kube-scheduler in {:.1?}, nodes in {:.1?}",
            cp.startup_times().apiserver,
            times.controller_manager,
            times.scheduler,
            times.nodes
        );
    }
    let dir = tempfile::tempdir().context("a temporary directory")?;
    let kubeconfig = dir.path().join("kubeconfig");
    cp.write_kubeconfig(&kubeconfig)?;
    let client = cp.client()?;
    let example = args.example;
    let version = install_crd(binary, &client, example).await?;
    let parents = parents_api(&client, example, &version);
    let pp = PostParams::default();
    let cms: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        NAMESPACE,
        &ApiResource::erase::<k8s_openapi::api::core::v1::ConfigMap>(&()),
    );
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "site"}, "data": {"index.html": "hello"}});
    if example == Example::Webapp {
        cms.create(&pp, &serde_json::from_value(cm)?).await?;
    }
    let (kind, _) = example.kind();
    eprintln!("bench-cluster: creating {} {kind}s", args.parents);
    for i in 0..args.parents {
        parents
            .create(&pp, &serde_json::from_value(example.parent(i, &version))?)
            .await?;
    }

    let before = request_counts(&client).await?;
    let lists_before = list_counts(&client).await?;
    let conflicts_before = cluster::server_conflicts(&client).await?;
    let started = Instant::now();
    let metrics_port = free_port()?;
    let mut operator = spawn(binary, &kubeconfig, Some(metrics_port))?;
    let (own_lists, own_watches) =
        match wait_converged(&parents, args.parents, example, args.cluster).await {
            Ok(requests) => requests,
            Err(e) => {
                report_unconverged(operator.id(), metrics_port, started.elapsed()).await;
                return Err(e);
            }
        };
    let converge = started.elapsed();
    let own_converged = cluster::client_requests(&metrics_page(metrics_port).await?);
    let conflicts_converged = cluster::server_conflicts(&client).await?;
    let mut converged = request_counts(&client).await?;
    let lists = delta(&lists_before, &list_counts(&client).await?, |_| true);
    // The benchmark's own polling is not the operator's.
    if let Some(lists) = converged.get_mut("LIST") {
        *lists -= own_lists.min(*lists);
    }
    if let Some(watches) = converged.get_mut("WATCH") {
        *watches -= own_watches.min(*watches);
    }
    let usage_converged = usage(operator.id())?;
    let (passes, passes_without_writes) = passes(metrics_port).await?;

    let pods = if args.cluster {
        Some(cluster::pod_phases(&client, NAMESPACE).await?)
    } else {
        None
    };

    tokio::time::sleep(Duration::from_secs(args.idle_seconds)).await;
    let idle = request_counts(&client).await?;
    let usage_idle = usage(operator.id())?;
    let own_idle = cluster::client_requests(&metrics_page(metrics_port).await?);
    let conflicts_idle = cluster::server_conflicts(&client).await?;

    // The first patch opens the benchmark's own connection for writes (its watches hold the idle ones): a TLS
    // handshake the operator has no part in. One patch of another parent takes it, printed apart rather than
    // counted among the patches to an idle operator.
    let first = patch_latencies(&client, &parents, &version, "app-1", 0..1, example, true).await?;
    let before_patches = write_durations(&client, example.workload_resource()).await?;
    let queued_before = metric_sums(metrics_port, QUEUE_WAIT).await?;
    let idle_patches = patch_latencies(
        &client,
        &parents,
        &version,
        "app-0",
        0..args.patches,
        example,
        true,
    )
    .await?;
    let queued_after = metric_sums(metrics_port, QUEUE_WAIT).await?;
    let after_patches = write_durations(&client, example.workload_resource()).await?;
    // Numbered on from the idle ones, so the first asks for other replicas than the last idle one did.
    let busy_patches = patch_latencies(
        &client,
        &parents,
        &version,
        "app-0",
        args.patches..2 * args.patches,
        example,
        false,
    )
    .await?;
    let (latencies, patch_requests, seen_latencies) = (
        &idle_patches.patch_to_workload,
        &idle_patches.requests,
        &idle_patches.seen_to_workload,
    );
    let busy_latencies = &busy_patches.patch_to_workload;
    // On a whole cluster the patched parents' workloads are still rolling out: the operator stops once their
    // statuses have caught up, so that the restart finds nothing changed while it was down.
    let settled = if args.cluster && args.settle_seconds > 0 {
        Some(
            cluster::settle(
                &parents,
                &["app-1", "app-0"],
                Duration::from_secs(args.settle_seconds),
            )
            .await?,
        )
    } else {
        None
    };
    stop(&mut operator)?;

    let before_restart = request_counts(&client).await?;
    let server_before_restart = cluster::server_writes(&client).await?;
    let restart_metrics = free_port()?;
    let mut restarted = spawn(binary, &kubeconfig, Some(restart_metrics))?;
    tokio::time::sleep(Duration::from_secs(15)).await;
    let after_restart = request_counts(&client).await?;
    let restart_page = metrics_page(restart_metrics).await?;
    let own_restart = cluster::client_requests(&restart_page);
    let [restart_passes] = process::sums_in(&restart_page, ["controller_runtime_reconcile_total"])?;
    let restart_passes = restart_passes as u64;
    let server_restart = cluster::server_delta(
        &server_before_restart,
        &cluster::server_writes(&client).await?,
    );
    let usage_restarted = usage(restarted.id())?;
    stop(&mut restarted)?;

    println!(
        "bench-cluster: {} example, {} {kind}s, kube-apiserver {}{}, release build ({})",
        example.name(),
        args.parents,
        cp.assets().kubernetes_version,
        if args.cluster {
            " with kube-controller-manager, kube-scheduler and kwok nodes"
        } else {
            ""
        },
        match (&args.binary, args.with_embedded) {
            _ if args.binary.as_deref() != Some(binary)
                && args.against.as_deref() == Some(binary) =>
                format!("{}", binary.display()),
            (Some(path), _) => format!("{}", path.display()),
            (None, true) => "with the embedded cluster".into(),
            (None, false) => "without the embedded cluster".into(),
        }
    );
    println!(
        "converge wall time        {:>10.2} s",
        converge.as_secs_f64()
    );
    println!("operator CPU (user+sys)   {:>10.2} s", usage_converged.cpu);
    println!(
        "peak resident memory      {:>10.1} MiB",
        usage_idle.peak_mib
    );
    println!(
        "steady resident memory    {:>10.1} MiB (after {} s idle)",
        usage_idle.rss_mib, args.idle_seconds
    );
    println!(
        "peak after a restart      {:>10.1} MiB (the converged objects listed again)",
        usage_restarted.peak_mib
    );
    println!(
        "passes after a restart    {restart_passes} ({:.2} per {kind}, in 15 s)",
        restart_passes as f64 / args.parents.max(1) as f64
    );
    println!(
        "passes while converging   {passes} ({:.2} per {kind}){}",
        passes as f64 / args.parents.max(1) as f64,
        match passes_without_writes {
            Some(n) => format!(", of which {n} wrote nothing"),
            None => String::new(),
        }
    );
    println!(
        "requests while converging {}",
        describe(&delta(&before, &converged, |_| true))
    );
    println!(
        "  LIST by resource, the benchmark's own {own_lists} included: {}",
        describe(&lists)
    );
    let idle_writes = delta(&converged, &idle, is_write);
    let restart_writes = delta(&before_restart, &after_restart, is_write);
    let own_idle_delta = cluster::client_delta(&own_converged, &own_idle);
    let (idle_count, restart_count, conflict_counts) = if args.cluster {
        // The API server's counts hold the controllers' requests: the operator's own are its client's.
        println!(
            "  (the API server's counts above include kube-controller-manager's, kube-scheduler's and kwok's)"
        );
        println!(
            "the operator's requests  {} (its client's rest_client_requests_total, by method; GET holds lists and watches)",
            describe(&cluster::by_method(&own_converged))
        );
        let own_conflicts = cluster::conflicts(&own_converged);
        let idle_conflicts = cluster::conflicts(&own_idle_delta);
        println!(
            "409 conflicts, operator   converging {}, idle ({} s) {}",
            describe(&own_conflicts),
            args.idle_seconds,
            describe(&idle_conflicts)
        );
        println!(
            "409 answers, API server   converging {}, idle {} (all clients, by verb and resource: the \
             deployments/status and replicasets/status PUTs are kube-controller-manager's)",
            cluster::describe_pairs(&cluster::server_delta(
                &conflicts_before,
                &conflicts_converged
            )),
            cluster::describe_pairs(&cluster::server_delta(
                &conflicts_converged,
                &conflicts_idle
            )),
        );
        if let Some(pods) = &pods {
            println!("pods at converge          {}", describe(pods));
        }
        let idle_own = cluster::client_writes(&own_idle_delta);
        let restart_own = cluster::client_writes(&own_restart);
        println!(
            "writes while idle ({} s)  {idle_own} (the operator's own)",
            args.idle_seconds
        );
        println!(
            "writes after a restart    {restart_own} (the operator's own, 15 s: {}){}",
            describe(&cluster::by_method(&cluster::client_writes_by_code(
                &own_restart
            ))),
            match settled {
                Some(Some(waited)) => format!(
                    ", stopped {:.1} s after the last patch, once app-1's and app-0's statuses had caught up",
                    waited.as_secs_f64()
                ),
                Some(None) => format!(
                    ", stopped with app-1's or app-0's status not caught up {} s after the last patch",
                    args.settle_seconds
                ),
                None => ", stopped right after the last patch".into(),
            }
        );
        println!(
            "  the API server's writes meanwhile, all clients: {}",
            cluster::describe_pairs(&server_restart)
        );
        (
            idle_own,
            restart_own,
            Some((own_conflicts.values().sum(), idle_conflicts.values().sum())),
        )
    } else {
        println!(
            "writes while idle ({} s)  {}",
            args.idle_seconds,
            describe(&idle_writes)
        );
        println!("writes after a restart    {}", describe(&restart_writes));
        (
            idle_writes.values().sum(),
            restart_writes.values().sum(),
            None,
        )
    };
    println!(
        "spec patch -> workload    p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms ({} patches, each to an idle operator)",
        percentile(latencies, 0.50),
        percentile(latencies, 0.99),
        latencies.iter().cloned().fold(0.0, f64::max),
        latencies.len()
    );
    println!(
        "  of which the patch request p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        percentile(patch_requests, 0.50),
        percentile(patch_requests, 0.99),
        patch_requests.iter().cloned().fold(0.0, f64::max),
    );
    println!("  the slowest: {}", idle_patches.slowest(3));
    println!(
        "  not counted: the first patch after the start (of app-1), {}",
        first.slowest(1)
    );
    for (verb, (seconds, count)) in &after_patches {
        let (before_s, before_n) = before_patches.get(verb).copied().unwrap_or_default();
        let n = count - before_n;
        if n > 0.0 {
            println!(
                "  the API server's own time per {} {verb}: {:.1} ms ({n} requests, the operator's writes)",
                example.workload_resource(),
                (seconds - before_s) * 1000.0 / n,
            );
        }
    }
    println!(
        "  patched parent seen -> workload seen p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms (the operator's share)",
        percentile(seen_latencies, 0.50),
        percentile(seen_latencies, 0.99),
        seen_latencies.iter().cloned().fold(0.0, f64::max),
    );
    let queued = queued_after[1] - queued_before[1];
    if queued > 0.0 {
        println!(
            "  of which in the operator's work queue: {:.2} ms per pass ({queued} passes, its workqueue_queue_duration_seconds)",
            (queued_after[0] - queued_before[0]) * 1000.0 / queued,
        );
    }
    let timed = queued_after[3] - queued_before[3];
    if timed > 0.0 {
        println!(
            "  and in its passes: {:.2} ms per pass, its writes' requests included ({timed} passes, its controller_runtime_reconcile_time_seconds)",
            (queued_after[2] - queued_before[2]) * 1000.0 / timed,
        );
    }
    println!(
        "  patches back to back    p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms (the previous pass may still run)",
        percentile(busy_latencies, 0.50),
        percentile(busy_latencies, 0.99),
        busy_latencies.iter().cloned().fold(0.0, f64::max),
    );
    cp.stop();
    Ok(Figures {
        converge_s: converge.as_secs_f64(),
        cpu_s: usage_converged.cpu,
        peak_mib: usage_idle.peak_mib,
        passes,
        passes_without_writes,
        steady_mib: usage_idle.rss_mib,
        restart_peak_mib: usage_restarted.peak_mib,
        restart_passes,
        p50_ms: percentile(latencies, 0.50),
        p99_ms: percentile(latencies, 0.99),
        busy_p99_ms: percentile(busy_latencies, 0.99),
        seen_p50_ms: percentile(seen_latencies, 0.50),
        seen_p99_ms: percentile(seen_latencies, 0.99),
        idle_writes: idle_count,
        restart_writes: restart_count,
        conflicts: conflict_counts,
        passes_per_parent: passes as f64 / args.parents.max(1) as f64,
    })
}

/// Installs the CRD `<example> manifests` prints, and returns its storage version, at which the benchmark
/// writes and reads the parents. A CRD of several versions is installed without its `spec.conversion`: the
/// benchmark serves no conversion webhook, and every request is at the storage version, so none is converted.
async fn install_crd(binary: &Path, client: &Client, example: Example) -> anyhow::Result<String> {
    let out = Command::new(binary)
        .arg("manifests")
        .output()
        .context("running the example's manifests")?;
    let yaml = String::from_utf8(out.stdout)?;
    let crds: Api<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition> =
        Api::all(client.clone());
    let mut version = "v1".to_string();
    for doc in yaml.split("\n---") {
        let mut value: Value = match serde_yaml::from_str(doc) {
            Ok(v) => v,
            Err(_) => continue,
        };
        if value["kind"] == "CustomResourceDefinition" {
            if let Some(spec) = value["spec"].as_object_mut() {
                spec.remove("conversion");
            }
            if let Some(storage) = value["spec"]["versions"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|v| v["storage"] == true)
            {
                version = storage["name"].as_str().unwrap_or("v1").to_string();
            }
            crds.create(&PostParams::default(), &serde_json::from_value(value)?)
                .await?;
        }
    }
    for _ in 0..100 {
        if parents_api(client, example, &version)
            .list(&ListParams::default().limit(1))
            .await
            .is_ok()
        {
            return Ok(version);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    bail!("the CRD was not served in time")
}

/// The parents at `version`.
fn parents_api(client: &Client, example: Example, version: &str) -> Api<DynamicObject> {
    let (kind, plural) = example.kind();
    let resource = ApiResource {
        group: "example.dev".into(),
        version: version.into(),
        api_version: format!("example.dev/{version}"),
        kind: kind.into(),
        plural: plural.into(),
    };
    Api::namespaced_with(client.clone(), NAMESPACE, &resource)
}
