//! The fixed cost of the command path in process: `Server::call_into` (lookup,
//! checks, `call()`'s bookkeeping, the handler, the RESP encoding) for SET, GET
//! and INCR on a small keyspace, SETBIT on one 16 KiB string and PFCOUNT of one
//! dense HyperLogLog (its cached count) and PFADD to it, ZSCORE on a 1,000-member sorted set,
//! HGET on a 1,000-field hash, as a transport's connection client runs them.
//!
//! `cargo run --release -p redislab-core --example call_cost [-- N [SET|GET|INCR|SETBIT|PFCOUNT|PFADD|ZSCORE|HGET]]`
//!
//! Prints ns per command (the thread's CPU time, not the wall clock, so that
//! the other processes of a shared machine disturb it less; best of 15 passes
//! of N commands, default 200,000), allocations per command (a counting
//! global allocator), and the core's own usec_per_call over all the passes
//! (INFO commandstats: the window Redis's figure covers, from after the
//! lookup and checks to the reply value).

mod common;
use common::thread_cpu_ns;
use redislab_core::server::{ClientKind, ConnectInfo};
use redislab_core::Server;

#[global_allocator]
static GLOBAL: redislab_alloc::CountingAlloc = redislab_alloc::CountingAlloc::new();

const KEYS: usize = 1000;
const PASSES: usize = 15;

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(200_000);
    let mut s = Server::new();
    let id = s.connect(ConnectInfo {
        kind: ClientKind::Connection,
        addr: "127.0.0.1:1".into(),
        laddr: "127.0.0.1:2".into(),
    });
    let key = |prefix: &str, i: usize| format!("{prefix}:{:012}", i % KEYS).into_bytes();
    let set: Vec<Vec<Vec<u8>>> = (0..KEYS)
        .map(|i| vec![b"SET".to_vec(), key("k", i), b"xxx".to_vec()])
        .collect();
    let get: Vec<Vec<Vec<u8>>> = (0..KEYS)
        .map(|i| vec![b"GET".to_vec(), key("k", i)])
        .collect();
    let incr: Vec<Vec<Vec<u8>>> = (0..KEYS)
        .map(|i| vec![b"INCR".to_vec(), key("n", i)])
        .collect();
    // SETBIT on one 16 KiB string, offsets in turn (as bench_inprocess).
    let setbit: Vec<Vec<Vec<u8>>> = (0..KEYS)
        .map(|i| {
            let offset = (i * 127) % (16384 * 8);
            vec![
                b"SETBIT".to_vec(),
                b"b:s".to_vec(),
                offset.to_string().into_bytes(),
                b"1".to_vec(),
            ]
        })
        .collect();
    let mut setup = Vec::new();
    // The keys GET reads exist even when only GET is timed.
    for argv in &set {
        s.call_into(id, argv, &mut setup);
    }
    let last_bit = (16384 * 8 - 1).to_string().into_bytes();
    s.call_into(
        id,
        &[b"SETBIT".to_vec(), b"b:s".to_vec(), last_bit, b"1".to_vec()],
        &mut setup,
    );
    let pfcount: Vec<Vec<Vec<u8>>> = vec![vec![b"PFCOUNT".to_vec(), b"h:d".to_vec()]; KEYS];
    for i in 0..5000 {
        let add = vec![
            b"PFADD".to_vec(),
            b"h:d".to_vec(),
            format!("e{i}").into_bytes(),
        ];
        s.call_into(id, &add, &mut setup);
    }
    // PFADD of elements in turn to the same dense HyperLogLog.
    let pfadd: Vec<Vec<Vec<u8>>> = (0..KEYS)
        .map(|i| {
            vec![
                b"PFADD".to_vec(),
                b"h:d".to_vec(),
                format!("p{i}").into_bytes(),
            ]
        })
        .collect();
    // ZSCORE over the members of one 1,000-member sorted set (a skiplist).
    let zscore: Vec<Vec<Vec<u8>>> = (0..KEYS)
        .map(|i| {
            vec![
                b"ZSCORE".to_vec(),
                b"z:s".to_vec(),
                format!("m{i:07}").into_bytes(),
            ]
        })
        .collect();
    for i in 0..KEYS {
        let add = vec![
            b"ZADD".to_vec(),
            b"z:s".to_vec(),
            (i * 7 % 1000).to_string().into_bytes(),
            format!("m{i:07}").into_bytes(),
        ];
        s.call_into(id, &add, &mut setup);
    }
    // HGET over the fields of one 1,000-field hash (a dict, no field TTLs).
    let hget: Vec<Vec<Vec<u8>>> = (0..KEYS)
        .map(|i| {
            vec![
                b"HGET".to_vec(),
                b"h:f".to_vec(),
                format!("f{i}").into_bytes(),
            ]
        })
        .collect();
    for i in 0..KEYS {
        let add = vec![
            b"HSET".to_vec(),
            b"h:f".to_vec(),
            format!("f{i}").into_bytes(),
            b"value".to_vec(),
        ];
        s.call_into(id, &add, &mut setup);
    }
    let only = std::env::args().nth(2);
    let tests: Vec<(&str, &Vec<Vec<Vec<u8>>>)> = [
        ("SET", &set),
        ("GET", &get),
        ("INCR", &incr),
        ("SETBIT", &setbit),
        ("PFCOUNT", &pfcount),
        ("PFADD", &pfadd),
        ("ZSCORE", &zscore),
        ("HGET", &hget),
    ]
    .into_iter()
    .filter(|(name, _)| only.as_deref().is_none_or(|o| o.eq_ignore_ascii_case(name)))
    .collect();
    let mut out = Vec::with_capacity(1 << 20);
    let mut best = vec![f64::MAX; tests.len()];
    let mut allocs = vec![0.0; tests.len()];
    // Passes alternate between the commands, so a busy neighbour slows them
    // alike; the best pass of each is printed.
    for _ in 0..PASSES {
        for (t, (_, argvs)) in tests.iter().enumerate() {
            let a0 = GLOBAL.calls();
            let started = thread_cpu_ns();
            for i in 0..n {
                s.call_into(id, &argvs[i % KEYS], &mut out);
                if out.len() > 1 << 19 {
                    out.clear();
                }
            }
            let ns = (thread_cpu_ns() - started) as f64 / n as f64;
            allocs[t] = (GLOBAL.calls() - a0) as f64 / n as f64;
            best[t] = best[t].min(ns);
            out.clear();
        }
    }
    let stats = commandstats(&mut s, id);
    for (t, (name, _)) in tests.iter().enumerate() {
        let upc = stats
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map_or(String::from("?"), |(_, ns)| format!("{ns:.1}"));
        println!(
            "{name:7} {:7.1} ns/command  {:.2} allocations/command  usec_per_call {upc} ns",
            best[t], allocs[t]
        );
    }
}

/// Each command's own usec_per_call (INFO commandstats' usec / calls, in
/// ns): the window Redis's figure covers, over every pass.
fn commandstats(s: &mut Server, id: redislab_core::server::ClientId) -> Vec<(String, f64)> {
    let mut out = Vec::new();
    s.call_into(id, &[b"INFO".to_vec(), b"commandstats".to_vec()], &mut out);
    let text = String::from_utf8_lossy(&out);
    text.lines()
        .filter_map(|line| {
            let (name, fields) = line.strip_prefix("cmdstat_")?.split_once(':')?;
            let field = |key: &str| -> Option<f64> {
                fields
                    .split(',')
                    .find_map(|f| f.strip_prefix(key)?.strip_prefix('=')?.parse().ok())
            };
            Some((name.to_string(), field("usec")? * 1000.0 / field("calls")?))
        })
        .collect()
}
