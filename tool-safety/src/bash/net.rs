//! Network commands: `curl`/`wget` and kin (URLs, uploads, downloads), `nc`/`ssh` and kin (hosts).

use tree_sitter::Node;

use crate::effects::{is_url, url_host, Direction, EffectKind, EffectTarget};
use crate::judge::join_norm;

use super::cmd::Cmd;
use super::text::Word;
use super::walk::{pos, Bash, Inv};

/// `true` for the commands [`Bash::net_command`] knows.
pub(super) fn is_net_command(name: &str) -> bool {
    matches!(
        name,
        "curl"
            | "wget"
            | "aria2c"
            | "http"
            | "https"
            | "nc"
            | "ncat"
            | "netcat"
            | "socat"
            | "telnet"
            | "ssh"
            | "ftp"
            | "sftp"
    )
}

impl<'t, 's: 't> Bash<'_, 's, 't> {
    /// `/dev/tcp/HOST/PORT`, `/dev/udp/HOST/PORT`: bash opens a connection to HOST.
    pub(super) fn dev_net(&mut self, n: Node<'t>) {
        let t = self.text(n);
        let Some(i) = t.find("/dev/tcp/").or_else(|| t.find("/dev/udp/")) else {
            return;
        };
        let mut parts = t[i + 9..].split('/');
        let host = parts.next().filter(|h| !h.is_empty() && !h.contains('$'));
        let port = parts.next().and_then(|p| {
            p.trim_end_matches(|c: char| !c.is_ascii_digit())
                .parse::<u16>()
                .ok()
        });
        let at = self.base.unwrap_or(pos(n));
        let host = host.map(str::to_owned);
        self.sink
            .network(None, host, port, Direction::Both, None, at, t);
    }

    /// The effects of a network command; `false` when `c` is not one.
    pub(super) fn net_command(&mut self, c: &Cmd<'_, 't>) -> bool {
        let (inv, name, at, ev) = (c.inv, c.name, c.at, c.ev);
        let operands = &c.operands;
        match name {
            "curl" | "wget" | "aria2c" | "http" | "https" => self.http_effects(inv, name, at, ev),
            "nc" | "ncat" | "netcat" | "socat" | "telnet" | "ssh" | "ftp" | "sftp" => {
                let host = operands
                    .iter()
                    .map(|w| w.val())
                    .find(|v| !v.starts_with('-'));
                let (host, port) = host.map_or((None, None), |h| url_host(&format!("x://{h}")));
                self.sink
                    .network(None, host, port, Direction::Both, None, at, ev);
            }
            _ => return false,
        }
        true
    }

    /// `curl` / `wget`: the URLs, what is uploaded, where downloads land.
    fn http_effects(&mut self, inv: &Inv<'t>, name: &str, at: (u32, u32), ev: &str) {
        let args = &inv.args;
        let mut sends: Option<String> = None;
        let mut out_file: Option<&Word<'t>> = None;
        let mut remote_name = false;
        let mut urls: Vec<String> = Vec::new();
        let mut i = 0;
        while i < args.len() {
            let v = args[i].val();
            let next = args.get(i + 1);
            match v {
                "-d" | "--data" | "--data-binary" | "--data-raw" | "--data-urlencode" | "-F"
                | "--form" | "--post-file" | "--body-file" | "-T" | "--upload-file" => {
                    if let Some(n) = next {
                        let resolved = self.values(n.node).and_then(|v| v.into_iter().next());
                        let d = resolved.as_deref().unwrap_or(n.val());
                        let file = if matches!(
                            v,
                            "-T" | "--upload-file" | "--post-file" | "--body-file"
                        ) {
                            Some(d)
                        } else {
                            d.split_once('@')
                                .map(|(_, f)| f)
                                .or_else(|| d.strip_prefix('<'))
                        };
                        if let Some(f) = file.filter(|f| !f.is_empty()) {
                            let target = self.str_target(f);
                            let first = target.values().first().cloned();
                            sends = Some(first.unwrap_or_else(|| f.to_owned()));
                            self.sink.effect(EffectKind::FileRead, target, at, ev);
                        } else if d.contains("$(…)") {
                            sends = Some("command output".to_owned());
                        }
                    }
                    i += 2;
                    continue;
                }
                "-o" | "--output" | "-O" if name == "wget" || v != "-O" => {
                    out_file = next;
                    i += 2;
                    continue;
                }
                "-O" | "--remote-name" => remote_name = true,
                _ => {
                    if let Some(vals) = self.values(args[i].node) {
                        urls.extend(vals.into_iter().filter(|u| is_url(u)));
                    } else if is_url(v) {
                        urls.push(v.to_owned());
                    }
                }
            }
            i += 1;
        }
        if let Some(f) = v_data(args) {
            let target = self.str_target(&f);
            sends.get_or_insert(target.values().first().cloned().unwrap_or(f));
            self.sink.effect(EffectKind::FileRead, target, at, ev);
        }
        let direction = if sends.is_some() {
            Direction::Upload
        } else {
            Direction::Download
        };
        if urls.is_empty() {
            self.sink
                .network(None, None, None, direction, sends.clone(), at, ev);
        }
        for u in &urls {
            let (host, port) = url_host(u);
            self.sink.network(
                Some(u.clone()),
                host,
                port,
                direction,
                sends.clone(),
                at,
                ev,
            );
        }
        if direction == Direction::Download {
            if let Some(w) = out_file {
                if w.val() != "-" {
                    self.file_effect(EffectKind::FileWrite, w, at, ev);
                }
            } else if remote_name || name == "wget" {
                for u in &urls {
                    let base = u
                        .rsplit('/')
                        .next()
                        .filter(|b| !b.is_empty())
                        .unwrap_or("index.html");
                    let w = Word {
                        node: inv.node,
                        lit: Some(base.to_owned()),
                        approx: String::new(),
                        disguised: false,
                    };
                    let target = match &w.lit {
                        Some(b) => match &self.cwd {
                            Some(c) => EffectTarget::Resolved(join_norm(c, b)),
                            None => EffectTarget::Unknown,
                        },
                        None => EffectTarget::Unknown,
                    };
                    self.sink.effect(EffectKind::FileWrite, target, at, ev);
                }
            }
        }
    }
}

/// `--data=@file` and `-d@file` spelt as one word.
fn v_data(args: &[Word<'_>]) -> Option<String> {
    args.iter().find_map(|a| {
        let v = a.val();
        [
            "--data-binary=@",
            "--data=@",
            "-d@",
            "--upload-file=",
            "--post-file=",
            "--body-file=",
            "-T",
        ]
        .iter()
        .find_map(|p| v.strip_prefix(p))
        .filter(|f| !f.is_empty() && !f.starts_with('-'))
        .map(str::to_owned)
    })
}
