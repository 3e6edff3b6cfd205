//! The seeded leaderboard: users 1..=N with integer scores (many ties), loaded into
//! one unsharded key and into 8 shards by `user_id % 8`.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use redislab_harness::backend::error_text;
use redislab_harness::{timing, Kv};

pub const SHARDS: u64 = 8;
pub const GLOBAL: &str = "leaderboard:global";

/// Scores are drawn from 0..MAX_SCORE: about five users per score at 100,000 users,
/// so the top N and most ranks involve ties.
const MAX_SCORE: u32 = 20_000;

pub fn users(seed: u64, count: u64) -> Vec<(u64, u32)> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (1..=count)
        .map(|id| (id, rng.gen_range(0..MAX_SCORE)))
        .collect()
}

/// The article's shard_key, with the backend's prefix.
pub fn shard_of(user: u64) -> usize {
    (user % SHARDS) as usize
}

pub fn shard_keys(kv: &Kv) -> Vec<String> {
    (0..SHARDS)
        .map(|i| kv.key(&format!("{GLOBAL}:shard:{i}")))
        .collect()
}

/// ZADD every user to the unsharded key and to its shard, 1,000 users per pipeline.
pub fn load(kv: &mut Kv, users: &[(u64, u32)]) -> Result<(), String> {
    let global = kv.key(GLOBAL);
    let shards = shard_keys(kv);
    let name = kv.name;
    timing::bulk_load(&format!("{name}: ZADD"), users.len(), 1000, |a, b| {
        let mut all = redis::cmd("ZADD");
        all.arg(&global);
        let mut per: Vec<Option<redis::Cmd>> = vec![None; shards.len()];
        for &(id, score) in &users[a..b] {
            all.arg(score).arg(id);
            per[shard_of(id)]
                .get_or_insert_with(|| {
                    let mut c = redis::cmd("ZADD");
                    c.arg(&shards[shard_of(id)]);
                    c
                })
                .arg(score)
                .arg(id);
        }
        let mut pipe = redis::pipe();
        pipe.add_command(all).ignore();
        for c in per.into_iter().flatten() {
            pipe.add_command(c).ignore();
        }
        pipe.query::<()>(kv.conn())
            .map_err(|e| format!("{name}: ZADD: {}", error_text(&e)))
    })
}
