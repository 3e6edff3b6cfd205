//! The article's tie-break, `points + (1 − millis / 1e13)`: an earlier time gives a
//! larger fraction, so it ranks first among equal points. Two neighbouring
//! milliseconds differ by 10⁻¹³ in the fraction; a double near `points` is exact
//! only to `points · 2⁻⁵²`, so from some size of `points` on, the two times become
//! one stored score. The article says points "under a few million" are fine: the
//! lab finds by bisection, on the servers, where a pair of neighbouring
//! milliseconds first collapses, and counts collapses over a second of
//! milliseconds at chosen sizes. Then it shows the article's other warning: with
//! `incrementScore` the fraction is added again.

use redis::Value;
use redislab_harness::backend::render;
use redislab_harness::{Kv, Recorder, Report};

/// The moment of the first achievement: 2026-09-21T… in epoch milliseconds.
pub const T0: i64 = 1_790_000_000_000;
/// Sizes of `points` at which a second of neighbouring milliseconds is checked.
pub const SIZES: [u64; 4] = [100, 1_000, 1_000_000, 3_000_000];

/// The article's `addPointsWithTieBreak` score, computed as Java does (doubles).
pub fn score(points: u64, millis: i64) -> f64 {
    let tie_break = 1.0 - (millis as f64 / 1e13);
    points as f64 + tie_break
}

/// The score as sent: the shortest text that reads back as the same double.
fn arg(v: f64) -> String {
    format!("{v:?}")
}

pub fn declare(r: &mut Report) {
    r.exact(
        "tb-small",
        "points 120 at T0 and T0+1 ms: ZREVRANGE (earlier first)",
        "early late",
    );
    r.row(
        "tb-bisect",
        "smallest points where neighbouring ms (of 1000 pairs from T0) share one stored score (bisection)",
        redislab_harness::Kind::Exact,
        Some("safe under a few million"),
    );
    r.row(
        "tb-bisect-scores",
        "at those points: the first pair that collapses, its score",
        redislab_harness::Kind::Exact,
        None,
    );
    for p in SIZES {
        r.row(
            &format!("tb-share-{p}"),
            &format!("points {p}: of 1000 neighbouring ms pairs from T0, how many collapse"),
            redislab_harness::Kind::Exact,
            (p >= 1_000_000).then_some("0"),
        );
    }
    r.row(
        "tb-incr",
        "ZADD 100+tb(T0), then incrementScore 50+tb(T0+1 s) (the article: the fraction is added again): ZINCRBY's score, Math.floor",
        redislab_harness::Kind::Exact,
        None,
    );
    r.row(
        "tb-incr-plain",
        "ZADD 100+tb(T0), then incrementScore 50: score (the tie-break keeps T0)",
        redislab_harness::Kind::Exact,
        None,
    );
}

/// Stores `early` at (points, T0) and `late` at (points, T0+1 ms); true if the
/// server keeps two different scores.
fn apart(kv: &mut Kv, key: &str, points: u64) -> Result<bool, String> {
    kv.cmd(&["ZADD", key, &arg(score(points, T0)), "early"])?;
    kv.cmd(&["ZADD", key, &arg(score(points, T0 + 1)), "late"])?;
    Ok(kv.reply(&["ZSCORE", key, "early"]) != kv.reply(&["ZSCORE", key, "late"]))
}

/// The pairs (T0+i, T0+i+1), i < 1000, that the server stores as one score: each
/// i with that score.
fn collapsed_pairs(kv: &mut Kv, key: &str, points: u64) -> Result<Vec<(usize, String)>, String> {
    kv.cmd(&["DEL", key])?;
    let mut zadd: Vec<String> = vec!["ZADD".into(), key.into()];
    for i in 0..=1000 {
        zadd.push(arg(score(points, T0 + i)));
        zadd.push(format!("m{i:04}"));
    }
    let args: Vec<&[u8]> = zadd.iter().map(|s| s.as_bytes()).collect();
    kv.cmd_bytes(&args)?;
    let mut zmscore: Vec<String> = vec!["ZMSCORE".into(), key.into()];
    zmscore.extend((0..=1000).map(|i| format!("m{i:04}")));
    let args: Vec<&[u8]> = zmscore.iter().map(|s| s.as_bytes()).collect();
    let scores = kv.items(&args)?;
    Ok(scores
        .windows(2)
        .enumerate()
        .filter(|(_, w)| w[0] == w[1])
        .map(|(i, w)| (i, w[0].clone()))
        .collect())
}

pub fn run(kv: &mut Kv, rec: &mut Recorder) -> Result<(), String> {
    let key = kv.key("lb:tiebreak");
    apart(kv, &key, 120)?;
    rec.put("tb-small", kv.reply(&["ZREVRANGE", &key, "0", "-1"]));
    // One pair's fate is not monotonic in the points (it depends on where the two
    // values fall between doubles), but "some pair of a second's 1000 collapses" is:
    // none while the doubles' spacing is below 10⁻¹³, some from then on. Apart at
    // lo, collapsed at hi: narrow down to the first collapse.
    let share_key = kv.key("lb:share");
    let (mut lo, mut hi) = (1u64, 1u64 << 40);
    if collapsed_pairs(kv, &share_key, lo)?.is_empty()
        && !collapsed_pairs(kv, &share_key, hi)?.is_empty()
    {
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if collapsed_pairs(kv, &share_key, mid)?.is_empty() {
                lo = mid;
            } else {
                hi = mid;
            }
        }
    }
    let first = collapsed_pairs(kv, &share_key, hi)?;
    rec.put("tb-bisect", format!("{hi} (2^{:.2})", (hi as f64).log2()));
    rec.put(
        "tb-bisect-scores",
        match first.first() {
            Some((i, s)) => format!(
                "T0+{i} ms and T0+{} ms: both {s} ({} of 1000 pairs)",
                i + 1,
                first.len()
            ),
            None => "none".into(),
        },
    );
    for p in SIZES {
        let n = collapsed_pairs(kv, &share_key, p)?.len();
        rec.put(&format!("tb-share-{p}"), n.to_string());
    }

    let incr = kv.key("lb:incr");
    kv.cmd(&["ZADD", &incr, &arg(score(100, T0)), "alice"])?;
    // What incrementScore(KEY, player, points + tieBreak) does: the new fraction
    // lands on top of the old one.
    let extra = score(50, T0 + 1_000);
    let after = match kv.cmd(&["ZINCRBY", &incr, &arg(extra), "alice"])? {
        Value::BulkString(b) => String::from_utf8_lossy(&b).into_owned(),
        other => render(&other),
    };
    let floor = after.parse::<f64>().map(f64::floor).unwrap_or(f64::NAN);
    rec.put("tb-incr", format!("{after} → floor {floor} (150 intended)"));
    kv.cmd(&["ZADD", &incr, &arg(score(100, T0)), "bob"])?;
    rec.put("tb-incr-plain", kv.reply(&["ZINCRBY", &incr, "50", "bob"]));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_earlier_time_scores_higher() {
        assert!(score(120, T0) > score(120, T0 + 1));
        assert_eq!(score(120, T0).floor(), 120.0);
    }
}
