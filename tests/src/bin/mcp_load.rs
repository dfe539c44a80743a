//! The MCP load client and the plain rmcp server it measures against (see `tests::mcp_load`).
//!
//! - `mcp_load plain ADDR`: serve `get_weather` with rmcp alone at `http://ADDR/mcp`.
//! - `mcp_load check URL [--calls N] [--clients N] [--lifecycle stateless|session]`: one checked
//!   run against a server.
//! - `mcp_load bench --guarded URL --guarded-pid PID --plain URL --plain-pid PID [--calls N]
//!   [--clients N] [--rounds N] [--warmup N] [--lifecycle stateless|session]
//!   [--max-growth-kib N]`: `calls` checked calls to each server, in `rounds` rounds that
//!   alternate which server goes first, after `warmup` calls to each; prints each round's
//!   throughput, the ratio guarded / plain and the servers' resident memory (`/proc/PID/status`)
//!   before and after the warm-up and after the run. Fails on any lost, failed or mixed-up call
//!   and when the guarded server's memory grew by more than `max-growth-kib` after the warm-up.
//!
//! Exits 0 on success, 1 when a run failed, 2 on bad arguments.

use std::collections::HashMap;
use std::process::ExitCode;
use std::time::Duration;

use tests::mcp_load::{self, Lifecycle, LoadReport};
use tokio_util::sync::CancellationToken;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return ExitCode::from(1);
        }
    };
    let result = match args.first().map(String::as_str) {
        Some("plain") if args.len() == 2 => runtime.block_on(plain(&args[1])),
        Some("check") if args.len() >= 2 => match Options::parse(&args[2..]) {
            Ok(o) => runtime.block_on(check(&args[1], &o)),
            Err(e) => return usage(&e),
        },
        Some("bench") => match Options::parse(&args[1..]) {
            Ok(o) => runtime.block_on(bench(&o)),
            Err(e) => return usage(&e),
        },
        _ => return usage("expected `plain ADDR`, `check URL ...` or `bench ...`"),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(1)
        }
    }
}

fn usage(message: &str) -> ExitCode {
    eprintln!("error: {message}\nusage: mcp_load plain ADDR | check URL [--calls N] [--clients N] [--lifecycle stateless|session] | bench --guarded URL --guarded-pid PID --plain URL --plain-pid PID [--calls N] [--clients N] [--rounds N] [--warmup N] [--lifecycle stateless|session] [--max-growth-kib N]");
    ExitCode::from(2)
}

/// The `--key value` options, with their defaults.
struct Options {
    values: HashMap<String, String>,
    lifecycle: Lifecycle,
}

const KEYS: [&str; 10] = [
    "guarded",
    "guarded-pid",
    "plain",
    "plain-pid",
    "calls",
    "clients",
    "rounds",
    "warmup",
    "lifecycle",
    "max-growth-kib",
];

impl Options {
    fn parse(args: &[String]) -> Result<Options, String> {
        let mut values = HashMap::new();
        let mut it = args.iter();
        while let Some(key) = it.next() {
            let name = key
                .strip_prefix("--")
                .filter(|k| KEYS.contains(k))
                .ok_or_else(|| format!("unknown option `{key}`"))?;
            let value = it.next().ok_or_else(|| format!("`{key}` needs a value"))?;
            if values.insert(name.to_owned(), value.clone()).is_some() {
                return Err(format!("`{key}` given twice"));
            }
        }
        let lifecycle = match values.get("lifecycle") {
            None => Lifecycle::Stateless,
            Some(name) => Lifecycle::parse(name).ok_or_else(|| {
                format!("`--lifecycle` is `stateless` or `session`, not `{name}`")
            })?,
        };
        Ok(Options { values, lifecycle })
    }

    fn text(&self, key: &str) -> Result<&str, String> {
        self.values
            .get(key)
            .map(String::as_str)
            .ok_or_else(|| format!("`--{key}` is required"))
    }

    fn number(&self, key: &str, default: u64) -> Result<u64, String> {
        match self.values.get(key) {
            None => Ok(default),
            Some(v) => v
                .parse()
                .map_err(|_| format!("`--{key}` wants a number, not `{v}`")),
        }
    }
}

async fn plain(addr: &str) -> Result<(), String> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    println!("serving at {}", mcp_load::url_of(addr));
    mcp_load::serve_plain(listener, CancellationToken::new())
        .await
        .map_err(|e| e.to_string())
}

/// A token prefix unique to this process and moment, so runs against one server never share
/// tokens.
fn run_id() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    format!("r{}x{:x}", std::process::id(), nanos & 0xffff_ffff)
}

async fn check(url: &str, o: &Options) -> Result<(), String> {
    let calls = o.number("calls", 1000)? as usize;
    let clients = o.number("clients", 16)? as usize;
    let r = mcp_load::run(url, o.lifecycle, clients, calls, &run_id())
        .await
        .map_err(|e| e.to_string())?;
    println!(
        "ok: {} calls from {clients} clients, all answered and matched ({}, {:.0} calls/s)",
        r.calls,
        r.revision,
        r.throughput()
    );
    Ok(())
}

fn rss(pid: u32) -> Result<u64, String> {
    mcp_load::rss_kib(pid).ok_or_else(|| format!("cannot read the memory of process {pid}"))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

async fn bench(o: &Options) -> Result<(), String> {
    let guarded = o.text("guarded")?.to_owned();
    let plain = o.text("plain")?.to_owned();
    let pid = |key: &str| -> Result<u32, String> {
        o.text(key)?
            .parse()
            .map_err(|_| format!("`--{key}` wants a process id"))
    };
    let (guarded_pid, plain_pid) = (pid("guarded-pid")?, pid("plain-pid")?);
    let calls = o.number("calls", 10_000)? as usize;
    let clients = o.number("clients", 64)? as usize;
    let rounds = o.number("rounds", 10)?.max(1) as usize;
    let warmup = o.number("warmup", 1000)? as usize;
    let max_growth = o.number("max-growth-kib", 16 * 1024)?;
    let per_round = calls.div_ceil(rounds);
    let id = run_id();
    // A server: its URL, and its process, whose CPU time each run reads.
    let (on_guarded, on_plain) = ((guarded.as_str(), guarded_pid), (plain.as_str(), plain_pid));
    let one = |(url, pid): (&str, u32), tag: String, n: usize| {
        let url = url.to_owned();
        async move {
            mcp_load::run_watching(&url, o.lifecycle, clients, n, &tag, Some(pid))
                .await
                .map_err(|e| format!("{url}: {e}"))
        }
    };

    let before = (rss(guarded_pid)?, rss(plain_pid)?);
    one(on_guarded, format!("{id}-wg"), warmup).await?;
    one(on_plain, format!("{id}-wp"), warmup).await?;
    let warm = (rss(guarded_pid)?, rss(plain_pid)?);

    println!("{calls} calls to each server from {clients} clients, {rounds} rounds of {per_round}, {warmup} warm-up calls each");
    println!("round | first | guarded calls/s | plain calls/s | ratio");
    let (mut g_all, mut p_all) = (Vec::new(), Vec::new());
    let (mut g_time, mut p_time) = (Duration::ZERO, Duration::ZERO);
    let (mut g_cpu, mut p_cpu) = (Duration::ZERO, Duration::ZERO);
    let mut revision = String::new();
    let mut mid = warm;
    let cpu = |r: &LoadReport| r.server_cpu.ok_or("cannot read a server's CPU time");
    for round in 0..rounds {
        let guarded_first = round % 2 == 0;
        let guarded_run = || one(on_guarded, format!("{id}-g{round}"), per_round);
        let plain_run = || one(on_plain, format!("{id}-p{round}"), per_round);
        let (g, p): (LoadReport, LoadReport) = if guarded_first {
            let g = guarded_run().await?;
            (g, plain_run().await?)
        } else {
            let p = plain_run().await?;
            (guarded_run().await?, p)
        };
        g_cpu += cpu(&g)?;
        p_cpu += cpu(&p)?;
        println!(
            "{round:>5} | {:>7} | {:>15.0} | {:>13.0} | {:.2}",
            if guarded_first { "guarded" } else { "plain" },
            g.throughput(),
            p.throughput(),
            g.throughput() / p.throughput()
        );
        g_time += g.elapsed;
        p_time += p.elapsed;
        g_all.push(g.throughput());
        p_all.push(p.throughput());
        revision = g.revision;
        if round + 1 == rounds.div_ceil(2) {
            mid = (rss(guarded_pid)?, rss(plain_pid)?);
        }
    }
    let after = (rss(guarded_pid)?, rss(plain_pid)?);
    let total = per_round * rounds;
    let ratios: Vec<f64> = g_all.iter().zip(&p_all).map(|(g, p)| g / p).collect();
    let ratio = median(ratios);
    let overall = (total as f64 / g_time.as_secs_f64()) / (total as f64 / p_time.as_secs_f64());
    println!("revision: {revision}");
    println!(
        "guarded: {total} calls, all answered and matched, {:.0} calls/s overall, median round {:.0}",
        total as f64 / g_time.as_secs_f64(),
        median(g_all)
    );
    println!(
        "plain:   {total} calls, all answered and matched, {:.0} calls/s overall, median round {:.0}",
        total as f64 / p_time.as_secs_f64(),
        median(p_all)
    );
    println!(
        "ratio guarded / plain: median of rounds {ratio:.2}, overall {overall:.2} (target >= 0.90: {})",
        if ratio >= 0.9 { "met" } else { "missed" }
    );
    let per_call = |cpu: Duration| cpu.as_secs_f64() * 1e6 / total as f64;
    println!(
        "server CPU per call (user + system, timed rounds): guarded {:.0} µs, plain {:.0} µs, guarded / plain {:.2}",
        per_call(g_cpu),
        per_call(p_cpu),
        g_cpu.as_secs_f64() / p_cpu.as_secs_f64()
    );
    println!("memory (VmRSS, KiB) | before | after warm-up | half-way | after run | growth after warm-up");
    for (name, b, w, m, a) in [
        ("guarded", before.0, warm.0, mid.0, after.0),
        ("plain", before.1, warm.1, mid.1, after.1),
    ] {
        println!(
            "{name:>19} | {b:>6} | {w:>13} | {m:>8} | {a:>9} | {:+}",
            a as i64 - w as i64
        );
    }
    let growth = after.0.saturating_sub(warm.0);
    if growth > max_growth {
        return Err(format!(
            "the guarded server's memory grew by {growth} KiB after the warm-up (limit {max_growth} KiB)"
        ));
    }
    Ok(())
}
