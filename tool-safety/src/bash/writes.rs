//! What a script changes: deleted and written files, assignments, file redirects.

use tree_sitter::Node;

use crate::catalog::{finding, id};
use crate::paths::{self, PathClass};

use super::walk::*;

impl<'t, 's: 't> Bash<'_, 's, 't> {
    pub(super) fn copy_target(
        &mut self,
        vals: &[&str],
        operands: &[&str],
        ev: &str,
        node: Node<'t>,
    ) {
        if let Some(i) = vals
            .iter()
            .position(|v| *v == "-t" || *v == "--target-directory")
        {
            if let Some(t) = vals.get(i + 1) {
                self.check_write(t, ev, node);
            }
        } else if operands.len() >= 2 {
            if let Some(t) = operands.last() {
                self.check_write(t, ev, node);
            }
        }
    }

    pub(super) fn check_delete(&mut self, target: &str, recursive: bool, ev: &str, node: Node<'t>) {
        let mut class = paths::classify(target);
        // `rm -rf *` or `.` in a cwd that is home or a system directory.
        if matches!(paths::normalize(target).as_ref(), "" | "*" | ".*") && recursive {
            class = self.sink.cwd_class;
        }
        let rule = match class {
            PathClass::Root | PathClass::Home | PathClass::HomeSensitive if recursive => {
                id::BASH_RM_ROOT
            }
            PathClass::SystemTop if recursive => id::BASH_RM_ROOT,
            PathClass::HomeSensitive | PathClass::SystemTop | PathClass::SystemSub => {
                id::BASH_RM_SYSTEM
            }
            _ => return,
        };
        let mut f = finding(rule, ev);
        f.subject_path = Some(target.to_owned());
        self.push(f, node);
    }

    pub(super) fn check_write(&mut self, target: &str, ev: &str, node: Node<'t>) {
        let rule = if paths::is_disk_device(target) {
            id::BASH_DISK
        } else if paths::is_dev_net(target) {
            id::BASH_REVERSE_SHELL
        } else if paths::is_authorized_keys(target) {
            id::BASH_WRITE_SSH_KEYS
        } else if paths::is_startup_file(target) {
            id::BASH_WRITE_RC
        } else if paths::is_cron_path(target) {
            id::BASH_CRONTAB
        } else if paths::is_history_file(target) {
            id::BASH_HISTORY
        } else if matches!(
            paths::classify(target),
            PathClass::SystemTop | PathClass::SystemSub | PathClass::Root
        ) {
            id::BASH_WRITE_SYSTEM
        } else {
            return;
        };
        let mut f = finding(rule, ev);
        f.subject_path = Some(target.to_owned());
        self.push(f, node);
    }

    pub(super) fn check_assign(&mut self, name: &str, value: &str, node: Node<'t>) {
        let ev = format!("{name}=…");
        match name {
            "LD_PRELOAD" | "LD_AUDIT" | "DYLD_INSERT_LIBRARIES" | "BASH_ENV" | "PROMPT_COMMAND" => {
                self.push(finding(id::BASH_ENV_PRELOAD, &ev), node);
            }
            "PATH" | "LD_LIBRARY_PATH" | "DYLD_LIBRARY_PATH" => {
                let bad = value.split(':').any(|c| {
                    let n = paths::normalize(c);
                    c.is_empty()
                        || n.is_empty()
                        || !(c.starts_with('/') || c.starts_with('~') || c.starts_with('$'))
                        || ["/tmp", "/var/tmp", "/dev/shm", "/private/tmp"]
                            .iter()
                            .any(|t| {
                                n.strip_prefix(t)
                                    .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
                            })
                });
                if bad {
                    self.push(finding(id::BASH_ENV_PATH, &format!("{name}={value}")), node);
                }
            }
            "HISTFILE" | "HISTSIZE" | "HISTFILESIZE" | "SAVEHIST" => {
                if name == "HISTFILE" || value == "0" {
                    self.push(finding(id::BASH_HISTORY, &ev), node);
                }
            }
            _ => {}
        }
    }

    pub(super) fn assignment(&mut self, n: Node<'t>) {
        // Command prefixes (`X=1 cmd`) are checked here too: every assignment is a node.
        let (Some(name), value) = (
            n.child_by_field_name("name"),
            n.child_by_field_name("value"),
        ) else {
            return;
        };
        let name = self.text(name).to_owned();
        self.bind(&name, value);
        let value = value
            .map(|v| self.word(v).val().to_owned())
            .unwrap_or_default();
        self.check_assign(&name, &value, n);
    }

    pub(super) fn file_redirect(&mut self, n: Node<'t>) {
        let mut op = "";
        let mut cursor = n.walk();
        for c in n.children(&mut cursor) {
            if !c.is_named() {
                op = self.text(c);
                break;
            }
        }
        let Some(dest) = n.child_by_field_name("destination") else {
            return;
        };
        let w = self.word(dest);
        let target = w.val();
        let ev = self.text(n.parent().unwrap_or(n));
        self.redirect_effect(op, dest, n, ev);
        match op {
            ">" | ">>" | "&>" | "&>>" | ">|" | "<>" => self.check_write(target, ev, n),
            ">&" if !target.chars().all(|c| c.is_ascii_digit() || c == '-') => {
                self.check_write(target, ev, n)
            }
            "<" | "<&" => {
                if paths::is_credential_file(target) {
                    if self.cred_read.is_none() {
                        self.cred_read = Some((ev.to_owned(), self.base.unwrap_or(pos(n))));
                    }
                    self.push(finding(id::BASH_CRED_READ, ev), n);
                }
            }
            _ => {}
        }
    }

    // ---- code execution ----
}
