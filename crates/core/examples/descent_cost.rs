//! The cost of one skiplist descent, alone: a 1,000,000-member list with the
//! scores of `bench_inprocess`'s leaderboard (uniform in 0..1,000,000), then
//! the two descents of `ZCOUNT key 400000 600000` (the first member at or
//! above 400,000 and the last at or below 600,000) timed a million times
//! each, best of three, beside the cost of parsing one score bound.
//!
//! `cargo run --release -p redislab-core --example descent_cost [-- --no-huge-pages]`
//!
//! The same range every time, as `./run.sh bench` times ZCOUNT: the path stays
//! in cache, so this measures the loop's own instructions, not memory; then
//! both descents over 1,024 ranges in turn, which pay the misses.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use redislab_core::num::parse_score_bound;
use redislab_core::zset::skiplist::{ScoreRange, SkipList};
use std::hint::black_box;
use std::time::Instant;

const MEMBERS: u32 = 1_000_000;
const CALLS: u32 = 1_000_000;

/// Mean ns per call of `f` over [`CALLS`] calls.
fn per_call(mut f: impl FnMut() -> usize) -> f64 {
    let started = Instant::now();
    let mut sum = 0usize;
    for _ in 0..CALLS {
        sum = sum.wrapping_add(f());
    }
    black_box(sum);
    started.elapsed().as_nanos() as f64 / f64::from(CALLS)
}

fn main() {
    if std::env::args().any(|a| a == "--no-huge-pages") {
        redislab_alloc::huge::disable();
    }
    let mut list = SkipList::new();
    let mut rng = ChaCha8Rng::seed_from_u64(15);
    for user in 1..=MEMBERS {
        let points = rng.gen_range(0..1_000_000u32);
        list.insert(f64::from(points), format!("u{user:07}").into_bytes());
    }
    let range = ScoreRange::inclusive(400_000.0, 600_000.0);
    let best = |f: &mut dyn FnMut() -> f64| (0..3).map(|_| f()).fold(f64::INFINITY, f64::min);
    let first = best(&mut || per_call(|| list.first_in_score_range(black_box(&range)).unwrap()));
    let last = best(&mut || per_call(|| list.last_in_score_range(black_box(&range)).unwrap()));
    let parse = best(&mut || {
        per_call(|| parse_score_bound(black_box(b"400000")).map_or(0, |(v, _)| v as usize))
    });
    // 1,024 ranges in turn: each descent takes another path, so this one
    // pays the cache misses (and TLB misses) of a set bigger than the cache.
    let ranges: Vec<ScoreRange> = (0..1_024)
        .map(|_| {
            let lo = f64::from(rng.gen_range(0..800_000u32));
            ScoreRange::inclusive(lo, lo + 200_000.0)
        })
        .collect();
    let mut i = 0usize;
    let mut next_range = || {
        i = (i + 1) % ranges.len();
        &ranges[i]
    };
    let many = best(&mut || {
        per_call(|| {
            let r = next_range();
            list.first_in_score_range(black_box(r)).unwrap_or(0)
                + list.last_in_score_range(black_box(r)).unwrap_or(0)
        })
    });
    let paired = best(&mut || per_call(|| list.score_range_span(black_box(&range)).unwrap().0));
    let many_paired = best(&mut || {
        per_call(|| {
            let r = next_range();
            list.score_range_span(black_box(r))
                .map_or(0, |(a, b)| a + b)
        })
    });
    println!(
        "{MEMBERS} members, {} levels in use, huge pages {}",
        list.level(),
        if redislab_alloc::huge::enabled() {
            "on"
        } else {
            "off"
        }
    );
    println!("first in [400000, 600000]   {first:6.1} ns");
    println!("last in [400000, 600000]    {last:6.1} ns");
    println!("both, paired walk           {paired:6.1} ns");
    println!("both, 1,024 ranges in turn  {many:6.1} ns");
    println!("  the same, paired walk     {many_paired:6.1} ns");
    println!("parse one bound \"400000\"    {parse:6.1} ns");
}

/// The server's allocator (the records' buffer on huge pages).
#[global_allocator]
static ALLOC: redislab_alloc::huge::HugePages = redislab_alloc::huge::HugePages;
