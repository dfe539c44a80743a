//! The fleet load bench (`scripts/bench-fleet.sh`): checked calls against one replica with its
//! own memory, one replica with the Redis store, and three replicas behind nginx sharing Redis,
//! in one run, so the ratios compare like with like. Prints a Markdown report.
//!
//! `fleet_load [--calls N] [--per-kind N] [--concurrency C]`

use std::path::PathBuf;
use std::time::Duration;

use tests::fleet::Fleet;
use tests::fleet_load::{run, Kind};
use tests::mcp_load::rss_kib;

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn replica_binary() -> PathBuf {
    let me = std::env::current_exe().expect("own path");
    me.with_file_name("fleet_replica")
}

fn rss_mib(fleet: &Fleet) -> String {
    fleet
        .replica_pids()
        .iter()
        .map(|p| format!("{:.1}", rss_kib(*p).unwrap_or(0) as f64 / 1024.0))
        .collect::<Vec<_>>()
        .join(" / ")
}

#[tokio::main]
async fn main() {
    let calls = arg("--calls", 10_000);
    let per_kind = arg("--per-kind", 2_000);
    let concurrency = arg("--concurrency", 16);
    let binary = replica_binary();
    println!(
        "| kind | one replica, memory (calls/s) | one replica, Redis (calls/s) | Redis / memory |"
    );
    println!("|---|---|---|---|");
    for kind in [Kind::Echo, Kind::Approval, Kind::Task] {
        let mut rates = Vec::new();
        for shared in [false, true] {
            let fleet = Fleet::start_with(&binary, 1, shared).expect("redis-server and nginx");
            // Warm up, then measure.
            run(fleet.nginx_addr, 200, concurrency, &[kind])
                .await
                .expect("warm-up");
            let r = run(fleet.nginx_addr, per_kind, concurrency, &[kind])
                .await
                .unwrap_or_else(|e| panic!("{}: {e}", kind.name()));
            rates.push(r.throughput());
        }
        println!(
            "| {} | {:.0} | {:.0} | {:.2}x |",
            kind.name(),
            rates[0],
            rates[1],
            rates[1] / rates[0]
        );
    }
    let fleet = Fleet::start(&binary).expect("redis-server and nginx");
    let mix = [Kind::Echo, Kind::Approval, Kind::Task, Kind::Echo];
    let first = run(fleet.nginx_addr, 1_000, concurrency, &mix)
        .await
        .expect("the first thousand");
    let after_first = rss_mib(&fleet);
    let rest = run(fleet.nginx_addr, calls - 1_000, concurrency, &mix)
        .await
        .expect("the rest");
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after_all = rss_mib(&fleet);
    let total: usize = first
        .calls
        .iter()
        .chain(rest.calls.iter())
        .map(|(_, n)| n)
        .sum();
    println!();
    println!(
        "three replicas behind nginx, Redis: {total} checked calls ({}), {:.0} calls/s, \
         0 lost or mixed up; replica RSS (MiB) after 1,000 calls {after_first}, after {total} {after_all}",
        mix.iter().map(|k| k.name()).collect::<Vec<_>>().join(", "),
        rest.throughput()
    );
}
