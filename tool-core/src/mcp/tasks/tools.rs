//! Which tools are served as tasks, and how ([`TaskTools`]).

use std::collections::BTreeMap;

/// How a tool takes part in the tasks extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TaskSupport {
    /// A task when the request declares the extension; a plain call otherwise.
    Optional,
    /// Only as a task: a request that does not declare the extension is refused (`-32021`).
    Required,
}

/// The tools served as tasks, by name.
#[derive(Debug, Clone, Default)]
pub struct TaskTools {
    /// Name → support, and whether its first questions come before the task.
    tools: BTreeMap<String, (TaskSupport, bool)>,
}

impl TaskTools {
    /// No tool yet.
    pub fn new() -> Self {
        TaskTools::default()
    }

    /// Serve tool `name` as a task, as `support` says.
    pub fn with_tool(mut self, name: impl Into<String>, support: TaskSupport) -> Self {
        self.tools.insert(name.into(), (support, false));
        self
    }

    /// Serve tool `name` as a task, as `support` says, once it has the answers it asks for
    /// first: over a stateless request its first round of questions travels in input-required
    /// results (with a signed `requestState`, as for any call), and the retry that answers them
    /// all becomes the task. Questions the tool asks after that park the task as usual; a tool
    /// that asks nothing becomes a task at once.
    pub fn with_tool_asking_first(mut self, name: impl Into<String>, support: TaskSupport) -> Self {
        self.tools.insert(name.into(), (support, true));
        self
    }

    /// `true` when no tool is served as a task (the extension is then not offered).
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// How tool `name` takes part, if it does.
    pub fn support(&self, name: &str) -> Option<TaskSupport> {
        self.tools.get(name).map(|(s, _)| *s)
    }

    /// `true` when tool `name` asks its first questions before it becomes a task.
    pub fn asks_first(&self, name: &str) -> bool {
        self.tools.get(name).is_some_and(|(_, first)| *first)
    }

    /// The declared tool names.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tools.keys().map(String::as_str)
    }
}
