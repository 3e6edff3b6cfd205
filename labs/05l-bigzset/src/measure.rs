//! One size's measurements: the memory of the zset, then each command timed as a
//! distribution of round trips beside the server's own `usec_per_call`.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use redis::Value;
use redislab_harness::backend::render;
use redislab_harness::timing::{self, KvTiming};
use redislab_harness::Kv;

use crate::grow::member;

/// Warm-up and timed calls of each command at each size.
const WARMUP: usize = 200;
const CALLS: usize = 2_000;

/// The commands timed at every size: row key, label, the command `INFO
/// commandstats` counts it under.
pub const COMMANDS: [(&str, &str, &str); 6] = [
    (
        "zadd",
        "ZADD lb <random points> <random member> (moves it)",
        "zadd",
    ),
    ("zincrby", "ZINCRBY lb 1 <random member>", "zincrby"),
    ("zrevrank", "ZREVRANK lb <random member>", "zrevrank"),
    ("top10", "ZRANGE lb 0 9 REV WITHSCORES (top 10)", "zrange"),
    (
        "around",
        "ZRANGE lb r-5 r+5 REV WITHSCORES (random rank r)",
        "zrange",
    ),
    ("zscore", "ZSCORE lb <random member>", "zscore"),
];

/// Times command `which` (a key of [`COMMANDS`]) on `key` of `n` members.
pub fn time(kv: &mut Kv, key: &str, n: u64, which: &str, seed: u64) -> Result<KvTiming, String> {
    let (_, _, counted) = COMMANDS
        .iter()
        .find(|c| c.0 == which)
        .expect("a known command");
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ n);
    timing::measure_kv(kv, counted, WARMUP, CALLS, |kv| {
        let m = member(rng.gen_range(0..n));
        let reply = match which {
            "zadd" => {
                let p = rng.gen_range(0..1_000_000_000u64).to_string();
                kv.cmd(&["ZADD", key, &p, &m])
            }
            "zincrby" => kv.cmd(&["ZINCRBY", key, "1", &m]),
            "zrevrank" => kv.cmd(&["ZREVRANK", key, &m]),
            "top10" => kv.cmd(&["ZRANGE", key, "0", "9", "REV", "WITHSCORES"]),
            "around" => {
                let r = rng.gen_range(5..n - 5);
                let (lo, hi) = ((r - 5).to_string(), (r + 5).to_string());
                kv.cmd(&["ZRANGE", key, &lo, &hi, "REV", "WITHSCORES"])
            }
            _ => kv.cmd(&["ZSCORE", key, &m]),
        }?;
        // A nil or an empty range would mean the member or rank was not there:
        // the timing would be of the wrong path.
        match reply {
            Value::Nil => Err(format!("{}: {which} on {m} answered nil", kv.name)),
            Value::Array(ref a) if a.is_empty() => {
                Err(format!("{}: {which} answered an empty range", kv.name))
            }
            _ => Ok(()),
        }
    })
}

/// `MEMORY USAGE key SAMPLES 0` (every member counted, not 5 sampled).
pub fn memory_usage(kv: &mut Kv, key: &str) -> Result<Result<u64, String>, String> {
    Ok(match kv.cmd(&["MEMORY", "USAGE", key, "SAMPLES", "0"]) {
        Ok(Value::Int(b)) => Ok(b as u64),
        Ok(other) => Err(render(&other)),
        Err(e) => Err(e),
    })
}

/// `used_memory` from `INFO memory`.
pub fn used_memory(kv: &mut Kv) -> Option<u64> {
    let info: String = redis::cmd("INFO").arg("memory").query(kv.conn()).ok()?;
    info.lines()
        .find_map(|l| l.strip_prefix("used_memory:"))
        .and_then(|v| v.trim().parse().ok())
}
