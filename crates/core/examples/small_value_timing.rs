//! In-process ns per command for strings and small (listpack) hashes: GET, SET,
//! HGET, HSET of an existing field, HSET of a new field then HDEL of it, on
//! 10,000 string keys and 10,000 hashes of 10 fields. Used to compare two
//! builds of the core (a layout change must not make these slower).
//!
//! `cargo run --release -p redislab-core --example small_value_timing`
//!
//! Each figure is the best of 5 rounds of 200,000 calls of `Server::run` (the
//! command path without RESP encoding), keys taken in a fixed scrambled order.

use std::time::Instant;

use redislab_core::Server;

const KEYS: usize = 10_000;
const CALLS: usize = 200_000;
const ROUNDS: usize = 5;

/// The commands one timed call sends, for a key index.
type Calls = Box<dyn Fn(usize) -> Vec<Vec<Vec<u8>>>>;

fn argv(parts: &[&[u8]]) -> Vec<Vec<u8>> {
    parts.iter().map(|p| p.to_vec()).collect()
}

fn main() {
    let mut s = Server::new();
    let skey = |i: usize| format!("s:{i:08}").into_bytes();
    let hkey = |i: usize| format!("h:{i:07}").into_bytes();
    for i in 0..KEYS {
        let value = format!("{i:08}-0000-4000-8000-000000000000");
        s.run(&argv(&[b"SET", &skey(i), value.as_bytes()]));
        let mut cmd = argv(&[b"HSET", &hkey(i)]);
        for f in 0..10 {
            cmd.push(format!("f{f}").into_bytes());
            cmd.push(format!("{}", 10_000_000 + i * 10 + f).into_bytes());
        }
        s.run(&cmd);
    }
    // A fixed scramble of the key indexes.
    let order: Vec<usize> = (0..CALLS).map(|n| (n * 7_919 + 13) % KEYS).collect();
    let cases: [(&str, Calls); 5] = [
        ("GET", Box::new(move |i| vec![argv(&[b"GET", &skey(i)])])),
        (
            "SET",
            Box::new(move |i| {
                vec![argv(&[
                    b"SET",
                    &skey(i),
                    b"99999999-0000-4000-8000-000000000000",
                ])]
            }),
        ),
        (
            "HGET",
            Box::new(move |i| vec![argv(&[b"HGET", &hkey(i), b"f7"])]),
        ),
        (
            "HSET (existing field)",
            Box::new(move |i| vec![argv(&[b"HSET", &hkey(i), b"f5", b"87654321"])]),
        ),
        (
            "HSET (new field) + HDEL",
            Box::new(move |i| {
                vec![
                    argv(&[b"HSET", &hkey(i), b"new", b"12345678"]),
                    argv(&[b"HDEL", &hkey(i), b"new"]),
                ]
            }),
        ),
    ];
    for (name, make) in &cases {
        let commands: Vec<_> = order.iter().flat_map(|&i| make(i)).collect();
        let mut best = f64::MAX;
        for _ in 0..ROUNDS {
            let t = Instant::now();
            for c in &commands {
                std::hint::black_box(s.run(c));
            }
            best = best.min(t.elapsed().as_nanos() as f64 / CALLS as f64);
        }
        println!("{name:<26} {best:>7.1} ns per call");
    }
}
