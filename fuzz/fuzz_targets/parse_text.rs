//! Fuzz the text action parser: no panic, no stack overflow, and every accepted action names an
//! identifier and survives a round trip through the canonical `{"tool", "args"}` shape.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};
use tool_core::call::{parse_call, ParseLimits};

fuzz_target!(|data: &[u8]| {
    let Ok(input) = std::str::from_utf8(data) else {
        return;
    };
    // Force the text path: the dispatcher sends `{`/`[` inputs to the JSON parser.
    let input = format!("Action: {input}");
    let tight = ParseLimits {
        max_bytes: 4096,
        max_depth: 6,
        max_string_len: 64,
        allow_fenced: false,
        max_calls: 4,
    };
    for limits in [ParseLimits::default(), tight] {
        if let Ok(call) = parse_call(&input, &limits) {
            assert!(call
                .name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'_'));
            assert!(call.id.is_none());
            let canonical =
                json!({"tool": call.name, "args": Value::Object(call.arguments.clone())});
            let again = parse_call(&canonical.to_string(), &ParseLimits::default())
                .expect("an accepted action re-serialized as {tool, args} must parse");
            assert_eq!(again.arguments, call.arguments);
        }
    }
});
