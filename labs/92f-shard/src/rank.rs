//! A user's global rank when the leaderboard is sharded: nothing holds it, so it is
//! summed from every shard.

use redis::Connection;
use redislab_harness::backend::error_text;

use crate::data::shard_of;

fn failed(e: redis::RedisError) -> String {
    error_text(&e)
}

/// 0-based global rank (ZREVRANK order) in 8 round trips: the user's own shard
/// (ZSCORE, ZREVRANK), then each other shard (ZCOUNT key (s +inf, and the members
/// tied at s, of which those with greater bytes rank above).
pub fn across_shards(
    conn: &mut Connection,
    shards: &[String],
    user: u64,
) -> Result<Option<u64>, String> {
    let own = shard_of(user);
    let member = user.to_string();
    let (score, rank): (Option<f64>, Option<u64>) = redis::pipe()
        .cmd("ZSCORE")
        .arg(&shards[own])
        .arg(&member)
        .cmd("ZREVRANK")
        .arg(&shards[own])
        .arg(&member)
        .query(conn)
        .map_err(failed)?;
    let (Some(score), Some(mut rank)) = (score, rank) else {
        return Ok(None);
    };
    for (_, key) in shards.iter().enumerate().filter(|(i, _)| *i != own) {
        let (above, tied): (u64, Vec<String>) = redis::pipe()
            .cmd("ZCOUNT")
            .arg(key)
            .arg(format!("({score}"))
            .arg("+inf")
            .cmd("ZRANGEBYSCORE")
            .arg(key)
            .arg(score)
            .arg(score)
            .query(conn)
            .map_err(failed)?;
        let tied_above = tied
            .iter()
            .filter(|m| m.as_bytes() > member.as_bytes())
            .count();
        rank += above + tied_above as u64;
    }
    Ok(Some(rank))
}

/// Σ over the shards of ZCOUNT key (s +inf: the count without the tie part.
pub fn strictly_above(conn: &mut Connection, shards: &[String], score: f64) -> Result<u64, String> {
    let mut pipe = redis::pipe();
    for key in shards {
        pipe.cmd("ZCOUNT")
            .arg(key)
            .arg(format!("({score}"))
            .arg("+inf");
    }
    let counts: Vec<u64> = pipe.query(conn).map_err(failed)?;
    Ok(counts.iter().sum())
}

pub fn zrevrank(conn: &mut Connection, key: &str, user: u64) -> Result<Option<u64>, String> {
    redis::cmd("ZREVRANK")
        .arg(key)
        .arg(user)
        .query(conn)
        .map_err(failed)
}

pub fn zscore(conn: &mut Connection, key: &str, user: u64) -> Result<f64, String> {
    redis::cmd("ZSCORE")
        .arg(key)
        .arg(user)
        .query(conn)
        .map_err(failed)
}
