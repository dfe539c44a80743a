//! Skipping loudly where the kernel lacks what a confinement test needs.

/// Whether `support` (the `+`-joined parts a sandbox probe reports, e.g.
/// `landlock-v7+seccomp+userns`) holds every part of `needs`; if not, prints a loud skip line
/// for `test` on stderr, so that a skipped test is never mistaken for a passed one.
pub fn ready(test: &str, support: &str, needs: &[&str]) -> bool {
    let full = needs
        .iter()
        .all(|part| support.split('+').any(|p| p == *part));
    if !full {
        eprintln!(
            "\n!!! SKIPPED {test}: this kernel offers `{support}`, the test needs `{}` !!!\n",
            needs.join("+")
        );
    }
    full
}

#[cfg(test)]
mod tests {
    use super::ready;

    #[test]
    fn every_needed_part_must_be_offered_whole() {
        assert!(ready(
            "t",
            "landlock-v7+seccomp+userns",
            &["seccomp", "landlock-v7"]
        ));
        assert!(!ready("t", "landlock-v7+seccomp", &["seccomp", "userns"]));
        // `landlock-v7` is not `landlock-v70`, nor a part of one.
        assert!(!ready("t", "landlock-v70+seccomp", &["landlock-v7"]));
        assert!(ready("t", "", &[]));
    }
}
