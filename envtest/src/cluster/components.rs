//! Starting kube-controller-manager, kube-scheduler and kwok against a ready kube-apiserver, and waiting
//! until each does its work: `/healthz`, the `default` ServiceAccount, every simulated node `Ready`.

use std::path::Path;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{Node, ServiceAccount};
use kube::api::{Api, ListParams, PostParams};
use kube::{Client, Config};

use super::{CONTROLLERS, ClusterAssets, ClusterOptions, ClusterStartup};
use crate::Error;
use crate::certs::Certificates;
use crate::process::{Process, last_lines};

const POLL: Duration = Duration::from_millis(100);
/// The label every simulated node carries, `type=kwok`, as kwokctl's nodes do.
pub(crate) const NODE_LABEL: (&str, &str) = ("type", "kwok");

/// The running cluster components, stopped (kwok, the scheduler, then the controller manager) on drop.
#[derive(Debug, Default)]
pub(crate) struct Components {
    processes: Vec<Process>,
}

impl Components {
    /// Stops every component, the last started first.
    pub(crate) fn stop(&mut self) {
        while let Some(mut process) = self.processes.pop() {
            process.stop(Duration::from_secs(5));
        }
    }

    /// The processes, in start order.
    pub(crate) fn processes(&self) -> &[Process] {
        &self.processes
    }
}

impl Drop for Components {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Everything [`start`] needs of the control plane it joins.
pub(crate) struct Joining<'a> {
    pub dir: &'a Path,
    pub certs: &'a Certificates,
    pub config: &'a Config,
    pub kubeconfig_yaml: &'a str,
    pub timeout: Duration,
}

/// Starts the components and waits for each; on error, every component started is stopped (the caller
/// stops etcd and kube-apiserver) and the error names the component with the end of its log.
pub(crate) async fn start(
    cp: Joining<'_>,
    assets: &ClusterAssets,
    options: &ClusterOptions,
) -> Result<(Components, ClusterStartup), Error> {
    let kubeconfig = cp.dir.join("admin.kubeconfig");
    write(&kubeconfig, cp.kubeconfig_yaml)?;
    let client = crate::client::client(cp.config.clone()).map_err(|source| Error::Kube {
        context: "building a client to start the cluster components".into(),
        source,
    })?;
    let mut components = Components::default();

    let started = Instant::now();
    let kcm_port = crate::port("kube-controller-manager", "--secure-port", None)?;
    components.processes.push(Process::spawn(
        "kube-controller-manager",
        &assets.kube_controller_manager,
        controller_manager_args(cp.dir, cp.certs, &kubeconfig, kcm_port, options),
        cp.dir.join("kube-controller-manager.log"),
    )?);
    let scheduler_port = crate::port("kube-scheduler", "--secure-port", None)?;
    let scheduler_config = cp.dir.join("kube-scheduler.yaml");
    write(
        &scheduler_config,
        &scheduler_config_yaml(&kubeconfig, options),
    )?;
    components.processes.push(Process::spawn(
        "kube-scheduler",
        &assets.kube_scheduler,
        scheduler_args(cp.dir, &scheduler_config, &kubeconfig, scheduler_port),
        cp.dir.join("kube-scheduler.log"),
    )?);

    wait_for_healthz(
        &mut components.processes[1],
        cp.config,
        scheduler_port,
        cp.timeout,
    )
    .await?;
    let scheduler = started.elapsed();
    wait_for_healthz(
        &mut components.processes[0],
        cp.config,
        kcm_port,
        cp.timeout,
    )
    .await?;
    wait_for(
        &mut components.processes[0],
        cp.timeout,
        "the default ServiceAccount",
        || default_service_account(&client),
    )
    .await?;
    let controller_manager = started.elapsed();

    let started = Instant::now();
    create_nodes(&client, options.nodes).await?;
    components.processes.push(Process::spawn(
        "kwok",
        &assets.kwok,
        kwok_args(&assets.kwok_stages, &kubeconfig),
        cp.dir.join("kwok.log"),
    )?);
    let wanted = options.nodes;
    wait_for(
        &mut components.processes[2],
        cp.timeout,
        &format!("{wanted} simulated nodes Ready"),
        || async { ready_nodes(&client).await >= wanted },
    )
    .await?;
    let nodes = started.elapsed();
    Ok((
        components,
        ClusterStartup {
            controller_manager,
            scheduler,
            nodes,
        },
    ))
}

fn controller_manager_args(
    dir: &Path,
    certs: &Certificates,
    kubeconfig: &Path,
    port: u16,
    options: &ClusterOptions,
) -> Vec<String> {
    let path = |p: &Path| p.display().to_string();
    vec![
        format!("--kubeconfig={}", path(kubeconfig)),
        format!("--authentication-kubeconfig={}", path(kubeconfig)),
        format!("--authorization-kubeconfig={}", path(kubeconfig)),
        format!("--secure-port={port}"),
        "--bind-address=127.0.0.1".to_string(),
        format!(
            "--cert-dir={}",
            dir.join("kube-controller-manager-certs").display()
        ),
        "--leader-elect=false".to_string(),
        format!("--controllers={}", CONTROLLERS.join(",")),
        format!(
            "--service-account-private-key-file={}",
            path(&certs.service_account_key_file)
        ),
        format!("--root-ca-file={}", path(&certs.ca_file)),
        format!("--kube-api-qps={}", options.qps),
        format!("--kube-api-burst={}", options.qps.saturating_mul(2)),
        // A finished pod is collected at once rather than after 12,500 of them.
        "--terminated-pod-gc-threshold=100".to_string(),
    ]
}

fn scheduler_args(dir: &Path, config: &Path, kubeconfig: &Path, port: u16) -> Vec<String> {
    let path = |p: &Path| p.display().to_string();
    vec![
        format!("--config={}", path(config)),
        format!("--authentication-kubeconfig={}", path(kubeconfig)),
        format!("--authorization-kubeconfig={}", path(kubeconfig)),
        format!("--secure-port={port}"),
        "--bind-address=127.0.0.1".to_string(),
        format!("--cert-dir={}", dir.join("kube-scheduler-certs").display()),
    ]
}

fn scheduler_config_yaml(kubeconfig: &Path, options: &ClusterOptions) -> String {
    format!(
        "apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: {kubeconfig:?}
  qps: {qps}
  burst: {burst}
leaderElection:
  leaderElect: false
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      disabled:
      # No volume provisioner runs, and kwok's nodes mount nothing: a StatefulSet's claims stay Pending and
      # must not hold its Pods back.
      - name: VolumeBinding
      - name: VolumeRestrictions
      - name: VolumeZone
      - name: NodeVolumeLimits
",
        kubeconfig = kubeconfig.display().to_string(),
        qps = options.qps,
        burst = options.qps.saturating_mul(2),
    )
}

fn kwok_args(stages: &Path, kubeconfig: &Path) -> Vec<String> {
    vec![
        format!("--kubeconfig={}", kubeconfig.display()),
        format!("--config={}", stages.display()),
        "--manage-all-nodes=true".to_string(),
        // Pod IPs for a benchmark's thousands of pods (kwok's default, a /24, holds 254), apart from the
        // Services' range.
        "--cidr=10.128.0.0/10".to_string(),
        // No Leases: no node-lifecycle controller watches them.
        "--node-lease-duration-seconds=0".to_string(),
    ]
}

/// Creates the simulated nodes `kwok-node-0…`, which kwok initializes to `Ready`.
async fn create_nodes(client: &Client, count: usize) -> Result<(), Error> {
    let api: Api<Node> = Api::all(client.clone());
    for i in 0..count {
        let name = format!("kwok-node-{i}");
        let mut node = Node::default();
        node.metadata.name = Some(name.clone());
        node.metadata.labels = Some(
            [
                (NODE_LABEL.0, NODE_LABEL.1),
                ("kubernetes.io/hostname", name.as_str()),
                ("kubernetes.io/os", "linux"),
                ("kubernetes.io/arch", "amd64"),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        );
        node.metadata.annotations = Some(
            [("kwok.x-k8s.io/node".to_string(), "fake".to_string())]
                .into_iter()
                .collect(),
        );
        api.create(&PostParams::default(), &node)
            .await
            .map_err(|source| Error::Kube {
                context: format!("creating the simulated node {name}"),
                source,
            })?;
    }
    Ok(())
}

async fn ready_nodes(client: &Client) -> usize {
    let api: Api<Node> = Api::all(client.clone());
    let selector = format!("{}={}", NODE_LABEL.0, NODE_LABEL.1);
    let Ok(list) = api.list(&ListParams::default().labels(&selector)).await else {
        return 0;
    };
    list.items
        .iter()
        .filter(|n| {
            n.status
                .as_ref()
                .and_then(|s| s.conditions.as_ref())
                .is_some_and(|cs| cs.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
        })
        .count()
}

async fn default_service_account(client: &Client) -> bool {
    let api: Api<ServiceAccount> = Api::namespaced(client.clone(), "default");
    matches!(api.get_opt("default").await, Ok(Some(_)))
}

/// Polls `GET /healthz` on a component's secure port until it answers `ok`.
async fn wait_for_healthz(
    process: &mut Process,
    config: &Config,
    port: u16,
    timeout: Duration,
) -> Result<(), Error> {
    let mut config = config.clone();
    let url = format!("https://127.0.0.1:{port}");
    config.cluster_url = url
        .parse()
        .map_err(|e| Error::Kubeconfig(format!("{url}: {e}")))?;
    // The component serves a certificate it made itself.
    config.accept_invalid_certs = true;
    config.root_cert = None;
    let client = crate::health::quiet_client(&config).map_err(|source| Error::Kube {
        context: format!("building a client to wait for {}", process.binary()),
        source,
    })?;
    let last = std::sync::Mutex::new(String::new());
    let remember = |text: String| {
        if let Ok(mut last) = last.lock() {
            *last = text;
        }
    };
    let healthy = wait_for(process, timeout, "GET /healthz", || {
        let client = client.clone();
        async move {
            let Ok(request) = http::Request::get("/healthz").body(Vec::new()) else {
                return false;
            };
            match client.request_text(request).await {
                Ok(body) => {
                    let ok = body.trim() == "ok";
                    remember(body);
                    ok
                }
                Err(e) => {
                    remember(e.to_string());
                    false
                }
            }
        }
    })
    .await;
    let last = last.into_inner().unwrap_or_default();
    healthy.map_err(|e| match e {
        Error::ComponentFailed {
            component,
            why,
            last_lines,
            log,
        } => Error::ComponentFailed {
            component,
            why: format!("{why}; last answer: {last}"),
            last_lines,
            log,
        },
        other => other,
    })
}

/// Polls `ready` until it holds, failing when the process ends or the time runs out.
async fn wait_for<F, Fut>(
    process: &mut Process,
    timeout: Duration,
    what: &str,
    mut ready: F,
) -> Result<(), Error>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let deadline = Instant::now() + timeout;
    loop {
        if let Err(e) = process.check_running() {
            return Err(failed(process, format!("it ended while starting: {e}")));
        }
        if ready().await {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(failed(
                process,
                format!("not ready after {timeout:?} waiting for {what}"),
            ));
        }
        tokio::time::sleep(POLL).await;
    }
}

fn failed(process: &Process, why: String) -> Error {
    Error::ComponentFailed {
        component: process.binary(),
        why,
        last_lines: last_lines(process.log(), 20),
        log: process.log().to_path_buf(),
    }
}

fn write(path: &Path, text: &str) -> Result<(), Error> {
    std::fs::write(path, text).map_err(|source| Error::Io {
        context: format!("writing {}", path.display()),
        source,
    })
}
