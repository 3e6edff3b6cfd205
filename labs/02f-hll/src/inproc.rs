//! The core in this process beside Redis's own figures, for the same data:
//!
//! * **time**: PFADD, PFCOUNT of one key, PFCOUNT of 3 and 10 dense keys, PFMERGE
//!   of 3 and 10 dense keys: the core's ns per call (`Server::run` + RESP encode,
//!   no socket) beside Redis's server-side `usec_per_call` (INFO commandstats over
//!   exactly the timed calls), measured one command after the other so both see
//!   the machine in the same state; then the 10-key merges again with
//!   `PFDEBUG SIMD OFF` (the scalar loop) on the core, and on Redis when this run
//!   started it (a server without the switch, Redis 7.0, gets its error in those
//!   rows and the lab goes on);
//! * **memory**: the core's real heap for many dense and many sparse sketches, and
//!   for the week's viewers as a set (counting allocator), beside Redis's
//!   `used_memory` growth for the same commands ([`heap_cases`]).

use redislab_core::Server;
use redislab_harness::heap::{self, argv};
use redislab_harness::inprocess::{self, NsTiming, Op};
use redislab_harness::timing::{self, thousands};
use redislab_harness::{Cell, Kind, Kv, Recorder, Report};

type Argv = Vec<Vec<u8>>;

/// Dense keys `pd0..pd9` of [`PER_KEY`] elements each, consecutive keys sharing half.
const KEYS: usize = 10;
const PER_KEY: usize = 20_000;
/// Distinct elements PFADD cycles through (one per call) on a dense key.
const PFADD_ELEMENTS: usize = 4_096;
/// Each command is timed in [`ROUNDS`] rounds, core then Redis in each; each
/// side's figure is its round with the lowest mean. On a shared machine a
/// round that other processes preempted is slower on one side only, and the
/// lowest mean is the least disturbed one.
const ROUNDS: usize = 3;
/// Calls per round (the core's warm-up is a tenth of its calls, Redis's 200):
/// the cheap commands, the AVX2 merges, and the scalar merges.
const CALLS_CHEAP: (usize, usize) = (30_000, 3_000);
const CALLS_MERGE: (usize, usize) = (5_000, 1_000);
const CALLS_SCALAR: (usize, usize) = (500, 200);
const REDIS_WARMUP: usize = 200;
/// The memory rows: this many dense sketches of [`DENSE_ELEMENTS`] each, and
/// sparse ones of [`SPARSE_ELEMENTS`].
const DENSE_KEYS: usize = 300;
const DENSE_ELEMENTS: usize = 3_000;
const SPARSE_KEYS: usize = 1_000;
const SPARSE_ELEMENTS: usize = 100;

/// The timed commands: (row suffix, label, op).
fn ops(prefix: &str) -> Vec<(&'static str, String, Op)> {
    let k = |name: String| format!("{prefix}{name}");
    let keys = |n: usize| (0..n).map(|i| k(format!("pd{i}"))).collect::<Vec<_>>();
    let with = |head: &[String], n: usize| {
        let mut v: Vec<String> = head.to_vec();
        v.extend(keys(n));
        vec![v.into_iter().map(String::into_bytes).collect::<Argv>()]
    };
    let pfadd = Op {
        name: "pfadd",
        argvs: (0..PFADD_ELEMENTS)
            .map(|i| argv(&["PFADD", &k("pa".into()), &format!("x:{i}")]))
            .collect(),
    };
    let pfcount = |n| Op {
        name: "pfcount",
        argvs: with(&["PFCOUNT".into()], n),
    };
    let pfmerge = |n| Op {
        name: "pfmerge",
        argvs: with(&["PFMERGE".into(), k("pm".into())], n),
    };
    vec![
        (
            "pfadd",
            format!("PFADD of one element to a dense key ({PFADD_ELEMENTS} elements in turn)"),
            pfadd,
        ),
        (
            "pfcount1",
            "PFCOUNT of one dense key (cached)".into(),
            pfcount(1),
        ),
        ("pfcount3", "PFCOUNT of 3 dense keys".into(), pfcount(3)),
        ("pfcount10", "PFCOUNT of 10 dense keys".into(), pfcount(10)),
        ("pfmerge3", "PFMERGE of 3 dense keys".into(), pfmerge(3)),
        ("pfmerge10", "PFMERGE of 10 dense keys".into(), pfmerge(10)),
    ]
}

/// The two merges timed again on the scalar path.
const SCALAR: [&str; 2] = ["pfcount10", "pfmerge10"];

/// The data the timed commands read: PFADDs of 1,000 elements building
/// `pd0..pd9`, then `pa` (PFADD's key) as a dense copy of `pd0`.
fn load(prefix: &str) -> Vec<Argv> {
    let mut out = Vec::new();
    for key in 0..KEYS {
        let first = key * PER_KEY / 2;
        for start in (first..first + PER_KEY).step_by(1_000) {
            let mut cmd = argv(&["PFADD", &format!("{prefix}pd{key}")]);
            cmd.extend((start..start + 1_000).map(|j| format!("v:{j}").into_bytes()));
            out.push(cmd);
        }
    }
    out.push(argv(&[
        "PFMERGE",
        &format!("{prefix}pa"),
        &format!("{prefix}pd0"),
    ]));
    out
}

/// The sketches whose memory is measured: `n` keys of `per` elements each.
fn sketches(prefix: &str, tag: &str, n: usize, per: usize) -> Vec<Argv> {
    (0..n)
        .map(|i| {
            let mut cmd = argv(&["PFADD", &format!("{prefix}{tag}{i:05}")]);
            cmd.extend((0..per).map(|j| format!("m:{i}:{j}").into_bytes()));
            cmd
        })
        .collect()
}

/// The memory cases: many dense sketches, many sparse ones, and the week's
/// viewers as a set (`viewers` members, one SADD per 1,000) for the set row.
pub fn heap_cases(prefix: &str, viewers: u64) -> Vec<heap::Case> {
    let mut cases = Vec::new();
    for (kind, tag, n, per) in [
        ("dense", "hd", DENSE_KEYS, DENSE_ELEMENTS),
        ("sparse", "hs", SPARSE_KEYS, SPARSE_ELEMENTS),
    ] {
        let commands = sketches(prefix, tag, n, per);
        cases.push(heap::Case {
            key: format!("heap-{kind}"),
            label: format!("{n} {kind} sketches of {per} elements, per sketch"),
            unit: "B/sketch",
            elements: n,
            keys: commands.iter().map(|c| c[1].clone()).collect(),
            commands,
        });
    }
    let set = format!("{prefix}heapset");
    let mut commands = Vec::new();
    let mut i = 0;
    while i < viewers {
        let end = (i + 1_000).min(viewers);
        let mut cmd = argv(&["SADD", &set]);
        cmd.extend((i..end).map(|j| crate::viewer(j).into_bytes()));
        commands.push(cmd);
        i = end;
    }
    cases.push(heap::Case {
        key: "heap-set".into(),
        label: format!(
            "the week's {} viewers as a set (SADDs of 1,000), per member",
            thousands(viewers)
        ),
        unit: "B/member",
        elements: viewers as usize,
        commands,
        keys: vec![set.into_bytes()],
    });
    cases
}

/// The in-process ops whose ratio carries no band (see `declare`).
const SUB_MICROSECOND: [&str; 2] = ["pfadd", "pfcount1"];

pub fn declare(r: &mut Report, cases: &[heap::Case]) {
    heap::declare(r, cases, 1.25);
    for (key, label, _) in ops("") {
        r.row(
            &format!("ip-{key}"),
            &format!("{label} · core in process (run + RESP encode) vs redis usec_per_call"),
            Kind::Measured,
            None,
        );
        let ratio = r.measured(
            &format!("ip-{key}-ratio"),
            "… ratio core mean ÷ redis usec_per_call (one run)",
            None,
        );
        // A single-key call takes a few hundred ns on both sides: Redis's
        // usec_per_call for PFADD moved from 148 to 559 ns between two runs an
        // hour apart, so these two ratios are reported without a band.
        if !SUB_MICROSECOND.contains(&key) {
            ratio.band(3.0);
        }
    }
    for key in SCALAR {
        r.row(
            &format!("ip-{key}-scalar"),
            "… the same with PFDEBUG SIMD OFF (scalar loop; redis: only a server this run started)",
            Kind::Measured,
            None,
        );
        r.measured(
            &format!("ip-{key}-simd-gain"),
            "… scalar time ÷ AVX2 time, each backend its own (one run)",
            None,
        )
        .band(3.0);
    }
}

fn ns_cell(t: &NsTiming) -> Cell {
    t.cell().with_text(format!("{t}, mean {:.0} ns", t.mean_ns))
}

fn redis_ns_cell(us: f64, calls: usize) -> Cell {
    let ns = us * 1000.0;
    let mut cell =
        Cell::num(ns, "ns").with_text(format!("usec_per_call {us:.2} = {ns:.0} ns (n={calls})"));
    cell.server_us = Some(us);
    cell.n = Some(calls as u64);
    cell
}

/// Redis's usec_per_call over `calls` calls of `op` (after a warm-up).
fn redis_time(kv: &mut Kv, op: &Op, calls: usize) -> Result<Option<f64>, String> {
    let mut i = 0;
    let t = timing::measure_kv(kv, op.name, REDIS_WARMUP, calls, |kv| {
        let args: Vec<&[u8]> = op.argv(i).iter().map(Vec::as_slice).collect();
        i += 1;
        kv.cmd_bytes(&args).map(drop)
    })?;
    Ok(t.server_usec_per_call)
}

/// One command's best round on each side: the core's timing with the lowest
/// mean, and Redis's lowest usec_per_call.
struct Best {
    core: Option<NsTiming>,
    redis_us: Option<f64>,
    calls: (usize, usize),
}

fn best_of_rounds(
    server: Option<&mut Server>,
    mut redis: Option<&mut Kv>,
    op: &Op,
    calls: (usize, usize),
) -> Result<Best, String> {
    let mut server = server;
    let mut best = Best {
        core: None,
        redis_us: None,
        calls,
    };
    for _ in 0..ROUNDS {
        if let Some(s) = server.as_deref_mut() {
            let t = inprocess::measure_op(s, op, calls.0 / 10, calls.0)?;
            if best.core.is_none_or(|b| t.mean_ns < b.mean_ns) {
                best.core = Some(t);
            }
        }
        if let Some(kv) = redis.as_deref_mut() {
            if let Some(us) = redis_time(kv, op, calls.1)? {
                best.redis_us = Some(best.redis_us.map_or(us, |b: f64| b.min(us)));
            }
        }
    }
    Ok(best)
}

/// Puts row `row`'s cells (and, for a command pair, `<row>-ratio`).
fn put_best(rec: &mut [Recorder; 2], row: &str, b: &Best) {
    if let Some(t) = &b.core {
        rec[0].put(row, ns_cell(t));
    }
    if let Some(us) = b.redis_us {
        rec[1].put(row, redis_ns_cell(us, b.calls.1));
    }
}

fn ratio_cell(t: &NsTiming, us: f64) -> Cell {
    let ns = us * 1000.0;
    let r = t.mean_ns / ns;
    Cell::num(r, "×")
        .with("median_ratio", t.median_ns as f64 / ns, "×")
        .with_text(format!(
            "{r:.2}× (core mean {:.0} ns / redis {ns:.0} ns; core median ÷ redis: {:.2}×)",
            t.mean_ns,
            t.median_ns as f64 / ns
        ))
}

/// The time rows. `redis_started`: the lab's own Redis (PFDEBUG SIMD may be
/// switched there and back).
pub fn time_steps(
    core: bool,
    mut redis: Option<&mut Kv>,
    redis_started: bool,
    prefix: &str,
    rec: &mut [Recorder; 2],
) -> Result<(), String> {
    let data = load(prefix);
    let mut server = Server::new();
    if core {
        for cmd in &data {
            let reply = server.run(cmd);
            if reply.is_error() {
                return Err(format!("core: loading the dense keys: {reply:?}"));
            }
        }
    }
    if let Some(kv) = redis.as_deref_mut() {
        heap::redis_growth(kv, &data)?;
    }
    let calls_of = |key: &str| {
        if key.starts_with("pfadd") || key == "pfcount1" {
            CALLS_CHEAP
        } else {
            CALLS_MERGE
        }
    };
    let mut simd_best = std::collections::BTreeMap::new();
    for (key, _, op) in ops(prefix) {
        let b = best_of_rounds(
            core.then_some(&mut server),
            redis.as_deref_mut(),
            &op,
            calls_of(key),
        )?;
        put_best(rec, &format!("ip-{key}"), &b);
        if let (Some(t), Some(us)) = (&b.core, b.redis_us) {
            rec[0].put(&format!("ip-{key}-ratio"), ratio_cell(t, us));
        }
        simd_best.insert(key, b);
    }
    // The scalar loop: PFDEBUG SIMD OFF, the same calls, then ON again.
    let simd = |on: bool| argv(&["PFDEBUG", "SIMD", if on { "ON" } else { "OFF" }]);
    if core {
        server.run(&simd(false));
    }
    // A server without the switch (Redis 7.0 has no PFDEBUG SIMD: it reads SIMD
    // as a key) answers with its own error; that error is its scalar rows' cell
    // and the lab goes on with the core's rows alone.
    let mut switch_redis = false;
    if redis_started {
        if let Some(kv) = redis.as_deref_mut() {
            match kv.cmd(&["PFDEBUG", "SIMD", "OFF"]) {
                Ok(_) => switch_redis = true,
                Err(e) => {
                    let e = format!("PFDEBUG SIMD OFF: {e}");
                    for key in SCALAR {
                        rec[1].put(&format!("ip-{key}-scalar"), Cell::error(e.clone()));
                        rec[1].put(&format!("ip-{key}-simd-gain"), Cell::error(e.clone()));
                    }
                }
            }
        }
    }
    let result = (|| -> Result<(), String> {
        for (key, _, op) in ops(prefix).into_iter().filter(|(k, ..)| SCALAR.contains(k)) {
            let r = if switch_redis {
                redis.as_deref_mut()
            } else {
                None
            };
            let b = best_of_rounds(core.then_some(&mut server), r, &op, CALLS_SCALAR)?;
            put_best(rec, &format!("ip-{key}-scalar"), &b);
            let fast = &simd_best[key];
            let gain_row = format!("ip-{key}-simd-gain");
            if let (Some(slow), Some(quick)) = (&b.core, &fast.core) {
                rec[0].put(&gain_row, gain(slow.mean_ns, quick.mean_ns));
            }
            if let (Some(slow), Some(quick)) = (b.redis_us, fast.redis_us) {
                rec[1].put(&gain_row, gain(slow * 1000.0, quick * 1000.0));
            }
        }
        Ok(())
    })();
    if switch_redis {
        let kv = redis.as_deref_mut().expect("redis");
        kv.cmd(&["PFDEBUG", "SIMD", "ON"])?;
    }
    result?;
    if let Some(kv) = redis {
        let mut del = vec!["DEL".to_string()];
        del.extend((0..KEYS).map(|i| format!("{prefix}pd{i}")));
        del.extend(["pa", "pm"].map(|k| format!("{prefix}{k}")));
        let del: Vec<&str> = del.iter().map(String::as_str).collect();
        kv.cmd(&del)?;
    }
    Ok(())
}

fn gain(scalar: f64, simd: f64) -> Cell {
    Cell::num(scalar / simd, "×").with_text(format!(
        "{:.2}× ({} / {})",
        scalar / simd,
        thousands(scalar.round() as u64),
        thousands(simd.round() as u64)
    ))
}
