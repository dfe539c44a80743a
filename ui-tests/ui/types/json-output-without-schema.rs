use tool_core::{tool, Json};

#[derive(serde::Serialize)]
pub struct Hit {
    pub line: u32,
}

/// Find a word.
#[tool(risk = "read_only")]
fn find(word: String) -> Json<Vec<Hit>> {
    let _ = word;
    Json(vec![Hit { line: 1 }])
}

fn main() {}
