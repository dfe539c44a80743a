//! A tool's input schema: a JSON value, or, for a schema `#[tool]` stated whole at compile
//! time, the function that builds it, run on first use; or, for one of user-typed parameters,
//! its parts, put together on first use.

use std::ops::{Deref, DerefMut};
use std::sync::{Arc, OnceLock};

use serde_json::Value;

use crate::schema::assembled::Assembled;

/// The JSON Schema of a tool's arguments. Reads as a [`serde_json::Value`] (it dereferences to
/// one); made from one with `Value::into()` / [`InputSchema::from`].
///
/// A schema `#[tool]` stated whole at compile time (every parameter of a common type, no
/// user type, no declared default) is built on first use instead of at start-up: the macro
/// proved at compile time what the registry checks of it (an object root, string path and
/// script arguments, keywords the built-in checker compiles, no `$ref`), and wrote its
/// canonical text for the pin. Reading it, or changing it, builds it.
///
/// A schema with parameters of user types and no declared default is put together on first use
/// too: the registry checked at start-up what schemars made of the user types (once per
/// sequence of them), and the dump writes it from its parts.
pub struct InputSchema {
    value: OnceLock<Value>,
    /// How the value is made on first use; [`Source::Given`] once the schema was changed or
    /// when it came as a value.
    source: Source,
}

/// Where an [`InputSchema`]'s value comes from.
#[derive(Clone)]
enum Source {
    Given,
    /// The function `#[tool]` stated the whole schema in.
    Stated(fn() -> Value),
    /// The parts of a schema with user types.
    Assembled(Arc<Assembled>),
}

impl InputSchema {
    /// The schema `#[tool]` stated whole, built by `make` on first use: only the macro may vouch
    /// for a schema this way (through `__private::stated_input`).
    pub(crate) fn stated(make: fn() -> Value) -> Self {
        InputSchema {
            value: OnceLock::new(),
            source: Source::Stated(make),
        }
    }

    /// A schema of user-typed parameters whose parts the registry's checks accepted, put
    /// together on first use (through `__private::assembled_input`).
    pub(crate) fn assembled(parts: Assembled) -> Self {
        InputSchema {
            value: OnceLock::new(),
            source: Source::Assembled(Arc::new(parts)),
        }
    }

    /// The value, made from the source.
    fn make(source: &Source) -> Value {
        match source {
            Source::Given => Value::Null,
            Source::Stated(make) => make(),
            Source::Assembled(parts) => parts.value(),
        }
    }

    /// The schema as a value (built now if it was not yet).
    pub fn value(&self) -> &Value {
        self.value.get_or_init(|| Self::make(&self.source))
    }

    /// The schema, owned.
    pub fn into_value(self) -> Value {
        let InputSchema { mut value, source } = self;
        value.take().unwrap_or_else(|| Self::make(&source))
    }

    /// Whether `#[tool]` stated this schema whole (built on first use) and it was not changed
    /// since.
    pub fn is_stated(&self) -> bool {
        matches!(self.source, Source::Stated(_))
    }

    /// Whether this is a schema of user-typed parameters put together on first use, unchanged
    /// since.
    pub fn is_assembled(&self) -> bool {
        matches!(self.source, Source::Assembled(_))
    }

    /// The parts of a schema put together on first use, unchanged since.
    pub(crate) fn parts(&self) -> Option<&Assembled> {
        match &self.source {
            Source::Assembled(parts) => Some(parts),
            _ => None,
        }
    }

    /// Whether the value was built yet (tests, benches: start-up must not build it).
    #[doc(hidden)]
    pub fn is_built(&self) -> bool {
        self.value.get().is_some()
    }
}

impl From<Value> for InputSchema {
    fn from(value: Value) -> Self {
        InputSchema {
            value: OnceLock::from(value),
            source: Source::Given,
        }
    }
}

impl From<InputSchema> for Value {
    fn from(schema: InputSchema) -> Self {
        schema.into_value()
    }
}

impl Deref for InputSchema {
    type Target = Value;

    fn deref(&self) -> &Value {
        self.value()
    }
}

impl DerefMut for InputSchema {
    /// A changed schema is no longer the one `#[tool]` stated: the registry checks it in full.
    fn deref_mut(&mut self) -> &mut Value {
        self.value();
        self.source = Source::Given;
        self.value.get_mut().expect("built above")
    }
}

impl Clone for InputSchema {
    fn clone(&self) -> Self {
        InputSchema {
            value: self.value.clone(),
            source: self.source.clone(),
        }
    }
}

impl std::fmt::Debug for InputSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.value().fmt(f)
    }
}

impl std::fmt::Display for InputSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.value().fmt(f)
    }
}

impl PartialEq for InputSchema {
    fn eq(&self, other: &Self) -> bool {
        self.value() == other.value()
    }
}

impl PartialEq<Value> for InputSchema {
    fn eq(&self, other: &Value) -> bool {
        self.value() == other
    }
}

impl PartialEq<InputSchema> for Value {
    fn eq(&self, other: &InputSchema) -> bool {
        self == other.value()
    }
}

impl serde::Serialize for InputSchema {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.value().serialize(serializer)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn stated() -> Value {
        json!({"type": "object", "properties": {}})
    }

    #[test]
    fn a_stated_schema_is_built_on_first_read_and_reads_as_its_value() {
        let s = InputSchema::stated(stated);
        assert!(!s.is_built() && s.is_stated());
        let copy = s.clone();
        assert_eq!(s["type"], "object");
        assert!(s.is_built() && !copy.is_built());
        assert_eq!(copy, stated());
        assert_eq!(s, copy);
        assert_eq!(Value::from(s), stated());
    }

    #[test]
    fn a_changed_schema_is_no_longer_stated() {
        let mut s = InputSchema::stated(stated);
        s["properties"] = json!({"a": {"type": "string"}});
        assert!(!s.is_stated());
        assert_eq!(s["properties"]["a"]["type"], "string");
        let v = InputSchema::from(json!({"type": "object"}));
        assert!(v.is_built() && !v.is_stated());
    }
}
