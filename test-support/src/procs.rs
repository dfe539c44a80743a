//! Processes a test starts and looks for: `sleep` markers unique to this test run, the live
//! processes of this run that carry one, a sentinel process outside the sandbox, a program's
//! stdout read as JSON lines, and this process's threads by name.

use std::process::{Child, Command, Output};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The `/proc` directories of this process's threads whose name starts with `prefix` (all of
/// them for `""`); empty where there is no `/proc`.
pub fn threads_named(prefix: &str) -> Vec<std::path::PathBuf> {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    tasks
        .filter_map(|t| t.ok().map(|t| t.path()))
        .filter(|dir| {
            std::fs::read_to_string(dir.join("comm")).is_ok_and(|name| name.starts_with(prefix))
        })
        .collect()
}

/// The suffix [`per_run`] gives every marker: `.PID` of this test process.
fn token() -> String {
    format!(".{}", std::process::id())
}

/// `command` with every `sleep 3NNN` made unique to this test run (`sleep 3NNN.PID`), so that a
/// stray sleeper of another run on the same machine is never mistaken for one of ours.
pub fn per_run(command: &str) -> String {
    let token = token();
    let mut out = String::new();
    let mut rest = command;
    while let Some(i) = rest.find("sleep 3") {
        let digits = rest[i + 6..]
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len() - i - 6);
        out.push_str(&rest[..i + 6 + digits]);
        out.push_str(&token);
        rest = &rest[i + 6 + digits..];
    }
    out.push_str(rest);
    out
}

/// Live processes of this run (see [`per_run`]) whose command line contains `marker`, each as
/// `PID: command line`.
pub fn of_this_run(marker: &str) -> Vec<String> {
    let token = token();
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let name = entry.file_name();
        if !name.to_string_lossy().bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) {
            let text = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            if text.contains(marker) && text.contains(&token) {
                found.push(format!("{}: {text}", name.to_string_lossy()));
            }
        }
    }
    found
}

/// [`of_this_run`] once none is left or `within` has passed.
pub fn wait_until_gone(marker: &str, within: Duration) -> Vec<String> {
    let start = Instant::now();
    loop {
        let left = of_this_run(marker);
        if left.is_empty() || start.elapsed() > within {
            return left;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A `sleep` outside the sandbox that the test owns and kills when dropped: what a confined
/// program must not be able to kill.
pub struct Sentinel(Child);

impl Sentinel {
    /// `sleep SECS`.
    pub fn start(secs: &str) -> Sentinel {
        Sentinel(Command::new("sleep").arg(secs).spawn().expect("sleep"))
    }

    pub fn pid(&self) -> u32 {
        self.0.id()
    }

    pub fn alive(&mut self) -> bool {
        matches!(self.0.try_wait(), Ok(None))
    }
}

impl Drop for Sentinel {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A program's stdout as JSON lines, after checking it exited 0.
pub fn json_lines(out: &Output) -> Vec<Value> {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

/// Run `program` with `args`, `stdin` written to it: its exit code, stdout and stderr.
pub fn run_with_stdin(program: &str, args: &[&str], stdin: &str) -> (i32, String, String) {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(stdin.as_bytes())
        .expect("stdin accepts the script");
    let out = child.wait_with_output().expect("the binary exits");
    (
        out.status.code().expect("exited normally"),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_run_marks_every_sleep_3nnn_and_nothing_else() {
        let t = token();
        assert_eq!(
            per_run("sleep 3171 & sleep 5 ; sleep 3172"),
            format!("sleep 3171{t} & sleep 5 ; sleep 3172{t}")
        );
        assert_eq!(per_run("echo sleep 3"), format!("echo sleep 3{t}"));
    }
}
