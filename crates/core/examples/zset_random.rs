//! The sorted-set commands of `./run.sh bench` in process, on members drawn at
//! random the way `redis-benchmark -r 1000000` draws them: what the server does
//! for one request once it is parsed (`Server::call_into`: the command path, the
//! handler, the RESP encoding), without the socket. The 05c lab times one member
//! over and over (all in cache); this one pays the cache misses a 1M-member set
//! costs on a random member, as the bench does.
//!
//! `cargo run --release -p redislab-core --example zset_random [-- OPS [MEMBERS]]`
//!
//! The key is built as scripts/bench.py builds it (`ZADD bench:z i m:%012d` for
//! i < MEMBERS, batches of 1000); then, per command, OPS requests (default
//! 200,000) with `__rand_int__` replaced by a seeded draw below MEMBERS, timed
//! as a whole: mean CPU ns of this thread per request (and wall ns). Run it under `perf record` to see where a
//! request's time goes.

mod common;
use common::thread_cpu_ns;
use std::time::Instant;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use redislab_core::server::ConnectInfo;
use redislab_core::Server;

fn main() {
    let mut args = std::env::args().skip(1);
    let ops: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(200_000);
    let members: u64 = args
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let only: Option<String> = args.next();
    let mut s = Server::new();
    let c = s.connect(ConnectInfo::in_process());
    let mut out = Vec::new();
    let started = Instant::now();
    for start in (0..members).step_by(1000) {
        let mut argv: Vec<Vec<u8>> = vec![b"ZADD".to_vec(), b"bench:z".to_vec()];
        for i in start..(start + 1000).min(members) {
            argv.push(i.to_string().into_bytes());
            argv.push(format!("m:{i:012}").into_bytes());
        }
        s.call_into(c, &argv, &mut out);
        out.clear();
    }
    println!(
        "built {members} members in {:.2} s",
        started.elapsed().as_secs_f64()
    );
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let commands: [(&str, &[&str]); 5] = [
        (
            "ZADD",
            &["ZADD", "bench:z", "__rand_int__", "m:__rand_int__"],
        ),
        ("ZINCRBY", &["ZINCRBY", "bench:z", "1", "m:__rand_int__"]),
        ("ZSCORE", &["ZSCORE", "bench:z", "m:__rand_int__"]),
        ("ZREVRANK", &["ZREVRANK", "bench:z", "m:__rand_int__"]),
        ("ZRANGE 0 9", &["ZRANGE", "bench:z", "0", "9"]),
    ];
    for (name, template) in commands {
        if only.as_deref().is_some_and(|o| o != name) {
            continue;
        }
        let requests: Vec<Vec<Vec<u8>>> = (0..ops)
            .map(|_| {
                template
                    .iter()
                    .map(|a| {
                        let r = format!("{:012}", rng.gen_range(0..members));
                        a.replace("__rand_int__", &r).into_bytes()
                    })
                    .collect()
            })
            .collect();
        let started = Instant::now();
        let cpu = thread_cpu_ns();
        for argv in &requests {
            s.call_into(c, argv, &mut out);
            out.clear();
        }
        let cpu = (thread_cpu_ns() - cpu) as f64 / ops as f64;
        let ns = started.elapsed().as_nanos() as f64 / ops as f64;
        println!("{name:<12} {cpu:>8.0} ns CPU/request, {ns:>8.0} ns wall (mean of {ops})");
    }
}
