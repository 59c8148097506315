//! The life of an object: system metadata, the write pipeline, deletion with finalizers, garbage collection,
//! namespace termination and CustomResourceDefinitions.

mod delete;
mod gc;
mod job_selector;
mod marking;
mod metadata;
mod options;
mod pod_create;
mod write;

pub use delete::delete;
pub use metadata::{field_schema, scope};
pub use options::{Deleted, Part, Propagation, WriteOpts, Written};
pub(crate) use write::finish_due_jobs;
pub use write::{create, update};
