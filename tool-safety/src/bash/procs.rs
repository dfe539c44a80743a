//! Process control and scheduled jobs: `kill`, `pkill` and kin, `crontab`, `at`, `batch`.

use crate::effects::{EffectKind, EffectTarget};

use super::cmd::Cmd;
use super::walk::Bash;

/// `true` for the commands [`Bash::proc_command`] knows.
pub(super) fn is_proc_command(name: &str) -> bool {
    matches!(
        name,
        "kill" | "pkill" | "killall" | "killall5" | "skill" | "crontab" | "at" | "batch"
    )
}

impl<'t, 's: 't> Bash<'_, 's, 't> {
    /// The effects of a process or job command; `false` when `c` is not one.
    pub(super) fn proc_command(&mut self, c: &Cmd<'_, 't>) -> bool {
        let (inv, name, at, ev) = (c.inv, c.name, c.at, c.ev);
        let (vals, operands) = (&c.vals, &c.operands);
        match name {
            "kill" => {
                if inv.wrappers.iter().any(|w| w == "xargs") {
                    // `pgrep x | xargs kill`: the PIDs come from the pipeline, not the script.
                    let target = "processes listed by the pipeline".to_owned();
                    self.sink.effect(
                        EffectKind::ProcessControl { target },
                        EffectTarget::Unknown,
                        at,
                        ev,
                    );
                    return true;
                }
                let mut skip_next = false;
                for w in &inv.args {
                    let v = w.val();
                    if skip_next {
                        skip_next = false;
                        continue;
                    }
                    if v == "-s" || v == "-n" {
                        skip_next = true;
                        continue;
                    }
                    if v == "-l" || v == "-L" {
                        return true;
                    }
                    let own = v.starts_with('%')
                        || v == "$!"
                        || v == "$$"
                        || v.strip_prefix('$')
                            .is_some_and(|n| self.own_pids.iter().any(|p| p == n));
                    let signal = v.starts_with('-')
                        && v != "-1"
                        && !v[1..].chars().all(|c| c.is_ascii_digit() && v.len() > 3);
                    if own || signal {
                        continue;
                    }
                    let target = v.to_owned();
                    self.sink.effect(
                        EffectKind::ProcessControl { target },
                        EffectTarget::Unknown,
                        at,
                        ev,
                    );
                }
            }
            "pkill" | "killall" | "killall5" | "skill" => {
                let target = operands
                    .first()
                    .map_or(name.to_owned(), |w| w.val().to_owned());
                let target = if name == "killall5" {
                    name.to_owned()
                } else {
                    target
                };
                self.sink.effect(
                    EffectKind::ProcessControl { target },
                    EffectTarget::Unknown,
                    at,
                    ev,
                );
            }
            // `crontab -l`, `at -l`: listing the jobs installs nothing.
            "crontab" | "at"
                if vals.contains(&"-l")
                    && !vals.iter().any(|v| matches!(*v, "-r" | "-e" | "-")) => {}
            "crontab" | "at" | "batch" => {
                self.sink.effect(
                    EffectKind::Persistence,
                    EffectTarget::Resolved(name.to_owned()),
                    at,
                    ev,
                );
            }
            _ => return false,
        }
        true
    }
}
