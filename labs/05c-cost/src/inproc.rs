//! The core in this process: the real heap of `lb`, and each command's cost per
//! operation beside Redis's server-side time.

use std::time::Instant;

use redislab_core::Server;
use redislab_harness::alloc::CountingAlloc;
use redislab_harness::inprocess::{self, member};
use redislab_harness::timing::thousands;
use redislab_harness::{Cell, Recorder};

use crate::kv::ServerTimes;
use crate::{Data, HI, LO};

const WARMUP: usize = 20_000;
const CALLS: usize = 200_000;

/// Builds `lb` in a fresh [`Server`] under the counting allocator, then times the
/// in-process ops on it. Returns the core's and Redis's values of the `ip-*` and
/// `heap-*` rows.
pub fn steps(
    alloc: &CountingAlloc,
    d: &Data,
    redis: &ServerTimes,
) -> Result<Vec<Recorder>, String> {
    let mut core = Recorder::new("core");
    let mut server = Server::new();
    let before = alloc.snapshot();
    let started = Instant::now();
    inprocess::load(&mut server, "lb", &d.lb, 1)?;
    let secs = started.elapsed().as_secs_f64();
    let heap = alloc.snapshot().since(before);
    // Counting would add its own cost to every allocation timed below.
    alloc.set_counting(false);
    let n = d.n as f64;
    core.put(
        "heap-per-member",
        Cell::num(heap.requested as f64 / n, "B/member")
            .with("requested", heap.requested as f64, "B")
            .with("usable", heap.usable as f64, "B")
            .with("usable_per_member", heap.usable as f64 / n, "B/member")
            .with("blocks_per_member", heap.blocks as f64 / n, "")
            .with_text(format!(
                "{:.1} B/member requested ({} B); {:.1} usable ({} B); {:.2} blocks/member",
                heap.requested as f64 / n,
                thousands(heap.requested.max(0) as u64),
                heap.usable as f64 / n,
                thousands(heap.usable.max(0) as u64),
                heap.blocks as f64 / n
            )),
    );
    core.put(
        "ip-load",
        Cell::num(secs, "s")
            .with("rate", (n / secs).round(), "ZADD/s")
            .with_text(format!(
                "{secs:.2} s ({} ZADD/s)",
                thousands((n / secs) as u64)
            )),
    );
    core.put("ip-clock", inprocess::clock_floor(CALLS).cell());

    let mut redis_rec = Recorder::new("redis");
    let user = member(d.user);
    let back = d.points_of(d.user).to_string();
    for op in inprocess::zset_ops("lb", &user, LO, HI, d.seed) {
        let t = inprocess::measure_op(&mut server, &op, WARMUP, CALLS)?;
        server.cmd(&["ZADD", "lb", &back, &user]);
        let key = format!("ip-{}", op.name);
        // The core's own INFO commandstats over the same calls: Redis's
        // usec_per_call window, less the reply's encoding.
        let own = t
            .usec_per_call
            .map_or(String::new(), |us| format!(", usec_per_call {us:.3}"));
        let mut cell = t
            .cell()
            .with_text(format!("{t}, mean {:.0} ns{own}", t.mean_ns));
        if let Some(us) = t.usec_per_call {
            cell = cell.with("usec_per_call", us, "µs");
        }
        core.put(&key, cell);
        if let Some(&(us, calls)) = redis.get(op.name) {
            let ns = us * 1000.0;
            let mut cell = Cell::num(ns, "ns")
                .with_text(format!("usec_per_call {us:.2} = {ns:.0} ns (n={calls})"));
            cell.server_us = Some(us);
            cell.n = Some(calls);
            redis_rec.put(&key, cell);
            core.put(
                &format!("{key}-ratio"),
                Cell::num(t.mean_ns / ns, "×").with_text(format!(
                    "{:.2}× (core mean {:.0} ns / redis {ns:.0} ns)",
                    t.mean_ns / ns,
                    t.mean_ns
                )),
            );
        }
    }
    Ok(vec![core, redis_rec])
}
