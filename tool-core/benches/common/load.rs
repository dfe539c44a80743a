//! Competing CPU load for the benches: processes (the bench binary itself, started again as a busy
//! loop) that keep the cores busy while a [`Load`] lives, so that one run measures a call both on
//! a quiet machine and on one whose cores have other work, as a server's do.

/// The environment variable that makes a bench binary a busy loop: call [`burn_if_asked`] first
/// thing in `main`.
const BURN: &str = "TOOL_BENCH_BURN";

/// Runs the busy loop and returns `true` if this process was started as one; it ends when its
/// parent is gone, should the bench die without stopping it.
pub fn burn_if_asked() -> bool {
    if std::env::var_os(BURN).is_none() {
        return false;
    }
    let parent = std::os::unix::process::parent_id();
    let mut x = 0u64;
    loop {
        for _ in 0..(1u64 << 24) {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
        if std::os::unix::process::parent_id() != parent {
            return true;
        }
    }
}

/// Busy-loop processes, killed when dropped.
pub struct Load(Vec<std::process::Child>);

impl Load {
    /// Starts `processes` busy loops and gives the scheduler a moment to see them.
    pub fn start(processes: usize) -> Load {
        let exe = std::env::current_exe().expect("the bench binary");
        let children = (0..processes)
            .map(|_| {
                std::process::Command::new(&exe)
                    .env(BURN, "1")
                    .stdin(std::process::Stdio::null())
                    .stdout(std::process::Stdio::null())
                    .spawn()
                    .expect("a busy-loop process")
            })
            .collect::<Vec<_>>();
        if processes > 0 {
            std::thread::sleep(std::time::Duration::from_millis(200));
            eprintln!(
                "{processes} busy-loop processes running; /proc/loadavg: {}",
                std::fs::read_to_string("/proc/loadavg")
                    .unwrap_or_default()
                    .trim()
            );
        }
        Load(children)
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
