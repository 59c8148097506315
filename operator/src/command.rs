//! Every write a step wants, as a value, and the dispatchers that carry commands out.
//!
//! Steps never call the API directly: they hand a [`Command`] to the [`Context`](crate::Context), whose
//! [`Dispatcher`] executes it against the API server ([`ApiDispatcher`]) or only records it
//! ([`RecordingDispatcher`], for tests that assert on commands with no server at all).

use std::sync::Mutex;

use futures::FutureExt;
use futures::future::BoxFuture;
use k8s_openapi::api::core::v1::ObjectReference;
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, Patch, PatchParams, PostParams, Preconditions,
};
use kube::runtime::events::{Event, EventType, Reporter};
use kube::{Client, Resource, ResourceExt};
use serde_json::Value;

use crate::answer::Answer;
use crate::error::{Error, Result};
use crate::json_text::JsonText;
use crate::recorder::Recorder;

/// The object a command is about: its type and where it lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// API group (empty for core).
    pub group: String,
    /// API version.
    pub version: String,
    /// Kind.
    pub kind: String,
    /// Plural resource name.
    pub plural: String,
    /// Namespace, for namespaced objects.
    pub namespace: Option<String>,
    /// Name (empty for a create with `generateName`).
    pub name: String,
}

impl Target {
    /// The target of a typed object.
    pub fn of<K: Resource<DynamicType = ()>>(obj: &K) -> Self {
        Self {
            group: K::group(&()).into_owned(),
            version: K::version(&()).into_owned(),
            kind: K::kind(&()).into_owned(),
            plural: K::plural(&()).into_owned(),
            namespace: obj.meta().namespace.clone(),
            name: obj.meta().name.clone().unwrap_or_default(),
        }
    }

    /// The target of the object of kind `K` named `name` (in `namespace`).
    pub fn named<K: Resource<DynamicType = ()>>(namespace: Option<&str>, name: &str) -> Self {
        Self {
            group: K::group(&()).into_owned(),
            version: K::version(&()).into_owned(),
            kind: K::kind(&()).into_owned(),
            plural: K::plural(&()).into_owned(),
            namespace: namespace.map(str::to_string),
            name: name.to_string(),
        }
    }

    /// `v1` or `apps/v1`.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    fn api_resource(&self) -> ApiResource {
        ApiResource {
            group: self.group.clone(),
            version: self.version.clone(),
            api_version: self.api_version(),
            kind: self.kind.clone(),
            plural: self.plural.clone(),
        }
    }

    /// Requests on this target's URL (its namespace's, or the cluster's).
    fn request(&self) -> kube::core::Request {
        kube::core::Request::new(<DynamicObject as kube::Resource>::url_path(
            &self.api_resource(),
            self.namespace.as_deref(),
        ))
    }

    fn api(&self, client: &Client) -> Api<DynamicObject> {
        match &self.namespace {
            Some(ns) => Api::namespaced_with(client.clone(), ns, &self.api_resource()),
            None => Api::all_with(client.clone(), &self.api_resource()),
        }
    }
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.namespace {
            Some(ns) => write!(f, "{} {}/{}", self.kind, ns, self.name),
            None => write!(f, "{} {}", self.kind, self.name),
        }
    }
}

/// An event to record about an object.
#[derive(Debug, Clone, PartialEq)]
pub struct EventCommand {
    /// The object the event is about.
    pub regarding: ObjectReference,
    /// `true` for a warning, `false` for a normal event.
    pub warning: bool,
    /// CamelCase reason, e.g. `Created`.
    pub reason: String,
    /// What happened, for humans.
    pub note: String,
    /// What the controller did, e.g. `Create`.
    pub action: String,
    /// The other object the event is about, e.g. the child that was created. Events about different
    /// children of one parent differ here, so the recorder never merges them into one.
    pub related: Option<Box<ObjectReference>>,
}

/// A write a step wants done.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Create an object (`generateName` allowed).
    Create {
        /// What.
        target: Target,
        /// The object.
        object: Value,
        /// The field manager that owns what it sets (an `operation: Update` entry); `None` for the
        /// controller's name.
        field_manager: Option<String>,
    },
    /// Server-side apply an object under a field manager.
    Apply {
        /// What.
        target: Target,
        /// The applied configuration, as the JSON text sent.
        object: JsonText,
        /// The field manager.
        field_manager: String,
        /// Take fields from other managers.
        force: bool,
    },
    /// Replace an object (its `resourceVersion` guards against lost updates).
    Update {
        /// What.
        target: Target,
        /// The object.
        object: Value,
    },
    /// JSON merge patch of the main resource.
    Patch {
        /// What.
        target: Target,
        /// The merge patch.
        patch: Value,
    },
    /// Delete an object, only if it still has this uid.
    Delete {
        /// What.
        target: Target,
        /// The uid precondition.
        uid: Option<String>,
    },
    /// Write the parent's status through the status subresource.
    UpdateStatus {
        /// Whose.
        target: Target,
        /// The new status.
        status: Value,
        /// The parent's resourceVersion the status was computed from (409 when stale).
        resource_version: Option<String>,
    },
    /// Record an event.
    Event(EventCommand),
}

impl Command {
    /// Whether the command changes stored objects (events do not count).
    pub fn is_mutating(&self) -> bool {
        !matches!(self, Command::Event(_))
    }

    /// The verb, for logs and tests: `create`, `apply`, `update`, `patch`, `delete`, `status`, `event`.
    pub fn verb(&self) -> &'static str {
        match self {
            Command::Create { .. } => "create",
            Command::Apply { .. } => "apply",
            Command::Update { .. } => "update",
            Command::Patch { .. } => "patch",
            Command::Delete { .. } => "delete",
            Command::UpdateStatus { .. } => "status",
            Command::Event(_) => "event",
        }
    }

    /// The object written (none for an event).
    pub fn target(&self) -> Option<&Target> {
        match self {
            Command::Create { target, .. }
            | Command::Apply { target, .. }
            | Command::Update { target, .. }
            | Command::Patch { target, .. }
            | Command::Delete { target, .. }
            | Command::UpdateStatus { target, .. } => Some(target),
            Command::Event(_) => None,
        }
    }
}

/// Carries out commands.
pub trait Dispatcher: Send + Sync {
    /// Executes a command; returns the resulting object for writes that return one.
    fn execute<'a>(&'a self, command: &'a Command) -> BoxFuture<'a, Result<Option<Answer>>>;

    /// Reads one object from the API server, past every cache: `None` when it does not exist. The runtime
    /// reads only where a cache that does not hold every object of its kind misses one it needs (a child
    /// whose create found an object of its name, which could be someone else's, or one about to be applied
    /// without a create first).
    fn get<'a>(&'a self, target: &'a Target) -> BoxFuture<'a, Result<Option<Value>>>;
}

/// Executes commands against the API server.
pub struct ApiDispatcher {
    client: Client,
    /// Publishes events, merging recurrences into series as kube's `Recorder` does, in less memory.
    recorder: Recorder,
    /// The field manager of writes that are not applies (create, update, patch, status), so managed fields
    /// name the controller instead of `unknown`.
    field_manager: String,
    /// Send every write as a server-side dry run (`dryRun=All`) and record no events.
    dry_run: bool,
}

impl std::fmt::Debug for ApiDispatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiDispatcher").finish_non_exhaustive()
    }
}

impl ApiDispatcher {
    /// A dispatcher whose events name `controller` as their reporter.
    pub fn new(client: Client, controller: &str) -> Self {
        let reporter = Reporter {
            controller: controller.to_string(),
            instance: std::env::var("POD_NAME").ok(),
        };
        Self {
            recorder: Recorder::new(client.clone(), reporter),
            client,
            field_manager: controller.to_string(),
            dry_run: false,
        }
    }

    /// The same dispatcher sending every write as a server-side dry run (`dryRun=All`): the server
    /// validates and admits each write and answers with the object it would store, but stores nothing.
    /// Events are not recorded and the write metrics are not counted.
    pub fn dry_run(mut self) -> Self {
        self.dry_run = true;
        self
    }

    /// Whether writes are sent as server-side dry runs.
    pub fn is_dry_run(&self) -> bool {
        self.dry_run
    }

    async fn run(&self, command: &Command) -> Result<Option<Answer>> {
        let out = self.send(command).await?;
        if self.dry_run {
            return Ok(out);
        }
        let metrics = crate::metrics::Metrics::global();
        match command {
            Command::Event(ev) => metrics.event(&self.field_manager, ev.warning),
            other => {
                if let Some(target) = other.target() {
                    metrics.wrote(&self.field_manager, other.verb(), &target.kind);
                }
            }
        }
        Ok(out)
    }

    /// Sends a request built on a target's URL and keeps the answer as its JSON text ([`Answer`]: an `Api`
    /// method would decode it into a `DynamicObject`, a map per object and a string per field), with whether
    /// the server created the object (`201 Created`, which kube's `Client::request` does not tell).
    async fn answer(
        &self,
        req: std::result::Result<http::Request<Vec<u8>>, kube::core::request::Error>,
        verb: &'static str,
    ) -> kube::Result<Answer> {
        use http_body_util::BodyExt;
        let mut req = req.map_err(kube::Error::BuildRequest)?;
        req.extensions_mut().insert(verb);
        let response = self.client.send(req.map(kube::client::Body::from)).await?;
        let status = response.status();
        let bytes = response.into_body().collect().await?.to_bytes();
        // The buffer is taken over, not copied, when nothing else holds it.
        let text = String::from_utf8(Vec::from(bytes)).map_err(kube::Error::FromUtf8)?;
        if status.is_client_error() || status.is_server_error() {
            return Err(api_error(status, &text));
        }
        Answer::from_json(text)
            .map(|a| a.with_created(status == http::StatusCode::CREATED))
            .map_err(kube::Error::SerdeError)
    }

    async fn send(&self, command: &Command) -> Result<Option<Answer>> {
        let ctx = |what: &str, t: &Target| format!("{what} {t}");
        let dry_run = self.dry_run;
        let post_params = PostParams {
            field_manager: Some(self.field_manager.clone()),
            dry_run,
        };
        let patch_params = PatchParams {
            field_manager: Some(self.field_manager.clone()),
            dry_run,
            ..PatchParams::default()
        };
        let out = match command {
            Command::Create {
                target,
                object,
                field_manager,
            } => {
                let params = match field_manager {
                    Some(manager) => PostParams {
                        field_manager: Some(manager.clone()),
                        dry_run,
                    },
                    None => post_params,
                };
                let req = target
                    .request()
                    .create(&params, serde_json::to_vec(object)?);
                Some(
                    self.answer(req, "create")
                        .await
                        .map_err(|e| Error::kube(ctx("create", target), e))?,
                )
            }
            Command::Apply {
                target,
                object,
                field_manager,
                force,
            } => {
                let mut pp = PatchParams::apply(field_manager);
                pp.force = *force;
                pp.dry_run = dry_run;
                let req = target
                    .request()
                    .patch(&target.name, &pp, &Patch::Apply(object.raw()));
                Some(
                    self.answer(req, "patch")
                        .await
                        .map_err(|e| Error::kube(ctx("apply", target), e))?,
                )
            }
            Command::Update { target, object } => {
                let req = target.request().replace(
                    &target.name,
                    &post_params,
                    serde_json::to_vec(object)?,
                );
                Some(
                    self.answer(req, "replace")
                        .await
                        .map_err(|e| Error::kube(ctx("update", target), e))?,
                )
            }
            Command::Patch { target, patch } => {
                let req = target
                    .request()
                    .patch(&target.name, &patch_params, &Patch::Merge(patch));
                Some(
                    self.answer(req, "patch")
                        .await
                        .map_err(|e| Error::kube(ctx("patch", target), e))?,
                )
            }
            Command::Delete { target, uid } => {
                let dp = DeleteParams {
                    dry_run,
                    preconditions: uid.as_ref().map(|u| Preconditions {
                        uid: Some(u.clone()),
                        resource_version: None,
                    }),
                    ..DeleteParams::background()
                };
                match target.api(&self.client).delete(&target.name, &dp).await {
                    Ok(_) => None,
                    // Already gone: the goal is reached.
                    Err(kube::Error::Api(s)) if s.code == 404 => None,
                    Err(e) => return Err(Error::kube(ctx("delete", target), e)),
                }
            }
            Command::UpdateStatus {
                target,
                status,
                resource_version,
            } => {
                let mut patch = serde_json::json!({ "status": status });
                if let Some(rv) = resource_version {
                    patch["metadata"] = serde_json::json!({ "resourceVersion": rv });
                }
                let req = target.request().patch_subresource(
                    "status",
                    &target.name,
                    &patch_params,
                    &Patch::Merge(&patch),
                );
                Some(
                    self.answer(req, "patch_status")
                        .await
                        .map_err(|e| Error::kube(ctx("write status of", target), e))?,
                )
            }
            // A dry run records nothing, events included.
            Command::Event(_) if dry_run => None,
            Command::Event(ev) => {
                let event = Event {
                    type_: if ev.warning {
                        EventType::Warning
                    } else {
                        EventType::Normal
                    },
                    reason: ev.reason.clone(),
                    note: Some(ev.note.clone()),
                    action: ev.action.clone(),
                    secondary: ev.related.as_deref().cloned(),
                };
                // An event that cannot be recorded must not fail the pass.
                if let Err(e) = self.recorder.publish(&event, &ev.regarding).await {
                    tracing::warn!(error = %e, reason = %ev.reason, "could not record an event");
                }
                None
            }
        };
        Ok(out)
    }
}

impl Dispatcher for ApiDispatcher {
    fn execute<'a>(&'a self, command: &'a Command) -> BoxFuture<'a, Result<Option<Answer>>> {
        self.run(command).boxed()
    }

    fn get<'a>(&'a self, target: &'a Target) -> BoxFuture<'a, Result<Option<Value>>> {
        async move {
            let found = target
                .api(&self.client)
                .get_opt(&target.name)
                .await
                .map_err(|e| Error::kube(format!("get {target}"), e))?;
            Ok(found.map(serde_json::to_value).transpose()?)
        }
        .boxed()
    }
}

/// The error of an unsuccessful answer, as kube's client makes it: the server's `Status`, or one made from the
/// text of a body that is not a `Status` (a proxy's page, say).
fn api_error(code: http::StatusCode, text: &str) -> kube::Error {
    let status = serde_json::from_str::<kube::core::Status>(text).unwrap_or_else(|_| {
        kube::core::Status::failure(text.trim(), "Failed to parse error data")
            .with_code(code.as_u16())
    });
    kube::Error::Api(status.boxed())
}

/// Records commands without executing them; writes answer with the object as sent.
#[derive(Debug, Default)]
pub struct RecordingDispatcher {
    commands: Mutex<Vec<Command>>,
}

impl RecordingDispatcher {
    /// The commands recorded so far.
    pub fn commands(&self) -> Vec<Command> {
        self.commands
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

impl Dispatcher for RecordingDispatcher {
    fn execute<'a>(&'a self, command: &'a Command) -> BoxFuture<'a, Result<Option<Answer>>> {
        self.commands
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(command.clone());
        let out = match command {
            Command::Create { object, .. } | Command::Update { object, .. } => {
                Answer::of(object).map(Some)
            }
            Command::Apply { object, .. } => Answer::from_json(object.as_str().into()).map(Some),
            _ => Ok(None),
        };
        async move { Ok(out?) }.boxed()
    }

    /// With no server, the caches are the whole world: nothing they miss exists.
    fn get<'a>(&'a self, _target: &'a Target) -> BoxFuture<'a, Result<Option<Value>>> {
        async { Ok(None) }.boxed()
    }
}

/// The name of an object for logs.
pub fn display_name<K: Resource>(obj: &K) -> String {
    match obj.namespace() {
        Some(ns) => format!("{ns}/{}", obj.name_any()),
        None => obj.name_any(),
    }
}
