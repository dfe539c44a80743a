//! Code the scan cannot see: `eval`/`exec`/`compile` of text it cannot spell, attributes and
//! imports by computed names, `globals()`/`__builtins__` lookups, native code through `ctypes`
//! and `cffi`. Each is a [`EffectKind::DynamicExec`] effect, which the judge reviews, and denies
//! where the same script does something else it reviews or denies.

use ruff_text_size::TextRange;

use crate::effects::{EffectKind, EffectTarget};

use super::walk::*;

impl Py<'_, '_> {
    /// Record code the scan cannot see at `r`, hidden the way `form` says.
    pub(super) fn dynamic(&mut self, form: &str, r: TextRange) {
        let at = self.at(r);
        let ev = self.text(r).to_owned();
        self.sink.effect(
            EffectKind::DynamicExec {
                form: form.to_owned(),
            },
            EffectTarget::Unknown,
            at,
            &ev,
        );
    }

    /// Calls into native code: a C library function through `ctypes`, or a library loaded.
    pub(super) fn native_call(&mut self, q: &str, r: TextRange) {
        if q.starts_with("ctypes.libc.") {
            self.dynamic("call into libc through ctypes", r);
        } else if matches!(
            q,
            "ctypes.CDLL"
                | "ctypes.PyDLL"
                | "ctypes.WinDLL"
                | "ctypes.cdll.LoadLibrary"
                | "ctypes.LibraryLoader"
                | "cffi.FFI"
                | "cffi.FFI.dlopen"
        ) {
            self.dynamic("native code through ctypes or cffi", r);
        }
    }
}
