//! The core's key-slot function against the cluster's `CLUSTER KEYSLOT`, on many
//! seeded keys: random bytes with `{` and `}` in every position, empty, nested and
//! unbalanced tags (the generator is the differential test's).

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use redis::ConnectionLike;
use redislab_core::cluster_slot::key_slot;
use redislab_harness::testing::random_cluster_key;
use redislab_harness::{ClusterKv, Kv, Recorder};

/// 20 000 keys at scale 1.
pub fn count(scale: f64) -> usize {
    ((20_000.0 * scale) as usize).max(100)
}

pub fn keys(seed: u64, count: usize) -> Vec<Vec<u8>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5107);
    (0..count).map(|_| random_cluster_key(&mut rng)).collect()
}

/// `CLUSTER KEYSLOT` of every key, pipelined.
fn keyslots(conn: &mut impl ConnectionLike, keys: &[Vec<u8>]) -> Result<Vec<u16>, String> {
    let mut out = Vec::with_capacity(keys.len());
    for chunk in keys.chunks(1000) {
        let mut pipe = redis::pipe();
        for key in chunk {
            pipe.cmd("CLUSTER").arg("KEYSLOT").arg(key.as_slice());
        }
        let slots: Vec<u16> = pipe
            .query(conn)
            .map_err(|e| format!("CLUSTER KEYSLOT: {e}"))?;
        out.extend(slots);
    }
    Ok(out)
}

fn digest(slots: &[u16]) -> String {
    let mut distinct = slots.to_vec();
    distinct.sort_unstable();
    distinct.dedup();
    let sum: u64 = slots.iter().map(|&s| s as u64).sum();
    format!(
        "{} keys · {} distinct slots · sum {sum}",
        slots.len(),
        distinct.len()
    )
}

fn agree(a: &[u16], b: &[u16]) -> String {
    let same = a.iter().zip(b).filter(|(x, y)| x == y).count();
    format!("{same} of {}", a.len())
}

/// Asks one node of the cluster (any node answers KEYSLOT) and compares with the
/// core's function, in process. Returns the cluster's slots.
pub fn on_cluster(
    cluster: &mut ClusterKv,
    rec: &mut Recorder,
    keys: &[Vec<u8>],
) -> Result<Vec<u16>, String> {
    let mut node = cluster.node("n1")?;
    let slots = keyslots(&mut node, keys)?;
    let ours: Vec<u16> = keys.iter().map(|k| key_slot(k)).collect();
    rec.put("keyslot-digest", digest(&slots));
    rec.put("keyslot-agree", agree(&slots, &ours));
    Ok(slots)
}

/// The core's `CLUSTER KEYSLOT` over its listener, against the cluster's answers.
pub fn on_core(
    core: &mut Kv,
    rec: &mut Recorder,
    keys: &[Vec<u8>],
    cluster: Option<&[u16]>,
) -> Result<(), String> {
    let slots = keyslots(core.conn(), keys)?;
    rec.put("keyslot-digest", digest(&slots));
    if let Some(cluster) = cluster {
        rec.put("keyslot-agree", agree(&slots, cluster));
    }
    Ok(())
}
