//! Requests on the real clock from 10 threads at once: with the article's random
//! ids the limit holds; with the timestamp as member, requests in one millisecond
//! collapse into one entry, the count lags and far more get through.

use std::time::{Duration, Instant};

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use redislab_harness::jobs::{now_ms, on_threads};
use redislab_harness::Kv;

use crate::limiter::{sliding, uuid};

pub const THREADS: usize = 10;
pub const LIMIT: i64 = 100;
pub const WINDOW_MS: i64 = 1_000;
pub const BURST: Duration = Duration::from_millis(300);

/// What one burst came to.
pub struct Burst {
    pub sent: u64,
    pub allowed: u64,
    pub counted: i64,
}

/// `timestamp_member`: ARGV[4] is the millisecond instead of a random id.
pub fn run(kv: &mut Kv, timestamp_member: bool, seed: u64) -> Result<Burst, String> {
    let key = kv.key(if timestamp_member {
        "rate:ts"
    } else {
        "rate:uuid"
    });
    let conns = (0..THREADS)
        .map(|_| kv.new_connection())
        .collect::<Result<Vec<_>, _>>()?;
    let per_thread = on_threads(conns, |i, mut conn| {
        let mut rng = ChaCha8Rng::seed_from_u64(seed + i as u64);
        let (mut sent, mut allowed) = (0u64, 0u64);
        let start = Instant::now();
        while start.elapsed() < BURST {
            let now = now_ms();
            let member = match timestamp_member {
                true => now.to_string(),
                false => uuid(&mut rng),
            };
            allowed += sliding(&mut conn, &key, now, WINDOW_MS, LIMIT, &member)? as u64;
            sent += 1;
        }
        Ok((sent, allowed))
    })?;
    let counted: i64 = redis::cmd("ZCARD")
        .arg(&key)
        .query(kv.conn())
        .map_err(|e| e.to_string())?;
    Ok(Burst {
        sent: per_thread.iter().map(|t| t.0).sum(),
        allowed: per_thread.iter().map(|t| t.1).sum(),
        counted,
    })
}
