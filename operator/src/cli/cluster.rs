//! A real cluster on the command line: the client from `--kubeconfig`, `KUBECONFIG` or the pod, and the CRDs
//! checked (or installed, with `--install-crds`) before the operator starts.

use std::path::Path;
use std::time::Duration;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::runtime::wait::await_condition;
use kube::{Client, ResourceExt};

use super::error::{CliError, Context as _};

/// A client for the cluster of the pod this runs in, with its service account.
pub async fn in_cluster() -> Result<Client, CliError> {
    let config = kube::Config::incluster()
        .context("cannot load the in-cluster configuration (is this running in a pod?)")?;
    tracing::info!(server = %config.cluster_url, "running against the cluster of this pod");
    crate::client::client(config).context("cannot build a client")
}

/// A client for the cluster of the kubeconfig at `path` (its current context).
pub async fn from_kubeconfig(path: &Path) -> Result<Client, CliError> {
    let kubeconfig = Kubeconfig::read_from(path)
        .with_context(|| format!("cannot read the kubeconfig {}", path.display()))?;
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .with_context(|| format!("invalid kubeconfig {}", path.display()))?;
    tracing::info!(server = %config.cluster_url, kubeconfig = %path.display(), "running against a cluster");
    crate::client::client(config).context("cannot build a client")
}

/// A client for the cluster of the kubeconfig that `KUBECONFIG` names.
pub async fn from_env() -> Result<Client, CliError> {
    let config = kube::Config::infer()
        .await
        .context("cannot load the kubeconfig named by KUBECONFIG")?;
    tracing::info!(server = %config.cluster_url, "running against a cluster (KUBECONFIG)");
    crate::client::client(config).context("cannot build a client")
}

/// Checks that the kind a CRD defines is served, with one list of at most one object (what the operator may do
/// anyway: in the first of `namespaces` when it watches only those); a missing CRD is an error saying how to
/// install it. Reads no CRD, so the operator's own RBAC suffices.
pub async fn ensure_served(
    client: &Client,
    crd: &CustomResourceDefinition,
    namespaces: &[String],
) -> Result<(), CliError> {
    let spec = &crd.spec;
    let Some(version) = spec
        .versions
        .iter()
        .find(|v| v.storage)
        .or(spec.versions.first())
    else {
        return Err(CliError::msg(format!(
            "CRD {} has no version",
            crd.name_any()
        )));
    };
    let resource = kube::api::ApiResource {
        group: spec.group.clone(),
        version: version.name.clone(),
        api_version: format!("{}/{}", spec.group, version.name),
        kind: spec.names.kind.clone(),
        plural: spec.names.plural.clone(),
    };
    let api: Api<kube::api::DynamicObject> = match namespaces.first() {
        Some(namespace) if spec.scope == "Namespaced" => {
            Api::namespaced_with(client.clone(), namespace, &resource)
        }
        _ => Api::all_with(client.clone(), &resource),
    };
    match api.list(&kube::api::ListParams::default().limit(1)).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(e)) if e.code == 404 => Err(CliError::msg(format!(
            "{} ({}) is not served: its CRD is not installed; apply the manifests (`manifests | kubectl apply -f -`) or run with --install-crds",
            spec.names.kind,
            crd.name_any()
        ))),
        Err(e) => Err(CliError::new(
            format!("cannot list {}", spec.names.plural),
            e,
        )),
    }
}

/// Creates a CRD unless it exists, and waits (up to 30 s) until it is established.
pub async fn ensure_crd(client: &Client, crd: CustomResourceDefinition) -> Result<(), CliError> {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let name = crd.name_any();
    match crds
        .get_opt(&name)
        .await
        .with_context(|| format!("cannot read CRD {name}"))?
    {
        None => {
            crds.create(&PostParams::default(), &crd)
                .await
                .with_context(|| format!("cannot create CRD {name}"))?;
            tracing::info!(crd = %name, "installed the CRD");
        }
        Some(live) if lacks_versions(&live, &crd) => {
            // A kind with a new version, or its conversion webhook elsewhere: the versions and the conversion
            // are the operator's; the rest of the live CRD is left as it is.
            let patch = serde_json::json!({
                "spec": {"versions": crd.spec.versions, "conversion": crd.spec.conversion},
            });
            crds.patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
                .await
                .with_context(|| format!("cannot update the versions of CRD {name}"))?;
            tracing::info!(crd = %name, "updated the CRD's versions and conversion");
        }
        Some(_) => {}
    }
    // Watched as a `DynamicObject`, whose watch the caches compile already: a typed watch of CRDs would add a
    // copy of their large deserializer for the watch's buffered events (see `crate::json`).
    let resource = ApiResource::erase::<CustomResourceDefinition>(&());
    let watched: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
    tokio::time::timeout(
        Duration::from_secs(30),
        await_condition(watched, &name, is_established),
    )
    .await
    .with_context(|| format!("CRD {name} not established within 30s"))?
    .with_context(|| format!("cannot watch CRD {name}"))?;
    Ok(())
}

/// Whether `live` lacks a version `desired` declares, or converts otherwise than `desired` says (when it
/// says anything).
fn lacks_versions(live: &CustomResourceDefinition, desired: &CustomResourceDefinition) -> bool {
    let names = |c: &CustomResourceDefinition| -> Vec<(String, bool, bool)> {
        c.spec
            .versions
            .iter()
            .map(|v| (v.name.clone(), v.served, v.storage))
            .collect()
    };
    let mut live_names = names(live);
    live_names.sort();
    let mut desired_names = names(desired);
    desired_names.sort();
    live_names != desired_names
        || desired
            .spec
            .conversion
            .as_ref()
            .is_some_and(|c| live.spec.conversion.as_ref() != Some(c))
}

/// Whether a CRD's `Established` condition is `True` (kube's `is_crd_established`, on the CRD's JSON).
fn is_established(crd: Option<&DynamicObject>) -> bool {
    crd.and_then(|crd| crd.data["status"]["conditions"].as_array())
        .is_some_and(|conditions| {
            conditions
                .iter()
                .any(|c| c["type"] == "Established" && c["status"] == "True")
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn crd(status: serde_json::Value) -> DynamicObject {
        serde_json::from_value(json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "webapps.example.dev"},
            "status": status,
        }))
        .unwrap()
    }

    #[test]
    fn a_crd_is_established_by_its_condition() {
        let condition = |status| json!({"conditions": [{"type": "NamesAccepted", "status": "True"}, {"type": "Established", "status": status}]});
        assert!(is_established(Some(&crd(condition("True")))));
        assert!(!is_established(Some(&crd(condition("False")))));
        assert!(!is_established(Some(&crd(json!({})))));
        assert!(!is_established(None));
    }
}
