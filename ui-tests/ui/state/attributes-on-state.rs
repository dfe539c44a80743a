use tool_core::{tool, State};

pub struct Db;

/// Look something up.
#[tool(risk = "read_only", path_args = ["db"])]
fn lookup(#[arg(default = Db)] db: State<Db>, #[schemars(length(max = 3))] key: String) -> String {
    key
}

fn main() {}
