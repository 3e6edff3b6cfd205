//! 05o-btree — beyond the skiplist: the core's counted B+tree layout beside the
//! skiplist Redis uses, at 10⁴, 10⁵ and 10⁶ members.
//!
//! The core can hold a skiplist-encoded sorted set two ways (`CONFIG SET
//! zset-layout skiplist|btree`, a parameter of the core's own; see
//! `crates/core/src/zset/btree`): Redis's dict + skiplist with spans, or
//! Redis's dict rebuilt over compact member records + a B+tree of record
//! handles whose inner nodes count their subtrees. Both answer every command
//! the same (the zset differential tests run in both layouts against Redis).
//!
//! What the lab measures, for the same seeded data (8-character members
//! `u0000001`..., scores uniform in [0, 1,000,000)):
//!
//! * in process ([`inproc`]), one fresh core per layout and size: the real heap
//!   per member (a counting global allocator around the load), then ZADD
//!   (moving a member), ZRANK, ZRANGE of 10 at a random rank and ZCOUNT of a
//!   20% score range, ns per call, and each btree ÷ skiplist ratio (one run,
//!   with a band);
//! * over RESP ([`wire`]): Redis's `used_memory` growth per member for the same
//!   ZADDs (Redis has only the skiplist: the reference point), and the answers
//!   of the core's listener, holding the sets in the btree layout, beside
//!   Redis's (ZCARD, OBJECT ENCODING, ZRANK, ZCOUNT, ZRANGE, a DUMP digest).

mod inproc;
mod rows;
mod wire;

use std::collections::BTreeMap;
use std::process::ExitCode;

use redislab_harness::alloc::CountingAlloc;
use redislab_harness::{run, LabInfo};

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc::new();

const LAB: LabInfo = LabInfo {
    id: "05o-btree",
    uses_pg: false,
};

/// The set sizes at scale 1.
const SIZES: [usize; 3] = [10_000, 100_000, 1_000_000];
/// ZCOUNT's score range is 20% of the points' range.
const COUNT_WIDTH: u32 = 200_000;

/// The sizes at `scale` (at least 1,000 members each, each size once).
pub fn sizes(scale: f64) -> Vec<usize> {
    let mut sizes: Vec<usize> = SIZES
        .iter()
        .map(|&n| ((n as f64 * scale).round() as usize).max(1_000))
        .collect();
    sizes.dedup();
    sizes
}

fn main() -> ExitCode {
    run(LAB, |ctx| {
        let sizes = sizes(ctx.scale);
        rows::declare(&mut ctx.report, &sizes);
        let seed = ctx.seed;
        let mut redis_bytes = BTreeMap::new();
        ctx.each_kv(|kv, rec| wire::steps(kv, rec, &sizes, seed, &mut redis_bytes))?;
        if ctx.core.is_some() {
            let rec = inproc::steps(&ALLOC, &sizes, seed, &redis_bytes)?;
            ctx.report.merge(rec)?;
        }
        rows::notes(ctx, &sizes);
        Ok(())
    })
}
