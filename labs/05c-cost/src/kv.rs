//! The steps on a Redis-protocol backend (core through its listener, or Redis):
//! load, memory, the article's table timed, the answers.

use std::collections::BTreeMap;
use std::time::Instant;

use redis::Value;
use redislab_harness::backend::render;
use redislab_harness::inprocess::{self, member, Op};
use redislab_harness::timing::{self, thousands, KvTiming};
use redislab_harness::{Cell, Kv, Recorder};

use crate::{Data, HI, LO, ZADD_BATCH};

/// Calls of the commands that touch one member or a small range.
const FAST_WARMUP: usize = 500;
const FAST_CALLS: usize = 5_000;
/// ZRANGESTORE and ZREMRANGEBYRANK (hundreds of µs each, plus an untimed setup).
const STORE_WARMUP: usize = 50;
const STORE_CALLS: usize = 500;
/// ZRANGE BYSCORE returning 20% of the set.
const RANGE_WARMUP: usize = 1;
const RANGE_CALLS: usize = 10;
/// ZINTERCARD of two 1M sets.
const INTER_WARMUP: usize = 1;
const INTER_CALLS: usize = 5;
/// ZUNIONSTORE of two 1M sets (seconds each on Redis in the article).
const UNION_CALLS: usize = 3;

/// Redis's server-side time per call of each in-process op: usec_per_call, calls.
pub type ServerTimes = BTreeMap<&'static str, (f64, u64)>;

pub fn steps(
    kv: &mut Kv,
    rec: &mut Recorder,
    d: &Data,
    server_times: &mut ServerTimes,
) -> Result<(), String> {
    let lb = kv.key("lb");
    load(kv, rec, d, &lb, &d.lb, 1, "load-lb", true)?;
    memory(kv, rec, d, &lb)?;
    let lb2 = kv.key("lb2");
    load(kv, rec, d, &lb2, &d.lb2, d.first2, "load-lb2", false)?;

    let user = member(d.user);
    let ops = inprocess::zset_ops(&lb, &user, LO, HI, d.seed);
    let op = |name: &str| ops.iter().find(|o| o.name == name).expect("known op");
    let restore = |kv: &mut Kv| {
        let p = d.points_of(d.user).to_string();
        kv.cmd(&["ZADD", &lb, &p, &user]).map(drop)
    };
    let is_redis = kv.name == "redis";
    let mut server = |name: &'static str, t: &KvTiming| {
        if let (Some(us), true) = (t.server_usec_per_call, is_redis) {
            server_times.insert(name, (us, t.round_trip.calls));
        }
    };

    // The article's table, in its order.
    let t = time_op(kv, op("zincrby"), FAST_WARMUP, FAST_CALLS)?;
    rec.put("t-zincrby", shown(&t));
    server("zincrby", &t);
    restore(kv)?;
    for (key, name) in [
        ("t-zscore", "zscore"),
        ("t-zrevrank", "zrevrank"),
        ("t-top10", "zrange"),
    ] {
        let t = time_op(kv, op(name), FAST_WARMUP, FAST_CALLS)?;
        rec.put(key, shown(&t));
        server(op(name).name, &t);
    }
    rec.put("a-zscore", kv.reply(&["ZSCORE", &lb, &user]));
    let rank = match kv.cmd(&["ZREVRANK", &lb, &user])? {
        Value::Int(r) => r,
        other => return Err(format!("{}: ZREVRANK gave {}", kv.name, render(&other))),
    };
    rec.put("a-zrevrank", rank.to_string());

    let (from, to) = ((rank - 5).max(0).to_string(), (rank + 5).to_string());
    let around = ["ZRANGE", &lb, &from, &to, "REV", "WITHSCORES"];
    let t = time_fixed(kv, "zrange", &around, FAST_WARMUP, FAST_CALLS)?;
    rec.put("t-around", shown(&t));
    let pairs = pairs(&kv.cmd(&around)?);
    let place = pairs.iter().position(|(m, _)| *m == user);
    rec.put(
        "a-around",
        format!(
            "{} members, {user} {}, scores {}",
            pairs.len(),
            place.map_or("absent".into(), |p| format!("#{}", p + 1)),
            span(&pairs)
        ),
    );

    let limit = [
        "ZRANGE", &lb, "500000", "500100", "BYSCORE", "LIMIT", "0", "10",
    ];
    let t = time_fixed(kv, "zrange", &limit, FAST_WARMUP, FAST_CALLS)?;
    rec.put("t-byscore-limit", shown(&t));
    let members = strings(&kv.cmd(&limit)?);
    let scored: Vec<(String, String)> = members
        .iter()
        .map(|m| (m.clone(), kv.reply(&["ZSCORE", &lb, m])))
        .collect();
    rec.put(
        "a-byscore-limit",
        format!("{} members, scores {}", scored.len(), span(&scored)),
    );

    let zcount = time_op(kv, op("zcount"), FAST_WARMUP, FAST_CALLS)?;
    rec.put("t-zcount", shown(&zcount));
    server("zcount", &zcount);
    let counted = kv.reply(&["ZCOUNT", &lb, &LO.to_string(), &HI.to_string()]);
    rec.put("a-zcount", counted.clone());

    let (lo, hi) = (LO.to_string(), HI.to_string());
    let all = ["ZRANGE", &lb, &lo, &hi, "BYSCORE"];
    let mut returned = 0;
    let t = timing::measure_kv(kv, "zrange", RANGE_WARMUP, RANGE_CALLS, |kv| {
        returned = strings(&kv.cmd(&all)?).len();
        Ok(())
    })?;
    rec.put("t-byscore-all", shown(&t));
    rec.put(
        "a-byscore-all",
        if returned.to_string() == counted {
            "yes".to_string()
        } else {
            format!("no: returned {returned}, ZCOUNT {counted}")
        },
    );
    let ratio = t.round_trip.median_us as f64 / zcount.round_trip.median_us.max(1) as f64;
    rec.put(
        "ratio-byscore-zcount",
        Cell::num(ratio, "×").with_text(format!(
            "{}× ({} / {} µs)",
            thousands(ratio.round() as u64),
            thousands(t.round_trip.median_us),
            zcount.round_trip.median_us
        )),
    );

    stores(kv, rec, &lb)?;
    setops(kv, rec, &lb, &lb2)?;

    // ZADD is compared in process only: Redis's server time for the same argvs.
    if is_redis {
        let t = time_op(kv, op("zadd"), FAST_WARMUP, FAST_CALLS)?;
        server("zadd", &t);
        restore(kv)?;
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn load(
    kv: &mut Kv,
    rec: &mut Recorder,
    d: &Data,
    key: &str,
    points: &[u32],
    first_id: u32,
    row: &str,
    heap: bool,
) -> Result<(), String> {
    let entries: Vec<(u32, String)> = points
        .iter()
        .enumerate()
        .map(|(i, &p)| (p, member(first_id + i as u32)))
        .collect();
    let before = used_memory(kv);
    let started = Instant::now();
    timing::zadd_pipelined(kv, key, &entries, ZADD_BATCH)?;
    let secs = started.elapsed().as_secs_f64();
    drop(entries);
    let rate = d.n as f64 / secs;
    rec.put(
        row,
        Cell::num(secs, "s")
            .with("rate", rate.round(), "ZADD/s")
            .with_text(format!("{secs:.1} s ({} ZADD/s)", thousands(rate as u64))),
    );
    let card = kv.reply(&["ZCARD", key]);
    if card != d.n.to_string() {
        return Err(format!(
            "{}: ZCARD {key} is {card} after loading {}",
            kv.name, d.n
        ));
    }
    if let (true, Some(b), Some(a)) = (heap, before, used_memory(kv)) {
        let bytes = a - b;
        let bpm = bytes as f64 / d.n as f64;
        rec.put(
            "heap-per-member",
            Cell::num(bpm, "B/member")
                .with("used_memory_delta", bytes as f64, "B")
                .with_text(format!(
                    "{bpm:.1} B/member (used_memory +{} B)",
                    thousands(bytes.max(0) as u64)
                )),
        );
    }
    Ok(())
}

/// `used_memory` from INFO memory (None on the core, which has no such section).
fn used_memory(kv: &mut Kv) -> Option<i64> {
    let info: String = redis::cmd("INFO").arg("memory").query(kv.conn()).ok()?;
    info.lines()
        .find_map(|l| l.strip_prefix("used_memory:"))
        .and_then(|v| v.trim().parse().ok())
}

fn memory(kv: &mut Kv, rec: &mut Recorder, d: &Data, lb: &str) -> Result<(), String> {
    match kv.cmd(&["MEMORY", "USAGE", lb])? {
        Value::Int(bytes) => {
            rec.put(
                "mem-usage",
                Cell::count(bytes as u64, "B").with_text(thousands(bytes as u64)),
            );
            let bpm = bytes as f64 / d.n as f64;
            rec.put(
                "mem-per-member",
                Cell::num(bpm, "B/member").with_text(format!("{bpm:.2} B/member")),
            );
        }
        other => rec.put("mem-usage", Cell::error(render(&other))),
    }
    Ok(())
}

/// ZRANGESTORE top 1000, and ZREMRANGEBYRANK on that top.
fn stores(kv: &mut Kv, rec: &mut Recorder, lb: &str) -> Result<(), String> {
    let top = kv.key("top");
    let store = ["ZRANGESTORE", &top, lb, "0", "999", "REV"];
    let mut stored = String::new();
    let t = timing::measure_kv_with_setup(
        kv,
        "zrangestore",
        STORE_WARMUP,
        STORE_CALLS,
        |kv| kv.cmd(&["DEL", &top]).map(drop),
        |kv| {
            stored = render(&kv.cmd(&store)?);
            Ok(())
        },
    )?;
    rec.put("t-zrangestore", shown(&t));
    rec.put("a-zrangestore", stored);

    let mut removed = String::new();
    let t = timing::measure_kv_with_setup(
        kv,
        "zremrangebyrank",
        STORE_WARMUP,
        STORE_CALLS,
        |kv| kv.cmd(&store).map(drop),
        |kv| {
            removed = render(&kv.cmd(&["ZREMRANGEBYRANK", &top, "100", "-1"])?);
            Ok(())
        },
    )?;
    rec.put("t-zremrangebyrank", shown(&t));
    let kept = pairs(&kv.cmd(&["ZRANGE", &top, "0", "-1", "WITHSCORES"])?);
    // Leaderboard places (1 = best) of the kept members with the lowest and highest score.
    let mut place = |m: Option<&(String, String)>| match m {
        Some((m, _)) => match kv.cmd(&["ZREVRANK", lb, m]) {
            Ok(Value::Int(r)) => (r + 1).to_string(),
            other => format!("{other:?}"),
        },
        None => "-".into(),
    };
    let (worst, best) = (place(kept.first()), place(kept.last()));
    rec.put(
        "a-zremrangebyrank",
        format!(
            "removed {removed}; kept {}: lb places {best}–{worst}, scores {}",
            kept.len(),
            span(&kept)
        ),
    );
    kv.cmd(&["DEL", &top]).map(drop)
}

/// ZINTERCARD and ZUNIONSTORE of lb and lb2.
fn setops(kv: &mut Kv, rec: &mut Recorder, lb: &str, lb2: &str) -> Result<(), String> {
    let inter = ["ZINTERCARD", "2", lb, lb2];
    let mut answer = String::new();
    let t = timing::measure_kv(kv, "zintercard", INTER_WARMUP, INTER_CALLS, |kv| {
        answer = render(&kv.cmd(&inter)?);
        Ok(())
    })?;
    rec.put("t-zintercard", shown(&t));
    rec.put("a-zintercard", answer);

    let u = kv.key("u");
    let union = ["ZUNIONSTORE", &u, "2", lb, lb2];
    let mut answer = String::new();
    let t = timing::measure_kv_with_setup(
        kv,
        "zunionstore",
        0,
        UNION_CALLS,
        |kv| kv.cmd(&["DEL", &u]).map(drop),
        |kv| {
            answer = render(&kv.cmd(&union)?);
            Ok(())
        },
    )?;
    rec.put("t-zunionstore", shown(&t));
    rec.put("a-zunionstore", answer);
    kv.cmd(&["DEL", &u]).map(drop)
}

/// Times `op`, sending its argvs in turn.
fn time_op(kv: &mut Kv, op: &Op, warmup: usize, calls: usize) -> Result<KvTiming, String> {
    let mut i = 0;
    timing::measure_kv(kv, op.name, warmup, calls, |kv| {
        let args: Vec<&[u8]> = op.argv(i).iter().map(Vec::as_slice).collect();
        i += 1;
        kv.cmd_bytes(&args).map(drop)
    })
}

fn time_fixed(
    kv: &mut Kv,
    command: &str,
    args: &[&str],
    warmup: usize,
    calls: usize,
) -> Result<KvTiming, String> {
    timing::measure_kv(kv, command, warmup, calls, |kv| kv.cmd(args).map(drop))
}

/// `median 14 µs, p99 17 µs (n=5000) · server 0.34 µs/call`, with its numbers.
fn shown(t: &KvTiming) -> Cell {
    Cell::from(*t)
}

fn strings(v: &Value) -> Vec<String> {
    match v {
        Value::Array(items) => items.iter().map(render).collect(),
        _ => Vec::new(),
    }
}

/// A flat `member score member score …` reply as pairs.
fn pairs(v: &Value) -> Vec<(String, String)> {
    strings(v)
        .chunks(2)
        .filter(|c| c.len() == 2)
        .map(|c| (c[0].clone(), c[1].clone()))
        .collect()
}

/// `first..last` of the scores.
fn span(pairs: &[(String, String)]) -> String {
    match (pairs.first(), pairs.last()) {
        (Some(a), Some(b)) => format!("{}..{}", a.1, b.1),
        _ => "(none)".into(),
    }
}
