//! API priority and fairness around a request: the acting user (impersonation), the classification by the
//! stored FlowSchemas answered in the `X-Kubernetes-PF-*` headers, `/metrics`, and what kube-apiserver's
//! configuration controller writes: the default configuration at start and each FlowSchema's Dangling
//! condition after every write of the flowcontrol group.

use bytes::Bytes;
use serde_json::{Value, json};

use crate::auth::impersonation;
use crate::body::ResponseBody;
use crate::flowcontrol::bootstrap::{self, CONSUMER, PRODUCER};
use crate::flowcontrol::classify::{self, Classification, GROUP, Target};
use crate::flowcontrol::metrics;
use crate::lifecycle::{self, Part, WriteOpts};
use crate::request::{self, Query, Route};
use crate::store::{self, State};

use super::{ApiServer, relock};
use crate::error::ApiError;

/// The response header naming the FlowSchema a request was classified by.
const FLOW_SCHEMA_UID: &str = "X-Kubernetes-PF-FlowSchema-UID";
/// The response header naming the priority level a request was classified by.
const PRIORITY_LEVEL_UID: &str = "X-Kubernetes-PF-PriorityLevel-UID";

impl ApiServer {
    /// Classifies a request as kube-apiserver's filters do before it is served: the impersonation headers
    /// first (a refusal is answered at once, unclassified), then the stored FlowSchemas.
    pub(super) fn classify(
        &self,
        parts: &::http::request::Parts,
    ) -> Result<Option<Classification>, ApiError> {
        let user = impersonation::acting_user(&parts.headers)?;
        let path = parts.uri.path();
        let query = Query::parse(parts.uri.query());
        let route = request::route(&parts.method, path, &query);
        let target = Target::of(&route, &parts.method, path);
        Ok(classify::classify(
            &relock(&self.shared.state),
            &user,
            &target,
        ))
    }

    /// `/metrics`, when the request is for it.
    pub(super) fn metrics(
        &self,
        parts: &::http::request::Parts,
        route: &Route,
    ) -> Option<::http::Response<ResponseBody>> {
        if *route != Route::Unknown || parts.uri.path() != "/metrics" {
            return None;
        }
        let text = metrics::text(&relock(&self.shared.state));
        ::http::Response::builder()
            .status(200)
            .header(
                ::http::header::CONTENT_TYPE,
                "text/plain; version=0.0.4; charset=utf-8",
            )
            .body(ResponseBody::full(Bytes::from(text)))
            .ok()
    }

    /// Creates kube-apiserver's default FlowSchemas and PriorityLevelConfigurations.
    pub(super) fn seed_flowcontrol(&self) {
        let mut state = relock(&self.shared.state);
        state.now = self.shared.clock.stamp();
        for obj in bootstrap::objects() {
            let kind = obj["kind"].as_str().unwrap_or("").to_string();
            let Some(rt) = state.registry.by_kind(GROUP, "v1", &kind) else {
                continue;
            };
            let mut opts = WriteOpts::system(Part::Main);
            opts.manager = PRODUCER.into();
            if let Err(e) = lifecycle::create(&mut state, &rt, obj, &opts) {
                tracing::error!(kind, error = %e, "could not create a default flowcontrol object");
            }
        }
        sync_flow_schemas(&mut state, &self.shared.clock.stamp());
    }

    /// After a write: each FlowSchema's Dangling condition, when the write was to the flowcontrol group.
    pub(super) fn after_flowcontrol_write(&self, route: &Route) {
        if let Route::Resource(rr) = route
            && rr.group == GROUP
            && rr.verb.is_mutating()
        {
            let mut state = relock(&self.shared.state);
            sync_flow_schemas(&mut state, &self.shared.clock.stamp());
        }
    }

    /// Sets the response headers of a classified request.
    pub(super) fn pf_headers(
        &self,
        response: &mut ::http::Response<ResponseBody>,
        classification: Option<&Classification>,
    ) {
        let Some(c) = classification else {
            return;
        };
        for (name, value) in [
            (PRIORITY_LEVEL_UID, &c.priority_level_uid),
            (FLOW_SCHEMA_UID, &c.flow_schema_uid),
        ] {
            if let Ok(value) = ::http::HeaderValue::from_str(value) {
                response.headers_mut().insert(name, value);
            }
        }
    }
}

/// Writes the Dangling condition of every FlowSchema whose condition is missing or out of date, through its
/// `status` as kube-apiserver's configuration controller applies it.
fn sync_flow_schemas(state: &mut State, now: &str) {
    let Some(rt) = state.registry.get(GROUP, "v1", "flowschemas") else {
        return;
    };
    let levels: Vec<String> = classify::stored(state, "prioritylevelconfigurations")
        .filter_map(|pl| pl["metadata"]["name"].as_str().map(str::to_string))
        .collect();
    let stale: Vec<Value> = classify::stored(state, "flowschemas")
        .filter_map(|fs| {
            let pl = fs["spec"]["priorityLevelConfiguration"]["name"]
                .as_str()
                .unwrap_or("");
            let want = bootstrap::dangling(pl, levels.iter().any(|l| l == pl));
            let conditions = fs["status"]["conditions"].as_array();
            let have = conditions.and_then(|c| c.iter().find(|c| c["type"] == "Dangling"));
            if have.is_some_and(|h| bootstrap::same_condition(h, &want)) {
                return None;
            }
            let mut updated = fs.clone();
            let mut kept: Vec<Value> = conditions
                .map(|c| {
                    c.iter()
                        .filter(|c| c["type"] != "Dangling")
                        .cloned()
                        .collect()
                })
                .unwrap_or_default();
            let mut condition = want;
            condition["lastTransitionTime"] = json!(now);
            kept.push(condition);
            updated["status"] = json!({ "conditions": kept });
            Some(updated)
        })
        .collect();
    state.now = now.to_string();
    for fs in stale {
        let key = store::key_of(&fs);
        let mut opts = WriteOpts::system(Part::Status);
        opts.manager = CONSUMER.into();
        if let Err(e) = lifecycle::update(state, &rt, &key, fs, &opts) {
            tracing::error!(error = %e, "could not write a FlowSchema's Dangling condition");
        }
    }
}
