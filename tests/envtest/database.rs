//! The `database` example on a whole cluster (kube-controller-manager's StatefulSet controller, kube-scheduler
//! and kwok's simulated nodes): the scenario of `tests::database_scenario`, Ready from the real StatefulSet
//! status, and the operator's requests recorded to count its writes.

use kubewright::testing::envtest::ControlPlane;

use crate::support::recording_client_for;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_operator_keeps_databases_on_a_real_kube_apiserver() {
    let Some(cp) = ControlPlane::shared_cluster_or_skip("database scenario").await else {
        return;
    };
    let admin = cp.client().unwrap();
    let namespace = cp.namespace().await.unwrap();
    let (operator, log) = recording_client_for(cp.config().clone());
    // The shared control plane may hold other tests' Databases, which this operator reconciles too: only
    // its writes into the scenario's namespace count.
    let writes = {
        let log = log.clone();
        let scope = format!("/namespaces/{namespace}/");
        move || {
            log.lock()
                .unwrap()
                .iter()
                .filter(|e| e.method != "GET" && e.path.contains(&scope))
                .map(|e| {
                    format!(
                        "{} {}",
                        e.method,
                        e.path.split('?').next().unwrap_or_default()
                    )
                })
                .collect::<Vec<String>>()
        }
    };
    tests::database_scenario::run(admin, operator, &namespace, &writes).await;
    let forbidden: Vec<_> = log
        .lock()
        .unwrap()
        .iter()
        .filter(|e| e.status == 403)
        .cloned()
        .collect();
    assert!(forbidden.is_empty(), "forbidden requests: {forbidden:#?}");
}
