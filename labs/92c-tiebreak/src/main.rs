//! 92c-tiebreak — where the fractional tie-break stops telling two seconds apart.
//!
//! Article 92 packs "who got there first" into the fraction of the score:
//! `score + (1 − t / 2·10⁹)`. Two achievements one second apart differ by
//! 5·10⁻¹⁰ in the fraction; a double near score S can only tell apart numbers
//! S·2⁻⁵² apart, so from some score on, the two times become one stored score
//! and the tie falls back to member order (05a). This lab finds that score by
//! bisection on both backends, and sets it beside 05b's bit packing
//! (points × 2³² + (2³² − 1 − seconds)), exact while points < 2²¹.

use std::process::ExitCode;

use redislab_harness::{run, Kind, Kv, LabInfo, Recorder};

const LAB: LabInfo = LabInfo {
    id: "92c-tiebreak",
    uses_pg: false,
};

const MAX_TIMESTAMP: f64 = 2_000_000_000.0;
const T1: f64 = 1_790_000_000.0;
const T2: f64 = 1_790_000_001.0;

/// The article's score_with_tiebreak.
fn composite(score: u64, t: f64) -> f64 {
    score as f64 + (1.0 - t / MAX_TIMESTAMP)
}

/// Stores both players at `score` and asks the server whether their stored
/// scores still differ.
fn separated(kv: &mut Kv, key: &str, score: u64) -> Result<bool, String> {
    // Rust's `{:?}` prints the shortest text that reads back as the same double.
    kv.cmd(&["ZADD", key, &format!("{:?}", composite(score, T1)), "early"])?;
    kv.cmd(&["ZADD", key, &format!("{:?}", composite(score, T2)), "late"])?;
    let a = kv.reply(&["ZSCORE", key, "early"]);
    let b = kv.reply(&["ZSCORE", key, "late"]);
    Ok(a != b)
}

/// The most points 05b's packing keeps exact: 53 − 32 bits of integer.
const MAX_POINTS: u64 = (1 << 21) - 1;

fn main() -> ExitCode {
    run(LAB, |ctx| {
        let r = &mut ctx.report;
        r.row(
            "small",
            "score 1500: ZSCORE early / late; ZREVRANGE order",
            Kind::Exact,
            None,
        );
        r.row(
            "first-collapse",
            "smallest score where t and t+1 s become one stored score (bisection)",
            Kind::Exact,
            None,
        );
        r.row(
            "collapsed-order",
            "at that score: ZREVRANGE order (member order decides)",
            Kind::Exact,
            None,
        );
        r.row("bits", "that score in bits (log2)", Kind::Exact, None);
        // The budget is arithmetic (53 − 32 bits), not something a server answers:
        // it sits in the reference column; packing-check is what the servers say.
        r.row(
            "packing",
            "05b's packing points×2³² + (2³²−1−s): exact up to points",
            Kind::Exact,
            Some("2^21 - 1 = 2097151"),
        )
        .reference(format!("2^21 - 1 = {MAX_POINTS} (53 − 32 bits)"));
        r.row(
            "packing-check",
            "packing at points 2097151: t and t+1 still apart?",
            Kind::Exact,
            None,
        );
        ctx.each_kv(tiebreak)?;
        ctx.note(collapse_shares());
        ctx.note("1 − t/2·10⁹ moves by 5·10⁻¹⁰ per second. A double has 52 fraction bits, so once the integer part needs about 21 bits the spacing of doubles (2⁻³¹ ≈ 4.7·10⁻¹⁰ up to 2²¹, then 9.3·10⁻¹⁰) exceeds one second's worth and neighbouring seconds start to collapse.");
        ctx.note("The bit packing keeps the time in the low 32 bits of an integer below 2⁵³, so every second stays distinct as long as the points fit in 21 bits — the same budget, spent explicitly.");
        Ok(())
    })
}

/// How many pairs of neighbouring seconds (over one day from T1) share a stored
/// score, per power of two of the score: computed here, in the same f64 the client
/// sends.
fn collapse_shares() -> String {
    let shares: Vec<String> = (20..=25)
        .map(|k| {
            let score = 1u64 << k;
            let day = 86_400u32;
            let same = (0..day)
                .filter(|&s| {
                    composite(score, T1 + s as f64) == composite(score, T1 + s as f64 + 1.0)
                })
                .count();
            format!("2^{k}: {:.0}%", 100.0 * same as f64 / day as f64)
        })
        .collect();
    format!(
        "Share of neighbouring seconds (one day from t=1790000000) that end up with the same stored score, by score size: {}. The bisection row is for one pair; collapses start at 2^22.",
        shares.join(", ")
    )
}

fn tiebreak(kv: &mut Kv, rec: &mut Recorder) -> Result<(), String> {
    let key = kv.key("tb");
    separated(kv, &key, 1500)?;
    let (a, b) = (
        kv.reply(&["ZSCORE", &key, "early"]),
        kv.reply(&["ZSCORE", &key, "late"]),
    );
    rec.put(
        "small",
        format!("{a} / {b}; {}", kv.reply(&["ZREVRANGE", &key, "0", "-1"])),
    );
    // Separated at lo, collapsed at hi: narrow down to the first collapse.
    let (mut lo, mut hi) = (1_500u64, 1u64 << 40);
    if !separated(kv, &key, hi)? {
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if separated(kv, &key, mid)? {
                lo = mid;
            } else {
                hi = mid;
            }
        }
    }
    separated(kv, &key, hi)?;
    rec.put("first-collapse", hi.to_string());
    rec.put(
        "collapsed-order",
        kv.reply(&["ZREVRANGE", &key, "0", "-1", "WITHSCORES"]),
    );
    rec.put("bits", format!("{:.3}", (hi as f64).log2()));
    let max_points = MAX_POINTS;
    let pack = |points: u64, seconds: u64| (points << 32) + (u32::MAX as u64 - seconds);
    let packed = kv.key("packed");
    kv.cmd(&[
        "ZADD",
        &packed,
        &pack(max_points, T1 as u64).to_string(),
        "early",
    ])?;
    kv.cmd(&[
        "ZADD",
        &packed,
        &pack(max_points, T2 as u64).to_string(),
        "late",
    ])?;
    let apart = kv.reply(&["ZSCORE", &packed, "early"]) != kv.reply(&["ZSCORE", &packed, "late"]);
    rec.put(
        "packing-check",
        format!("{apart}; {}", kv.reply(&["ZREVRANGE", &packed, "0", "-1"])),
    );
    Ok(())
}
