//! The body of a watch: events from the watcher's channel as JSON lines, periodic bookmarks, and the timeout.

use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use bytes::Bytes;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::time::{Instant, Interval, Sleep};

use super::error::ApiError;
use super::registry::ResourceType;
use super::store::{State, WatchItem};
use super::table::{Include, Render};

/// A watch event in JSON, its fields in kube-apiserver's order.
#[derive(serde::Serialize)]
struct WatchEventJson<'a> {
    #[serde(rename = "type")]
    type_: &'a str,
    object: &'a Value,
}

/// A running watch.
#[derive(Debug)]
pub struct WatchStream {
    rx: mpsc::UnboundedReceiver<WatchItem>,
    rtype: Arc<ResourceType>,
    render: Render,
    deadline: Pin<Box<Sleep>>,
    bookmarks: Option<Interval>,
    state: Arc<Mutex<State>>,
    id: u64,
    pending_error: Option<ApiError>,
    done: bool,
    /// Whether an event went out (Tables carry their column definitions on the first one only).
    sent_event: bool,
    /// Events are protobuf frames rather than JSON lines.
    protobuf: bool,
}

use std::pin::Pin;

impl WatchStream {
    /// A watch reading from `rx`, registered in `state` as watcher `id`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        rx: mpsc::UnboundedReceiver<WatchItem>,
        rtype: Arc<ResourceType>,
        render: Render,
        timeout: std::time::Duration,
        bookmark_every: Option<std::time::Duration>,
        state: Arc<Mutex<State>>,
        id: u64,
    ) -> Self {
        let bookmarks = bookmark_every.map(|d| {
            let mut iv = tokio::time::interval_at(Instant::now() + d, d);
            iv.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            iv
        });
        Self {
            rx,
            rtype,
            render,
            deadline: Box::pin(tokio::time::sleep(timeout)),
            bookmarks,
            state,
            id,
            pending_error: None,
            done: false,
            sent_event: false,
            protobuf: false,
        }
    }

    /// Sends events as protobuf `WatchEvent` frames (`application/vnd.kubernetes.protobuf;stream=watch`).
    pub fn protobuf(&mut self) {
        self.protobuf = true;
    }

    /// A watch that only reports an error event and ends, like the real server does for an expired resourceVersion.
    pub fn error(error: ApiError, rtype: Arc<ResourceType>, state: Arc<Mutex<State>>) -> Self {
        let (_tx, rx) = mpsc::unbounded_channel();
        let mut s = Self::new(
            rx,
            rtype,
            Render::Object,
            std::time::Duration::from_secs(1),
            None,
            state,
            0,
        );
        s.pending_error = Some(error);
        s
    }

    fn line(&mut self, kind: &str, object: Value) -> Bytes {
        if self.protobuf {
            return match crate::protobuf::watch_event(kind, &object) {
                Ok(frame) => Bytes::from(frame),
                Err(e) => {
                    // Ends the watch with an error event rather than a wrong object.
                    tracing::error!(error = %e, "a watch event does not encode in protobuf");
                    self.done = true;
                    let status = ApiError::internal(e.to_string()).to_status();
                    Bytes::from(crate::protobuf::watch_event("ERROR", &status).unwrap_or_default())
                }
            };
        }
        // `type` before `object`, as kube-apiserver writes it (a JSON map here would sort `object` first).
        let mut bytes = serde_json::to_vec(&WatchEventJson {
            type_: kind,
            object: &object,
        })
        .unwrap_or_default();
        bytes.push(b'\n');
        Bytes::from(bytes)
    }

    fn encode(&mut self, item: WatchItem) -> Bytes {
        match item {
            WatchItem::Event(kind, obj) => {
                // A custom resource's conversion webhook converts each event's object; its failure ends
                // the watch with the error.
                let obj = match crate::convert::served(&self.rtype, &[&obj]) {
                    Ok(mut converted) => converted.pop().unwrap_or_default(),
                    Err(e) => {
                        self.done = true;
                        return self.line("ERROR", e.to_status());
                    }
                };
                let rendered = self
                    .render
                    .watch_object(&self.rtype, &obj, !self.sent_event);
                self.sent_event = true;
                self.line(kind.as_str(), rendered)
            }
            WatchItem::Bookmark(rv, initial_end) => {
                // kube-apiserver 1.35 leaves a zero creationTimestamp out (older ones sent null).
                let mut metadata = json!({ "resourceVersion": rv.to_string() });
                if initial_end {
                    metadata["annotations"] = json!({ "k8s.io/initial-events-end": "true" });
                }
                // A metadata-only watch's bookmarks are PartialObjectMetadata too, as kube-apiserver
                // converts every object of the watch.
                let (kind, api_version) = match self.render {
                    Render::Metadata => ("PartialObjectMetadata".into(), "meta.k8s.io/v1".into()),
                    _ => (self.rtype.kind.clone(), self.rtype.api_version()),
                };
                let obj = json!({
                    "kind": kind,
                    "apiVersion": api_version,
                    "metadata": metadata,
                });
                if !matches!(self.render, Render::Table(..)) {
                    return self.line("BOOKMARK", obj);
                }
                // A Table watch's bookmarks are Tables too: kube-apiserver converts every object of the
                // watch, so a bookmark is a row of the empty object (headers only when it comes first), and
                // the row of the initial events' end carries its metadata even when `includeObject=None`.
                let mut table = self
                    .render
                    .watch_object(&self.rtype, &obj, !self.sent_event);
                self.sent_event = true;
                // Go's printers read the missing name as "".
                if table["rows"][0]["cells"][0].is_null()
                    && let Some(cell) = table["rows"][0]["cells"].get_mut(0)
                {
                    *cell = json!("");
                }
                if initial_end
                    && matches!(self.render, Render::Table(Include::None, _))
                    && let Some(row) = table["rows"].get_mut(0)
                {
                    row["object"] = json!({
                        "kind": "PartialObjectMetadata",
                        "apiVersion": "meta.k8s.io/v1",
                        "metadata": obj["metadata"],
                    });
                }
                self.line("BOOKMARK", table)
            }
        }
    }

    /// The next chunk of the body, or `None` when the watch ends.
    pub fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<Bytes>> {
        if self.done {
            return Poll::Ready(None);
        }
        if let Some(err) = self.pending_error.take() {
            self.done = true;
            return Poll::Ready(Some(self.line("ERROR", err.to_status())));
        }
        if self.deadline.as_mut().poll(cx).is_ready() {
            self.done = true;
            return Poll::Ready(None);
        }
        match self.rx.poll_recv(cx) {
            Poll::Ready(Some(item)) => return Poll::Ready(Some(self.encode(item))),
            Poll::Ready(None) => {
                self.done = true;
                return Poll::Ready(None);
            }
            Poll::Pending => {}
        }
        if let Some(iv) = self.bookmarks.as_mut()
            && iv.poll_tick(cx).is_ready()
        {
            // Under the lock no event can be in flight, so the bookmark's resourceVersion never passes an
            // event this watcher has not yet been sent.
            let shared = Arc::clone(&self.state);
            let rv = match shared.lock() {
                Ok(state) => match self.rx.try_recv() {
                    Ok(item) => return Poll::Ready(Some(self.encode(item))),
                    Err(_) => state.rv,
                },
                Err(_) => return Poll::Ready(None),
            };
            return Poll::Ready(Some(self.encode(WatchItem::Bookmark(rv, false))));
        }
        Poll::Pending
    }
}

use std::future::Future;

impl Drop for WatchStream {
    fn drop(&mut self) {
        if self.id != 0
            && let Ok(mut state) = self.state.lock()
        {
            state.remove_watcher(self.id);
        }
    }
}
