//! The article's leaderboard as it shows it: the redis-cli session of section 2,
//! and the Java `LeaderboardService` demo of section 3 with the same calls through
//! the Rust `redis` client's typed API (`incrementScore` = ZINCRBY,
//! `reverseRangeWithScores` = ZREVRANGE … WITHSCORES, `reverseRank` = ZREVRANK).

use redis::Commands;
use redislab_harness::{Kv, Recorder, Report};

pub fn declare(r: &mut Report) {
    r.exact("cli-zadd", "ZADD scores 120 alice 95 bob 150 carol", "3");
    r.exact(
        "cli-zrevrange",
        "ZREVRANGE scores 0 1 WITHSCORES",
        "carol 150 alice 120",
    );
    r.exact("cli-zrevrank", "ZREVRANK scores bob", "2");
    r.exact(
        "java-adds",
        "addPoints alice 120, bob 95, carol 150, bob 60 (zincr → new score)",
        "120.0 95.0 150.0 155.0",
    );
    r.exact(
        "java-top",
        "System.out.println(leaderboard.top(3)) (zrevrange_withscores 0 2)",
        "[PlayerScore[player=bob, score=155.0], PlayerScore[player=carol, score=150.0], PlayerScore[player=alice, score=120.0]]",
    );
    r.exact(
        "java-rank",
        "System.out.println(leaderboard.rankOf(\"alice\")) (zrevrank + 1)",
        "Optional[3]",
    );
    r.exact(
        "java-nobody",
        "rankOf(\"nobody\") (the article's test: isEmpty())",
        "Optional.empty",
    );
}

pub fn run(kv: &mut Kv, rec: &mut Recorder) -> Result<(), String> {
    let scores = kv.key("scores");
    rec.put(
        "cli-zadd",
        kv.reply(&["ZADD", &scores, "120", "alice", "95", "bob", "150", "carol"]),
    );
    rec.put(
        "cli-zrevrange",
        kv.reply(&["ZREVRANGE", &scores, "0", "1", "WITHSCORES"]),
    );
    rec.put("cli-zrevrank", kv.reply(&["ZREVRANK", &scores, "bob"]));

    let key = kv.key("leaderboard:game:2048");
    let e = |e: redis::RedisError| redislab_harness::backend::error_text(&e);
    let mut adds = Vec::new();
    for (player, points) in [
        ("alice", 120.0),
        ("bob", 95.0),
        ("carol", 150.0),
        ("bob", 60.0),
    ] {
        let score: f64 = kv.conn().zincr(&key, player, points).map_err(e)?;
        adds.push(java_double(score));
    }
    rec.put("java-adds", adds.join(" "));
    let top: Vec<(String, f64)> = kv.conn().zrevrange_withscores(&key, 0, 2).map_err(e)?;
    let shown: Vec<String> = top
        .iter()
        .map(|(p, s)| format!("PlayerScore[player={p}, score={}]", java_double(*s)))
        .collect();
    rec.put("java-top", format!("[{}]", shown.join(", ")));
    for (row, player) in [("java-rank", "alice"), ("java-nobody", "nobody")] {
        let rank: Option<i64> = kv.conn().zrevrank(&key, player).map_err(e)?;
        rec.put(row, java_optional(rank.map(|r| r + 1)));
    }
    Ok(())
}

/// Java's `Double.toString` for the values here (whole numbers print `155.0`);
/// Rust's `{:?}` of an f64 prints the same.
fn java_double(v: f64) -> String {
    format!("{v:?}")
}

/// `Optional.toString`: `Optional[3]` or `Optional.empty`.
fn java_optional(v: Option<i64>) -> String {
    match v {
        Some(n) => format!("Optional[{n}]"),
        None => "Optional.empty".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_like_java() {
        assert_eq!(java_double(155.0), "155.0");
        assert_eq!(java_double(0.5), "0.5");
        assert_eq!(java_optional(Some(3)), "Optional[3]");
        assert_eq!(java_optional(None), "Optional.empty");
    }
}
