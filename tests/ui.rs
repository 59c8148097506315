//! The derive's UI tests: `ui/*.rs` must fail with exactly the errors in the `.stderr` beside them. Regenerate
//! those with `TRYBUILD=overwrite cargo test -p tests --test ui` on the pinned toolchain, and read the diff: each
//! file is named after the rule it breaks.
//!
//! The cases that must compile and run, `ui/pass/*.rs`, are test targets of this crate (`ui_pass_*` in its
//! manifest), so that trybuild only checks: a passing case here would make it build every dependency again.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("ui/*.rs");
}
