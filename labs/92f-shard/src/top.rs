//! Top N: from the unsharded key, and merged client-side from each shard's top N.

use redislab_harness::backend::error_text;
use redislab_harness::Kv;

use crate::data::{shard_keys, GLOBAL};

pub type Entry = (String, f64);

fn zrevrange(kv: &mut Kv, key: &str, n: usize) -> Result<Vec<Entry>, String> {
    redis::cmd("ZREVRANGE")
        .arg(key)
        .arg(0)
        .arg(n - 1)
        .arg("WITHSCORES")
        .query(kv.conn())
        .map_err(|e| format!("{}: ZREVRANGE: {}", kv.name, error_text(&e)))
}

pub fn global(kv: &mut Kv, n: usize) -> Result<Vec<Entry>, String> {
    let key = kv.key(GLOBAL);
    zrevrange(kv, &key, n)
}

/// Every shard's top N, in shard order (8 × N candidates).
pub fn candidates(kv: &mut Kv, n: usize) -> Result<Vec<Entry>, String> {
    let mut all = Vec::new();
    for key in shard_keys(kv) {
        all.extend(zrevrange(kv, &key, n)?);
    }
    Ok(all)
}

/// ZREVRANGE's order: score descending, ties by member bytes descending.
pub fn merge(mut all: Vec<Entry>, n: usize) -> Vec<Entry> {
    all.sort_by(|a, b| {
        b.1.total_cmp(&a.1)
            .then_with(|| b.0.as_bytes().cmp(a.0.as_bytes()))
    });
    all.truncate(n);
    all
}

/// The article's sharded_top_n: a stable sort on the score alone, so tied users
/// keep the order of the shards they came from.
pub fn article_merge(mut all: Vec<Entry>, n: usize) -> Vec<Entry> {
    all.sort_by(|a, b| b.1.total_cmp(&a.1));
    all.truncate(n);
    all
}

pub fn render(entries: &[Entry]) -> String {
    entries
        .iter()
        .map(|(m, s)| format!("{m} {s}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// `equal`, or the first position where the two lists part.
pub fn compare(got: &[Entry], want: &[Entry]) -> String {
    if got == want {
        return "equal".into();
    }
    let i = got
        .iter()
        .zip(want)
        .position(|(g, w)| g != w)
        .unwrap_or(got.len().min(want.len()));
    let at = |l: &[Entry]| l.get(i).map_or("-".into(), |(m, s)| format!("{m} {s}"));
    format!("differs at #{}: {} vs {}", i + 1, at(got), at(want))
}
