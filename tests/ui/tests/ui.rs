//! The derive's UI tests: `*.rs` beside this crate's manifest must fail with exactly the errors in the `.stderr`
//! beside them. Regenerate those with `TRYBUILD=overwrite cargo test -p derive-ui --test ui` on the pinned
//! toolchain, and read the diff: each file is named after the rule it breaks.
//!
//! The cases that must compile and run, `pass/*.rs`, are test targets of this crate (`pass_*` in its manifest),
//! so that trybuild only checks: a passing case here would make it build every dependency again.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("*.rs");
}
