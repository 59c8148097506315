//! CEL support shared by the CRD validation rules (`schema/rules`) and the admission webhooks'
//! `matchConditions` (`admission/conditions.rs`): JSON values as the CEL values kube-apiserver builds from
//! unstructured objects, the texts cel-go gives its parse and evaluation errors, expressions parsed with
//! the optional syntax kube-apiserver enables (`program.rs`), and the two-variable comprehensions the `cel`
//! crate's parser leaves as calls (`comprehensions.rs`).

pub(crate) mod comprehensions;
pub(crate) mod errors;
pub(crate) mod program;
pub(crate) mod values;
