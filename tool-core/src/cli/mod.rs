//! The command line every tool program gets: `fn main() { tool_core::cli::run() }`.
//!
//! Commands: `list`, `doctor`, `dump`, `pin`, `verify`, `call`, `verify-audit`, and `demo` when the program registers one
//! ([`Cli::demo`]; absent otherwise); `serve` and `proxy` with the `mcp` feature; `scan` (and `run_scan`) with
//! the `safety` feature. With `safety`, every command that runs tools uses the scanner as the
//! script gate; without it, a registry with tools that take scripts is refused when the command
//! starts (unless `--scan off`).

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand};

use crate::approval::Approver;
use crate::decl::ToolDecl;
use crate::registry::{Registry, RegistryError};

pub use app::{DemoError, SubcommandFn};
/// The clap version the command line is built with, for [`Cli::subcommand`].
pub use clap;

mod app;
pub mod call;
mod doctor;
mod dump;
mod list;
mod pin;
#[cfg(feature = "safety")]
mod scan;
#[cfg(feature = "mcp")]
mod serve;
mod shared;
mod verify_audit;

use shared::CliError;

/// Declared, guarded tools: list, dump, call, scan, pin, verify, verify-audit, serve.
#[derive(Debug, Parser)]
#[command(about, long_about = None)]
struct Args {
    #[command(subcommand)]
    command: Command,
}

/// Arguments of `demo`, handed to the program's demo function.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct DemoArgs {
    /// Answer the approval prompts yourself instead of the script.
    #[arg(long)]
    pub interactive: bool,
    /// Run in this (existing, preferably empty) directory instead of a fresh temporary one.
    #[arg(long)]
    pub workspace: Option<std::path::PathBuf>,
}

/// A program's `demo` command: a scripted session over the registry.
pub type DemoFn = fn(&Registry, &DemoArgs) -> Result<ExitCode, DemoError>;

/// An application's command line: the built-in commands, under the application's name and
/// version, with the resources its tools take, plus what the application adds: an approver and
/// argument filters for every command that runs tools, and subcommands of its own.
///
/// [`cli!`](crate::cli!) starts one named after the calling crate (`CARGO_PKG_NAME`,
/// `CARGO_PKG_VERSION`); [`Cli::new`] names it after the program file, without a version.
///
/// ```no_run
/// # use std::process::ExitCode;
/// # use tool_core::cli::{DemoArgs, DemoError};
/// # use tool_core::Registry;
/// # #[derive(Clone)]
/// # struct Db;
/// fn demo(_registry: &Registry, _args: &DemoArgs) -> Result<ExitCode, DemoError> {
///     Ok(ExitCode::SUCCESS)
/// }
///
/// fn main() {
///     tool_core::cli!().resource(Db).demo(demo).run()
/// }
/// ```
#[derive(Debug, Clone, Default)]
pub struct Cli {
    name: Option<String>,
    version: Option<String>,
    about: Option<String>,
    demo: Option<DemoFn>,
    app: app::AppParts,
}

/// A [`Cli`] named after the calling crate: `Cli::new().name(env!("CARGO_PKG_NAME"))
/// .version(env!("CARGO_PKG_VERSION"))`, plus its `CARGO_PKG_DESCRIPTION` when it has one.
#[macro_export]
macro_rules! cli {
    () => {
        $crate::cli::Cli::new()
            .name(::core::env!("CARGO_PKG_NAME"))
            .version(::core::env!("CARGO_PKG_VERSION"))
            .about(::core::env!("CARGO_PKG_DESCRIPTION"))
    };
}

impl Cli {
    /// The built-in commands only, named after the program file; no `demo` command.
    pub fn new() -> Self {
        Cli::default()
    }

    /// The name `--help`, `--version` and MCP `serverInfo` give.
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// The version `--version` and MCP `serverInfo` give (without one, there is no `--version`).
    pub fn version(mut self, version: impl Into<String>) -> Self {
        self.version = Some(version.into());
        self
    }

    /// The one-line description `--help` gives (an empty one is ignored).
    pub fn about(mut self, about: impl Into<String>) -> Self {
        let about = about.into();
        self.about = (!about.trim().is_empty()).then_some(about);
        self
    }

    /// Add a `demo` command that runs `demo`.
    pub fn demo(mut self, demo: DemoFn) -> Self {
        self.demo = Some(demo);
        self
    }

    /// Register a resource the tools' `State<T>` parameters take (see [`crate::resource`]),
    /// for every command that runs tools (`call`, `serve`).
    pub fn resource<T: Clone + Send + Sync + 'static>(mut self, value: T) -> Self {
        self.app.resources.insert(value);
        self
    }

    /// Ask this approver about calls that need approval, in every command that runs tools
    /// (`call`, `serve`, `proxy`), instead of refusing them. `call --approve allow` or
    /// `--approve prompt` still replaces it for one run; `--approve deny`, the default, keeps it.
    pub fn approver(mut self, approver: Arc<dyn Approver>) -> Self {
        self.app.approver = Some(approver);
        self
    }

    /// Add an argument transform to every command that runs tools, as
    /// [`ExecutorConfig::argument_filter`](crate::ExecutorConfig::argument_filter) (run in the
    /// order added; `Err(reason)` refuses the call with `invalid_arguments`).
    pub fn argument_filter<F>(mut self, f: F) -> Self
    where
        F: Fn(&ToolDecl, &mut serde_json::Map<String, serde_json::Value>) -> Result<(), String>
            + Send
            + Sync
            + 'static,
    {
        self.app.filters.push(Arc::new(f));
        self
    }

    /// Add a subcommand of the application's own: `command` is its clap definition (its name
    /// must differ from the built-in commands'; a clash is refused when the command line
    /// starts), `run` gets the registry and the subcommand's matches. Its error is printed on
    /// stderr with exit code 1.
    ///
    /// ```
    /// use std::process::ExitCode;
    /// use tool_core::cli::{clap, Cli};
    ///
    /// let cli = Cli::new().subcommand(
    ///     clap::Command::new("count").about("Print how many tools there are"),
    ///     |registry, _matches| {
    ///         println!("{}", registry.len());
    ///         Ok(ExitCode::SUCCESS)
    ///     },
    /// );
    /// # let registry = tool_core::Registry::builder().build().unwrap();
    /// assert_eq!(cli.run_with(&registry, ["prog", "count"]), ExitCode::SUCCESS);
    /// ```
    pub fn subcommand<F>(mut self, command: clap::Command, run: F) -> Self
    where
        F: Fn(&Registry, &clap::ArgMatches) -> Result<ExitCode, DemoError> + Send + Sync + 'static,
    {
        self.app.commands.push(app::AppCommand {
            command,
            run: Arc::new(run),
        });
        self
    }

    /// Register a resource with what the tools that take it need from the kernel sandbox
    /// (see [`crate::sandbox::Grants`] and
    /// [`ExecutorConfig::resource_with_grants`](crate::ExecutorConfig::resource_with_grants)).
    pub fn resource_with_grants<T: Clone + Send + Sync + 'static>(
        mut self,
        value: T,
        grants: crate::sandbox::Grants,
    ) -> Self {
        self.app.resources.insert_with_grants(value, grants);
        self
    }

    /// Run the command line over every `#[tool]` linked into the program, then exit the process.
    ///
    /// Commands that never look at the registry (`scan`, `proxy`, `verify-audit`) run without building it, so a
    /// one-shot scan does not pay for compiling every tool's validator.
    ///
    /// First of all it runs the sandbox helper if the program was started as one
    /// ([`crate::sandbox::dispatch_helper`]): the program is its own helper, so spawned programs
    /// are confined without a separate binary.
    ///
    /// Under the application's own runtime (a `#[tokio::main]`), the commands run on a thread of
    /// their own, where they start the runtime they need.
    pub fn run(&self) -> ! {
        if let Some(code) = crate::sandbox::dispatch_helper() {
            std::process::exit(code);
        }
        let code = off_runtime(|| self.run_here());
        std::process::exit(exit_code_number(code));
    }

    fn run_here(&self) -> ExitCode {
        match self.parse(std::env::args_os()) {
            Err(code) => code,
            Ok(command) if !command.needs_registry() => finish(self.dispatch(None, command)),
            Ok(command) => match Registry::from_inventory() {
                Ok(registry) => finish(self.dispatch(Some(&registry), command)),
                Err(e @ RegistryError::NoToolsLinked) => {
                    eprintln!("error: {e}");
                    ExitCode::from(1)
                }
                Err(e) => {
                    eprintln!("error: the tool registry is invalid: {e}");
                    ExitCode::from(1)
                }
            },
        }
    }

    /// Run the command line over `registry` with these arguments (the first is the program name).
    pub fn run_with<I, T>(&self, registry: &Registry, args: I) -> ExitCode
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        let args: Vec<std::ffi::OsString> = args.into_iter().map(Into::into).collect();
        off_runtime(|| match self.parse(args) {
            Ok(command) => finish(self.dispatch(Some(registry), command)),
            Err(code) => code,
        })
    }

    /// The clap command: the built-in commands under the application's name, `demo` when one is
    /// registered.
    fn command(&self, program: Option<&std::ffi::OsStr>) -> clap::Command {
        let mut cmd = <Args as clap::CommandFactory>::command();
        let name = self.name.clone().or_else(|| {
            program
                .map(std::path::Path::new)
                .and_then(std::path::Path::file_stem)
                .map(|s| s.to_string_lossy().into_owned())
        });
        if let Some(name) = name {
            cmd = cmd.name(name);
        }
        cmd = match &self.version {
            Some(v) => cmd.version(v.clone()),
            None => cmd.disable_version_flag(true),
        };
        if let Some(about) = &self.about {
            cmd = cmd.about(about.clone());
        }
        if self.demo.is_some() {
            let demo = clap::Command::new("demo").about(
                "Run the program's scripted agent session through the executor in a fresh temporary workspace",
            );
            cmd = cmd.subcommand(<DemoArgs as clap::Args>::augment_args(demo));
        }
        for extra in &self.app.commands {
            cmd = cmd.subcommand(extra.command.clone());
        }
        cmd
    }

    /// The first application subcommand whose name is already taken (by a built-in command,
    /// `demo` or an earlier one of its own).
    fn clashing_subcommand(&self) -> Option<String> {
        let mut taken: Vec<String> = <Args as clap::CommandFactory>::command()
            .get_subcommands()
            .map(|c| c.get_name().to_owned())
            .chain(self.demo.is_some().then(|| "demo".to_owned()))
            .chain(["help".to_owned()])
            .collect();
        for extra in &self.app.commands {
            let name = extra.command.get_name().to_owned();
            if taken.contains(&name) {
                return Some(name);
            }
            taken.push(name);
        }
        None
    }

    /// Parse the arguments; on failure (or `--help`/`--version`) print clap's text and return
    /// the exit code.
    fn parse<I, T>(&self, args: I) -> Result<Parsed, ExitCode>
    where
        I: IntoIterator<Item = T>,
        T: Into<std::ffi::OsString> + Clone,
    {
        let args: Vec<std::ffi::OsString> = args.into_iter().map(Into::into).collect();
        if let Some(name) = self.clashing_subcommand() {
            eprintln!(
                "error: the application's subcommand `{name}` has the name of another command"
            );
            return Err(ExitCode::from(1));
        }
        let report = |e: clap::Error| {
            let _ = e.print();
            if e.use_stderr() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            }
        };
        let matches = self
            .command(args.first().map(std::ffi::OsString::as_os_str))
            .try_get_matches_from(args)
            .map_err(report)?;
        if let Some(("demo", sub)) = matches.subcommand() {
            let demo = <DemoArgs as clap::FromArgMatches>::from_arg_matches(sub).map_err(report)?;
            return Ok(Parsed::Demo(demo));
        }
        if let Some((name, sub)) = matches.subcommand() {
            if let Some(i) = self
                .app
                .commands
                .iter()
                .position(|c| c.command.get_name() == name)
            {
                return Ok(Parsed::App(i, sub.clone()));
            }
        }
        <Args as clap::FromArgMatches>::from_arg_matches(&matches)
            .map(|a| Parsed::Builtin(a.command))
            .map_err(report)
    }

    /// The `serverInfo` MCP `serve` announces: the application's name and version.
    #[cfg(feature = "mcp")]
    fn server_info(&self) -> crate::mcp::ServerInfo {
        let default = crate::mcp::ServerInfo::default();
        crate::mcp::ServerInfo::new(
            self.name.clone().unwrap_or(default.name),
            self.version.clone().unwrap_or(default.version),
        )
    }

    /// Run one command. `registry` is `None` only for commands that do not need it.
    fn dispatch(&self, registry: Option<&Registry>, command: Parsed) -> Result<ExitCode, CliError> {
        let registry =
            || registry.ok_or_else(|| CliError("this command needs the tool registry".into()));
        let command = match command {
            Parsed::Demo(args) => {
                return match self.demo {
                    Some(demo) => demo(registry()?, &args).map_err(|e| CliError(e.to_string())),
                    None => Err(CliError("this program registers no demo".into())),
                }
            }
            Parsed::App(i, matches) => {
                let run = &self.app.commands[i].run;
                return run(registry()?, &matches).map_err(|e| CliError(e.to_string()));
            }
            Parsed::Builtin(command) => command,
        };
        match command {
            Command::List => list::run(registry()?),
            Command::Doctor => doctor::run(registry()?, &self.app.resources),
            Command::Dump(args) => dump::run(registry().ok(), &args),
            Command::Pin(args) => pin::run_pin(registry()?, &args),
            Command::Verify(args) => pin::run_verify(registry()?, &args),
            Command::Call(args) => call::run(registry()?, &self.app, &args),
            Command::VerifyAudit(args) => verify_audit::run(&args),
            #[cfg(feature = "mcp")]
            Command::Serve(args) => {
                serve::run_serve(registry()?, &self.app, self.server_info(), &args)
            }
            #[cfg(feature = "mcp")]
            Command::Proxy(args) => serve::run_proxy(&self.app, &args),
            #[cfg(feature = "safety")]
            Command::Scan(args) => scan::run(&args),
        }
    }
}

/// A parsed command line: a built-in command, the application's `demo`, or one of its own
/// subcommands (by index, with its matches).
#[derive(Debug)]
enum Parsed {
    Builtin(Command),
    Demo(DemoArgs),
    App(usize, clap::ArgMatches),
}

impl Parsed {
    /// Whether the command reads the tool registry.
    fn needs_registry(&self) -> bool {
        match self {
            Parsed::Demo(_) | Parsed::App(..) => true,
            Parsed::Builtin(c) => c.needs_registry(),
        }
    }
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List the registered tools: name, risk, flags.
    List,
    /// Say what kernel confinement this machine offers (Landlock, seccomp, namespaces) and what
    /// the executor makes of it.
    Doctor,
    /// Print the tool schemas in a provider's format.
    Dump(dump::DumpArgs),
    /// Write the canonical dump and its SHA-256 into a directory.
    Pin(pin::PinArgs),
    /// Check that the registry still matches the pinned dump and hash.
    Verify(pin::PinArgs),
    /// Run calls read from stdin (one per line) through the executor; one JSON result per line.
    Call(call::CallArgs),
    /// Check the hash chain of an audit log and name the first broken line.
    VerifyAudit(verify_audit::VerifyAuditArgs),
    /// Serve the tools over MCP (stdio or streamable HTTP).
    #[cfg(feature = "mcp")]
    Serve(serve::ServeArgs),
    /// Start a third-party MCP server and serve its tools through our checks, over stdio or
    /// streamable HTTP.
    #[cfg(feature = "mcp")]
    Proxy(serve::ProxyArgs),
    /// Scan a bash or Python script and print the safety report as JSON.
    #[cfg(feature = "safety")]
    Scan(scan::ScanArgs),
}

/// `f` on this thread, or, when this thread drives a tokio runtime (the application's
/// `#[tokio::main]`), on a thread of its own: the commands start their own runtime, which cannot
/// start inside another. A panic there ends the command with exit code 101, as it would here.
fn off_runtime(f: impl FnOnce() -> ExitCode + Send) -> ExitCode {
    if tokio::runtime::Handle::try_current().is_err() {
        return f();
    }
    std::thread::scope(|s| s.spawn(f).join()).unwrap_or_else(|_| ExitCode::from(101))
}

/// Run the CLI over every `#[tool]` linked into the program, then exit the process
/// (`Cli::new().run()`: no demo).
pub fn run() -> ! {
    Cli::new().run()
}

fn exit_code_number(code: ExitCode) -> i32 {
    if code == ExitCode::SUCCESS {
        0
    } else if code == ExitCode::from(2) {
        2
    } else {
        1
    }
}

/// Run the CLI over `registry` with these arguments (the first is the program name); no demo.
pub fn run_with<I, T>(registry: &Registry, args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    Cli::new().run_with(registry, args)
}

#[cfg(feature = "safety")]
fn parse_as<P: Parser, I, T>(args: I) -> Result<P, ExitCode>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    P::try_parse_from(args).map_err(|e| {
        let _ = e.print();
        if e.use_stderr() {
            ExitCode::from(2)
        } else {
            ExitCode::SUCCESS
        }
    })
}

/// Scan a bash or Python script and print the safety report as JSON (the `scan` command alone).
#[cfg(feature = "safety")]
#[derive(Debug, Parser)]
#[command(version, about, long_about = None)]
struct ScanOnly {
    #[command(flatten)]
    args: scan::ScanArgs,
}

/// A program that only scans: `fn main() { tool_core::cli::run_scan() }` takes the arguments of
/// `scan` and prints the same output, then exits. Nothing but the scanner is linked in, so a
/// one-shot scan starts faster than through the full command line. Needs the `safety` feature.
/// The workspace's `tool-scan` program is this command without `tool-core` (crate `tool-scan`).
#[cfg(feature = "safety")]
#[cfg_attr(docsrs, doc(cfg(feature = "safety")))]
pub fn run_scan() -> ! {
    let code = match parse_as::<ScanOnly, _, _>(std::env::args_os()) {
        Ok(cli) => finish(scan::run(&cli.args)),
        Err(code) => code,
    };
    std::process::exit(exit_code_number(code));
}

impl Command {
    /// Whether the command reads the tool registry.
    fn needs_registry(&self) -> bool {
        match self {
            #[cfg(feature = "safety")]
            Command::Scan(_) => false,
            #[cfg(feature = "mcp")]
            Command::Proxy(_) => false,
            Command::VerifyAudit(_) => false,
            Command::Dump(args) => args.needs_registry(),
            _ => true,
        }
    }
}

/// Print a command's error on stderr and turn the result into the exit code.
fn finish(result: Result<ExitCode, CliError>) -> ExitCode {
    match result {
        Ok(code) => code,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "error: {e}");
            ExitCode::from(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn empty() -> Registry {
        Registry::builder()
            .build()
            .expect("an empty registry is valid")
    }

    #[test]
    fn demo_is_not_a_command_without_a_registered_demo() {
        // clap's usage error: `demo` is an unknown subcommand.
        let code = run_with(&empty(), ["prog", "demo"]);
        assert_eq!(code, ExitCode::from(2));
        let help = Cli::new().command(None).render_help().to_string();
        assert!(!help.contains("demo"), "{help}");
        fn demo(_: &Registry, _: &DemoArgs) -> Result<ExitCode, DemoError> {
            Ok(ExitCode::SUCCESS)
        }
        let help = Cli::new()
            .demo(demo)
            .command(None)
            .render_help()
            .to_string();
        assert!(help.contains("demo"), "{help}");
    }

    #[test]
    fn the_command_line_is_named_after_the_application() {
        let cli = crate::cli!();
        let cmd = cli.command(Some("/usr/bin/whatever".as_ref()));
        assert_eq!(cmd.get_name(), "tool-core");
        assert_eq!(cmd.get_version(), Some(env!("CARGO_PKG_VERSION")));
        let cmd = Cli::new()
            .name("myapp")
            .version("9.8.7")
            .about("My application's tools.")
            .command(None);
        assert_eq!(cmd.get_name(), "myapp");
        assert_eq!(cmd.render_version().trim(), "myapp 9.8.7");
        assert!(cmd
            .clone()
            .render_help()
            .to_string()
            .contains("My application's tools."));
        // Without a name: the program file's; without a version: no `--version`.
        let cmd = Cli::new().command(Some("/opt/bin/agent-tools".as_ref()));
        assert_eq!(cmd.get_name(), "agent-tools");
        assert_eq!(
            Cli::new().run_with(&empty(), ["prog", "--version"]),
            ExitCode::from(2)
        );
    }

    #[test]
    fn application_subcommands_run_and_may_not_take_a_built_in_name() {
        let cli = Cli::new().subcommand(
            clap::Command::new("count").arg(clap::Arg::new("n").long("n")),
            |registry, m| {
                let n: &String = m.get_one("n").ok_or("no --n")?;
                Ok(ExitCode::from(registry.len() as u8 + n.parse::<u8>()?))
            },
        );
        assert_eq!(
            cli.run_with(&empty(), ["prog", "count", "--n", "4"]),
            ExitCode::from(4)
        );
        assert_eq!(cli.run_with(&empty(), ["prog", "count"]), ExitCode::from(1));
        let help = cli.command(None).render_help().to_string();
        assert!(help.contains("count"), "{help}");
        for taken in ["list", "call", "help"] {
            let clash =
                Cli::new().subcommand(clap::Command::new(taken), |_, _| Ok(ExitCode::SUCCESS));
            assert_eq!(
                clash.run_with(&empty(), ["prog", "list"]),
                ExitCode::from(1),
                "{taken}"
            );
        }
    }

    #[test]
    fn demo_runs_the_registered_function_with_its_flags() {
        fn demo(_: &Registry, args: &DemoArgs) -> Result<ExitCode, DemoError> {
            if args.interactive {
                Ok(ExitCode::from(7))
            } else {
                Err("not interactive".into())
            }
        }
        let cli = Cli::new().demo(demo);
        assert_eq!(
            cli.run_with(&empty(), ["prog", "demo", "--interactive"]),
            ExitCode::from(7)
        );
        assert_eq!(cli.run_with(&empty(), ["prog", "demo"]), ExitCode::from(1));
    }
}
