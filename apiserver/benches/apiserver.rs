//! Throughput and memory of the in-memory API server at 10,000 objects with 10 concurrent watchers.
//!
//! Run with `cargo bench -p kubewright-apiserver --bench apiserver`. Prints figures; asserts nothing
//! about time (these machines are shared and noisy).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams, WatchParams};
use kubewright_apiserver::ApiServer;

const OBJECTS: usize = 10_000;
const WATCHERS: usize = 10;
const CONCURRENCY: usize = 16;

fn memory() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

fn cm(i: usize) -> ConfigMap {
    let mut c = ConfigMap::default();
    c.metadata.name = Some(format!("cm-{i:05}"));
    c.metadata.labels = Some([("shard".to_string(), (i % 10).to_string())].into());
    c.data = Some(
        [
            ("index".to_string(), i.to_string()),
            ("payload".to_string(), "x".repeat(64)),
        ]
        .into(),
    );
    c
}

async fn timed_patches(api: &Api<ConfigMap>, n: usize) -> f64 {
    let started = Instant::now();
    for i in 0..n {
        let patch = serde_json::json!({"data": {"touched": i.to_string()}});
        api.patch(
            &format!("cm-{:05}", i % 100),
            &PatchParams::default(),
            &Patch::Merge(patch),
        )
        .await
        .expect("patch");
    }
    n as f64 / started.elapsed().as_secs_f64()
}

#[tokio::main]
async fn main() {
    let server = ApiServer::builder().request_log(false).build();
    let client = server.client();
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let (rss0, _) = memory();

    // Ten watchers that count what they receive.
    let received = Arc::new(AtomicUsize::new(0));
    let mut watchers = Vec::new();
    for _ in 0..WATCHERS {
        let api = api.clone();
        let received = received.clone();
        watchers.push(tokio::spawn(async move {
            let stream = api
                .watch(&WatchParams::default().timeout(3600), "0")
                .await
                .expect("watch");
            let mut stream = stream.boxed();
            while let Some(Ok(_)) = stream.next().await {
                received.fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    while server.watcher_count() < WATCHERS {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }

    // Baseline write cost with few objects.
    for i in 0..100 {
        api.create(&PostParams::default(), &cm(i))
            .await
            .expect("create");
    }
    let patch_small = timed_patches(&api, 500).await;

    // Creates.
    let started = Instant::now();
    futures::stream::iter(100..OBJECTS)
        .map(|i| {
            let api = api.clone();
            async move { api.create(&PostParams::default(), &cm(i)).await.map(|_| ()) }
        })
        .buffer_unordered(CONCURRENCY)
        .try_collect::<Vec<_>>()
        .await
        .expect("creates");
    let create_secs = started.elapsed().as_secs_f64();
    let creates = (OBJECTS - 100) as f64 / create_secs;

    // Watch fan-out: every watcher must see every create.
    let expected = WATCHERS * (OBJECTS + 500);
    while received.load(Ordering::Relaxed) < expected {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let fanout_secs = started.elapsed().as_secs_f64();
    let delivered = WATCHERS * (OBJECTS - 100);
    let fanout = delivered as f64 / fanout_secs;

    // Write cost with 10k objects stored: should match the small case (O(watchers), not O(objects)).
    let patch_large = timed_patches(&api, 500).await;

    // Lists.
    let started = Instant::now();
    let full_lists = 10;
    for _ in 0..full_lists {
        let l = api.list(&ListParams::default()).await.expect("list");
        assert_eq!(l.items.len(), OBJECTS);
    }
    let list_secs = started.elapsed().as_secs_f64() / full_lists as f64;
    let started = Instant::now();
    let mut pages = 0;
    let mut token: Option<String> = None;
    loop {
        let mut lp = ListParams::default().limit(500);
        if let Some(t) = &token {
            lp = lp.continue_token(t);
        }
        let page = api.list(&lp).await.expect("page");
        pages += 1;
        token = page.metadata.continue_;
        if token.is_none() {
            break;
        }
    }
    let paged_secs = started.elapsed().as_secs_f64();
    let started = Instant::now();
    let selected = 20;
    for _ in 0..selected {
        let l = api
            .list(&ListParams::default().labels("shard=3"))
            .await
            .expect("list");
        assert_eq!(l.items.len(), OBJECTS / 10);
    }
    let selector_secs = started.elapsed().as_secs_f64() / selected as f64;

    // Gets.
    let started = Instant::now();
    for i in 0..2_000 {
        api.get(&format!("cm-{:05}", i * 5)).await.expect("get");
    }
    let gets = 2_000.0 / started.elapsed().as_secs_f64();

    let (rss, hwm) = memory();
    println!("in-memory API server, {OBJECTS} ConfigMaps, {WATCHERS} watchers (release build)");
    println!("  create            {creates:>10.0} req/s  ({CONCURRENCY} concurrent clients)");
    println!(
        "  watch fan-out     {fanout:>10.0} events/s delivered ({delivered} events to {WATCHERS} watchers)"
    );
    println!("  patch @ 100 objs  {patch_small:>10.0} req/s");
    println!(
        "  patch @ 10k objs  {patch_large:>10.0} req/s  (ratio to 100 objects {:.2}; 1.00 means no growth)",
        patch_large / patch_small
    );
    println!("  get               {gets:>10.0} req/s");
    println!(
        "  list all 10k      {:>10.1} ms per list ({:.0} objects/s)",
        list_secs * 1e3,
        OBJECTS as f64 / list_secs
    );
    println!(
        "  list paged (500)  {:>10.1} ms for {pages} pages",
        paged_secs * 1e3
    );
    println!(
        "  list shard=3      {:>10.1} ms per list (1k of 10k match)",
        selector_secs * 1e3
    );
    println!(
        "  memory            rss {} MiB (start {} MiB), peak {} MiB",
        rss / 1024,
        rss0 / 1024,
        hwm / 1024
    );
    for w in watchers {
        w.abort();
    }
}
