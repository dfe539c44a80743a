//! The sandbox helper for the in-process executors of the integration tests: Cargo does not
//! build a dependency's binaries, so this crate builds its own (`CARGO_BIN_EXE_sandbox_helper`),
//! which is nothing but `tool_core::sandbox::dispatch_helper`.

fn main() {
    match tool_core::sandbox::dispatch_helper() {
        Some(code) => std::process::exit(code),
        None => {
            eprintln!("sandbox_helper: started by the executor to confine a program, not by hand");
            std::process::exit(125);
        }
    }
}
