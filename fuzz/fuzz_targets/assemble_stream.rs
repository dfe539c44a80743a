//! Fuzz the streamed tool-call assembler: one JSON event per line, OpenAI chunks or Anthropic
//! events (the first byte chooses). No panic; a finished stream gives only calls the strict
//! parser accepts again in the canonical `{"tool", "args"}` shape, within the call limit.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};
use tool_core::call::{parse_call, ParseLimits, ToolCallAssembler};

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let limits = ParseLimits {
        max_bytes: 4096,
        max_calls: 4,
        ..ParseLimits::default()
    };
    let mut a = ToolCallAssembler::new(limits.clone());
    for line in text.lines() {
        let Ok(event) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        let pushed = if first & 1 == 0 {
            a.push_openai(&event)
        } else {
            a.push_anthropic(&event)
        };
        if pushed.is_err() {
            // Refused once, refused for good.
            assert!(a.clone().finish().is_err());
        }
    }
    if let Ok(calls) = a.finish() {
        assert!(calls.len() <= limits.max_calls);
        for call in calls {
            let canonical = json!({"tool": call.name, "args": Value::Object(call.arguments.clone())});
            let again = parse_call(&canonical.to_string(), &ParseLimits::default())
                .expect("an assembled call re-serialized as {tool, args} must parse");
            assert_eq!(again.arguments, call.arguments);
        }
    }
});
