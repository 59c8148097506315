//! The selector kube-apiserver generates for a new Job (`generateSelector` of the Job strategy's
//! `PrepareForCreate`): unless `spec.manualSelector` is true, the pod template gets the labels
//! `controller-uid` and `batch.kubernetes.io/controller-uid` (the Job's uid), `job-name` and
//! `batch.kubernetes.io/job-name` (its name), each where not already set, and the selector's `matchLabels`
//! gets `batch.kubernetes.io/controller-uid`. Labels the user set are kept, so a conflicting one is refused by
//! validation.
//!
//! kube-apiserver does this after the field manager saw the request, so the request's manager owns none
//! of the generated entries: [`Generated::without`] gives the object as the manager saw it.

use serde_json::{Map, Value};

use crate::registry::ResourceType;

const CONTROLLER_UID: &str = "batch.kubernetes.io/controller-uid";
const LEGACY_CONTROLLER_UID: &str = "controller-uid";
const JOB_NAME: &str = "batch.kubernetes.io/job-name";
const LEGACY_JOB_NAME: &str = "job-name";

/// What [`generate`] added to a Job.
#[derive(Debug, Default)]
pub(super) struct Generated {
    /// The template's labels map did not exist.
    labels_map: bool,
    /// The template labels added.
    labels: Vec<&'static str>,
    /// The selector did not exist.
    selector: bool,
    /// The selector's `matchLabels` did not exist.
    match_labels: bool,
    /// `matchLabels` got the controller uid.
    selector_key: bool,
    /// The Job's labels were taken from its template.
    job_labels: bool,
}

/// Whether `rt` is the Job kind, whose creates get a generated selector.
pub(super) fn is_job(rt: &ResourceType) -> bool {
    rt.group == "batch" && rt.kind == "Job"
}

/// Generates a new Job's selector and template labels (a Job whose `spec.manualSelector` is not true);
/// `None` for a manual selector.
pub(super) fn generate(obj: &mut Value, uid: &str) -> Option<Generated> {
    let name = obj["metadata"]["name"].as_str().unwrap_or("").to_string();
    let spec = obj.get_mut("spec")?.as_object_mut()?;
    if spec.get("manualSelector").and_then(Value::as_bool) == Some(true) {
        // `SetDefaults_Job` alone: a Job without labels gets its template's, when it has some.
        let labels = spec
            .get("template")
            .and_then(|t| t.get("metadata"))
            .and_then(|m| m.get("labels"))
            .filter(|l| l.is_object())
            .cloned();
        if let (Some(labels), Some(metadata)) = (labels, obj.get_mut("metadata")) {
            let own = &mut metadata["labels"];
            if own.as_object().is_none_or(Map::is_empty) {
                *own = labels;
            }
        }
        return None;
    }
    let mut generated = Generated::default();
    let template = object_at(spec, "template", &mut false)?;
    let metadata = object_at(template, "metadata", &mut false)?;
    let labels = object_at(metadata, "labels", &mut generated.labels_map)?;
    for (key, value) in [
        (LEGACY_JOB_NAME, name.as_str()),
        (JOB_NAME, name.as_str()),
        (LEGACY_CONTROLLER_UID, uid),
        (CONTROLLER_UID, uid),
    ] {
        if !labels.contains_key(key) {
            labels.insert(key.into(), Value::String(value.into()));
            generated.labels.push(key);
        }
    }
    let template_labels = labels.clone();
    let selector = object_at(spec, "selector", &mut generated.selector)?;
    let match_labels = object_at(selector, "matchLabels", &mut generated.match_labels)?;
    if !match_labels.contains_key(CONTROLLER_UID) {
        match_labels.insert(CONTROLLER_UID.into(), Value::String(uid.into()));
        generated.selector_key = true;
    }
    // A Job without labels of its own gets its template's (kube-apiserver's defaulting shares the map the
    // generation then fills).
    let metadata = obj.get_mut("metadata")?.as_object_mut()?;
    if metadata
        .get("labels")
        .and_then(Value::as_object)
        .is_none_or(Map::is_empty)
    {
        metadata.insert("labels".into(), Value::Object(template_labels));
        generated.job_labels = true;
    }
    Some(generated)
}

/// The object under `key` of `map`, made (and `created` set) when absent or null.
fn object_at<'a>(
    map: &'a mut Map<String, Value>,
    key: &str,
    created: &mut bool,
) -> Option<&'a mut Map<String, Value>> {
    let slot = map.entry(key).or_insert(Value::Null);
    if !slot.is_object() {
        *created = true;
        *slot = Value::Object(Map::new());
    }
    slot.as_object_mut()
}

impl Generated {
    /// A copy of `obj` without what [`generate`] added: the object the request's field manager saw.
    pub(super) fn without(&self, obj: &Value) -> Value {
        let mut copy = obj.clone();
        if self.job_labels
            && let Some(metadata) = copy["metadata"].as_object_mut()
        {
            // The labels the user gave the template, which kube-apiserver's decoding copied.
            let mut given = obj["spec"]["template"]["metadata"]["labels"].clone();
            if let Some(given_map) = given.as_object_mut() {
                for key in &self.labels {
                    given_map.remove(*key);
                }
            }
            if given.as_object().is_some_and(|m| !m.is_empty()) {
                metadata.insert("labels".into(), given);
            } else {
                metadata.remove("labels");
            }
        }
        let spec = &mut copy["spec"];
        if let Some(labels) = spec
            .pointer_mut("/template/metadata/labels")
            .and_then(Value::as_object_mut)
        {
            for key in &self.labels {
                labels.remove(*key);
            }
        }
        if self.labels_map
            && let Some(metadata) = spec
                .pointer_mut("/template/metadata")
                .and_then(Value::as_object_mut)
        {
            metadata.remove("labels");
        }
        if self.selector {
            if let Some(s) = spec.as_object_mut() {
                s.remove("selector");
            }
        } else if self.match_labels {
            if let Some(s) = spec["selector"].as_object_mut() {
                s.remove("matchLabels");
            }
        } else if self.selector_key
            && let Some(m) = spec["selector"]["matchLabels"].as_object_mut()
        {
            m.remove(CONTROLLER_UID);
        }
        copy
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn generates_and_strips_the_selector_and_labels() {
        let original = json!({"metadata": {"name": "j"}, "spec": {"template": {"metadata": {"labels": {"app": "a", "job-name": "mine"}}}}});
        let mut job = original.clone();
        let generated = generate(&mut job, "u1").expect("generated");
        assert_eq!(
            job["spec"]["selector"],
            json!({"matchLabels": {"batch.kubernetes.io/controller-uid": "u1"}})
        );
        assert_eq!(
            job["spec"]["template"]["metadata"]["labels"],
            json!({"app": "a", "job-name": "mine", "batch.kubernetes.io/job-name": "j",
                "controller-uid": "u1", "batch.kubernetes.io/controller-uid": "u1"})
        );
        assert_eq!(
            job["metadata"]["labels"],
            job["spec"]["template"]["metadata"]["labels"]
        );
        let mut expected = original.clone();
        expected["metadata"]["labels"] = json!({"app": "a", "job-name": "mine"});
        assert_eq!(generated.without(&job), expected);
        let mut manual = json!({"metadata": {"name": "j"}, "spec": {"manualSelector": true}});
        assert!(generate(&mut manual, "u1").is_none());
    }
}
