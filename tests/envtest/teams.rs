//! The `teams` example's child set on a real kube-apiserver: one event per created child, and an edited id
//! label is put back on the same object, never taken for an extra child and deleted.

use kubewright::testing::envtest::{ControlPlane, assets_or_skip};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edited_member_label_is_put_back_and_every_created_account_has_its_event() {
    let name = "teams-edited-label";
    if assets_or_skip(name).is_none() {
        return;
    }
    let cp = ControlPlane::builder().name(name).start().await.unwrap();
    tests::teams_scenario::edited_id_label_is_put_back(cp.client().unwrap()).await;
}
