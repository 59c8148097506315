//! `cargo xtask bench-shards`: the WebApp operator sharded across replica processes on a real control plane
//! (etcd and kube-apiserver), measured from outside.
//!
//! **Scale**: for each replica count (`--replicas 1,2,4`), a fresh control plane with N WebApps, the replicas
//! started together with `--sharded`, and the converge time, each replica's CPU seconds at the converge and
//! peak resident memory, and how many parents each owns at the end.
//!
//! **Hand-over**: on a fresh control plane whose kube-apiserver writes an audit log, two replicas start; a third
//! joins once a third of the WebApps converged; after the converge the second stops (SIGTERM) and every
//! WebApp's image is changed, and a third of the way through those changes the third replica is killed
//! (SIGKILL). Once all converged again, the audit log is checked: each replica writes as its own impersonated
//! user, and every write of a replica to a WebApp or its Deployment or Service must come from the replica
//! that owned the WebApp when the API server received it (by the shard label the protocol's writes set), and
//! no object may be created twice. Violations fail the command.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use futures::{StreamExt, TryStreamExt};
use kube::Client;
use kube::api::{Api, ApiResource, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use kubewright_envtest::{Assets, ControlPlane};
use serde_json::json;

use super::process::{Operator, stop, usage};
use super::{Example, NAMESPACE, build_example, install_crd, parents_api, wait_converged};

/// Options of `cargo xtask bench-shards`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// How many WebApps.
    #[arg(long, default_value_t = 10_000)]
    parents: usize,
    /// The replica counts of the scale runs, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4")]
    replicas: Vec<usize>,
    /// Skip the scale runs.
    #[arg(long)]
    no_scale: bool,
    /// Skip the hand-over run.
    #[arg(long)]
    no_handover: bool,
    /// Measure this operator binary instead of building the example.
    #[arg(long, value_name = "PATH")]
    binary: Option<PathBuf>,
    /// The replicas' `--leader-elect-lease-duration`, in seconds (their membership Leases). Longer than the
    /// operator's default: on a machine whose cores the API server, etcd and every replica share, a renewal
    /// can wait longer than the default deadline.
    #[arg(long, default_value_t = 30)]
    lease_seconds: u64,
    /// The replicas' `--leader-elect-renew-deadline`, in seconds.
    #[arg(long, default_value_t = 20)]
    renew_seconds: u64,
}

/// How each replica runs.
#[derive(Clone, Copy)]
struct Timings {
    lease_seconds: u64,
    renew_seconds: u64,
}

/// The users the replicas write as: `shard-r1`, `shard-r2`, ...
const USER_PREFIX: &str = "shard-";

pub fn run(args: Args) -> anyhow::Result<()> {
    let binary = match &args.binary {
        Some(path) => path.clone(),
        None => build_example("webapp", false)?,
    };
    let assets = match Assets::locate() {
        Ok(assets) => assets,
        Err(e) if e.is_no_assets() => crate::build::run(&crate::build::Args::default())?,
        Err(e) => return Err(e.into()),
    };
    let runtime = tokio::runtime::Runtime::new().context("starting a tokio runtime")?;
    let timings = Timings {
        lease_seconds: args.lease_seconds,
        renew_seconds: args.renew_seconds,
    };
    if timings.renew_seconds >= timings.lease_seconds {
        bail!("--renew-seconds must be shorter than --lease-seconds");
    }
    eprintln!(
        "bench-shards: membership Leases of {} s, renew deadline {} s",
        timings.lease_seconds, timings.renew_seconds
    );
    if !args.no_scale {
        let mut rows = Vec::new();
        for &replicas in &args.replicas {
            eprintln!(
                "bench-shards: {} WebApps, {replicas} replicas",
                args.parents
            );
            rows.push(runtime.block_on(scale(
                &binary,
                assets.clone(),
                args.parents,
                replicas,
                timings,
            ))?);
        }
        println!(
            "bench-shards: {} WebApps, bare control plane; per replica: CPU seconds at the converge, peak MiB, parents owned",
            args.parents
        );
        for row in &rows {
            println!("{row}");
        }
    }
    if !args.no_handover {
        runtime.block_on(handover(&binary, assets, args.parents, timings))?;
    }
    Ok(())
}

/// A replica process and its identity.
struct Replica {
    id: String,
    /// Killed when dropped while it runs, so a failed run leaves no replica behind.
    child: Operator,
}

/// Writes a kubeconfig for replica `id`: the control plane's, impersonating user `shard-<id>` in group
/// `system:masters`, so that the audit log names the replica of each write.
fn kubeconfig_for(cp: &ControlPlane, dir: &Path, id: &str) -> anyhow::Result<PathBuf> {
    let mut config = cp.kubeconfig().clone();
    for named in &mut config.auth_infos {
        if let Some(auth) = named.auth_info.as_mut() {
            auth.impersonate = Some(format!("{USER_PREFIX}{id}"));
            auth.impersonate_groups = Some(vec!["system:masters".into()]);
        }
    }
    let path = dir.join(format!("kubeconfig-{id}"));
    std::fs::write(&path, serde_yaml::to_string(&config)?)?;
    Ok(path)
}

fn spawn_replica(
    binary: &Path,
    cp: &ControlPlane,
    dir: &Path,
    id: &str,
    timings: Timings,
) -> anyhow::Result<Replica> {
    let kubeconfig = kubeconfig_for(cp, dir, id)?;
    let child = Command::new(binary)
        .arg("--kubeconfig")
        .arg(&kubeconfig)
        .args([
            "--sharded",
            "--shard-group=webapp",
            &format!("--shard-identity={id}"),
            &format!("--shard-namespace={NAMESPACE}"),
            &format!("--leader-elect-lease-duration={}s", timings.lease_seconds),
            &format!("--leader-elect-renew-deadline={}s", timings.renew_seconds),
        ])
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .map(Operator)
        .context("starting a replica")?;
    Ok(Replica {
        id: id.to_string(),
        child,
    })
}

/// Creates the ConfigMap the WebApps name and `n` WebApps; answers their API.
async fn install(binary: &Path, client: &Client, n: usize) -> anyhow::Result<Api<DynamicObject>> {
    let version = install_crd(binary, client, Example::Webapp).await?;
    let parents = parents_api(client, Example::Webapp, &version);
    let pp = PostParams::default();
    let cms: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        NAMESPACE,
        &ApiResource::erase::<k8s_openapi::api::core::v1::ConfigMap>(&()),
    );
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "site"}, "data": {"index.html": "hello"}});
    cms.create(&pp, &serde_json::from_value(cm)?).await?;
    eprintln!("bench-shards: creating {n} WebApps");
    let created = Instant::now();
    futures::stream::iter(0..n)
        .map(|i| {
            let (parents, pp, version) = (&parents, &pp, &version);
            async move {
                let parent = serde_json::from_value(Example::Webapp.parent(i, version))?;
                parents.create(pp, &parent).await?;
                anyhow::Ok(())
            }
        })
        .buffer_unordered(16)
        .try_collect::<Vec<()>>()
        .await?;
    eprintln!(
        "bench-shards: created in {:.1} s",
        created.elapsed().as_secs_f64()
    );
    Ok(parents)
}

/// How many parents each member owns, by their shard labels.
async fn owners(
    parents: &Api<DynamicObject>,
) -> anyhow::Result<std::collections::BTreeMap<String, usize>> {
    let mut counts = std::collections::BTreeMap::new();
    for p in parents.list_metadata(&ListParams::default()).await? {
        let owner = p
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get("sharding.kubewright.dev/shard"))
            .cloned()
            .unwrap_or_else(|| "(none)".into());
        *counts.entry(owner).or_default() += 1;
    }
    Ok(counts)
}

async fn scale(
    binary: &Path,
    assets: Assets,
    n: usize,
    replicas: usize,
    timings: Timings,
) -> anyhow::Result<String> {
    let cp = ControlPlane::builder()
        .assets(assets)
        .name("bench-shards")
        .start()
        .await?;
    let dir = tempfile::tempdir()?;
    let client = cp.client()?;
    let parents = install(binary, &client, n).await?;
    let started = Instant::now();
    let mut running = Vec::new();
    for i in 1..=replicas {
        running.push(spawn_replica(
            binary,
            &cp,
            dir.path(),
            &format!("r{i}"),
            timings,
        )?);
    }
    wait_converged(&parents, n, Example::Webapp, false).await?;
    let converge = started.elapsed();
    let owned = owners(&parents).await?;
    let mut row = format!(
        "{replicas} replica(s): converge {:.1} s;",
        converge.as_secs_f64()
    );
    for r in &running {
        let u = usage(r.child.id())?;
        row.push_str(&format!(
            " {}: {:.2} s, {:.1} MiB, {} parents;",
            r.id,
            u.cpu,
            u.peak_mib,
            owned.get(&r.id).copied().unwrap_or(0)
        ));
    }
    for r in &mut running {
        stop(&mut r.child)?;
    }
    Ok(row)
}

/// How many parents converged now (one list).
async fn converged_now(parents: &Api<DynamicObject>) -> anyhow::Result<usize> {
    Ok(parents
        .list(&ListParams::default())
        .await?
        .into_iter()
        .filter(|p| Example::Webapp.converged(p, false))
        .count())
}

/// Changes the image of the WebApps `names`, sixteen requests at a time.
async fn change_images(parents: &Api<DynamicObject>, names: &[String]) -> anyhow::Result<()> {
    futures::stream::iter(names)
        .map(|name| async move {
            parents
                .patch(
                    name,
                    &PatchParams::default(),
                    &Patch::Merge(json!({"spec": {"image": "nginx:1.28"}})),
                )
                .await?;
            anyhow::Ok(())
        })
        .buffer_unordered(16)
        .try_collect::<Vec<()>>()
        .await?;
    Ok(())
}

async fn handover(binary: &Path, assets: Assets, n: usize, timings: Timings) -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let policy = dir.path().join("audit-policy.yaml");
    std::fs::write(&policy, super::audit::policy("webapps"))?;
    let log = dir.path().join("audit.log");
    let cp = ControlPlane::builder()
        .assets(assets)
        .name("bench-shards")
        .apiserver_arg(format!("--audit-policy-file={}", policy.display()))
        .apiserver_arg(format!("--audit-log-path={}", log.display()))
        .apiserver_arg("--audit-log-maxsize=0")
        .start()
        .await?;
    let client = cp.client()?;
    let parents = install(binary, &client, n).await?;
    eprintln!("bench-shards: hand-over run: r1 and r2 start");
    let started = Instant::now();
    let r1 = spawn_replica(binary, &cp, dir.path(), "r1", timings)?;
    let mut r2 = spawn_replica(binary, &cp, dir.path(), "r2", timings)?;
    while converged_now(&parents).await? < n / 3 {
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
    eprintln!(
        "bench-shards: a third converged after {:.1} s; r3 joins",
        started.elapsed().as_secs_f64()
    );
    let mut r3 = spawn_replica(binary, &cp, dir.path(), "r3", timings)?;
    if let Err(e) = wait_converged(&parents, n, Example::Webapp, false).await {
        return Err(failed(dir, &log, e));
    }
    eprintln!(
        "bench-shards: converged after {:.1} s with {:?}; r2 stops (SIGTERM)",
        started.elapsed().as_secs_f64(),
        owners(&parents).await?
    );
    stop(&mut r2.child)?;
    let changed = Instant::now();
    let names: Vec<String> = parents
        .list_metadata(&ListParams::default())
        .await?
        .into_iter()
        .filter_map(|p| p.metadata.name)
        .collect();
    let (first, rest) = names.split_at(names.len() / 3);
    change_images(&parents, first).await?;
    eprintln!("bench-shards: a third of the changes sent; r3 is killed (SIGKILL)");
    r3.child.kill()?;
    r3.child.wait()?;
    change_images(&parents, rest).await?;
    if let Err(e) = wait_converged(&parents, n, Example::Webapp, false).await {
        return Err(failed(dir, &log, e));
    }
    eprintln!(
        "bench-shards: converged again {:.1} s after the first change; owners {:?}",
        changed.elapsed().as_secs_f64(),
        owners(&parents).await?
    );
    // A parent handed to r3 after its last change converged stays labelled r3 until r3's Lease expires and
    // the assigner moves it.
    let mut after = owners(&parents).await?;
    let settle = Instant::now();
    while after.keys().any(|k| k != "r1") && settle.elapsed() < Duration::from_secs(60) {
        tokio::time::sleep(Duration::from_secs(1)).await;
        after = owners(&parents).await?;
    }
    let mut r1 = r1;
    tokio::time::sleep(Duration::from_secs(3)).await;
    stop(&mut r1.child)?;
    let writes = super::audit::writes(&log)?;
    let findings = super::audit::check(
        &writes,
        "webapps",
        &["deployments", "services"],
        USER_PREFIX,
    );
    println!(
        "bench-shards: hand-over run, {n} WebApps: {} writes by the replicas ({:?}), {} protocol label writes, 409s {:?}",
        findings.writes, findings.by_replica, findings.protocol_writes, findings.conflicts
    );
    println!(
        "bench-shards: writes by a replica that did not own the parent then: {}; objects created twice: {}",
        findings.foreign.len(),
        findings.created_twice.len()
    );
    report_renewals(&writes)?;
    for f in findings.foreign.iter().take(10) {
        println!("  {f}");
    }
    if !findings.foreign.is_empty() || !findings.created_twice.is_empty() {
        bail!(
            "two writers: {:?}; created twice: {:?}",
            &findings.foreign[..findings.foreign.len().min(10)],
            &findings.created_twice[..findings.created_twice.len().min(10)]
        );
    }
    if after.keys().any(|k| k != "r1") {
        bail!("parents not with the one live replica a minute after the converge: {after:?}");
    }
    Ok(())
}

/// Prints each replica's membership Lease renewals as the audit log shows them.
fn report_renewals(writes: &[super::audit::Write]) -> anyhow::Result<()> {
    for (replica, r) in super::audit::renewals(writes, "webapp", USER_PREFIX)? {
        println!(
            "bench-shards: {replica}'s membership Lease: {} renewals ({} refused), slowest in kube-apiserver {:.2} s, longest gap {:.1} s, last received {}",
            r.written, r.failed, r.slowest, r.longest_gap, r.last
        );
    }
    Ok(())
}

/// A hand-over run that did not converge: the renewals reported and the audit log kept for a look.
fn failed(dir: tempfile::TempDir, log: &Path, e: anyhow::Error) -> anyhow::Error {
    if let Err(report) = super::audit::writes(log).and_then(|w| report_renewals(&w)) {
        eprintln!("bench-shards: cannot read the renewals: {report:#}");
    }
    let kept = dir.keep();
    eprintln!("bench-shards: the audit log is kept in {}", kept.display());
    e
}
