//! Fuzz the JSON call shapes: no panic, no stack overflow, and every accepted call survives a
//! round trip through the canonical `{"tool", "args"}` shape.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};
use tool_core::call::{parse_batch, parse_call, ParseLimits, ToolCall};

fn canonical(call: &ToolCall) -> String {
    json!({"tool": call.name, "args": Value::Object(call.arguments.clone())}).to_string()
}

fuzz_target!(|data: &[u8]| {
    let Ok(input) = std::str::from_utf8(data) else {
        return;
    };
    let tight = ParseLimits {
        max_bytes: 4096,
        max_depth: 6,
        max_string_len: 64,
        allow_fenced: true,
        max_calls: 4,
    };
    for limits in [ParseLimits::default(), tight] {
        if let Ok(call) = parse_call(input, &limits) {
            let again = parse_call(&canonical(&call), &ParseLimits::default())
                .expect("an accepted call re-serialized as {tool, args} must parse");
            assert_eq!(again.name, call.name);
            assert_eq!(again.arguments, call.arguments);
        }
        if let Ok(calls) = parse_batch(input, &limits) {
            assert!(calls.len() <= limits.max_calls);
            for call in calls {
                assert!(!call.name.is_empty());
            }
        }
    }
});
