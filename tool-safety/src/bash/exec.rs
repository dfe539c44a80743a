//! Code that runs code: pipelines into shells, `eval`, `source`, interpreters, functions.

use tree_sitter::Node;

use crate::catalog::{finding, id, RuleId};
use crate::paths::{self};

use super::interp::*;
use super::text::*;
use super::walk::*;

impl<'t, 's: 't> Bash<'_, 's, 't> {
    /// What the commands under `root` do, for pipelines and substitutions.
    pub(super) fn subtree_flags(&mut self, root: Node<'t>) -> Flags {
        let mut f = Flags::default();
        let mut cursor = root.walk();
        let mut depth = 0usize;
        loop {
            let n = cursor.node();
            match n.kind() {
                "command" => {
                    let invs = match self.inv_cache.remove(&n.id()) {
                        Some(invs) => invs,
                        None => self.invocations(n),
                    };
                    for inv in &invs {
                        f.0 |= self.inv_flags(inv).0;
                    }
                    self.inv_cache.insert(n.id(), invs);
                }
                "file_redirect" => {
                    if let Some(d) = n.child_by_field_name("destination") {
                        if paths::is_credential_file(self.word(d).val()) {
                            f.0 |= Flags::CRED;
                        }
                    }
                }
                _ => {}
            }
            if cursor.goto_first_child() {
                depth += 1;
                continue;
            }
            loop {
                if depth == 0 {
                    return f;
                }
                if cursor.goto_next_sibling() {
                    break;
                }
                if !cursor.goto_parent() {
                    return f;
                }
                depth -= 1;
            }
        }
    }

    pub(super) fn inv_flags(&self, inv: &Inv<'t>) -> Flags {
        let mut f = 0;
        let Some(name) = inv.name.as_deref() else {
            return Flags(0);
        };
        let vals: Vec<&str> = inv.args.iter().map(|a| a.val()).collect();
        let has = |x: &str| vals.contains(&x);
        match name {
            "curl" | "wget" | "fetch" | "aria2c" | "http" | "https" | "lwp-download" | "GET" => {
                f |= Flags::DOWNLOAD | Flags::NET
            }
            "base64" | "base32" | "basenc" if has("-d") || has("--decode") || has("-D") => {
                f |= Flags::DECODE
            }
            "xxd" if vals.iter().any(|v| v.starts_with("-r")) => f |= Flags::DECODE,
            "openssl" if has("-d") || has("base64") => f |= Flags::DECODE,
            "openssl" if has("s_client") => f |= Flags::NET | Flags::NETCAT,
            "uudecode" | "gunzip" | "zcat" | "bzcat" | "xzcat" | "unxz" | "rev" => {
                f |= Flags::DECODE
            }
            "gzip" | "bzip2" | "xz" | "zstd" if has("-d") || has("--decompress") => {
                f |= Flags::DECODE
            }
            "printf" | "echo" if vals.iter().any(|v| v.contains("\\x") || v.contains("\\0")) => {
                f |= Flags::DECODE
            }
            "nc" | "ncat" | "netcat" | "socat" | "telnet" => f |= Flags::NET | Flags::NETCAT,
            n if NET_SEND.contains(&n) => f |= Flags::NET,
            _ => {}
        }
        if let Some(kind) = interp_kind(name) {
            f |= Flags::SHELL_ANY;
            if kind != Interp::Other || !vals.iter().any(|v| matches!(*v, "-e" | "-r" | "-p")) {
                let u = interp_use(kind, &inv.args);
                if u.stdin {
                    f |= Flags::SHELL_STDIN;
                }
            }
        }
        if matches!(name, "source" | ".")
            && vals
                .first()
                .is_some_and(|v| matches!(*v, "/dev/stdin" | "-"))
        {
            f |= Flags::SHELL_STDIN;
        }
        if vals
            .iter()
            .any(|v| paths::is_credential_file(strip_assign_prefix(v)))
        {
            f |= Flags::CRED;
        }
        Flags(f)
    }

    pub(super) fn pipeline(&mut self, n: Node<'t>) {
        let mut cursor = n.walk();
        let stages: Vec<Node<'t>> = n.named_children(&mut cursor).collect();
        let flags: Vec<Flags> = stages.iter().map(|s| self.subtree_flags(*s)).collect();
        let ev = self.text(n);
        let mut rules: Vec<RuleId> = Vec::new();
        for (i, a) in flags.iter().enumerate() {
            for b in &flags[i + 1..] {
                if a.has(Flags::DOWNLOAD) && b.has(Flags::SHELL_STDIN) {
                    rules.push(id::BASH_CURL_PIPE_SHELL);
                }
                if a.has(Flags::DECODE) && b.has(Flags::SHELL_STDIN) {
                    rules.push(id::BASH_DECODE_EXEC);
                }
                if a.has(Flags::CRED) && b.has(Flags::NET) {
                    rules.push(id::BASH_CRED_EXFIL);
                }
            }
        }
        if flags.iter().any(|f| f.has(Flags::SHELL_ANY))
            && flags.iter().any(|f| f.has(Flags::NETCAT))
        {
            rules.push(id::BASH_REVERSE_SHELL);
        }
        rules.dedup();
        if rules.is_empty() {
            // `printf 'CMD' | bash`: the shell runs what the stage before it prints.
            for (i, f) in flags.iter().enumerate().skip(1) {
                if !f.has(Flags::SHELL_STDIN) {
                    continue;
                }
                let prev = stages[i - 1];
                match (prev.kind() == "command")
                    .then(|| self.printed(prev))
                    .flatten()
                {
                    Some(code) => self.nested(Interp::Shell, &code, n),
                    None => self.dynamic(n, "shell running piped input"),
                }
            }
        }
        for r in rules {
            self.push(finding(r, ev), n);
        }
    }

    /// Code produced at run time by `node` (a substitution or dynamic word) is about to run.
    pub(super) fn generated_code(
        &mut self,
        node: Node<'t>,
        ev: &str,
        at: Node<'t>,
        default_rule: RuleId,
    ) {
        let f = self.subtree_flags(node);
        let rule = if f.has(Flags::DOWNLOAD) {
            id::BASH_CURL_PIPE_SHELL
        } else if f.has(Flags::DECODE) {
            id::BASH_DECODE_EXEC
        } else {
            default_rule
        };
        self.push(finding(rule, ev), at);
    }

    /// Code the scan cannot see runs at `node`.
    pub(super) fn dynamic(&mut self, node: Node<'t>, form: &str) {
        let at = self.base.unwrap_or(pos(node));
        let ev = self.text(node);
        self.sink.effect(
            crate::effects::EffectKind::DynamicExec {
                form: form.to_owned(),
            },
            crate::effects::EffectTarget::Unknown,
            at,
            ev,
        );
    }

    pub(super) fn eval(&mut self, inv: &Inv<'t>, ev: &str) {
        self.push(finding(id::BASH_EVAL, ev), inv.node);
        if inv.args.iter().all(|a| a.lit.is_some()) {
            let code = inv
                .args
                .iter()
                .map(|a| a.val())
                .collect::<Vec<_>>()
                .join(" ");
            self.nested(Interp::Shell, &code, inv.node);
            // Resolved text that was downloaded or decoded keeps its rule.
            for a in &inv.args {
                let f = self.subtree_flags(a.node);
                if f.has(Flags::DOWNLOAD) || f.has(Flags::DECODE) {
                    self.generated_code(a.node, ev, inv.node, id::BASH_EVAL);
                }
            }
        } else {
            self.dynamic(inv.node, "eval of built text");
            for a in &inv.args {
                if a.lit.is_none() {
                    self.generated_code(a.node, ev, inv.node, id::BASH_EVAL);
                }
            }
        }
    }

    pub(super) fn exec_source(&mut self, a: &Word<'t>, ev: &str, node: Node<'t>) {
        if a.lit.is_some() {
            return;
        }
        if a.node.kind() == "process_substitution" || a.approx.contains("$(") {
            self.generated_code(a.node, ev, node, id::BASH_INDIRECT_EXEC);
            self.dynamic(node, "sources generated code");
        }
    }

    pub(super) fn interpreter(&mut self, inv: &Inv<'t>, kind: Interp, ev: &str) {
        let u = interp_use(kind, &inv.args);
        if inv.wrappers.iter().any(|w| w == "xargs") {
            // `xargs -a cmds.txt sh -c`, `xargs -I{} sh -c '{}'`: the code is the input's items.
            let replace: Vec<&str> = inv
                .wrapper_opts
                .iter()
                .filter(|(o, _)| matches!(o.as_str(), "-I" | "-i" | "--replace"))
                .map(|(_, w)| w.val())
                .collect();
            let from_input = u.code_missing
                || u.code
                    .is_some_and(|c| replace.iter().any(|r| !r.is_empty() && c.val().contains(r)));
            if from_input && kind != Interp::Other {
                self.push(finding(id::BASH_INDIRECT_EXEC, ev), inv.node);
            }
        }
        if let Some(code) = &u.code {
            match &code.lit {
                Some(text) => {
                    if kind == Interp::Other {
                        let name = inv.name.as_deref().unwrap_or("interpreter");
                        if !(name == "perl" && trivial_perl(text)) {
                            self.foreign_code(inv, name, Some(text));
                        }
                        // Inline perl/ruby/node code is not parsed; shelling out from it needs a human.
                        if [
                            "system",
                            "exec",
                            "`",
                            "spawn",
                            "popen",
                            "child_process",
                            "qx",
                        ]
                        .iter()
                        .any(|k| text.contains(k))
                        {
                            self.push(finding(id::BASH_INDIRECT_EXEC, ev), inv.node);
                        }
                    } else {
                        self.nested(kind, text, inv.node);
                    }
                }
                None => {
                    let name = inv.name.as_deref().unwrap_or("interpreter");
                    self.dynamic(inv.node, &format!("{name} running built code"));
                    self.generated_code(code.node, ev, inv.node, id::BASH_INDIRECT_EXEC);
                }
            }
        }
        for a in &inv.args {
            if a.node.kind() == "process_substitution" {
                self.generated_code(a.node, ev, inv.node, id::BASH_INDIRECT_EXEC);
            }
        }
        if !u.stdin {
            return;
        }
        // Heredocs and here-strings feeding the interpreter are its program.
        let mut redirects = Vec::new();
        let mut cursor = inv.node.walk();
        redirects.extend(inv.node.children_by_field_name("redirect", &mut cursor));
        if let Some(p) = inv
            .node
            .parent()
            .filter(|p| p.kind() == "redirected_statement")
        {
            let mut c2 = p.walk();
            redirects.extend(p.children_by_field_name("redirect", &mut c2));
        }
        for r in redirects {
            match r.kind() {
                "heredoc_redirect" => {
                    let mut c = r.walk();
                    let body = r
                        .named_children(&mut c)
                        .find(|x| x.kind() == "heredoc_body");
                    if let Some(body) = body {
                        let text = self.text(body).to_owned();
                        if kind != Interp::Other {
                            self.nested(kind, &text, inv.node);
                        }
                        if body.named_child_count() > 0 {
                            self.generated_code(body, ev, inv.node, id::BASH_INDIRECT_EXEC);
                        }
                    }
                }
                "herestring_redirect" => {
                    if let Some(wn) = r.named_child(0) {
                        let w = self.word(wn);
                        match &w.lit {
                            Some(t) if kind != Interp::Other => self.nested(kind, t, inv.node),
                            Some(_) => {}
                            None => self.generated_code(wn, ev, inv.node, id::BASH_INDIRECT_EXEC),
                        }
                    }
                }
                "file_redirect" => {
                    if let Some(d) = r.child_by_field_name("destination") {
                        if d.kind() == "process_substitution" {
                            self.generated_code(d, ev, inv.node, id::BASH_INDIRECT_EXEC);
                        }
                    }
                }
                _ => {}
            }
        }
    }

    pub(super) fn function(&mut self, n: Node<'t>) {
        let (Some(name), Some(body)) =
            (n.child_by_field_name("name"), n.child_by_field_name("body"))
        else {
            return;
        };
        let fname = self.text(name).to_owned();
        self.functions.insert(fname.clone(), body);
        for d in descendants(body) {
            if d.kind() != "command" {
                continue;
            }
            let called =
                d.child_by_field_name("name").map(|c| self.text(c)) == Some(fname.as_str());
            if !called {
                continue;
            }
            let mut cur = d;
            let mut bomb = false;
            while cur != body {
                if cur.kind() == "pipeline" {
                    bomb = true;
                }
                if cur
                    .next_sibling()
                    .is_some_and(|s| !s.is_named() && self.text(s) == "&")
                {
                    bomb = true;
                }
                match cur.parent() {
                    Some(p) => cur = p,
                    None => break,
                }
            }
            if bomb {
                self.push(finding(id::BASH_FORK_BOMB, self.text(n)), n);
                return;
            }
        }
    }

    /// A call of a function defined in the script, with literal arguments: its body is walked
    /// again with `$1`, `$2`, ... `$@` bound, so `f() { rm -rf "$1"; }; f /` deletes `/`.
    pub(super) fn inline_call(&mut self, inv: &Inv<'t>) {
        let Some(body) = inv
            .name
            .as_deref()
            .and_then(|n| self.functions.get(n))
            .copied()
        else {
            return;
        };
        if self.inlining >= MAX_INLINE_DEPTH || self.inlined >= MAX_INLINED {
            return;
        }
        let mut args: Vec<String> = Vec::new();
        for a in &inv.args {
            match self.values(a.node) {
                Some(mut v) if v.len() == 1 => args.push(v.remove(0)),
                _ => return,
            }
        }
        let mut names: Vec<String> = (1..=args.len()).map(|i| i.to_string()).collect();
        names.extend(["@".to_owned(), "*".to_owned(), "#".to_owned()]);
        let saved: Vec<(String, Option<Vec<String>>)> = names
            .iter()
            .map(|n| (n.clone(), self.vars.get(n).cloned()))
            .collect();
        for (i, a) in args.iter().enumerate() {
            self.vars.insert((i + 1).to_string(), vec![a.clone()]);
        }
        if args.len() == 1 {
            self.vars.insert("@".to_owned(), args.clone());
        } else {
            self.vars.remove("@");
        }
        let saved_at = self.arrays.insert("@".to_owned(), args.clone());
        self.vars.insert("*".to_owned(), vec![args.join(" ")]);
        self.vars
            .insert("#".to_owned(), vec![args.len().to_string()]);
        self.inlining += 1;
        self.inlined += 1;
        self.visit(body);
        self.inlining -= 1;
        match saved_at {
            Some(v) => self.arrays.insert("@".to_owned(), v),
            None => self.arrays.remove("@"),
        };
        for (n, v) in saved {
            match v {
                Some(v) => self.vars.insert(n, v),
                None => self.vars.remove(&n),
            };
        }
    }
}
