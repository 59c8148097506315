//! CustomResourceDefinitions: validation, registering the resource they define, and their status.

use std::sync::Arc;

use serde_json::Value;

use super::error::{ApiError, ApiResult, Cause};
use super::registry::{InProcessHandlers, OpenApiSource, PrinterColumn, ResourceType, ScaleSpec};
use super::schema::{Schema, SchemaError};
use super::store::{State, StorageKey, key_of};

pub mod status;
pub mod versions;

pub use status::CLEANUP_FINALIZER;

fn cause(field: &str, reason: &str, message: String) -> Cause {
    Cause {
        reason: reason.into(),
        message,
        field: field.into(),
    }
}

/// Checks what the real server checks of a CRD that operators get wrong. `name` is `metadata.name`.
pub fn validate(crd: &Value, name: &str) -> ApiResult<()> {
    let spec = &crd["spec"];
    let group = spec["group"].as_str().unwrap_or("");
    let plural = spec["names"]["plural"].as_str().unwrap_or("");
    let mut causes = Vec::new();
    if group.is_empty() {
        causes.push(cause(
            "spec.group",
            "FieldValueRequired",
            "Required value".into(),
        ));
    } else if !group.contains('.') {
        causes.push(cause(
            "spec.group",
            "FieldValueInvalid",
            format!("Invalid value: \"{group}\": should be a domain with at least one dot"),
        ));
    }
    if plural.is_empty() {
        causes.push(cause(
            "spec.names.plural",
            "FieldValueRequired",
            "Required value".into(),
        ));
    }
    if spec["names"]["kind"].as_str().unwrap_or("").is_empty() {
        causes.push(cause(
            "spec.names.kind",
            "FieldValueRequired",
            "Required value".into(),
        ));
    }
    if !group.is_empty() && !plural.is_empty() && name != format!("{plural}.{group}") {
        causes.push(cause(
            "metadata.name",
            "FieldValueInvalid",
            format!("Invalid value: \"{name}\": must be spec.names.plural+\".\"+spec.group"),
        ));
    }
    match spec["scope"].as_str() {
        Some("Namespaced") | Some("Cluster") => {}
        Some(other) => causes.push(cause(
            "spec.scope",
            "FieldValueNotSupported",
            format!(
                "Unsupported value: \"{other}\": supported values: \"Cluster\", \"Namespaced\""
            ),
        )),
        None => causes.push(cause(
            "spec.scope",
            "FieldValueRequired",
            "Required value".into(),
        )),
    }
    let versions = spec["versions"].as_array().cloned().unwrap_or_default();
    if versions.is_empty() {
        causes.push(cause(
            "spec.versions",
            "FieldValueInvalid",
            "Invalid value: \"null\": must have exactly one version marked as storage version"
                .into(),
        ));
    } else {
        causes.extend(versions::version_causes(&versions));
        if versions::names_repeat(&versions) {
            causes.push(cause(
                "spec.versions",
                "FieldValueInvalid",
                format!(
                    "Invalid value: {}: must contain unique version names",
                    Value::Array(versions.clone())
                ),
            ));
        }
        let storage = versions
            .iter()
            .filter(|v| v["storage"].as_bool() == Some(true))
            .count();
        if storage != 1 {
            causes.push(cause(
                "spec.versions",
                "FieldValueInvalid",
                format!(
                    "Invalid value: {}: must have exactly one version marked as storage version",
                    Value::Array(versions.clone())
                ),
            ));
        }
        printer_columns(&versions, &mut causes);
        // Identical schemas are one `spec.validation` in the server's internal version: their errors
        // are reported once, there.
        let shared = versions
            .windows(2)
            .all(|w| w[0]["schema"] == w[1]["schema"]);
        for (i, v) in versions.iter().enumerate() {
            if let Some(schema) = v["schema"].get("openAPIV3Schema") {
                match Schema::new(schema) {
                    Ok(_) => {}
                    Err(e @ (SchemaError::Rule { .. } | SchemaError::Rules(_))) => {
                        if shared && i > 0 {
                            continue;
                        }
                        let errors = match e {
                            SchemaError::Rules(errors) => errors,
                            one => vec![one],
                        };
                        for e in errors {
                            if let SchemaError::Rule {
                                path,
                                reason,
                                message,
                            } = e
                            {
                                let field = if shared {
                                    format!("spec.validation.{path}")
                                } else {
                                    format!("spec.versions[{i}].schema.{path}")
                                };
                                causes.push(cause(&field, reason, message));
                            }
                        }
                    }
                    Err(e) => causes.push(cause(
                        &format!("spec.versions[{i}].schema.openAPIV3Schema"),
                        "FieldValueInvalid",
                        format!("Invalid value: \"\": {e}"),
                    )),
                }
            }
        }
    }
    causes.extend(versions::conversion_causes(spec));
    causes.extend(versions::stored_versions_causes(
        &crd["status"]["storedVersions"],
        spec["versions"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default(),
    ));
    if causes.is_empty() {
        Ok(())
    } else {
        Err(ApiError::invalid(
            "CustomResourceDefinition",
            "apiextensions.k8s.io",
            name,
            causes,
        ))
    }
}

/// The checks of `additionalPrinterColumns`. kube-apiserver names the fields as its internal form holds them:
/// `spec.additionalPrinterColumns[j]` when every version has the same columns, else
/// `spec.versions[i].additionalPrinterColumns[j]`.
fn printer_columns(versions: &[Value], causes: &mut Vec<Cause>) {
    const TYPES: &str = "boolean,date,integer,number,string";
    const FORMATS: &str = "byte,date,date-time,double,float,int32,int64,password";
    let columns_of = |v: &Value| {
        v["additionalPrinterColumns"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    };
    let shared = versions
        .windows(2)
        .all(|w| columns_of(&w[0]) == columns_of(&w[1]));
    for (i, version) in versions.iter().enumerate() {
        if shared && i > 0 {
            break;
        }
        for (j, column) in columns_of(version).iter().enumerate() {
            let at = if shared {
                format!("spec.additionalPrinterColumns[{j}]")
            } else {
                format!("spec.versions[{i}].additionalPrinterColumns[{j}]")
            };
            let text = |key: &str| column[key].as_str().unwrap_or("");
            if text("name").is_empty() {
                causes.push(cause(
                    &format!("{at}.name"),
                    "FieldValueRequired",
                    "Required value".into(),
                ));
            }
            let type_ = text("type");
            if type_.is_empty() {
                let message = format!("Required value: must be one of {TYPES}");
                causes.push(cause(&format!("{at}.type"), "FieldValueRequired", message));
            } else if !TYPES.split(',').any(|t| t == type_) {
                let message = format!("Invalid value: \"{type_}\": must be one of {TYPES}");
                causes.push(cause(&format!("{at}.type"), "FieldValueInvalid", message));
            }
            let format = text("format");
            if !format.is_empty() && !FORMATS.split(',').any(|f| f == format) {
                let message = format!("Invalid value: \"{format}\": must be one of {FORMATS}");
                causes.push(cause(&format!("{at}.format"), "FieldValueInvalid", message));
            }
            let path = text("jsonPath");
            if path.is_empty() {
                causes.push(cause(
                    &format!("{at}.JSONPath"),
                    "FieldValueRequired",
                    "Required value".into(),
                ));
            } else if !path.starts_with('.') {
                let message = format!(
                    "Invalid value: \"{path}\": must be a simple json path starting with ."
                );
                causes.push(cause(
                    &format!("{at}.JSONPath"),
                    "FieldValueInvalid",
                    message,
                ));
            }
        }
    }
}

/// The storage key of the resource a CRD defines.
pub fn storage_of(crd: &Value) -> Option<StorageKey> {
    let group = crd["spec"]["group"].as_str()?;
    let plural = crd["spec"]["names"]["plural"].as_str()?;
    Some((group.to_string(), plural.to_string()))
}

/// The name of the CRD that defines a custom resource's storage, if it is one.
pub fn crd_of_storage(state: &State, storage: &StorageKey) -> Option<String> {
    let t = state.registry.find_storage(storage)?;
    t.custom.then(|| format!("{}.{}", storage.1, storage.0))
}

fn types_of(crd: &Value, handlers: &InProcessHandlers) -> Vec<ResourceType> {
    let spec = &crd["spec"];
    let (Some(group), Some(kind), Some(plural)) = (
        spec["group"].as_str(),
        spec["names"]["kind"].as_str(),
        spec["names"]["plural"].as_str(),
    ) else {
        return Vec::new();
    };
    let namespaced = spec["scope"].as_str() != Some("Cluster");
    let versions = spec["versions"].as_array().cloned().unwrap_or_default();
    let storage_version = versions
        .iter()
        .find(|v| v["storage"].as_bool() == Some(true))
        .and_then(|v| v["name"].as_str())
        .unwrap_or("v1")
        .to_string();
    // kube-apiserver's discovery prefers the served version first in its order, not the storage version.
    let preferred = versions
        .iter()
        .filter(|v| v["served"].as_bool() != Some(false))
        .filter_map(|v| v["name"].as_str())
        .min_by_key(|v| versions::kube_aware_key(v))
        .unwrap_or("")
        .to_string();
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    versions
        .iter()
        .filter(|v| v["served"].as_bool() != Some(false))
        .filter_map(|v| {
            let version = v["name"].as_str()?;
            let mut t = ResourceType::new(group, version, kind, plural, namespaced);
            t.singular = spec["names"]["singular"]
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| kind.to_lowercase());
            t.short_names = strings(&spec["names"]["shortNames"]);
            t.categories = strings(&spec["names"]["categories"]);
            t.generation = true;
            t.custom = true;
            t.storage_version = storage_version.clone();
            t.preferred = version == preferred;
            t.deprecation_warning = versions::deprecation_warning(spec, v);
            t.conversion_webhook = versions::conversion_webhook(spec, handlers);
            t.status_subresource = v["subresources"]["status"].is_object();
            if let Some(scale) = v["subresources"]["scale"].as_object() {
                let path = |k: &str| {
                    scale
                        .get(k)
                        .and_then(Value::as_str)
                        .map(|s| s.trim_start_matches('.').to_string())
                };
                t.scale = Some(ScaleSpec {
                    spec_replicas_path: path("specReplicasPath")
                        .unwrap_or_else(|| "spec.replicas".into()),
                    status_replicas_path: path("statusReplicasPath")
                        .unwrap_or_else(|| "status.replicas".into()),
                    label_selector_path: path("labelSelectorPath"),
                });
            }
            t.schema = v["schema"]
                .get("openAPIV3Schema")
                .and_then(|s| Schema::new(s).ok())
                .map(Arc::new);
            t.openapi = v["schema"]
                .get("openAPIV3Schema")
                .map(|s| OpenApiSource::Custom(Arc::new(s.clone())));
            t.printer_columns = v["additionalPrinterColumns"]
                .as_array()
                .map(|cols| {
                    cols.iter()
                        .filter_map(|c| {
                            let text = |key: &str| c[key].as_str().unwrap_or("").to_string();
                            Some(PrinterColumn {
                                name: c["name"].as_str()?.to_string(),
                                type_: c["type"].as_str().unwrap_or("string").to_string(),
                                format: text("format"),
                                description: text("description"),
                                priority: c["priority"].as_i64().unwrap_or(0),
                                json_path: c["jsonPath"].as_str()?.to_string(),
                            })
                        })
                        .collect()
                })
                .unwrap_or_default();
            Some(t)
        })
        .collect()
}

/// Registers the resource a stored CRD defines and writes what kube-apiserver's naming and establishing
/// controllers write to its status (see [`status::controllers`]).
pub fn sync(state: &mut State, crd: &Value) {
    let Some(storage) = storage_of(crd) else {
        return;
    };
    state.registry.remove_resource(&storage.0, &storage.1);
    for t in types_of(crd, &state.webhook_handlers) {
        state.registry.insert(t);
    }
    let Some(status) = status::controllers(crd, &state.now) else {
        return;
    };
    let mut next = crd.clone();
    next["status"] = status;
    let crd_storage: StorageKey = (
        "apiextensions.k8s.io".into(),
        "customresourcedefinitions".into(),
    );
    if state.get(&crd_storage, &key_of(crd)).is_some() {
        state.put(&crd_storage, next);
    }
}

/// Forgets the resource a removed CRD defined.
pub fn unregister(state: &mut State, crd: &Value) {
    if let Some(storage) = storage_of(crd) {
        state.registry.remove_resource(&storage.0, &storage.1);
        state.collections.remove(&storage);
    }
}
