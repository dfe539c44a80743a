//! Every `#[tool]` diagnostic: each case under `ui/` must fail to compile with its committed
//! message, pointing at the offending token.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("ui/**/*.rs");
}
