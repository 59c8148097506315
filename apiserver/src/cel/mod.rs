//! CEL support shared by the CRD validation rules (`schema/rules`) and the admission webhooks'
//! `matchConditions` (`admission/conditions.rs`): JSON values as the CEL values kube-apiserver builds from
//! unstructured objects, and the texts cel-go gives its parse and evaluation errors.

pub(crate) mod errors;
pub(crate) mod values;
