//! A child created with a `POST`, and its first apply: moving what its creation owns into the apply's entry.
//!
//! A child the caches do not hold is created with a `POST`, which creates only: when an object of that name
//! exists (someone else's, or one of the parent's the cache has not shown yet) the answer is `409
//! AlreadyExists` and nothing is written, so no apply can take someone else's object over, and no read is
//! needed first. kube-apiserver records what a `POST` sets under the field manager's `operation: Update`
//! entry, with the fields it defaulted, and an apply does not remove what another entry owns, even its own
//! manager's `Update` entry: a field the desired state later drops would stay. So after the first apply to
//! such a child the runtime moves the `Update` entry's fields into the `Apply` entry (a merge patch of
//! `metadata.managedFields`, guarded by the `resourceVersion`) and, when the `Update` entry owned fields the
//! apply does not set, applies again: the dropped fields go, and those the server defaulted at the creation
//! are defaulted again. The child then stands as if an apply had created it. kubectl moves an object from
//! client-side to server-side apply the same way.

use kube::ResourceExt;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::ChildOutcome;
use super::applied::set_type;
use crate::answer::Answer;
use crate::cache::{CachedKind, OWNER_LABEL};
use crate::command::{Command, Target};
use crate::context::Context;
use crate::error::Result;
use crate::json_text::JsonText;

/// Whether a child the cache does not hold is created with a `POST` instead of read first and applied: with a
/// forced apply, as the first apply after must take the fields from the `POST`'s entry (without force it
/// conflicts with it), and not with one write per pass, as the move of those fields writes more than once.
pub(super) fn creates_by_post(force: bool, cx: &Context) -> bool {
    force && !cx.settings().one_action
}

/// Creates `desired` with a `POST` under `manager`: the child as the API server stored it (as sent when no
/// server answered), or the `409 AlreadyExists` (see [`Error::is_already_exists`](crate::Error)) when an
/// object of its name exists.
pub(super) async fn post_child<C: CachedKind + Serialize>(
    cx: &mut Context,
    desired: &C,
    manager: Option<String>,
) -> Result<C> {
    let mut object = crate::json::convert(desired)?;
    set_type::<C>(&mut object);
    let out = cx
        .execute_reflected(Command::Create {
            target: Target::of(desired),
            object,
            field_manager: manager,
        })
        .await
        .map_err(|e| e.refused_child(&C::kind(&())))?;
    match out {
        // Without its managed fields, as a cached child is.
        Some(answer) => Ok(crate::unmanaged::from_str(answer.json())?),
        None => Ok(desired.clone()),
    }
}

/// How often the move is tried again after a `409` (another write came between the answer and the patch).
const ATTEMPTS: usize = 3;

/// After an apply of `object` by `manager` answered `answer`: moves the fields the manager's `Update` entry
/// owns (the child was created with a `POST`) into its `Apply` entry, and applies again when that entry owned
/// more than the apply sets. Returns the last answer. Nothing is written when there is no such entry, nor with
/// one write per pass.
pub(super) async fn adopt_created_fields(
    cx: &mut Context,
    answer: Option<Answer>,
    target: &Target,
    object: &JsonText,
    manager: &str,
    force: bool,
) -> Result<Option<Answer>> {
    let Some(answer) = answer else {
        return Ok(None);
    };
    if cx.settings().one_action {
        return Ok(Some(answer));
    }
    let Ok(Managed { metadata }) = serde_json::from_str::<Managed>(answer.json()) else {
        return Ok(Some(answer));
    };
    match move_fields(cx, target, metadata, manager).await? {
        None => Ok(Some(answer)),
        Some((out, false)) => Ok(out.or(Some(answer))),
        Some((out, true)) => {
            let again = cx
                .execute_reflected(apply(target, object, manager, force))
                .await?;
            Ok(again.or(out).or(Some(answer)))
        }
    }
}

/// Applies `object` to a child as `manager`. When the API server refuses the apply as invalid (`422`) and the
/// child still has the manager's `Update` entry from its `POST`, the fields of that entry are moved into the
/// `Apply` entry first and the apply is sent again: an apply leaves what another entry owns, so a list item the
/// `POST` set whose key the desired state changed (a Service's port, a container's port) stays beside the new
/// one, and the two can break a rule (two ports named `http`). Once the `Apply` entry owns them, the apply
/// removes what it no longer sets. A refusal with no such entry, or one the move does not cure, is returned.
pub(super) async fn apply_child(
    cx: &mut Context,
    target: &Target,
    object: &JsonText,
    manager: &str,
    force: bool,
) -> Result<Option<Answer>> {
    let refused = match cx
        .execute_reflected(apply(target, object, manager, force))
        .await
    {
        Err(e) if e.code() == Some(422) && !cx.settings().one_action => e,
        other => return other,
    };
    let Some(fresh) = cx.read_value(target).await? else {
        return Err(refused);
    };
    let Ok(Managed { metadata }) = serde_json::from_value::<Managed>(fresh) else {
        return Err(refused);
    };
    match move_fields(cx, target, metadata, manager).await? {
        None => Err(refused),
        Some(_) => {
            cx.execute_reflected(apply(target, object, manager, force))
                .await
        }
    }
}

fn apply(target: &Target, object: &JsonText, manager: &str, force: bool) -> Command {
    Command::Apply {
        target: target.clone(),
        object: object.clone(),
        field_manager: manager.to_owned(),
        force,
    }
}

/// Moves the manager's `Update` entry into its `Apply` entry with a merge patch of `metadata.managedFields`
/// guarded by the `resourceVersion` of `meta`, reading the child again after a `409` (another write came
/// between). `None` when there is no such entry (or the child is gone); else the patch's answer and whether
/// the `Update` entry owned fields the `Apply` entry did not (an apply prunes them now).
async fn move_fields(
    cx: &mut Context,
    target: &Target,
    mut meta: ManagedMeta,
    manager: &str,
) -> Result<Option<(Option<Answer>, bool)>> {
    for attempt in 1..=ATTEMPTS {
        let Some(moved) = moved(&meta.managed_fields, manager) else {
            return Ok(None);
        };
        let patch = json!({
            "metadata": {"resourceVersion": meta.resource_version, "managedFields": moved.entries}
        });
        let command = Command::Patch {
            target: target.clone(),
            patch,
        };
        match cx.execute_reflected(command).await {
            Ok(out) => return Ok(Some((out, moved.apply_again))),
            Err(e) if e.is_conflict() && attempt < ATTEMPTS => {
                let Some(fresh) = cx.read_value(target).await? else {
                    return Ok(None);
                };
                match serde_json::from_value::<Managed>(fresh) {
                    Ok(m) => meta = m.metadata,
                    Err(_) => return Ok(None),
                }
            }
            // The last conflict fails the pass; the move is tried again at the child's next change.
            Err(e) => return Err(e),
        }
    }
    Ok(None)
}

/// The metadata the move reads.
#[derive(Deserialize)]
struct Managed {
    metadata: ManagedMeta,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ManagedMeta {
    #[serde(default)]
    resource_version: Option<String>,
    #[serde(default)]
    managed_fields: Vec<Value>,
}

/// `metadata.managedFields` with the manager's `Update` entry moved into its `Apply` entry.
#[derive(Debug, PartialEq)]
struct Moved {
    entries: Vec<Value>,
    /// The `Update` entry owned fields the `Apply` entry did not: an apply prunes them now.
    apply_again: bool,
}

/// Moves the fields of `manager`'s `Update` entry of the main resource into its `Apply` entry (of the same
/// apiVersion), and drops the `Update` entry; `None` when there is no such `Update` entry.
fn moved(entries: &[Value], manager: &str) -> Option<Moved> {
    let entry = |operation: &str| {
        entries.iter().position(|e| {
            e["manager"] == manager
                && e["operation"] == operation
                && e.get("subresource")
                    .and_then(Value::as_str)
                    .is_none_or(str::is_empty)
        })
    };
    let update = entry("Update")?;
    let created = entries[update]
        .get("fieldsV1")
        .cloned()
        .unwrap_or_else(|| json!({}));
    let mut out = entries.to_vec();
    let apply_again = match entry("Apply") {
        Some(apply) if entries[apply]["apiVersion"] == entries[update]["apiVersion"] => {
            let fields = out[apply]
                .as_object_mut()?
                .entry("fieldsV1")
                .or_insert_with(|| json!({}));
            let covered = covers(fields, &created);
            union_into(fields, &created);
            !covered
        }
        // Another apiVersion's field set cannot be merged here; left as it is.
        Some(_) => return None,
        None => {
            let mut entry = out[update].clone();
            entry["operation"] = json!("Apply");
            out.insert(0, entry);
            true
        }
    };
    out.retain(|e| {
        !(e["manager"] == manager
            && e["operation"] == "Update"
            && e.get("subresource")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty))
    });
    Some(Moved {
        entries: out,
        apply_again,
    })
}

/// Whether the field set `set` holds every field of `other` (`FieldsV1`: nested objects of `f:`, `k:`, `v:`
/// and `.` members).
fn covers(set: &Value, other: &Value) -> bool {
    match (set, other) {
        (Value::Object(s), Value::Object(o)) => o
            .iter()
            .all(|(k, v)| s.get(k).is_some_and(|sv| covers(sv, v))),
        _ => true,
    }
}

/// Adds every field of `other` to the field set `set`.
fn union_into(set: &mut Value, other: &Value) {
    let Value::Object(other) = other else {
        return;
    };
    if !set.is_object() {
        *set = Value::Object(Map::new());
    }
    if let Value::Object(set) = set {
        for (k, v) in other {
            match set.get_mut(k) {
                Some(existing) => union_into(existing, v),
                None => {
                    set.insert(k.clone(), v.clone());
                }
            }
        }
    }
}

/// A live child created once (one child's or a set's `CreateOnly`): never written, except that the owner label is put back when it
/// is missing (created before the runtime set it, or removed), and only it, so that a cache of owned objects
/// holds the child; as one child created once ([`WriteStrategy::CreateOnly`](super::WriteStrategy::CreateOnly)).
pub(super) async fn created_once<C: CachedKind + Serialize>(
    cx: &mut Context,
    live: &C,
    uid: &str,
) -> Result<ChildOutcome<C>> {
    cx.written().seen(live);
    if live.labels().get(OWNER_LABEL).map(String::as_str) == Some(uid) {
        return Ok(ChildOutcome::Unchanged(live.clone()));
    }
    let out = cx
        .execute_reflected(Command::Patch {
            target: Target::of(live),
            patch: serde_json::json!({ "metadata": { "labels": { OWNER_LABEL: uid } } }),
        })
        .await
        .map_err(|e| e.refused_child(&C::kind(&())))?;
    Ok(ChildOutcome::Updated(match out {
        Some(answer) => crate::unmanaged::from_str(answer.json())?,
        None => live.clone(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(manager: &str, operation: &str, fields: Value) -> Value {
        json!({"manager": manager, "operation": operation, "apiVersion": "apps/v1",
               "time": "2026-11-27T00:00:00Z", "fieldsType": "FieldsV1", "fieldsV1": fields})
    }

    #[test]
    fn the_creators_fields_move_into_the_apply_entry_and_an_apply_follows_when_it_owned_more() {
        let entries = [
            entry(
                "web",
                "Apply",
                json!({"f:metadata": {"f:labels": {"f:app": {}}}}),
            ),
            entry(
                "web",
                "Update",
                json!({"f:metadata": {"f:labels": {".": {}, "f:app": {}, "f:drop": {}}},
                       "f:spec": {"f:progressDeadlineSeconds": {}}}),
            ),
            entry("other", "Update", json!({"f:spec": {"f:paused": {}}})),
            json!({"manager": "web", "operation": "Update", "subresource": "status",
                   "apiVersion": "apps/v1", "fieldsV1": {"f:status": {}}}),
        ];
        let out = moved(&entries, "web").expect("an Update entry to move");
        assert!(out.apply_again);
        assert_eq!(out.entries.len(), 3);
        assert_eq!(
            out.entries[0]["fieldsV1"],
            json!({"f:metadata": {"f:labels": {".": {}, "f:app": {}, "f:drop": {}}},
                   "f:spec": {"f:progressDeadlineSeconds": {}}})
        );
        assert_eq!(out.entries[1], entries[2]);
        assert_eq!(out.entries[2], entries[3], "the status entry stays");
    }

    #[test]
    fn an_update_entry_the_apply_covers_goes_without_another_apply() {
        let fields = json!({"f:data": {".": {}, "f:a": {}}});
        let entries = [
            entry("web", "Apply", fields.clone()),
            entry("web", "Update", json!({"f:data": {"f:a": {}}})),
        ];
        let out = moved(&entries, "web").expect("an Update entry to move");
        assert_eq!(
            out,
            Moved {
                entries: vec![entry("web", "Apply", fields)],
                apply_again: false
            }
        );
    }

    #[test]
    fn nothing_moves_without_the_managers_update_entry_or_across_api_versions() {
        let apply = entry("web", "Apply", json!({"f:data": {}}));
        assert_eq!(moved(std::slice::from_ref(&apply), "web"), None);
        let theirs = entry("kubectl", "Update", json!({"f:data": {}}));
        assert_eq!(moved(&[apply.clone(), theirs], "web"), None);
        let mut old = entry("web", "Update", json!({"f:data": {}}));
        old["apiVersion"] = json!("apps/v1beta1");
        assert_eq!(moved(&[apply, old], "web"), None);
    }

    /// Answers a move with `409` once, then as the server would; reads and applies answer fixed versions.
    #[cfg(feature = "testing")]
    #[derive(Default)]
    struct Scripted {
        log: std::sync::Mutex<Vec<String>>,
    }

    #[cfg(feature = "testing")]
    fn object(version: &str, entries: Value) -> Value {
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": "c", "namespace": "default", "uid": "u",
                            "resourceVersion": version, "managedFields": entries}})
    }

    #[cfg(feature = "testing")]
    fn created_entries() -> Value {
        json!([
            entry("web", "Apply", json!({"f:data": {"f:a": {}}})),
            entry(
                "web",
                "Update",
                json!({"f:data": {".": {}, "f:a": {}, "f:b": {}}})
            )
        ])
    }

    #[cfg(feature = "testing")]
    impl crate::command::Dispatcher for Scripted {
        fn execute<'a>(
            &'a self,
            command: &'a Command,
        ) -> futures::future::BoxFuture<'a, Result<Option<Answer>>> {
            use futures::FutureExt;
            let mut log = self.log.lock().unwrap();
            let out = match command {
                Command::Patch { patch, .. } => {
                    let version = patch["metadata"]["resourceVersion"].as_str().unwrap_or("");
                    log.push(format!("move at {version}"));
                    if log.len() == 1 {
                        let status =
                            kube::core::Status::failure("the object has been modified", "Conflict")
                                .with_code(409);
                        Err(crate::Error::kube(
                            "patch",
                            kube::Error::Api(status.boxed()),
                        ))
                    } else {
                        Ok(Some(
                            Answer::of(&object("12", patch["metadata"]["managedFields"].clone()))
                                .unwrap(),
                        ))
                    }
                }
                Command::Apply { .. } => {
                    log.push("apply".into());
                    Ok(Some(
                        Answer::of(&object(
                            "13",
                            json!([entry("web", "Apply", json!({"f:data": {"f:a": {}}}))]),
                        ))
                        .unwrap(),
                    ))
                }
                other => panic!("unexpected {other:?}"),
            };
            async move { out }.boxed()
        }

        fn get<'a>(
            &'a self,
            _target: &'a Target,
        ) -> futures::future::BoxFuture<'a, Result<Option<Value>>> {
            use futures::FutureExt;
            self.log.lock().unwrap().push("read".into());
            async { Ok(Some(object("11", created_entries()))) }.boxed()
        }
    }

    #[cfg(feature = "testing")]
    #[tokio::test]
    async fn a_move_refused_for_a_newer_version_is_tried_again_on_a_fresh_read_and_then_applied() {
        use std::sync::Arc;
        let scripted = Arc::new(Scripted::default());
        let mut cx = Context::new(
            crate::testing::offline_caches(),
            scripted.clone(),
            Arc::new(crate::context::Settings::new("web")),
            Default::default(),
            k8s_openapi::jiff::Timestamp::UNIX_EPOCH,
        );
        let target = Target::named::<k8s_openapi::api::core::v1::ConfigMap>(Some("default"), "c");
        let text =
            JsonText::of(&json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "1"}}))
                .unwrap();
        let answer = Answer::of(&object("10", created_entries())).unwrap();
        let last = adopt_created_fields(&mut cx, Some(answer), &target, &text, "web", true)
            .await
            .unwrap()
            .expect("an answer");
        assert_eq!(last.resource_version().as_deref(), Some("13"));
        assert_eq!(
            *scripted.log.lock().unwrap(),
            ["move at 10", "read", "move at 11", "apply"]
        );
    }

    /// Refuses the first apply as invalid (the `POST`'s list item beside the new one), then answers as the
    /// server would once the `Update` entry is moved.
    #[cfg(feature = "testing")]
    #[derive(Default)]
    struct RefusesFirstApply {
        log: std::sync::Mutex<Vec<String>>,
    }

    #[cfg(feature = "testing")]
    impl crate::command::Dispatcher for RefusesFirstApply {
        fn execute<'a>(
            &'a self,
            command: &'a Command,
        ) -> futures::future::BoxFuture<'a, Result<Option<Answer>>> {
            use futures::FutureExt;
            let mut log = self.log.lock().unwrap();
            let out = match command {
                Command::Apply { .. } if log.is_empty() => {
                    log.push("apply".into());
                    let status = kube::core::Status::failure(
                        "Service \"c\" is invalid: spec.ports[1].name: Duplicate value: \"http\"",
                        "Invalid",
                    )
                    .with_code(422);
                    Err(crate::Error::kube(
                        "apply",
                        kube::Error::Api(status.boxed()),
                    ))
                }
                Command::Apply { .. } => {
                    log.push("apply".into());
                    Ok(Some(Answer::of(&object("13", json!([]))).unwrap()))
                }
                Command::Patch { patch, .. } => {
                    let version = patch["metadata"]["resourceVersion"].as_str().unwrap_or("");
                    log.push(format!("move at {version}"));
                    let entries = patch["metadata"]["managedFields"].clone();
                    Ok(Some(Answer::of(&object("12", entries)).unwrap()))
                }
                other => panic!("unexpected {other:?}"),
            };
            async move { out }.boxed()
        }

        fn get<'a>(
            &'a self,
            _target: &'a Target,
        ) -> futures::future::BoxFuture<'a, Result<Option<Value>>> {
            use futures::FutureExt;
            self.log.lock().unwrap().push("read".into());
            async { Ok(Some(object("11", created_entries()))) }.boxed()
        }
    }

    #[cfg(feature = "testing")]
    #[tokio::test]
    async fn an_apply_refused_as_invalid_is_sent_again_once_the_posts_fields_are_moved() {
        use std::sync::Arc;
        let scripted = Arc::new(RefusesFirstApply::default());
        let mut cx = Context::new(
            crate::testing::offline_caches(),
            scripted.clone(),
            Arc::new(crate::context::Settings::new("web")),
            Default::default(),
            k8s_openapi::jiff::Timestamp::UNIX_EPOCH,
        );
        let target = Target::named::<k8s_openapi::api::core::v1::ConfigMap>(Some("default"), "c");
        let text = JsonText::of(&json!({"apiVersion": "v1", "kind": "ConfigMap"})).unwrap();
        let last = apply_child(&mut cx, &target, &text, "web", true)
            .await
            .unwrap()
            .expect("an answer");
        assert_eq!(last.resource_version().as_deref(), Some("13"));
        assert_eq!(
            *scripted.log.lock().unwrap(),
            ["apply", "read", "move at 11", "apply"]
        );
    }

    #[cfg(feature = "testing")]
    #[tokio::test]
    async fn an_apply_refused_with_nothing_to_move_stays_refused() {
        use std::sync::Arc;
        let scripted = Arc::new(RefusesFirstApply::default());
        let mut cx = Context::new(
            crate::testing::offline_caches(),
            scripted.clone(),
            Arc::new(crate::context::Settings::new("other-manager")),
            Default::default(),
            k8s_openapi::jiff::Timestamp::UNIX_EPOCH,
        );
        let target = Target::named::<k8s_openapi::api::core::v1::ConfigMap>(Some("default"), "c");
        let text = JsonText::of(&json!({"apiVersion": "v1", "kind": "ConfigMap"})).unwrap();
        let err = apply_child(&mut cx, &target, &text, "other-manager", true)
            .await
            .expect_err("refused");
        assert_eq!(err.code(), Some(422));
        assert_eq!(*scripted.log.lock().unwrap(), ["apply", "read"]);
    }

    #[test]
    fn without_an_apply_entry_the_update_entry_becomes_one() {
        let entries = [entry("web", "Update", json!({"f:data": {}}))];
        let out = moved(&entries, "web").expect("an Update entry to move");
        assert!(out.apply_again);
        assert_eq!(out.entries, [entry("web", "Apply", json!({"f:data": {}}))]);
    }
}
