//! The example tools' input schemas, stated at compile time where their parameter types allow,
//! are the schemas schemars derives for them, byte for byte.

#[test]
fn example_tools_declare_the_schemas_schemars_derives() {
    let registry = tool_examples::registry().expect("the example registry is valid");
    let all = tool_core::__private_0_1_0::declared_and_derived_schemas();
    let examples: Vec<_> = all
        .iter()
        .filter(|(name, ..)| registry.get(name).is_some())
        .collect();
    assert_eq!(
        examples.len(),
        registry.len(),
        "every example tool has typed parameters"
    );
    for (name, declared, derived) in examples {
        assert_eq!(
            serde_json::to_string(declared).expect("serializes"),
            serde_json::to_string(derived).expect("serializes"),
            "`{name}`"
        );
    }
}

/// The example schemas `#[tool]` stated whole, which start-up does not check or build, pass
/// every check the registry makes of any other schema.
#[test]
fn example_schemas_stated_whole_pass_the_registry_checks() {
    let registry = tool_examples::registry().expect("the example registry is valid");
    let stated: Vec<_> = tool_core::__private_0_1_0::stated_schemas_checked_in_full()
        .into_iter()
        .filter(|(name, _)| registry.get(name).is_some())
        .collect();
    let names: Vec<&str> = stated.iter().map(|(n, _)| n.as_str()).collect();
    for expected in ["list_dir", "delete_file", "move_file"] {
        assert!(names.contains(&expected), "{names:?}");
    }
    for (name, checked) in stated {
        assert_eq!(checked, Ok(()), "`{name}`");
    }
}

/// The example schemas with user types and no declared default, put together on first use:
/// each passes every check the registry makes of a whole schema, and the dump written from its
/// parts is the dump of its value.
#[test]
fn example_schemas_put_together_from_parts_pass_the_checks_and_dump_as_their_values() {
    let registry = tool_examples::registry().expect("the example registry is valid");
    let assembled: Vec<_> = tool_core::__private_0_1_0::assembled_schemas_checked_in_full()
        .into_iter()
        .filter(|a| registry.get(&a.name).is_some())
        .collect();
    let names: Vec<&str> = assembled.iter().map(|a| a.name.as_str()).collect();
    assert!(!names.is_empty(), "no example is put together from parts");
    for a in &assembled {
        assert_eq!(a.checked, Ok(()), "`{}`", a.name);
        assert_eq!(a.from_parts, a.from_value, "`{}`", a.name);
        assert!(
            registry
                .get(&a.name)
                .expect("registered")
                .decl()
                .input_schema
                .is_assembled(),
            "`{}`",
            a.name
        );
    }
    eprintln!("put together from parts: {names:?}");
}
