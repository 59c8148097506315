//! The response's media type from `Accept`, negotiated as kube-apiserver negotiates it.
//!
//! `Accept` is parsed and ordered as goautoneg orders it (by `q`, then concrete types before wildcards; an
//! insertion sort, as Go's sort does on short lists), and the first clause that one of the server's
//! encodings (JSON, YAML, protobuf, in that order) matches and whose parameters the endpoint allows wins:
//! - `as`, `g`, `v` ask for a conversion: a resource allows `Table` (`meta.k8s.io` `v1` or `v1beta1`) in
//!   JSON or YAML only, and `PartialObjectMetadata` (and its list) in every encoding; errors allow none;
//! - `stream` must be `watch`, on an encoding that streams (not YAML); `sv` is refused.
//!
//! Without a conversion, a custom resource allows JSON and YAML only (its objects have no protobuf
//! messages), while its errors, `metav1.Status`, are written in any encoding. A request no clause matches
//! gets `406 Not Acceptable`.

/// An encoding of the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Media {
    /// `application/json`.
    Json,
    /// `application/yaml`.
    Yaml,
    /// `application/vnd.kubernetes.protobuf`.
    Protobuf,
}

impl Media {
    const ALL: [Media; 3] = [Media::Json, Media::Yaml, Media::Protobuf];

    fn subtype(self) -> &'static str {
        match self {
            Media::Json => "json",
            Media::Yaml => "yaml",
            Media::Protobuf => "vnd.kubernetes.protobuf",
        }
    }

    /// The media type.
    pub fn media_type(self) -> &'static str {
        match self {
            Media::Json => "application/json",
            Media::Yaml => "application/yaml",
            Media::Protobuf => crate::protobuf::MEDIA_TYPE,
        }
    }
}

/// A conversion asked for with `as`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Convert {
    /// The object itself.
    None,
    /// `meta.k8s.io` `Table`.
    Table,
    /// `meta.k8s.io` `PartialObjectMetadata` or `PartialObjectMetadataList`.
    Metadata,
}

/// What is answered to a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Output {
    /// The encoding.
    pub media: Media,
    /// The conversion.
    pub convert: Convert,
}

/// What is being answered, which decides the clauses allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoint {
    /// Objects of a resource; `custom` for a custom resource.
    Resource {
        /// A custom resource: no protobuf for its objects.
        custom: bool,
    },
    /// A watch of a resource: only encodings that stream.
    Watch {
        /// A custom resource.
        custom: bool,
    },
    /// An error: a `metav1.Status`, without conversion.
    Error,
    /// The create of a review kind: no Table (its storage has no table convertor).
    Review,
}

struct Clause {
    ty: String,
    subtype: String,
    q: f64,
    params: Vec<(String, String)>,
}

/// goautoneg's `ParseAccept`: the clauses, best first.
fn parse(header: &str) -> Vec<Clause> {
    let mut clauses: Vec<Clause> = Vec::new();
    for part in header.split(',') {
        let part = part.trim_matches(' ');
        let mut pieces = part.split(';');
        let media = pieces.next().unwrap_or_default();
        let (ty, subtype) = match media.split_once('/') {
            None if media.trim_matches(' ') == "*" => ("*".to_string(), "*".to_string()),
            None => continue,
            Some((_, rest)) if rest.contains('/') => continue,
            Some((t, s)) => (
                t.trim_matches(' ').to_string(),
                s.trim_matches(' ').to_string(),
            ),
        };
        let mut clause = Clause {
            ty,
            subtype,
            q: 1.0,
            params: Vec::new(),
        };
        for param in pieces {
            let Some((k, v)) = param.split_once('=') else {
                continue;
            };
            if v.contains('=') {
                continue;
            }
            let k = k.trim_matches(' ');
            if k == "q" {
                // Go's ParseFloat(.., 32), errors read as 0.
                clause.q = v.parse::<f32>().map(f64::from).unwrap_or(0.0);
            } else {
                clause
                    .params
                    .push((k.to_string(), v.trim_matches(' ').to_string()));
            }
        }
        clauses.push(clause);
    }
    // goautoneg's Less, by insertion sort (what Go's sort.Sort does on fewer than 13 elements).
    let less = |a: &Clause, b: &Clause| {
        a.q > b.q || (a.ty != "*" && b.ty == "*") || (a.subtype != "*" && b.subtype == "*")
    };
    for i in 1..clauses.len() {
        let mut j = i;
        while j > 0 && less(&clauses[j], &clauses[j - 1]) {
            clauses.swap(j, j - 1);
            j -= 1;
        }
    }
    clauses
}

/// The first clause of `accept` the endpoint can answer, or `None` for 406.
pub fn negotiate(accept: &str, endpoint: Endpoint) -> Option<Output> {
    if accept.is_empty() {
        return Some(Output {
            media: Media::Json,
            convert: Convert::None,
        });
    }
    for clause in parse(accept) {
        for media in Media::ALL {
            let matches = (clause.ty == "application"
                && (clause.subtype == media.subtype() || clause.subtype == "*"))
                || (clause.ty == "*" && clause.subtype == "*");
            if matches && let Some(out) = allowed(&clause, media, endpoint) {
                // A watch takes the first match, and refuses it when it does not stream.
                let refused = matches!(endpoint, Endpoint::Watch { .. }) && media == Media::Yaml;
                return (!refused).then_some(out);
            }
        }
    }
    None
}

/// The output of `clause` in `media`, when the endpoint allows its parameters.
fn allowed(clause: &Clause, media: Media, endpoint: Endpoint) -> Option<Output> {
    let (mut kind, mut group, mut version) = (None, None, None);
    for (k, v) in &clause.params {
        match k.as_str() {
            "as" => kind = Some(v.as_str()),
            "g" => group = Some(v.as_str()),
            "v" => version = Some(v.as_str()),
            "stream" if !v.is_empty() => {
                let streams = media != Media::Yaml;
                if !streams || v != "watch" || endpoint == Endpoint::Error {
                    return None;
                }
            }
            "sv" if !v.is_empty() => return None,
            _ => {}
        }
    }
    let converting = kind.is_some() || group.is_some() || version.is_some();
    let convert = if !converting {
        match endpoint {
            Endpoint::Resource { custom: true } | Endpoint::Watch { custom: true }
                if media == Media::Protobuf =>
            {
                return None;
            }
            _ => Convert::None,
        }
    } else {
        if endpoint == Endpoint::Error {
            return None;
        }
        if group != Some("meta.k8s.io") || !matches!(version, Some("v1" | "v1beta1")) {
            return None;
        }
        match kind {
            Some("Table") if media != Media::Protobuf && endpoint != Endpoint::Review => {
                Convert::Table
            }
            Some("PartialObjectMetadata" | "PartialObjectMetadataList") => Convert::Metadata,
            _ => return None,
        }
    };
    Some(Output { media, convert })
}

/// The message of kube-apiserver's 406: the media types it serves, or those it streams when a watch's
/// clause named one that does not stream (a watch is first negotiated as a list).
pub fn not_acceptable_message(streams: bool) -> String {
    let types = if streams {
        "application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch"
    } else {
        "application/json, application/yaml, application/vnd.kubernetes.protobuf"
    };
    format!("only the following media types are accepted: {types}")
}

#[cfg(test)]
mod tests {
    use super::*;

    const BUILT_IN: Endpoint = Endpoint::Resource { custom: false };
    const CUSTOM: Endpoint = Endpoint::Resource { custom: true };

    fn media(accept: &str, endpoint: Endpoint) -> Option<(Media, Convert)> {
        negotiate(accept, endpoint).map(|o| (o.media, o.convert))
    }

    #[test]
    fn client_go_typed_clients_get_protobuf_for_built_in_kinds_and_json_for_custom_ones() {
        let accept = "application/vnd.kubernetes.protobuf, application/json";
        assert_eq!(
            media(accept, BUILT_IN),
            Some((Media::Protobuf, Convert::None))
        );
        assert_eq!(media(accept, CUSTOM), Some((Media::Json, Convert::None)));
        assert_eq!(
            media(accept, Endpoint::Error),
            Some((Media::Protobuf, Convert::None))
        );
        assert_eq!(media("application/vnd.kubernetes.protobuf", CUSTOM), None);
    }

    #[test]
    fn tables_are_never_protobuf_and_metadata_is() {
        let table = "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io";
        assert_eq!(media(table, BUILT_IN), None);
        assert_eq!(media(table, Endpoint::Error), None);
        let both = format!("{table},application/json;as=Table;v=v1;g=meta.k8s.io");
        assert_eq!(media(&both, BUILT_IN), Some((Media::Json, Convert::Table)));
        let pom = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;v=v1;g=meta.k8s.io";
        assert_eq!(
            media(pom, CUSTOM),
            Some((Media::Protobuf, Convert::Metadata))
        );
    }

    #[test]
    fn q_values_and_wildcards_order_the_clauses() {
        let accept = "application/vnd.kubernetes.protobuf;q=0.5, application/json";
        assert_eq!(media(accept, BUILT_IN), Some((Media::Json, Convert::None)));
        assert_eq!(media("*/*", BUILT_IN), Some((Media::Json, Convert::None)));
        let accept = "*/*, application/vnd.kubernetes.protobuf";
        assert_eq!(
            media(accept, BUILT_IN),
            Some((Media::Protobuf, Convert::None))
        );
        assert_eq!(media("", BUILT_IN), Some((Media::Json, Convert::None)));
    }

    #[test]
    fn watches_stream_json_or_protobuf_only() {
        let watch = Endpoint::Watch { custom: false };
        let accept = "application/vnd.kubernetes.protobuf;stream=watch";
        assert_eq!(media(accept, watch), Some((Media::Protobuf, Convert::None)));
        assert_eq!(media("application/yaml;stream=watch", watch), None);
    }
}
