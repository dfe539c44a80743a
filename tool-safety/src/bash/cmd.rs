//! One simple command as the effect rules see it: its resolved name, argument values and
//! operands, and where it is.

use super::text::Word;
use super::walk::Inv;

/// One command as the family rules see it: its words, operands, position and evidence.
pub(super) struct Cmd<'c, 't> {
    pub(super) inv: &'c Inv<'t>,
    pub(super) name: &'c str,
    /// The value of every argument.
    pub(super) vals: Vec<&'c str>,
    /// The arguments that are not options (all after `--`).
    pub(super) operands: Vec<&'c Word<'t>>,
    pub(super) at: (u32, u32),
    pub(super) ev: &'c str,
}
