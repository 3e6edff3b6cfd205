//! The article's sharded leaderboard (section 10): `NUM_SHARDS = 8`, a user's
//! points go to `leaderboard:global:shard:{user_id % 8}`, and the top N is merged
//! from every shard's top N. On the cluster the shard keys share no tag, so they
//! spread over the nodes; the cluster-aware client routes each write and read.
//! On one node (core, standalone Redis) the same events also go to a single
//! `leaderboard:global`, whose top N is the reference.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use redis::ConnectionLike;
use redislab_harness::{ClusterKv, Kv, Recorder};

const SHARDS: u64 = 8;
const TOP: usize = 10;
const GLOBAL: &str = "leaderboard:global";

fn shard_key(i: u64) -> String {
    format!("leaderboard:global:shard:{i}")
}

/// `(user_id, points)`: 20 000 events over 2 000 users at scale 1 (seeded).
pub fn events(seed: u64, scale: f64) -> Vec<(u64, u32)> {
    let n = ((20_000.0 * scale) as usize).max(100);
    let users = (n as u64 / 10).max(20);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|_| (rng.gen_range(1..=users), rng.gen_range(1..=100)))
        .collect()
}

type Top = Vec<(String, f64)>;

/// Every shard's top N, merged: by score, ties as ZREVRANGE orders them (member
/// bytes descending).
fn merged_top(conn: &mut impl ConnectionLike) -> Result<Top, String> {
    let mut candidates: Top = Vec::new();
    for i in 0..SHARDS {
        let top: Top = redis::cmd("ZREVRANGE")
            .arg(shard_key(i))
            .arg(0)
            .arg(TOP - 1)
            .arg("WITHSCORES")
            .query(conn)
            .map_err(|e| format!("shard {i}: {e}"))?;
        candidates.extend(top);
    }
    candidates.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| b.0.cmp(&a.0)));
    candidates.truncate(TOP);
    Ok(candidates)
}

fn render(top: &Top) -> String {
    top.iter()
        .map(|(m, s)| format!("{m} {s}"))
        .collect::<Vec<_>>()
        .join(" ")
}

pub fn verdict(merged: &Top, global: &Top) -> String {
    if merged == global {
        "yes".into()
    } else {
        "NO".into()
    }
}

/// Loads the events into the cluster's shards and records where each shard lives
/// and the merged top 10, which it returns.
pub fn on_cluster(
    cluster: &mut ClusterKv,
    rec: &mut Recorder,
    events: &[(u64, u32)],
) -> Result<Top, String> {
    for chunk in events.chunks(1000) {
        let mut pipe = redis::cluster::cluster_pipe();
        for (user, by) in chunk {
            pipe.cmd("ZINCRBY")
                .arg(shard_key(user % SHARDS))
                .arg(*by)
                .arg(user.to_string())
                .ignore();
        }
        pipe.query::<()>(cluster.conn())
            .map_err(|e| format!("cluster: loading the shards: {e}"))?;
    }
    let mut slots = Vec::new();
    let mut where_ = Vec::new();
    let mut cards = Vec::new();
    let mut per_node: Vec<(String, usize)> = cluster
        .nodes()
        .iter()
        .map(|n| (n.name.clone(), 0))
        .collect();
    for i in 0..SHARDS {
        let key = shard_key(i);
        let slot: u16 = redis::cmd("CLUSTER")
            .arg("KEYSLOT")
            .arg(&key)
            .query(cluster.conn())
            .map_err(|e| format!("cluster: {e}"))?;
        let node = cluster
            .node_of_slot(slot)
            .ok_or_else(|| format!("cluster: no node serves slot {slot}"))?
            .to_string();
        // Asked of that node directly: a wrong node would answer MOVED.
        let card: i64 = redis::cmd("ZCARD")
            .arg(&key)
            .query(&mut cluster.node(&node)?)
            .map_err(|e| format!("cluster: ZCARD {key} on {node}: {e}"))?;
        slots.push(slot.to_string());
        where_.push(format!("s{i}:{node}"));
        cards.push(card.to_string());
        per_node.iter_mut().find(|(n, _)| *n == node).unwrap().1 += 1;
    }
    let spread: Vec<String> = per_node.iter().map(|(n, c)| format!("{n} {c}")).collect();
    rec.put("shard-slots", slots.join(" "));
    rec.put(
        "shard-nodes",
        format!(
            "{} · shards per node: {}",
            where_.join(" "),
            spread.join(", ")
        ),
    );
    rec.put("shard-cards", cards.join(" "));
    let top = merged_top(cluster.conn())?;
    rec.put("top-merged", render(&top));
    Ok(top)
}

/// Loads the events into one node, as 8 shards and as one global key. Records the
/// global top 10 and, with `shards_too`, the shard rows and whether the merged top
/// 10 equals it. Returns the global top 10.
pub fn on_one_node(
    kv: &mut Kv,
    rec: &mut Recorder,
    events: &[(u64, u32)],
    shards_too: bool,
) -> Result<Top, String> {
    let global_key = kv.key(GLOBAL);
    for chunk in events.chunks(1000) {
        let mut pipe = redis::pipe();
        for (user, by) in chunk {
            pipe.cmd("ZINCRBY")
                .arg(&global_key)
                .arg(*by)
                .arg(user.to_string())
                .ignore();
            if shards_too {
                pipe.cmd("ZINCRBY")
                    .arg(kv.key(&shard_key(user % SHARDS)))
                    .arg(*by)
                    .arg(user.to_string())
                    .ignore();
            }
        }
        pipe.query::<()>(kv.conn())
            .map_err(|e| format!("{}: loading: {e}", kv.name))?;
    }
    let global: Top = redis::cmd("ZREVRANGE")
        .arg(&global_key)
        .arg(0)
        .arg(TOP - 1)
        .arg("WITHSCORES")
        .query(kv.conn())
        .map_err(|e| format!("{}: {e}", kv.name))?;
    rec.put("top-global", render(&global));
    if shards_too {
        let mut slots = Vec::new();
        let mut cards = Vec::new();
        for i in 0..SHARDS {
            slots.push(kv.reply(&["CLUSTER", "KEYSLOT", &shard_key(i)]));
            cards.push(kv.reply(&["ZCARD", &kv.key(&shard_key(i))]));
        }
        rec.put("shard-slots", slots.join(" "));
        rec.put("shard-cards", cards.join(" "));
        let merged = merged_top(kv.conn())?;
        rec.put("top-merged", render(&merged));
        rec.put("merged-is-global", verdict(&merged, &global));
    }
    Ok(global)
}
