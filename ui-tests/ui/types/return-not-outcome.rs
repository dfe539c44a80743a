use std::collections::BTreeMap;
use tool_core::tool;

/// Count each word.
#[tool(risk = "safe")]
fn words(text: String) -> BTreeMap<String, u32> {
    let mut counts = BTreeMap::new();
    for w in text.split(' ') {
        *counts.entry(w.to_owned()).or_insert(0) += 1;
    }
    counts
}

fn main() {}

/// Count the words.
#[tool(risk = "safe")]
async fn count(text: String) -> Option<usize> {
    Some(text.split(' ').count())
}
