//! Daily attendance bitmaps (article 02 §3.5's shape: bit N = student N) and
//! BITOP over the week. Without a common hash tag the seven day keys land in
//! seven slots, on every node, and the cluster refuses BITOP with its own
//! CROSSSLOT error; the client can still fetch the days and AND them itself. With
//! a `{tag}` every key has one slot and BITOP works, on one node.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use redislab_harness::{Cell, Recorder};

use crate::target::Target;

pub const STUDENTS: usize = 100_000;
pub const DAYS: usize = 7;

/// Seven bitmaps as raw bytes (bit 0 is the high bit of byte 0, as SETBIT's).
/// Each student has a rate from [0.4, 0.9] and is present on each day with it.
pub fn generate(seed: u64) -> Vec<Vec<u8>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x02c1);
    let mut days = vec![vec![0u8; STUDENTS.div_ceil(8)]; DAYS];
    for id in 0..STUDENTS {
        let rate = rng.gen_range(0.4..0.9);
        for day in days.iter_mut() {
            if rng.gen_bool(rate) {
                day[id / 8] |= 0x80 >> (id % 8);
            }
        }
    }
    days
}

fn day_key(t: &Target, tagged: bool, day: usize) -> String {
    match tagged {
        false => t.key(&format!("attendance:2026-06-0{}", day + 1)),
        true => t.key(&format!("attendance:{{w23}}:2026-06-0{}", day + 1)),
    }
}

fn dest_key(t: &Target, tagged: bool) -> String {
    match tagged {
        false => t.key("attendance:all-week"),
        true => t.key("attendance:{w23}:all-week"),
    }
}

fn ones(bytes: &[u8]) -> u64 {
    bytes.iter().map(|b| u64::from(b.count_ones())).sum()
}

pub fn run(t: &mut Target, rec: &mut Recorder, days: &[Vec<u8>]) -> Result<(), String> {
    for tagged in [false, true] {
        let keys: Vec<String> = (0..DAYS).map(|d| day_key(t, tagged, d)).collect();
        for (key, bytes) in keys.iter().zip(days) {
            t.query::<()>(redis::cmd("SET").arg(key).arg(bytes.as_slice()))?;
        }
        let mut slots = Vec::new();
        let mut nodes = Vec::new();
        for key in &keys {
            slots.push(t.reply(redis::cmd("CLUSTER").arg("KEYSLOT").arg(key)));
            if let Some(n) = t.node_of(key)? {
                nodes.push(n);
            }
        }
        let dest = dest_key(t, tagged);
        let mut bitop = redis::cmd("BITOP");
        bitop.arg("AND").arg(&dest).arg(&keys);
        let answer = t.reply(&bitop);
        let (slots_row, nodes_row, bitop_row) = match tagged {
            false => ("day-slots", "day-nodes", "crossslot"),
            true => ("tagged-slots", "tagged-nodes", "tagged-bitop"),
        };
        rec.put(slots_row, slots.join(" "));
        rec.put(nodes_row, node_cell(&nodes));
        rec.put(bitop_row, answer);
        if tagged {
            let count = t.reply(redis::cmd("BITCOUNT").arg(&dest));
            rec.put("tagged-count", count);
        } else {
            // What a client does without a common slot: GET each day from its
            // node and AND them itself.
            let mut and: Option<Vec<u8>> = None;
            for key in &keys {
                let bytes: Vec<u8> = t.query(redis::cmd("GET").arg(key))?;
                and = Some(match and {
                    None => bytes,
                    Some(acc) => acc.iter().zip(&bytes).map(|(a, b)| a & b).collect(),
                });
            }
            rec.put("client-and", ones(&and.unwrap_or_default()).to_string());
        }
    }
    Ok(())
}

/// `n1 n3 …` and the spread, or the core's "not a cluster".
fn node_cell(nodes: &[String]) -> Cell {
    if nodes.is_empty() {
        return Cell::skipped("not a cluster: one node holds every key");
    }
    let mut names: Vec<&String> = nodes.iter().collect();
    names.sort();
    names.dedup();
    let spread: Vec<String> = names
        .iter()
        .map(|n| format!("{n} {}", nodes.iter().filter(|m| m == n).count()))
        .collect();
    Cell::text(format!(
        "{} · keys per node: {}",
        nodes.join(" "),
        spread.join(", ")
    ))
}
