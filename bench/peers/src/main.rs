//! `zset_peers`: the core's sorted set in process beside another Rust
//! implementation of Redis's structures, yo-kv (crates.io, pinned in
//! Cargo.toml), on the same data in the same process: ./run.sh bench's
//! "peers" section.
//!
//! The data is lab 05c's leaderboard: 1,000,000 members `u0000001`… with
//! seeded points, built by one ZADD per member. Each implementation gets its
//! own copy, then, per implementation:
//!
//! * **build**: the wall time of the 1,000,000 single ZADDs;
//! * **memory**: the live heap the set keeps (bytes requested, bytes malloc
//!   set aside, allocations), from the counting global allocator around the
//!   build (yo-kv's arenas come from the global allocator too);
//! * **per operation**: ZADD (the user moved to one of 1,024 seeded scores in
//!   turn), ZSCORE, ZREVRANK, ZRANGE 0 9 REV WITHSCORES and ZCOUNT 400000
//!   600000, each call timed on its own (`redislab_harness::inprocess::
//!   measure_ns`), three rounds with the implementations taking turns, the
//!   round with the lowest mean kept.
//!
//! The implementations, and what one call covers:
//!
//! * `core-command`: the core as a server runs a request: `Server::call_into`
//!   (table lookup, arity and flag checks, the command, statistics, the reply
//!   encoded as RESP2 into a reused buffer). This is the figure the issue
//!   compared and the one every other in-process row of the bench shows.
//! * `core-typed` and `core-btree-typed`: the core's keyspace and sorted set
//!   called as Rust (`Keyspace::get_mut`, `Zset::add` / `score` /
//!   `rank_with_score` / `rank_range` / `score_span`), with the skiplist
//!   (Redis's layout, the default) and with the core's own B+tree layout
//!   (`CONFIG SET zset-layout btree`). No argv, no reply.
//! * `yo-kv`: yo-kv's `Keyspace` methods (`zadd`, `zscore`, `zrank`,
//!   `zwindow` + `zwalk`, `zcount`), which is how yo-kv is used in process:
//!   typed calls, no protocol.
//!
//! Beside them, the hashing one ZSCORE does (the key and the member) with
//! each implementation's hash, timed alone.
//!
//! The typed ZRANGE of every implementation copies the ten members' bytes and
//! scores into one reused buffer, so each walks the same members and hands
//! the same bytes over.
//!
//!     zset_peers --out FILE [--members N] [--calls N]

use std::time::Instant;

use redislab_core::keyspace::{Keyspace, Value};
use redislab_core::server::{ClientId, ClientKind, ConnectInfo};
use redislab_core::zset::{AddFlags, AddOutcome, Layout, Limits, ScoreRange, Zset};
use redislab_core::Server;
use redislab_harness::inprocess::{self, NsTiming};
use serde_json::{json, Value as Json};

#[global_allocator]
static ALLOC: redislab_alloc::CountingAlloc = redislab_alloc::CountingAlloc::new();

const KEY: &[u8] = b"lb";
/// 05c's seed, so the user's score is the one the lab shows.
const SEED: u64 = 42;
const ROUNDS: usize = 3;
const LO: u32 = 400_000;
const HI: u32 = 600_000;
/// The version Cargo.toml pins (said in the output).
const YO_KV: &str = "0.3.33";

/// One sorted set under test, behind the calls every implementation answers.
trait Peer {
    /// ZADD key score member; true if it answered without an error.
    fn zadd(&mut self, score: f64, member: &[u8]) -> bool;
    fn zscore(&mut self, member: &[u8]) -> Option<f64>;
    fn zrevrank(&mut self, member: &[u8]) -> Option<usize>;
    /// ZRANGE 0 9 REV WITHSCORES into `out` (cleared first).
    fn top10(&mut self, out: &mut Vec<u8>);
    fn zcount(&mut self, lo: f64, hi: f64) -> usize;
}

/// The core as the listener drives it: argv in, RESP2 out.
struct CoreCommand {
    server: Server,
    id: ClientId,
    out: Vec<u8>,
    argv: Vec<Vec<u8>>,
}

impl CoreCommand {
    fn new() -> CoreCommand {
        let mut server = Server::new();
        let id = server.connect(ConnectInfo {
            kind: ClientKind::Connection,
            addr: "127.0.0.1:1".into(),
            laddr: "127.0.0.1:2".into(),
        });
        CoreCommand {
            server,
            id,
            out: Vec::with_capacity(4096),
            argv: Vec::with_capacity(8),
        }
    }

    /// Runs the argv in `self.argv`; the reply is in `self.out`.
    fn run(&mut self) {
        self.out.clear();
        self.server.call_into(self.id, &self.argv, &mut self.out);
    }

    /// Refills `self.argv` with `words`, reusing its buffers (no allocation
    /// once they are big enough).
    fn set_argv(&mut self, words: &[&[u8]]) {
        self.argv.resize_with(words.len(), Vec::new);
        for (slot, word) in self.argv.iter_mut().zip(words) {
            slot.clear();
            slot.extend_from_slice(word);
        }
    }

    fn integer_reply(&self) -> Option<usize> {
        let text = self.out.strip_prefix(b":")?.strip_suffix(b"\r\n")?;
        std::str::from_utf8(text).ok()?.parse().ok()
    }
}

impl Peer for CoreCommand {
    fn zadd(&mut self, score: f64, member: &[u8]) -> bool {
        let score = redislab_core::num::DoubleText::new(score);
        self.set_argv(&[b"ZADD", KEY, score.as_bytes(), member]);
        self.run();
        self.out.first() == Some(&b':')
    }

    fn zscore(&mut self, member: &[u8]) -> Option<f64> {
        self.set_argv(&[b"ZSCORE", KEY, member]);
        self.run();
        let mut lines = self.out.split(|&b| b == b'\n');
        let _length = lines.next()?;
        let text = lines.next()?.strip_suffix(b"\r")?;
        std::str::from_utf8(text).ok()?.parse().ok()
    }

    fn zrevrank(&mut self, member: &[u8]) -> Option<usize> {
        self.set_argv(&[b"ZREVRANK", KEY, member]);
        self.run();
        self.integer_reply()
    }

    fn top10(&mut self, out: &mut Vec<u8>) {
        self.set_argv(&[b"ZRANGE", KEY, b"0", b"9", b"REV", b"WITHSCORES"]);
        self.run();
        out.clear();
        out.extend_from_slice(&self.out);
    }

    fn zcount(&mut self, lo: f64, hi: f64) -> usize {
        let (lo, hi) = (lo.to_string(), hi.to_string());
        self.set_argv(&[b"ZCOUNT", KEY, lo.as_bytes(), hi.as_bytes()]);
        self.run();
        self.integer_reply().unwrap_or(0)
    }
}

/// The core's keyspace and sorted set called as Rust.
struct CoreTyped {
    keyspace: Keyspace,
    limits: Limits,
}

impl CoreTyped {
    fn new(layout: Layout) -> CoreTyped {
        CoreTyped {
            keyspace: Keyspace::new(),
            limits: Limits {
                layout,
                ..Limits::default()
            },
        }
    }

    /// The set to write (`lookupKeyWrite`: WATCH and the write access).
    fn zset_mut(&mut self) -> Option<&mut Zset> {
        match self.keyspace.get_mut(KEY)? {
            Value::Zset(z) => Some(z),
            _ => None,
        }
    }

    /// The set to read (`lookupKeyRead`, as ZSCORE, ZRANK, ZRANGE and ZCOUNT
    /// look it up).
    fn zset(&mut self) -> Option<&Zset> {
        match self.keyspace.get(KEY)? {
            Value::Zset(z) => Some(z),
            _ => None,
        }
    }
}

impl Peer for CoreTyped {
    fn zadd(&mut self, score: f64, member: &[u8]) -> bool {
        let limits = self.limits;
        if self.zset_mut().is_none() {
            self.keyspace
                .insert(KEY, Value::Zset(Box::new(Zset::new())));
        }
        let Some(z) = self.zset_mut() else {
            return false;
        };
        !matches!(
            z.add(score, member, AddFlags::default(), &limits),
            AddOutcome::NotANumber
        )
    }

    fn zscore(&mut self, member: &[u8]) -> Option<f64> {
        self.zset()?.score(member)
    }

    fn zrevrank(&mut self, member: &[u8]) -> Option<usize> {
        self.zset()?.rank_with_score(member, true).map(|(r, _)| r)
    }

    fn top10(&mut self, out: &mut Vec<u8>) {
        out.clear();
        let Some(z) = self.zset() else { return };
        let end = z.len().min(10).saturating_sub(1);
        for (score, member) in z.rank_range(0, end, true) {
            out.extend_from_slice(member);
            out.extend_from_slice(&score.to_le_bytes());
        }
    }

    fn zcount(&mut self, lo: f64, hi: f64) -> usize {
        let range = ScoreRange::inclusive(lo, hi);
        self.zset()
            .and_then(|z| z.score_span(&range))
            .map_or(0, |(first, last)| last + 1 - first)
    }
}

/// yo-kv's keyspace, as its documentation says to use it in process.
struct YoKv {
    keyspace: yo_kv::Keyspace,
}

impl Peer for YoKv {
    fn zadd(&mut self, score: f64, member: &[u8]) -> bool {
        self.keyspace
            .zadd(
                KEY,
                std::iter::once((score, member)),
                yo_kv::ZAdd::default(),
            )
            .is_ok()
    }

    fn zscore(&mut self, member: &[u8]) -> Option<f64> {
        self.keyspace.zscore(KEY, member).ok().flatten()
    }

    fn zrevrank(&mut self, member: &[u8]) -> Option<usize> {
        let found = self.keyspace.zrank(KEY, member, true).ok().flatten();
        found.map(|(rank, _)| rank)
    }

    fn top10(&mut self, out: &mut Vec<u8>) {
        out.clear();
        let q = yo_kv::Query::rank(0, 9).rev(true);
        let Ok(window) = self.keyspace.zwindow(KEY, &q) else {
            return;
        };
        let _ = self.keyspace.zwalk(KEY, window, |member, score| {
            member.write_to(out);
            out.extend_from_slice(&score.to_le_bytes());
        });
    }

    fn zcount(&mut self, lo: f64, hi: f64) -> usize {
        let q = yo_kv::Query::score(yo_kv::ZBound::closed(lo), yo_kv::ZBound::closed(hi));
        self.keyspace.zcount(KEY, &q).unwrap_or(0)
    }
}

struct Entry {
    key: &'static str,
    label: &'static str,
    peer: Box<dyn Peer>,
    build_seconds: f64,
    heap: redislab_alloc::Heap,
}

fn peers() -> Vec<(&'static str, &'static str, Box<dyn Peer>)> {
    vec![
        (
            "core-command",
            "core, command path (Server::call_into: argv in, RESP2 out), skiplist",
            Box::new(CoreCommand::new()),
        ),
        (
            "core-typed",
            "core, typed calls (Keyspace + Zset), skiplist (Redis's layout)",
            Box::new(CoreTyped::new(Layout::Skiplist)),
        ),
        (
            "core-btree-typed",
            "core, typed calls (Keyspace + Zset), B+tree layout",
            Box::new(CoreTyped::new(Layout::Btree)),
        ),
        (
            "yo-kv",
            "yo-kv 0.3.33, typed calls (Keyspace)",
            Box::new(YoKv {
                keyspace: yo_kv::Keyspace::new(),
            }),
        ),
    ]
}

/// Builds the set in `peer` by one ZADD per member; the heap it keeps and the
/// wall time.
fn build(peer: &mut dyn Peer, points: &[u32]) -> Result<(f64, redislab_alloc::Heap), String> {
    let mut member = String::with_capacity(16);
    let before = ALLOC.snapshot();
    let started = Instant::now();
    for (i, p) in points.iter().enumerate() {
        member.clear();
        use std::fmt::Write;
        let _ = write!(member, "u{:07}", i + 1);
        if !peer.zadd(f64::from(*p), member.as_bytes()) {
            return Err(format!("ZADD {} {member} failed", *p));
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    Ok((seconds, ALLOC.snapshot().since(before)))
}

/// The operations timed per call, with how many calls each.
#[derive(Clone, Copy)]
enum Op {
    Zadd,
    Zscore,
    Zrevrank,
    Top10,
    Zcount,
}

const OPS: [(Op, &str, &str); 5] = [
    (Op::Zadd, "zadd", "ZADD lb <score> u0123456 (1,024 in turn)"),
    (Op::Zscore, "zscore", "ZSCORE lb u0123456"),
    (Op::Zrevrank, "zrevrank", "ZREVRANK lb u0123456"),
    (Op::Top10, "zrange", "ZRANGE lb 0 9 REV WITHSCORES"),
    (Op::Zcount, "zcount", "ZCOUNT lb 400000 600000"),
];

fn time_op(peer: &mut dyn Peer, op: Op, user: &[u8], scores: &[f64], calls: usize) -> NsTiming {
    let mut out = Vec::with_capacity(1024);
    let warmup = calls / 10;
    match op {
        Op::Zadd => inprocess::measure_ns(warmup, calls, |i| {
            std::hint::black_box(peer.zadd(scores[i % scores.len()], user));
        }),
        Op::Zscore => inprocess::measure_ns(warmup, calls, |_| {
            std::hint::black_box(peer.zscore(user));
        }),
        Op::Zrevrank => inprocess::measure_ns(warmup, calls, |_| {
            std::hint::black_box(peer.zrevrank(user));
        }),
        Op::Top10 => inprocess::measure_ns(warmup, calls, |_| {
            peer.top10(&mut out);
            std::hint::black_box(&out);
        }),
        Op::Zcount => inprocess::measure_ns(warmup, calls, |_| {
            std::hint::black_box(peer.zcount(f64::from(LO), f64::from(HI)));
        }),
    }
}

/// Every implementation must give the same answers before its times count.
fn check_answers(entries: &mut [Entry], user: &[u8]) -> Result<Json, String> {
    let mut seen: Option<(Option<f64>, Option<usize>, usize)> = None;
    let first_key = entries.first().map_or("", |e| e.key);
    for e in entries.iter_mut() {
        let got = (
            e.peer.zscore(user),
            e.peer.zrevrank(user),
            e.peer.zcount(f64::from(LO), f64::from(HI)),
        );
        match seen {
            None => seen = Some(got),
            Some(first) if first != got => {
                return Err(format!(
                    "{} answers {got:?} where {} answers {first:?}",
                    e.key, first_key
                ))
            }
            Some(_) => {}
        }
    }
    let (score, rank, count) = seen.unwrap_or_default();
    Ok(json!({"zscore": score, "zrevrank": rank, "zcount": count}))
}

fn run(members: usize, calls: usize) -> Result<Json, String> {
    let points = inprocess::leaderboard(SEED, members);
    let user = inprocess::member(inprocess::user_of(members)).into_bytes();
    let mut entries = Vec::new();
    for (key, label, mut peer) in peers() {
        eprintln!("peers: building {members} members in {key}");
        let (build_seconds, heap) = build(peer.as_mut(), &points)?;
        entries.push(Entry {
            key,
            label,
            peer,
            build_seconds,
            heap,
        });
    }
    // Counting costs an atomic update per allocation: off for the timings.
    ALLOC.set_counting(false);
    let answers = check_answers(&mut entries, &user)?;
    let original = f64::from(points[inprocess::user_of(members) as usize - 1]);
    let scores: Vec<f64> = {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(SEED ^ 0x05c0_05c0);
        (0..inprocess::ZADD_SCORES)
            .map(|_| f64::from(rng.gen_range(0..inprocess::MAX_POINTS)))
            .collect()
    };
    let mut ops = Vec::new();
    for (op, key, label) in OPS {
        let n = match op {
            Op::Top10 | Op::Zcount => calls / 5,
            _ => calls,
        };
        let mut best: Vec<Option<NsTiming>> = vec![None; entries.len()];
        for round in 0..ROUNDS {
            // Take turns going first.
            let mut order: Vec<usize> = (0..entries.len()).collect();
            order.rotate_left(round % entries.len());
            for i in order {
                let t = time_op(entries[i].peer.as_mut(), op, &user, &scores, n);
                if best[i].is_none_or(|b| t.mean_ns < b.mean_ns) {
                    best[i] = Some(t);
                }
            }
        }
        if matches!(op, Op::Zadd) {
            for e in entries.iter_mut() {
                e.peer.zadd(original, &user);
            }
        }
        let mut row = json!({"key": key, "command": label, "calls": n});
        for (e, t) in entries.iter().zip(&best) {
            if let Some(t) = t {
                row[e.key] = json!({"mean_ns": t.mean_ns, "median_ns": t.median_ns,
                                    "p99_ns": t.p99_ns});
            }
        }
        eprintln!(
            "peers: {key:9} {}",
            entries
                .iter()
                .zip(&best)
                .map(|(e, t)| format!("{} {:.0} ns", e.key, t.map_or(0.0, |t| t.mean_ns)))
                .collect::<Vec<_>>()
                .join(" · ")
        );
        ops.push(row);
    }
    let n = members as f64;
    let impls: Vec<Json> = entries
        .iter()
        .map(|e| {
            json!({
                "key": e.key, "label": e.label,
                "build_seconds": e.build_seconds,
                "build_per_sec": n / e.build_seconds,
                "heap": {"requested_per_member": e.heap.requested as f64 / n,
                         "usable_per_member": e.heap.usable as f64 / n,
                         "blocks_per_member": e.heap.blocks as f64 / n},
            })
        })
        .collect();
    let hashing = hash_costs(&user, calls * 10);
    Ok(json!({
        "yo_kv_version": YO_KV,
        "hashing": hashing,
        "members": members,
        "rounds": ROUNDS,
        "clock_ns": inprocess::clock_floor(100_000).median_ns,
        "answers": answers,
        "impls": impls,
        "ops": ops,
    }))
}

/// What one ZSCORE spends hashing in each implementation: the key and the
/// member, with the core's hash (Redis's SipHash-1-2, which the core keeps so
/// that its dicts' buckets, scans and random draws are Redis's) and with
/// yo-kv's (wyhash). Mean ns of a pair over `calls` pairs timed together (a
/// clock read per pair would cost more than the pair), best of three.
fn hash_costs(member: &[u8], calls: usize) -> Json {
    let seed = redislab_core::dict::DEFAULT_SEED;
    let time = |f: &dyn Fn() -> u64| {
        (0..3)
            .map(|_| {
                let started = Instant::now();
                for _ in 0..calls {
                    std::hint::black_box(f());
                }
                started.elapsed().as_nanos() as f64 / calls as f64
            })
            .fold(f64::MAX, f64::min)
    };
    let sip = time(&|| {
        redislab_core::dict::siphash12(std::hint::black_box(KEY), &seed)
            ^ redislab_core::dict::siphash12(std::hint::black_box(member), &seed)
    });
    let wy = time(&|| {
        yo_common::wyhash::wyhash(std::hint::black_box(KEY), 0)
            ^ yo_common::wyhash::wyhash(std::hint::black_box(member), 0)
    });
    eprintln!("peers: hashing key + member: SipHash-1-2 {sip:.1} ns, wyhash {wy:.1} ns");
    json!({"siphash12_ns": sip, "wyhash_ns": wy})
}

fn main() -> std::process::ExitCode {
    let usage = "usage: zset_peers --out FILE [--members N] [--calls N]";
    let (mut out, mut members, mut calls) = (None, 1_000_000usize, 100_000usize);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let value = args.next();
        match (a.as_str(), value) {
            ("--out", Some(v)) => out = Some(v),
            ("--members", Some(v)) if v.parse::<usize>().is_ok_and(|m| m >= 1) => {
                members = v.parse().unwrap_or(members)
            }
            ("--calls", Some(v)) if v.parse::<usize>().is_ok_and(|c| c >= 10) => {
                calls = v.parse().unwrap_or(calls)
            }
            _ => {
                eprintln!("{usage}");
                return std::process::ExitCode::from(2);
            }
        }
    }
    let Some(out) = out else {
        eprintln!("{usage}");
        return std::process::ExitCode::from(2);
    };
    match run(members, calls) {
        Ok(doc) => {
            let text = serde_json::to_string_pretty(&doc).unwrap_or_default();
            if let Err(e) = std::fs::write(&out, text + "\n") {
                eprintln!("zset_peers: {out}: {e}");
                return std::process::ExitCode::FAILURE;
            }
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("zset_peers: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
