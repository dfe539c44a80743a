//! The bash parser, one per thread, and the parse step of a scan.

use std::cell::RefCell;

use tree_sitter::{Parser, Tree};

use crate::catalog::{finding, id};
use crate::sink::{nesting_ok, Sink};

/// The parser named in reports.
pub(crate) const PARSER: &str = "tree-sitter-bash 0.25";

thread_local! {
    static BASH: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

/// Parse bash with this thread's parser (created on first use). `None` if the parser fails.
pub(crate) fn parse_bash(src: &str) -> Option<Tree> {
    BASH.with(|cell| {
        let mut slot = cell.try_borrow_mut().ok()?;
        if slot.is_none() {
            let mut p = Parser::new();
            let language: tree_sitter::Language = tree_sitter_bash::LANGUAGE.into();
            p.set_language(&language).ok()?;
            *slot = Some(p);
        }
        let parser = slot.as_mut()?;
        let tree = parser.parse(src, None);
        if tree.is_none() {
            parser.reset();
        }
        tree
    })
}

/// Parse bash `src` for a scan at nesting level `nest`; too deep a nesting or a parser failure is
/// a `SCAN-ERROR` finding at `base` and no tree.
pub(crate) fn parse_bash_for_scan(
    src: &str,
    sink: &mut Sink,
    nest: usize,
    base: Option<(u32, u32)>,
) -> Option<Tree> {
    if !nesting_ok(sink, nest, base) {
        return None;
    }
    let tree = parse_bash(src);
    if tree.is_none() {
        sink.push_at(
            finding(id::SCAN_ERROR, "bash parser failed").with_metadata("reason", "parser"),
            base,
        );
    }
    tree
}
