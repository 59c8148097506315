//! The service: [`ApiServer`], a `tower::Service` over HTTP requests that routes each request to discovery or
//! to the resource handlers, with its configuration, its clock, fault injection and the request log.

mod admit;
mod encoding;
mod flowcontrol;
mod job_timer;
mod jobs;
mod mutate;
mod restful;
mod warnings;

use std::convert::Infallible;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use futures::FutureExt;
use futures::future::BoxFuture;
use http_body_util::BodyExt;
use serde_json::{Value, json};

use crate::body::ResponseBody;
use crate::clock::Clock;
use crate::error::ApiError;
use crate::faults::{self, Fault, FaultAction};
use crate::handlers::{self, Call, Reply};
use crate::log::RequestRecord;
use crate::registry::{self, ResourceType};
use crate::request::{self, Query, Route, Verb};
use crate::store::{self, State};
use crate::{convert, discovery, lifecycle, openapi};
use encoding::{Encoding, json_response};

/// Configures an [`ApiServer`].
#[derive(Debug, Clone)]
pub struct ApiServerBuilder {
    controllers: bool,
    workload_status: bool,
    jobs: crate::workloads::job::Settings,
    history_limit: usize,
    seed: Option<u64>,
    clock: Clock,
    bookmark_interval: Duration,
    log: bool,
}

impl Default for ApiServerBuilder {
    fn default() -> Self {
        Self {
            controllers: true,
            workload_status: true,
            jobs: crate::workloads::job::Settings::default(),
            history_limit: 10_000,
            seed: None,
            clock: Clock::system(),
            bookmark_interval: Duration::from_secs(60),
            log: true,
        }
    }
}

impl ApiServerBuilder {
    /// Whether the garbage collector and the namespace controller run (default: yes, like a whole cluster;
    /// turn off to compare with a bare kube-apiserver).
    pub fn controllers(mut self, on: bool) -> Self {
        self.controllers = on;
        self
    }

    /// Whether the server reports the status the built-in workload controllers would write (default: yes, with
    /// [`controllers`](Self::controllers)): Deployments, StatefulSets, ReplicaSets and DaemonSets become ready
    /// once observed; Jobs start at once and complete (or fail) when their run time is over (see
    /// [`job_run_time`](Self::job_run_time)). No other kind is played (no Pods are created, CronJobs create no
    /// Jobs). Off, they keep the status clients write, as on a bare kube-apiserver.
    pub fn workload_status(mut self, on: bool) -> Self {
        self.workload_status = on;
        self
    }

    /// How long a Job's pods run before the Job completes or fails (default 10 seconds: long enough for
    /// `kubectl get jobs` to show a Job `Running`, then `Complete`), counted from its `startTime` on the
    /// server's [`clock`](Self::clock) and rounded up to whole seconds. Zero completes a Job in the writes that
    /// follow its create. A Job's annotation [`RUN_TIME_ANNOTATION`](crate::RUN_TIME_ANNOTATION) overrides it.
    /// With a [fixed clock](Clock::fixed), Jobs finish only as the clock is advanced past their due time.
    ///
    /// ```
    /// # async fn demo() -> Result<(), kube::Error> {
    /// use std::time::Duration;
    /// use k8s_openapi::api::batch::v1::Job;
    /// use kube::api::{Api, PostParams};
    /// use kubewright_apiserver::{ApiServer, Clock};
    ///
    /// let clock = Clock::fixed("2026-01-01T00:00:00Z".parse().unwrap());
    /// let server = ApiServer::builder()
    ///     .clock(clock.clone())
    ///     .job_run_time(Duration::from_secs(30))
    ///     .build();
    /// let jobs: Api<Job> = Api::default_namespaced(server.client());
    /// let job = serde_json::from_value(serde_json::json!({
    ///     "metadata": {"name": "once"},
    ///     "spec": {"template": {"spec": {
    ///         "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}],
    ///     }}},
    /// }))
    /// .unwrap();
    /// jobs.create(&PostParams::default(), &job).await?;
    /// assert_eq!(jobs.get("once").await?.status.unwrap().active, Some(1));
    /// clock.advance(k8s_openapi::jiff::SignedDuration::from_secs(30));
    /// assert_eq!(jobs.get("once").await?.status.unwrap().succeeded, Some(1));
    /// # Ok(())
    /// # }
    /// ```
    pub fn job_run_time(mut self, run_time: Duration) -> Self {
        self.jobs.run_time = run_time;
        self
    }

    /// Whether Jobs fail (conditions `FailureTarget` and `Failed`, reason `BackoffLimitExceeded`) rather than
    /// complete when their run time is over (default: they complete). A Job's annotation
    /// [`FAIL_ANNOTATION`](crate::FAIL_ANNOTATION) (`"true"` or `"false"`) overrides it.
    pub fn jobs_fail(mut self, fail: bool) -> Self {
        self.jobs.fail = fail;
        self
    }

    /// How many changes each resource keeps for watches before older resourceVersions get `410 Gone`.
    pub fn history_limit(mut self, n: usize) -> Self {
        self.history_limit = n.max(1);
        self
    }

    /// Makes uids and generated names reproducible.
    pub fn seed(mut self, seed: u64) -> Self {
        self.seed = Some(seed);
        self
    }

    /// The clock for timestamps.
    pub fn clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    /// How often watches that allow bookmarks receive one (default one minute, like kube-apiserver).
    pub fn bookmark_interval(mut self, every: Duration) -> Self {
        self.bookmark_interval = every;
        self
    }

    /// Whether requests are recorded (default yes); turn off for benchmarks.
    pub fn request_log(mut self, on: bool) -> Self {
        self.log = on;
        self
    }

    /// Builds the server with the default namespaces (`default`, `kube-system`, `kube-public`, `kube-node-lease`).
    pub fn build(self) -> ApiServer {
        let mut state = State::new(
            registry::Registry::with_builtins(),
            self.history_limit,
            self.controllers,
            self.seed,
        );
        state.workload_status = self.workload_status && self.controllers;
        state.jobs.settings = self.jobs;
        let webhooks = state.webhook_handlers.clone();
        let server = ApiServer {
            shared: Arc::new(Shared {
                state: Arc::new(Mutex::new(state)),
                clock: self.clock,
                jobs: job_timer::JobTimer::new(),
                bookmark_interval: self.bookmark_interval,
                faults: Mutex::new(faults::Faults::default()),
                webhooks,
                log: Mutex::new(Vec::new()),
                log_enabled: self.log,
            }),
        };
        for ns in ["default", "kube-system", "kube-public", "kube-node-lease"] {
            if let Err(e) = server.seed(json!({
                "apiVersion": "v1", "kind": "Namespace", "metadata": { "name": ns }
            })) {
                tracing::error!(namespace = ns, error = %e, "could not create a default namespace");
            }
        }
        server.seed_flowcontrol();
        server.follow_clock();
        server
    }
}

struct Shared {
    state: Arc<Mutex<State>>,
    clock: Clock,
    /// The timer that finishes Jobs on the system clock.
    jobs: job_timer::JobTimer,
    bookmark_interval: Duration,
    faults: Mutex<faults::Faults>,
    /// In-process admission webhooks, by Service namespace and name.
    /// Shared with the state, where CRDs' conversion webhooks find them.
    webhooks: crate::registry::InProcessHandlers,
    log: Mutex<Vec<RequestRecord>>,
    log_enabled: bool,
}

fn relock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The in-memory API server. Cheap to clone; clones share state.
#[derive(Clone)]
pub struct ApiServer {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for ApiServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiServer")
            .field("resource_version", &self.resource_version())
            .finish_non_exhaustive()
    }
}

impl Default for ApiServer {
    fn default() -> Self {
        Self::new()
    }
}

impl ApiServer {
    /// A server that stands in for a whole cluster: built-in kinds, default namespaces, garbage collection.
    pub fn new() -> Self {
        Self::builder().build()
    }

    /// Configures a server.
    pub fn builder() -> ApiServerBuilder {
        ApiServerBuilder::default()
    }

    /// A [`kube::Client`] on this server with `default` as its namespace. Needs a Tokio runtime.
    pub fn client(&self) -> kube::Client {
        kube::Client::new(self.clone(), "default")
    }

    /// Serves a kind that is neither built in nor defined by a CRD.
    pub fn register(&self, rt: ResourceType) {
        relock(&self.shared.state).registry.insert(rt);
    }

    /// Stores an object as given, status included (a status subresource is written after the create, checked
    /// by the kind's status rules as the object's first status): the "given" state of a test. What a create would assign or drop is kept as given when set: `uid`,
    /// `creationTimestamp`, `generation` and `deletionTimestamp`, so that owner references to a given uid hold
    /// and a given object can be "being deleted". Returns the stored object.
    pub fn insert(&self, obj: Value) -> Result<Value, ApiError> {
        const IDENTITY: [&str; 4] = [
            "uid",
            "creationTimestamp",
            "generation",
            "deletionTimestamp",
        ];
        let status = obj.get("status").cloned();
        let identity: Vec<(&str, Value)> = IDENTITY
            .iter()
            .filter_map(|f| {
                let v = obj["metadata"].get(*f).filter(|v| !v.is_null())?;
                Some((*f, v.clone()))
            })
            .collect();
        let mut created = self.seed(obj)?;
        let api_version = created["apiVersion"].as_str().unwrap_or("").to_string();
        let kind = created["kind"].as_str().unwrap_or("").to_string();
        let (group, version) = api_version.split_once('/').unwrap_or(("", &api_version));
        let mut state = relock(&self.shared.state);
        let Some(rt) = state.registry.by_kind(group, version, &kind) else {
            return Ok(created);
        };
        let key = store::key_of(&created);
        if !identity.is_empty()
            && let Some(stored) = state.get(&rt.storage, &key)
        {
            let mut given = (*stored).clone();
            for (field, value) in identity {
                given["metadata"][field] = value;
            }
            let stored = state.put(&rt.storage, given);
            created = convert::from_storage(&rt, &stored);
        }
        let Some(status) = status else {
            return Ok(created);
        };
        if !rt.status_subresource {
            return Ok(created);
        }
        // The given status is the object's first: what the create wrote of its own (a new Pod's phase) or
        // caused (a played Job's start) is not a state it moved from, so the status rules that compare with
        // the stored status (a Job's start time never changed) see none.
        if let Some(stored) = state.get(&rt.storage, &key)
            && stored.get("status").is_some()
        {
            let mut bare = (*stored).clone();
            if let Some(m) = bare.as_object_mut() {
                m.remove("status");
            }
            state.put(&rt.storage, bare);
        }
        state.now = self.shared.clock.stamp();
        let mut with_status = created;
        with_status["status"] = status;
        // Unconditional: a write the create caused (a played Job's start) has moved the resourceVersion on.
        if let Some(meta) = with_status["metadata"].as_object_mut() {
            meta.remove("resourceVersion");
        }
        let opts = lifecycle::WriteOpts::system(lifecycle::Part::Status);
        let updated =
            lifecycle::update(&mut state, &rt, &key, with_status, &opts).map(|w| w.object);
        drop(state);
        self.schedule_jobs();
        updated
    }

    /// Stores an object (in the JSON form a client would send) as if created by `kube-apiserver`.
    pub fn seed(&self, obj: Value) -> Result<Value, ApiError> {
        let api_version = obj["apiVersion"].as_str().unwrap_or("");
        let kind = obj["kind"].as_str().unwrap_or("");
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        let mut state = relock(&self.shared.state);
        let rt = state
            .registry
            .by_kind(group, version, kind)
            .ok_or_else(|| ApiError::bad_request(format!("no kind {kind} in {api_version}")))?;
        state.now = self.shared.clock.stamp();
        let opts = lifecycle::WriteOpts::system(lifecycle::Part::Main);
        let created = lifecycle::create(&mut state, &rt, obj, &opts).map(|w| w.object);
        drop(state);
        self.schedule_jobs();
        created
    }

    /// Adds a fault rule.
    pub fn inject(&self, fault: Fault) {
        relock(&self.shared.faults).add(fault);
    }

    /// Removes every fault rule.
    pub fn clear_faults(&self) {
        relock(&self.shared.faults).clear();
    }

    /// Every request handled so far, oldest first.
    pub fn requests(&self) -> Vec<RequestRecord> {
        relock(&self.shared.log).clone()
    }

    /// Forgets the recorded requests.
    pub fn clear_requests(&self) {
        relock(&self.shared.log).clear();
    }

    /// The requests recorded since the last call (or the start), oldest first, forgotten at once: a
    /// long run can count requests without keeping them all.
    pub fn take_requests(&self) -> Vec<RequestRecord> {
        std::mem::take(&mut *relock(&self.shared.log))
    }

    /// Ends every open watch, as a dropped connection would. Returns how many were open.
    pub fn drop_watches(&self) -> usize {
        relock(&self.shared.state).drop_watchers(None)
    }

    /// Drops all watch history: any watch from an earlier resourceVersion gets `410 Gone`.
    pub fn compact(&self) {
        relock(&self.shared.state).compact();
    }

    /// The latest resourceVersion.
    pub fn resource_version(&self) -> u64 {
        relock(&self.shared.state).rv
    }

    /// The number of open watches.
    pub fn watcher_count(&self) -> usize {
        relock(&self.shared.state).watcher_count()
    }

    /// The server's clock.
    pub fn clock(&self) -> &Clock {
        &self.shared.clock
    }

    /// Handles one request whose body has been read.
    pub async fn handle(&self, req: ::http::Request<Bytes>) -> ::http::Response<ResponseBody> {
        let (parts, body) = req.into_parts();
        let classification = match self.classify(&parts) {
            Ok(c) => c,
            Err(refused) => return json_response(refused.code, &refused.to_status(), &[]),
        };
        let mut response = self.serve_classified(parts, body).await;
        self.pf_headers(&mut response, classification.as_ref());
        response
    }

    /// Serves a classified request.
    async fn serve_classified(
        &self,
        parts: ::http::request::Parts,
        body: Bytes,
    ) -> ::http::Response<ResponseBody> {
        let path = parts.uri.path().to_string();
        let raw_query = parts.uri.query().unwrap_or("").to_string();
        let query = Query::parse(Some(&raw_query));
        let route = request::route(&parts.method, &path, &query);
        let header = |name: ::http::header::HeaderName| {
            parts
                .headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_string()
        };
        let content_type = header(::http::header::CONTENT_TYPE);
        let content_type = content_type
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_string();
        let accept = header(::http::header::ACCEPT);
        let user_agent = header(::http::header::USER_AGENT);
        let log = |code: u16, response: Option<Value>| {
            self.record(
                &parts.method,
                &path,
                &raw_query,
                &route,
                &content_type,
                &body,
                code,
                response,
            )
        };

        if let Route::Resource(_) = &route {
            self.finish_due_jobs();
        }
        let (custom, review) = match &route {
            Route::Resource(rr) => relock(&self.shared.state)
                .registry
                .get(&rr.group, &rr.version, &rr.resource)
                .map_or((None, false), |rt| (Some(rt.custom), rt.review)),
            _ => (None, false),
        };
        let encoding = Encoding::new(&route, &accept, custom, review);
        if let Err(e) = request::timeout::check(&route, &query) {
            log(e.code, Some(e.to_status()));
            return encoding.error(&e);
        }
        // Built-in resources are routed by go-restful, which refuses some requests before any handler runs.
        if let (Route::Resource(rr), Some(false)) = (&route, custom)
            && let Some(e) = restful::refusal(rr, &header(::http::header::CONTENT_TYPE), &accept)
        {
            log(e.code, Some(e.to_status()));
            return json_response(e.code, &e.to_status(), &[]);
        }

        if let Route::Health(endpoint, check) = &route {
            // apiserver's healthz handlers answer any method, in plain text.
            let (code, text) = crate::health::respond(endpoint, check.as_deref(), &raw_query);
            log(code, None);
            return ::http::Response::builder()
                .status(code)
                .header(::http::header::CONTENT_TYPE, "text/plain; charset=utf-8")
                .header("X-Content-Type-Options", "nosniff")
                .body(ResponseBody::full(Bytes::from(text)))
                .unwrap_or_else(|_| ::http::Response::new(ResponseBody::empty()));
        }
        if parts.method == ::http::Method::GET
            && let Some(metrics) = self.metrics(&parts, &route)
        {
            log(200, None);
            return metrics;
        }
        if matches!(route, Route::Groups | Route::CoreVersions)
            && parts.method == ::http::Method::GET
            && discovery::aggregated::wanted(&accept)
        {
            let doc = discovery::aggregated::document(
                &relock(&self.shared.state).registry,
                route == Route::CoreVersions,
            );
            log(200, None);
            return ::http::Response::builder()
                .status(200)
                .header(
                    ::http::header::CONTENT_TYPE,
                    discovery::aggregated::CONTENT_TYPE,
                )
                .header(::http::header::VARY, "Accept")
                .body(ResponseBody::full(Bytes::from(doc.to_string())))
                .unwrap_or_else(|_| ::http::Response::new(ResponseBody::empty()));
        }
        if route == Route::OpenApiV2 {
            // kube-openapi's handler answers any method.
            let doc = openapi::v2::document(&relock(&self.shared.state).registry);
            let if_none_match = header(::http::header::IF_NONE_MATCH);
            return match openapi::v2::respond(&doc, &accept, &if_none_match) {
                Ok(reply) => {
                    log(reply.status, None);
                    let mut builder = ::http::Response::builder().status(reply.status);
                    for (name, value) in &reply.headers {
                        builder = builder.header(*name, value);
                    }
                    builder
                        .body(ResponseBody::full(reply.body))
                        .unwrap_or_else(|_| ::http::Response::new(ResponseBody::empty()))
                }
                Err(e) => {
                    tracing::error!(error = %e, "the OpenAPI v2 document");
                    let e = ApiError::internal(e.to_string());
                    log(e.code, Some(e.to_status()));
                    error_response(&e)
                }
            };
        }

        let mut end_watch_after = None;
        if let Route::Resource(rr) = &route {
            // A create names its object in the body; faults match on that name too.
            let mut target = rr.clone();
            if target.name.is_none() && rr.verb == Verb::Create {
                target.name = serde_json::from_slice::<Value>(&body)
                    .ok()
                    .and_then(|v| v["metadata"]["name"].as_str().map(str::to_string));
            }
            let actions = relock(&self.shared.faults).take(&target);
            for action in actions {
                match action {
                    FaultAction::Delay(d) => tokio::time::sleep(d).await,
                    FaultAction::EndWatchAfter(d) => end_watch_after = Some(d),
                    FaultAction::Fail(e) => {
                        let resp = encoding.error(&e);
                        log(e.code, Some(e.to_status()));
                        return resp;
                    }
                }
            }
        }

        // A request no encoding can answer is refused before it is carried out.
        let accept = match encoding.handler_accept() {
            Ok(accept) => accept,
            Err(e) => {
                log(e.code, Some(e.to_status()));
                return encoding.error(&e);
            }
        };
        if let Route::Resource(rr) = &route
            && matches!(
                rr.verb,
                Verb::Create | Verb::Update | Verb::Patch | Verb::Delete
            )
            && !review
            && self.has_webhooks()
        {
            let reply = std::panic::AssertUnwindSafe(self.admit(
                rr,
                &parts.method,
                &query,
                &content_type,
                &user_agent,
                &body,
            ))
            .catch_unwind()
            .await
            .unwrap_or_else(|_| Err(ApiError::internal("admission panicked")));
            return self.respond(reply, &route, &log, &encoding);
        }
        let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| {
            self.dispatch(
                &route,
                &parts.method,
                &query,
                &content_type,
                &accept,
                &user_agent,
                &body,
                end_watch_after,
                handlers::Admission::None,
            )
        }));
        let reply = match outcome {
            Ok(r) => r,
            Err(panic) => {
                let what = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "unknown panic".into());
                tracing::error!(path = %path, panic = %what, "request handler panicked");
                Err(ApiError::internal(format!("handler panicked: {what}")))
            }
        };
        self.respond(reply, &route, &log, &encoding)
    }

    /// The HTTP response of a handler's reply, logged.
    fn respond(
        &self,
        reply: Result<Reply, ApiError>,
        route: &Route,
        log: &dyn Fn(u16, Option<Value>),
        encoding: &Encoding,
    ) -> ::http::Response<ResponseBody> {
        if let Route::Resource(rr) = route
            && rr.verb.is_mutating()
        {
            self.schedule_jobs();
        }
        self.after_flowcontrol_write(route);
        match reply {
            Ok(Reply::Json(code, value, warnings)) => {
                let logged = match route {
                    Route::Resource(rr) if rr.verb.is_mutating() => Some(value.clone()),
                    _ => None,
                };
                log(code, logged);
                encoding.reply(code, &value, &warnings)
            }
            Ok(Reply::Watch(mut stream)) => {
                log(200, None);
                let content_type = if encoding.watch_protobuf() {
                    stream.protobuf();
                    "application/vnd.kubernetes.protobuf;stream=watch"
                } else {
                    "application/json"
                };
                ::http::Response::builder()
                    .status(200)
                    .header(::http::header::CONTENT_TYPE, content_type)
                    .header(::http::header::TRANSFER_ENCODING, "chunked")
                    .body(ResponseBody::watch(stream))
                    .unwrap_or_else(|_| ::http::Response::new(ResponseBody::empty()))
            }
            Err(e) => {
                log(e.code, Some(e.to_status()));
                encoding.error(&e)
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn dispatch(
        &self,
        route: &Route,
        method: &::http::Method,
        query: &Query,
        content_type: &str,
        accept: &str,
        user_agent: &str,
        body: &Bytes,
        end_watch_after: Option<Duration>,
        admission: handlers::Admission,
    ) -> Result<Reply, ApiError> {
        let json = |v: Value| Ok(Reply::Json(200, v, Vec::new()));
        if method != ::http::Method::GET && !matches!(route, Route::Resource(_)) {
            return Err(ApiError::method_not_allowed(
                "the server does not allow this method on the requested resource",
            ));
        }
        match route {
            Route::Version => json(discovery::version()),
            Route::CoreVersions => json(discovery::core_versions()),
            Route::Groups => json(discovery::groups(&relock(&self.shared.state).registry)),
            Route::Group(g) => discovery::group(&relock(&self.shared.state).registry, g)
                .map(|v| Reply::Json(200, v, Vec::new()))
                .ok_or_else(ApiError::no_route),
            Route::Resources(g, v) => {
                discovery::resources(&relock(&self.shared.state).registry, g, v)
                    .map(|v| Reply::Json(200, v, Vec::new()))
                    .ok_or_else(ApiError::no_route)
            }
            Route::OpenApiV3Root => json(openapi::v3_root(&relock(&self.shared.state).registry)),
            Route::OpenApiV3(g, v) => {
                openapi::v3_document(&relock(&self.shared.state).registry, g, v)
                    .map(|v| Reply::Json(200, v, Vec::new()))
                    .ok_or_else(ApiError::no_route)
            }
            Route::OpenApiV2 => Err(ApiError::no_route()), // answered in `handle`
            Route::Health(..) => Err(ApiError::no_route()), // answered in `handle`
            Route::Unknown => Err(ApiError::no_route()),
            Route::Resource(rr) => {
                let mut q = query.clone();
                if let Some(d) = end_watch_after {
                    q = q.with("timeoutSeconds", &d.as_secs().max(1).to_string());
                }
                handlers::handle(Call {
                    req: rr,
                    query: &q,
                    content_type,
                    accept,
                    user_agent,
                    body,
                    admission,
                    state: &self.shared.state,
                    now: self.shared.clock.stamp(),
                    clock: self.shared.clock.clone(),
                    bookmark_interval: self.shared.bookmark_interval,
                })
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn record(
        &self,
        method: &::http::Method,
        path: &str,
        query: &str,
        route: &Route,
        content_type: &str,
        body: &Bytes,
        code: u16,
        response: Option<Value>,
    ) {
        if !self.shared.log_enabled {
            return;
        }
        let rr = match route {
            Route::Resource(rr) => Some(rr),
            _ => None,
        };
        let parsed_body = if body.is_empty() {
            None
        } else if content_type.contains("yaml") {
            handlers::parse_yaml(body).ok()
        } else {
            serde_json::from_slice(body).ok()
        };
        let record = RequestRecord {
            verb: rr.map(|r| r.verb),
            method: method.to_string(),
            path: path.to_string(),
            query: query.to_string(),
            group: rr.map(|r| r.group.clone()).unwrap_or_default(),
            resource: rr.map(|r| r.resource.clone()).unwrap_or_default(),
            subresource: rr.and_then(|r| r.subresource.clone()),
            namespace: rr.and_then(|r| r.namespace.clone()),
            name: rr.and_then(|r| r.name.clone()),
            content_type: (!content_type.is_empty()).then(|| content_type.to_string()),
            body: parsed_body,
            code,
            response,
        };
        relock(&self.shared.log).push(record);
    }
}

fn error_response(e: &ApiError) -> ::http::Response<ResponseBody> {
    json_response(e.code, &e.to_status(), &[])
}

impl<B> tower::Service<::http::Request<B>> for ApiServer
where
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: std::fmt::Display,
{
    type Response = ::http::Response<ResponseBody>;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Self::Response, Infallible>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: ::http::Request<B>) -> Self::Future {
        let server = self.clone();
        async move {
            let (parts, body) = req.into_parts();
            let bytes = match body.collect().await {
                Ok(c) => c.to_bytes(),
                Err(e) => {
                    return Ok(error_response(&ApiError::bad_request(format!(
                        "could not read the request body: {e}"
                    ))));
                }
            };
            Ok(server
                .handle(::http::Request::from_parts(parts, bytes))
                .await)
        }
        .boxed()
    }
}
