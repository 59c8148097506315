//! What go-restful refuses before a built-in resource's handler runs.
//!
//! kube-apiserver serves built-in resources through go-restful routes, which pick a route by method,
//! `Content-Type` and `Accept` before any handler sees the request: a patch whose type the route does not
//! consume is refused with `415: Unsupported Media Type`, and an `Accept` naming none of the media types the
//! route produces with `406: Not Acceptable` and the list of those types (compared without parameters, `*/*`
//! matching all and nothing else: `application/*` does not). Both come with an empty `details`. Custom
//! resources are served by apiextensions-apiserver's own handler, which negotiates itself
//! ([`crate::negotiate`]), so none of this applies to them.

use serde_json::json;

use crate::error::ApiError;
use crate::request::{ResourceRequest, Verb};

/// What a built-in resource's non-streaming routes produce.
const PRODUCES: [&str; 3] = [
    "application/json",
    "application/yaml",
    "application/vnd.kubernetes.protobuf",
];

/// What a list route produces besides: it also serves watches (`?watch=true`).
const STREAMS: [&str; 2] = [
    "application/json;stream=watch",
    "application/vnd.kubernetes.protobuf;stream=watch",
];

/// The patch types a built-in resource's patch route consumes (kube-apiserver 1.35 with CBOR off).
const PATCH_TYPES: [&str; 4] = [
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
];

/// The error go-restful answers `rr` with, given its `Content-Type` and `Accept` headers, if any.
pub(super) fn refusal(rr: &ResourceRequest, content_type: &str, accept: &str) -> Option<ApiError> {
    if rr.verb == Verb::Patch {
        // go-restful reads a patch without a Content-Type as application/octet-stream.
        let content_type = if content_type.is_empty() {
            "application/octet-stream"
        } else {
            content_type
        };
        if !media_types(content_type).any(|t| PATCH_TYPES.contains(&t)) {
            return Some(
                ApiError::new(415, "UnsupportedMediaType", "415: Unsupported Media Type")
                    .with_details(json!({})),
            );
        }
    }
    let lists = rr.name.is_none() && matches!(rr.verb, Verb::List | Verb::Watch);
    let produces: Vec<&str> = if lists {
        PRODUCES.iter().chain(STREAMS.iter()).copied().collect()
    } else {
        PRODUCES.to_vec()
    };
    let accept = if accept.is_empty() { "*/*" } else { accept };
    let accepted = media_types(accept).any(|t| t == "*/*" || produces.contains(&t));
    (!accepted).then(|| {
        ApiError::new(
            406,
            "NotAcceptable",
            format!(
                "406: Not Acceptable\n\nAvailable representations: {}",
                produces.join(", ")
            ),
        )
        .with_details(json!({}))
    })
}

/// The media types of a header's comma-separated clauses, without their parameters.
fn media_types(header: &str) -> impl Iterator<Item = &str> {
    header
        .split(',')
        .map(|clause| clause.split(';').next().unwrap_or_default().trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(verb: Verb, name: Option<&str>) -> ResourceRequest {
        ResourceRequest {
            verb,
            group: String::new(),
            version: "v1".into(),
            resource: "configmaps".into(),
            subresource: None,
            namespace: Some("default".into()),
            name: name.map(str::to_string),
        }
    }

    #[test]
    fn an_accept_naming_nothing_the_route_produces_is_refused_with_what_it_produces() {
        let get = request(Verb::Get, Some("c"));
        assert!(refusal(&get, "", "application/json").is_none());
        assert!(refusal(&get, "", "").is_none());
        assert!(refusal(&get, "", "application/cbor, */*;q=0.1").is_none());
        let e = refusal(&get, "", "application/cbor").expect("406");
        assert_eq!(e.code, 406);
        assert!(e.message.ends_with("application/vnd.kubernetes.protobuf"));
        // go-restful matches `*/*` only, not `application/*`.
        assert!(refusal(&get, "", "application/*").is_some());
        let list = request(Verb::List, None);
        let e = refusal(&list, "", "application/cbor").expect("406");
        assert!(e.message.ends_with(";stream=watch"), "{}", e.message);
    }

    #[test]
    fn a_patch_of_a_type_the_route_does_not_consume_is_refused() {
        let patch = request(Verb::Patch, Some("c"));
        assert!(refusal(&patch, "application/merge-patch+json", "").is_none());
        for refused in ["application/cbor", "application/json", ""] {
            let e = refusal(&patch, refused, "").expect("415");
            assert_eq!(
                (e.code, e.message.as_str()),
                (415, "415: Unsupported Media Type")
            );
        }
    }
}
