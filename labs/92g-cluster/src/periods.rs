//! Period keys: seven day leaderboards summed into a week with ZUNIONSTORE, first
//! with the article's plain key names (different slots: CROSSSLOT on a cluster),
//! then with the `{global}` hash tag (one slot: it works).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use redislab_harness::Recorder;

use crate::node::Node;

const DAYS: [&str; 7] = [
    "2026-06-01",
    "2026-06-02",
    "2026-06-03",
    "2026-06-04",
    "2026-06-05",
    "2026-06-06",
    "2026-06-07",
];
const WEEK: &str = "2026-W23";

fn day_key(tagged: bool, day: &str) -> String {
    if tagged {
        format!("leaderboard:{{global}}:day:{day}")
    } else {
        format!("leaderboard:day:{day}")
    }
}

fn week_key(tagged: bool) -> String {
    if tagged {
        format!("leaderboard:{{global}}:week:{WEEK}")
    } else {
        format!("leaderboard:week:{WEEK}")
    }
}

/// Each day, 8 of 20 users score 1..=50 points (seeded).
fn events(seed: u64) -> Vec<(usize, String, u32)> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x9279);
    let mut out = Vec::new();
    for day in 0..DAYS.len() {
        for _ in 0..8 {
            let user = format!("u{:02}", rng.gen_range(1..=20));
            out.push((day, user, rng.gen_range(1..=50)));
        }
    }
    out
}

/// `cluster`: whether `node` is a cluster; a single node has no CROSSSLOT to
/// show, so the untagged ZUNIONSTORE row is left to the cluster.
pub fn run(
    node: &mut impl Node,
    rec: &mut Recorder,
    seed: u64,
    cluster: bool,
) -> Result<(), String> {
    for tagged in [false, true] {
        for (day, user, by) in events(seed) {
            node.cmd(&[
                "ZINCRBY",
                &day_key(tagged, DAYS[day]),
                &by.to_string(),
                &user,
            ])?;
        }
        let mut keys: Vec<String> = DAYS.iter().map(|d| day_key(tagged, d)).collect();
        keys.push(week_key(tagged));
        let mut slots = Vec::new();
        for key in &keys {
            slots.push(node.reply(&["CLUSTER", "KEYSLOT", key]));
        }
        let week = keys.pop().unwrap();
        let (slots_row, union_row) = if tagged {
            ("tagged-slots", "tagged-union")
        } else {
            ("period-slots", "crossslot")
        };
        rec.put(
            slots_row,
            format!("days {} · week {}", slots[..7].join(" "), slots[7]),
        );
        let n = keys.len().to_string();
        let mut args = vec!["ZUNIONSTORE", &week, &n];
        args.extend(keys.iter().map(String::as_str));
        args.extend(["AGGREGATE", "SUM"]);
        if tagged || cluster {
            rec.put(union_row, node.reply(&args));
        }
        if tagged {
            rec.put(
                "tagged-top",
                node.reply(&["ZREVRANGE", &week, "0", "4", "WITHSCORES"]),
            );
        }
    }
    Ok(())
}
