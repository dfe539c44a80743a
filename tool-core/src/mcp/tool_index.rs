//! The server's view of the backend's tool list: the MCP `Tool` entries, sorted by name, and an
//! index by name for the transport's per-request lookup (`get_tool`, which checks `Mcp-Param-*`
//! headers on every 2026-07-28 `tools/call`). A backend whose list cannot change
//! ([`McpBackend::fixed_tool_list`]) has it built once and shared by every connection.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use rmcp::model::Tool;
use rmcp::ErrorData;
use serde_json::Value;

use super::backend::McpBackend;

/// The tool entries, sorted by name, and where each name is.
#[derive(Debug)]
pub(super) struct ToolIndex {
    tools: Vec<Tool>,
    by_name: HashMap<String, usize>,
}

impl ToolIndex {
    /// The index of `entries`, or why one of them is not an MCP tool.
    fn build(entries: Vec<Value>) -> Result<ToolIndex, String> {
        let mut tools = entries
            .into_iter()
            .map(|v| {
                serde_json::from_value::<Tool>(v)
                    .map_err(|e| format!("a tool entry is not a valid MCP tool: {e}"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        tools.sort_by(|a, b| a.name.cmp(&b.name));
        let by_name = tools
            .iter()
            .enumerate()
            .map(|(i, t)| (t.name.to_string(), i))
            .collect();
        Ok(ToolIndex { tools, by_name })
    }

    /// The entries, sorted by name.
    pub(super) fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// The entry named `name`.
    pub(super) fn get(&self, name: &str) -> Option<&Tool> {
        self.by_name.get(name).map(|&i| &self.tools[i])
    }
}

/// The index of a fixed tool list, built on first use and shared by the server's copies.
#[derive(Debug, Default, Clone)]
pub(super) struct ToolCache(Arc<OnceLock<Result<Arc<ToolIndex>, String>>>);

impl ToolCache {
    /// The backend's tools: built once when its list is fixed, else read anew.
    pub(super) fn index<B: McpBackend>(&self, backend: &B) -> Result<Arc<ToolIndex>, ErrorData> {
        let built = if backend.fixed_tool_list() {
            self.0
                .get_or_init(|| ToolIndex::build(backend.list_tools()).map(Arc::new))
                .clone()
        } else {
            ToolIndex::build(backend.list_tools()).map(Arc::new)
        };
        built.map_err(|e| ErrorData::internal_error(e, None))
    }

    /// The entry named `name`. A list that may change is searched without converting the
    /// other entries.
    pub(super) fn get<B: McpBackend>(&self, backend: &B, name: &str) -> Option<Tool> {
        if backend.fixed_tool_list() {
            return self.index(backend).ok()?.get(name).cloned();
        }
        backend
            .list_tools()
            .into_iter()
            .find(|t| t.get("name").and_then(Value::as_str) == Some(name))
            .and_then(|t| serde_json::from_value(t).ok())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use serde_json::{json, Map};

    use super::*;
    use crate::mcp::{McpCallContext, McpCallOutcome};

    /// A backend that counts how often its list is read and answers the `n`th read (from 0)
    /// with `list(n)`.
    struct Counting {
        fixed: bool,
        list: fn(usize) -> Vec<Value>,
        reads: AtomicUsize,
    }

    impl Counting {
        fn new(fixed: bool, list: fn(usize) -> Vec<Value>) -> Self {
            Counting {
                fixed,
                list,
                reads: AtomicUsize::new(0),
            }
        }
    }

    impl McpBackend for Counting {
        fn list_tools(&self) -> Vec<Value> {
            (self.list)(self.reads.fetch_add(1, Ordering::SeqCst))
        }

        async fn call_tool(
            &self,
            _name: String,
            _args: Map<String, Value>,
            _ctx: McpCallContext,
        ) -> McpCallOutcome {
            McpCallOutcome::UnknownTool
        }

        fn fixed_tool_list(&self) -> bool {
            self.fixed
        }
    }

    /// A list that grows by one tool per read, out of name order.
    fn growing(n: usize) -> Vec<Value> {
        let entry = |name: String| json!({"name": name, "inputSchema": {"type": "object"}});
        let mut list: Vec<Value> = (0..=n).map(|i| entry(format!("t{i}"))).collect();
        list.push(entry("b".to_owned()));
        list.push(entry("a".to_owned()));
        list
    }

    fn names(index: &ToolIndex) -> Vec<String> {
        index.tools().iter().map(|t| t.name.to_string()).collect()
    }

    #[test]
    fn a_fixed_list_is_read_once_and_shared_by_the_copies() {
        let backend = Counting::new(true, growing);
        let cache = ToolCache::default();
        let copy = cache.clone();
        let first = cache.index(&backend).expect("index");
        assert_eq!(names(&first), ["a", "b", "t0"]);
        assert_eq!(copy.get(&backend, "b").map(|t| t.name), Some("b".into()));
        assert!(copy.get(&backend, "t1").is_none());
        assert_eq!(
            names(&copy.index(&backend).expect("index")),
            ["a", "b", "t0"]
        );
        assert_eq!(backend.reads.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_list_that_may_change_is_read_each_time() {
        let backend = Counting::new(false, growing);
        let cache = ToolCache::default();
        assert_eq!(
            names(&cache.index(&backend).expect("index")),
            ["a", "b", "t0"]
        );
        assert_eq!(cache.get(&backend, "t1").map(|t| t.name), Some("t1".into()));
        assert_eq!(
            names(&cache.index(&backend).expect("index")),
            ["a", "b", "t0", "t1", "t2"]
        );
        assert_eq!(backend.reads.load(Ordering::SeqCst), 3);
    }

    #[test]
    fn an_entry_that_is_no_mcp_tool_is_an_internal_error_every_time() {
        let broken = Counting::new(true, |_| vec![json!({"name": 7})]);
        let cache = ToolCache::default();
        for _ in 0..2 {
            let e = cache.index(&broken).expect_err("not a tool");
            assert!(e.message.contains("not a valid MCP tool"), "{}", e.message);
        }
        assert!(cache.get(&broken, "x").is_none());
    }
}
