//! The harness itself: it starts a working control plane, explains bad input, and leaves no process behind,
//! whether a test ends, panics, or is killed.

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::CustomResourceExt;
use kube::api::{Api, PostParams};
use kubewright::testing::envtest::{Assets, ControlPlane, Error};

use crate::support::{processes_named, wait_until_gone};
use kubewright::testing::envtest::assets_or_skip;

#[tokio::test]
async fn the_shared_control_plane_serves_kube_apiserver_and_fresh_namespaces() {
    let Some(cp) = ControlPlane::shared_or_skip("shared control plane").await else {
        return;
    };
    let client = cp.client().unwrap();
    let version = client.apiserver_version().await.unwrap();
    assert_eq!(version.git_version, cp.assets().kubernetes_version);
    assert_eq!(format!("{}.{}", version.major, version.minor), "1.35");

    let first = cp.namespace().await.unwrap();
    let second = cp.namespace().await.unwrap();
    assert_ne!(first, second);
    let cms: Api<ConfigMap> = Api::namespaced(client, &first);
    let mut cm = ConfigMap::default();
    cm.metadata.name = Some("hello".into());
    let created = cms.create(&PostParams::default(), &cm).await.unwrap();
    assert!(created.metadata.uid.is_some());

    // Another caller gets the same control plane.
    let again = ControlPlane::shared().await.unwrap();
    assert_eq!(again.url(), cp.url());
}

#[tokio::test]
async fn the_service_range_holds_tens_of_thousands_of_services() {
    let Some(cp) = ControlPlane::shared_or_skip("service range").await else {
        return;
    };
    // kube-apiserver turns --service-cluster-ip-range into the default ServiceCIDR.
    let cidrs: kube::Api<k8s_openapi::api::networking::v1::ServiceCIDR> =
        kube::Api::all(cp.client().unwrap());
    let default = cidrs.get("kubernetes").await.unwrap();
    assert_eq!(
        default.spec.unwrap().cidrs,
        Some(vec!["10.0.0.0/16".to_string()])
    );
}

#[tokio::test]
async fn kubectl_uses_the_written_kubeconfig() {
    let Some(cp) = ControlPlane::shared_or_skip("kubectl on the control plane").await else {
        return;
    };
    let Some(bin) = tests::kubectl::kubectl_binary() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    cp.write_kubeconfig(&kubeconfig).unwrap();
    let kubectl = tests::kubectl::Kubectl { bin, kubeconfig };
    let (ok, out, err) = kubectl
        .run(&["get", "namespace", "kube-system", "-o", "name"], None)
        .await;
    assert!(ok, "{err}");
    assert_eq!(out.trim(), "namespace/kube-system");
    let (ok, out, err) = kubectl.run(&["auth", "can-i", "*", "*"], None).await;
    assert!(ok, "{err}");
    assert_eq!(out.trim(), "yes", "the admin user is in system:masters");
}

#[tokio::test]
async fn crds_are_served_when_install_returns() {
    let Some(cp) = ControlPlane::shared_or_skip("install_crds").await else {
        return;
    };
    cp.install_crds([examples::webapp::WebApp::crd()])
        .await
        .unwrap();
    // Installing again (as several tests do) is harmless.
    cp.install_crds([examples::webapp::WebApp::crd()])
        .await
        .unwrap();
    let ns = cp.namespace().await.unwrap();
    let apps: Api<examples::webapp::WebApp> = Api::namespaced(cp.client().unwrap(), &ns);
    assert!(
        apps.list(&Default::default())
            .await
            .unwrap()
            .items
            .is_empty()
    );
}

#[tokio::test]
async fn a_port_in_use_is_named_and_nothing_is_left_running() {
    let Some(assets) = assets_or_skip("port in use") else {
        return;
    };
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let err = ControlPlane::builder()
        .name("port-in-use")
        .assets(assets)
        .apiserver_port(port)
        .start()
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::PortInUse { binary: "kube-apiserver", flag, port: p } if flag == "--secure-port" && *p == port),
        "{err}"
    );
    assert!(err.to_string().contains(&format!("port {port}")), "{err}");
    assert!(processes_named("operator-envtest-port-in-use-").is_empty());
}

#[tokio::test]
async fn a_flag_the_binary_refuses_is_quoted_from_its_log() {
    let Some(assets) = assets_or_skip("bad flag") else {
        return;
    };
    let err = ControlPlane::builder()
        .name("bad-flag")
        .assets(assets)
        .apiserver_arg("--no-such-flag=1")
        .start()
        .await
        .unwrap_err();
    let Error::Exited { binary, line, .. } = &err else {
        panic!("expected Exited, got {err}");
    };
    assert_eq!(*binary, "kube-apiserver");
    assert!(line.contains("unknown flag: --no-such-flag"), "{line}");
    // etcd, already running, was stopped too.
    wait_until_gone("operator-envtest-bad-flag-").await;
}

#[tokio::test]
async fn a_control_plane_that_is_not_ready_in_time_is_reported_and_stopped() {
    let Some(assets) = assets_or_skip("not ready in time") else {
        return;
    };
    let err = ControlPlane::builder()
        .name("not-ready")
        .assets(assets)
        .start_timeout(Duration::from_millis(1))
        .start()
        .await
        .unwrap_err();
    let Error::NotReady {
        binary,
        waiting_for,
        ..
    } = &err
    else {
        panic!("expected NotReady, got {err}");
    };
    // Usually etcd; on a machine where the first health check already finds etcd up, kube-apiserver.
    match *binary {
        "etcd" => assert!(waiting_for.contains("/health"), "{err}"),
        "kube-apiserver" => assert!(waiting_for.contains("/readyz"), "{err}"),
        other => panic!("unexpected binary {other}: {err}"),
    }
    wait_until_gone("operator-envtest-not-ready-").await;
}

#[test]
fn binaries_that_are_not_etcd_and_kube_apiserver_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink("/bin/true", dir.path().join("etcd")).unwrap();
    let err = Assets::in_dir(dir.path()).unwrap_err();
    assert!(
        matches!(err, Error::WrongBinary { binary: "etcd", .. }),
        "{err}"
    );
}

#[tokio::test]
async fn stopping_or_dropping_ends_every_process_and_removes_the_directory() {
    let Some(assets) = assets_or_skip("drop") else {
        return;
    };
    let cp = ControlPlane::builder()
        .name("dropped")
        .assets(assets)
        .start()
        .await
        .unwrap();
    let dir = cp.dir().unwrap();
    assert_eq!(cp.pids().len(), 2);
    assert_eq!(processes_named("operator-envtest-dropped-").len(), 2);
    let clone = cp.clone();
    drop(cp);
    // A clone keeps it running.
    assert_eq!(processes_named("operator-envtest-dropped-").len(), 2);
    drop(clone);
    assert!(processes_named("operator-envtest-dropped-").is_empty());
    assert!(!dir.exists());
}

#[tokio::test]
async fn a_test_that_panics_leaves_no_process() {
    let Some(assets) = assets_or_skip("panic") else {
        return;
    };
    let result = std::thread::spawn(move || {
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(async move {
            let _cp = ControlPlane::builder()
                .name("panicked")
                .assets(assets)
                .start()
                .await
                .unwrap();
            assert_eq!(processes_named("operator-envtest-panicked-").len(), 2);
            panic!("a failing assertion in a test");
        })
    })
    .join();
    assert!(result.is_err());
    assert!(processes_named("operator-envtest-panicked-").is_empty());
}

/// Run by [`a_killed_test_process_takes_its_control_plane_with_it`] in a child process: starts a control
/// plane, says so, and waits to be killed.
#[tokio::test]
#[ignore = "run by a_killed_test_process_takes_its_control_plane_with_it"]
async fn child_that_gets_killed() {
    let name = std::env::var("ENVTEST_KILLED_NAME").expect("run by the parent test");
    let cp = ControlPlane::builder().name(name).start().await.unwrap();
    println!("READY {}", cp.dir().unwrap().display());
    tokio::time::sleep(Duration::from_secs(600)).await;
}

#[tokio::test]
async fn a_killed_test_process_takes_its_control_plane_with_it() {
    if assets_or_skip("killed test process").is_none() {
        return;
    }
    let name = format!("killed-{}", std::process::id());
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "harness::child_that_gets_killed",
            "--ignored",
            "--nocapture",
        ])
        .env("ENVTEST_KILLED_NAME", &name)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let ready = tokio::task::spawn_blocking(move || {
        BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
            .find_map(|l| l.strip_prefix("READY ").map(str::to_string))
    })
    .await
    .unwrap();
    let dir = ready.expect("the child started a control plane");
    let marker = format!("operator-envtest-{name}-");
    assert_eq!(processes_named(&marker).len(), 2);
    child.kill().unwrap(); // SIGKILL: no destructor, no exit hook runs
    child.wait().unwrap();
    wait_until_gone(&marker).await;
    let _ = std::fs::remove_dir_all(dir);
}
