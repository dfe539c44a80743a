//! Streamed tool calls: the argument fragments of OpenAI Chat Completions deltas and Anthropic
//! Messages events, assembled into complete [`ToolCall`]s. Only a stream that ended as a
//! finished tool-call turn gives calls, so the executor authorizes only fully assembled calls.
//!
//! Fail closed: a stream that ends early (no finish reason, a block never stopped, or the model
//! stopped for its token limit), a call that starts twice at one index, a fragment for an index
//! that never started, a name or id that changes, more calls than
//! [`ParseLimits::max_calls`] or more argument bytes than [`ParseLimits::max_bytes`] gives an
//! error ([`ParseError`], `malformed_call`) and no call at all; after the first error every
//! further event gives it again. Each assembled call then goes through the strict parser
//! ([`parse_call`](super::parse_call)) under the same limits, as a non-streamed call would.

use serde_json::{json, Value};

use super::shape::call_from_object;
use super::types::{ParseError, ParseLimits, ToolCall};

/// Which provider's stream is assembled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dialect {
    OpenAi,
    Anthropic,
}

#[derive(Debug, Clone)]
struct Partial {
    /// The provider's index of the call (a content block's index for Anthropic).
    index: u64,
    id: String,
    name: String,
    arguments: String,
    /// Anthropic: the block's `content_block_stop` was seen.
    stopped: bool,
}

/// Assembles one model turn's streamed tool calls. Feed every event of the stream, in order,
/// then call [`finish`](ToolCallAssembler::finish).
#[derive(Debug, Clone)]
pub struct ToolCallAssembler {
    limits: ParseLimits,
    dialect: Option<Dialect>,
    calls: Vec<Partial>,
    /// Anthropic content blocks that are not tool calls (text, thinking): their deltas are
    /// ignored.
    other_blocks: Vec<u64>,
    argument_bytes: usize,
    /// The finish reason (OpenAI) or stop reason (Anthropic), once given.
    finish: Option<String>,
    /// Anthropic: `message_stop` was seen.
    message_stopped: bool,
    failed: Option<ParseError>,
}

impl ToolCallAssembler {
    /// An assembler under these limits.
    pub fn new(limits: ParseLimits) -> Self {
        ToolCallAssembler {
            limits,
            dialect: None,
            calls: Vec::new(),
            other_blocks: Vec::new(),
            argument_bytes: 0,
            finish: None,
            message_stopped: false,
            failed: None,
        }
    }

    /// One OpenAI Chat Completions stream chunk (`{"choices": [{"delta": {"tool_calls": [...]},
    /// "finish_reason": ..}]}`, the JSON of one `data:` line). Only choice 0 is read; a chunk
    /// with another choice is refused (several choices would interleave different turns).
    pub fn push_openai(&mut self, chunk: &Value) -> Result<(), ParseError> {
        self.guard(Dialect::OpenAi, |a| a.openai(chunk))
    }

    /// One Anthropic Messages stream event (`content_block_start`, `content_block_delta`,
    /// `content_block_stop`, `message_delta`, `message_stop`, ...), as the JSON of its `data:`
    /// line.
    pub fn push_anthropic(&mut self, event: &Value) -> Result<(), ParseError> {
        self.guard(Dialect::Anthropic, |a| a.anthropic(event))
    }

    /// The complete calls, in index order, once the stream ended as a finished tool-call turn;
    /// otherwise an error and no call.
    pub fn finish(self) -> Result<Vec<ToolCall>, ParseError> {
        if let Some(e) = self.failed {
            return Err(e);
        }
        match self.dialect {
            None => return Ok(Vec::new()),
            Some(Dialect::OpenAi) => match self.finish.as_deref() {
                None => return Err(err("the stream ended before its finish reason")),
                Some("tool_calls" | "stop") => {}
                Some(other) => {
                    return Err(err(&format!(
                        "the stream finished with `{other}`: its tool calls may be incomplete"
                    )))
                }
            },
            Some(Dialect::Anthropic) => {
                if !self.message_stopped {
                    return Err(err("the stream ended before `message_stop`"));
                }
                if let Some(p) = self.calls.iter().find(|p| !p.stopped) {
                    return Err(err(&format!(
                        "the tool_use block at index {} never stopped",
                        p.index
                    )));
                }
                match self.finish.as_deref() {
                    Some("tool_use" | "end_turn") => {}
                    None => return Err(err("the stream ended without a stop reason")),
                    Some(other) => {
                        return Err(err(&format!(
                            "the message stopped with `{other}`: its tool calls may be incomplete"
                        )))
                    }
                }
            }
        }
        let mut calls = self.calls;
        calls.sort_by_key(|p| p.index);
        calls
            .into_iter()
            .map(|p| {
                let arguments =
                    if p.arguments.trim().is_empty() && self.dialect == Some(Dialect::Anthropic) {
                        // A tool_use without input deltas has the empty input.
                        "{}".to_owned()
                    } else {
                        p.arguments
                    };
                // The assembled call, in the Chat Completions shape, through the strict parser:
                // its arguments string is parsed on its own, under the same limits.
                let Value::Object(call) = json!({
                    "type": "function",
                    "id": p.id,
                    "function": {"name": p.name, "arguments": arguments},
                }) else {
                    unreachable!("a JSON object literal")
                };
                call_from_object(call, "$", &self.limits)
                    .map_err(|e| err(&format!("the call at index {}: {}", p.index, e.message)))
            })
            .collect()
    }

    /// Run one event, or refuse it (and every later one) once anything went wrong.
    fn guard(
        &mut self,
        dialect: Dialect,
        f: impl FnOnce(&mut Self) -> Result<(), ParseError>,
    ) -> Result<(), ParseError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let result = match self.dialect {
            Some(d) if d != dialect => Err(err("events of two providers in one stream")),
            _ => {
                self.dialect = Some(dialect);
                if self.finished() {
                    Err(err("an event after the end of the stream"))
                } else {
                    f(self)
                }
            }
        };
        if let Err(e) = &result {
            self.failed = Some(e.clone());
        }
        result
    }

    fn finished(&self) -> bool {
        match self.dialect {
            Some(Dialect::Anthropic) => self.message_stopped,
            _ => self.finish.is_some(),
        }
    }

    fn openai(&mut self, chunk: &Value) -> Result<(), ParseError> {
        let Some(choices) = chunk.get("choices").and_then(Value::as_array) else {
            return Err(err("a chunk without `choices`"));
        };
        for choice in choices {
            if choice.get("index").and_then(Value::as_u64).unwrap_or(0) != 0 {
                return Err(err("a chunk of another choice than 0"));
            }
            let delta = choice.get("delta");
            if let Some(tool_calls) = delta.and_then(|d| d.get("tool_calls")) {
                let Some(list) = tool_calls.as_array() else {
                    return Err(err("`tool_calls` is not an array"));
                };
                for fragment in list {
                    self.openai_fragment(fragment)?;
                }
            }
            match choice.get("finish_reason") {
                None | Some(Value::Null) => {}
                Some(Value::String(reason)) => self.finish = Some(reason.clone()),
                Some(_) => return Err(err("`finish_reason` is not a string")),
            }
        }
        Ok(())
    }

    fn openai_fragment(&mut self, fragment: &Value) -> Result<(), ParseError> {
        let index = fragment
            .get("index")
            .and_then(Value::as_u64)
            .ok_or_else(|| err("a tool call fragment without an integer `index`"))?;
        let function = fragment.get("function");
        let name = str_field(function, "name")?;
        let arguments = str_field(function, "arguments")?.unwrap_or("");
        let id = str_field(Some(fragment), "id")?;
        match self.calls.iter().position(|p| p.index == index) {
            None => {
                let (Some(id), Some(name)) = (id, name) else {
                    return Err(err(&format!(
                        "the first fragment of the call at index {index} has no id and name"
                    )));
                };
                self.start(index, id, name)?;
            }
            Some(at) => {
                let p = &self.calls[at];
                // Providers repeat neither; an equal repeat is harmless, another one is a
                // second call at the same index.
                if id.is_some_and(|id| id != p.id) || name.is_some_and(|n| n != p.name) {
                    return Err(err(&format!("a second call starts at index {index}")));
                }
            }
        }
        self.append(index, arguments)
    }

    fn anthropic(&mut self, event: &Value) -> Result<(), ParseError> {
        let kind = event
            .get("type")
            .and_then(Value::as_str)
            .ok_or_else(|| err("an event without a `type`"))?;
        let index = || {
            event
                .get("index")
                .and_then(Value::as_u64)
                .ok_or_else(|| err(&format!("a `{kind}` event without an integer `index`")))
        };
        match kind {
            "message_start" | "ping" => Ok(()),
            "content_block_start" => {
                let index = index()?;
                if self.other_blocks.contains(&index) || self.calls.iter().any(|p| p.index == index)
                {
                    return Err(err(&format!("a second block starts at index {index}")));
                }
                let block = event
                    .get("content_block")
                    .ok_or_else(|| err("`content_block_start` without `content_block`"))?;
                if block.get("type").and_then(Value::as_str) != Some("tool_use") {
                    self.other_blocks.push(index);
                    return Ok(());
                }
                let id = str_field(Some(block), "id")?
                    .ok_or_else(|| err("a tool_use block without an id"))?;
                let name = str_field(Some(block), "name")?
                    .ok_or_else(|| err("a tool_use block without a name"))?;
                // The input comes in deltas; the start carries an empty object.
                match block.get("input") {
                    None => {}
                    Some(Value::Object(m)) if m.is_empty() => {}
                    Some(_) => {
                        return Err(err(
                            "a streamed tool_use block starts with a non-empty input",
                        ))
                    }
                }
                self.start(index, id, name)
            }
            "content_block_delta" => {
                let index = index()?;
                if self.other_blocks.contains(&index) {
                    return Ok(());
                }
                let delta = event.get("delta");
                if delta.and_then(|d| d.get("type")).and_then(Value::as_str)
                    != Some("input_json_delta")
                {
                    return Err(err(&format!(
                        "a delta for the tool_use block at index {index} is not `input_json_delta`"
                    )));
                }
                let partial = str_field(delta, "partial_json")?
                    .ok_or_else(|| err("an `input_json_delta` without `partial_json`"))?;
                match self.calls.iter().find(|p| p.index == index) {
                    None => Err(err(&format!(
                        "a delta for index {index}, which never started"
                    ))),
                    Some(p) if p.stopped => Err(err(&format!(
                        "a delta for index {index} after its block stopped"
                    ))),
                    Some(_) => self.append(index, partial),
                }
            }
            "content_block_stop" => {
                let index = index()?;
                if self.other_blocks.contains(&index) {
                    return Ok(());
                }
                match self.calls.iter_mut().find(|p| p.index == index) {
                    None => Err(err(&format!(
                        "a stop for index {index}, which never started"
                    ))),
                    Some(p) if p.stopped => Err(err(&format!("index {index} stopped twice"))),
                    Some(p) => {
                        p.stopped = true;
                        Ok(())
                    }
                }
            }
            "message_delta" => {
                match event.get("delta").and_then(|d| d.get("stop_reason")) {
                    None | Some(Value::Null) => {}
                    Some(Value::String(reason)) => self.finish = Some(reason.clone()),
                    Some(_) => return Err(err("`stop_reason` is not a string")),
                }
                Ok(())
            }
            "message_stop" => {
                self.message_stopped = true;
                Ok(())
            }
            "error" => Err(err("the stream reported an error")),
            other => Err(err(&format!("an unknown event type `{other}`"))),
        }
    }

    fn start(&mut self, index: u64, id: &str, name: &str) -> Result<(), ParseError> {
        if self.calls.len() >= self.limits.max_calls {
            return Err(err(&format!(
                "more than {} tool calls in one turn",
                self.limits.max_calls
            )));
        }
        self.calls.push(Partial {
            index,
            id: id.to_owned(),
            name: name.to_owned(),
            arguments: String::new(),
            stopped: false,
        });
        Ok(())
    }

    fn append(&mut self, index: u64, fragment: &str) -> Result<(), ParseError> {
        self.argument_bytes += fragment.len();
        if self.argument_bytes > self.limits.max_bytes {
            return Err(err(&format!(
                "the streamed arguments are longer than {} bytes",
                self.limits.max_bytes
            )));
        }
        match self.calls.iter_mut().find(|p| p.index == index) {
            Some(p) => {
                p.arguments.push_str(fragment);
                Ok(())
            }
            None => Err(err(&format!(
                "a fragment for index {index}, which never started"
            ))),
        }
    }
}

/// An optional string field; present but not a string is an error.
fn str_field<'a>(obj: Option<&'a Value>, key: &str) -> Result<Option<&'a str>, ParseError> {
    match obj.and_then(|o| o.get(key)) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(err(&format!("`{key}` is not a string"))),
    }
}

fn err(message: &str) -> ParseError {
    ParseError::new(format!("streamed tool calls: {message}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn openai_chunks(fragments: &[Value], finish: Option<&str>) -> Vec<Value> {
        let mut out: Vec<Value> = fragments
            .iter()
            .map(|f| json!({"choices": [{"index": 0, "delta": {"tool_calls": [f]}, "finish_reason": null}]}))
            .collect();
        if let Some(reason) = finish {
            out.push(json!({"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]}));
        }
        out
    }

    fn run_openai(chunks: &[Value]) -> Result<Vec<ToolCall>, ParseError> {
        let mut a = ToolCallAssembler::new(ParseLimits::default());
        for c in chunks {
            a.push_openai(c)?;
        }
        a.finish()
    }

    fn start(index: u64, id: &str, name: &str) -> Value {
        json!({"index": index, "id": id, "type": "function", "function": {"name": name, "arguments": ""}})
    }

    fn args(index: u64, text: &str) -> Value {
        json!({"index": index, "function": {"arguments": text}})
    }

    #[test]
    fn interleaved_openai_fragments_assemble_by_index() {
        let chunks = openai_chunks(
            &[
                start(0, "call_a", "get_weather"),
                args(0, "{\"ci"),
                start(1, "call_b", "read_file"),
                args(1, "{\"path\": "),
                args(0, "ty\": \"Paris\"}"),
                args(1, "\"a.txt\"}"),
            ],
            Some("tool_calls"),
        );
        let calls = run_openai(&chunks).expect("assembled");
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0].name, "get_weather");
        assert_eq!(calls[0].id.as_deref(), Some("call_a"));
        assert_eq!(calls[0].arguments["city"], "Paris");
        assert_eq!(calls[1].arguments["path"], "a.txt");
    }

    #[test]
    fn openai_streams_that_fail_give_no_call() {
        let good = [start(0, "call_a", "f"), args(0, "{\"x\": 1}")];
        let cases: Vec<(Vec<Value>, &str)> = vec![
            (openai_chunks(&good, None), "before its finish reason"),
            (
                openai_chunks(&good, Some("length")),
                "finished with `length`",
            ),
            (
                openai_chunks(
                    &[start(0, "call_a", "f"), start(0, "call_b", "g")],
                    Some("tool_calls"),
                ),
                "a second call starts at index 0",
            ),
            (
                openai_chunks(&[args(3, "{}")], Some("tool_calls")),
                "has no id and name",
            ),
            (
                openai_chunks(
                    &[start(0, "call_a", "f"), args(0, "{\"x\": ")],
                    Some("tool_calls"),
                ),
                "the call at index 0",
            ),
            (
                openai_chunks(
                    &[start(0, "c", "f"), args(0, "{\"x\": 1, \"x\": 2}")],
                    Some("tool_calls"),
                ),
                "the call at index 0",
            ),
            (
                vec![json!({"choices": [{"index": 1, "delta": {}}]})],
                "another choice",
            ),
        ];
        for (chunks, needle) in cases {
            let e = run_openai(&chunks).expect_err(needle);
            assert!(e.message.contains(needle), "{needle}: {}", e.message);
            assert_eq!(e.code(), crate::reason::ReasonCode::MalformedCall);
        }
        // An event after the finish is refused too, and the refusal sticks.
        let mut a = ToolCallAssembler::new(ParseLimits::default());
        for c in openai_chunks(&good, Some("tool_calls")) {
            a.push_openai(&c).expect("accepted");
        }
        assert!(a
            .push_openai(&openai_chunks(&[args(0, "x")], None)[0])
            .is_err());
        assert!(a.finish().is_err());
    }

    #[test]
    fn limits_hold_while_streaming() {
        let limits = ParseLimits {
            max_calls: 2,
            max_bytes: 64,
            ..ParseLimits::default()
        };
        let mut a = ToolCallAssembler::new(limits.clone());
        for i in 0..2 {
            a.push_openai(&openai_chunks(&[start(i, "c", "f")], None)[0])
                .expect("within");
        }
        let e = a
            .push_openai(&openai_chunks(&[start(2, "c", "f")], None)[0])
            .expect_err("a third call");
        assert!(
            e.message.contains("more than 2 tool calls"),
            "{}",
            e.message
        );
        let mut a = ToolCallAssembler::new(limits);
        a.push_openai(&openai_chunks(&[start(0, "c", "f")], None)[0])
            .expect("start");
        let long = "x".repeat(65);
        let e = a
            .push_openai(&openai_chunks(&[args(0, &long)], None)[0])
            .expect_err("too long");
        assert!(e.message.contains("longer than 64 bytes"), "{}", e.message);
    }

    fn anthropic(events: &[Value]) -> Result<Vec<ToolCall>, ParseError> {
        let mut a = ToolCallAssembler::new(ParseLimits::default());
        for e in events {
            a.push_anthropic(e)?;
        }
        a.finish()
    }

    fn block_start(index: u64, id: &str, name: &str) -> Value {
        json!({"type": "content_block_start", "index": index, "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}})
    }

    fn delta(index: u64, partial: &str) -> Value {
        json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": partial}})
    }

    fn stop(index: u64) -> Value {
        json!({"type": "content_block_stop", "index": index})
    }

    fn end(reason: &str) -> [Value; 2] {
        [
            json!({"type": "message_delta", "delta": {"stop_reason": reason}}),
            json!({"type": "message_stop"}),
        ]
    }

    #[test]
    fn anthropic_blocks_assemble_and_text_is_skipped() {
        let mut events = vec![
            json!({"type": "message_start", "message": {}}),
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Let me look."}}),
            stop(0),
            block_start(1, "toolu_1", "get_weather"),
            delta(1, "{\"city\": "),
            delta(1, "\"Lisbon\"}"),
            stop(1),
            block_start(2, "toolu_2", "ping"),
            stop(2),
        ];
        events.extend(end("tool_use"));
        let calls = anthropic(&events).expect("assembled");
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0].id.as_deref(), Some("toolu_1"));
        assert_eq!(calls[0].arguments["city"], "Lisbon");
        assert_eq!(calls[1].name, "ping");
        assert!(calls[1].arguments.is_empty());
    }

    #[test]
    fn anthropic_streams_that_fail_give_no_call() {
        let mut unstopped = vec![block_start(0, "t", "f"), delta(0, "{}")];
        unstopped.extend(end("tool_use"));
        let mut max_tokens = vec![block_start(0, "t", "f"), delta(0, "{}"), stop(0)];
        max_tokens.extend(end("max_tokens"));
        let mut after_stop = vec![block_start(0, "t", "f"), stop(0), delta(0, "{}")];
        after_stop.extend(end("tool_use"));
        let mut twice = vec![block_start(0, "t", "f"), block_start(0, "u", "g")];
        twice.extend(end("tool_use"));
        let cases: Vec<(Vec<Value>, &str)> = vec![
            (
                vec![block_start(0, "t", "f"), delta(0, "{}"), stop(0)],
                "before `message_stop`",
            ),
            (unstopped, "never stopped"),
            (max_tokens, "stopped with `max_tokens`"),
            (after_stop, "after its block stopped"),
            (twice, "a second block starts at index 0"),
            (vec![delta(5, "{}")], "never started"),
        ];
        for (events, needle) in cases {
            let e = anthropic(&events).expect_err(needle);
            assert!(e.message.contains(needle), "{needle}: {}", e.message);
        }
        let mut a = ToolCallAssembler::new(ParseLimits::default());
        a.push_anthropic(&block_start(0, "t", "f")).expect("start");
        assert!(
            a.push_openai(&json!({"choices": []})).is_err(),
            "two providers"
        );
    }
}
