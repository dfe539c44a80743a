//! The helper that confines programs spawned by tools; started by `tool_sandbox::SandboxedCommand`.

fn main() {
    match tool_sandbox::helper::dispatch() {
        Some(code) => std::process::exit(code),
        None => {
            eprintln!(
                "tool-sandbox-exec: started by tool-sandbox to confine a program; not for use by hand"
            );
            std::process::exit(tool_sandbox::helper::SETUP_FAILED);
        }
    }
}
