//! What kube-apiserver's own metrics (`/metrics`) say of the requests it served: how the benchmark and the
//! idle tests count an operator's requests and writes as the real server counts them, not as the operator
//! reports them.
//!
//! ```
//! use kubewright_envtest::metrics::{OPERATOR_RESOURCES, is_write, requests};
//!
//! let page = r#"apiserver_request_total{code="201",resource="deployments",subresource="",verb="APPLY"} 3
//! apiserver_request_total{code="200",resource="leases",subresource="",verb="PUT"} 40
//! apiserver_request_total{code="200",resource="deployments",subresource="",verb="GET"} 2"#;
//! let writes = requests(page, is_write);
//! assert_eq!(writes.get(&("APPLY".to_string(), "deployments".to_string())), Some(&3));
//! // The API server's own leases are not an operator's.
//! assert_eq!(writes.len(), 1);
//! assert!(OPERATOR_RESOURCES.contains(&"deployments"));
//! ```

use std::collections::BTreeMap;

use kube::Client;

/// The resources the example operators read and write; the API server's own writes (its leases, the
/// `kubernetes` endpoints) are not theirs.
pub const OPERATOR_RESOURCES: [&str; 8] = [
    "webapps",
    "databases",
    "deployments",
    "statefulsets",
    "services",
    "secrets",
    "configmaps",
    "events",
];

/// Whether a verb of the API server's metrics writes: every verb but `GET`, `LIST`, `WATCH` and `WATCHLIST`.
pub fn is_write(verb: &str) -> bool {
    !["GET", "LIST", "WATCH", "WATCHLIST"].contains(&verb)
}

/// The API server's `/metrics` page.
pub async fn scrape(client: &Client) -> Result<String, kube::Error> {
    let request = http::Request::get("/metrics")
        .body(Vec::new())
        .map_err(kube::Error::HttpError)?;
    client.request_text(request).await
}

/// One sample of a metric: its labels and its value.
#[derive(Debug, Clone, Copy)]
pub struct Sample<'a> {
    labels: &'a str,
    /// The value (0 where it does not parse).
    pub value: f64,
}

impl<'a> Sample<'a> {
    /// The value of the label `name` (`name="value"`), if the sample has it.
    pub fn label(&self, name: &str) -> Option<&'a str> {
        let labels = self.labels;
        let mut from = 0;
        while let Some(at) = labels[from..].find(name) {
            let start = from + at;
            let rest = &labels[start + name.len()..];
            let boundary = start == 0 || matches!(labels.as_bytes()[start - 1], b'{' | b',');
            if boundary && let Some(value) = rest.strip_prefix("=\"") {
                return value.split('"').next();
            }
            from = start + name.len();
        }
        None
    }
}

/// The samples of the metric `name` on a `/metrics` page (lines `name{labels} value`).
pub fn samples<'a>(page: &'a str, name: &'a str) -> impl Iterator<Item = Sample<'a>> + 'a {
    page.lines().filter_map(move |line| {
        let rest = line.strip_prefix(name)?.strip_prefix('{')?;
        let (labels, value) = rest.rsplit_once("} ")?;
        Some(Sample {
            labels,
            value: value.trim().parse().unwrap_or(0.0),
        })
    })
}

/// The requests `apiserver_request_total` counts on [`OPERATOR_RESOURCES`], by verb and resource, for the
/// verbs `verb` admits.
pub fn requests(page: &str, verb: impl Fn(&str) -> bool) -> BTreeMap<(String, String), u64> {
    let mut out = BTreeMap::new();
    for sample in samples(page, "apiserver_request_total") {
        let (Some(v), Some(resource)) = (sample.label("verb"), sample.label("resource")) else {
            continue;
        };
        if verb(v) && OPERATOR_RESOURCES.contains(&resource) {
            *out.entry((v.to_string(), resource.to_string()))
                .or_default() += sample.value as u64;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_label_is_matched_whole_not_as_the_end_of_another() {
        let page =
            r#"apiserver_request_total{subresource="status",resource="webapps",verb="PATCH"} 7"#;
        let sample = samples(page, "apiserver_request_total").next().unwrap();
        assert_eq!(sample.label("resource"), Some("webapps"));
        assert_eq!(sample.label("subresource"), Some("status"));
        assert_eq!(sample.label("verb"), Some("PATCH"));
        assert_eq!(sample.label("code"), None);
        assert_eq!(sample.value, 7.0);
    }

    #[test]
    fn only_the_named_metric_counts_and_samples_add_up() {
        let page = "\
# HELP apiserver_request_total Counter of apiserver requests
apiserver_request_total{code=\"200\",resource=\"services\",verb=\"GET\"} 2
apiserver_request_total{code=\"404\",resource=\"services\",verb=\"GET\"} 3
apiserver_request_total_other{code=\"200\",resource=\"services\",verb=\"GET\"} 100
apiserver_request_duration_seconds_sum{resource=\"services\",verb=\"GET\"} 0.5";
        let all = requests(page, |_| true);
        assert_eq!(
            all,
            BTreeMap::from([(("GET".to_string(), "services".to_string()), 5)])
        );
        assert!(requests(page, is_write).is_empty());
    }
}
