//! The work queue's priority rule on the embedded cluster (`tests::priority_scenario`): a change to one parent
//! runs before the 10,000 parents a re-list replays, and before the parents of an operator's first list; so
//! does a change to a child's spec, while a child's status update waits with the first list.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, PostParams};
use kubewright::Operator;
use kubewright::testing::ApiServer;
use tests::priority_scenario::{
    Pace, Passes, change_overtakes, child_write_overtakes, deployments_exist, install, name,
    passes_reach, reconciler, reconciler_with_child, run, served_first, statuses_written,
    workqueue_metric,
};

const PARENTS: usize = 10_000;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_runs_before_the_ten_thousand_parents_a_relist_replays() {
    let server = ApiServer::new();
    let client = server.client();
    install(&client, "default", PARENTS).await;
    let passes = Passes::default();
    // The first passes write each parent's status; the replayed ones take a while, as a backlog does.
    let pace = Pace::default();
    let _stop = run(Operator::new(client.clone()).controller(reconciler(
        "relisted",
        passes.clone(),
        pace.clone(),
    )));
    passes_reach(&passes, PARENTS).await;
    // Every first pass has written its status: a re-list now replays each parent once.
    statuses_written(&client, "default", PARENTS).await;
    assert_eq!(
        workqueue_metric("workqueue_adds_total", "relisted"),
        Some(PARENTS as u64),
        "the first list made each parent due once"
    );
    pace.store(3, Ordering::Relaxed);
    // The watch is lost and cannot resume (its resourceVersion is compacted, a later write made sure it is
    // behind): the cache re-lists, and every parent is due again, unchanged.
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    config_maps
        .create(
            &PostParams::default(),
            &ConfigMap {
                metadata: ObjectMeta {
                    name: Some("later".into()),
                    ..Default::default()
                },
                ..Default::default()
            },
        )
        .await
        .unwrap();
    server.compact();
    assert!(server.drop_watches() >= 1);
    passes_reach(&passes, PARENTS + 100).await;
    // The cache hands a re-list's parents to the queue in its store's (hashed) order, not the list's: the
    // change goes to a parent whose replayed pass has not started yet.
    let changed = not_replayed_yet(&passes);
    let (overtook, backlog) =
        change_overtakes(&client, "default", &changed, &passes, 2 * PARENTS).await;
    assert!(
        backlog > PARENTS / 2,
        "the change came while {backlog} replayed parents waited"
    );
    assert!(
        served_first(overtook, backlog),
        "{overtook} passes ran between the change and its pass, with {backlog} replayed parents waiting"
    );
    // The queue's metrics stay exact: every parent made due ran once, and none is left.
    passes_reach(&passes, 2 * PARENTS).await;
    let (adds, depth) = (
        workqueue_metric("workqueue_adds_total", "relisted"),
        workqueue_metric("workqueue_depth", "relisted"),
    );
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut twice = more_than_twice(&passes);
    // One parent may rightly run three times, the changed one, when its replayed pass started close to the
    // change: between the choice above and the change reaching the cache (`old, old, new`: the change then makes
    // it due once more), or between the change reaching the cache and its event reaching the queue (`old, new,
    // new`: the pass read the new spec, and the event, queued while it ran, makes it due once more, as in any
    // work queue). The second was seen with twice as many test threads as cores.
    let changed_ran_thrice = twice.iter().position(|(n, notes)| {
        *n == changed && (*notes == ["old", "old", "new"] || *notes == ["old", "new", "new"])
    });
    let extra = usize::from(changed_ran_thrice.is_some());
    if let Some(at) = changed_ran_thrice {
        twice.remove(at);
    }
    assert!(
        twice.is_empty(),
        "parents that ran more than twice: {twice:?}"
    );
    assert_eq!(
        adds,
        Some((2 * PARENTS + extra) as u64),
        "every parent made due once by the first list and once by the re-list"
    );
    assert_eq!(depth, Some(0));
    assert_eq!(
        passes.lock().unwrap().len(),
        2 * PARENTS + extra,
        "no pass twice"
    );
}

/// A parent whose pass since the first list's has not started: the last name not among them.
fn not_replayed_yet(passes: &Passes) -> String {
    let seen = passes.lock().unwrap();
    let replayed: std::collections::HashSet<&str> =
        seen[PARENTS..].iter().map(|(n, _)| n.as_str()).collect();
    (0..PARENTS)
        .rev()
        .map(name)
        .find(|n| !replayed.contains(n.as_str()))
        .expect("a parent not replayed yet")
}

/// The parents with more than two passes, and their notes in each.
fn more_than_twice(passes: &Passes) -> Vec<(String, Vec<String>)> {
    let mut by_parent: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for (name, note) in passes.lock().unwrap().iter() {
        by_parent
            .entry(name.clone())
            .or_default()
            .push(note.clone());
    }
    by_parent.into_iter().filter(|(_, n)| n.len() > 2).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_change_runs_before_the_parents_of_the_first_list() {
    let server = ApiServer::new();
    let client = server.client();
    install(&client, "default", 2_000).await;
    let passes = Passes::default();
    let _stop = run(Operator::new(client.clone()).controller(reconciler(
        "first-list",
        passes.clone(),
        Arc::new(AtomicU64::new(2)),
    )));
    passes_reach(&passes, 50).await;
    let (overtook, backlog) =
        change_overtakes(&client, "default", &name(1_999), &passes, 2_000).await;
    assert!(
        backlog > 1_000,
        "the change came with {backlog} parents waiting"
    );
    assert!(
        served_first(overtook, backlog),
        "{overtook} passes ran between the change and its pass, with {backlog} listed parents waiting"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_childs_status_update_waits_with_the_first_list_and_a_change_to_its_spec_does_not() {
    // The test plays the Deployment controller: the server writes no workload status of its own.
    let server = ApiServer::builder().workload_status(false).build();
    let client = server.client();
    install(&client, "default", 2_000).await;
    let passes = Passes::default();
    let _stop = run(
        Operator::new(client.clone()).controller(reconciler_with_child(
            "children",
            passes.clone(),
            Arc::new(AtomicU64::new(2)),
        )),
    );
    passes_reach(&passes, 50).await;
    // The first two parents that ran (the list's order is not their names'), once their Deployments exist.
    let first: Vec<String> = {
        let seen = passes.lock().unwrap();
        let mut names: Vec<String> = Vec::new();
        for (n, _) in seen.iter() {
            if !names.contains(n) {
                names.push(n.clone());
            }
        }
        names.truncate(2);
        names
    };
    deployments_exist(&client, "default", &first).await;
    // Another writer changes the first one's Deployment: its pass corrects it before the first list's.
    let (overtook, backlog) = child_write_overtakes(
        &client,
        "default",
        &first[0],
        false,
        serde_json::json!({"spec": {"replicas": 3}}),
        &passes,
        2_000,
    )
    .await;
    assert!(
        backlog > 1_000,
        "the spec change came with {backlog} parents waiting"
    );
    assert!(
        served_first(overtook, backlog),
        "{overtook} passes ran between the child's spec change and its parent's pass, with {backlog} listed parents waiting"
    );
    // Its controller reports on the second one's Deployment: that waits with the first list, and is read
    // in the parent's pass after it.
    let (overtook, backlog) = child_write_overtakes(
        &client,
        "default",
        &first[1],
        true,
        serde_json::json!({"status": {"observedGeneration": 1, "replicas": 1}}),
        &passes,
        2_000,
    )
    .await;
    assert!(
        backlog > 900,
        "the status update came with {backlog} parents waiting"
    );
    assert!(
        overtook + 50 >= backlog,
        "the status update's pass ran after {overtook} of the {backlog} listed parents' passes"
    );
}
