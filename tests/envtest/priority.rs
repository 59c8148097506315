//! The work queue's priority rule on kube-apiserver (`tests::priority_scenario`): an operator started on
//! 3,000 parents serves a change to the last one listed before the rest of its first list.

use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use kubewright::Operator;
use kubewright::testing::envtest::ControlPlane;
use tests::priority_scenario::{
    Backlog, Passes, change_overtakes, install_parents, name, passes_reach, reconciler, run,
    served_first,
};

const PARENTS: usize = 3_000;

#[tokio::test]
async fn a_change_runs_before_the_parents_of_the_first_list_on_kube_apiserver() {
    let Some(cp) =
        ControlPlane::shared_or_skip("the work queue's priority on kube-apiserver").await
    else {
        return;
    };
    use kube::CustomResourceExt;
    cp.install_crds([Backlog::crd()]).await.unwrap();
    let ns = cp.namespace().await.unwrap();
    let client = cp.client().unwrap();
    install_parents(&client, &ns, PARENTS).await;
    let passes = Passes::default();
    let _stop = run(
        Operator::for_namespaces(client.clone(), [ns.clone()]).controller(reconciler(
            "backlog-controller",
            passes.clone(),
            Arc::new(AtomicU64::new(2)),
        )),
    );
    passes_reach(&passes, 50).await;
    let (overtook, backlog) =
        change_overtakes(&client, &ns, &name(PARENTS - 1), &passes, PARENTS).await;
    assert!(
        backlog > PARENTS / 2,
        "the change came with {backlog} parents waiting"
    );
    assert!(
        served_first(overtook, backlog),
        "{overtook} passes ran between the change and its pass, with {backlog} listed parents waiting"
    );
}
