//! One big bitmap (8,388,608 user ids, 1 MB) stored two ways: as one key, which
//! lives on one node, and as 8 keys by id range (`active:shard:K` holds ids
//! K·2²⁰ … (K+1)·2²⁰−1) without a common tag, spread over the nodes. BITCOUNT
//! and BITPOS of the whole then need a client-side fan-out: one BITCOUNT per
//! shard summed, and BITPOS asked shard by shard until one answers. The answers
//! must equal those of the one key; the lab times both ways.
//!
//! BITPOS's trap for the fan-out: on a key whose bits are all 1, `BITPOS key 0`
//! without a range answers the bit just past the end (the string is taken as
//! padded with zeros), not -1; with an explicit `0 -1` range it answers -1, which
//! is what a fan-out needs to move on to the next shard.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::time::Instant;

use redislab_harness::progress::Phase;
use redislab_harness::timing::{Timing, PERCENTILES};
use redislab_harness::{Cell, Recorder};

use crate::target::Target;

pub const SHARDS: usize = 8;
pub const SHARD_BITS: usize = 1 << 20;
/// Ids below this are all active (a back-fill), so BITPOS 0 has far to go.
pub const BACKFILL: usize = 5_300_017;
const WARMUP: usize = 50;
const CALLS: usize = 400;

/// The whole bitmap as bytes: ids below [`BACKFILL`] set, the rest 30% (seeded).
pub fn generate(seed: u64) -> Vec<u8> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xfa17);
    let mut bytes = vec![0u8; SHARDS * SHARD_BITS / 8];
    for id in 0..SHARDS * SHARD_BITS {
        if id < BACKFILL || rng.gen_bool(0.3) {
            bytes[id / 8] |= 0x80 >> (id % 8);
        }
    }
    bytes
}

fn shard_key(t: &Target, k: usize) -> String {
    t.key(&format!("active:shard:{k}"))
}

/// Sum of the shards' BITCOUNTs, one round trip each.
fn fanout_count(t: &mut Target, keys: &[String]) -> Result<i64, String> {
    let mut sum = 0;
    for key in keys {
        sum += t.query::<i64>(redis::cmd("BITCOUNT").arg(key))?;
    }
    Ok(sum)
}

/// The first 0 bit over the shards in id order: BITPOS with an explicit range
/// on each until one answers.
fn fanout_bitpos(t: &mut Target, keys: &[String]) -> Result<i64, String> {
    for (k, key) in keys.iter().enumerate() {
        let pos: i64 = t.query(redis::cmd("BITPOS").arg(key).arg(0).arg(0).arg(-1))?;
        if pos >= 0 {
            return Ok((k * SHARD_BITS) as i64 + pos);
        }
    }
    Ok(-1)
}

pub struct Times {
    pub one_count: Timing,
    pub fan_count: Timing,
    pub one_pos: Timing,
    pub fan_pos: Timing,
}

pub fn run(t: &mut Target, rec: &mut Recorder, bitmap: &[u8]) -> Result<Times, String> {
    let whole = t.key("active:all");
    t.query::<()>(redis::cmd("SET").arg(&whole).arg(bitmap))?;
    let keys: Vec<String> = (0..SHARDS).map(|k| shard_key(t, k)).collect();
    for (key, part) in keys.iter().zip(bitmap.chunks(SHARD_BITS / 8)) {
        t.query::<()>(redis::cmd("SET").arg(key).arg(part))?;
    }
    let mut nodes = Vec::new();
    for key in &keys {
        if let Some(n) = t.node_of(key)? {
            nodes.push(n);
        }
    }
    match t.node_of(&whole)? {
        Some(n) => {
            rec.put("whole-node", n);
            rec.put("shard-nodes", nodes.join(" "));
        }
        None => {
            rec.put("whole-node", Cell::skipped("not a cluster: one node"));
            rec.put("shard-nodes", Cell::skipped("not a cluster: one node"));
        }
    }

    rec.put("count-one", t.reply(redis::cmd("BITCOUNT").arg(&whole)));
    rec.put("count-fan", fanout_count(t, &keys)?.to_string());
    rec.put("pos-one", t.reply(redis::cmd("BITPOS").arg(&whole).arg(0)));
    rec.put("pos-fan", fanout_bitpos(t, &keys)?.to_string());
    rec.put(
        "pos-trap",
        format!(
            "{} · with 0 -1: {}",
            t.reply(redis::cmd("BITPOS").arg(&keys[0]).arg(0)),
            t.reply(redis::cmd("BITPOS").arg(&keys[0]).arg(0).arg(0).arg(-1))
        ),
    );

    let [one_count, fan_count, one_pos, fan_pos] = interleaved(t, &whole, &keys)?;
    Ok(Times {
        one_count,
        fan_count,
        one_pos,
        fan_pos,
    })
}

/// Times the four ways in turn inside one loop (one-key BITCOUNT, its fan-out,
/// one-key BITPOS, its fan-out, then again), so a busy moment of the machine
/// slows all four alike and the ratios stay put.
fn interleaved(t: &mut Target, whole: &str, keys: &[String]) -> Result<[Timing; 4], String> {
    let phase = Phase::new(
        "BITCOUNT/BITPOS: one key vs fan-out",
        Some((WARMUP + CALLS) as u64),
    );
    let mut samples: [Vec<u64>; 4] = Default::default();
    for i in 0..WARMUP + CALLS {
        for (way, list) in samples.iter_mut().enumerate() {
            let start = Instant::now();
            match way {
                0 => t
                    .query::<i64>(redis::cmd("BITCOUNT").arg(whole))
                    .map(drop)?,
                1 => fanout_count(t, keys).map(drop)?,
                2 => t
                    .query::<i64>(redis::cmd("BITPOS").arg(whole).arg(0))
                    .map(drop)?,
                _ => fanout_bitpos(t, keys).map(drop)?,
            }
            if i >= WARMUP {
                list.push(start.elapsed().as_micros() as u64);
            }
        }
        phase.inc(1);
    }
    Ok(samples.map(timing))
}

/// The distribution of `samples` (µs), as `timing::measure` would report it.
fn timing(mut samples: Vec<u64>) -> Timing {
    samples.sort_unstable();
    let at = |p: f64| samples[((p / 100.0) * (samples.len() - 1) as f64).round() as usize];
    Timing {
        calls: samples.len() as u64,
        median_us: at(50.0),
        p99_us: at(99.0),
        max_us: at(100.0),
        percentiles_us: PERCENTILES.map(at),
    }
}

pub fn record_times(rec: &mut Recorder, times: &Times) {
    rec.put("t-count-one", times.one_count);
    rec.put("t-count-fan", times.fan_count);
    rec.put("t-pos-one", times.one_pos);
    rec.put("t-pos-fan", times.fan_pos);
    let ratio = |a: &Timing, b: &Timing| a.median_us as f64 / (b.median_us.max(1)) as f64;
    rec.put(
        "r-count",
        Cell::num_with(ratio(&times.fan_count, &times.one_count), "×", 1),
    );
    rec.put(
        "r-pos",
        Cell::num_with(ratio(&times.fan_pos, &times.one_pos), "×", 1),
    );
}
