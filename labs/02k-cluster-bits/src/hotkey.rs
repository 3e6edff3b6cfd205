//! How big one bitmap gets before one node holds the cluster's memory: a bitmap
//! is one string, one key, one slot, so however far SETBIT reaches (up to
//! 2³²−1, 512 MB) all of it sits on one node. The lab grows one bitmap from
//! 128 KB to 64 MB and reads, after each step, its MEMORY USAGE and the share of
//! the cluster's dataset memory (`used_memory_dataset` summed over the nodes)
//! that its node holds; then the same 64 MB as 8 keys by id range, spread over
//! the nodes. Run on an emptied cluster, so the shares are the bitmap's.

use redislab_harness::{fmt, Cell, Recorder};

use crate::target::{dataset_bytes, node_conn, Node, Target};

/// The highest bit set at each step: strings of 128 KB, 1 MB, 8 MB, 64 MB.
pub const STEPS: [u32; 4] = [20, 23, 26, 29];
/// The 64 MB split into this many keys of 8 MB.
const SHARDS: u64 = 8;

/// Deletes every key on every node (the harness's own cluster), node by node.
pub fn empty_cluster(nodes: &[Node]) -> Result<(), String> {
    for node in nodes {
        let mut conn = node_conn(node)?;
        loop {
            let keys: Vec<String> = redis::cmd("RANDOMKEY")
                .query::<Option<String>>(&mut conn)
                .map_err(|e| e.to_string())?
                .into_iter()
                .collect();
            if keys.is_empty() {
                break;
            }
            let _: i64 = redis::cmd("UNLINK")
                .arg(&keys)
                .query(&mut conn)
                .map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

/// Each node's dataset bytes, and the share (%) of the one holding the most.
fn shares(nodes: &[Node]) -> Result<(Vec<(String, f64)>, f64), String> {
    let mut per = Vec::new();
    for n in nodes {
        per.push((n.name.clone(), dataset_bytes(n)?));
    }
    let total: f64 = per.iter().map(|(_, b)| b).sum();
    let max = per.iter().map(|(_, b)| *b).fold(0.0, f64::max);
    Ok((per, 100.0 * max / total.max(1.0)))
}

fn share_cell(per: &[(String, f64)], share: f64) -> Cell {
    let nodes: Vec<String> = per
        .iter()
        .map(|(n, b)| format!("{n} {}", fmt::quantity(b / 1e6, "MB")))
        .collect();
    Cell::num_with(share, "%", 1).with_text(format!(
        "{} of the cluster's dataset memory on one node ({})",
        fmt::quantity_with(share, "%", 1),
        nodes.join(", ")
    ))
}

pub fn run(t: &mut Target, rec: &mut Recorder) -> Result<(), String> {
    let key = t.key("seen:all");
    for bits in STEPS {
        let offset = (1u64 << bits) - 1;
        t.query::<i64>(redis::cmd("SETBIT").arg(&key).arg(offset).arg(1))?;
        rec.put(
            &format!("mem-{bits}"),
            t.reply(redis::cmd("MEMORY").arg("USAGE").arg(&key)),
        );
        let cell = match &t.nodes {
            Some(nodes) => {
                let (per, share) = shares(nodes)?;
                share_cell(&per, share)
            }
            None => Cell::skipped("not a cluster: every key is on its one node"),
        };
        rec.put(&format!("share-{bits}"), cell);
    }
    let last = *STEPS.last().unwrap();
    rec.put(
        "beyond",
        t.reply(redis::cmd("SETBIT").arg(&key).arg(1u64 << 32).arg(1)),
    );
    let Some(nodes) = t.nodes.clone() else {
        rec.put(
            "share-shards",
            Cell::skipped("not a cluster: every key is on its one node"),
        );
        return Ok(());
    };
    t.query::<i64>(redis::cmd("DEL").arg(&key))?;
    let per_shard = (1u64 << last) / SHARDS;
    for k in 0..SHARDS {
        let shard = t.key(&format!("seen:shard:{k}"));
        t.query::<i64>(redis::cmd("SETBIT").arg(&shard).arg(per_shard - 1).arg(1))?;
    }
    let (per, share) = shares(&nodes)?;
    rec.put("share-shards", share_cell(&per, share));
    empty_cluster(&nodes)
}
