//! What an application adds to its command line besides tools: the resources its tools take,
//! the approver and argument filters of every command that runs tools, and its own subcommands.

use std::process::ExitCode;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::approval::Approver;
use crate::decl::ToolDecl;
use crate::executor::{ArgumentFilter, ExecutorConfig};
use crate::registry::Registry;
use crate::resource::Resources;

/// Why a program's demo or one of its own subcommands failed; printed on stderr, exit code 1.
pub type DemoError = Box<dyn std::error::Error + Send + Sync>;

/// An application subcommand's handler: the registry and the subcommand's own matches.
pub type SubcommandFn =
    Arc<dyn Fn(&Registry, &clap::ArgMatches) -> Result<ExitCode, DemoError> + Send + Sync>;

/// A subcommand the application adds: its clap definition and its handler.
#[derive(Clone)]
pub(super) struct AppCommand {
    pub(super) command: clap::Command,
    pub(super) run: SubcommandFn,
}

/// The application's parts of the executor configuration and command line.
#[derive(Clone, Default)]
pub(crate) struct AppParts {
    pub(crate) resources: Resources,
    pub(crate) approver: Option<Arc<dyn Approver>>,
    pub(crate) filters: Vec<ArgumentFilter>,
    pub(super) commands: Vec<AppCommand>,
}

impl std::fmt::Debug for AppParts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppParts")
            .field("resources", &self.resources)
            .field("approver", &self.approver.is_some())
            .field("filters", &self.filters.len())
            .field(
                "commands",
                &self
                    .commands
                    .iter()
                    .map(|c| c.command.get_name())
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl AppParts {
    /// `config` with the application's resources, argument filters (after any already set) and
    /// approver (when it supplied one).
    pub(crate) fn configure(&self, mut config: ExecutorConfig) -> ExecutorConfig {
        config = config.resources(&self.resources);
        for filter in &self.filters {
            let filter = filter.clone();
            config =
                config.argument_filter(move |decl: &ToolDecl, args: &mut Map<String, Value>| {
                    filter(decl, args)
                });
        }
        if let Some(approver) = &self.approver {
            config = config.approver(approver.clone());
        }
        config
    }
}
