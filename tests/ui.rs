//! The derive's UI tests: `ui/pass/*.rs` must compile (and run), `ui/*.rs` must fail with exactly the errors in
//! the `.stderr` beside them. Regenerate those with `TRYBUILD=overwrite cargo test -p tests --test ui` on the
//! pinned toolchain, and read the diff: each file is named after the rule it breaks.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("ui/pass/*.rs");
    t.compile_fail("ui/*.rs");
}
