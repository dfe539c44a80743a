use tool_core::tool;

/// List the words.
#[tool(risk = "safe")]
fn words(text: String) -> Vec<String> {
    text.split(' ').map(str::to_owned).collect()
}

fn main() {}

/// Count the words.
#[tool(risk = "safe")]
async fn count(text: String) -> Option<usize> {
    Some(text.split(' ').count())
}
