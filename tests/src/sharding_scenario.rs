//! The sharding assigner (`kubewright::sharding::Assigner`, the part of #43 built so far) on a cluster: it
//! assigns unlabelled parents over the live members, relabels a departed member's parents and their children,
//! and asks a live owner to hand a parent over (the drain label) when a member joins, without moving it.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::{Api, ObjectMeta, Patch, PatchParams, PostParams};
use kube::{Client, Resource, ResourceExt};
use kubewright::sharding::{
    Assigner, DRAIN_LABEL, MemberLease, Members, SHARD_LABEL, Sharding, owner,
};
use serde_json::json;

use crate::priority_scenario::{Backlog, install_parents, name};

const PARENTS: usize = 40;

/// A client sending through `client` that counts its lists of ConfigMaps (GETs of the collection, watches
/// apart): the requests the server receives, on either server.
fn counting_configmap_lists(client: &Client) -> (Client, Arc<AtomicUsize>) {
    let lists = Arc::new(AtomicUsize::new(0));
    let (inner, counter) = (client.clone(), lists.clone());
    let service = tower::service_fn(move |request: http::Request<kube::client::Body>| {
        let list = request.method() == http::Method::GET
            && request.uri().path().ends_with("/configmaps")
            && !request.uri().query().unwrap_or_default().contains("watch=");
        if list {
            counter.fetch_add(1, Ordering::SeqCst);
        }
        let inner = inner.clone();
        async move { inner.send(request).await }
    });
    (
        Client::new(service, client.default_namespace().to_string()),
        lists,
    )
}

fn labels_of(o: &impl Resource) -> BTreeMap<String, String> {
    o.meta().labels.clone().unwrap_or_default()
}

/// Runs the scenario in `ns` (the Backlog CRD installed).
pub async fn assigns_hands_over_and_reassigns(client: &Client, ns: &str) {
    install_parents(client, ns, PARENTS).await;
    let backlogs: Api<Backlog> = Api::namespaced(client.clone(), ns);
    let config_maps: Api<ConfigMap> = Api::namespaced(client.clone(), ns);
    let group = format!("shards-{ns}");
    let member =
        |id: &str| MemberLease::new(client.clone(), Sharding::new(&group, ns).identity(id));
    let mut members = Members::new(client.clone(), ns, &group);
    let (counted, configmap_lists) = counting_configmap_lists(client);
    let assigner = Assigner::<Backlog>::new(counted)
        .within(ns)
        .child::<ConfigMap>();
    let (mut a, mut b, mut c) = (member("a"), member("b"), member("c"));
    a.renew().await.unwrap();
    b.renew().await.unwrap();

    // Every parent gets the owner the ring names; the two members share them.
    let round = assigner.round(&mut members).await.unwrap();
    assert_eq!((round.assigned, round.conflicts), (PARENTS, 0));
    let two = ["a".to_string(), "b".to_string()];
    let mut of_b = 0;
    for p in backlogs.list(&Default::default()).await.unwrap() {
        let key = format!("{ns}/{}", p.name_any());
        let shard = labels_of(&p).get(SHARD_LABEL).cloned();
        assert_eq!(shard.as_deref(), owner(&key, &two), "{key}");
        of_b += usize::from(shard.as_deref() == Some("b"));
        // A child of each parent, labelled with its owner as the runtime will label the children it creates.
        let child = ConfigMap {
            metadata: ObjectMeta {
                name: Some(format!("{}-child", p.name_any())),
                labels: Some([(SHARD_LABEL.to_string(), shard.unwrap())].into()),
                owner_references: Some(vec![OwnerReference {
                    api_version: "priority.example.dev/v1".into(),
                    kind: "Backlog".into(),
                    name: p.name_any(),
                    uid: p.uid().unwrap(),
                    controller: Some(true),
                    ..OwnerReference::default()
                }]),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        };
        config_maps
            .create(&PostParams::default(), &child)
            .await
            .unwrap();
    }
    assert!((5..=35).contains(&of_b), "b owns {of_b} of {PARENTS}");
    assert_eq!(
        assigner.round(&mut members).await.unwrap().assigned,
        0,
        "settled"
    );

    // `b` leaves (its controllers stopped, its Lease released): its parents and their children go to `a`.
    b.release().await;
    configmap_lists.store(0, Ordering::SeqCst);
    let round = assigner.round(&mut members).await.unwrap();
    assert_eq!(round.live, ["a"]);
    assert_eq!((round.reassigned, round.children_moved), (of_b, of_b));
    // One list of the dead member's children for the round, not one per parent (10,000 parents made that a
    // flood of lists).
    assert_eq!(configmap_lists.load(Ordering::SeqCst), 1);
    for p in backlogs.list(&Default::default()).await.unwrap() {
        assert_eq!(
            labels_of(&p).get(SHARD_LABEL).map(String::as_str),
            Some("a")
        );
        let child = config_maps
            .get(&format!("{}-child", p.name_any()))
            .await
            .unwrap();
        assert_eq!(
            labels_of(&child).get(SHARD_LABEL).map(String::as_str),
            Some("a")
        );
    }

    // `c` joins: the parents the ring now gives it are asked of `a`, which keeps them until it hands them over.
    c.renew().await.unwrap();
    let round = assigner.round(&mut members).await.unwrap();
    let to_c = (0..PARENTS)
        .filter(|i| owner(&format!("{ns}/{}", name(*i)), &["a".into(), "c".into()]) == Some("c"))
        .count();
    assert!(to_c > 0);
    assert_eq!((round.draining, round.reassigned), (to_c, 0));
    assert_eq!(
        assigner.round(&mut members).await.unwrap().draining,
        0,
        "asked once"
    );
    for p in backlogs.list(&Default::default()).await.unwrap() {
        let l = labels_of(&p);
        assert_eq!(
            l.get(SHARD_LABEL).map(String::as_str),
            Some("a"),
            "not moved by the assigner"
        );
        if let Some(to) = l.get(DRAIN_LABEL) {
            assert_eq!(to, "c");
            // The owner's side of the hand-over (not built yet): children, then the parent.
            let child = format!("{}-child", p.name_any());
            config_maps
                .patch(
                    &child,
                    &PatchParams::default(),
                    &Patch::Merge(json!({"metadata": {"labels": {SHARD_LABEL: "c"}}})),
                )
                .await
                .unwrap();
            backlogs
                .patch(
                    &p.name_any(),
                    &PatchParams::default(),
                    &Patch::Merge(
                        json!({"metadata": {"labels": {SHARD_LABEL: "c", DRAIN_LABEL: null}}}),
                    ),
                )
                .await
                .unwrap();
        }
    }
    let round = assigner.round(&mut members).await.unwrap();
    assert_eq!(
        (
            round.assigned,
            round.draining,
            round.reassigned,
            round.cancelled
        ),
        (0, 0, 0, 0),
        "every parent where the ring puts it"
    );
    a.release().await;
    c.release().await;
}
