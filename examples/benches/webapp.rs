//! Converges 1,000 and 10,000 WebApps (the `webapp-by-hand` operator, exactly as shipped) on the in-memory
//! API server and prints wall time, CPU time, API requests by verb and peak memory.
//!
//! ```text
//! cargo bench -p examples --bench webapp             # 1,000 then 10,000
//! cargo bench -p examples --bench webapp -- 1000     # some sizes only
//! ```
//!
//! Each size runs in a child process of its own, so that its peak memory (`VmHWM`) is its own. A run:
//!
//! 1. *setup*: installs the CRD, one ConfigMap that every WebApp names, and N WebApps (the operator is not
//!    running yet);
//! 2. *converge*: starts `Operator` with `examples::webapp::reconciler()` and waits until every WebApp has its
//!    Deployment, its Service and `Ready=True` with `observedGeneration` 1 (the time is that of the last
//!    write);
//! 3. *converged pass*: stops the operator and starts a new one, which lists everything and reconciles every
//!    WebApp once more: 0 writes expected, and no reads besides one list and one watch per cached kind;
//! 4. *churn*: a third operator holds every WebApp, then all are deleted: the operator's memory with them and
//!    after (per-parent state must be freed with the parent).
//!
//! Requests are counted from the server's request log, drained as the run goes (`writes` are the successful
//! create, update, patch and delete requests; failures are listed with their code). CPU time is the process's
//! user + system time (`getrusage`). Memory: the process's peak (`VmHWM`: API server, client and operator
//! together), and the operator's own share, the resident memory released when it stops (after `malloc_trim`);
//! and the caches alone: the heap bytes (counted by the bench's allocator) that fresh caches of the four kinds
//! hold once synced, per cached object, in total and kind by kind (WebApps typed, as the operator holds its
//! parents; Deployments, Services and the ConfigMap compact, as it holds children and tracked kinds; each kind's
//! figure includes its fixed costs, such as the 192 KiB of its change channel). Prints figures only; asserts nothing about time (these machines are shared and noisy).

use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicIsize, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use examples::webapp::cli::ensure_crd;
use examples::webapp::{WebApp, reconciler, sample, sample_config_map};
use futures::StreamExt;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Service};
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use kubewright::testing::ApiServer;
use kubewright::testing::apiserver::RequestRecord;
use kubewright::{CacheOptions, Caches, Form, Operator};
use tokio::sync::oneshot;
use tracing_subscriber::Layer;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

const CONFIG_MAP: &str = "shared-config";
const SETTLE: Duration = Duration::from_secs(2);
const LIMIT: Duration = Duration::from_secs(400);

/// Counts completed reconciles: the `pass` span the runtime opens around each one.
#[derive(Clone, Default)]
struct Reconciles {
    done: Arc<AtomicU64>,
}

impl<S> Layer<S> for Reconciles
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    fn on_close(&self, id: tracing::span::Id, ctx: tracing_subscriber::layer::Context<'_, S>) {
        if ctx.metadata(&id).is_some_and(|m| m.name() == "pass") {
            self.done.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Requests by verb and resource (with subresource and a mark for failures), drained from the server's log.
#[derive(Default)]
struct Requests {
    by: Mutex<BTreeMap<String, u64>>,
    writes: AtomicU64,
    last_write: Mutex<Option<Instant>>,
}

impl Requests {
    fn add(&self, records: Vec<RequestRecord>) {
        if records.is_empty() {
            return;
        }
        let mut by = self.by.lock().unwrap_or_else(|e| e.into_inner());
        for r in records {
            if r.query.contains("bench.example.dev") {
                continue;
            }
            let verb = r.verb.map(|v| v.as_str()).unwrap_or("other");
            let mut key = format!("{verb:<6} {}", r.resource);
            if let Some(sub) = &r.subresource {
                key.push('/');
                key.push_str(sub);
            }
            if !(200..300).contains(&r.code) {
                key.push_str(&format!(" ({})", r.code));
            }
            *by.entry(key).or_default() += 1;
            if r.is_write() {
                self.writes.fetch_add(1, Ordering::Relaxed);
                *self.last_write.lock().unwrap_or_else(|e| e.into_inner()) = Some(Instant::now());
            }
        }
    }

    fn take(&self) -> BTreeMap<String, u64> {
        self.writes.store(0, Ordering::Relaxed);
        std::mem::take(&mut *self.by.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

fn cpu_seconds() -> f64 {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage writes a `rusage` into the pointer it is given, which points to one.
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()) };
    if rc != 0 {
        return f64::NAN;
    }
    // SAFETY: getrusage succeeded, so it initialised the struct (and zeroed() had already).
    let usage = unsafe { usage.assume_init() };
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    secs(usage.ru_utime) + secs(usage.ru_stime)
}

/// The system allocator, counting the bytes allocated and not yet freed.
struct Counting;

static LIVE_BYTES: AtomicIsize = AtomicIsize::new(0);

// SAFETY: forwards every call to `System` unchanged; only counts sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE_BYTES.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: the caller's contract is System's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE_BYTES.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: the caller's contract is System's.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE_BYTES.fetch_add(
            new_size as isize - layout.size() as isize,
            Ordering::Relaxed,
        );
        // SAFETY: the caller's contract is System's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// What the cache of one kind holds once synced: its form, how many objects, and the heap bytes.
struct KindBytes {
    kind: &'static str,
    form: &'static str,
    objects: usize,
    bytes: isize,
}

/// The heap bytes that fresh caches of the operator's four kinds hold once synced, kind by kind (each cache
/// started alone, in its own `Caches`, and kept while the next is measured): their objects, indexes and watches,
/// counted by the allocator while nothing else runs. WebApps are held as the operator holds its parents (typed),
/// the other kinds as it holds children and tracked kinds (compact).
async fn cache_bytes(client: &kube::Client) -> anyhow::Result<Vec<KindBytes>> {
    async fn one<K: kubewright::CachedKind>(
        client: &kube::Client,
        parent: bool,
        kept: &mut Vec<(Caches, Vec<tokio::task::JoinHandle<()>>)>,
    ) -> anyhow::Result<KindBytes> {
        tokio::time::sleep(SETTLE).await;
        let before = LIVE_BYTES.load(Ordering::Relaxed);
        let caches = Caches::new(client.clone());
        let cache = if parent {
            caches.configure::<K>(CacheOptions::all().typed())?
        } else {
            caches.ensure::<K>()
        };
        let watches: Vec<_> = caches
            .take_watches()
            .into_iter()
            .map(tokio::spawn)
            .collect();
        caches.ready_within(LIMIT).await?;
        tokio::time::sleep(SETTLE).await;
        let bytes = LIVE_BYTES.load(Ordering::Relaxed) - before;
        let form = match cache.form() {
            Some(Form::Typed) => "typed",
            Some(Form::Compact) => "compact",
            None => "not started",
        };
        let objects = cache.len();
        drop(cache);
        kept.push((caches, watches));
        Ok(KindBytes {
            kind: <K as kube::Resource>::kind(&()).into_owned().leak(),
            form,
            objects,
            bytes,
        })
    }
    let mut kept = Vec::new();
    let all = vec![
        one::<WebApp>(client, true, &mut kept).await?,
        one::<Deployment>(client, false, &mut kept).await?,
        one::<Service>(client, false, &mut kept).await?,
        one::<ConfigMap>(client, false, &mut kept).await?,
    ];
    for (caches, watches) in kept {
        for w in watches {
            w.abort();
            let _ = w.await;
        }
        drop(caches);
    }
    Ok(all)
}

/// The heap bytes the same objects take as plain values (listed, stripped as the caches strip them, held in
/// vectors): what any cache of them must hold at least.
async fn objects_bytes(client: &kube::Client) -> anyhow::Result<isize> {
    async fn held<K>(client: &kube::Client) -> anyhow::Result<Vec<K>>
    where
        K: kube::Resource<DynamicType = ()> + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
    {
        let mut items = Api::<K>::all(client.clone())
            .list(&ListParams::default())
            .await?
            .items;
        items.iter_mut().for_each(kubewright::cache::strip);
        items.shrink_to_fit();
        Ok(items)
    }
    tokio::time::sleep(SETTLE).await;
    let before = LIVE_BYTES.load(Ordering::Relaxed);
    let all = (
        held::<WebApp>(client).await?,
        held::<Deployment>(client).await?,
        held::<Service>(client).await?,
        held::<ConfigMap>(client).await?,
    );
    let bytes = LIVE_BYTES.load(Ordering::Relaxed) - before;
    drop(all);
    Ok(bytes)
}

/// Returns freed heap memory to the system, so that `VmRSS` tells what is still in use.
fn trim() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases free heap pages; it takes no pointers.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// `VmRSS` and `VmHWM` (peak), in MiB.
fn memory_mib() -> (f64, f64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(f64::NAN)
            / 1024.0
    };
    (field("VmRSS:"), field("VmHWM:"))
}

struct Phase {
    name: &'static str,
    wall: Duration,
    cpu: f64,
    reconciles: u64,
    requests: BTreeMap<String, u64>,
}

impl Phase {
    fn print(&self, n: usize) {
        let total: u64 = self.requests.values().sum();
        let writes: u64 = self
            .requests
            .iter()
            .filter(|(k, _)| {
                ["create", "update", "patch", "delete"]
                    .iter()
                    .any(|v| k.starts_with(v))
                    && !k.ends_with(')')
            })
            .map(|(_, c)| c)
            .sum();
        println!(
            "  {:<15} wall {:>8.2}s  cpu {:>8.2}s  reconciles {:>7} ({:.2}/WebApp)  requests {:>7}  writes {:>7} ({:.2}/WebApp)",
            self.name,
            self.wall.as_secs_f64(),
            self.cpu,
            self.reconciles,
            self.reconciles as f64 / n as f64,
            total,
            writes,
            writes as f64 / n as f64,
        );
        for (k, c) in &self.requests {
            println!("      {c:>8}  {k}");
        }
    }
}

/// A label selector that matches every object; the benchmark's own lists carry it, so they are not counted.
const OWN: &str = "!bench.example.dev/own";

/// `None` when all N WebApps are Ready with observedGeneration 1 and have both children; otherwise what is not.
async fn not_converged(client: &kube::Client, n: usize) -> anyhow::Result<Option<String>> {
    let own = ListParams::default().labels(OWN);
    let all = Api::<WebApp>::namespaced(client.clone(), "default")
        .list(&own)
        .await?
        .items;
    let mut states: BTreeMap<String, usize> = BTreeMap::new();
    for a in &all {
        let s = a.status.clone().unwrap_or_default();
        let r = s
            .conditions
            .iter()
            .find(|c| c.type_ == "Ready")
            .map(|c| format!("{} {}", c.status, c.reason));
        *states
            .entry(format!(
                "observedGeneration {:?}, Ready {r:?}",
                s.observed_generation
            ))
            .or_default() += 1;
    }
    let ready = states
        .get("observedGeneration Some(1), Ready Some(\"True Ready\")")
        .copied()
        .unwrap_or(0);
    let deployments = Api::<Deployment>::namespaced(client.clone(), "default")
        .list(&own)
        .await?
        .items
        .len();
    let services = Api::<Service>::namespaced(client.clone(), "default")
        .list(&own)
        .await?
        .items
        .len();
    Ok((ready != n || deployments != n || services != n).then(|| {
        format!("{ready} ready, {deployments} deployments, {services} services of {n}; {states:?}")
    }))
}

async fn run_one(n: usize, reconciles: Reconciles) -> anyhow::Result<()> {
    let server = ApiServer::builder().request_log(true).build();
    let client = server.client();
    let requests = Arc::new(Requests::default());
    let drain = {
        let (server, requests) = (server.clone(), requests.clone());
        tokio::spawn(async move {
            loop {
                requests.add(server.take_requests());
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        })
    };
    let flush = || requests.add(server.take_requests());
    let (rss0, _) = memory_mib();

    // Setup: the CRD, the ConfigMap, N WebApps.
    let started = Instant::now();
    let cpu0 = cpu_seconds();
    ensure_crd(&client).await?;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    cms.create(&PostParams::default(), &sample_config_map(CONFIG_MAP))
        .await?;
    let apps: Api<WebApp> = Api::namespaced(client.clone(), "default");
    let creates = futures::stream::iter(0..n).map(|i| {
        let apps = apps.clone();
        async move {
            apps.create(
                &PostParams::default(),
                &sample(&format!("app-{i:05}"), Some(CONFIG_MAP)),
            )
            .await
        }
    });
    let created: Vec<_> = creates.buffer_unordered(16).collect().await;
    for c in created {
        c?;
    }
    flush();
    let setup = Phase {
        name: "setup",
        wall: started.elapsed(),
        cpu: cpu_seconds() - cpu0,
        reconciles: 0,
        requests: requests.take(),
    };
    let (rss_setup, _) = memory_mib();

    // Converge.
    let done0 = reconciles.done.load(Ordering::Relaxed);
    let cpu0 = cpu_seconds();
    let started = Instant::now();
    let (stop, stopped) = oneshot::channel::<()>();
    let op = Operator::new(client.clone())
        .shutdown_deadline(Duration::from_secs(30))
        .controller(reconciler());
    let running = tokio::spawn(op.run_until(async move {
        let _ = stopped.await;
    }));
    // Every WebApp needs at least: apply Deployment, apply Service, status patch (3 writes, plus events).
    loop {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let last = *requests
            .last_write
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let quiet = last.is_some_and(|t| t.elapsed() >= SETTLE);
        // Quiet may only mean that the machine is busy: the state decides (lists not counted).
        if quiet && requests.writes.load(Ordering::Relaxed) >= 3 * n as u64 {
            match not_converged(&client, n).await? {
                None => break,
                Some(what) => eprintln!("quiet but not converged yet: {what}"),
            }
        }
        anyhow::ensure!(
            started.elapsed() < LIMIT,
            "did not converge in {LIMIT:?}: {:?}",
            not_converged(&client, n).await?
        );
    }
    flush();
    let last_write = requests
        .last_write
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .unwrap_or_else(Instant::now);
    let converge = Phase {
        name: "converge",
        wall: last_write.duration_since(started),
        cpu: cpu_seconds() - cpu0,
        reconciles: reconciles.done.load(Ordering::Relaxed) - done0,
        requests: requests.take(),
    };
    let (rss_converged, _) = memory_mib();

    // A converged pass: a restarted operator reconciles everything once more.
    let _ = stop.send(());
    running.await??;
    flush();
    requests.take();
    let done0 = reconciles.done.load(Ordering::Relaxed);
    let cpu0 = cpu_seconds();
    let started = Instant::now();
    let (stop, stopped) = oneshot::channel::<()>();
    let op = Operator::new(client.clone()).controller(reconciler());
    let running = tokio::spawn(op.run_until(async move {
        let _ = stopped.await;
    }));
    let mut last_count = 0;
    let mut last_change = Instant::now();
    loop {
        tokio::time::sleep(Duration::from_millis(50)).await;
        let count = reconciles.done.load(Ordering::Relaxed) - done0;
        if count != last_count {
            last_count = count;
            last_change = Instant::now();
        }
        if count >= n as u64 && last_change.elapsed() >= SETTLE {
            break;
        }
        anyhow::ensure!(
            started.elapsed() < LIMIT,
            "only {count} reconciles in {LIMIT:?}"
        );
    }
    flush();
    let pass = Phase {
        name: "converged pass",
        wall: last_change.duration_since(started),
        cpu: cpu_seconds() - cpu0,
        reconciles: last_count,
        requests: requests.take(),
    };
    // The operator's own memory: what is freed when it stops (its caches, tracker, queues).
    trim();
    let (rss_running, _) = memory_mib();
    let _ = stop.send(());
    running.await??;
    trim();
    let (rss_server, _) = memory_mib();
    let caches_held = cache_bytes(&client).await?;
    let objects_held = objects_bytes(&client).await?;

    // Churn: an operator holding every WebApp sees them all deleted; its per-parent state must go with them.
    let done0 = reconciles.done.load(Ordering::Relaxed);
    let (stop, stopped) = oneshot::channel::<()>();
    let op = Operator::new(client.clone()).controller(reconciler());
    let running = tokio::spawn(op.run_until(async move {
        let _ = stopped.await;
    }));
    let started = Instant::now();
    while reconciles.done.load(Ordering::Relaxed) - done0 < n as u64 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        anyhow::ensure!(
            started.elapsed() < LIMIT,
            "the churn operator did not start"
        );
    }
    tokio::time::sleep(SETTLE).await;
    trim();
    let (rss_loaded, _) = memory_mib();
    apps.delete_collection(&DeleteParams::default(), &ListParams::default())
        .await?;
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "default");
    loop {
        let left = apps
            .list(&ListParams::default().limit(1))
            .await?
            .items
            .len()
            + deployments
                .list(&ListParams::default().limit(1))
                .await?
                .items
                .len();
        if left == 0 {
            break;
        }
        anyhow::ensure!(started.elapsed() < LIMIT, "the WebApps did not go");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(SETTLE).await;
    trim();
    let (rss_churned, _) = memory_mib();
    let _ = stop.send(());
    running.await??;
    drain.abort();
    trim();
    let (rss_empty, _) = memory_mib();
    let (_, hwm) = memory_mib();
    let cached = 3 * n + 1;

    println!("{n} WebApps (each: a Deployment and a Service; all read one tracked ConfigMap)");
    setup.print(n);
    converge.print(n);
    pass.print(n);
    println!(
        "  memory: peak (VmHWM) {hwm:.0} MiB; rss at start {rss0:.0} MiB, after setup {rss_setup:.0} MiB, converged {rss_converged:.0} MiB"
    );
    println!(
        "  memory in use (after malloc_trim): {rss_running:.0} MiB with the operator running, {rss_server:.0} MiB without it: the operator holds {:.0} MiB for {cached} cached objects ({:.1} KiB each)",
        rss_running - rss_server,
        (rss_running - rss_server) * 1024.0 / cached as f64,
    );
    let held: isize = caches_held.iter().map(|k| k.bytes).sum();
    println!(
        "  caches alone: {:.1} MiB of heap for {cached} cached objects ({:.2} KiB each)",
        held as f64 / (1024.0 * 1024.0),
        held as f64 / 1024.0 / cached as f64,
    );
    let kinds: Vec<String> = caches_held
        .iter()
        .map(|k| {
            format!(
                "{} ({}) {} B for {} ({:.2} KiB)",
                k.kind,
                k.form,
                k.bytes / k.objects.max(1) as isize,
                k.objects,
                k.bytes as f64 / 1024.0 / k.objects.max(1) as f64,
            )
        })
        .collect();
    println!("  caches per object, by kind: {}", kinds.join("; "));
    println!(
        "  the same objects as plain values: {:.1} MiB ({:.2} KiB each)",
        objects_held as f64 / (1024.0 * 1024.0),
        objects_held as f64 / 1024.0 / cached as f64,
    );
    println!(
        "  churn: the operator holds {:.0} MiB with {n} WebApps and {:.0} MiB once they are deleted (after malloc_trim)",
        rss_loaded - rss_server,
        rss_churned - rss_empty,
    );
    println!(
        "  per WebApp: converge {:.3} ms wall, {:.3} ms cpu; converged pass {:.3} ms wall, {:.3} ms cpu",
        converge.wall.as_secs_f64() * 1e3 / n as f64,
        converge.cpu * 1e3 / n as f64,
        pass.wall.as_secs_f64() * 1e3 / n as f64,
        pass.cpu * 1e3 / n as f64,
    );
    Ok(())
}

fn child(n: usize) -> anyhow::Result<()> {
    let reconciles = Reconciles::default();
    tracing_subscriber::registry()
        .with(reconciles.clone())
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .with_filter(tracing_subscriber::EnvFilter::new("warn")),
        )
        .try_init()?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    rt.block_on(run_one(n, reconciles))
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let [flag, n] = args.as_slice()
        && flag == "--child"
    {
        return child(n.parse()?);
    }
    // `cargo bench` passes `--bench`; sizes are the numeric arguments.
    let mut sizes: Vec<usize> = args.iter().filter_map(|a| a.parse().ok()).collect();
    if sizes.is_empty() {
        sizes = vec![1_000, 10_000];
    }
    let exe = std::env::current_exe()?;
    println!(
        "webapp-by-hand on the in-memory API server, {} CPUs, release build: {}",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        !cfg!(debug_assertions)
    );
    for n in sizes {
        let status = std::process::Command::new(&exe)
            .args(["--child", &n.to_string()])
            .status()?;
        anyhow::ensure!(status.success(), "the run with {n} WebApps failed");
    }
    Ok(())
}
