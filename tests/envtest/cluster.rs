//! A whole cluster without containers: kube-controller-manager, kube-scheduler and kwok's simulated nodes
//! beside etcd and kube-apiserver. Workloads roll out to Pods that become Ready, Jobs complete, a deleted
//! Namespace goes away, and a component that fails to start is named with the end of its log.

use std::os::unix::fs::PermissionsExt;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Node, Pod};
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use kubewright::testing::envtest::{ClusterAssets, ControlPlane, Error, assets_or_skip};
use serde_json::json;

use crate::support::{eventually, processes_named, wait_until_gone};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deployment_rolls_out_to_ready_pods_on_simulated_nodes() {
    let Some(cp) = ControlPlane::shared_cluster_or_skip("deployment on the cluster").await else {
        return;
    };
    assert!(cp.is_cluster());
    let times = cp.startup_times().cluster.expect("cluster start-up times");
    eprintln!(
        "cluster start-up: etcd {:?}, kube-apiserver {:?}, kube-controller-manager {:?}, kube-scheduler {:?}, nodes {:?}",
        cp.startup_times().etcd,
        cp.startup_times().apiserver,
        times.controller_manager,
        times.scheduler,
        times.nodes
    );
    let client = cp.client().unwrap();
    let nodes: Api<Node> = Api::all(client.clone());
    assert_eq!(
        nodes
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .len(),
        3
    );

    let ns = cp.namespace().await.unwrap();
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), &ns);
    let deployment: Deployment = serde_json::from_value(json!({
        "metadata": { "name": "web" },
        "spec": {
            "replicas": 2,
            "selector": { "matchLabels": { "app": "web" } },
            "template": {
                "metadata": { "labels": { "app": "web" } },
                "spec": { "containers": [{ "name": "web", "image": "nginx" }] }
            }
        }
    }))
    .unwrap();
    deployments
        .create(&PostParams::default(), &deployment)
        .await
        .unwrap();
    eventually("two ready replicas", async || {
        let d = deployments.get("web").await.unwrap();
        let status = d.status?;
        (status.ready_replicas == Some(2) && status.available_replicas == Some(2)).then_some(())
    })
    .await;
    let pods: Api<Pod> = Api::namespaced(client.clone(), &ns);
    let running = pods.list(&ListParams::default()).await.unwrap().items;
    assert_eq!(running.len(), 2);
    for pod in &running {
        let spec = pod.spec.as_ref().unwrap();
        assert!(
            spec.node_name
                .as_deref()
                .is_some_and(|n| n.starts_with("kwok-node-")),
            "scheduled on a simulated node: {pod:?}"
        );
        assert_eq!(
            pod.status.as_ref().unwrap().phase.as_deref(),
            Some("Running")
        );
    }

    // Garbage collection: the Deployment's ReplicaSet and Pods go with it.
    deployments
        .delete("web", &DeleteParams::foreground())
        .await
        .unwrap();
    eventually("the pods collected", async || {
        pods.list(&ListParams::default())
            .await
            .unwrap()
            .items
            .is_empty()
            .then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_completes_and_a_deleted_namespace_goes_away() {
    let Some(cp) = ControlPlane::shared_cluster_or_skip("job and namespace on the cluster").await
    else {
        return;
    };
    let client = cp.client().unwrap();
    let ns = cp.namespace().await.unwrap();
    let jobs: Api<Job> = Api::namespaced(client.clone(), &ns);
    let job: Job = serde_json::from_value(json!({
        "metadata": { "name": "once" },
        "spec": {
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{ "name": "once", "image": "busybox" }]
                }
            }
        }
    }))
    .unwrap();
    jobs.create(&PostParams::default(), &job).await.unwrap();
    eventually("the job complete", async || {
        let job = jobs.get("once").await.unwrap();
        let conditions = job.status?.conditions?;
        conditions
            .iter()
            .any(|c| c.type_ == "Complete" && c.status == "True")
            .then_some(())
    })
    .await;

    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), &ns);
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some("content".into());
    cms.create(&PostParams::default(), &cm).await.unwrap();
    let namespaces: Api<Namespace> = Api::all(client.clone());
    namespaces
        .delete(&ns, &DeleteParams::default())
        .await
        .unwrap();
    eventually("the namespace gone", async || {
        namespaces
            .get_opt(&ns)
            .await
            .unwrap()
            .is_none()
            .then_some(())
    })
    .await;
}

#[tokio::test]
async fn a_component_that_fails_to_start_is_named_with_its_log_and_everything_stops() {
    let Some(assets) = assets_or_skip("cluster component fails") else {
        return;
    };
    let Ok(cluster) = ClusterAssets::beside(&assets) else {
        // Without cluster binaries, the shared-cluster tests report it (or skip).
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let broken = dir.path().join("kube-scheduler");
    std::fs::write(
        &broken,
        "#!/bin/sh\necho 'I1128 starting'\necho 'E1128 no scheduler here: the last words' >&2\nexit 3\n",
    )
    .unwrap();
    std::fs::set_permissions(&broken, std::fs::Permissions::from_mode(0o755)).unwrap();
    let err = ControlPlane::builder()
        .name("broken-scheduler")
        .assets(assets)
        .cluster_assets(ClusterAssets {
            kube_scheduler: broken,
            ..cluster
        })
        .start()
        .await
        .unwrap_err();
    let Error::ComponentFailed {
        component,
        last_lines,
        ..
    } = &err
    else {
        panic!("expected ComponentFailed, got {err}");
    };
    assert_eq!(*component, "kube-scheduler");
    assert!(last_lines.contains("I1128 starting"), "{err}");
    assert!(last_lines.contains("the last words"), "{err}");
    let text = err.to_string();
    assert!(text.starts_with("kube-scheduler did not start"), "{text}");
    // etcd, kube-apiserver and kube-controller-manager, already running, were stopped too.
    wait_until_gone("operator-envtest-broken-scheduler-").await;
    assert!(processes_named("operator-envtest-broken-scheduler-").is_empty());
}
