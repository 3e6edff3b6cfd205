//! The 05c-cost commands that move many members, in process: a 1,000,000-member
//! `lb` (and an overlapping `lb2`) built the way the lab builds them, then each
//! command timed alone (`Server::call_into`: command path, handler, RESP2
//! encoding), best of several passes, in CPU ns of this thread.
//!
//! `cargo run --release -p redislab-core --example zset_cost [-- FILTER]`
//!
//! FILTER keeps the commands whose label contains it. Run under `perf record -g`
//! to see where a command's time goes; `ZSET_COST_SCALE=N` makes every pass N
//! times longer, so that the timed calls, not the build, fill the profile.

mod common;
use common::thread_cpu_ns;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use redislab_core::server::ConnectInfo;
use redislab_core::Server;

/// (label, argv, calls per pass, setup before each call)
type Op<'a> = (&'a str, Vec<Vec<u8>>, usize, Option<Vec<Vec<u8>>>);

fn argv(words: &[&str]) -> Vec<Vec<u8>> {
    words.iter().map(|w| w.as_bytes().to_vec()).collect()
}

fn main() {
    let filter = std::env::args().nth(1).unwrap_or_default();
    let n = 1_000_000u32;
    let mut s = Server::new();
    let id = s.connect(ConnectInfo::in_process());
    let mut out = Vec::with_capacity(1 << 24);
    for (key, seed, first) in [("lb", 42u64, 1u32), ("lb2", 43, n / 2)] {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        for batch in 0..(n / 1000) {
            let mut a = vec![b"ZADD".to_vec(), key.as_bytes().to_vec()];
            for i in 0..1000 {
                let user = first + batch * 1000 + i;
                a.push(rng.gen_range(0..1_000_000u32).to_string().into_bytes());
                a.push(format!("u{user:07}").into_bytes());
            }
            s.call_into(id, &a, &mut out);
            out.clear();
        }
    }
    s.call_into(id, &argv(&["ZREVRANK", "lb", "u0123456"]), &mut out);
    let rank: i64 = std::str::from_utf8(&out[1..out.len() - 2])
        .unwrap()
        .parse()
        .unwrap();
    out.clear();
    let (from, to) = ((rank - 5).to_string(), (rank + 5).to_string());
    let store = argv(&["ZRANGESTORE", "top", "lb", "0", "999", "REV"]);
    // (label, argv, calls per pass, setup before each call)
    let ops: Vec<Op> = vec![
        (
            "ZRANGE 0 9 REV WITHSCORES",
            argv(&["ZRANGE", "lb", "0", "9", "REV", "WITHSCORES"]),
            20000,
            None,
        ),
        (
            "ZRANGE r-5 r+5 REV WITHSCORES",
            argv(&["ZRANGE", "lb", &from, &to, "REV", "WITHSCORES"]),
            20000,
            None,
        ),
        (
            "BYSCORE LIMIT 0 10",
            argv(&[
                "ZRANGE", "lb", "500000", "500100", "BYSCORE", "LIMIT", "0", "10",
            ]),
            20000,
            None,
        ),
        (
            "ZCOUNT",
            argv(&["ZCOUNT", "lb", "400000", "600000"]),
            20000,
            None,
        ),
        ("ZSCORE", argv(&["ZSCORE", "lb", "u0123456"]), 200000, None),
        (
            "ZREVRANK",
            argv(&["ZREVRANK", "lb", "u0123456"]),
            200000,
            None,
        ),
        (
            "ZINCRBY",
            argv(&["ZINCRBY", "lb", "5", "u0123456"]),
            20000,
            None,
        ),
        (
            "BYSCORE 200k",
            argv(&["ZRANGE", "lb", "400000", "600000", "BYSCORE"]),
            5,
            None,
        ),
        ("ZRANGESTORE 1000", store.clone(), 300, None),
        (
            "ZREMRANGEBYRANK 100 -1",
            argv(&["ZREMRANGEBYRANK", "top", "100", "-1"]),
            300,
            Some(store.clone()),
        ),
        (
            "ZINTERCARD",
            argv(&["ZINTERCARD", "2", "lb", "lb2"]),
            1,
            None,
        ),
    ];
    let ops: Vec<_> = ops
        .into_iter()
        .filter(|o| o.0.contains(filter.as_str()))
        .collect();
    let scale: usize = std::env::var("ZSET_COST_SCALE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let ops: Vec<_> = ops
        .into_iter()
        .map(|(label, a, calls, setup)| (label, a, calls * scale, setup))
        .collect();
    let mut best = vec![f64::MAX; ops.len()];
    for _ in 0..5 {
        for (t, (_, a, calls, setup)) in ops.iter().enumerate() {
            let mut total = 0u64;
            if let Some(setup) = setup {
                for _ in 0..*calls {
                    s.call_into(id, setup, &mut out);
                    out.clear();
                    let t0 = thread_cpu_ns();
                    s.call_into(id, a, &mut out);
                    total += thread_cpu_ns() - t0;
                }
            } else {
                let t0 = thread_cpu_ns();
                for _ in 0..*calls {
                    out.clear();
                    s.call_into(id, a, &mut out);
                }
                total = thread_cpu_ns() - t0;
            }
            best[t] = best[t].min(total as f64 / *calls as f64);
        }
    }
    for (t, (label, ..)) in ops.iter().enumerate() {
        println!("{label:32} {:>14.0} ns/call", best[t]);
    }
}
