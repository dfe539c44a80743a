//! Commands: unwrapping wrappers (`sudo`, `env`, `xargs`, `find -exec`, ...) and the rules on each
//! command found.

use tree_sitter::Node;

use crate::catalog::{finding, id};
use crate::paths::{self, PathClass};
use crate::sink::CommandView;

use super::interp::*;
use super::text::*;
use super::walk::*;

impl<'t, 's: 't> Bash<'_, 's, 't> {
    /// Build the invocations of a `command` node, unwrapping wrappers.
    pub(super) fn invocations(&self, cmd: Node<'t>) -> Vec<Inv<'t>> {
        let mut argv: Vec<Word<'t>> = Vec::new();
        let mut assigns = Vec::new();
        let mut cursor = cmd.walk();
        for (i, c) in cmd.children(&mut cursor).enumerate() {
            let field = cmd.field_name_for_child(u32::try_from(i).unwrap_or(u32::MAX));
            match (field, c.kind()) {
                (Some("name"), _) => {
                    let inner = c.named_child(0).unwrap_or(c);
                    argv.insert(0, self.word(inner));
                }
                (Some("argument"), _) => argv.push(self.word(c)),
                (_, "variable_assignment") => {
                    if let (Some(name), Some(value)) = (
                        c.child_by_field_name("name"),
                        c.child_by_field_name("value"),
                    ) {
                        assigns.push((self.text(name).to_owned(), self.word(value)));
                    }
                }
                _ => {}
            }
        }
        let mut out = Vec::new();
        if argv.is_empty() {
            return out;
        }
        let argv = self.resolve_argv(argv);
        self.unwrap_into(cmd, argv, assigns, Vec::new(), &mut out, 0);
        out
    }

    pub(super) fn unwrap_into(
        &self,
        node: Node<'t>,
        mut argv: Vec<Word<'t>>,
        mut assigns: Vec<(String, Word<'t>)>,
        mut wrappers: Vec<String>,
        out: &mut Vec<Inv<'t>>,
        rounds: usize,
    ) {
        let mut wrapper_opts: Vec<(String, Word<'t>)> = Vec::new();
        loop {
            let Some(first) = argv.first() else { return };
            let name = Self::command_name(first);
            let Some(n) = name.clone() else {
                out.push(Inv::whole(
                    node,
                    &argv,
                    None,
                    assigns,
                    wrappers,
                    wrapper_opts.clone(),
                ));
                return;
            };
            let opts_with_arg: &[&str] = match n.as_str() {
                "sudo" => &[
                    "-u",
                    "-g",
                    "-C",
                    "-D",
                    "-h",
                    "-p",
                    "-r",
                    "-t",
                    "-U",
                    "-T",
                    "--user",
                    "--group",
                    "--prompt",
                    "--chdir",
                    "--role",
                    "--type",
                    "--host",
                    "--other-user",
                    "--close-from",
                ],
                "doas" => &["-u", "-C"],
                "busybox" | "toybox" => &[],
                "pkexec" => &["--user"],
                "env" => &["-u", "--unset", "-C", "--chdir"],
                "xargs" => &[
                    "-I",
                    "-n",
                    "-P",
                    "-d",
                    "-L",
                    "-s",
                    "-E",
                    "-a",
                    "-e",
                    "--max-args",
                    "--max-procs",
                    "--delimiter",
                    "--arg-file",
                    "--replace",
                    "--max-lines",
                ],
                "parallel" => &["-j", "--jobs", "-S", "--sshlogin", "--delay", "-N"],
                "timeout" => &["-s", "--signal", "-k", "--kill-after"],
                "nice" => &["-n", "--adjustment"],
                "ionice" => &["-c", "-n", "-p", "--class", "--classdata"],
                "stdbuf" => &["-i", "-o", "-e"],
                "time" => &["-f", "-o", "--format", "--output"],
                "exec" => &["-a"],
                "strace" | "ltrace" => &["-o", "-e", "-p", "-s", "-u"],
                "nohup" | "setsid" | "command" | "builtin" | "unbuffer" | "torsocks"
                | "proxychains" | "proxychains4" | "caffeinate" | "chroot" | "flock" => {
                    &["-n", "-w", "-E"]
                }
                _ => break,
            };
            if rounds + wrappers.len() > 16 {
                break;
            }
            if matches!(n.as_str(), "command")
                && argv.iter().skip(1).any(|a| matches!(a.val(), "-v" | "-V"))
            {
                break;
            }
            // `env -S "cmd args"` and `flock FILE -c "cmd"`: the string is a command line.
            if n == "env" || n == "flock" {
                if argv
                    .iter()
                    .any(|a| matches!(a.val(), "-S" | "--split-string" | "-c"))
                {
                    out.push(Inv::whole(
                        node,
                        &argv,
                        name,
                        assigns,
                        wrappers,
                        wrapper_opts.clone(),
                    ));
                    return;
                }
            }
            wrappers.push(n.clone());
            let mut i = 1;
            while i < argv.len() {
                let a = argv[i].val().to_owned();
                if a == "--" {
                    i += 1;
                    break;
                }
                if n == "env" && !a.starts_with('-') {
                    if let Some((k, _)) = a.split_once('=') {
                        if !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                        {
                            let mut w = argv[i].clone();
                            let v = a.split_once('=').map(|x| x.1).unwrap_or("").to_owned();
                            w.approx = v.clone();
                            w.lit = Some(v);
                            assigns.push((k.to_owned(), w));
                            i += 1;
                            continue;
                        }
                    }
                }
                if !a.starts_with('-') || a == "-" {
                    break;
                }
                i += 1;
                if opts_with_arg.contains(&a.as_str()) {
                    if let Some(v) = argv.get(i) {
                        wrapper_opts.push((a.clone(), v.clone()));
                    }
                    i += 1;
                } else if let Some((o, v)) = a.split_once('=').filter(|(o, _)| o.starts_with("--"))
                {
                    // `--arg-file=FILE`
                    let mut w = argv[i - 1].clone();
                    w.lit = Some(v.to_owned());
                    w.approx = v.to_owned();
                    wrapper_opts.push((o.to_owned(), w));
                } else if n == "xargs"
                    && a.len() > 2
                    && matches!(a.get(..2), Some("-I" | "-a" | "-i"))
                {
                    // `-I{}`, `-afile`: the value joined to the option.
                    let mut w = argv[i - 1].clone();
                    w.lit = Some(a[2..].to_owned());
                    w.approx = a[2..].to_owned();
                    wrapper_opts.push((a[..2].to_owned(), w));
                }
            }
            // `timeout 10 cmd`, `chroot DIR cmd`, `flock FILE cmd`: one positional before the command.
            if matches!(n.as_str(), "timeout" | "chroot" | "flock") {
                i += 1;
            }
            if i >= argv.len() {
                out.push(Inv::whole(
                    node,
                    &argv,
                    name,
                    assigns,
                    wrappers,
                    wrapper_opts.clone(),
                ));
                return;
            }
            argv.drain(..i);
        }
        let name = argv.first().and_then(Self::command_name);
        if name.as_deref() == Some("find") {
            // Each `-exec CMD ... ;` is a command of its own.
            let mut i = 1;
            while i < argv.len() {
                if matches!(argv[i].val(), "-exec" | "-execdir" | "-ok" | "-okdir") {
                    let start = i + 1;
                    let mut end = start;
                    while end < argv.len() && !matches!(argv[end].val(), ";" | "+") {
                        end += 1;
                    }
                    if start < end && rounds < 4 {
                        let mut w = wrappers.clone();
                        w.push("find".to_owned());
                        self.unwrap_into(
                            node,
                            argv[start..end].to_vec(),
                            Vec::new(),
                            w,
                            out,
                            rounds + 1,
                        );
                    }
                    i = end;
                }
                i += 1;
            }
        }
        let mut argv = argv.into_iter();
        out.push(Inv {
            node,
            name_word: argv.next(),
            name,
            args: argv.collect(),
            assigns,
            wrappers,
            wrapper_opts,
        });
    }

    pub(super) fn command(&mut self, cmd: Node<'t>) {
        let invs = match self.inv_cache.remove(&cmd.id()) {
            Some(invs) => invs,
            None => self.invocations(cmd),
        };
        let (line, column) = pos(cmd);
        for inv in &invs {
            self.sink.commands.push(CommandView {
                name: inv.name.clone().unwrap_or_else(|| "$?".to_owned()),
                args: inv.args.iter().map(|a| a.val().to_owned()).collect(),
                line,
                column,
                wrappers: inv.wrappers.clone(),
            });
            self.check_inv(inv);
            if inv.wrappers.is_empty() {
                self.inline_call(inv);
            }
        }
    }

    pub(super) fn ev(&self, inv: &Inv<'_>) -> &'s str {
        self.text(inv.node)
    }

    pub(super) fn check_inv(&mut self, inv: &Inv<'t>) {
        let ev = self.ev(inv);
        let node = inv.node;
        if let Some(w) = &inv.name_word {
            let raw = w.val();
            let non_ascii = !raw.is_ascii();
            if (w.disguised || non_ascii)
                && inv.name.as_deref().is_some_and(|n| !n.is_empty())
                && w.lit.is_some()
            {
                let mut f = finding(id::BASH_OBFUSCATION, ev);
                if let Some(n) = &inv.name {
                    f = f.with_metadata("command", n);
                }
                self.push(f, node);
            }
        }
        for wr in &inv.wrappers {
            if matches!(wr.as_str(), "sudo" | "doas" | "pkexec") {
                let mut f = finding(id::BASH_SUDO, ev);
                f.subject_command = Some(wr.clone());
                self.push(f, node);
            }
        }
        for (k, v) in &inv.assigns {
            self.check_assign(k, v.val(), node);
        }
        let Some(name) = inv.name.as_deref() else {
            self.dynamic(node, "computed command name");
            self.push(finding(id::BASH_INDIRECT_EXEC, ev), node);
            return;
        };
        self.command_effects(inv, name);
        let args: Vec<&Word<'t>> = inv.args.iter().collect();
        let vals: Vec<&str> = args.iter().map(|a| a.val()).collect();
        let (opts, operands) = split_opts(&vals);
        if NET_SEND.contains(&name) {
            self.net_send = true;
        }
        // Paths in any argument: credential files, bash network pseudo-files.
        for v in &vals {
            let path = strip_assign_prefix(v);
            if paths::is_credential_file(path) {
                if self.cred_read.is_none() {
                    self.cred_read = Some((ev.to_owned(), self.base.unwrap_or(pos(node))));
                }
                if NET_SEND.contains(&name) {
                    self.push(finding(id::BASH_CRED_EXFIL, ev), node);
                } else {
                    self.push(finding(id::BASH_CRED_READ, ev), node);
                }
            } else if paths::is_dotenv(path) && NET_SEND.contains(&name) && v.contains('@') {
                self.push(finding(id::BASH_CRED_EXFIL, ev), node);
            }
        }
        match name {
            "sudo" | "doas" | "pkexec" | "su" | "runuser" => {
                let mut f = finding(id::BASH_SUDO, ev);
                f.subject_command = Some(name.to_owned());
                self.push(f, node);
                if name == "su" || name == "runuser" {
                    if let Some(i) = vals
                        .iter()
                        .copied()
                        .position(|v| v == "-c" || v == "--command")
                    {
                        if let Some(code) = args.get(i + 1).and_then(|w| w.lit.clone()) {
                            self.nested(Interp::Shell, &code, node);
                        } else {
                            self.push(finding(id::BASH_INDIRECT_EXEC, ev), node);
                        }
                    }
                }
            }
            "rm" | "rmdir" | "unlink" => {
                let recursive = opts.iter().any(|o| {
                    *o == "--recursive"
                        || (o.starts_with('-')
                            && !o.starts_with("--")
                            && (o.contains('r') || o.contains('R')))
                });
                let no_preserve = opts.contains(&"--no-preserve-root");
                for t in &operands {
                    self.check_delete(t, recursive || no_preserve, ev, node);
                    if paths::is_history_file(t) {
                        self.push(finding(id::BASH_HISTORY, ev), node);
                    }
                }
                if no_preserve {
                    self.push(finding(id::BASH_RM_ROOT, ev), node);
                }
            }
            "find" => {
                if vals.iter().copied().any(|v| v == "-delete") {
                    for v in vals
                        .iter()
                        .take_while(|v| !v.starts_with('-') && **v != "(" && **v != "!")
                    {
                        self.check_delete(v, true, ev, node);
                    }
                }
            }
            "shred" => {
                for t in &operands {
                    if paths::is_disk_device(t) {
                        self.push(finding(id::BASH_DISK, ev), node);
                    } else {
                        self.check_delete(t, false, ev, node);
                    }
                }
            }
            "chmod" | "chown" | "chgrp" | "chattr" | "setfacl" => {
                let recursive = opts.iter().any(|o| *o == "-R" || *o == "--recursive");
                let targets = operands.get(1..).unwrap_or(&[]);
                for t in targets {
                    let class = paths::classify(t);
                    if matches!(class, PathClass::SystemTop | PathClass::SystemSub)
                        || paths::is_catastrophic(class) && (recursive || class != PathClass::Home)
                    {
                        let mut f = finding(id::BASH_CHMOD_SYSTEM, ev);
                        f.subject_path = Some(t.to_string());
                        self.push(f, node);
                    }
                }
                if name == "chmod" {
                    if let Some(mode) = operands.first() {
                        if is_setuid_mode(mode) {
                            self.push(finding(id::BASH_SETUID, ev), node);
                        }
                    }
                }
            }
            "install" => {
                if let Some(i) = vals
                    .iter()
                    .copied()
                    .position(|v| v == "-m" || v == "--mode")
                {
                    if vals.get(i + 1).is_some_and(|m| is_setuid_mode(m)) {
                        self.push(finding(id::BASH_SETUID, ev), node);
                    }
                }
                self.copy_target(&vals, &operands, ev, node);
            }
            "dd" => {
                for v in &vals {
                    if let Some(dst) = v.strip_prefix("of=") {
                        self.check_write(dst, ev, node);
                    }
                }
            }
            n if n.starts_with("mkfs")
                || matches!(
                    n,
                    "mke2fs"
                        | "mkswap"
                        | "fdisk"
                        | "sfdisk"
                        | "cfdisk"
                        | "parted"
                        | "gdisk"
                        | "sgdisk"
                        | "wipefs"
                        | "blkdiscard"
                        | "cryptsetup"
                ) =>
            {
                if n != "cryptsetup"
                    || vals
                        .iter()
                        .copied()
                        .any(|v| v == "luksFormat" || v == "erase")
                {
                    self.push(finding(id::BASH_DISK, ev), node);
                }
            }
            "crontab" => {
                let listing = vals.iter().copied().all(|v| {
                    v == "-l"
                        || v == "-u"
                        || !v.starts_with('-')
                            && vals.iter().copied().any(|x| x == "-u")
                            && vals.len() == 3
                });
                if !listing || vals.is_empty() {
                    self.push(finding(id::BASH_CRONTAB, ev), node);
                }
            }
            "tee" => {
                for t in &operands {
                    self.check_write(t, ev, node);
                }
            }
            "cp" | "mv" | "rsync" | "ln" | "scp" => self.copy_target(&vals, &operands, ev, node),
            "sed" | "perl"
                if opts
                    .iter()
                    .any(|o| o.starts_with("-i") || o.starts_with("--in-place")) =>
            {
                for t in operands.iter().skip(1) {
                    self.check_write(t, ev, node);
                }
            }
            "truncate" | "touch" => {
                for t in &operands {
                    self.check_write(t, ev, node);
                }
            }
            "eval" => self.eval(inv, ev),
            "awk" | "gawk" | "mawk" | "nawk" => {
                // The program is the first operand, unless `-f FILE` gives it.
                let from_file = vals.iter().any(|v| *v == "-f" || v.starts_with("--file"));
                let operands = super::files::operands_of(name, &inv.args);
                if let Some(program) = operands.first().filter(|_| !from_file) {
                    if let Some(code) = program.lit.clone() {
                        self.awk_program(&code, ev, node);
                    }
                }
            }
            "trap" => {
                // `trap 'CODE' EXIT`: the code runs later, as shell.
                if let Some(code) = args.iter().find(|a| !a.val().starts_with('-')) {
                    match &code.lit {
                        Some(text) if vals.len() > 1 => {
                            let text = text.clone();
                            self.nested(Interp::Shell, &text, node);
                        }
                        Some(_) => {}
                        None => self.push(finding(id::BASH_INDIRECT_EXEC, ev), node),
                    }
                }
            }
            "git" => {
                // `git -c core.pager=CMD`, `-c alias.x=!CMD`...: configuration that runs programs.
                let mut i = 0;
                while i < args.len() {
                    let v = args[i].val();
                    let setting = if v == "-c" {
                        i += 1;
                        args.get(i).map(|w| w.val())
                    } else {
                        v.strip_prefix("--config-env=")
                            .or_else(|| v.strip_prefix("-c"))
                    };
                    if let Some((key, value)) = setting.and_then(|s| s.split_once('=')) {
                        let key = key.to_ascii_lowercase();
                        let runs = matches!(
                            key.as_str(),
                            "core.pager"
                                | "core.editor"
                                | "core.sshcommand"
                                | "core.fsmonitor"
                                | "core.hookspath"
                                | "core.askpass"
                                | "diff.external"
                                | "credential.helper"
                                | "sequence.editor"
                                | "gpg.program"
                                | "pager.log"
                                | "pager.diff"
                                | "pager.show"
                                | "uploadpack.packobjectshook"
                        ) || key.starts_with("alias.") && value.starts_with('!')
                            || key.starts_with("filter.")
                            || key.starts_with("diff.") && key.ends_with(".textconv");
                        if runs {
                            self.push(finding(id::BASH_INDIRECT_EXEC, ev), node);
                            let code = value.trim_start_matches('!').to_owned();
                            if key != "core.hookspath" {
                                self.nested(Interp::Shell, &code, node);
                            }
                        }
                    }
                    i += 1;
                }
            }
            "rg" => {
                // `rg --pre CMD`: every searched file goes through CMD.
                let pre = vals.iter().enumerate().find_map(|(i, v)| {
                    v.strip_prefix("--pre=").map(str::to_owned).or_else(|| {
                        (*v == "--pre")
                            .then(|| vals.get(i + 1).map(|s| (*s).to_owned()))
                            .flatten()
                    })
                });
                if pre.is_some() {
                    self.push(finding(id::BASH_INDIRECT_EXEC, ev), node);
                }
            }
            "env" | "flock" | "watch" => {
                // `env -S "cmd args"`, `flock F -c "cmd"`, `watch "cmd"`: the string is a command line.
                let at = vals
                    .iter()
                    .position(|v| matches!(*v, "-S" | "--split-string" | "-c"));
                let code = match (name, at) {
                    (_, Some(i)) => args.get(i + 1).copied(),
                    _ => None,
                };
                if name == "watch" && at.is_none() {
                    let mut parts = Vec::new();
                    let mut dynamic = false;
                    let mut skip = false;
                    for a in &args {
                        let v = a.val();
                        if skip {
                            skip = false;
                        } else if parts.is_empty()
                            && matches!(v, "-n" | "--interval" | "-d" | "--differences")
                        {
                            skip = v == "-n" || v == "--interval";
                        } else if parts.is_empty() && v.starts_with('-') {
                        } else {
                            dynamic |= a.lit.is_none();
                            parts.push(v.to_owned());
                        }
                    }
                    if dynamic {
                        self.push(finding(id::BASH_INDIRECT_EXEC, ev), node);
                    } else {
                        self.nested(Interp::Shell, &parts.join(" "), node);
                    }
                }
                if let Some(w) = code {
                    match w.lit.clone() {
                        Some(c) => self.nested(Interp::Shell, &c, node),
                        None => self.generated_code(w.node, ev, node, id::BASH_INDIRECT_EXEC),
                    }
                }
            }
            "source" | "." => {
                if let Some(a) = args.first() {
                    self.exec_source(a, ev, node);
                }
            }
            "history" => {
                if opts
                    .iter()
                    .any(|o| o.contains('c') || o.contains('d') || o.contains('w'))
                {
                    self.push(finding(id::BASH_HISTORY, ev), node);
                }
            }
            "set" => {
                if vals.windows(2).any(|w| w[0] == "+o" && w[1] == "history") {
                    self.push(finding(id::BASH_HISTORY, ev), node);
                }
            }
            "iptables" | "ip6tables" | "iptables-legacy" | "iptables-nft" => {
                let flush = vals
                    .iter()
                    .any(|v| matches!(*v, "-F" | "--flush" | "-X" | "--delete-chain"));
                let accept = vals
                    .windows(3)
                    .any(|w| (w[0] == "-P" || w[0] == "--policy") && w[2] == "ACCEPT");
                if flush || accept {
                    self.push(finding(id::BASH_FIREWALL, ev), node);
                }
            }
            "nft"
                if vals
                    .windows(2)
                    .any(|w| w[0] == "flush" && w[1] == "ruleset") =>
            {
                self.push(finding(id::BASH_FIREWALL, ev), node);
            }
            "ufw" if vals.iter().copied().any(|v| v == "disable" || v == "reset") => {
                self.push(finding(id::BASH_FIREWALL, ev), node);
            }
            "setenforce"
                if vals
                    .iter()
                    .any(|v| *v == "0" || v.eq_ignore_ascii_case("permissive")) =>
            {
                self.push(finding(id::BASH_FIREWALL, ev), node);
            }
            "auditctl"
                if vals.windows(2).any(|w| w[0] == "-e" && w[1] == "0")
                    || vals.iter().copied().any(|v| v == "-D") =>
            {
                self.push(finding(id::BASH_FIREWALL, ev), node);
            }
            "aa-teardown" => self.push(finding(id::BASH_FIREWALL, ev), node),
            "systemctl" | "service" => {
                let stop = vals
                    .iter()
                    .any(|v| matches!(*v, "stop" | "disable" | "mask" | "kill"));
                let guard = vals.iter().copied().any(|v| {
                    let v = v.trim_end_matches(".service");
                    matches!(
                        v,
                        "firewalld"
                            | "ufw"
                            | "apparmor"
                            | "auditd"
                            | "iptables"
                            | "nftables"
                            | "selinux"
                            | "falco"
                            | "osqueryd"
                    )
                });
                if stop && guard {
                    self.push(finding(id::BASH_FIREWALL, ev), node);
                }
            }
            "nc" | "ncat" | "netcat" => {
                if opts.iter().any(|o| {
                    matches!(*o, "-e" | "-c" | "--exec" | "--sh-exec" | "--lua-exec")
                        || (o.starts_with('-')
                            && !o.starts_with("--")
                            && o.len() > 2
                            && o.contains('e'))
                }) {
                    self.push(finding(id::BASH_REVERSE_SHELL, ev), node);
                }
            }
            "socat" => {
                if vals.iter().copied().any(|v| {
                    let l = v.to_ascii_lowercase();
                    l.contains("exec:") || l.contains("system:")
                }) {
                    self.push(finding(id::BASH_REVERSE_SHELL, ev), node);
                }
            }
            _ => {}
        }
        if let Some(kind) = interp_kind(name) {
            self.interpreter(inv, kind, ev);
        }
    }
}

impl<'t> Inv<'t> {
    /// The invocation `argv` as it stands (its first word the command `name`), under the
    /// wrappers peeled off so far.
    fn whole(
        node: Node<'t>,
        argv: &[Word<'t>],
        name: Option<String>,
        assigns: Vec<(String, Word<'t>)>,
        wrappers: Vec<String>,
        wrapper_opts: Vec<(String, Word<'t>)>,
    ) -> Inv<'t> {
        Inv {
            node,
            name_word: argv.first().cloned(),
            name,
            args: argv[1..].to_vec(),
            assigns,
            wrappers,
            wrapper_opts,
        }
    }
}
