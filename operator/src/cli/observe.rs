//! What an operator run on the embedded cluster logs of its objects: one line per change that matters.

use std::collections::BTreeMap;
use std::fmt::Debug;

use futures::{StreamExt, TryStreamExt};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::runtime::{WatchStreamExt, watcher};
use kube::{Api, Client, Resource, ResourceExt};
use serde::de::DeserializeOwned;

use crate::cache::Wire;

/// Logs `summary` of every object of kind `K` (in every namespace) whenever it changes, until aborted (what
/// [`App::log`](super::App::log) runs on the embedded cluster).
pub async fn log_changes<K>(client: Client, summary: fn(&K) -> String)
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + Debug + Send + 'static,
{
    let kind = K::kind(&()).to_string();
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    let mut changes = watcher(Api::<Wire<K>>::all(client), watcher::Config::default())
        .default_backoff()
        .applied_objects()
        .map_ok(|Wire(object)| object)
        .boxed();
    loop {
        match changes.try_next().await {
            Ok(Some(object)) => {
                let line = summary(&object);
                let name = match object.namespace() {
                    Some(ns) => format!("{ns}/{}", object.name_any()),
                    None => object.name_any(),
                };
                if seen.get(&name) != Some(&line) {
                    tracing::info!(kind = %kind, name = %name, "{line}");
                    seen.insert(name, line);
                }
            }
            Ok(None) => return,
            Err(e) => tracing::warn!(error = %e, "watch failed; retrying"),
        }
    }
}

/// `Ready` among `conditions`, as `True (Reason) message`, or `unknown`.
pub fn ready(conditions: &[Condition]) -> String {
    conditions
        .iter()
        .find(|c| c.type_ == "Ready")
        .map(|c| format!("{} ({}) {}", c.status, c.reason, c.message))
        .unwrap_or_else(|| "unknown".into())
}
