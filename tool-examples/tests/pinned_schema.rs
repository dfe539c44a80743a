//! The example tools' schema is pinned: `tools.schema.json` + `tools.schema.sha256` in this crate.
//! A changed declaration fails here; rerun with `TOOLS_PIN_UPDATE=1` to accept the change.

#[test]
fn example_tools_match_their_pinned_schema() {
    let registry = tool_examples::registry().expect("the example registry is valid");
    tool_core::pin::assert_pinned(&registry, env!("CARGO_MANIFEST_DIR"));
}

#[test]
fn the_nine_example_tools_are_registered_with_their_contracted_risks() {
    use tool_core::Risk::*;
    let registry = tool_examples::registry().expect("the example registry is valid");
    let got: Vec<(&str, tool_core::Risk)> = registry
        .iter()
        .map(|t| (t.decl().name.as_str(), t.decl().risk))
        .collect();
    assert_eq!(
        got,
        vec![
            ("delete_file", Destructive),
            ("get_weather", Safe),
            ("list_dir", ReadOnly),
            ("move_file", Mutation),
            ("read_file", ReadOnly),
            ("remember", Mutation),
            ("run_bash", Dangerous),
            ("run_python", Dangerous),
            ("write_file", Mutation),
        ]
    );
    let decl = |n: &str| registry.get(n).expect("registered").decl().clone();
    assert_eq!(decl("move_file").path_args, vec!["source", "destination"]);
    assert_eq!(decl("run_bash").script_args, vec!["command"]);
    assert_eq!(decl("run_bash").path_args, vec!["cwd"]);
    assert!(decl("list_dir").concurrency_safe && decl("read_file").concurrency_safe);
    assert!(decl("get_weather").open_world && decl("get_weather").concurrency_safe);
    assert!(!decl("write_file").concurrency_safe);
}
