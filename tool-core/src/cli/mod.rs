//! The command line every tool program gets: `fn main() { tool_core::cli::run() }`.

use std::io::Write;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::registry::Registry;

pub mod call;
mod demo;
mod dump;
mod list;
mod pin;
mod scan;
#[cfg(feature = "mcp")]
mod serve;
mod shared;

use shared::CliError;

/// Declared, guarded tools: list, dump, call, scan, pin, verify, serve, demo.
#[derive(Debug, Parser)]
#[command(version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List the registered tools: name, risk, flags.
    List,
    /// Run a scripted agent session through the executor in a fresh temporary workspace.
    Demo(demo::DemoArgs),
    /// Print the tool schemas in a provider's format.
    Dump(dump::DumpArgs),
    /// Write the canonical dump and its SHA-256 into a directory.
    Pin(pin::PinArgs),
    /// Check that the registry still matches the pinned dump and hash.
    Verify(pin::PinArgs),
    /// Run calls read from stdin (one per line) through the executor; one JSON result per line.
    Call(call::CallArgs),
    /// Serve the tools over MCP (stdio or streamable HTTP).
    #[cfg(feature = "mcp")]
    Serve(serve::ServeArgs),
    /// Start a third-party MCP server and serve its tools through our checks, over stdio.
    #[cfg(feature = "mcp")]
    Proxy(serve::ProxyArgs),
    /// Scan a bash or Python script and print the safety report as JSON.
    Scan(scan::ScanArgs),
}

/// Run the CLI over every `#[tool]` linked into the program, then exit the process.
///
/// Commands that never look at the registry (`scan`, `proxy`) run without building it, so a
/// one-shot scan does not pay for compiling every tool's validator.
pub fn run() -> ! {
    let code = match parse(std::env::args_os()) {
        Err(code) => code,
        Ok(command) if !command.needs_registry() => finish(dispatch(None, command)),
        Ok(command) => match Registry::from_inventory() {
            Ok(registry) => finish(dispatch(Some(&registry), command)),
            Err(e) => {
                eprintln!("error: the tool registry is invalid: {e}");
                ExitCode::from(1)
            }
        },
    };
    std::process::exit(exit_code_number(code));
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

/// Run the CLI over `registry` with these arguments (the first is the program name).
pub fn run_with<I, T>(registry: &Registry, args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    match parse(args) {
        Ok(command) => finish(dispatch(Some(registry), command)),
        Err(code) => code,
    }
}

/// Parse the arguments; on failure (or `--help`/`--version`) print clap's text and return the
/// exit code.
fn parse<I, T>(args: I) -> Result<Command, ExitCode>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    parse_as::<Cli, _, _>(args).map(|cli| cli.command)
}

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
#[derive(Debug, Parser)]
#[command(version, about, long_about = None)]
struct ScanOnly {
    #[command(flatten)]
    args: scan::ScanArgs,
}

/// A program that only scans: `fn main() { tool_core::cli::run_scan() }` takes the arguments of
/// `scan` and prints the same output, then exits. Nothing but the scanner is linked in, so a
/// one-shot scan starts faster than through the full command line.
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
            Command::Scan(_) => false,
            #[cfg(feature = "mcp")]
            Command::Proxy(_) => false,
            _ => true,
        }
    }
}

/// Run one command. `registry` is `None` only for commands that do not need it.
fn dispatch(registry: Option<&Registry>, command: Command) -> Result<ExitCode, CliError> {
    let registry =
        || registry.ok_or_else(|| CliError("this command needs the tool registry".into()));
    match command {
        Command::List => list::run(registry()?),
        Command::Demo(args) => demo::run(registry()?, &args),
        Command::Dump(args) => dump::run(registry()?, &args),
        Command::Pin(args) => pin::run_pin(registry()?, &args),
        Command::Verify(args) => pin::run_verify(registry()?, &args),
        Command::Call(args) => call::run(registry()?, &args),
        #[cfg(feature = "mcp")]
        Command::Serve(args) => serve::run_serve(registry()?, &args),
        #[cfg(feature = "mcp")]
        Command::Proxy(args) => serve::run_proxy(&args),
        Command::Scan(args) => scan::run(&args),
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
