#!/usr/bin/env bash
# Compile-time cost of declaring 100 tools, side by side:
#   ours    - 100 `#[tool]` functions (tool-core's macro generates the argument structs)
#   rmcp    - the same 100 functions as `#[tool]` methods of an rmcp `#[tool_router]` impl,
#             with hand-written argument structs (Deserialize + JsonSchema)
#   derives - the same functions and argument structs with their derives only, no tool macro
#
# Generates the three crates under target/bench-compile/, builds their dependencies once, then
# times a full rebuild of each crate alone (touch src/lib.rs; cargo build; dev profile,
# CARGO_INCREMENTAL=0) in RUNS rounds (default 3) that interleave the crates, and prints the
# medians and ratios.
#
# Usage: scripts/bench-compile.sh            (RUNS=5 scripts/bench-compile.sh for more runs)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WORK="$ROOT/target/bench-compile"
RUNS="${RUNS:-3}"
export CARGO_INCREMENTAL=0
export CARGO_TARGET_DIR="$WORK/target"

mkdir -p "$WORK"
cd "$WORK"

# One shared workspace so the three crates resolve the same dependency versions as the project.
cat > Cargo.toml <<TOML
[workspace]
resolver = "2"
members = ["ours", "rmcp", "derives"]

[workspace.dependencies]
tool-core = { path = "$ROOT/tool-core", default-features = false }
rmcp = { version = "3.11", default-features = false, features = ["server", "macros"] }
serde = { version = "1", features = ["derive"] }
schemars = "1.2"

[profile.dev]
debug = false
TOML
cp "$ROOT/Cargo.lock" Cargo.lock

# The shared types every variant uses (an enum and a nested filter object).
shared_types() {
  cat <<'RS'
/// How a deployment proceeds.
#[derive(Debug, Clone, Copy, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    /// Replace every instance at once.
    Recreate,
    /// Replace instances a few at a time.
    Rolling,
    /// Start a second set and switch traffic.
    BlueGreen,
}

/// A comparison in a row filter.
#[derive(Debug, Clone, Copy, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Op {
    /// Equal.
    Eq,
    /// Not equal.
    Ne,
    /// Substring match.
    Contains,
}

/// One row filter.
#[derive(Debug, Clone, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Filter {
    /// Column name.
    pub column: String,
    /// Comparison.
    pub op: Op,
    /// Value compared against.
    pub value: String,
}
RS
}

# Argument structs (for rmcp and derives-only): $1 = index.
arg_structs() {
  local i="$1"
  cat <<RS

/// Arguments of \`read_range_$i\`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadRange${i}Args {
    /// the file, relative to the workspace
    pub path: String,
    /// first line to return (1-based)
    pub first_line: Option<u32>,
    /// most lines to return
    pub line_count: Option<u32>,
}

/// Arguments of \`search_text_$i\`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchText${i}Args {
    /// text to look for
    pub pattern: String,
    /// only files matching one of these globs
    pub globs: Vec<String>,
    /// match case exactly
    pub case_sensitive: bool,
    /// stop after this many matches
    pub max_results: Option<u16>,
}

/// Arguments of \`deploy_service_$i\`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeployService${i}Args {
    /// the service name
    pub service: String,
    /// the version tag
    pub version: String,
    /// how instances are replaced
    pub strategy: Strategy,
    /// instance count after the deployment
    pub replicas: Option<u8>,
    /// plan only, change nothing
    pub dry_run: Option<bool>,
}

/// Arguments of \`query_rows_$i\`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QueryRows${i}Args {
    /// the table name
    pub table: String,
    /// every filter must hold
    pub filters: Vec<Filter>,
    /// columns to return (all when empty)
    pub columns: Vec<String>,
    /// most rows to return
    pub limit: Option<u32>,
}
RS
}

gen_ours() {
  echo "//! 100 tools declared with tool-core's \`#[tool]\`."
  echo "#![allow(clippy::all)]"
  echo "use tool_core::{tool, WorkspacePath};"
  shared_types
  for n in $(seq -w 0 24); do
    cat <<RS

/// Read a range of lines from a text file in the workspace.
///
/// # Arguments
/// * \`path\` - the file, relative to the workspace
/// * \`first_line\` - first line to return (1-based)
/// * \`line_count\` - most lines to return
#[tool(risk = "read_only", path_args = ["path"], concurrency_safe, idempotent)]
pub fn read_range_$n(path: WorkspacePath, first_line: Option<u32>, line_count: Option<u32>) -> Result<String, String> {
    Ok(format!("{} {:?} {:?}", path.display(), first_line, line_count))
}

/// Search the project's files for a pattern.
///
/// # Arguments
/// * \`pattern\` - text to look for
/// * \`globs\` - only files matching one of these globs
/// * \`case_sensitive\` - match case exactly
/// * \`max_results\` - stop after this many matches
#[tool(risk = "read_only", concurrency_safe, open_world)]
pub async fn search_text_$n(pattern: String, globs: Vec<String>, case_sensitive: bool, max_results: Option<u16>) -> String {
    format!("{pattern} {globs:?} {case_sensitive} {max_results:?}")
}

/// Deploy a service version to an environment.
///
/// # Arguments
/// * \`service\` - the service name
/// * \`version\` - the version tag
/// * \`strategy\` - how instances are replaced
/// * \`replicas\` - instance count after the deployment
/// * \`dry_run\` - plan only, change nothing
#[tool(risk = "destructive", timeout = "120s")]
pub async fn deploy_service_$n(service: String, version: String, strategy: Strategy, replicas: Option<u8>, dry_run: Option<bool>) -> Result<String, String> {
    Ok(format!("{service} {version} {strategy:?} {replicas:?} {dry_run:?}"))
}

/// Query rows of a table with filters.
///
/// # Arguments
/// * \`table\` - the table name
/// * \`filters\` - every filter must hold
/// * \`columns\` - columns to return (all when empty)
/// * \`limit\` - most rows to return
#[tool(risk = "read_only", concurrency_safe, idempotent)]
pub fn query_rows_$n(table: String, filters: Vec<Filter>, columns: Vec<String>, limit: Option<u32>) -> String {
    format!("{table} {filters:?} {columns:?} {limit:?}")
}
RS
  done
}

gen_rmcp() {
  echo "//! The same 100 tools declared with rmcp's \`#[tool_router]\` / \`#[tool]\`."
  echo "#![allow(clippy::all)]"
  echo "use rmcp::handler::server::{router::tool::ToolRouter, wrapper::Parameters};"
  echo "use rmcp::{tool, tool_router};"
  shared_types
  for n in $(seq -w 0 24); do arg_structs "$n"; done
  cat <<'RS'

/// The server holding the tools.
#[derive(Clone)]
pub struct Tools {
    /// The router the macros build.
    pub tool_router: ToolRouter<Self>,
}

#[tool_router(server_handler)]
impl Tools {
RS
  for n in $(seq -w 0 24); do
    cat <<RS
    /// Read a range of lines from a text file in the workspace.
    #[tool(annotations(read_only_hint = true, idempotent_hint = true))]
    fn read_range_$n(&self, Parameters(a): Parameters<ReadRange${n}Args>) -> Result<String, String> {
        Ok(format!("{} {:?} {:?}", a.path, a.first_line, a.line_count))
    }

    /// Search the project's files for a pattern.
    #[tool(annotations(read_only_hint = true, open_world_hint = true))]
    async fn search_text_$n(&self, Parameters(a): Parameters<SearchText${n}Args>) -> String {
        format!("{} {:?} {} {:?}", a.pattern, a.globs, a.case_sensitive, a.max_results)
    }

    /// Deploy a service version to an environment.
    #[tool(annotations(destructive_hint = true))]
    async fn deploy_service_$n(&self, Parameters(a): Parameters<DeployService${n}Args>) -> Result<String, String> {
        Ok(format!("{} {} {:?} {:?} {:?}", a.service, a.version, a.strategy, a.replicas, a.dry_run))
    }

    /// Query rows of a table with filters.
    #[tool(annotations(read_only_hint = true, idempotent_hint = true))]
    fn query_rows_$n(&self, Parameters(a): Parameters<QueryRows${n}Args>) -> String {
        format!("{} {:?} {:?} {:?}", a.table, a.filters, a.columns, a.limit)
    }

RS
  done
  echo "}"
}

gen_derives() {
  echo "//! The same 100 functions and argument structs with their derives only."
  echo "#![allow(clippy::all)]"
  shared_types
  for n in $(seq -w 0 24); do
    arg_structs "$n"
    cat <<RS

/// Read a range of lines from a text file in the workspace.
pub fn read_range_$n(a: ReadRange${n}Args) -> Result<String, String> {
    Ok(format!("{} {:?} {:?}", a.path, a.first_line, a.line_count))
}

/// Search the project's files for a pattern.
pub async fn search_text_$n(a: SearchText${n}Args) -> String {
    format!("{} {:?} {} {:?}", a.pattern, a.globs, a.case_sensitive, a.max_results)
}

/// Deploy a service version to an environment.
pub async fn deploy_service_$n(a: DeployService${n}Args) -> Result<String, String> {
    Ok(format!("{} {} {:?} {:?} {:?}", a.service, a.version, a.strategy, a.replicas, a.dry_run))
}

/// Query rows of a table with filters.
pub fn query_rows_$n(a: QueryRows${n}Args) -> String {
    format!("{} {:?} {:?} {:?}", a.table, a.filters, a.columns, a.limit)
}
RS
  done
}

write_crate() {
  local name="$1" deps="$2" gen="$3"
  mkdir -p "$name/src"
  cat > "$name/Cargo.toml" <<TOML
[package]
name = "bench-compile-$name"
version = "0.0.0"
edition = "2021"
publish = false

[dependencies]
serde.workspace = true
schemars.workspace = true
$deps
TOML
  "$gen" > "$name/src/lib.rs.new"
  # Keep the old file (and its mtime) when nothing changed.
  if cmp -s "$name/src/lib.rs.new" "$name/src/lib.rs"; then rm "$name/src/lib.rs.new"; else mv "$name/src/lib.rs.new" "$name/src/lib.rs"; fi
}

write_crate ours "tool-core.workspace = true" gen_ours
write_crate rmcp "rmcp.workspace = true" gen_rmcp
write_crate derives "" gen_derives

echo "building dependencies once (dev profile, CARGO_INCREMENTAL=0) ..." >&2
# One crate per invocation, as timed below: features unify over the packages selected.
for name in ours rmcp derives; do cargo build --quiet -p "bench-compile-$name"; done

now() { date +%s.%N; }

# One crate's rebuild, timed; fails if anything but the crate itself was rebuilt.
time_build() {
  local name="$1" t0 t1 out
  touch "$name/src/lib.rs"
  t0=$(now)
  out=$(cargo build -p "bench-compile-$name" 2>&1)
  t1=$(now)
  # Only the crate itself may be rebuilt, or the figure measures dependencies.
  if [ "$(grep -c '^ *Compiling' <<<"$out")" != 1 ]; then
    echo "unexpected rebuild of dependencies for $name:" >&2
    echo "$out" >&2
    exit 1
  fi
  echo "$t1 - $t0" | bc -l
}

# Rounds interleave the three crates, so a change in the machine's load weighs on all alike.
declare -A TIMES MEDIAN
for _ in $(seq "$RUNS"); do
  for name in ours rmcp derives; do
    t=$(time_build "$name") || exit 1
    TIMES[$name]+="$t "
  done
done
for name in ours rmcp derives; do
  read -r -a times <<<"${TIMES[$name]}"
  MEDIAN[$name]=$(printf '%s\n' "${times[@]}" | sort -n | sed -n "$(( (RUNS + 1) / 2 ))p")
  printf '%-8s runs: %s  median: %.2f s\n' "$name" "$(printf '%.2f ' "${times[@]}")" "${MEDIAN[$name]}"
done

printf 'ours / rmcp     = %.2f  (target <= 0.70)\n' "$(echo "${MEDIAN[ours]} / ${MEDIAN[rmcp]}" | bc -l)"
printf 'ours / derives  = %.2f  (target <= 1.40)\n' "$(echo "${MEDIAN[ours]} / ${MEDIAN[derives]}" | bc -l)"
printf 'rmcp / derives  = %.2f\n' "$(echo "${MEDIAN[rmcp]} / ${MEDIAN[derives]}" | bc -l)"
