//! Times the lookups every command makes in a dict (the keyspace's
//! `find_entry_hashed`/`peek_entry`, a miss), and
//! the record reads of both zset layouts (the B+tree layout's member table,
//! the skiplist's rank descent), so a change to `dict.rs` or the zset page
//! arena can be checked before/after on the same machine.
//!
//! `cargo run --release -p redislab-core --example dict_find [-- N [NAME]]`
//!
//! N keys (default 1,000,000) `key:<i>`; 1M lookups of keys drawn from a
//! fixed xorshift stream; ns per lookup, the best of five passes. The sum
//! printed beside keeps the work from being optimised away. With NAME, only
//! the timings whose name contains it run (for `perf stat` on one of them).

use redislab_core::dict::Dict;
use redislab_core::zset::btree::Btree;
use redislab_core::zset::SkipList;
use std::hint::black_box;
use std::time::Instant;

const LOOKUPS: usize = 1_000_000;

fn key(i: usize) -> Vec<u8> {
    format!("key:{i}").into_bytes()
}

/// A fixed stream of indexes below `n`.
fn picks(n: usize) -> Vec<usize> {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..LOOKUPS)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n as u64) as usize
        })
        .collect()
}

fn wanted(name: &str) -> bool {
    std::env::args().nth(2).is_none_or(|f| name.contains(&f))
}

/// Best of five passes of `f` over `keys`, in ns per lookup.
fn time(name: &str, keys: &[Vec<u8>], mut f: impl FnMut(&[u8]) -> usize) {
    if !wanted(name) {
        return;
    }
    let mut best = f64::MAX;
    let mut sum = 0;
    for _ in 0..5 {
        let start = Instant::now();
        for k in keys {
            sum += f(black_box(k));
        }
        best = best.min(start.elapsed().as_nanos() as f64 / keys.len() as f64);
    }
    println!("{name:<32} {best:7.1} ns/op  (check {sum})");
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .map(|a| a.parse().expect("N"))
        .unwrap_or(1_000_000);
    let hits: Vec<Vec<u8>> = picks(n).into_iter().map(key).collect();
    let misses: Vec<Vec<u8>> = picks(n).into_iter().map(|i| key(i + n)).collect();

    let mut d: Dict<usize> = Dict::new();
    for i in 0..n {
        d.insert(key(i), i);
    }
    time("Dict::find_entry_hashed (hit)", &hits, |k| {
        let h = d.hash_of(k);
        d.find_entry_hashed(h, k).map_or(0, |at| *d.value_at(at))
    });
    time("Dict::peek_entry (hit)", &hits, |k| {
        d.peek_entry(k).map_or(0, |at| *d.value_at(at))
    });
    time("Dict::get (miss)", &misses, |k| *d.get(k).unwrap_or(&1));

    let members: Vec<Vec<u8>> = (0..n).map(key).collect();
    let mut b = Btree::new();
    for (i, m) in members.iter().enumerate() {
        b.insert_both(i as f64, m);
    }
    time("Btree::peek (member table)", &hits, |k| {
        b.peek(b.hash_of(k), k).map_or(0, |s| s as usize)
    });

    let mut sl = SkipList::new();
    for (i, m) in members.iter().enumerate() {
        sl.insert(i as f64, m);
    }
    let scored: Vec<(f64, &[u8])> = picks(n)
        .into_iter()
        .map(|i| (i as f64, members[i].as_slice()))
        .collect();
    if !wanted("SkipList::rank") {
        return;
    }
    let mut best = f64::MAX;
    let mut sum = 0;
    for _ in 0..5 {
        let start = Instant::now();
        for &(s, m) in &scored {
            sum += sl.rank(black_box(s), black_box(m)).unwrap_or(0);
        }
        best = best.min(start.elapsed().as_nanos() as f64 / scored.len() as f64);
    }
    println!(
        "{:<32} {best:7.1} ns/op  (check {sum})",
        "SkipList::rank (page arena)"
    );
}
