//! A write that webhooks must admit: the dry run that shows the object, the mutating webhooks, the dry run
//! of the mutated write, the validating webhooks, then the write itself.

use std::collections::HashMap;

use bytes::Bytes;
use serde_json::{Value, json};

use super::{ApiServer, relock};
use crate::admission::{
    self, Call, Decision, Hook, Inputs, ParamObjects, Policies, Review, Verdict, WebhookHandler,
    decide, matching, versioned,
};
use crate::error::{ApiError, Target};
use crate::handlers::{Admission, Reply};
use crate::request::{Query, ResourceRequest, Route, Verb};
use crate::store::ObjKey;

const GROUP: &str = "admissionregistration.k8s.io";

/// The request as it is (re)sent to the handlers.
#[derive(Clone)]
struct Write<'a> {
    route: Route,
    method: http::Method,
    content_type: &'a str,
    body: Bytes,
    /// What admission asks of the handlers.
    admission: Admission,
}

impl ApiServer {
    /// Whether any webhook configuration or policy binding is stored (the common case is none: no admission
    /// work at all).
    pub(super) fn has_webhooks(&self) -> bool {
        let state = relock(&self.shared.state);
        [
            "mutatingwebhookconfigurations",
            "validatingwebhookconfigurations",
            "validatingadmissionpolicybindings",
        ]
        .iter()
        .any(|plural| {
            state
                .collections
                .get(&(GROUP.to_string(), plural.to_string()))
                .is_some_and(|c| !c.objects.is_empty())
        })
    }

    /// Registers an in-process webhook behind the Service `namespace/name`: a webhook configuration whose
    /// `clientConfig.service` names it is answered by `handler` (request path, AdmissionReview in;
    /// AdmissionReview out), with no network. A CRD's conversion webhook whose `clientConfig.service` names
    /// it is answered the same way (ConversionReview in, ConversionReview out).
    pub fn serve_webhook(&self, namespace: &str, name: &str, handler: WebhookHandler) {
        relock(&self.shared.webhooks).insert((namespace.to_string(), name.to_string()), handler);
    }

    /// Admits and makes a write that webhooks may see. The webhooks' warnings come with the answer, a
    /// refusal too: kube-apiserver writes them to the response as each webhook answers.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn admit(
        &self,
        rr: &ResourceRequest,
        method: &http::Method,
        query: &Query,
        content_type: &str,
        user_agent: &str,
        body: &Bytes,
    ) -> Result<Reply, ApiError> {
        let mut warnings = Vec::new();
        let reply = self
            .admit_with(
                &mut warnings,
                rr,
                method,
                query,
                content_type,
                user_agent,
                body,
            )
            .await;
        match reply {
            Ok(Reply::Json(code, value, mut own)) => {
                warnings.append(&mut own);
                Ok(Reply::Json(code, value, warnings))
            }
            Err(e) if !warnings.is_empty() => Ok(Reply::Json(e.code, e.to_status(), warnings)),
            other => other,
        }
    }

    /// [`ApiServer::admit`], adding the webhooks' warnings to `warnings` as they answer.
    #[allow(clippy::too_many_arguments)]
    async fn admit_with(
        &self,
        warnings: &mut Vec<String>,
        rr: &ResourceRequest,
        method: &http::Method,
        query: &Query,
        content_type: &str,
        user_agent: &str,
        body: &Bytes,
    ) -> Result<Reply, ApiError> {
        let run = |w: &Write<'_>, q: &Query| {
            self.dispatch(
                &w.route,
                &w.method,
                q,
                w.content_type,
                "application/json",
                user_agent,
                &w.body,
                None,
                w.admission,
            )
        };
        let original = Write {
            route: Route::Resource(rr.clone()),
            method: method.clone(),
            content_type,
            body: body.clone(),
            admission: Admission::None,
        };
        let client_dry_run = query.get("dryRun") == Some("All");
        let dry = query.clone().with("dryRun", "All");
        // What the mutating webhooks see: the object decoded, patched and defaulted, not yet validated.
        let probe = Write {
            admission: Admission::Probe,
            ..original.clone()
        };
        let Reply::Json(code, object, _) = run(&probe, &dry)? else {
            return run(&original, query);
        };
        // A generated name is chosen once, before admission, as kube-apiserver does: the webhooks and the
        // write see the name the probe generated.
        let original = with_generated_name(original, rr, &object);
        let operation = match rr.verb {
            Verb::Create => "CREATE",
            Verb::Delete => "DELETE",
            _ if code == 201 => "CREATE",
            _ => "UPDATE",
        };
        let old = if operation == "CREATE" {
            None
        } else {
            let mut get = rr.clone();
            get.verb = Verb::Get;
            get.subresource = None;
            match self.dispatch(
                &Route::Resource(get),
                &http::Method::GET,
                &Query::default(),
                "",
                "application/json",
                user_agent,
                &Bytes::new(),
                None,
                Admission::None,
            ) {
                Ok(Reply::Json(_, o, _)) => Some(o),
                _ => None,
            }
        };
        let (
            kind,
            namespaced,
            configurations,
            namespace_object,
            handlers,
            equivalents,
            policies,
            params,
        ) = {
            let state = relock(&self.shared.state);
            let rt = state.registry.get(&rr.group, &rr.version, &rr.resource);
            let list = |plural: &str| -> Vec<Value> {
                state
                    .collections
                    .get(&(GROUP.to_string(), plural.to_string()))
                    .map(|c| c.objects.values().map(|o| (**o).clone()).collect())
                    .unwrap_or_default()
            };
            let namespace_object = rr.namespace.as_ref().and_then(|ns| {
                state
                    .get(&(String::new(), "namespaces".into()), &ObjKey::new("", ns))
                    .map(|n| (*n).clone())
            });
            let policies = (
                list("validatingadmissionpolicies"),
                list("validatingadmissionpolicybindings"),
            );
            let params = param_objects(&state, &policies.0);
            let equivalents = rt
                .as_ref()
                .map(|t| {
                    let crd = t
                        .custom
                        .then(|| {
                            state.get(
                                &(
                                    "apiextensions.k8s.io".to_string(),
                                    "customresourcedefinitions".to_string(),
                                ),
                                &ObjKey::new("", &t.group_resource()),
                            )
                        })
                        .flatten();
                    admission::equivalents(
                        &state.registry,
                        crd.as_deref(),
                        t,
                        rr.subresource.as_deref(),
                    )
                })
                .unwrap_or_default();
            (
                rt.as_ref().map(|t| t.kind.clone()).unwrap_or_default(),
                rt.as_ref().is_some_and(|t| t.namespaced),
                (
                    list("mutatingwebhookconfigurations"),
                    list("validatingwebhookconfigurations"),
                ),
                namespace_object,
                relock(&self.shared.webhooks).clone(),
                equivalents,
                policies,
                params,
            )
        };
        let namespace_labels = namespace_object
            .as_ref()
            .and_then(|n| n["metadata"]["labels"].as_object().cloned());
        let name = object["metadata"]["name"]
            .as_str()
            .or(rr.name.as_deref())
            .unwrap_or_default()
            .to_string();
        let namespace = rr.namespace.clone().unwrap_or_default();
        let base = Review {
            group: &rr.group,
            version: &rr.version,
            kind: &kind,
            resource: &rr.resource,
            subresource: rr.subresource.as_deref(),
            namespaced,
            namespace: &namespace,
            name: &name,
            operation,
            object: None,
            old_object: old.as_ref(),
            dry_run: client_dry_run,
            namespace_labels: namespace_labels.as_ref(),
            equivalents: &equivalents,
            invocation: None,
        };
        // Mutating webhooks are called on deletes too, with no object (and may not patch it).
        let deleting = operation == "DELETE";
        let mutated = self
            .mutate(
                &configurations.0,
                &base,
                (!deleting).then(|| object.clone()),
                &handlers,
                warnings,
            )
            .await?;
        let (current, mutated) = (mutated.object, mutated.patched);
        // A mutated object is written whole, by the request's field manager.
        let write = if mutated {
            let mut obj = current.clone();
            // The request's managedFields, from before the webhooks: their changes are owned by nobody.
            obj["metadata"]["managedFields"] = object["metadata"]["managedFields"].clone();
            if operation == "CREATE"
                && let Some(m) = obj["metadata"].as_object_mut()
            {
                for f in ["uid", "creationTimestamp", "resourceVersion", "generation"] {
                    m.remove(f);
                }
            }
            let mut route = rr.clone();
            let method = if operation == "CREATE" && rr.verb == Verb::Create {
                http::Method::POST
            } else if operation == "CREATE" {
                route.verb = Verb::Create;
                route.name = None;
                http::Method::POST
            } else {
                route.verb = Verb::Update;
                http::Method::PUT
            };
            Write {
                route: Route::Resource(route),
                method,
                content_type: "application/json",
                body: Bytes::from(serde_json::to_vec(&obj).unwrap_or_default()),
                admission: Admission::Mutated,
            }
        } else {
            original
        };
        let query = query.clone();
        let query = if mutated && rr.verb == Verb::Patch {
            // The patch's own parameters do not apply to the whole-object write.
            query.without("force")
        } else {
            query
        };
        // Then validation, and what the validating webhooks see.
        let validated = match run(&write, &query.clone().with("dryRun", "All"))? {
            // A write the dry run refuses (its schema, say) ends here: kube-apiserver validates before it calls
            // the validating webhooks, which never see a refused object.
            Reply::Json(code, o, _) if code < 300 => o,
            other => return Ok(other),
        };
        let object = (operation != "DELETE").then_some(&validated);
        // ValidatingAdmissionPolicies come before the validating webhooks.
        let enforced = admission::enforce(
            &Policies {
                policies: &policies.0,
                bindings: &policies.1,
                namespace_object: namespace_object.as_ref().filter(|_| kind != "Namespace"),
                params: &params,
            },
            &with_object(&base, object),
        );
        warnings.extend(enforced.warnings);
        if let Some(e) = enforced.refusal {
            return Err(e);
        }
        // kube-apiserver decides which validating webhooks to call (match conditions included) before
        // calling any of them.
        // Each sees the object in the version its rules name.
        let mut validating = Vec::new();
        // A delete's object selector is matched on the object deleted (the dry run answers a Status).
        for hook in matching(&configurations.1, &with_object(&base, object)) {
            let invocation = hook.invocation.clone();
            let seen = versioned(&base, invocation.as_ref(), object);
            let old = versioned(&base, invocation.as_ref(), base.old_object);
            validating.push((hook, invocation, seen, old));
        }
        let mut called = Vec::new();
        for (hook, invocation, seen, old) in &validating {
            let review = Review {
                object: seen.as_ref(),
                old_object: old.as_ref(),
                invocation: invocation.as_ref(),
                ..base.clone()
            };
            if conditions_hold(hook, &review)? {
                called.push((hook, review));
            }
        }
        // They are called side by side, all of them even when one refuses; the first refusal (in the
        // webhooks' order here, in the order of their answers on kube-apiserver) is the answer.
        let answers = futures::future::join_all(
            called
                .iter()
                .map(|(hook, review)| self.ask(hook, review, &handlers)),
        )
        .await;
        let mut refusal = None;
        for ((hook, _), answer) in called.iter().zip(answers) {
            match answer {
                Ok(Some(verdict)) => {
                    warnings.extend(verdict.warnings.iter().cloned());
                    if !verdict.allowed && refusal.is_none() {
                        refusal = Some(denied(hook, &verdict));
                    }
                }
                Ok(None) => {}
                Err(e) => {
                    refusal.get_or_insert(e);
                }
            }
        }
        if let Some(e) = refusal {
            return Err(e);
        }
        if client_dry_run {
            run(&write, &query.with("dryRun", "All"))
        } else {
            run(&write, &query)
        }
    }

    /// Calls one webhook; `None` when it failed and its failure policy ignores that.
    pub(super) async fn ask(
        &self,
        hook: &Hook,
        review: &Review<'_>,
        handlers: &HashMap<(String, String), WebhookHandler>,
    ) -> Result<Option<Verdict>, ApiError> {
        let uid = relock(&self.shared.state).ids.uid();
        let body = serde_json::to_vec(&admission::review_request(review, &uid)).unwrap_or_default();
        let answer = admission::call(Call {
            hook,
            body,
            handlers,
        })
        .await
        .map(|b| {
            admission::verdict(&b, &uid)
                .map_err(|e| format!("received invalid webhook response: {e}"))
        })
        .and_then(|v| v);
        match answer {
            Ok(v) => Ok(Some(v)),
            Err(_) if hook.fail_open => Ok(None),
            Err(e) => {
                let message = format!(
                    "failed calling webhook \"{}\": failed to call webhook: {e}",
                    hook.name
                );
                let mut error = ApiError::internal(message.clone());
                error.details = Some(json!({"causes": [{"message": message}]}));
                Err(error)
            }
        }
    }
}

/// Whether `hook`'s `matchConditions` let it be called for `review`; `Err` (403 Forbidden) when they failed
/// to evaluate under `failurePolicy: Fail`.
pub(super) fn conditions_hold(hook: &Hook, review: &Review<'_>) -> Result<bool, ApiError> {
    if hook.match_conditions.as_array().is_none_or(Vec::is_empty) {
        return Ok(true);
    }
    let request = admission::review_request(review, "");
    let inputs = Inputs {
        object: review.object,
        old_object: review.old_object,
        request: &request["request"],
    };
    match decide(&hook.match_conditions, inputs, hook.fail_open) {
        Decision::Call => Ok(true),
        Decision::Skip => Ok(false),
        Decision::Refuse(why) => {
            tracing::warn!(webhook = %hook.name, %why, "failed evaluating match conditions, failing closed");
            let target = Target {
                group: review.group,
                resource: review.resource,
            };
            Err(ApiError::forbidden(target, review.name, &why))
        }
    }
}

/// The objects of every `paramKind` the policies name, by `(apiVersion, kind)`, as served in that version.
fn param_objects(
    state: &crate::store::State,
    policies: &[Value],
) -> HashMap<(String, String), ParamObjects> {
    let mut out = HashMap::new();
    for policy in policies {
        let kind = &policy["spec"]["paramKind"];
        let (Some(api_version), Some(name)) = (kind["apiVersion"].as_str(), kind["kind"].as_str())
        else {
            continue;
        };
        let key = (api_version.to_string(), name.to_string());
        if out.contains_key(&key) {
            continue;
        }
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        let found = match state.registry.by_kind(group, version, name) {
            None => ParamObjects::default(),
            Some(rt) => ParamObjects {
                known: true,
                namespaced: rt.namespaced,
                objects: state
                    .collections
                    .get(&rt.storage)
                    .map(|c| {
                        c.objects
                            .values()
                            .map(|o| crate::convert::from_storage(&rt, o))
                            .collect()
                    })
                    .unwrap_or_default(),
            },
        };
        out.insert(key, found);
    }
    out
}

/// `write` (a create whose JSON body has no name) with the name the probe generated.
fn with_generated_name<'a>(write: Write<'a>, rr: &ResourceRequest, probed: &Value) -> Write<'a> {
    if rr.verb != Verb::Create {
        return write;
    }
    let Some(name) = probed["metadata"]["name"].as_str() else {
        return write;
    };
    let Ok(mut body) = serde_json::from_slice::<Value>(&write.body) else {
        return write;
    };
    if body["metadata"]["name"]
        .as_str()
        .is_some_and(|n| !n.is_empty())
        || !body["metadata"].is_object()
    {
        return write;
    }
    body["metadata"]["name"] = json!(name);
    match serde_json::to_vec(&body) {
        Ok(bytes) => Write {
            body: Bytes::from(bytes),
            content_type: "application/json",
            ..write
        },
        Err(_) => write,
    }
}

/// `base` with `object`.
pub(super) fn with_object<'a>(base: &Review<'a>, object: Option<&'a Value>) -> Review<'a> {
    Review {
        object,
        ..base.clone()
    }
}

/// kube-apiserver's error for a denial: `admission webhook "NAME" denied the request: MESSAGE`, with the
/// webhook's code (at least 400) and reason.
pub(super) fn denied(hook: &Hook, v: &Verdict) -> ApiError {
    let code = v.status["code"]
        .as_u64()
        .filter(|c| *c >= 400)
        .unwrap_or(400) as u16;
    let prefix = format!("admission webhook \"{}\" denied the request", hook.name);
    let message = match (v.status["message"].as_str(), v.status["reason"].as_str()) {
        (Some(m), _) if !m.is_empty() => format!("{prefix}: {m}"),
        (_, Some(r)) if !r.is_empty() => format!("{prefix}: {r}"),
        _ => format!("{prefix} without explanation"),
    };
    let mut e = ApiError::new(
        code,
        v.status["reason"].as_str().unwrap_or_default(),
        message,
    );
    e.details = v.status.get("details").cloned().filter(|d| !d.is_null());
    e
}
