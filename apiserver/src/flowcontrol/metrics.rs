//! The one metric family of `/metrics` the in-memory server serves: `apiserver_flowcontrol_nominal_limit_seats`,
//! each priority level's nominal concurrency limit, computed as kube-apiserver's configuration controller
//! computes it from a server concurrency limit of 600 (its default `--max-requests-inflight` 400 plus
//! `--max-mutating-requests-inflight` 200): `ceil(600 * shares / sum of every level's shares)`, 0 for an
//! `Exempt` level without shares. Nothing is limited by it: requests are classified, never queued.

use serde_json::Value;

use crate::store::State;

use super::classify::stored;

/// kube-apiserver's default server concurrency limit.
const SERVER_CONCURRENCY_LIMIT: f64 = 600.0;

/// The shares of a level: `limited.nominalConcurrencyShares` (default 30) or `exempt.nominalConcurrencyShares`
/// (default 0).
fn shares(pl: &Value) -> f64 {
    let spec = &pl["spec"];
    match spec["type"].as_str() {
        Some("Exempt") => spec["exempt"]["nominalConcurrencyShares"]
            .as_f64()
            .unwrap_or(0.0),
        _ => spec["limited"]["nominalConcurrencyShares"]
            .as_f64()
            .unwrap_or(30.0),
    }
}

/// The Prometheus text of `/metrics`.
pub(crate) fn text(state: &State) -> String {
    let levels: Vec<&Value> = stored(state, "prioritylevelconfigurations").collect();
    let sum: f64 = levels.iter().map(|pl| shares(pl)).sum();
    let mut out = String::from(
        "# HELP apiserver_flowcontrol_nominal_limit_seats [BETA] Nominal number of execution seats configured for each priority level\n\
         # TYPE apiserver_flowcontrol_nominal_limit_seats gauge\n",
    );
    for pl in levels {
        let limit = if sum > 0.0 {
            (SERVER_CONCURRENCY_LIMIT * shares(pl) / sum).ceil()
        } else {
            0.0
        };
        let name = pl["metadata"]["name"].as_str().unwrap_or("");
        out.push_str(&format!(
            "apiserver_flowcontrol_nominal_limit_seats{{priority_level=\"{name}\"}} {limit}\n"
        ));
    }
    out
}
