use tool_core::{tool, State};

pub struct Db;

/// Look something up.
#[tool(risk = "read_only")]
fn lookup(db: &State<Db>, key: String) -> String {
    key
}

fn main() {}
