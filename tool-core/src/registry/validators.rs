//! Which engine checks a tool's arguments and output, chosen when the registry is built.
//!
//! A `#[tool]` schema goes to the built-in checker (microseconds, no meta-schema). When one
//! allocation-free walk shows that the checker compiles it (the schemas `#[tool]` writes), it is
//! compiled on first use, as nothing could be refused then; any other is compiled right away,
//! so whatever a compile refuses is refused at start-up. A schema outside what the checker
//! covers, and every dynamic tool's schema (plugins, proxied MCP tools), goes to the general
//! engine (feature `jsonschema`): checked against the meta-schema now, compiled on first use.
//! Without that feature such a schema is refused here, so nothing is ever checked in part.

use std::sync::OnceLock;

use serde_json::Value;

use crate::schema::check::{compiles_surely, Checker};
use crate::schema::validate::Validator;

/// A validator made now or on first use, and which engine makes it then.
#[derive(Debug, Default)]
pub(super) struct Slot {
    validator: OnceLock<Validator>,
    /// Made on first use by the built-in checker (else by the general engine).
    builtin_later: bool,
}

impl Slot {
    fn ready(v: Validator) -> Slot {
        Slot {
            validator: OnceLock::from(v),
            builtin_later: false,
        }
    }
}

/// Prepare the validator of `schema` (`dynamic`: a [`ToolDef::builder`](super::ToolDef::builder)
/// tool). `Err` says why the schema cannot be used.
pub(super) fn prepare(schema: &Value, dynamic: bool) -> Result<Slot, String> {
    if !dynamic && compiles_surely(schema) {
        return Ok(builtin_on_first_use());
    }
    let builtin = Checker::compile(schema);
    if let Err(u) = &builtin {
        if u.malformed {
            return Err(u.to_string());
        }
    }
    #[cfg(feature = "jsonschema")]
    if dynamic || builtin.is_err() {
        crate::schema::general::meta_check(schema)?;
        return Ok(Slot::default());
    }
    match builtin {
        Ok(checker) => Ok(Slot::ready(Validator::of_checker(checker))),
        Err(u) => {
            let _ = dynamic;
            Err(format!(
                "{u} needs the general JSON Schema engine: enable tool-core's `jsonschema` feature"
            ))
        }
    }
}

/// The built-in checker, compiled on first use: for a schema it surely compiles (a schema
/// `#[tool]` stated whole has only keywords it compiles).
pub(super) fn builtin_on_first_use() -> Slot {
    Slot {
        validator: OnceLock::new(),
        builtin_later: true,
    }
}

/// The validator in `slot`, compiling it on first use (concurrent first calls wait for one
/// compile). A schema that does not compile then refuses every call (fail closed) and says
/// why; for a built-in one that cannot happen (`compiles_surely`).
pub(super) fn get<'a>(slot: &'a Slot, schema: &Value) -> &'a Validator {
    slot.validator.get_or_init(|| {
        if slot.builtin_later {
            return Checker::compile(schema)
                .map_or_else(|u| Validator::refuse(u.to_string()), Validator::of_checker);
        }
        #[cfg(feature = "jsonschema")]
        {
            Validator::general(schema).unwrap_or_else(Validator::refuse)
        }
        #[cfg(not(feature = "jsonschema"))]
        {
            // `prepare` fills every other slot when there is no general engine.
            let _ = schema;
            Validator::refuse("no engine covers this schema".to_owned())
        }
    })
}

/// Every top-level `default` of `schema` must satisfy its own property's schema: the executor
/// fills a left-out argument with its default before the checks, so a default that breaks its
/// schema would refuse every call that leaves the argument out. `Err` names the first one.
pub(super) fn check_defaults(slot: &Slot, schema: &Value) -> Result<(), String> {
    let Some(Value::Object(props)) = schema.get("properties") else {
        return Ok(());
    };
    // Keys compared in order, not hashed: a property's schema has a handful.
    let defaulted = |prop: &Value| {
        prop.as_object()
            .is_some_and(|m| m.keys().any(|k| k == "default"))
    };
    if !props.values().any(defaulted) {
        return Ok(());
    }
    let defaults: serde_json::Map<String, Value> = props
        .iter()
        .filter_map(|(name, prop)| Some((name.clone(), prop.get("default")?.clone())))
        .collect();
    if defaults.is_empty() {
        return Ok(());
    }
    // Only what is found at a defaulted property counts: the properties left out (`required`)
    // and rules across properties are about whole calls, not about one default.
    let owner = |path: &str| {
        defaults.keys().find(|name| {
            let at = format!("/{}", name.replace('~', "~0").replace('/', "~1"));
            path == at || path.starts_with(&format!("{at}/"))
        })
    };
    let instance = Value::Object(defaults.clone());
    let found = crate::schema::validate::violations(get(slot, schema), &instance);
    match found.iter().find_map(|v| Some((owner(&v.path)?, v))) {
        Some((name, v)) => Err(format!(
            "the default of `{name}` does not satisfy its own schema ({v}): every call that \
             leaves `{name}` out would be refused"
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;
    use crate::schema::validate::violations;

    /// What `#[tool]` writes for a user type: a `$ref` into `$defs`, an enum, bounds.
    fn stated() -> Value {
        json!({
            "type": "object",
            "properties": {
                "table": {"type": "string", "description": "the table"},
                "limit": {"type": ["integer", "null"], "format": "uint32", "minimum": 0, "maximum": 4294967295u64},
                "filters": {"type": "array", "items": {"$ref": "#/$defs/Filter"}}
            },
            "required": ["table", "filters"],
            "additionalProperties": false,
            "$defs": {
                "Op": {"type": "string", "enum": ["eq", "ne"]},
                "Filter": {
                    "type": "object",
                    "properties": {"column": {"type": "string"}, "op": {"$ref": "#/$defs/Op"}},
                    "required": ["column", "op"],
                    "additionalProperties": false
                }
            }
        })
    }

    /// The lazily compiled checker gives every call the result the checker compiled at
    /// build gives.
    #[test]
    fn a_schema_compiled_on_first_use_validates_as_one_compiled_at_build() {
        let schema = stated();
        let slot = prepare(&schema, false).expect("prepared");
        assert!(slot.validator.get().is_none(), "not compiled at build");
        let lazy = get(&slot, &schema);
        assert_eq!(lazy.engine_name(), "builtin");
        let eager = Validator::builtin(&schema).expect("compiles");
        for args in [
            json!({"table": "t", "filters": []}),
            json!({"table": "t", "filters": [{"column": "c", "op": "eq"}], "limit": 3}),
            json!({"table": 1, "filters": [{"column": "c", "op": "lt", "x": 1}], "limit": -1}),
            json!({"filters": "no", "other": true}),
            json!([]),
        ] {
            assert_eq!(lazy.is_valid(&args), eager.is_valid(&args), "{args}");
            assert_eq!(violations(lazy, &args), violations(&eager, &args), "{args}");
        }
    }

    /// Calls racing to be first share one compiled validator.
    #[test]
    fn concurrent_first_calls_compile_once() {
        let schema = Arc::new(stated());
        let slot = Arc::new(prepare(&schema, false).expect("prepared"));
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let (slot, schema) = (Arc::clone(&slot), Arc::clone(&schema));
                std::thread::spawn(move || {
                    let v = get(&slot, &schema);
                    assert!(!v.is_valid(&json!({"table": "t"})));
                    std::ptr::from_ref(v) as usize
                })
            })
            .collect();
        let seen: Vec<usize> = threads
            .into_iter()
            .map(|t| t.join().expect("no panic"))
            .collect();
        assert!(seen.iter().all(|p| *p == seen[0]), "{seen:?}");
    }

    /// A schema the walk does not vouch for is compiled at build: its refusal stays a start-up
    /// refusal, with the compiler's words.
    #[test]
    fn a_schema_that_may_not_compile_is_compiled_at_build() {
        let broken = json!({"type": "object", "properties": {"q": {"type": "string", "pattern": "(unclosed"}}});
        let e = prepare(&broken, false).expect_err("refused at build");
        assert!(e.contains("not a valid ECMA 262 regex"), "{e}");
        let looping = json!({"type": "object", "$ref": "#/$defs/d",
            "$defs": {"d": {"anyOf": [{"$ref": "#/$defs/d"}]}}});
        assert!(prepare(&looping, false).is_err() || cfg!(feature = "jsonschema"));
        let pattern =
            json!({"type": "object", "properties": {"q": {"type": "string", "pattern": "^a+$"}}});
        let slot = prepare(&pattern, false).expect("prepared");
        assert!(slot.validator.get().is_some(), "compiled at build");
    }

    /// A dynamic tool's schema never takes the lazy built-in route.
    #[test]
    fn a_dynamic_schema_is_not_compiled_lazily_by_the_checker() {
        let slot = prepare(&stated(), true).expect("prepared");
        assert!(!slot.builtin_later);
    }
}
