//! The workload controllers' status the server plays by default: Deployments and their kin become ready once
//! observed, in a change of their own after the write; Services get a ClusterIP; both can be switched off.

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::apps::v1::{Deployment, StatefulSet};
use k8s_openapi::api::core::v1::Service;
use kube::api::{Api, Patch, PatchParams, PostParams, WatchEvent, WatchParams};
use kubewright::testing::ApiServer;
use serde_json::json;

use crate::crud::deployment;

#[tokio::test]
async fn a_deployment_is_reported_ready_in_a_change_after_the_write() {
    let server = ApiServer::new();
    let api: Api<Deployment> = Api::namespaced(server.client(), "default");
    let created = api
        .create(&PostParams::default(), &deployment("web", 3))
        .await
        .unwrap();
    // The answer is the object as written; the controller's status comes after it.
    assert!(created.status.is_none(), "{:?}", created.status);
    let rv: u64 = created
        .metadata
        .resource_version
        .clone()
        .unwrap()
        .parse()
        .unwrap();
    let stored = api.get("web").await.unwrap();
    let status = stored.status.clone().expect("a status");
    assert_eq!(status.observed_generation, Some(1));
    assert_eq!(status.available_replicas, Some(3));
    assert_eq!(status.updated_replicas, Some(3));
    let rv_after: u64 = stored
        .metadata
        .resource_version
        .clone()
        .unwrap()
        .parse()
        .unwrap();
    assert!(rv_after > rv, "a change of its own");

    // A watch from the created version sees the status write as a modification.
    let mut events = api
        .watch(
            &WatchParams::default(),
            &created.metadata.resource_version.unwrap(),
        )
        .await
        .unwrap()
        .boxed();
    match events.try_next().await.unwrap() {
        Some(WatchEvent::Modified(d)) => {
            assert_eq!(d.status.and_then(|s| s.ready_replicas), Some(3));
        }
        other => panic!("expected the status change, got {other:?}"),
    }

    // A spec change is observed again.
    let scaled = api
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 1}})),
        )
        .await
        .unwrap();
    assert_eq!(scaled.metadata.generation, Some(2));
    let status = api.get("web").await.unwrap().status.unwrap();
    assert_eq!(
        (status.observed_generation, status.available_replicas),
        (Some(2), Some(1))
    );
}

#[tokio::test]
async fn statefulsets_become_ready_and_services_get_a_cluster_ip() {
    let server = ApiServer::new();
    let client = server.client();
    let sets: Api<StatefulSet> = Api::namespaced(client.clone(), "default");
    let set: StatefulSet = serde_json::from_value(json!({
        "metadata": {"name": "db"},
        "spec": {
            "replicas": 2,
            "serviceName": "db",
            "selector": {"matchLabels": {"app": "db"}},
            "template": {
                "metadata": {"labels": {"app": "db"}},
                "spec": {"containers": [{"name": "db", "image": "postgres:16"}]},
            },
        },
    }))
    .unwrap();
    sets.create(&PostParams::default(), &set).await.unwrap();
    let status = sets.get("db").await.unwrap().status.unwrap();
    assert_eq!((status.ready_replicas, status.replicas), (Some(2), 2));

    let services: Api<Service> = Api::namespaced(client, "default");
    let svc = |name: &str, cluster_ip: Option<&str>| -> Service {
        let mut spec = json!({"ports": [{"port": 80}], "selector": {"app": "db"}});
        if let Some(ip) = cluster_ip {
            spec["clusterIP"] = json!(ip);
        }
        serde_json::from_value(json!({"metadata": {"name": name}, "spec": spec})).unwrap()
    };
    services
        .create(&PostParams::default(), &svc("db", None))
        .await
        .unwrap();
    let ip = services.get("db").await.unwrap().spec.unwrap().cluster_ip;
    assert!(
        // In 10.0.0.0/16, the service range of the envtest control plane; 10.0.0.1 is the `kubernetes` Service.
        ip.as_deref()
            .is_some_and(|ip| ip.starts_with("10.0.") && ip != "10.0.0.1"),
        "{ip:?}"
    );
    services
        .create(&PostParams::default(), &svc("headless", Some("None")))
        .await
        .unwrap();
    let ip = services
        .get("headless")
        .await
        .unwrap()
        .spec
        .unwrap()
        .cluster_ip;
    assert_eq!(ip.as_deref(), Some("None"));
}

#[tokio::test]
async fn switched_off_the_server_writes_no_status() {
    let server = ApiServer::builder().workload_status(false).build();
    let api: Api<Deployment> = Api::namespaced(server.client(), "default");
    api.create(&PostParams::default(), &deployment("web", 3))
        .await
        .unwrap();
    assert!(api.get("web").await.unwrap().status.is_none());
}
