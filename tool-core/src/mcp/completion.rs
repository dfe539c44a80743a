//! `completion/complete`: suggestions for a prompt argument or a resource template variable,
//! from a [`Completer`] the application attaches to the argument or variable.
//!
//! The server asks the completer of the referenced prompt argument (see
//! [`PromptArgument::with_completer`](super::prompts::PromptArgument::with_completer)) or
//! template variable (see
//! [`ResourceTemplate::with_completer`](super::resources::ResourceTemplate::with_completer)) and
//! answers at most [`MAX_COMPLETION_VALUES`] values, with the total and `hasMore` when there
//! were more. An unknown prompt, template or argument is a JSON-RPC `-32602` error; an argument
//! without a completer gets no suggestions.

use std::collections::BTreeMap;
use std::sync::Arc;

/// The most values one `completion/complete` answer carries (the MCP limit).
pub const MAX_COMPLETION_VALUES: usize = 100;

/// The longest partial value a completer is asked about; a longer one gets no suggestions.
pub const MAX_COMPLETION_INPUT: usize = 4096;

/// What a completer is asked: the argument (or template variable), what the user typed so far,
/// and the values already given for the other arguments of the same prompt or template.
#[derive(Debug, Clone, Copy)]
pub struct CompletionRequest<'a> {
    /// The argument or variable name.
    pub argument: &'a str,
    /// The partial value.
    pub value: &'a str,
    /// The other arguments' values (`context.arguments`), as the client sent them.
    pub context: &'a BTreeMap<String, String>,
}

type CompleteFn = dyn Fn(&CompletionRequest<'_>) -> Vec<String> + Send + Sync;

/// Suggests values for one argument. Cheap to clone.
#[derive(Clone)]
pub struct Completer {
    complete: Arc<CompleteFn>,
}

impl std::fmt::Debug for Completer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Completer").finish_non_exhaustive()
    }
}

impl Completer {
    /// A completer computed by `f`, best match first.
    pub fn new(f: impl Fn(&CompletionRequest<'_>) -> Vec<String> + Send + Sync + 'static) -> Self {
        Completer {
            complete: Arc::new(f),
        }
    }

    /// The values of this fixed list that start with what the user typed, in list order.
    pub fn from_values<I, S>(values: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let values: Vec<String> = values.into_iter().map(Into::into).collect();
        Completer::new(move |req| {
            values
                .iter()
                .filter(|v| v.starts_with(req.value))
                .cloned()
                .collect()
        })
    }

    /// The suggestions for `req`.
    pub fn complete(&self, req: &CompletionRequest<'_>) -> Vec<String> {
        (self.complete)(req)
    }
}

/// What `completion/complete` answers: the first [`MAX_COMPLETION_VALUES`] suggestions, how many
/// there were, and whether some were left out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    /// The values sent.
    pub values: Vec<String>,
    /// How many values the completer gave.
    pub total: usize,
    /// `true` when values were left out.
    pub has_more: bool,
}

/// Ask `completer` (if any) about `req`, capped at [`MAX_COMPLETION_VALUES`] values.
pub fn run(completer: Option<&Completer>, req: &CompletionRequest<'_>) -> Completion {
    let all = match completer {
        Some(c) if req.value.len() <= MAX_COMPLETION_INPUT => c.complete(req),
        _ => Vec::new(),
    };
    let total = all.len();
    let values: Vec<String> = all.into_iter().take(MAX_COMPLETION_VALUES).collect();
    Completion {
        has_more: total > values.len(),
        values,
        total,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_lists_filter_by_prefix_and_long_lists_are_capped() {
        let ctx = BTreeMap::new();
        let c = Completer::from_values(["paris", "park", "party", "rome"]);
        let req = CompletionRequest {
            argument: "city",
            value: "par",
            context: &ctx,
        };
        let got = run(Some(&c), &req);
        assert_eq!(got.values, ["paris", "park", "party"]);
        assert_eq!((got.total, got.has_more), (3, false));

        let many = Completer::new(|_| (0..250).map(|i| i.to_string()).collect());
        let got = run(Some(&many), &req);
        assert_eq!(got.values.len(), MAX_COMPLETION_VALUES);
        assert_eq!((got.total, got.has_more), (250, true));

        let got = run(None, &req);
        assert!(got.values.is_empty() && !got.has_more);
    }
}
