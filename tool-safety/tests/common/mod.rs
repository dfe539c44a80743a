//! What the per-class corpus tests of both languages check alike.

use tool_safety::{EffectKind, SafetyDecision, SafetyReport};

/// `src` is allowed and its report lists the kernel read (`uname`, `platform.system()`...) as a
/// host-information effect.
pub fn assert_allowed_listing_the_kernel_read(src: &str, r: &SafetyReport) {
    assert_eq!(
        r.decision,
        SafetyDecision::Allow,
        "{src}: {:?}",
        r.rule_ids()
    );
    assert!(
        r.effects
            .iter()
            .any(|e| matches!(&e.kind, EffectKind::HostInfo { what } if what == "kernel")),
        "{src}: the kernel read is listed"
    );
}
