//! Sharding's membership on kube-apiserver (`kubewright::sharding`, the part of #43 built so far): members
//! join with their own Leases, one that stops renewing is dead after the lease duration by the observer's
//! clock, one that releases is gone at once, and every member agrees on who owns a parent.

use std::time::Duration;

use kubewright::sharding::{MemberLease, Members, Sharding, owner};
use kubewright::testing::envtest::ControlPlane;

#[tokio::test]
async fn members_join_expire_and_leave_on_kube_apiserver() {
    let Some(cp) = ControlPlane::shared_or_skip("sharding membership on kube-apiserver").await
    else {
        return;
    };
    let ns = cp.namespace().await.unwrap();
    let client = cp.client().unwrap();
    let member = |identity: &str| {
        MemberLease::new(
            client.clone(),
            Sharding::new("db", &ns)
                .identity(identity)
                .lease_duration(Duration::from_secs(2))
                .renew_deadline(Duration::from_millis(1500))
                .retry_period(Duration::from_millis(300)),
        )
    };
    let mut members = Members::new(client.clone(), &ns, "db");
    let (mut a, mut b) = (member("replica-a"), member("replica-b"));
    a.renew().await.unwrap();
    b.renew().await.unwrap();
    let live = members.live().await.unwrap();
    assert_eq!(live, ["replica-a", "replica-b"]);
    let parents: Vec<String> = (0..100).map(|i| format!("{ns}/db-{i}")).collect();
    let mine = parents
        .iter()
        .filter(|p| owner(p, &live) == Some("replica-a"))
        .count();
    assert!((25..=75).contains(&mine), "{mine} of 100");

    let holding = tokio::spawn(async move { a.hold().await });
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert_eq!(members.live().await.unwrap(), ["replica-a", "replica-b"]);
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let live = members.live().await.unwrap();
    assert_eq!(live, ["replica-a"], "replica-b stopped renewing");
    assert!(parents.iter().all(|p| owner(p, &live) == Some("replica-a")));
    b.renew().await.unwrap();
    assert_eq!(members.live().await.unwrap(), ["replica-a", "replica-b"]);
    b.release().await;
    assert_eq!(members.live().await.unwrap(), ["replica-a"]);
    holding.abort();
}

#[tokio::test]
async fn the_assigner_assigns_hands_over_and_reassigns_on_kube_apiserver() {
    let Some(cp) = ControlPlane::shared_or_skip("the sharding assigner on kube-apiserver").await
    else {
        return;
    };
    use kube::CustomResourceExt;
    cp.install_crds([tests::priority_scenario::Backlog::crd()])
        .await
        .unwrap();
    let ns = cp.namespace().await.unwrap();
    let client = cp.client().unwrap();
    tests::sharding_scenario::assigns_hands_over_and_reassigns(&client, &ns).await;
}

/// Three sharded replicas of one operator on kube-apiserver: a join during a converge, a graceful stop and a
/// kill, with no parent ever reconciled by two replicas at once (`tests::sharded_operators`).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sharded_replicas_share_the_parents_and_hand_them_over_on_kube_apiserver() {
    let Some(cp) = ControlPlane::shared_or_skip("sharded replicas on kube-apiserver").await else {
        return;
    };
    use kube::CustomResourceExt;
    cp.install_crds([tests::priority_scenario::Backlog::crd()])
        .await
        .unwrap();
    let ns = cp.namespace().await.unwrap();
    let client = cp.client().unwrap();
    tests::sharded_operators::replicas_share_join_leave_and_die(&client, &ns, 40).await;
}
