//! The derive's UI tests live in this crate's test targets: `tests/ui.rs` runs the failing cases (`*.rs` beside
//! this crate's manifest, each with the `.stderr` it must print) with trybuild, and each passing case
//! (`pass/*.rs`) is a test target of its own. This library is empty: a package needs a library or a binary.
