//! The `#[tool]` attribute. Use it through `tool_core::tool`.

use proc_macro::TokenStream;

/// Declare a function as an agent tool.
#[proc_macro_attribute]
pub fn tool(_attr: TokenStream, item: TokenStream) -> TokenStream {
    item
}
