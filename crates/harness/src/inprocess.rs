//! The core measured in process: [`Server::execute`] called directly, no socket.
//!
//! Shared by the `core_zset` bench and lab 05c-cost, so both time the same commands
//! on the same data the same way:
//!
//! * [`leaderboard`]: the seeded 1M-member zset of article 05 (`u0000001`…, points
//!   uniform in `[0, 1,000,000)`), and [`load`] to put it into a [`Server`];
//! * [`zset_ops`]: the commands whose per-operation cost is compared with Redis's own
//!   server-side time;
//! * [`measure_op`]: warm-up, then every call timed on its own in nanoseconds. A
//!   call is `execute` plus encoding the reply as RESP2 into a reused buffer, which
//!   is what Redis's `usec_per_call` covers too (the command, and writing its reply
//!   into the client's buffer; not reading the request or the socket).

use std::fmt;
use std::time::Instant;

use hdrhistogram::Histogram;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use redislab_core::Server;

use crate::timing::thousands;

/// Points are uniform in `[0, MAX_POINTS)`.
pub const MAX_POINTS: u32 = 1_000_000;
/// The member the article asks about (`u123456`), when the set is that big.
pub const USER: u32 = 123_456;

/// Zero-padded so that byte order (Redis's order of tied members) is numeric order.
pub fn member(id: u32) -> String {
    format!("u{id:07}")
}

/// `n` users: user `i + 1` has `points[i]`, from ChaCha8 seeded with `seed`.
pub fn leaderboard(seed: u64, n: usize) -> Vec<u32> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n).map(|_| rng.gen_range(0..MAX_POINTS)).collect()
}

/// The user the single-member commands name: 123456, or a proportional id in a
/// smaller set.
pub fn user_of(n: usize) -> u32 {
    if n >= USER as usize {
        USER
    } else {
        ((n as f64 * USER as f64 / 1e6) as u32).clamp(1, n.max(1) as u32)
    }
}

/// `ZADD key points member` for every user from `first_id` on, one command each
/// (as the pipelined loader sends them to a server).
pub fn load(server: &mut Server, key: &str, points: &[u32], first_id: u32) -> Result<(), String> {
    let phase = crate::progress::Phase::new(
        format!("core in process: ZADD {key}"),
        Some(points.len() as u64),
    );
    for (i, p) in points.iter().enumerate() {
        if i % 10_000 == 0 {
            phase.inc(10_000.min((points.len() - i) as u64));
        }
        let argv = vec![
            b"ZADD".to_vec(),
            key.as_bytes().to_vec(),
            p.to_string().into_bytes(),
            member(first_id + i as u32).into_bytes(),
        ];
        let reply = server.run(&argv);
        if reply.is_error() {
            return Err(format!("core: ZADD {key} failed: {reply:?}"));
        }
    }
    Ok(())
}

/// A latency distribution in nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NsTiming {
    pub calls: u64,
    pub median_ns: u64,
    pub p99_ns: u64,
    pub mean_ns: f64,
    /// The core's own `INFO commandstats` usec/calls over the same calls
    /// ([`measure_op`] only), measured the way Redis measures its own (see
    /// [`Compared::server_ratio`] for how the windows differ).
    pub usec_per_call: Option<f64>,
}

impl NsTiming {
    /// The report cell: the `Display` text; `median`, `p99` (ns), `n`, and the
    /// mean as an extra.
    pub fn cell(&self) -> crate::report::Cell {
        let mut cell =
            crate::report::Cell::num(self.median_ns as f64, "ns").with_text(self.to_string());
        cell.median = Some(self.median_ns as f64);
        cell.p99 = Some(self.p99_ns as f64);
        cell.n = Some(self.calls);
        cell.with("mean", self.mean_ns, "ns")
    }
}

impl fmt::Display for NsTiming {
    /// `median 412 ns, p99 1,020 ns (n=100000)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "median {} ns, p99 {} ns (n={})",
            thousands(self.median_ns),
            thousands(self.p99_ns),
            self.calls
        )
    }
}

/// Runs `f(i)` for `i` in `0..warmup` unmeasured, then for `0..calls`, each call timed
/// on its own (the clock read, ~20–30 ns, is inside every figure; see
/// [`clock_floor`]).
pub fn measure_ns(warmup: usize, calls: usize, mut f: impl FnMut(usize)) -> NsTiming {
    // Progress is counted outside the timed call, every 4096 calls.
    let phase = crate::progress::Phase::new(
        format!("core in process: {warmup} warm-up + {calls} timed calls"),
        Some((warmup + calls) as u64),
    );
    for i in 0..warmup {
        if i % 4096 == 0 {
            phase.inc(4096.min((warmup - i) as u64));
        }
        f(i);
    }
    let mut hist =
        Histogram::<u64>::new_with_bounds(1, 600_000_000_000, 3).expect("valid histogram bounds");
    for i in 0..calls {
        if i % 4096 == 0 {
            phase.inc(4096.min((calls - i) as u64));
        }
        let start = Instant::now();
        f(i);
        let ns = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        hist.saturating_record(ns.max(1));
    }
    NsTiming {
        calls: hist.len(),
        median_ns: hist.value_at_quantile(0.5),
        p99_ns: hist.value_at_quantile(0.99),
        mean_ns: hist.mean(),
        usec_per_call: None,
    }
}

/// What [`measure_ns`] reports for a call that does nothing: the cost of the timing.
pub fn clock_floor(calls: usize) -> NsTiming {
    measure_ns(calls / 10, calls, |i| {
        std::hint::black_box(i);
    })
}

/// One command to time: its name as `INFO commandstats` spells it, and the argvs
/// to send, used in turn (call `i` sends `argvs[i % len]`).
#[derive(Clone, Debug)]
pub struct Op {
    pub name: &'static str,
    pub argvs: Vec<Vec<Vec<u8>>>,
}

impl Op {
    pub fn fixed(name: &'static str, args: &[&str]) -> Op {
        Op {
            name,
            argvs: vec![args.iter().map(|a| a.as_bytes().to_vec()).collect()],
        }
    }

    pub fn argv(&self, i: usize) -> &[Vec<u8>] {
        &self.argvs[i % self.argvs.len()]
    }

    /// The first argv as text, for a label: `ZSCORE lb u0123456`.
    pub fn shown(&self) -> String {
        let words: Vec<String> = self.argvs[0]
            .iter()
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        let text = words.join(" ");
        if self.argvs.len() > 1 {
            format!("{text} (…{} scores in turn)", self.argvs.len())
        } else {
            text
        }
    }
}

/// How many different scores the timed ZADD cycles through.
pub const ZADD_SCORES: usize = 1024;

/// The commands compared per operation with Redis, on zset `key` and `user`:
/// ZADD (moving `user` to one of [`ZADD_SCORES`] seeded scores in turn), ZINCRBY
/// (+5, the article's), ZSCORE, ZREVRANK, ZRANGE 0 9 REV WITHSCORES and ZCOUNT
/// `[lo, hi]`. ZADD and ZINCRBY change `user`'s score; put it back afterwards.
pub fn zset_ops(key: &str, user: &str, lo: u32, hi: u32, seed: u64) -> Vec<Op> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x05c0_05c0);
    let zadd = Op {
        name: "zadd",
        argvs: (0..ZADD_SCORES)
            .map(|_| {
                let score = rng.gen_range(0..MAX_POINTS).to_string();
                [
                    b"ZADD".as_slice(),
                    key.as_bytes(),
                    score.as_bytes(),
                    user.as_bytes(),
                ]
                .iter()
                .map(|a| a.to_vec())
                .collect()
            })
            .collect(),
    };
    vec![
        zadd,
        Op::fixed("zincrby", &["ZINCRBY", key, "5", user]),
        Op::fixed("zscore", &["ZSCORE", key, user]),
        Op::fixed("zrevrank", &["ZREVRANK", key, user]),
        Op::fixed("zrange", &["ZRANGE", key, "0", "9", "REV", "WITHSCORES"]),
        Op::fixed("zcount", &["ZCOUNT", key, &lo.to_string(), &hi.to_string()]),
    ]
}

/// Times `op` on `server`: `execute` and RESP2 encoding of the reply per call. The
/// first reply must not be an error.
pub fn measure_op(
    server: &mut Server,
    op: &Op,
    warmup: usize,
    calls: usize,
) -> Result<NsTiming, String> {
    let first = server.run(op.argv(0));
    if first.is_error() {
        return Err(format!("core: {} failed: {first:?}", op.shown()));
    }
    let mut out = Vec::with_capacity(4096);
    let before = core_command_stats(server, op.name);
    let mut timing = measure_ns(warmup, calls, |i| {
        out.clear();
        server
            .run(op.argv(i))
            .encode(&mut out, redislab_core::reply::Protocol::Resp2);
        std::hint::black_box(&out);
    });
    timing.usec_per_call = match (before, core_command_stats(server, op.name)) {
        (Some((c0, u0)), Some((c1, u1))) if c1 > c0 => {
            Some(u1.saturating_sub(u0) as f64 / (c1 - c0) as f64)
        }
        _ => None,
    };
    Ok(timing)
}

/// `(calls, usec)` of `command` in the core's own `INFO commandstats`.
fn core_command_stats(server: &mut Server, command: &str) -> Option<(u64, u64)> {
    let info = server.cmd(&["INFO", "commandstats"]).to_resp2();
    crate::timing::stats_in_info(&String::from_utf8_lossy(&info), command)
}

/// Redis's server-side time for `op`: `warmup` calls, then `calls` calls sent in
/// pipelines of [`REDIS_PIPELINE`], and the difference of `INFO commandstats`'s
/// `calls`/`usec` for `op.name` over them (so it covers exactly those calls, and
/// nothing else on the server enters it). None if the server keeps no
/// commandstats.
pub fn redis_usec_per_call(
    kv: &mut crate::Kv,
    op: &Op,
    warmup: usize,
    calls: usize,
) -> Result<Option<f64>, String> {
    let send = |kv: &mut crate::Kv, from: usize, n: usize| -> Result<(), String> {
        for start in (from..from + n).step_by(REDIS_PIPELINE) {
            let mut p = redis::pipe();
            for i in start..(start + REDIS_PIPELINE).min(from + n) {
                let argv = op.argv(i);
                let c = p.cmd(&String::from_utf8_lossy(&argv[0]));
                for a in &argv[1..] {
                    c.arg(a.as_slice());
                }
                c.ignore();
            }
            p.query::<()>(kv.conn())
                .map_err(|e| format!("{}: {}: {e}", kv.name, op.shown()))?;
        }
        Ok(())
    };
    send(kv, 0, warmup)?;
    let before = crate::timing::command_stats(kv, op.name);
    send(kv, warmup, calls)?;
    let after = crate::timing::command_stats(kv, op.name);
    Ok(match (before, after) {
        (Some((c0, u0)), Some((c1, u1))) if c1 > c0 => {
            Some(u1.saturating_sub(u0) as f64 / (c1 - c0) as f64)
        }
        _ => None,
    })
}

/// Commands per pipeline in [`redis_usec_per_call`].
pub const REDIS_PIPELINE: usize = 100;

/// One command timed on both sides: the core's round with the lowest mean, and
/// Redis's lowest `usec_per_call`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Compared {
    pub core: Option<NsTiming>,
    pub redis_us: Option<f64>,
    /// The core's own usec_per_call, best round.
    pub core_us: Option<f64>,
}

impl Compared {
    /// The core's mean over Redis's usec_per_call.
    pub fn ratio(&self) -> Option<f64> {
        Some(self.core?.mean_ns / (self.redis_us? * 1000.0))
    }

    /// The core's usec_per_call over Redis's, both read the same way. The
    /// windows differ in one part: Redis's includes writing the reply into the
    /// client buffer, the core's ends at the reply value (both start after
    /// the lookup and checks; the core's encoding comes after), so a long
    /// reply's formatting is left out of the core's figure.
    pub fn server_ratio(&self) -> Option<f64> {
        Some(self.core_us? / self.redis_us?)
    }
}

/// Times `op` in `rounds` rounds, the core (`core_calls`, a tenth as warm-up)
/// then Redis (`redis_calls`, 200 warm-up) in each, and keeps each side's best
/// round: on a shared machine a preempted round is slower on one side only, and
/// the least disturbed one is the figure to compare.
pub fn compare(
    mut server: Option<&mut Server>,
    mut redis: Option<&mut crate::Kv>,
    op: &Op,
    rounds: usize,
    core_calls: usize,
    redis_calls: usize,
) -> Result<Compared, String> {
    let mut best = Compared {
        core: None,
        redis_us: None,
        core_us: None,
    };
    for _ in 0..rounds {
        if let Some(s) = server.as_deref_mut() {
            let t = measure_op(s, op, core_calls / 10, core_calls)?;
            if best.core.is_none_or(|b| t.mean_ns < b.mean_ns) {
                best.core = Some(t);
            }
            if let Some(us) = t.usec_per_call {
                best.core_us = Some(best.core_us.map_or(us, |b: f64| b.min(us)));
            }
        }
        if let Some(kv) = redis.as_deref_mut() {
            if let Some(us) = redis_usec_per_call(kv, op, 200, redis_calls)? {
                best.redis_us = Some(best.redis_us.map_or(us, |b: f64| b.min(us)));
            }
        }
    }
    Ok(best)
}

#[cfg(test)]
mod tests {
    use super::*;
    use redislab_core::Reply;

    #[test]
    fn loads_and_times_the_ops_on_a_small_set() {
        let points = leaderboard(7, 1000);
        assert_eq!(points, leaderboard(7, 1000));
        let mut server = Server::new();
        load(&mut server, "lb", &points, 1).unwrap();
        assert_eq!(server.cmd(&["ZCARD", "lb"]), Reply::Integer(1000));
        let user = member(user_of(1000));
        assert_eq!(user, "u0000123");
        for op in zset_ops("lb", &user, 400_000, 600_000, 7) {
            let t = measure_op(&mut server, &op, 10, 100).unwrap();
            assert_eq!(t.calls, 100, "{}", op.shown());
            assert!(t.median_ns <= t.p99_ns);
        }
        let bad = Op::fixed("zscore", &["ZSCORE"]);
        assert!(measure_op(&mut server, &bad, 0, 1).is_err());
    }
}
