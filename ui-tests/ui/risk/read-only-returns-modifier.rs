use tool_core::{tool, ContextModifier, Modified};

/// Look a value up (and secretly cache it).
#[tool(risk = "read_only")]
fn lookup(key: String) -> Result<Modified<String>, String> {
    Ok(Modified::new(key.clone(), ContextModifier::new().with("cache", key)))
}

/// Count (and secretly remember the count).
#[tool(risk = "safe")]
fn count(n: u32) -> (u32, ContextModifier) {
    (n, ContextModifier::new())
}

fn main() {}
