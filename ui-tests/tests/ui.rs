//! Every diagnostic of `#[tool]` and `#[tool_core::main]`: each case under `ui/` must fail to
//! compile with its committed message, pointing at the offending token.
//!
//! Four messages have no case, because no program built by Cargo through trybuild can reach
//! them: `input_schema` without `CARGO_MANIFEST_DIR` (Cargo always sets it), a schema file that
//! is JSON but not an object schema (trybuild builds in its own directory under the target
//! directory, so no file of this crate has a stable relative path from there), a variadic
//! function (rustc refuses `...` outside `extern` blocks before the macro runs), and the error
//! accumulator's internal misuse panic.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("ui/**/*.rs");
}
