//! 92a-basics — the four commands of a leaderboard, as the article's helpers use them.
//!
//! Article 92, sections 2–4: set and increment a score, top N, the 1-based rank
//! (ZREVRANK is 0-based and nil for a missing member), pages with a hard cap of
//! 100, and the neighbours ±5 around a user, clamped at the top.

use std::process::ExitCode;

use redislab_harness::{run, Kv, LabInfo, Recorder};

const LAB: LabInfo = LabInfo {
    id: "92a-basics",
    uses_pg: false,
};

/// 30 users with distinct scores (u01 = 1010 … u30 = 1300), in a scrambled order.
fn users() -> Vec<(String, u32)> {
    (1..=30)
        .map(|i| {
            (
                format!("u{:02}", (i * 7) % 30 + 1),
                1000 + 10 * ((i * 7) % 30 + 1),
            )
        })
        .collect()
}

const MAX_PER_PAGE: usize = 100;

/// The article's get_page: ranks page*per_page+1 …, refusing pages over 100.
fn page(kv: &mut Kv, key: &str, page: usize, per_page: usize) -> String {
    if per_page > MAX_PER_PAGE {
        return format!("refused: per_page {per_page} > {MAX_PER_PAGE}");
    }
    let start = page * per_page;
    let stop = start + per_page - 1;
    kv.reply(&["ZREVRANGE", key, &start.to_string(), &stop.to_string()])
}

/// The article's get_neighbors: window members each side, clamped at rank 0.
fn neighbours(kv: &mut Kv, key: &str, user: &str, window: i64) -> String {
    let rank = match kv.cmd(&["ZREVRANK", key, user]) {
        Ok(redis::Value::Int(r)) => r,
        Ok(_) => return "[] (not ranked)".into(),
        Err(e) => return e,
    };
    let start = (rank - window).max(0);
    kv.reply(&[
        "ZREVRANGE",
        key,
        &start.to_string(),
        &(rank + window).to_string(),
    ])
}

fn main() -> ExitCode {
    run(LAB, |ctx| {
        let r = &mut ctx.report;
        for (key, label) in [
            (
                "zincrby",
                "ZINCRBY lb 15 u05 (increment_score returns the new score)",
            ),
            ("top3", "top_n(3): ZREVRANGE lb 0 2 WITHSCORES"),
            ("rank-u30", "get_rank(u30) = ZREVRANK + 1"),
            ("rank-u01", "get_rank(u01)"),
            (
                "rank-missing",
                "get_rank(nobody): ZREVRANK → nil → None, not 0",
            ),
            ("score-missing", "get_score(nobody): ZSCORE"),
            ("page-0", "get_page(0, 5): ranks 1–5"),
            ("page-2", "get_page(2, 5): ranks 11–15"),
            ("page-cap", "get_page(0, 1000): the hard cap"),
            ("neighbours-mid", "get_neighbors(u15, 5)"),
            (
                "neighbours-top",
                "get_neighbors(u29, 5): clamped at the top",
            ),
            (
                "neighbours-negative",
                "without the clamp: ZREVRANGE lb -4 6 (rank 1 - 5 = -4)",
            ),
        ] {
            r.row(key, label, redislab_harness::Kind::Exact, None);
        }
        ctx.each_kv(basics)?;
        ctx.note("A negative start is not an error in Redis: it counts from the end, so the unclamped window around the #2 user (-4..6) is read as ranks 26..6 and comes back empty instead of listing the top — the reason for max(0, rank - window).");
        Ok(())
    })
}

fn basics(kv: &mut Kv, rec: &mut Recorder) -> Result<(), String> {
    let lb = kv.key("lb");
    for (user, score) in users() {
        kv.cmd(&["ZADD", &lb, &score.to_string(), &user])?;
    }
    rec.put("zincrby", kv.reply(&["ZINCRBY", &lb, "15", "u05"]));
    rec.put(
        "top3",
        kv.reply(&["ZREVRANGE", &lb, "0", "2", "WITHSCORES"]),
    );
    let rank = |kv: &mut Kv, user: &str| match kv.cmd(&["ZREVRANK", &lb, user]) {
        Ok(redis::Value::Int(r)) => (r + 1).to_string(),
        Ok(redis::Value::Nil) => "None".into(),
        Ok(other) => format!("{other:?}"),
        Err(e) => e,
    };
    rec.put("rank-u30", rank(kv, "u30"));
    rec.put("rank-u01", rank(kv, "u01"));
    rec.put("rank-missing", rank(kv, "nobody"));
    rec.put("score-missing", kv.reply(&["ZSCORE", &lb, "nobody"]));
    rec.put("page-0", page(kv, &lb, 0, 5));
    rec.put("page-2", page(kv, &lb, 2, 5));
    rec.put("page-cap", page(kv, &lb, 0, 1000));
    rec.put("neighbours-mid", neighbours(kv, &lb, "u15", 5));
    rec.put("neighbours-top", neighbours(kv, &lb, "u29", 5));
    rec.put(
        "neighbours-negative",
        kv.reply(&["ZREVRANGE", &lb, "-4", "6"]),
    );
    Ok(())
}
