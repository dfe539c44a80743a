//! Processes and the host: `psutil` process objects signalled (`kill`, `terminate`, `suspend`,
//! `send_signal`) and `os.kill` of ids, every process when they come from iterating the process
//! list (`psutil.process_iter()`, `psutil.pids()`, the entries of `/proc`), and reads of
//! host information (process lists, CPU, memory, disks, network interfaces, users, `uname`).

use ruff_python_ast::{Expr, ExprCall, Stmt, StmtFunctionDef};
use ruff_text_size::Ranged;

use crate::effects::{every_process, EffectKind, EffectTarget};

use super::walk::*;

/// What a process object yielded by iterating every process resolves to.
pub(super) const EVERY_PROCESS_OBJ: &str = "psutil.every_process";

/// Host information each call reads, by qualified name.
fn host_info(q: &str) -> Option<&'static str> {
    Some(match q {
        "psutil.process_iter" | "psutil.pids" | "psutil.pid_exists" => "process list",
        "psutil.cpu_percent"
        | "psutil.cpu_count"
        | "psutil.cpu_times"
        | "psutil.cpu_freq"
        | "psutil.cpu_stats"
        | "psutil.cpu_times_percent"
        | "psutil.getloadavg" => "cpu",
        "psutil.virtual_memory" | "psutil.swap_memory" => "memory",
        "psutil.disk_partitions" | "psutil.disk_usage" | "psutil.disk_io_counters" => "disks",
        "psutil.net_if_addrs" | "psutil.net_if_stats" | "psutil.net_io_counters" => {
            "network interfaces"
        }
        "psutil.net_connections" => "network connections",
        "psutil.users" => "users",
        "psutil.boot_time"
        | "psutil.sensors_temperatures"
        | "psutil.sensors_battery"
        | "psutil.sensors_fans" => "system",
        // The whole record, node name included: reviewed, as bash's `hostnamectl` is.
        "platform.uname" | "platform.node" | "os.uname" | "platform.freedesktop_os_release" => {
            "system"
        }
        // One field each, how code picks a build or a code path: the kernel, listed and not
        // reviewed, as bash's `uname -s`/`-m`/`-r` are (see `QUIET_HOST_INFO`).
        "platform.system"
        | "platform.machine"
        | "platform.release"
        | "platform.version"
        | "platform.architecture"
        | "platform.processor"
        | "platform.platform" => "kernel",
        _ => return None,
    })
}

impl<'t, 's: 't> Py<'_, 's> {
    /// `true` when `e` yields every process: `psutil.process_iter()`, a list or sort of it, a
    /// comprehension over it, or a name bound to one of those.
    pub(super) fn lists_processes(&self, e: &'t Expr) -> bool {
        match e {
            Expr::Name(n) => self.proc_lists.contains(n.id.as_str()),
            Expr::Call(c) => match self.resolve(&c.func, 0).as_deref() {
                Some("psutil.process_iter" | "psutil.pids") => true,
                // The entries of `/proc`: every process id.
                Some("os.listdir" | "os.scandir") => c
                    .arguments
                    .args
                    .first()
                    .and_then(|a| self.path_value(a, 0))
                    .is_some_and(|p| p.trim_end_matches('/') == "/proc"),
                Some(f) if self.proc_lists.contains(&format!("{f}()")) => true,
                Some("list" | "sorted" | "filter" | "tuple") => {
                    c.arguments.args.iter().any(|a| self.lists_processes(a))
                }
                _ => false,
            },
            Expr::ListComp(l) => l.generators.iter().any(|g| self.lists_processes(&g.iter)),
            Expr::Generator(l) => l.generators.iter().any(|g| self.lists_processes(&g.iter)),
            _ => false,
        }
    }

    /// `for proc in psutil.process_iter()`: `proc` stands for every process;
    /// `for c in p.children()`: `c` for a process of `p`'s.
    pub(super) fn bind_loop_target(&mut self, target: &'t Expr, iter: &'t Expr) {
        let Expr::Name(n) = target else { return };
        let name = n.id.as_str().to_owned();
        if self.lists_processes(iter) {
            self.aliases.insert(name, EVERY_PROCESS_OBJ.to_owned());
            return;
        }
        if let Expr::Call(c) = iter {
            if let Expr::Attribute(a) = &*c.func {
                if a.attr.as_str() == "children"
                    && self.resolve(&a.value, 0).as_deref() == Some("psutil.Process")
                {
                    self.aliases.insert(name, "psutil.Process".to_owned());
                    return;
                }
            }
        }
        if self
            .aliases
            .get(&name)
            .is_some_and(|q| q.starts_with("psutil."))
        {
            self.aliases.remove(&name);
        }
    }

    /// `def victims(): return [p for p in psutil.process_iter() ...]`: calls of `victims()`
    /// yield every process.
    pub(super) fn note_process_function(&mut self, f: &'t StmtFunctionDef) {
        let returns = f.body.iter().any(|s| {
            matches!(s, Stmt::Return(r) if r.value.as_deref().is_some_and(|v| self.lists_processes(v)))
        });
        let key = format!("{}()", f.name.as_str());
        if returns {
            self.proc_lists.insert(key);
        } else {
            self.proc_lists.remove(&key);
        }
    }

    /// The process and host effects of `q(...)`.
    pub(super) fn process_call(&mut self, q: &str, c: &'t ExprCall) {
        if let Some(what) = host_info(q) {
            let at = self.at(c.range());
            let ev = self.text(c.range()).to_owned();
            self.sink.effect(
                EffectKind::HostInfo {
                    what: what.to_owned(),
                },
                EffectTarget::Unknown,
                at,
                &ev,
            );
            return;
        }
        let Some((obj, method)) = q.rsplit_once('.') else {
            return;
        };
        if !matches!(method, "kill" | "terminate" | "suspend" | "send_signal") {
            return;
        }
        let target = match obj {
            EVERY_PROCESS_OBJ => every_process(None),
            "psutil.Process" => {
                // `psutil.Process(1234).kill()`: the pid; a name bound to one: its text.
                let Expr::Attribute(a) = &*c.func else { return };
                match &*a.value {
                    Expr::Call(p) => p.arguments.args.first().map_or_else(
                        || "own process".to_owned(),
                        |x| self.text(x.range()).to_owned(),
                    ),
                    x => self.text(x.range()).to_owned(),
                }
            }
            _ => return,
        };
        if target == "own process" || target.contains("getpid") {
            return;
        }
        let at = self.at(c.range());
        let ev = self.text(c.range()).to_owned();
        self.sink.effect(
            EffectKind::ProcessControl { target },
            EffectTarget::Unknown,
            at,
            &ev,
        );
    }

    /// `os.kill(proc.pid, ...)`, `os.kill(int(pid), ...)` with `proc` or `pid` from iterating
    /// every process.
    pub(super) fn signals_every_process(&self, pid: &'t Expr) -> bool {
        if let Expr::Call(c) = pid {
            if self.resolve(&c.func, 0).as_deref() == Some("int") {
                return c
                    .arguments
                    .args
                    .first()
                    .is_some_and(|a| self.signals_every_process(a));
            }
        }
        self.resolve(pid, 0)
            .is_some_and(|q| q.starts_with(EVERY_PROCESS_OBJ))
    }
}
