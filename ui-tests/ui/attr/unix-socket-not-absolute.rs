use tool_core::tool;

/// Query the database.
#[tool(risk = "read_only", unix_sockets = ["run/db.sock", "/run/../etc/x.sock"])]
fn query() {}

fn main() {}
