//! Argument types whose limits live in the schema *and* in the deserializer.

use std::borrow::Cow;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::Deserialize;

/// Largest file the example tools read, in bytes.
pub const MAX_FILE_BYTES: usize = 65_536;

/// Longest text the example tools write, in characters.
pub const MAX_FILE_CHARS: usize = 65_536;

/// A byte count from 1 to [`MAX_FILE_BYTES`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(try_from = "u64")]
pub struct ByteLimit(u32);

impl ByteLimit {
    /// The limit.
    pub fn get(self) -> u32 {
        self.0
    }
}

impl TryFrom<u64> for ByteLimit {
    type Error = String;

    fn try_from(n: u64) -> Result<Self, Self::Error> {
        if (1..=MAX_FILE_BYTES as u64).contains(&n) {
            Ok(ByteLimit(n as u32))
        } else {
            Err(format!("must be between 1 and {MAX_FILE_BYTES}, got {n}"))
        }
    }
}

impl JsonSchema for ByteLimit {
    fn schema_name() -> Cow<'static, str> {
        "ByteLimit".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({"type": "integer", "minimum": 1, "maximum": MAX_FILE_BYTES})
    }
}

/// File text of at most [`MAX_FILE_CHARS`] characters, counted as the schema's `maxLength`
/// counts them (Unicode scalar values), so whatever the schema accepts deserializes.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub struct FileContent(String);

impl FileContent {
    /// The text.
    pub fn into_string(self) -> String {
        self.0
    }
}

impl TryFrom<String> for FileContent {
    type Error = String;

    fn try_from(s: String) -> Result<Self, Self::Error> {
        let chars = s.chars().count();
        if chars <= MAX_FILE_CHARS {
            Ok(FileContent(s))
        } else {
            Err(format!(
                "content is {chars} characters; at most {MAX_FILE_CHARS} are allowed"
            ))
        }
    }
}

impl JsonSchema for FileContent {
    fn schema_name() -> Cow<'static, str> {
        "FileContent".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        // maxLength counts characters, as the deserializer does.
        json_schema!({"type": "string", "maxLength": MAX_FILE_CHARS})
    }
}
