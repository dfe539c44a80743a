//! Why a tool or a registry was refused.

/// Why a tool or a registry was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// A declaration breaks a rule.
    #[error("tool `{tool}`: {reason}")]
    InvalidDeclaration {
        /// The tool.
        tool: String,
        /// The broken rule.
        reason: String,
    },
    /// Two tools share a name.
    #[error("duplicate tool name `{name}`: defined by {first} and by {second}")]
    DuplicateName {
        /// The shared name.
        name: String,
        /// Where the first definition comes from.
        first: String,
        /// Where the second definition comes from.
        second: String,
    },
    /// The registry was built from the inventory and found no `#[tool]` at all.
    ///
    /// Almost always the linker: a binary that never names the library declaring its tools does
    /// not link that library's inventory entries. Naming the crate once, with `use mytools as _;`
    /// in the binary's `main.rs`, keeps them.
    #[error(
        "no `#[tool]` is linked into this program. If your tools live in a library crate, the \
         linker dropped its tool registrations because the binary never refers to that crate: \
         add `use mytools as _;` (your tool crate's name) to the binary's `main.rs`. A registry \
         that is meant to be empty is built with `Registry::builder().build()`"
    )]
    NoToolsLinked,
}
