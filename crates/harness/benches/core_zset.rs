//! The core's sorted-set commands on a 1,000,000-member zset, called in process
//! (`Server::execute` + RESP2 encoding of the reply, no socket): ns/op median and p99.
//!
//! `cargo bench -p redislab-harness --bench core_zset` (no criterion: warm-up, then
//! every call timed on its own into an HDR histogram; the code is the harness's
//! `inprocess` module, which lab 05c-cost uses for the same figures).
//!
//! Environment: `CORE_ZSET_MEMBERS` (default 1000000), `CORE_ZSET_CALLS` (default
//! 200000 per command), `CORE_ZSET_SEED` (default 42).

use std::time::Instant;

use redislab_core::Server;
use redislab_harness::inprocess::{self, member};
use redislab_harness::timing::thousands;

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.replace('_', "").parse().ok())
        .unwrap_or(default)
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` does not, and then a
    // quick run is enough to show the bench still works.
    let quick = !std::env::args().any(|a| a == "--bench");
    let n = env_or("CORE_ZSET_MEMBERS", if quick { 10_000 } else { 1_000_000 }) as usize;
    let calls = env_or("CORE_ZSET_CALLS", if quick { 1_000 } else { 200_000 }) as usize;
    let seed = env_or("CORE_ZSET_SEED", 42);
    let warmup = (calls / 10).max(100);

    let points = inprocess::leaderboard(seed, n);
    let mut server = Server::new();
    let started = Instant::now();
    if let Err(e) = inprocess::load(&mut server, "lb", &points, 1) {
        eprintln!("core_zset: {e}");
        std::process::exit(1);
    }
    println!(
        "core_zset: {} members loaded in process in {:.2} s (seed {seed}); {} calls per command after {} warm-up",
        thousands(n as u64),
        started.elapsed().as_secs_f64(),
        thousands(calls as u64),
        thousands(warmup as u64)
    );
    let id = inprocess::user_of(n);
    let user = member(id);
    let floor = inprocess::clock_floor(calls);
    println!("{:<44} {floor}", "(clock read alone)");
    for op in inprocess::zset_ops("lb", &user, 400_000, 600_000, seed) {
        match inprocess::measure_op(&mut server, &op, warmup, calls) {
            Ok(t) => println!("{:<44} {t}, mean {:.0} ns", op.shown(), t.mean_ns),
            Err(e) => {
                eprintln!("core_zset: {e}");
                std::process::exit(1);
            }
        }
        // ZADD and ZINCRBY moved the user: put it back for the next command.
        let back = points[id as usize - 1].to_string();
        server.cmd(&["ZADD", "lb", &back, &user]);
    }
}
