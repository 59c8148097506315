//! Storage version migration: every stored object of a CRD rewritten at the storage version, then the other
//! versions dropped from `status.storedVersions`, so that an old version can later be removed from the CRD.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ApiResource, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use kube::core::GroupVersionKind;
use kube::{Client, ResourceExt};

/// What a migration did to one CRD.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Migrated {
    /// The CRD's name.
    pub crd: String,
    /// The storage version objects are now stored at.
    pub storage: String,
    /// Objects read.
    pub objects: usize,
    /// Objects the API server wrote again (those stored at another version; an object already at the
    /// storage version is not written: kube-apiserver skips an update that changes no stored byte).
    pub rewritten: usize,
    /// `status.storedVersions` before the migration.
    pub stored_before: Vec<String>,
}

/// Why a migration stopped. Running it again carries on: every step is safe to repeat.
#[derive(Debug, thiserror::Error)]
pub enum MigrateError {
    /// The CRD could not be read.
    #[error("cannot read CRD {crd}: {source}")]
    Read {
        /// The CRD's name.
        crd: String,
        /// The API error.
        source: kube::Error,
    },
    /// The CRD has no storage version (the API server would not have accepted it).
    #[error("CRD {crd} has no storage version")]
    NoStorage {
        /// The CRD's name.
        crd: String,
    },
    /// Listing or rewriting an object failed.
    #[error("cannot rewrite {what} of CRD {crd}: {source}")]
    Rewrite {
        /// The CRD's name.
        crd: String,
        /// The object (or the list).
        what: String,
        /// The API error.
        source: kube::Error,
    },
    /// Writing `status.storedVersions` failed.
    #[error("cannot write status.storedVersions of CRD {crd}: {source}")]
    StoredVersions {
        /// The CRD's name.
        crd: String,
        /// The API error.
        source: kube::Error,
    },
}

/// Rewrites every object of CRD `crd` (`PLURAL.GROUP`) at its storage version (a `PUT` of the object as
/// read, which the API server stores re-encoded at the storage version), then sets `status.storedVersions`
/// to the storage version alone. Objects deleted or written by someone else meanwhile are skipped (a write
/// stores at the storage version). Safe to run twice and to run again after an interruption; it needs the
/// conversion webhook to be served, as every read of an object stored at another version does.
pub async fn migrate(client: &Client, crd: &str) -> Result<Migrated, MigrateError> {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let definition = crds.get(crd).await.map_err(|source| MigrateError::Read {
        crd: crd.to_string(),
        source,
    })?;
    let spec = &definition.spec;
    let storage = spec
        .versions
        .iter()
        .find(|v| v.storage)
        .map(|v| v.name.clone())
        .ok_or_else(|| MigrateError::NoStorage {
            crd: crd.to_string(),
        })?;
    let stored_before = definition
        .status
        .as_ref()
        .and_then(|s| s.stored_versions.clone())
        .unwrap_or_default();
    let gvk = GroupVersionKind::gvk(&spec.group, &storage, &spec.names.kind);
    let resource = ApiResource::from_gvk_with_plural(&gvk, &spec.names.plural);
    let api: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
    let rewrite_error = |what: String, source| MigrateError::Rewrite {
        crd: crd.to_string(),
        what,
        source,
    };
    let (mut objects, mut rewritten) = (0, 0);
    let mut params = ListParams::default().limit(500);
    loop {
        let page = api
            .list(&params)
            .await
            .map_err(|e| rewrite_error("the list".into(), e))?;
        for object in &page.items {
            objects += 1;
            let namespaced: Api<DynamicObject> = match object.namespace() {
                Some(ns) => Api::namespaced_with(client.clone(), &ns, &resource),
                None => Api::all_with(client.clone(), &resource),
            };
            let before = object.resource_version();
            match namespaced
                .replace(&object.name_any(), &PostParams::default(), object)
                .await
            {
                Ok(written) if written.resource_version() != before => rewritten += 1,
                Ok(_) => {}
                // Deleted, or written by someone else (and so stored at the storage version) meanwhile.
                Err(kube::Error::Api(s)) if s.code == 404 || s.code == 409 => {}
                Err(e) => return Err(rewrite_error(object_name(object), e)),
            }
        }
        match page.metadata.continue_.filter(|c| !c.is_empty()) {
            Some(token) => params = params.continue_token(&token),
            None => break,
        }
    }
    if stored_before != [storage.clone()] {
        let patch = serde_json::json!({"status": {"storedVersions": [storage]}});
        crds.patch_status(crd, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map_err(|source| MigrateError::StoredVersions {
                crd: crd.to_string(),
                source,
            })?;
    }
    tracing::info!(%crd, %storage, objects, rewritten, "migrated to the storage version");
    Ok(Migrated {
        crd: crd.to_string(),
        storage,
        objects,
        rewritten,
        stored_before,
    })
}

fn object_name(object: &DynamicObject) -> String {
    match object.namespace() {
        Some(ns) => format!("{ns}/{}", object.name_any()),
        None => object.name_any(),
    }
}
