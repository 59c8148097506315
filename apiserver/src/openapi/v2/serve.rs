//! Serving `/openapi/v2` as kube-openapi's handler does: the `Accept` clauses, best quality first, are matched
//! against JSON (`application/json`, and what `*/*` or `application/*` selects), then gnostic's protobuf
//! under its deprecated and current names (`application/com.github.proto-openapi.spec.v2@v1.0+protobuf`,
//! `...spec.v2.v1.0+protobuf`, answered as the latter); no match is `406` with an empty body. Both
//! representations carry the same `ETag`, the SHA-512 of the JSON in upper-case hex, quoted; a request whose
//! `If-None-Match` names it is answered `304`. `Vary: Accept` is always set.

use bytes::Bytes;
use ring::digest::{SHA512, digest};
use serde_json::Value;

use super::error::V2Error;

/// JSON.
const JSON: &str = "application/json";
/// The protobuf's deprecated name, which client-go asks for.
const PROTOBUF_DEPRECATED: &str = "com.github.proto-openapi.spec.v2@v1.0+protobuf";
/// The protobuf's name, the one answered.
const PROTOBUF: &str = "com.github.proto-openapi.spec.v2.v1.0+protobuf";

/// The HTTP answer to a `GET /openapi/v2`.
#[derive(Debug, Clone)]
pub struct V2Response {
    /// The status: 200, 304 or 406.
    pub status: u16,
    /// The headers besides the body's length.
    pub headers: Vec<(&'static str, String)>,
    /// The body (empty for 304 and 406).
    pub body: Bytes,
}

/// The representations served, in kube-openapi's order: (type, subtype, protobuf?).
const OFFERED: &[(&str, &str, bool)] = &[
    ("application", "json", false),
    ("application", PROTOBUF_DEPRECATED, true),
    ("application", PROTOBUF, true),
];

/// The answer to a `GET /openapi/v2` with these `Accept` and `If-None-Match` headers, for the document `doc`.
pub fn respond(doc: &Value, accept: &str, if_none_match: &str) -> Result<V2Response, V2Error> {
    let accept = if accept.trim().is_empty() {
        "*/*"
    } else {
        accept
    };
    let mut headers = vec![("Vary", "Accept".to_string())];
    let Some(protobuf) = choose(accept) else {
        return Ok(V2Response {
            status: 406,
            headers,
            body: Bytes::new(),
        });
    };
    let json = to_json(doc)?;
    let etag = format!("\"{}\"", hex_upper(digest(&SHA512, &json).as_ref()));
    headers.push(("ETag", etag.clone()));
    if if_none_match.split(',').any(|t| {
        let t = t.trim();
        t == etag || t == "*" || t.strip_prefix("W/") == Some(etag.as_str())
    }) {
        return Ok(V2Response {
            status: 304,
            headers,
            body: Bytes::new(),
        });
    }
    let (content_type, body) = if protobuf {
        (
            format!("application/{PROTOBUF}"),
            super::proto::encode(doc)?,
        )
    } else {
        (JSON.to_string(), json)
    };
    headers.push(("Content-Type", content_type));
    Ok(V2Response {
        status: 200,
        headers,
        body: Bytes::from(body),
    })
}

/// The document as JSON, its top-level keys in the order of kube-openapi's `spec.Swagger` (`swagger` first),
/// the others sorted. (Inside, keys are sorted, where Go writes a schema's in its struct's order.)
fn to_json(doc: &Value) -> Result<Vec<u8>, V2Error> {
    const ORDER: &[&str] = &[
        "swagger",
        "info",
        "paths",
        "definitions",
        "parameters",
        "responses",
        "securityDefinitions",
        "security",
    ];
    let Value::Object(map) = doc else {
        return Ok(serde_json::to_vec(doc)?);
    };
    let mut keys: Vec<&String> = map.keys().collect();
    keys.sort_by_key(|k| (ORDER.iter().position(|o| o == k).unwrap_or(ORDER.len()), *k));
    let mut out = vec![b'{'];
    for (i, key) in keys.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        serde_json::to_writer(&mut out, key)?;
        out.push(b':');
        serde_json::to_writer(&mut out, &map[key])?;
    }
    out.push(b'}');
    Ok(out)
}

/// Whether the `Accept` header selects the protobuf (`Some(true)`), JSON (`Some(false)`) or nothing.
fn choose(accept: &str) -> Option<bool> {
    let mut clauses: Vec<(f64, usize, String, String)> = accept
        .split(',')
        .filter_map(|clause| {
            let mut parts = clause.split(';');
            let media = parts.next()?.trim();
            let q = parts
                .filter_map(|p| p.trim().strip_prefix("q="))
                .find_map(|q| q.trim().parse::<f64>().ok())
                .unwrap_or(1.0);
            let (ty, sub) = media.split_once('/').unwrap_or((media, "*"));
            let specificity = usize::from(ty != "*") + usize::from(sub != "*");
            Some((q, specificity, ty.to_string(), sub.to_string()))
        })
        .filter(|(q, ..)| *q > 0.0)
        .collect();
    // goautoneg: by quality, then more specific first; otherwise in the order given.
    clauses.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)));
    clauses.iter().find_map(|(_, _, ty, sub)| {
        OFFERED
            .iter()
            .find(|(t, s, _)| (ty == t || ty == "*") && (sub == s || sub == "*"))
            .map(|(_, _, protobuf)| *protobuf)
    })
}

fn hex_upper(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02X}")).collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn accept_headers_choose_as_kube_openapi_does() {
        assert_eq!(choose("*/*"), Some(false));
        assert_eq!(choose("application/json"), Some(false));
        assert_eq!(choose("application/*"), Some(false));
        assert_eq!(
            choose("application/com.github.proto-openapi.spec.v2@v1.0+protobuf"),
            Some(true)
        );
        assert_eq!(
            choose("application/com.github.proto-openapi.spec.v2.v1.0+protobuf, application/json"),
            Some(true)
        );
        assert_eq!(choose("text/html, application/json;q=0.5"), Some(false));
        assert_eq!(choose("text/html"), None);
        assert_eq!(choose("application/yaml"), None);
    }

    #[test]
    fn the_etag_answers_304_and_406_has_no_body() {
        let doc = json!({ "swagger": "2.0", "definitions": {}, "info": {} });
        let first = respond(&doc, "", "").expect("served");
        assert_eq!(first.status, 200);
        assert_eq!(
            &first.body[..],
            br#"{"swagger":"2.0","info":{},"definitions":{}}"#
        );
        let etag = first
            .headers
            .iter()
            .find(|(k, _)| *k == "ETag")
            .map(|(_, v)| v.clone())
            .expect("an ETag");
        assert_eq!(etag.len(), 130);
        let again = respond(
            &doc,
            "application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
            &etag,
        )
        .expect("served");
        assert_eq!(again.status, 304);
        assert!(again.body.is_empty());
        let refused = respond(&doc, "text/html", "").expect("served");
        assert_eq!(refused.status, 406);
        assert!(refused.body.is_empty());
    }
}
