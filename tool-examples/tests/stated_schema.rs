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
