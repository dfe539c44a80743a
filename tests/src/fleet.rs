//! A fleet of MCP replicas for the fleet tests and the fleet load bench: Debian's
//! `redis-server` (no persistence) and `nginx` (round-robin), and replicas of the
//! `fleet_replica` binary, each on a free loopback port, configured in a temp directory, and
//! killed when dropped.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

fn wait_listening(port: u16, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "{what} did not listen on {port}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A child process of the test, killed when dropped.
pub struct Proc(Option<Child>);

impl Proc {
    /// Kill it (SIGKILL) and reap it.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.0.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.kill();
    }
}

fn found(program: &str) -> Option<PathBuf> {
    let candidates = [
        format!("/usr/sbin/{program}"),
        format!("/usr/bin/{program}"),
        format!("/usr/local/bin/{program}"),
    ];
    candidates.iter().map(PathBuf::from).find(|p| p.exists())
}

/// A fleet of one test or bench: Redis, replicas and nginx, each on a free loopback port.
pub struct Fleet {
    dir: tempfile::TempDir,
    redis_port: u16,
    redis: Proc,
    replicas: Vec<(SocketAddr, Proc)>,
    nginx: Proc,
    /// Where clients connect: nginx in front of the replicas (the replica itself when alone).
    pub nginx_addr: SocketAddr,
    shared: bool,
    binary: PathBuf,
}

impl Fleet {
    /// Three replicas of `binary` (`fleet_replica`) behind nginx, sharing one Redis, or `None`
    /// (loudly) where redis-server or nginx is missing.
    pub fn start(binary: &Path) -> Option<Fleet> {
        Fleet::start_with(binary, 3, true)
    }

    /// `n` replicas, sharing one Redis when `shared`, behind nginx when more than one.
    pub fn start_with(binary: &Path, n: usize, shared: bool) -> Option<Fleet> {
        let (Some(redis), Some(nginx)) = (found("redis-server"), found("nginx")) else {
            eprintln!(
                "SKIPPED: the fleet tests need redis-server and nginx; install them with \
                 scripts/install-test-deps.sh"
            );
            return None;
        };
        let dir = tempfile::tempdir().expect("tempdir");
        let key = dir.path().join("state.key");
        std::fs::write(&key, "0123456789abcdef0123456789abcdef0123456789abcdef\n").expect("key");
        set_private(&key);
        std::fs::create_dir(dir.path().join("ws")).expect("workspace");
        let redis_port = free_port();
        let redis = Proc(Some(start_redis(&redis, redis_port)));
        let mut fleet = Fleet {
            dir,
            redis_port,
            redis,
            replicas: Vec::new(),
            nginx: Proc(None),
            nginx_addr: SocketAddr::from(([127, 0, 0, 1], free_port())),
            shared,
            binary: binary.to_path_buf(),
        };
        for i in 0..n {
            let addr = SocketAddr::from(([127, 0, 0, 1], free_port()));
            let child = fleet.replica(i, addr);
            fleet.replicas.push((addr, Proc(Some(child))));
        }
        for (addr, _) in &fleet.replicas {
            wait_listening(addr.port(), "a replica");
        }
        if n == 1 {
            fleet.nginx_addr = fleet.replicas[0].0;
        } else {
            fleet.nginx = Proc(Some(fleet.start_nginx(&nginx)));
            wait_listening(fleet.nginx_addr.port(), "nginx");
        }
        Some(fleet)
    }

    fn replica(&self, i: usize, addr: SocketAddr) -> Child {
        let mut command = Command::new(&self.binary);
        command
            .args(["--http", &addr.to_string()])
            .arg("--workspace")
            .arg(self.dir.path().join("ws"))
            .args(["--replica", &format!("r{i}")]);
        if self.shared {
            let url = format!("redis://127.0.0.1:{}/0", self.redis_port);
            command
                .args(["--store", &url])
                .arg("--state-key-file")
                .arg(self.dir.path().join("state.key"));
        }
        command
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("a replica starts")
    }

    /// The process ids of the replicas still running.
    pub fn replica_pids(&self) -> Vec<u32> {
        self.replicas
            .iter()
            .filter_map(|(_, p)| p.0.as_ref().map(Child::id))
            .collect()
    }

    fn start_nginx(&self, nginx: &Path) -> Child {
        let upstreams: String = self
            .replicas
            .iter()
            .map(|(a, _)| format!("    server {a} max_fails=1 fail_timeout=1s;\n"))
            .collect();
        let d = self.dir.path().display();
        let conf = format!(
            "daemon off;\nworker_processes 1;\npid {d}/nginx.pid;\nerror_log {d}/nginx.err;\n\
             events {{ worker_connections 256; }}\n\
             http {{\n  access_log off;\n  client_body_temp_path {d}/body;\n  \
             proxy_temp_path {d}/proxy;\n  fastcgi_temp_path {d}/fcgi;\n  \
             uwsgi_temp_path {d}/uwsgi;\n  scgi_temp_path {d}/scgi;\n  \
             upstream fleet {{\n{upstreams}  }}\n  \
             server {{\n    listen {};\n    location /mcp {{\n      proxy_pass http://fleet;\n      \
             proxy_http_version 1.1;\n      proxy_set_header Host $http_host;\n      \
             proxy_set_header Connection \"\";\n      proxy_buffering off;\n      \
             proxy_next_upstream error timeout;\n    }}\n  }}\n}}\n",
            self.nginx_addr
        );
        let path = self.dir.path().join("nginx.conf");
        std::fs::write(&path, conf).expect("nginx.conf");
        Command::new(nginx)
            .arg("-c")
            .arg(&path)
            .arg("-p")
            .arg(self.dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("nginx starts")
    }

    /// Replica `i`'s own address.
    pub fn replica_addr(&self, i: usize) -> SocketAddr {
        self.replicas[i].0
    }

    /// Kill replica `i` (SIGKILL).
    pub fn kill_replica(&mut self, i: usize) {
        self.replicas[i].1.kill();
    }

    /// Kill Redis (SIGKILL).
    pub fn kill_redis(&mut self) {
        self.redis.kill();
    }

    /// Start Redis again on its port, empty.
    pub fn restart_redis(&mut self) {
        let redis = found("redis-server").expect("redis-server");
        self.redis = Proc(Some(start_redis(&redis, self.redis_port)));
        wait_listening(self.redis_port, "redis-server");
    }
}

fn start_redis(redis: &Path, port: u16) -> Child {
    let child = Command::new(redis)
        .args(["--bind", "127.0.0.1", "--port", &port.to_string()])
        .args(["--save", "", "--appendonly", "no"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("redis-server starts");
    wait_listening(port, "redis-server");
    child
}

fn set_private(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).expect("chmod");
}
