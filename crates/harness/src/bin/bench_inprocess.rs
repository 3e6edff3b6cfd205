//! `bench_inprocess`: the in-process half of `./run.sh bench` (called by
//! scripts/bench.py with the private Redis that scripts/bench.sh started).
//!
//! * **time**: the same data is built in a [`Server`] in this process and on the
//!   Redis, then each command is timed on both: the core's ns per call
//!   (`Server::run` + RESP2 encoding into a reused buffer, median and mean after a
//!   warm-up; [`inprocess::measure_op`]) beside Redis's server-side
//!   `usec_per_call` for the same calls ([`inprocess::redis_usec_per_call`]),
//!   and the core's own usec_per_call (its `INFO commandstats` over the same
//!   calls: Redis's window but for the reply's encoding), best of three
//!   alternating rounds
//!   ([`inprocess::compare`]);
//! * **memory**: for each type, the core's real heap in process (the counting
//!   allocator, [`heap::core_heap`]) beside Redis's `used_memory` growth for the
//!   same commands ([`heap::redis_growth`]).
//!
//! Writes one JSON document (`{"inprocess": [...], "memory_types": [...]}`) to
//! `--out`. Refuses a Redis that is not empty, and empties it (FLUSHALL) at the
//! end, so bench.py's own fill starts from nothing.
//!
//!     bench_inprocess --redis-url redis://127.0.0.1:PORT --out FILE [--quick]

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use redislab_core::Server;
use redislab_harness::alloc::CountingAlloc;
use redislab_harness::heap::{self, argv};
use redislab_harness::inprocess::{self, Op};
use redislab_harness::Kv;
use serde_json::{json, Value};

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc::new();

type Argv = Vec<Vec<u8>>;

const SEED: u64 = 15;
/// The zset: 1,000,000 members `u0000001`… with seeded points (article 05's
/// leaderboard, as lab 05c-cost).
const ZSET_MEMBERS: usize = 1_000_000;
/// The geo set: shops uniform in Vietnam's bounding box (lab 05i), searched
/// within [`RADIUS_KM`] of Hoan Kiem.
const SHOPS: usize = 1_000_000;
const LON: (f64, f64) = (102.14, 109.47);
const LAT: (f64, f64) = (8.18, 23.39);
const HOAN_KIEM: (&str, &str) = ("105.8542", "21.0285");
const RADIUS_KM: &str = "5";
/// Dense HLL keys `h:pd0..9`, 20,000 elements each, consecutive keys sharing
/// half (lab 02f).
const HLL_KEYS: usize = 10;
/// Fields of the hash HGET reads (a hashtable, no field TTLs).
const HASH_FIELDS: usize = 1_000;
const HLL_PER_KEY: usize = 20_000;
/// Bitmaps of this many bytes for BITOP and SETBIT.
const BITMAP_BYTES: usize = 16_384;
const ROUNDS: usize = 3;

struct Bench {
    key: &'static str,
    label: String,
    op: Op,
    /// Core calls per round, Redis calls per round.
    calls: (usize, usize),
}

fn many(name: &'static str, argvs: Vec<Argv>) -> Op {
    Op { name, argvs }
}

fn load_commands() -> Vec<Argv> {
    let mut out = Vec::new();
    out.push(argv(&["SET", "s:k", "xxx"]));
    out.push(argv(&["SET", "s:n", "0"]));
    let points = inprocess::leaderboard(SEED, ZSET_MEMBERS);
    for (start, chunk) in points.chunks(1_000).enumerate() {
        let mut cmd = argv(&["ZADD", "z:lb"]);
        for (i, p) in chunk.iter().enumerate() {
            cmd.push(p.to_string().into_bytes());
            cmd.push(inprocess::member((start * 1_000 + i + 1) as u32).into_bytes());
        }
        out.push(cmd);
    }
    let mut rng = ChaCha8Rng::seed_from_u64(SEED ^ 0x051);
    for start in (0..SHOPS).step_by(1_000) {
        let mut cmd = argv(&["GEOADD", "g:shops"]);
        for i in start..(start + 1_000).min(SHOPS) {
            let lon: f64 = rng.gen_range(LON.0..LON.1);
            let lat: f64 = rng.gen_range(LAT.0..LAT.1);
            cmd.push(lon.to_string().into_bytes());
            cmd.push(lat.to_string().into_bytes());
            cmd.push(format!("s{i}").into_bytes());
        }
        out.push(cmd);
    }
    for key in 0..HLL_KEYS {
        let first = key * HLL_PER_KEY / 2;
        for start in (first..first + HLL_PER_KEY).step_by(1_000) {
            let mut cmd = argv(&["PFADD", &format!("h:pd{key}")]);
            cmd.extend((start..start + 1_000).map(|j| format!("v:{j}").into_bytes()));
            out.push(cmd);
        }
    }
    out.push(argv(&["PFMERGE", "h:pa", "h:pd0"]));
    let mut hset = argv(&["HSET", "h:f"]);
    for i in 0..HASH_FIELDS {
        hset.push(format!("f{i}").into_bytes());
        hset.push(b"value".to_vec());
    }
    out.push(hset);
    for (k, seed) in [("b:1", 1u64), ("b:2", 2), ("b:s", 3)] {
        let mut rng = ChaCha8Rng::seed_from_u64(SEED ^ seed);
        let bytes: Vec<u8> = (0..BITMAP_BYTES).map(|_| rng.gen()).collect();
        out.push(vec![b"SET".to_vec(), k.as_bytes().to_vec(), bytes]);
    }
    out
}

fn benches() -> Vec<Bench> {
    let cheap = (30_000, 5_000);
    let user = inprocess::member(inprocess::USER);
    let mut v = Vec::new();
    let b = |key, label: &str, op, calls| Bench {
        key,
        label: label.to_string(),
        op,
        calls,
    };
    v.push(b(
        "set",
        "SET s:k xxx",
        Op::fixed("set", &["SET", "s:k", "xxx"]),
        cheap,
    ));
    v.push(b(
        "get",
        "GET s:k",
        Op::fixed("get", &["GET", "s:k"]),
        cheap,
    ));
    v.push(b(
        "incr",
        "INCR s:n",
        Op::fixed("incr", &["INCR", "s:n"]),
        cheap,
    ));
    let lo = 400_000;
    let hi = 600_000;
    for op in inprocess::zset_ops("z:lb", &user, lo, hi, SEED) {
        let (key, label, calls) = match op.name {
            "zadd" => (
                "zadd",
                format!("ZADD z:lb <score> {user} (1M members)"),
                cheap,
            ),
            "zincrby" => ("zincrby", format!("ZINCRBY z:lb 5 {user}"), cheap),
            "zscore" => ("zscore", format!("ZSCORE z:lb {user}"), cheap),
            "zrevrank" => ("zrevrank", format!("ZREVRANK z:lb {user}"), cheap),
            "zrange" => ("zrange", "ZRANGE z:lb 0 9 REV WITHSCORES".into(), cheap),
            "zcount" => ("zcount", format!("ZCOUNT z:lb {lo} {hi}"), (10_000, 3_000)),
            _ => continue,
        };
        v.push(Bench {
            key,
            label,
            op,
            calls,
        });
    }
    // One member's rank costs what its place in the levels makes it cost,
    // and Redis draws new levels with every fill (its ZREVRANK of the one
    // user above measured 106 to 289 ns across runs, the core's seeded
    // levels never move): the same command over 1,024 members in turn
    // averages that lottery out on both sides.
    let mut rng = ChaCha8Rng::seed_from_u64(SEED ^ 0x2e7);
    v.push(b(
        "zrevrank-many",
        "ZREVRANK z:lb <member> (1,024 members in turn)",
        many(
            "zrevrank",
            (0..1_024)
                .map(|_| {
                    let id = rng.gen_range(1..=ZSET_MEMBERS as u32);
                    argv(&["ZREVRANK", "z:lb", &inprocess::member(id)])
                })
                .collect(),
        ),
        cheap,
    ));
    // ZCOUNT's two descents likewise depend on the levels near its bounds.
    v.push(b(
        "zcount-many",
        "ZCOUNT z:lb <lo> <lo+200000> (1,024 ranges in turn)",
        many(
            "zcount",
            (0..1_024)
                .map(|_| {
                    let lo = rng.gen_range(0..800_000u32);
                    argv(&[
                        "ZCOUNT",
                        "z:lb",
                        &lo.to_string(),
                        &(lo + 200_000).to_string(),
                    ])
                })
                .collect(),
        ),
        (10_000, 3_000),
    ));
    v.push(b(
        "geosearch",
        &format!(
            "GEOSEARCH g:shops FROMLONLAT {} {} BYRADIUS {RADIUS_KM} km (1M shops)",
            HOAN_KIEM.0, HOAN_KIEM.1
        ),
        Op::fixed(
            "geosearch",
            &[
                "GEOSEARCH",
                "g:shops",
                "FROMLONLAT",
                HOAN_KIEM.0,
                HOAN_KIEM.1,
                "BYRADIUS",
                RADIUS_KM,
                "km",
            ],
        ),
        (5_000, 2_000),
    ));
    v.push(b(
        "pfadd",
        "PFADD h:pa <element> (dense key, 4,096 elements in turn)",
        many(
            "pfadd",
            (0..4_096)
                .map(|i| argv(&["PFADD", "h:pa", &format!("x:{i}")]))
                .collect(),
        ),
        cheap,
    ));
    v.push(b(
        "hget",
        "HGET h:f <field> (1,000-field hash, 1,024 fields in turn)",
        many(
            "hget",
            (0..1_024)
                .map(|i| argv(&["HGET", "h:f", &format!("f{}", i % HASH_FIELDS)]))
                .collect(),
        ),
        cheap,
    ));
    v.push(b(
        "pfcount1",
        "PFCOUNT h:pd0 (one dense key, cached)",
        Op::fixed("pfcount", &["PFCOUNT", "h:pd0"]),
        cheap,
    ));
    let keys: Vec<String> = (0..HLL_KEYS).map(|i| format!("h:pd{i}")).collect();
    let with = |head: &[&str]| {
        let mut a = argv(head);
        a.extend(keys.iter().map(|k| k.clone().into_bytes()));
        vec![a]
    };
    v.push(b(
        "pfcount10",
        "PFCOUNT of 10 dense keys",
        many("pfcount", with(&["PFCOUNT"])),
        (5_000, 1_000),
    ));
    v.push(b(
        "pfmerge10",
        "PFMERGE h:pm of 10 dense keys",
        many("pfmerge", with(&["PFMERGE", "h:pm"])),
        (5_000, 1_000),
    ));
    v.push(b(
        "bitop",
        &format!("BITOP AND b:d b:1 b:2 ({BITMAP_BYTES} B each)"),
        Op::fixed("bitop", &["BITOP", "AND", "b:d", "b:1", "b:2"]),
        (10_000, 3_000),
    ));
    v.push(b(
        "setbit",
        &format!("SETBIT b:s <offset> 1 ({BITMAP_BYTES} B key, 1,024 offsets in turn)"),
        many(
            "setbit",
            (0..1_024)
                .map(|i| {
                    let off = (i * 127) % (BITMAP_BYTES * 8);
                    argv(&["SETBIT", "b:s", &off.to_string(), &(i % 2).to_string()])
                })
                .collect(),
        ),
        cheap,
    ));
    v
}

/// Memory cases: the commands that build each type, and its per-element unit.
fn memory_cases() -> Vec<heap::Case> {
    let mut cases = Vec::new();
    let case = |key: &str, label: String, unit, elements, commands: Vec<Argv>, keys| heap::Case {
        key: key.into(),
        label,
        unit,
        elements,
        commands,
        keys,
    };
    // Strings: 100,000 keys with a 10-byte value (embedded).
    let n = 100_000;
    let cmds: Vec<Argv> = (0..n)
        .map(|i| argv(&["SET", &format!("ms:{i:08}"), "value:0123"]))
        .collect();
    let keys = cmds.iter().map(|c| c[1].clone()).collect();
    cases.push(case(
        "string",
        format!("{n} strings (key ms:<8 digits>, 10-byte value), per key"),
        "B/key",
        n,
        cmds,
        keys,
    ));
    // Small hashes: 10,000 hashes of 10 fields (listpack).
    let (hashes, fields) = (10_000, 10);
    let (cmds, keys) = one_command_per_key(
        "HSET",
        hashes,
        |i| format!("mh:{i:06}"),
        |i| {
            (0..fields)
                .flat_map(|f| [format!("field{f}"), format!("value{f}:{i}")])
                .collect()
        },
    );
    cases.push(case(
        "hash-small",
        format!("{hashes} hashes of {fields} fields (listpack), per field"),
        "B/field",
        hashes * fields,
        cmds,
        keys,
    ));
    // A big hash: one of 200,000 fields (hashtable).
    let n = 200_000;
    let cmds = chunked("HSET", "mH", n, |i| {
        vec![format!("field:{i:08}"), format!("value:{i}")]
    });
    cases.push(case(
        "hash-big",
        format!("one hash of {n} fields (hashtable), per field"),
        "B/field",
        n,
        cmds,
        vec![b"mH".to_vec()],
    ));
    // Sets: intset (1,000 sets of 100 integers), listpack (1,000 of 50 strings),
    // hashtable (one of 200,000 strings).
    let (sets, per) = (1_000, 100);
    let (cmds, keys) = one_command_per_key(
        "SADD",
        sets,
        |i| format!("mi:{i:05}"),
        |i| (0..per).map(|j| (j * 1_000 + i).to_string()).collect(),
    );
    cases.push(case(
        "set-intset",
        format!("{sets} sets of {per} integers (intset), per member"),
        "B/member",
        sets * per,
        cmds,
        keys,
    ));
    let (sets, per) = (1_000, 50);
    let (cmds, keys) = one_command_per_key(
        "SADD",
        sets,
        |i| format!("ml:{i:05}"),
        |i| (0..per).map(|j| format!("member:{j}:{i}")).collect(),
    );
    cases.push(case(
        "set-listpack",
        format!("{sets} sets of {per} strings (listpack), per member"),
        "B/member",
        sets * per,
        cmds,
        keys,
    ));
    let n = 200_000;
    let cmds = chunked("SADD", "mS", n, |i| vec![format!("member:{i:08}")]);
    cases.push(case(
        "set-hashtable",
        format!("one set of {n} strings (hashtable), per member"),
        "B/member",
        n,
        cmds,
        vec![b"mS".to_vec()],
    ));
    // HyperLogLogs: sparse (1,000 of 100 elements) and dense (300 of 3,000).
    for (kind, tag, n, per) in [("sparse", "hs", 1_000, 100), ("dense", "hd", 300, 3_000)] {
        let (cmds, keys) = one_command_per_key(
            "PFADD",
            n,
            |i| format!("m{tag}:{i:05}"),
            |i| (0..per).map(|j| format!("m:{i}:{j}")).collect(),
        );
        cases.push(case(
            &format!("hll-{kind}"),
            format!("{n} {kind} HyperLogLogs of {per} elements, per sketch"),
            "B/sketch",
            n,
            cmds,
            keys,
        ));
    }
    // A sorted set: one of 200,000 members (skiplist).
    let n = 200_000;
    let cmds = chunked("ZADD", "mZ", n, |i| {
        vec![(i * 7 % 1_000_003).to_string(), format!("m:{i:012}")]
    });
    cases.push(case(
        "zset",
        format!("one sorted set of {n} members (skiplist), per member"),
        "B/member",
        n,
        cmds,
        vec![b"mZ".to_vec()],
    ));
    cases
}

/// `verb key <args of 0> <args of 1> …`, 1,000 elements per command.
/// `n` commands `verb key_of(i) args(i)...`, one per key, and those keys.
fn one_command_per_key(
    verb: &str,
    n: usize,
    key_of: impl Fn(usize) -> String,
    args: impl Fn(usize) -> Vec<String>,
) -> (Vec<Argv>, Vec<Vec<u8>>) {
    let cmds: Vec<Argv> = (0..n)
        .map(|i| {
            let mut c = argv(&[verb, &key_of(i)]);
            c.extend(args(i).into_iter().map(String::into_bytes));
            c
        })
        .collect();
    let keys = cmds.iter().map(|c| c[1].clone()).collect();
    (cmds, keys)
}

fn chunked(verb: &str, key: &str, n: usize, args: impl Fn(usize) -> Vec<String>) -> Vec<Argv> {
    (0..n)
        .step_by(1_000)
        .map(|start| {
            let mut c = argv(&[verb, key]);
            for i in start..(start + 1_000).min(n) {
                c.extend(args(i).into_iter().map(String::into_bytes));
            }
            c
        })
        .collect()
}

fn run(url: &str, quick: bool) -> Result<Value, String> {
    let mut kv = Kv::connect("redis", url, "")?;
    let dbsize = kv.cmd(&["DBSIZE"])?;
    if dbsize != redis::Value::Int(0) {
        return Err(format!(
            "the Redis at {url} is not empty; bench_inprocess only uses a server bench.sh started"
        ));
    }
    // Memory first, on an empty Redis (each case's keys deleted after it).
    eprintln!("bench: memory per type (core heap in process, redis used_memory)");
    let mut memory = Vec::new();
    for c in memory_cases() {
        let core = heap::core_heap(&ALLOC, &c.commands)?;
        let growth = heap::redis_growth(&mut kv, &c.commands)?;
        for keys in c.keys.chunks(500) {
            let mut del = vec![b"DEL".as_slice()];
            del.extend(keys.iter().map(Vec::as_slice));
            kv.cmd_bytes(&del)?;
        }
        let n = c.elements as f64;
        let mut row = json!({
            "key": c.key, "label": c.label, "unit": c.unit, "elements": c.elements,
            "core": {"requested": core.requested, "usable": core.usable, "blocks": core.blocks,
                     "per_element": core.usable as f64 / n,
                     "requested_per_element": core.requested as f64 / n},
        });
        if let Some(g) = growth {
            row["redis"] = json!({"used_memory_growth": g, "per_element": g as f64 / n});
            row["ratio"] = json!(core.usable as f64 / g as f64);
        }
        eprintln!(
            "bench:   {:14} core {:8.1} {}  redis {}",
            c.key,
            core.usable as f64 / n,
            c.unit,
            growth.map_or("-".into(), |g| format!("{:.1}", g as f64 / n))
        );
        memory.push(row);
    }

    eprintln!("bench: loading the in-process data (core in process, and redis)");
    let data = load_commands();
    let mut server = Server::new();
    for cmd in &data {
        let reply = server.run(cmd);
        if reply.is_error() {
            return Err(format!("core: loading: {reply:?}"));
        }
    }
    heap::redis_growth(&mut kv, &data)?;
    drop(data);
    let clock = inprocess::clock_floor(100_000);
    let mut rows = Vec::new();
    let user = inprocess::member(inprocess::USER);
    for b in benches() {
        let calls = if quick {
            (b.calls.0 / 10, b.calls.1 / 10)
        } else {
            b.calls
        };
        let c = inprocess::compare(
            Some(&mut server),
            Some(&mut kv),
            &b.op,
            ROUNDS,
            calls.0,
            calls.1,
        )?;
        // ZADD and ZINCRBY move the user: both sides get the same score back.
        if matches!(b.key, "zadd" | "zincrby") {
            server.cmd(&["ZADD", "z:lb", "500000", &user]);
            kv.cmd(&["ZADD", "z:lb", "500000", &user])?;
        }
        let mut row = json!({"key": b.key, "command": b.label, "core_calls": calls.0,
                             "redis_calls": calls.1});
        if let Some(t) = c.core {
            row["core"] = json!({"median_ns": t.median_ns, "mean_ns": t.mean_ns, "p99_ns": t.p99_ns,
                                 "calls": t.calls, "usec_per_call": c.core_us});
        }
        if let Some(us) = c.redis_us {
            row["redis"] = json!({"usec_per_call": us});
        }
        if let Some(r) = c.ratio() {
            row["ratio"] = json!(r);
        }
        if let Some(r) = c.server_ratio() {
            row["server_ratio"] = json!(r);
        }
        let ns = |us: Option<f64>| us.map_or("-".into(), |u| format!("{:.0}", u * 1000.0));
        let ratio = |r: Option<f64>| r.map_or("-".into(), |r| format!("{r:.2}"));
        eprintln!(
            "bench:   {:10} core mean {:>8} ns, usec_per_call {:>8} ns  redis {:>8} ns  ratios {} · {}",
            b.key,
            c.core.map_or("-".into(), |t| format!("{:.0}", t.mean_ns)),
            ns(c.core_us),
            ns(c.redis_us),
            ratio(c.ratio()),
            ratio(c.server_ratio())
        );
        rows.push(row);
    }
    kv.cmd(&["FLUSHALL"])?;
    Ok(json!({
        "inprocess": rows,
        "inprocess_clock_ns": clock.median_ns,
        "inprocess_rounds": ROUNDS,
        "memory_types": memory,
    }))
}

fn main() -> std::process::ExitCode {
    let mut url = None;
    let mut out = None;
    let mut quick = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--redis-url" => url = args.next(),
            "--out" => out = args.next(),
            "--quick" => quick = true,
            _ => {
                eprintln!("usage: bench_inprocess --redis-url URL --out FILE [--quick]");
                return std::process::ExitCode::from(2);
            }
        }
    }
    let (Some(url), Some(out)) = (url, out) else {
        eprintln!("usage: bench_inprocess --redis-url URL --out FILE [--quick]");
        return std::process::ExitCode::from(2);
    };
    match run(&url, quick) {
        Ok(doc) => {
            let text = serde_json::to_string_pretty(&doc).expect("json");
            if let Err(e) = std::fs::write(&out, text + "\n") {
                eprintln!("bench_inprocess: {out}: {e}");
                return std::process::ExitCode::FAILURE;
            }
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("bench_inprocess: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
