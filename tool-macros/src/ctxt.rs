//! The error accumulator: every declaration error of one item is collected and reported at once.

use std::cell::RefCell;
use std::fmt::Display;
use std::thread;

use quote::ToTokens;

/// Collects errors while the macro reads and checks one item. Must be consumed with
/// [`Ctxt::check`]; dropping it unchecked is a bug in the macro and panics, so no error can be
/// lost silently.
pub(crate) struct Ctxt {
    errors: RefCell<Option<Vec<syn::Error>>>,
}

impl Ctxt {
    pub(crate) fn new() -> Self {
        Ctxt {
            errors: RefCell::new(Some(Vec::new())),
        }
    }

    /// Record an error spanning the tokens of `obj`.
    pub(crate) fn error_spanned_by<T: ToTokens, M: Display>(&self, obj: T, msg: M) {
        self.push(syn::Error::new_spanned(obj.into_token_stream(), msg));
    }

    /// Record an error syn produced.
    pub(crate) fn syn_error(&self, err: syn::Error) {
        self.push(err);
    }

    fn push(&self, err: syn::Error) {
        self.errors
            .borrow_mut()
            .as_mut()
            .expect("Ctxt used after check") // check() consumes self, so this cannot happen
            .push(err);
    }

    /// All errors, combined into one, or `Ok` when there were none.
    pub(crate) fn check(self) -> syn::Result<()> {
        let errors = self.errors.borrow_mut().take().unwrap_or_default();
        let mut iter = errors.into_iter();
        let Some(mut combined) = iter.next() else {
            return Ok(());
        };
        for e in iter {
            combined.combine(e);
        }
        Err(combined)
    }
}

impl Drop for Ctxt {
    fn drop(&mut self) {
        if !thread::panicking() && self.errors.borrow().is_some() {
            panic!("forgot to check for errors");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn combines_every_error() {
        let cx = Ctxt::new();
        cx.error_spanned_by(quote::quote!(a), "first");
        cx.error_spanned_by(quote::quote!(b), "second");
        let err = cx.check().expect_err("two errors were recorded");
        let msgs: Vec<String> = err.into_iter().map(|e| e.to_string()).collect();
        assert_eq!(msgs, ["first", "second"]);
    }

    #[test]
    fn no_errors_is_ok() {
        assert!(Ctxt::new().check().is_ok());
    }

    #[test]
    #[should_panic(expected = "forgot to check for errors")]
    fn unchecked_drop_panics() {
        let _cx = Ctxt::new();
    }
}
