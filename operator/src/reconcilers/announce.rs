//! How a write to a child is told: one log line and one event on the parent, naming the child.

use kube::Resource;

use crate::command::display_name;
use crate::context::Context;

/// A write the runtime made to a child.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mutation {
    Created,
    Updated,
    Deleted,
}

impl Mutation {
    /// The event's reason.
    fn reason(self) -> &'static str {
        match self {
            Mutation::Created => "Created",
            Mutation::Updated => "Updated",
            Mutation::Deleted => "Deleted",
        }
    }

    /// The event's action.
    fn action(self) -> &'static str {
        match self {
            Mutation::Created => "Create",
            Mutation::Updated => "Update",
            Mutation::Deleted => "Delete",
        }
    }
}

/// `Kind name`, or `Kind namespace/name` for a namespaced child.
pub(crate) fn describe<C: Resource<DynamicType = ()>>(child: &C) -> String {
    format!("{} {}", C::kind(&()), display_name(child))
}

/// Logs the write and records one event about it on the parent, with the child as the related object (so
/// events about two children are never merged) and, when given, why it was made (`Deleted ConfigMap
/// default/x: no longer desired`).
pub(crate) async fn announce<C: Resource<DynamicType = ()>>(
    cx: &mut Context,
    mutation: Mutation,
    child: &C,
    described: &str,
    why: Option<&str>,
) {
    let reason = mutation.reason();
    if mutation == Mutation::Updated {
        crate::metrics::Metrics::global().corrected(cx.controller_name(), &C::kind(&()));
    }
    match why {
        Some(why) => tracing::info!(child = %described, why, "{}", reason.to_lowercase()),
        None => tracing::info!(child = %described, "{}", reason.to_lowercase()),
    }
    let note = match why {
        Some(why) => format!("{reason} {described}: {why}"),
        None => format!("{reason} {described}"),
    };
    cx.event_about(
        child.object_ref(&()),
        false,
        reason,
        mutation.action(),
        note,
    )
    .await;
}
