//! Growing the one big zset: members are 8-digit ids (`10000000 + i`, the
//! article's "8-digit integer string"), each with seeded points, added in ZADDs of
//! many members each, several ZADDs per pipeline.

use redislab_harness::backend::error_text;
use redislab_harness::timing::bulk_load;
use redislab_harness::Kv;

/// Members per ZADD command while loading.
pub const MEMBERS_PER_ZADD: usize = 1_000;
/// ZADD commands per pipeline while loading.
const ZADDS_PER_PIPELINE: usize = 10;

/// Member `i` of the zset (0-based): 8 digits up to 9,999,999 members beyond.
pub fn member(i: u64) -> String {
    (10_000_000 + i).to_string()
}

/// Member `i`'s points: a seeded hash (SplitMix64) of `i`, in [0, 10⁹), so any
/// member's points can be recomputed without keeping 10⁷ of them.
pub fn points(seed: u64, i: u64) -> u64 {
    let mut z = seed
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .wrapping_add(i.wrapping_add(1).wrapping_mul(0xBF58_476D_1CE4_E5B9));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (z ^ (z >> 31)) % 1_000_000_000
}

/// Adds members `[from, to)` to `key`, with a progress bar.
pub fn grow(kv: &mut Kv, key: &str, seed: u64, from: u64, to: u64) -> Result<(), String> {
    let name = kv.name;
    let label = format!("{name}: ZADD {key} members {from}..{to}");
    let per_pipe = MEMBERS_PER_ZADD * ZADDS_PER_PIPELINE;
    bulk_load(&label, (to - from) as usize, per_pipe, |start, end| {
        let (start, end) = (from + start as u64, from + end as u64);
        let mut pipe = redis::pipe();
        let mut i = start;
        while i < end {
            let stop = (i + MEMBERS_PER_ZADD as u64).min(end);
            let cmd = pipe.cmd("ZADD").arg(key);
            for j in i..stop {
                cmd.arg(points(seed, j)).arg(member(j));
            }
            cmd.ignore();
            i = stop;
        }
        pipe.query::<()>(kv.conn())
            .map_err(|e| format!("{name}: ZADD pipeline failed: {}", error_text(&e)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_have_eight_digits_and_points_are_seeded() {
        assert_eq!(member(0), "10000000");
        assert_eq!(member(9_999_999), "19999999");
        assert_eq!(points(42, 7), points(42, 7));
        assert_ne!(points(42, 7), points(43, 7));
        assert!((0..1000).all(|i| points(1, i) < 1_000_000_000));
    }
}
