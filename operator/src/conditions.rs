//! Status conditions: what a status type must offer, and how conditions change without losing
//! `lastTransitionTime`.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_openapi::jiff::Timestamp;
use serde::Serialize;

/// The condition every parent gets, rolled up from the conditions its steps set.
pub const READY: &str = "Ready";

/// What the root reconciler needs from a parent's status type: conditions and `observedGeneration`.
///
/// ```
/// use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
/// use kubewright::ReconcilerStatus;
///
/// #[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
/// struct MyStatus { observed_generation: Option<i64>, conditions: Vec<Condition> }
///
/// impl ReconcilerStatus for MyStatus {
///     fn conditions(&self) -> &[Condition] { &self.conditions }
///     fn conditions_mut(&mut self) -> &mut Vec<Condition> { &mut self.conditions }
///     fn observed_generation(&self) -> Option<i64> { self.observed_generation }
///     fn set_observed_generation(&mut self, g: Option<i64>) { self.observed_generation = g }
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be the status of a reconciled kind: it does not implement `kubewright::ReconcilerStatus`",
    label = "this status type does not implement `ReconcilerStatus`",
    note = "derive it: `#[derive(kubewright::ReconcilerStatus)]` on `{Self}`, which needs fields `observed_generation: Option<i64>` and `conditions: Vec<Condition>` (or ones marked `#[status(..)]`); or implement `kubewright::ReconcilerStatus` by hand. The root reconciler keeps `observedGeneration` and the conditions in it"
)]
pub trait ReconcilerStatus: Default + Clone + Serialize + Send + Sync + 'static {
    /// Whether the runtime writes this status to the parent (`false` for a parent whose status is not the
    /// operator's, [`crate::Foreign`]: its conditions are told as events and metrics).
    const WRITTEN: bool = true;
    /// The conditions.
    fn conditions(&self) -> &[Condition];
    /// The conditions, to change.
    fn conditions_mut(&mut self) -> &mut Vec<Condition>;
    /// The generation the status describes.
    fn observed_generation(&self) -> Option<i64>;
    /// Records the generation the status describes.
    fn set_observed_generation(&mut self, generation: Option<i64>);
}

/// The state of a condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConditionStatus {
    /// `True`.
    True,
    /// `False`.
    False,
    /// `Unknown`.
    Unknown,
}

impl ConditionStatus {
    /// The wire form.
    pub fn as_str(&self) -> &'static str {
        match self {
            ConditionStatus::True => "True",
            ConditionStatus::False => "False",
            ConditionStatus::Unknown => "Unknown",
        }
    }
}

/// A condition a step wants set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConditionUpdate {
    /// The condition type, e.g. `DeploymentReady`.
    pub type_: String,
    /// Its status.
    pub status: ConditionStatus,
    /// A CamelCase reason.
    pub reason: String,
    /// A human-readable message.
    pub message: String,
}

impl ConditionUpdate {
    /// A `True` condition.
    pub fn true_(
        type_: impl Into<String>,
        reason: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Self::new(type_, ConditionStatus::True, reason, message)
    }

    /// A `False` condition.
    pub fn false_(
        type_: impl Into<String>,
        reason: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Self::new(type_, ConditionStatus::False, reason, message)
    }

    /// A condition.
    pub fn new(
        type_: impl Into<String>,
        status: ConditionStatus,
        reason: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Self {
            type_: type_.into(),
            status,
            reason: reason.into(),
            message: message.into(),
        }
    }
}

/// Sets a condition, keeping `lastTransitionTime` when its status did not change.
pub fn set_condition(
    conditions: &mut Vec<Condition>,
    update: &ConditionUpdate,
    now: Timestamp,
    generation: Option<i64>,
) {
    match conditions.iter_mut().find(|c| c.type_ == update.type_) {
        Some(c) => {
            if c.status != update.status.as_str() {
                c.last_transition_time = Time(now);
                c.status = update.status.as_str().to_string();
            }
            c.reason = update.reason.clone();
            c.message = update.message.clone();
            c.observed_generation = generation;
        }
        None => conditions.push(Condition {
            type_: update.type_.clone(),
            status: update.status.as_str().to_string(),
            reason: update.reason.clone(),
            message: update.message.clone(),
            observed_generation: generation,
            last_transition_time: Time(now),
        }),
    }
}

/// The `Ready` condition rolled up from the others set in a pass: `True` when all are `True`, otherwise the
/// first that is not, with its reason and message.
pub fn ready_from(updates: &[ConditionUpdate]) -> ConditionUpdate {
    match updates
        .iter()
        .find(|u| u.type_ != READY && u.status != ConditionStatus::True)
    {
        Some(u) => ConditionUpdate::new(READY, u.status, u.reason.clone(), u.message.clone()),
        None => ConditionUpdate::true_(READY, "Ready", ""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(s: i64) -> Timestamp {
        Timestamp::from_second(s).unwrap()
    }

    #[test]
    fn transition_time_moves_only_with_the_status() {
        let mut cs = Vec::new();
        set_condition(
            &mut cs,
            &ConditionUpdate::true_("A", "Ok", ""),
            ts(10),
            Some(1),
        );
        set_condition(
            &mut cs,
            &ConditionUpdate::true_("A", "StillOk", "m"),
            ts(20),
            Some(2),
        );
        assert_eq!(cs[0].last_transition_time, Time(ts(10)));
        assert_eq!(cs[0].reason, "StillOk");
        assert_eq!(cs[0].observed_generation, Some(2));
        set_condition(
            &mut cs,
            &ConditionUpdate::false_("A", "Broken", "x"),
            ts(30),
            Some(2),
        );
        assert_eq!(cs[0].last_transition_time, Time(ts(30)));
        assert_eq!(cs[0].status, "False");
    }

    #[test]
    fn ready_rolls_up_the_first_failure() {
        let ok = ConditionUpdate::true_("A", "Ok", "");
        let bad = ConditionUpdate::false_("B", "NotOwned", "taken");
        assert_eq!(
            ready_from(std::slice::from_ref(&ok)).status,
            ConditionStatus::True
        );
        let r = ready_from(&[ok, bad]);
        assert_eq!(
            (r.status, r.reason.as_str(), r.message.as_str()),
            (ConditionStatus::False, "NotOwned", "taken")
        );
    }
}
