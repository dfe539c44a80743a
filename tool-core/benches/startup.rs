//! Registry start-up with 100 `#[tool]` functions: collect them from `inventory` (which builds
//! each declaration and derives its JSON Schema with schemars), check them and compile their
//! built-in validators, then verify a pin of the result, as a program does once at start.
//!
//! With feature `jsonschema`, two more groups put the general engine beside the built-in checker
//! in the same run: compiling the 100 schemas with it (what start-up did before), and one call's
//! validation (valid and invalid arguments) with each.
//!
//! The 100 tools are four realistic shapes (a path reader, a search, an enum-driven action, a
//! query with nested filter objects), 25 of each. In `startup_100_tools` the 50 tools with user
//! types share those types, as tools of one program often do (schemars then runs once per
//! sequence of user types, see `schema::assembled`); `startup_100_tools_own_types` gives each of
//! them types of its own, so schemars runs for every one.

use criterion::{criterion_group, BatchSize, Criterion};
use schemars::JsonSchema;
use serde::Deserialize;
use tool_core::__private_0_1_0::forget_derived_schemas;
use tool_core::{Registry, WorkspacePath};

/// The user types of the enum-driven action and the filtered query.
macro_rules! user_types {
    () => {
        /// How a deployment proceeds.
        #[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
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
        #[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
        #[serde(rename_all = "snake_case")]
        pub enum Op {
            /// Equal.
            Eq,
            /// Not equal.
            Ne,
            /// Less than.
            Lt,
            /// Greater than.
            Gt,
            /// Substring match.
            Contains,
        }

        /// One row filter (the handlers read none of it).
        #[allow(dead_code)]
        #[derive(Debug, Clone, Deserialize, JsonSchema)]
        #[serde(deny_unknown_fields)]
        pub struct Filter {
            /// Column name.
            pub column: String,
            /// Comparison.
            pub op: Op,
            /// Value compared against.
            pub value: String,
        }
    };
}

user_types!();

macro_rules! read_range {
    ($name:ident) => {
        /// Read a range of lines from a text file in the workspace.
        ///
        /// # Arguments
        /// * `path` - the file, relative to the workspace
        /// * `first_line` - first line to return (1-based)
        /// * `line_count` - most lines to return
        #[tool_core::tool(risk = "read_only", path_args = ["path"], concurrency_safe, idempotent)]
        pub fn $name(
            path: WorkspacePath,
            first_line: Option<u32>,
            line_count: Option<u32>,
        ) -> Result<String, String> {
            let _ = (path, first_line, line_count);
            Ok(String::new())
        }
    };
}

macro_rules! search_text {
    ($name:ident) => {
        /// Search the project's files for a pattern.
        ///
        /// # Arguments
        /// * `pattern` - text to look for
        /// * `globs` - only files matching one of these globs
        /// * `case_sensitive` - match case exactly
        /// * `max_results` - stop after this many matches
        #[tool_core::tool(risk = "read_only", concurrency_safe, open_world)]
        pub async fn $name(
            pattern: String,
            globs: Vec<String>,
            case_sensitive: bool,
            max_results: Option<u16>,
        ) -> String {
            let _ = (pattern, globs, case_sensitive, max_results);
            String::new()
        }
    };
}

macro_rules! deploy_service {
    ($name:ident) => {
        /// Deploy a service version to an environment.
        ///
        /// # Arguments
        /// * `service` - the service name
        /// * `version` - the version tag
        /// * `strategy` - how instances are replaced
        /// * `replicas` - instance count after the deployment
        /// * `dry_run` - plan only, change nothing
        #[tool_core::tool(risk = "destructive", timeout = "120s")]
        pub async fn $name(
            service: String,
            version: String,
            strategy: Strategy,
            replicas: Option<u8>,
            dry_run: Option<bool>,
        ) -> Result<String, String> {
            let _ = (service, version, strategy, replicas, dry_run);
            Ok(String::new())
        }
    };
}

macro_rules! query_rows {
    ($name:ident) => {
        /// Query rows of a table with filters.
        ///
        /// # Arguments
        /// * `table` - the table name
        /// * `filters` - every filter must hold
        /// * `columns` - columns to return (all when empty)
        /// * `limit` - most rows to return
        #[tool_core::tool(risk = "read_only", concurrency_safe, idempotent)]
        pub fn $name(
            table: String,
            filters: Vec<Filter>,
            columns: Vec<String>,
            limit: Option<u32>,
        ) -> String {
            let _ = (table, filters, columns, limit);
            String::new()
        }
    };
}

macro_rules! hundred_tools {
    ($($a:ident $b:ident $c:ident $d:ident;)*) => {
        $(read_range!($a); search_text!($b); deploy_service!($c); query_rows!($d);)*
    };
}

hundred_tools! {
    read_range_00 search_text_00 deploy_service_00 query_rows_00;
    read_range_01 search_text_01 deploy_service_01 query_rows_01;
    read_range_02 search_text_02 deploy_service_02 query_rows_02;
    read_range_03 search_text_03 deploy_service_03 query_rows_03;
    read_range_04 search_text_04 deploy_service_04 query_rows_04;
    read_range_05 search_text_05 deploy_service_05 query_rows_05;
    read_range_06 search_text_06 deploy_service_06 query_rows_06;
    read_range_07 search_text_07 deploy_service_07 query_rows_07;
    read_range_08 search_text_08 deploy_service_08 query_rows_08;
    read_range_09 search_text_09 deploy_service_09 query_rows_09;
    read_range_10 search_text_10 deploy_service_10 query_rows_10;
    read_range_11 search_text_11 deploy_service_11 query_rows_11;
    read_range_12 search_text_12 deploy_service_12 query_rows_12;
    read_range_13 search_text_13 deploy_service_13 query_rows_13;
    read_range_14 search_text_14 deploy_service_14 query_rows_14;
    read_range_15 search_text_15 deploy_service_15 query_rows_15;
    read_range_16 search_text_16 deploy_service_16 query_rows_16;
    read_range_17 search_text_17 deploy_service_17 query_rows_17;
    read_range_18 search_text_18 deploy_service_18 query_rows_18;
    read_range_19 search_text_19 deploy_service_19 query_rows_19;
    read_range_20 search_text_20 deploy_service_20 query_rows_20;
    read_range_21 search_text_21 deploy_service_21 query_rows_21;
    read_range_22 search_text_22 deploy_service_22 query_rows_22;
    read_range_23 search_text_23 deploy_service_23 query_rows_23;
    read_range_24 search_text_24 deploy_service_24 query_rows_24;
}

/// The enum-driven action and the filtered query with types of their own, in a module each pair.
macro_rules! own_types {
    ($($deploy:ident $query:ident;)*) => {
        $(
            pub mod $deploy {
                use super::*;

                user_types!();
                deploy_service!($deploy);
                query_rows!($query);
            }
        )*
    };
}

/// The same 100 shapes, but no two tools share a user type.
mod own {
    use super::*;

    macro_rules! stated_tools {
        ($($a:ident $b:ident;)*) => {
            $(read_range!($a); search_text!($b);)*
        };
    }

    stated_tools! {
        own_read_00 own_search_00; own_read_01 own_search_01; own_read_02 own_search_02;
        own_read_03 own_search_03; own_read_04 own_search_04; own_read_05 own_search_05;
        own_read_06 own_search_06; own_read_07 own_search_07; own_read_08 own_search_08;
        own_read_09 own_search_09; own_read_10 own_search_10; own_read_11 own_search_11;
        own_read_12 own_search_12; own_read_13 own_search_13; own_read_14 own_search_14;
        own_read_15 own_search_15; own_read_16 own_search_16; own_read_17 own_search_17;
        own_read_18 own_search_18; own_read_19 own_search_19; own_read_20 own_search_20;
        own_read_21 own_search_21; own_read_22 own_search_22; own_read_23 own_search_23;
        own_read_24 own_search_24;
    }

    own_types! {
        own_deploy_00 own_query_00; own_deploy_01 own_query_01; own_deploy_02 own_query_02;
        own_deploy_03 own_query_03; own_deploy_04 own_query_04; own_deploy_05 own_query_05;
        own_deploy_06 own_query_06; own_deploy_07 own_query_07; own_deploy_08 own_query_08;
        own_deploy_09 own_query_09; own_deploy_10 own_query_10; own_deploy_11 own_query_11;
        own_deploy_12 own_query_12; own_deploy_13 own_query_13; own_deploy_14 own_query_14;
        own_deploy_15 own_query_15; own_deploy_16 own_query_16; own_deploy_17 own_query_17;
        own_deploy_18 own_query_18; own_deploy_19 own_query_19; own_deploy_20 own_query_20;
        own_deploy_21 own_query_21; own_deploy_22 own_query_22; own_deploy_23 own_query_23;
        own_deploy_24 own_query_24;
    }
}

/// The tools of one set: the shared types' (this module) or the own types' (`own` and below).
fn set(own: bool) -> Registry {
    set_builder(own).build().expect("registry")
}

fn set_builder(own: bool) -> tool_core::registry::RegistryBuilder {
    Registry::builder().with_inventory_where(move |m| (m == module_path!()) != own)
}

fn bench(c: &mut Criterion) {
    let registry = set(false);
    assert_eq!(registry.len(), 100);
    start_up(c, "startup_100_tools", false);
    start_up(c, "startup_100_tools_own_types", true);
    #[cfg(feature = "jsonschema")]
    engines(c, &registry);
}

/// One set's start-up, in three steps and whole.
fn start_up(c: &mut Criterion, group: &str, own: bool) {
    let pin_dir = tempfile::tempdir().expect("tempdir");
    let registry = set(own);
    assert_eq!(registry.len(), 100);
    tool_core::pin::write(&registry, pin_dir.path()).expect("pin");

    let mut g = c.benchmark_group(group);
    // Each iteration is a program's first registry: schemars' share of the schemas with user
    // types, which a process makes once per sequence of user types and then copies, is forgotten
    // before it (outside the timed part). Start-up is measured without tearing the registry down
    // again: the built registries are dropped outside the timed part too.
    g.bench_function("collect", |b| {
        b.iter_batched(
            forget_derived_schemas,
            |()| set_builder(own),
            BatchSize::PerIteration,
        )
    });
    g.bench_function("collect_compile", |b| {
        b.iter_batched(
            forget_derived_schemas,
            |()| set(own),
            BatchSize::PerIteration,
        )
    });
    // What start-up leaves to first use, for every tool at once: the schemas put together
    // (stated whole, or from parts) and their checkers compiled.
    g.bench_function("first_use_of_all", |b| {
        b.iter_batched(
            || set(own),
            |r| {
                for tool in r.iter() {
                    std::hint::black_box(tool.validator());
                }
                r
            },
            BatchSize::PerIteration,
        )
    });
    g.bench_function("verify_pin", |b| {
        b.iter(|| registry.verify_pin(pin_dir.path()).expect("pin holds"))
    });
    g.bench_function("collect_compile_verify", |b| {
        b.iter_batched(
            forget_derived_schemas,
            |()| {
                let r = set(own);
                r.verify_pin(pin_dir.path()).expect("pin holds");
                r
            },
            BatchSize::PerIteration,
        )
    });
    g.finish();
}

/// The general engine beside the built-in checker: compiling every schema, and validating one
/// call's arguments.
#[cfg(feature = "jsonschema")]
fn engines(c: &mut Criterion, registry: &Registry) {
    use serde_json::json;
    use tool_core::schema::{violations, Validator};

    let schemas: Vec<serde_json::Value> = registry
        .iter()
        .map(|t| t.decl().input_schema.value().clone())
        .collect();
    let mut g = c.benchmark_group("compile_100_schemas");
    g.bench_function("builtin", |b| {
        b.iter_with_large_drop(|| {
            schemas
                .iter()
                .map(|s| Validator::builtin(s).expect("covered"))
                .collect::<Vec<_>>()
        })
    });
    g.bench_function("general", |b| {
        b.iter_with_large_drop(|| {
            schemas
                .iter()
                .map(|s| Validator::general(s).expect("compiles"))
                .collect::<Vec<_>>()
        })
    });
    g.finish();

    let schema = &registry
        .get("query_rows_00")
        .expect("tool")
        .decl()
        .input_schema;
    let builtin = Validator::builtin(schema).expect("covered");
    let general = Validator::general(schema).expect("compiles");
    let valid = json!({
        "table": "orders",
        "filters": [
            {"column": "status", "op": "eq", "value": "open"},
            {"column": "total", "op": "gt", "value": "100"}
        ],
        "columns": ["id", "total"],
        "limit": 50
    });
    let invalid = json!({"table": "orders", "filters": [{"column": 1, "op": "like"}], "limit": -1});
    let mut g = c.benchmark_group("validate_call");
    for (name, v) in [("builtin", &builtin), ("general", &general)] {
        g.bench_function(format!("{name}/valid"), |b| {
            b.iter(|| assert!(v.is_valid(std::hint::black_box(&valid))))
        });
        g.bench_function(format!("{name}/invalid_violations"), |b| {
            b.iter(|| violations(v, std::hint::black_box(&invalid)))
        });
    }
    g.finish();
}

/// A program's very first registry, in a process of its own: `STARTUP_FIRST=shared` (or `own`)
/// with a pin directory as the one argument. Once with `STARTUP_FIRST=pin`, the directory gets
/// the pins of both sets; then each run times building one set and verifying its pin, once,
/// with nothing warmed up before (code, heap and schemars' share all fresh), and prints the
/// microseconds. `scripts/bench-startup-first.sh` runs it many times.
fn first_start(mode: &str, dir: &std::path::Path) {
    let pin_of = |own: bool| dir.join(if own { "own" } else { "shared" });
    if mode == "pin" {
        for own in [false, true] {
            tool_core::pin::write(&set(own), pin_of(own)).expect("pin");
        }
        return;
    }
    let own = match mode {
        "shared" => false,
        "own" => true,
        other => panic!("STARTUP_FIRST is pin, shared or own, not {other:?}"),
    };
    let start = std::time::Instant::now();
    let registry = set(own);
    registry.verify_pin(pin_of(own)).expect("pin holds");
    let elapsed = start.elapsed();
    assert_eq!(registry.len(), 100);
    println!("{}", elapsed.as_secs_f64() * 1e6);
}

criterion_group!(benches, bench);

fn main() {
    if let Ok(mode) = std::env::var("STARTUP_FIRST") {
        let dir = std::env::args_os()
            .nth(1)
            .expect("STARTUP_FIRST takes the pin directory as its argument");
        return first_start(&mode, dir.as_ref());
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
