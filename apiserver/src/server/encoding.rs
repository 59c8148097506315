//! The encoding of a resource response: what `Accept` negotiates ([`crate::negotiate`]), protobuf for the
//! built-in kinds ([`crate::protobuf::encode`]) and for every `metav1.Status`, JSON otherwise.
//!
//! A request whose `Accept` does not name protobuf is answered as before (JSON; `as=Table` and
//! `as=PartialObjectMetadata` picked from the header by [`crate::table::Render`]) unless no encoding can
//! answer it (`application/cbor` alone: `406`, as a custom resource's handler refuses it; built-in resources
//! are refused earlier, by `server/restful.rs`, as go-restful refuses them). One that names it is
//! negotiated as kube-apiserver negotiates: objects of built-in kinds and errors in protobuf when its
//! clause comes first, a custom resource in JSON when `Accept` allows it and `406` otherwise, a Table never
//! in protobuf. An object that the protobuf encoder cannot write (a JSON field its message lacks) is
//! answered as kube-apiserver answers a kind without protobuf: JSON when `Accept` allows it, else `406`.

use serde_json::Value;

use super::warnings;
use crate::body::ResponseBody;
use crate::error::ApiError;
use crate::negotiate::{self, Convert, Endpoint, Media, Output};
use crate::request::{Route, Verb};

/// How one request's responses are encoded.
#[derive(Debug, Clone)]
pub(super) struct Encoding {
    accept: String,
    /// The endpoint answered, when `Accept` names protobuf on a resource route.
    endpoint: Option<Endpoint>,
}

impl Encoding {
    /// The encoding of a request on `route`; `custom` tells whether its resource, when served, is a custom
    /// resource (a path that names no served resource is answered as before).
    /// A `review` resource's create is negotiated without Table, as kube-apiserver negotiates it.
    pub(super) fn new(route: &Route, accept: &str, custom: Option<bool>, review: bool) -> Self {
        let names_protobuf = accept.to_ascii_lowercase().contains("protobuf");
        let endpoint = match (route, custom) {
            (Route::Resource(rr), Some(_)) if review && rr.verb == Verb::Create => {
                Some(Endpoint::Review)
            }
            (Route::Resource(rr), Some(custom)) => Some(if rr.verb == Verb::Watch {
                Endpoint::Watch { custom }
            } else {
                Endpoint::Resource { custom }
            }),
            _ => None,
        }
        // Negotiated when protobuf is named, or when nothing can answer (a CBOR-only `Accept`: 406).
        .filter(|&endpoint| {
            let as_list = match endpoint {
                Endpoint::Watch { custom } => Endpoint::Resource { custom },
                other => other,
            };
            names_protobuf || negotiate::negotiate(accept, as_list).is_none()
        });
        Self {
            accept: accept.to_string(),
            endpoint,
        }
    }

    /// The negotiated output, or `None` when answered as before negotiation (no protobuf in `Accept`).
    fn output(&self) -> Option<Result<Output, ApiError>> {
        let endpoint = self.endpoint?;
        if let Endpoint::Watch { custom } = endpoint {
            // kube-apiserver negotiates a watch as a list first, then for a stream.
            let list = Endpoint::Resource { custom };
            if negotiate::negotiate(&self.accept, list).is_none() {
                return Some(Err(not_acceptable(false)));
            }
        }
        let streams = matches!(endpoint, Endpoint::Watch { .. });
        Some(negotiate::negotiate(&self.accept, endpoint).ok_or_else(|| not_acceptable(streams)))
    }

    /// The `Accept` the handlers render by (`as=Table`, `as=PartialObjectMetadata`), or the `406` of a
    /// request nothing can answer.
    pub(super) fn handler_accept(&self) -> Result<String, ApiError> {
        Ok(match self.output() {
            None => self.accept.clone(),
            Some(out) => match out?.convert {
                Convert::None => "application/json".into(),
                Convert::Table => "application/json;as=Table;v=v1;g=meta.k8s.io".into(),
                Convert::Metadata => {
                    "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io".into()
                }
            },
        })
    }

    /// Whether a watch streams protobuf.
    pub(super) fn watch_protobuf(&self) -> bool {
        matches!(self.output(), Some(Ok(out)) if out.media == Media::Protobuf)
    }

    /// The response of an object (or list, or success Status).
    pub(super) fn reply(
        &self,
        code: u16,
        value: &Value,
        warnings: &[String],
    ) -> ::http::Response<ResponseBody> {
        let Some(Ok(out)) = self.output() else {
            return json_response(code, value, warnings);
        };
        if out.media != Media::Protobuf {
            return json_response(code, value, warnings);
        }
        match crate::protobuf::encode(value) {
            Ok(bytes) => response(code, Media::Protobuf.media_type(), bytes, warnings),
            Err(e) => {
                tracing::warn!(error = %e, "answering in JSON what protobuf cannot encode");
                // As for a kind without protobuf: another clause of Accept, or 406.
                let custom = Endpoint::Resource { custom: true };
                match negotiate::negotiate(&self.accept, custom) {
                    Some(out) if out.media != Media::Protobuf => {
                        json_response(code, value, warnings)
                    }
                    _ => self.error(&not_acceptable(false)),
                }
            }
        }
    }

    /// The response of an error: its Status in the encoding negotiated for errors.
    pub(super) fn error(&self, e: &ApiError) -> ::http::Response<ResponseBody> {
        let status = e.to_status();
        if self.endpoint.is_some()
            && let Some(out) = negotiate::negotiate(&self.accept, Endpoint::Error)
            && out.media == Media::Protobuf
        {
            match crate::protobuf::encode(&status) {
                Ok(bytes) => return response(e.code, Media::Protobuf.media_type(), bytes, &[]),
                Err(err) => tracing::error!(error = %err, "a Status does not encode in protobuf"),
            }
        }
        json_response(e.code, &status, &[])
    }
}

/// kube-apiserver's `406 Not Acceptable`.
fn not_acceptable(streams: bool) -> ApiError {
    ApiError::new(
        406,
        "NotAcceptable",
        negotiate::not_acceptable_message(streams),
    )
}

/// A JSON response.
pub(super) fn json_response(
    code: u16,
    value: &Value,
    warnings: &[String],
) -> ::http::Response<ResponseBody> {
    let bytes = serde_json::to_vec(value).unwrap_or_default();
    response(code, "application/json", bytes, warnings)
}

fn response(
    code: u16,
    content_type: &str,
    bytes: Vec<u8>,
    warnings: &[String],
) -> ::http::Response<ResponseBody> {
    let mut builder = ::http::Response::builder()
        .status(code)
        .header(::http::header::CONTENT_TYPE, content_type);
    for header in warnings::headers(warnings) {
        builder = builder.header("Warning", header);
    }
    builder
        .body(ResponseBody::full(bytes))
        .unwrap_or_else(|_| ::http::Response::new(ResponseBody::empty()))
}

#[cfg(test)]
#[path = "encoding_tests.rs"]
mod tests;
