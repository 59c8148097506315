//! The `database` example's operator on the embedded cluster (`tests::database_scenario`), and its wiring.

use examples::database::reconciler;
use kubewright::reconcilers::Role;
use kubewright::testing::ApiServer;
use kubewright::testing::apiserver::Verb;

#[test]
fn the_children_are_owned_and_the_finalizer_declared() {
    let wiring = reconciler().wiring();
    let roles: Vec<(String, Role)> = wiring
        .kinds()
        .iter()
        .map(|k| (k.kind.clone(), k.role))
        .collect();
    assert_eq!(
        roles,
        [
            ("Secret".to_string(), Role::Owned),
            ("Service".to_string(), Role::Owned),
            ("StatefulSet".to_string(), Role::Owned),
        ]
    );
    assert_eq!(wiring.finalizers(), ["example.dev/database"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_operator_keeps_databases_on_the_embedded_cluster() {
    let server = ApiServer::builder().request_log(true).build();
    let writes = {
        let server = server.clone();
        move || {
            server
                .requests()
                .into_iter()
                .filter(|r| {
                    !matches!(
                        r.verb,
                        None | Some(Verb::Get) | Some(Verb::List) | Some(Verb::Watch)
                    )
                })
                .map(|r| format!("{} {}", r.method, r.path))
                .collect::<Vec<String>>()
        }
    };
    tests::database_scenario::run(server.client(), server.client(), "default", &writes).await;
}
