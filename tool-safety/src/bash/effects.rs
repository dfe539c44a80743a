//! What each command will touch: the dispatch of one unwrapped command to the rules of its
//! family (`files`, `archives`, `net`, `procs`), the command runners (`xargs`, `find -exec`),
//! the environment, `cd`, and redirections. Words are resolved by `resolve`.

use tree_sitter::Node;

use crate::effects::{is_secret_env, Direction, EffectKind, EffectTarget};

use super::cmd::Cmd;
use super::files::{DELETERS, MODE_SETTERS, READERS};
use super::text::Word;
use super::walk::{pos, Bash, Inv};

/// Interpreters whose first operand is a script file they run.
const SHELLS: &[&str] = &[
    "bash", "sh", "zsh", "dash", "ksh", "python", "python3", "perl", "ruby", "node",
];

impl<'t, 's: 't> Bash<'_, 's, 't> {
    /// `$NAME` / `${NAME}` of a credential variable the script did not set itself.
    pub(super) fn env_read(&mut self, n: Node<'t>) {
        let Some(var) = n.named_child(0).filter(|v| v.kind() == "variable_name") else {
            return;
        };
        let name = self.text(var);
        if !is_secret_env(name) || self.vars.contains_key(name) {
            return;
        }
        let at = self.base.unwrap_or(pos(n));
        let ev = self.text(n);
        self.sink.effect(
            EffectKind::EnvRead {
                name: name.to_owned(),
            },
            EffectTarget::Resolved(name.to_owned()),
            at,
            ev,
        );
    }

    /// A redirection of a command to or from a file.
    pub(super) fn redirect_effect(&mut self, op: &str, dest: Node<'t>, at: Node<'t>, ev: &str) {
        let kind = match op {
            ">" | ">>" | "&>" | "&>>" | ">|" | "<>" => EffectKind::FileWrite,
            "<" => EffectKind::FileRead,
            _ => return,
        };
        let w = self.word(dest);
        let pos = self.base.unwrap_or(pos(at));
        if kind == EffectKind::FileWrite {
            let t = self.path_target(&w);
            self.written.extend(t.values().iter().cloned());
        }
        self.file_effect(kind, &w, pos, ev);
    }

    /// The items `xargs` gets: the words a literal printer before it in the pipeline prints, or
    /// what the last `find` / `ls` listed.
    fn xargs_input(&self, node: Node<'t>) -> EffectTarget {
        let printed = node
            .parent()
            .filter(|p| p.kind() == "pipeline")
            .and_then(|_| node.prev_named_sibling())
            .filter(|p| p.kind() == "command")
            .and_then(|p| self.printed(p));
        if let Some(text) = printed {
            let words: Vec<String> = text
                .split_whitespace()
                .map(|w| match self.str_target(w) {
                    EffectTarget::Resolved(p) => p,
                    _ => w.to_owned(),
                })
                .collect();
            return match words.len() {
                0 => EffectTarget::Unknown,
                1 => EffectTarget::Resolved(words[0].clone()),
                _ => EffectTarget::Set(words),
            };
        }
        self.last_listed.clone().unwrap_or(EffectTarget::Unknown)
    }

    /// Running a file the script wrote runs code the scan did not see as code.
    pub(super) fn run_written(&mut self, target: &EffectTarget, node: Node<'t>) {
        if target.values().iter().any(|v| self.written.contains(v)) {
            self.dynamic(node, "runs a script it wrote");
        }
    }

    /// The effects of one unwrapped command.
    pub(super) fn command_effects(&mut self, inv: &Inv<'t>, name: &str) {
        self.system_effects(inv, name);
        if inv.wrappers.iter().any(|w| w == "xargs") {
            // `xargs -a FILE CMD`: the items come from FILE.
            for (o, w) in &inv.wrapper_opts {
                if matches!(o.as_str(), "-a" | "--arg-file") {
                    let at = self.base.unwrap_or(pos(inv.node));
                    let ev = self.ev(inv);
                    let target = self.path_target(w);
                    self.sink.effect(EffectKind::FileRead, target, at, ev);
                }
            }
        }
        let path_named = inv
            .name_word
            .as_ref()
            .is_some_and(|w| w.val().contains('/'));
        if !path_named && !is_effect_command(name) {
            return;
        }
        let ev = self.ev(inv);
        let at = self.base.unwrap_or(pos(inv.node));
        let vals: Vec<&str> = inv.args.iter().map(|a| a.val()).collect();
        let operands: Vec<&Word<'t>> = {
            let mut done = false;
            inv.args
                .iter()
                .filter(|a| {
                    let v = a.val();
                    if !done && v == "--" {
                        done = true;
                        return false;
                    }
                    done || !v.starts_with('-') || v == "-"
                })
                .collect()
        };
        if let Some(w) = &inv.name_word {
            let v = w.val();
            if v.contains('/') && !v.starts_with("/usr/") && !v.starts_with("/bin/") {
                let target = self.path_target(w);
                self.run_written(&target, inv.node);
                self.sink.effect(EffectKind::ProcessSpawn, target, at, ev);
            }
        }
        if inv.wrappers.last().is_some_and(|w| w == "xargs") {
            // `find / | xargs rm -rf`, `echo /root/x | xargs chmod 777`: the operands are what
            // the pipeline listed or printed.
            let kind = if DELETERS.contains(&name) {
                Some(EffectKind::FileDelete)
            } else if MODE_SETTERS.contains(&name) {
                Some(EffectKind::Chmod)
            } else if READERS.contains(&name) {
                Some(EffectKind::FileRead)
            } else {
                None
            };
            if let Some(kind) = kind {
                let target = self.xargs_input(inv.node);
                self.sink.effect(kind, target, at, ev);
            }
        }
        let c = Cmd {
            inv,
            name,
            vals,
            operands,
            at,
            ev,
        };
        if inv.wrappers.iter().any(|w| w == "find") && c.vals.contains(&"{}") {
            self.find_exec_effects(&c);
            return;
        }
        let _ = self.env_command(&c)
            || self.runner_command(&c)
            || self.archive_command(&c)
            || self.file_command(&c)
            || self.net_command(&c)
            || self.proc_command(&c);
    }

    /// `find ROOT -exec CMD {} \;`: `{}` is each file under the roots.
    fn find_exec_effects(&mut self, c: &Cmd<'_, 't>) {
        let (inv, name, at, ev) = (c.inv, c.name, c.at, c.ev);
        let kind = if DELETERS.contains(&name) || name == "mv" {
            Some(EffectKind::FileDelete)
        } else if MODE_SETTERS.contains(&name) {
            Some(EffectKind::Chmod)
        } else if READERS.contains(&name) || matches!(name, "cp" | "grep" | "curl") {
            Some(EffectKind::FileRead)
        } else {
            None
        };
        if let Some(kind) = kind {
            let target = self.find_roots(inv.node);
            self.sink.effect(kind, target, at, ev);
        }
        if matches!(name, "curl" | "wget") {
            let sends = self.find_roots(inv.node).values().first().cloned();
            self.sink
                .network(None, None, None, Direction::Upload, sends, at, ev);
        }
    }

    /// The environment dumped or read (`env`, `printenv NAME`) and the tracked `cd`.
    fn env_command(&mut self, c: &Cmd<'_, 't>) -> bool {
        let (name, at, ev) = (c.name, c.at, c.ev);
        let (vals, operands) = (&c.vals, &c.operands);
        match name {
            "printenv" | "env" | "export" | "declare" | "set" if operands.is_empty() => {
                // The whole environment (`env`, `printenv`, `export -p`).
                let dumps = match name {
                    "set" => vals.is_empty(),
                    "export" => vals.is_empty() || *vals == ["-p"],
                    "declare" => vals.is_empty() || *vals == ["-x"] || *vals == ["-p"],
                    _ => true,
                };
                if dumps {
                    self.sink.effect(
                        EffectKind::EnvRead {
                            name: "*".to_owned(),
                        },
                        EffectTarget::Unknown,
                        at,
                        ev,
                    );
                }
            }
            "printenv" => {
                for w in operands {
                    let name = w.val().to_owned();
                    self.sink.effect(
                        EffectKind::EnvRead { name: name.clone() },
                        EffectTarget::Resolved(name),
                        at,
                        ev,
                    );
                }
            }
            "alias" => {
                for w in operands {
                    if let Some((a, v)) = w.lit.as_deref().and_then(|l| l.split_once('=')) {
                        self.aliases.insert(a.to_owned(), v.to_owned());
                    }
                }
            }
            "cd" | "pushd" => {
                self.cwd = match operands.first() {
                    None => Some("~".to_owned()),
                    Some(w) => match self.path_target(w) {
                        EffectTarget::Resolved(p) => Some(p),
                        _ => None,
                    },
                };
            }
            _ => return false,
        }
        true
    }

    /// What runs other programs: `rg --pre CMD`, an interpreter given a script file.
    fn runner_command(&mut self, c: &Cmd<'_, 't>) -> bool {
        let (name, at, ev) = (c.name, c.at, c.ev);
        let (vals, operands) = (&c.vals, &c.operands);
        match name {
            "rg" if vals
                .iter()
                .any(|v| *v == "--pre" || v.starts_with("--pre=")) =>
            {
                let pre = vals.iter().enumerate().find_map(|(i, v)| {
                    v.strip_prefix("--pre=").map(str::to_owned).or_else(|| {
                        (*v == "--pre")
                            .then(|| vals.get(i + 1).map(|s| (*s).to_owned()))
                            .flatten()
                    })
                });
                let target = pre.map_or(EffectTarget::Unknown, |p| self.str_target(&p));
                self.sink.effect(EffectKind::ProcessSpawn, target, at, ev);
            }
            n if SHELLS.contains(&n) => {
                let inline = vals.iter().any(|v| matches!(*v, "-c" | "-e" | "-m" | "-E"));
                if let Some(w) = operands.first().filter(|_| !inline) {
                    if !w.val().starts_with('-') {
                        let target = self.path_target(w);
                        self.run_written(&target, c.inv.node);
                        self.sink.effect(EffectKind::ProcessSpawn, target, at, ev);
                    }
                }
            }
            _ => return false,
        }
        true
    }
}

/// `true` for the commands [`Bash::command_effects`] knows something about.
fn is_effect_command(name: &str) -> bool {
    SHELLS.contains(&name)
        || super::archives::is_archive_command(name)
        || super::files::is_file_command(name)
        || super::net::is_net_command(name)
        || super::procs::is_proc_command(name)
        || matches!(
            name,
            "alias" | "cd" | "pushd" | "rg" | "printenv" | "env" | "export" | "declare" | "set"
        )
}
