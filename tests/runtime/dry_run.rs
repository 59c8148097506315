//! `ApiDispatcher::dry_run`: every write is sent with `dryRun=All`, so the server answers with the object it
//! would store and stores nothing; events are not recorded.

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::Api;
use kubewright::command::ApiDispatcher;
use kubewright::testing::ApiServer;
use kubewright::{Command, Dispatcher, Target};
use serde_json::json;

#[tokio::test]
async fn dry_run_dispatcher_writes_nothing() {
    let server = ApiServer::new();
    let client = server.client();
    let dispatcher = ApiDispatcher::new(client.clone(), "planner").dry_run();
    assert!(dispatcher.is_dry_run());
    let target = Target::named::<ConfigMap>(Some("default"), "planned");
    let create = Command::Create {
        target: target.clone(),
        object: json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "planned", "namespace": "default"},
            "data": {"k": "v"},
        }),
        field_manager: None,
    };
    let answer = dispatcher
        .execute(&create)
        .await
        .expect("dry-run create")
        .expect("an answer");
    let value = answer.to_value().expect("answer decodes");
    assert_eq!(
        value["data"]["k"], "v",
        "the answer is the object the server would store"
    );
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    assert!(
        cms.get_opt("planned").await.expect("get").is_none(),
        "a dry-run create stores nothing"
    );
}
