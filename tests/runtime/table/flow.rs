//! Composition: cast steps, sequences, if/then, try/catch, the stash and the tracker, one step at a time.

use k8s_openapi::api::core::v1::ConfigMap;
use kube::CustomResourceExt;
use kubewright::testing::table::{ReconcilerTestCase, SubReconcilerTestCase};
use kubewright::{
    CastReconciler, Context, Error, IfThen, Outcome, Reconciler, Sequence, StashKey,
    SyncReconciler, TrackKey, TryCatch,
};
use serde_json::json;

use super::*;

const FIRST: StashKey<String> = StashKey::new("first");
const SECOND: StashKey<String> = StashKey::new("second");
const BRANCH: StashKey<&'static str> = StashKey::new("branch");
const CAUGHT: StashKey<String> = StashKey::new("caught");
const IMAGE: StashKey<String> = StashKey::new("image");
const SETTINGS: StashKey<Option<String>> = StashKey::new("settings");

fn typed_note(text: &str) -> Note {
    let mut n = Note::new(
        NAME,
        NoteSpec {
            text: text.into(),
            items: Vec::new(),
        },
    );
    n.metadata.namespace = Some(NS.into());
    n.metadata.uid = Some(UID.into());
    n.metadata.generation = Some(1);
    n
}

/// A projection of a note: what a cross-cutting step needs and may change.
#[derive(Debug)]
struct Summary {
    text: String,
    summary: Option<String>,
}

#[tokio::test]
async fn a_cast_step_works_on_the_projection_and_writes_it_back() {
    let summarize = SyncReconciler::new("summarize", |s: &mut Summary, _: &mut Context| {
        s.summary = Some(format!("{} characters", s.text.len()));
        Ok(Outcome::Continue)
    });
    let cast = CastReconciler::new(
        "summary",
        |n: &Note| {
            Ok(Summary {
                text: n.spec.text.clone(),
                summary: None,
            })
        },
        |n: &mut Note, s: Summary| {
            n.status.get_or_insert_with(Default::default).summary = s.summary;
        },
        summarize,
    );
    SubReconcilerTestCase::new("cast", typed_note("hello"))
        .expect_status(json!({"summary": "5 characters"}))
        .run_pure(&cast)
        .await
        .unwrap();
}

#[tokio::test]
async fn a_sequence_stops_at_halt() {
    let seq = Sequence::new("seq")
        .step(SyncReconciler::new(
            "first",
            |_: &mut Note, cx: &mut Context| {
                cx.stash_mut().store(&FIRST, "ran".to_string());
                Ok(Outcome::Halt)
            },
        ))
        .step(SyncReconciler::new(
            "second",
            |_: &mut Note, cx: &mut Context| {
                cx.stash_mut().store(&SECOND, "ran".to_string());
                Ok(Outcome::Continue)
            },
        ));
    SubReconcilerTestCase::new("halt", typed_note("hi"))
        .expect_stash(&FIRST, "ran".to_string())
        .expect_stash_absent(&SECOND)
        .expect_outcome(Outcome::Halt)
        .run_pure(&seq)
        .await
        .unwrap();
}

#[tokio::test]
async fn a_halting_root_still_writes_its_status() {
    let reconciler = Reconciler::new("notes").step(SyncReconciler::new(
        "halt",
        |_: &mut Note, _: &mut Context| Ok(Outcome::Halt),
    ));
    ReconcilerTestCase::new("root halt", parent_ref())
        .crd(Note::crd())
        .given(note("hi"))
        .expect_status_update(json!({
            "observedGeneration": 1,
            "conditions": [condition("Ready", "True", "Ready", "")],
        }))
        .expect_outcome(Outcome::Halt)
        .run(reconciler)
        .await
        .unwrap();
}

fn branches() -> IfThen<Note> {
    IfThen::new(
        "if hi",
        |n: &Note, _: &Context| n.spec.text == "hi",
        SyncReconciler::new("then", |_: &mut Note, cx: &mut Context| {
            cx.stash_mut().store(&BRANCH, "then");
            Ok(Outcome::Continue)
        }),
    )
    .otherwise(SyncReconciler::new(
        "otherwise",
        |_: &mut Note, cx: &mut Context| {
            cx.stash_mut().store(&BRANCH, "otherwise");
            Ok(Outcome::Continue)
        },
    ))
}

#[tokio::test]
async fn if_then_runs_the_branch_the_predicate_picks() {
    let step = branches();
    SubReconcilerTestCase::new("then", typed_note("hi"))
        .expect_stash(&BRANCH, "then")
        .run_pure(&step)
        .await
        .unwrap();
    SubReconcilerTestCase::new("otherwise", typed_note("bye"))
        .expect_stash(&BRANCH, "otherwise")
        .run_pure(&step)
        .await
        .unwrap();
}

fn failing() -> SyncReconciler<Note> {
    SyncReconciler::new("fails", |_: &mut Note, _: &mut Context| {
        Err(Error::custom("boom"))
    })
}

#[tokio::test]
async fn try_catch_recovers_or_rethrows() {
    let recover = TryCatch::new(
        "recover",
        failing(),
        |_: &mut Note, cx: &mut Context, e: Error| {
            cx.stash_mut().store(&CAUGHT, e.to_string());
            Ok(Outcome::Continue)
        },
    );
    SubReconcilerTestCase::new("recovered", typed_note("hi"))
        .expect_stash(&CAUGHT, "boom".to_string())
        .run_pure(&recover)
        .await
        .unwrap();
    let rethrow = TryCatch::new(
        "rethrow",
        failing(),
        |_: &mut Note, _: &mut Context, e: Error| Err(Error::custom(format!("wrapped: {e}"))),
    );
    SubReconcilerTestCase::new("rethrown", typed_note("hi"))
        .expect_err("the wrapped error", |e| e.to_string() == "wrapped: boom")
        .run_pure(&rethrow)
        .await
        .unwrap();
}

fn uses_image() -> SyncReconciler<Note> {
    SyncReconciler::new("use image", |n: &mut Note, cx: &mut Context| {
        let image = cx.stash().get(&IMAGE)?.clone();
        n.status.get_or_insert_with(Default::default).summary = Some(image);
        Ok(Outcome::Continue)
    })
}

#[tokio::test]
async fn reading_a_missing_stash_key_is_a_typed_error() {
    SubReconcilerTestCase::new("missing", typed_note("hi"))
        .expect_err("MissingStash(image)", |e| {
            matches!(e, Error::MissingStash("image"))
        })
        .run_pure(&uses_image())
        .await
        .unwrap();
    SubReconcilerTestCase::new("present", typed_note("hi"))
        .given_stash(&IMAGE, "nginx:1.27".to_string())
        .expect_status(json!({"summary": "nginx:1.27"}))
        .run_pure(&uses_image())
        .await
        .unwrap();
}

fn reads_settings() -> SyncReconciler<Note> {
    SyncReconciler::new("settings", |_: &mut Note, cx: &mut Context| {
        let text = cx
            .get::<ConfigMap>(Some(NS), "settings")?
            .and_then(|cm| cm.data.as_ref()?.get("text").cloned());
        cx.stash_mut().store(&SETTINGS, text);
        Ok(Outcome::Continue)
    })
    .wiring(|w| w.tracks::<ConfigMap>())
}

#[tokio::test]
async fn reading_through_the_context_tracks_the_object() {
    let mut settings = ConfigMap::default();
    settings.metadata.name = Some("settings".into());
    settings.metadata.namespace = Some(NS.into());
    settings.data = Some([("text".to_string(), "from settings".to_string())].into());
    let step = reads_settings();
    // Against the API server, through the caches a controller would start.
    SubReconcilerTestCase::new("tracked", typed_note("hi"))
        .crd(Note::crd())
        .given(settings.clone())
        .expect_track(TrackKey::name::<ConfigMap>(Some(NS), "settings"))
        .expect_stash(&SETTINGS, Some("from settings".to_string()))
        .expect_no_reads()
        .run(&step)
        .await
        .unwrap();
    // An object that does not exist yet is tracked too, so its creation wakes the parent.
    SubReconcilerTestCase::new("tracked while missing", typed_note("hi"))
        .expect_track(TrackKey::name::<ConfigMap>(Some(NS), "settings"))
        .expect_stash(&SETTINGS, None)
        .run_pure(&step)
        .await
        .unwrap();
    // With no server: the same step over a cache built from a vector.
    SubReconcilerTestCase::new("tracked, pure", typed_note("hi"))
        .given(settings)
        .expect_track(TrackKey::name::<ConfigMap>(Some(NS), "settings"))
        .expect_stash(&SETTINGS, Some("from settings".to_string()))
        .run_pure(&step)
        .await
        .unwrap();
}

mod awaiting {
    use futures::FutureExt;
    use k8s_openapi::api::core::v1::{ConfigMap, ServiceAccount};
    use kube::ResourceExt;
    use kubewright::testing::table::EventExpectation;
    use kubewright::{ChildReconciler, Context, Outcome, Reconciler, StashKey, SyncReconciler};
    use serde_json::json;

    use super::super::*;

    const GREETING: StashKey<String> = StashKey::new("greeting");

    /// Reads a ConfigMap through the API (no cache holds it), after an await, and stashes its text.
    async fn fetch(note: &mut Note, cx: &mut Context) -> kubewright::Result<Outcome> {
        tokio::task::yield_now().await;
        let api: kube::Api<ConfigMap> = kube::Api::namespaced(cx.client(), NS);
        let cm = api
            .get("greeting")
            .await
            .map_err(|e| kubewright::Error::custom(e.to_string()))?;
        let text = cm
            .data
            .unwrap_or_default()
            .remove("text")
            .unwrap_or_default();
        cx.stash_mut()
            .store(&GREETING, format!("{text}, {}", note.name_any()));
        Ok(Outcome::Continue)
    }

    async fn desired(note: &Note, cx: &mut Context) -> kubewright::Result<Option<ServiceAccount>> {
        tokio::task::yield_now().await;
        let greeting = cx.stash().get(&GREETING)?.clone();
        let mut sa = ServiceAccount::default();
        sa.metadata.name = Some(note.name_any());
        sa.metadata.annotations = Some([("greeting".to_string(), greeting)].into());
        Ok(Some(sa))
    }

    #[tokio::test]
    async fn steps_and_desired_functions_can_await() {
        let reconciler = Reconciler::new("notes")
            .step(SyncReconciler::new_async("fetch", |n, cx| {
                fetch(n, cx).boxed()
            }))
            .step(ChildReconciler::new_async("account", |n, cx| {
                desired(n, cx).boxed()
            }));
        let mut greeting = ConfigMap::default();
        greeting.metadata.name = Some("greeting".into());
        greeting.metadata.namespace = Some(NS.into());
        greeting.data = Some([("text".to_string(), "hello".to_string())].into());
        case("async steps")
            .given(note("hi"))
            .given(greeting)
            .expect_create(json!({
                "kind": "ServiceAccount",
                "metadata": {"name": NAME, "annotations": {"greeting": "hello, hello"}},
            }))
            .expect_event(EventExpectation::normal("Created").note("ServiceAccount default/hello"))
            .ignore(kubewright::testing::table::Category::Status)
            .run(reconciler)
            .await
            .unwrap();
    }
}

fn stores_image() -> SyncReconciler<Note> {
    SyncReconciler::new("resolve image", |_: &mut Note, cx: &mut Context| {
        cx.stash_mut().store(&IMAGE, "nginx:1.27".to_string());
        Ok(Outcome::Continue)
    })
}

#[tokio::test]
async fn a_key_read_before_its_step_names_the_key_the_reader_and_the_storer() {
    // The storing step comes second: the first pass fails before it runs, so nothing is known of it yet.
    let steps = Sequence::new("steps")
        .step(uses_image())
        .step(stores_image());
    SubReconcilerTestCase::new("reader first", typed_note("hi"))
        .expect_err("no step stored it", |e| {
            e.to_string()
                == "step `use image` read the stash key `image` before any step stored it this pass; \
                    no step of `steps` has stored it (steps: `use image`, `resolve image`)"
        })
        .run_pure(&steps)
        .await
        .unwrap();
    // Once the storing step has been seen storing it (here: in a sequence where it runs), the error names it.
    let learned = Sequence::new("steps")
        .step(IfThen::new(
            "maybe",
            |n: &Note, _: &Context| n.spec.text == "store first",
            stores_image(),
        ))
        .step(uses_image());
    SubReconcilerTestCase::new("stored", typed_note("store first"))
        .run_pure(&learned)
        .await
        .unwrap();
    SubReconcilerTestCase::new("not stored this pass", typed_note("hi"))
        .expect_err("stored before, not now", |e| {
            matches!(e, Error::StashNotStored { key: "image", step, stored_by }
                if step == "use image"
                    && stored_by.starts_with("`maybe` stored it in earlier passes but not in this one"))
        })
        .run_pure(&learned)
        .await
        .unwrap();
}
