//! Over RESP: the same ZADDs to Redis (its `used_memory` growth per member)
//! and to the core's listener in the btree layout, and the answers of both.

use std::collections::BTreeMap;

use redis::Value;
use redislab_harness::backend::{render, Kv};
use redislab_harness::inprocess::{self, member};
use redislab_harness::timing::{self, thousands};
use redislab_harness::{Cell, Recorder};

const ZADD_BATCH: usize = 1_000;

/// FNV-1a, 64 bits: a digest of DUMP's bytes for an exact row.
fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// `used_memory` from INFO memory (None where there is no such field).
fn used_memory(kv: &mut Kv) -> Option<i64> {
    let info: String = redis::cmd("INFO").arg("memory").query(kv.conn()).ok()?;
    info.lines()
        .find_map(|l| l.strip_prefix("used_memory:"))
        .and_then(|v| v.trim().parse().ok())
}

/// Loads `lb` at each size on `kv`; records the exact rows and (on Redis) the
/// used_memory growth per member, which it also leaves in `redis_bytes`.
pub fn steps(
    kv: &mut Kv,
    rec: &mut Recorder,
    sizes: &[usize],
    seed: u64,
    redis_bytes: &mut BTreeMap<usize, f64>,
) -> Result<(), String> {
    let is_core = kv.name == "core";
    if is_core {
        // The core's own parameter: only the core is sent it.
        kv.cmd(&["CONFIG", "SET", "zset-layout", "btree"])?;
    }
    rec.put("cfg", kv.reply(&["CONFIG", "GET", "zset-layout"]));
    let lb = kv.key("lb");
    for &n in sizes {
        kv.cmd(&["DEL", &lb])?;
        let entries: Vec<(u32, String)> = inprocess::leaderboard(seed, n)
            .into_iter()
            .enumerate()
            .map(|(i, p)| (p, member(i as u32 + 1)))
            .collect();
        let before = used_memory(kv);
        timing::zadd_pipelined(kv, &lb, &entries, ZADD_BATCH)?;
        drop(entries);
        let after = used_memory(kv);
        if !is_core {
            let key = format!("heap-skiplist-{n}");
            match (before, after) {
                (Some(b), Some(a)) => {
                    let per = (a - b) as f64 / n as f64;
                    redis_bytes.insert(n, per);
                    rec.put(
                        &key,
                        Cell::num(per, "B/member")
                            .with("used_memory_delta", (a - b) as f64, "B")
                            .with_text(format!(
                                "{per:.1} B/member (used_memory +{} B)",
                                thousands((a - b).max(0) as u64)
                            )),
                    );
                }
                _ => rec.put(&key, Cell::skipped("no used_memory in INFO memory")),
            }
            rec.put(
                &format!("heap-btree-{n}"),
                Cell::skipped("Redis has only the skiplist"),
            );
        }
        let middle = member((n / 2) as u32);
        let answers = [
            kv.reply(&["ZCARD", &lb]),
            kv.reply(&["OBJECT", "ENCODING", &lb]),
            kv.reply(&["ZRANK", &lb, &middle]),
            kv.reply(&["ZCOUNT", &lb, "400000", "600000"]),
            kv.reply(&["ZRANGE", &lb, "0", "1", "WITHSCORES"]),
        ];
        rec.put(&format!("a-{n}"), answers.join(" · "));
        let dump = match kv.cmd(&["DUMP", &lb])? {
            Value::BulkString(bytes) => format!(
                "{} bytes, fnv1a64 {:016x}",
                thousands(bytes.len() as u64),
                fnv1a64(&bytes)
            ),
            other => render(&other),
        };
        rec.put(&format!("dump-{n}"), dump);
        kv.cmd(&["DEL", &lb])?;
    }
    if is_core {
        kv.cmd(&["CONFIG", "SET", "zset-layout", "skiplist"])?;
    }
    Ok(())
}
