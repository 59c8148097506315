//! `#[derive(Reconciler)]` as an author uses it: a full operator declared with every attribute, its wiring,
//! and the generated reconciler running end to end on the in-memory API server.

mod site;
