//! What a command reads of the host (process lists, interfaces, CPU, memory), how much it
//! allocates, and the programs of interpreters the scanner has no parser for.

use tree_sitter::Node;

#[cfg(doc)]
use crate::effects::QUIET_HOST_INFO;
use crate::effects::{payload_runs_code, DataSource, EffectKind, EffectTarget};

use super::text::{split_opts, Word};
use super::walk::{pos, Bash, Inv};

/// A size argument (`10G`, `512M`, `1k`, `4096`, `1GiB`, `2GB`) in bytes.
pub(super) fn parse_size(v: &str) -> Option<u64> {
    let v = v.trim();
    let digits = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    let n: u64 = v.get(..digits)?.parse().ok()?;
    let unit = v[digits..].to_ascii_lowercase();
    let mul: u64 = match unit.trim_end_matches("ib").trim_end_matches('b') {
        "" if unit.is_empty() || unit == "b" => 1,
        "" => return None,
        "c" => 1,
        "w" => 2,
        "k" => 1 << 10,
        "m" => 1 << 20,
        "g" => 1 << 30,
        "t" => 1 << 40,
        "p" => 1 << 50,
        _ => return None,
    };
    Some(n.saturating_mul(mul))
}

/// Host information a command reads, when it reads some ([`QUIET_HOST_INFO`] names the kinds
/// every build script reads: the kernel's name, one process looked up).
fn host_info(name: &str, vals: &[&str], piped_to_filter: bool) -> Option<&'static str> {
    let first = vals.iter().find(|v| !v.starts_with('-')).copied();
    Some(match name {
        "ps" if piped_to_filter => "process lookup",
        "ps" | "pstree" | "htop" | "atop" => "process list",
        "top" if vals.iter().any(|v| v.starts_with("-b") || *v == "-n") => "process list",
        "lsof" | "fuser" => "open files",
        "netstat" | "ss" | "ifconfig" | "iwconfig" | "arp" | "route" | "nmcli"
        | "iptables-save" => "network interfaces",
        "ip" if matches!(
            first,
            Some("a" | "addr" | "address" | "link" | "l" | "route" | "r" | "neigh" | "n" | "-br")
        ) || first.is_none() =>
        {
            "network interfaces"
        }
        "lscpu" | "cpuinfo" => "cpu",
        "free" | "vmstat" => "memory",
        "lshw" | "dmidecode" | "lspci" | "lsusb" | "lsblk" | "hwinfo" | "inxi" => "hardware",
        "w" | "who" | "last" | "lastlog" | "users" | "finger" => "users",
        // The kernel's name, release and machine (and with `-a` the node name): what
        // configure scripts and Makefiles read; listed, not reviewed (see QUIET_HOST_INFO).
        "uname" => "kernel",
        "hostname"
            if vals
                .iter()
                .any(|v| matches!(*v, "-I" | "-i" | "--all-ip-addresses" | "--ip-address")) =>
        {
            "network interfaces"
        }
        "hostnamectl" | "systemd-detect-virt" | "neofetch" => "system",
        "sysctl" if vals.contains(&"-a") => "system",
        _ => return None,
    })
}

/// `/proc` files that describe the host (not the script's own process).
fn proc_info(path: &str) -> Option<&'static str> {
    let rest = path.strip_prefix("/proc/")?;
    if rest.starts_with("self") || rest.starts_with("thread-self") {
        return None;
    }
    Some(match rest.split('/').next().unwrap_or("") {
        "cpuinfo" | "stat" | "loadavg" => "cpu",
        "meminfo" | "swaps" | "vmstat" => "memory",
        "net" => "network interfaces",
        "version" | "cmdline" | "uptime" | "modules" | "mounts" | "partitions" => "system",
        p if p.chars().all(|c| c.is_ascii_digit()) => "process list",
        _ => "system",
    })
}

/// Libraries of interpreters without a parser here whose loaders run code while decoding.
const FOREIGN_DECODERS: &[(&str, &str)] = &[
    ("Marshal.load", "ruby marshal"),
    ("YAML.load", "ruby yaml"),
    ("unserialize(", "php serialize"),
    ("Storable", "perl storable"),
    ("thaw(", "perl storable"),
    ("node-serialize", "node-serialize"),
    ("unserialize", "php serialize"),
];

impl<'t, 's: 't> Bash<'_, 's, 't> {
    /// `true` when the command is a stage of a pipeline whose next stage filters lines (`grep`).
    fn piped_to_filter(&self, node: Node<'t>) -> bool {
        let Some(p) = node.parent().filter(|p| p.kind() == "pipeline") else {
            return false;
        };
        let mut next = node.next_named_sibling();
        while let Some(n) = next {
            if n.kind() == "command" {
                let name = n.child_by_field_name("name").map(|c| self.text(c));
                return matches!(
                    name,
                    Some("grep" | "egrep" | "fgrep" | "rg" | "wc" | "head")
                );
            }
            next = n.next_named_sibling();
        }
        let _ = p;
        false
    }

    /// `true` when the command reads its input from a network download earlier in its pipeline.
    fn fed_by_download(&self, node: Node<'t>) -> bool {
        let Some(p) = node.parent().filter(|p| p.kind() == "pipeline") else {
            return false;
        };
        let mut cursor = p.walk();
        for c in p.named_children(&mut cursor) {
            if c == node {
                return false;
            }
            if c.kind() == "command" {
                let name = c.child_by_field_name("name").map(|n| self.text(n));
                if matches!(name, Some("curl" | "wget" | "nc" | "ncat" | "socat")) {
                    return true;
                }
            }
        }
        false
    }

    /// Host information, allocation and disk-filling effects of one command.
    pub(super) fn system_effects(&mut self, inv: &Inv<'t>, name: &str) {
        let at = self.base.unwrap_or(pos(inv.node));
        let ev = self.text(inv.node);
        let vals: Vec<&str> = inv.args.iter().map(Word::val).collect();
        let filtered = self.piped_to_filter(inv.node);
        if let Some(what) = host_info(name, &vals, filtered) {
            self.sink.effect(
                EffectKind::HostInfo {
                    what: what.to_owned(),
                },
                EffectTarget::Resolved(name.to_owned()),
                at,
                ev,
            );
        }
        if matches!(
            name,
            "cat" | "head" | "tail" | "less" | "more" | "grep" | "awk" | "cut" | "sort"
        ) {
            for v in vals.iter().filter(|v| !v.starts_with('-')) {
                if let Some(what) = proc_info(v) {
                    self.sink.effect(
                        EffectKind::HostInfo {
                            what: what.to_owned(),
                        },
                        EffectTarget::Resolved((*v).to_owned()),
                        at,
                        ev,
                    );
                }
            }
        }
        if let Some(bytes) = self.allocation(name, &vals, inv.node) {
            self.sink.effect(
                EffectKind::Allocation { bytes },
                EffectTarget::Resolved(name.to_owned()),
                at,
                ev,
            );
        }
    }

    /// The size a command allocates or fills, when large or unbounded: `Some(None)` unbounded.
    fn allocation(&self, name: &str, vals: &[&str], node: Node<'t>) -> Option<Option<u64>> {
        let (opts, operands) = split_opts(vals);
        let opt_value = |flags: &[&str]| {
            vals.iter().enumerate().find_map(|(i, v)| {
                flags.iter().find_map(|f| {
                    if v == f {
                        vals.get(i + 1).copied()
                    } else {
                        v.strip_prefix(f)
                            .filter(|r| !r.is_empty())
                            .map(|r| r.trim_start_matches('='))
                    }
                })
            })
        };
        match name {
            "fallocate" => opt_value(&["-l", "--length"])
                .and_then(parse_size)
                .map(Some),
            "truncate" => opt_value(&["-s", "--size"])
                .and_then(|s| parse_size(s.trim_start_matches('+')))
                .map(Some),
            "dd" => {
                let get = |k: &str| {
                    vals.iter()
                        .find_map(|v| v.strip_prefix(k).and_then(|r| r.strip_prefix('=')))
                };
                let bs = get("bs")
                    .or_else(|| get("obs"))
                    .map_or(Some(512), parse_size)?;
                match get("count") {
                    Some(c) => Some(Some(parse_size(c)?.saturating_mul(bs))),
                    // No count from an endless source: fills until the disk is full.
                    None if get("if").is_some_and(|f| {
                        matches!(f, "/dev/zero" | "/dev/urandom" | "/dev/random")
                    }) =>
                    {
                        Some(None)
                    }
                    None => None,
                }
            }
            "head" => {
                let c = opt_value(&["-c", "--bytes"])?;
                Some(Some(parse_size(c)?))
            }
            "seq" => {
                let last: u64 = operands.last()?.parse().ok()?;
                // Each number printed with its line end.
                let digits = u64::from(last.checked_ilog10().unwrap_or(0) + 2);
                Some(Some(last.saturating_mul(digits)))
            }
            "yes" if !opts.contains(&"--help") => {
                // `yes | cmd` answers prompts; `yes > file` fills the disk.
                let redirected = node
                    .parent()
                    .filter(|p| p.kind() == "redirected_statement")
                    .is_some();
                redirected.then_some(None)
            }
            "stress" | "stress-ng" => Some(
                opt_value(&["--vm-bytes", "--bigheap-growth", "--hdd-bytes"]).and_then(parse_size),
            ),
            _ => None,
        }
    }

    /// Inline code of an interpreter the scanner has no parser for (`perl -e`, `ruby -e`,
    /// `node -e`, `php -r`): code the scan cannot see, and what it visibly deserializes.
    pub(super) fn foreign_code(&mut self, inv: &Inv<'t>, name: &str, code: Option<&str>) {
        let at = self.base.unwrap_or(pos(inv.node));
        let ev = self.text(inv.node);
        let flag = match name {
            "php" => "-r",
            _ => "-e",
        };
        if let Some(text) = code {
            for (needle, format) in FOREIGN_DECODERS {
                if text.contains(needle) {
                    let source = if self.fed_by_download(inv.node) || text.contains("http") {
                        DataSource::Network
                    } else if payload_runs_code(text) {
                        DataSource::LiteralCode
                    } else {
                        DataSource::Unknown
                    };
                    self.sink.effect(
                        EffectKind::Deserialize {
                            format: (*format).to_owned(),
                            source,
                        },
                        EffectTarget::Unknown,
                        at,
                        ev,
                    );
                    break;
                }
            }
        }
        self.sink.effect(
            EffectKind::DynamicExec {
                form: format!("{name} {flag}"),
            },
            EffectTarget::Resolved(name.to_owned()),
            at,
            ev,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("10G"), Some(10 << 30));
        assert_eq!(parse_size("1GiB"), Some(1 << 30));
        assert_eq!(parse_size("512M"), Some(512 << 20));
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("1x"), None);
        assert_eq!(parse_size(""), None);
    }
}
