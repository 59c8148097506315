//! The create of a review kind: decoded and type-checked as any create, its fields owned by the request's
//! manager in `managedFields` (as kube-apiserver's field manager records on every create), answered by
//! [`crate::auth`] with `201 Created`, never stored (a dry run answers the same).

use std::sync::Arc;

use super::call::{check_type, decode, dry_run, manager, reconcile_namespace};
use super::context::{Call, Reply, lock};
use crate::error::ApiResult;
use crate::lifecycle::{Part, field_schema, scope};
use crate::registry::ResourceType;

pub(super) fn create(call: &Call<'_>, rt: &Arc<ResourceType>) -> ApiResult<Reply> {
    let mut obj = decode(call, rt)?;
    check_type(call, rt, &mut obj)?;
    reconcile_namespace(call, rt, &mut obj)?;
    dry_run(call)?;
    crate::managed_fields::update(
        None,
        &mut obj,
        &manager(call),
        &rt.api_version(),
        scope(rt, Part::Main),
        field_schema(rt).as_ref(),
        &call.now,
    );
    let namespace = call.req.namespace.clone().unwrap_or_default();
    let state = lock(call.state)?;
    let answer = crate::auth::reviews::answer(&state, &rt.kind, obj, &namespace, &call.now)?;
    Ok(Reply::Json(201, answer, Vec::new()))
}
