//! Shared fixtures for the executor tests: small real file tools, approvers that script their
//! answers, and helpers. Built with the dynamic `ToolDef::builder` API, which runs through the same
//! executor path as `#[tool]` tools.
#![allow(dead_code)] // each test module uses a different part

use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{json, Map, Value};
use tool_core::approval::{ApprovalDecision, ApprovalRequest, Approver};
use tool_core::call::ToolCall;
use tool_core::cli::call::{run_call_with, ApproveMode, CallArgs, SandboxArg};
use tool_core::registry::ToolDef;
use tool_core::resource::Resources;
use tool_core::{Executor, ExecutorConfig, Registry, Risk};

/// `call`'s arguments over `workspace` as most tests want them: approvals denied, no audit log,
/// no error budget, one call a line, four at a time, the scan on, the sandbox required, results
/// as plain JSON lines. A test sets what it is about: `CallArgs { batch: true, ..call_args(ws) }`.
pub fn call_args(workspace: &std::path::Path) -> CallArgs {
    CallArgs {
        workspace: workspace.to_path_buf(),
        approve: ApproveMode::Deny,
        audit: None,
        audit_key: None,
        error_budget: 0,
        batch: false,
        max_concurrency: 4,
        scan: tool_core::executor::ScanMode::On,
        sandbox: SandboxArg::Required,
        reply: None,
        dialect: None,
        log_level: tool_core::LogLevel::Info,
    }
}

/// A call from a JSON object literal of arguments.
pub fn call(name: &str, args: Value) -> ToolCall {
    let Value::Object(map) = args else {
        panic!("arguments must be an object")
    };
    ToolCall::new(name, map)
}

/// The `#[tool]`s of `module` (the caller's `module_path!()`) as a registry.
pub fn module_registry(module: &'static str) -> Arc<Registry> {
    let registry = Registry::builder()
        .with_inventory_where(move |m| m == module)
        .build()
        .expect("the module's tools");
    Arc::new(registry)
}

/// An executor over the `#[tool]`s of `module` in a fresh temporary workspace (which the caller
/// keeps alive), configured by `config`.
pub fn module_executor(
    module: &'static str,
    config: impl FnOnce(ExecutorConfig) -> ExecutorConfig,
) -> (tempfile::TempDir, Executor) {
    let dir = tempfile::tempdir().expect("tempdir");
    let exec = Executor::new(
        module_registry(module),
        config(ExecutorConfig::new(dir.path())),
    )
    .expect("executor");
    (dir, exec)
}

/// `call` (`run_call_with`, no resources) over the lines of `input`; what it wrote, one JSON value
/// a line.
pub fn call_lines(registry: Arc<Registry>, args: &CallArgs, input: &str) -> Vec<Value> {
    let mut out = Vec::new();
    run_call_with(
        registry,
        &Resources::new(),
        input.as_bytes(),
        &mut out,
        args,
    )
    .expect("call runs");
    json_lines(out)
}

/// What `call` wrote: one JSON value a line.
pub fn json_lines(out: Vec<u8>) -> Vec<Value> {
    String::from_utf8(out)
        .expect("UTF-8")
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON value a line"))
        .collect()
}

/// Whether the kernel offers every part of `needs` (`landlock-v7`, `seccomp`, `userns`, …);
/// if not, says so loudly for `test`.
pub fn kernel_ready(test: &str, needs: &[&str]) -> bool {
    test_support::kernel::ready(test, &tool_core::sandbox::support(), needs)
}

/// A registry of these tools.
pub fn registry(defs: Vec<ToolDef>) -> Arc<Registry> {
    let mut b = Registry::builder();
    for d in defs {
        b = b.tool(d);
    }
    Arc::new(b.build().expect("registry builds"))
}

/// Counts how often a handler body ran.
#[derive(Clone, Default)]
pub struct Runs(Arc<AtomicUsize>);

impl Runs {
    pub fn hit(&self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
    pub fn count(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

fn str_arg<'a>(args: &'a Value, key: &str) -> &'a str {
    args[key].as_str().unwrap_or_default()
}

fn path_schema(props: &[&str], extra: Value) -> Value {
    let mut properties = Map::new();
    for p in props {
        properties.insert((*p).to_owned(), json!({"type": "string", "minLength": 1}));
    }
    if let Value::Object(extra) = extra {
        properties.extend(extra);
    }
    json!({
        "type": "object",
        "properties": properties,
        "required": props,
        "additionalProperties": false
    })
}

/// Real file tools over the guarded paths: read_file, write_file, move_file, delete_file,
/// list_dir. `runs` counts handler bodies that started.
pub fn file_tools(runs: &Runs) -> Vec<ToolDef> {
    let r = runs.clone();
    let read = ToolDef::builder("read_file")
        .description("Read a text file")
        .risk(Risk::ReadOnly)
        .path_args(["path"])
        .input_schema(path_schema(
            &["path"],
            json!({"offset": {"type": "integer", "minimum": 0}, "limit": {"type": "integer", "minimum": 1}}),
        ))
        .handler(move |_ctx, args| {
            r.hit();
            async move {
                let text = std::fs::read_to_string(str_arg(&args, "path")).map_err(|e| e.to_string())?;
                let offset = args["offset"].as_u64().unwrap_or(0) as usize;
                let limit = args["limit"].as_u64().map_or(usize::MAX, |l| l as usize);
                Ok::<String, String>(text.chars().skip(offset).take(limit).collect())
            }
        })
        .build()
        .expect("read_file");
    let r = runs.clone();
    let write = ToolDef::builder("write_file")
        .description("Write a text file")
        .risk(Risk::Mutation)
        .path_args(["path"])
        .input_schema(path_schema(
            &["path"],
            json!({"content": {"type": "string"}}),
        ))
        .handler(move |_ctx, args| {
            r.hit();
            async move {
                std::fs::write(str_arg(&args, "path"), str_arg(&args, "content"))
                    .map_err(|e| e.to_string())
                    .map(|()| "written".to_owned())
            }
        })
        .build()
        .expect("write_file");
    let r = runs.clone();
    let mv = ToolDef::builder("move_file")
        .description("Move a file")
        .risk(Risk::Mutation)
        .path_args(["source", "destination"])
        .input_schema(path_schema(&["source", "destination"], json!({})))
        .handler(move |_ctx, args| {
            r.hit();
            async move {
                std::fs::rename(str_arg(&args, "source"), str_arg(&args, "destination"))
                    .map_err(|e| e.to_string())
                    .map(|()| "moved".to_owned())
            }
        })
        .build()
        .expect("move_file");
    let r = runs.clone();
    let delete = ToolDef::builder("delete_file")
        .description("Delete a file")
        .risk(Risk::Destructive)
        .path_args(["path"])
        .input_schema(path_schema(&["path"], json!({})))
        .handler(move |_ctx, args| {
            r.hit();
            async move {
                std::fs::remove_file(str_arg(&args, "path"))
                    .map_err(|e| e.to_string())
                    .map(|()| "deleted".to_owned())
            }
        })
        .build()
        .expect("delete_file");
    let r = runs.clone();
    let list = ToolDef::builder("list_dir")
        .description("List a directory")
        .risk(Risk::ReadOnly)
        .path_args(["path"])
        .input_schema(path_schema(&["path"], json!({})))
        .handler(move |_ctx, args| {
            r.hit();
            async move {
                let mut names: Vec<String> = std::fs::read_dir(str_arg(&args, "path"))
                    .map_err(|e| e.to_string())?
                    .filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect();
                names.sort();
                Ok::<Value, String>(json!(names))
            }
        })
        .build()
        .expect("list_dir");
    vec![read, write, mv, delete, list]
}

type Decide<'a> = Pin<Box<dyn Future<Output = ApprovalDecision> + Send + 'a>>;

/// Answers from a script (then denies), and remembers every request.
#[derive(Default)]
pub struct ScriptedApprover {
    answers: Mutex<VecDeque<ApprovalDecision>>,
    repeat: Option<ApprovalDecision>,
    seen: Mutex<Vec<ApprovalRequest>>,
}

impl ScriptedApprover {
    /// Give these answers in order, then deny.
    pub fn new(answers: impl IntoIterator<Item = ApprovalDecision>) -> Arc<Self> {
        Arc::new(ScriptedApprover {
            answers: Mutex::new(answers.into_iter().collect()),
            ..Default::default()
        })
    }

    /// Give this answer every time.
    pub fn always(answer: ApprovalDecision) -> Arc<Self> {
        Arc::new(ScriptedApprover {
            repeat: Some(answer),
            ..Default::default()
        })
    }

    /// Every request asked so far.
    pub fn seen(&self) -> Vec<ApprovalRequest> {
        self.seen.lock().expect("lock").clone()
    }
}

impl Approver for ScriptedApprover {
    fn decide<'a>(&'a self, request: &'a ApprovalRequest) -> Decide<'a> {
        self.seen.lock().expect("lock").push(request.clone());
        let answer = self.repeat.clone().unwrap_or_else(|| {
            self.answers
                .lock()
                .expect("lock")
                .pop_front()
                .unwrap_or(ApprovalDecision::Deny {
                    reason: "script exhausted".into(),
                })
        });
        Box::pin(async move { answer })
    }
}
