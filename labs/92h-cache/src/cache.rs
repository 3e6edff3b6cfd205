//! The dashboard's readers of the cached top 100, three ways.
//!
//! The article's get_top100_cached (`Plain`) rebuilds on every miss: when the
//! 5 s TTL runs out, every reader that misses before the first rebuild lands runs
//! its own ZREVRANGE and SET — a cache stampede (a "dog-pile"), small here with 4
//! readers, one per reader at each expiry, and proportional to the readers in
//! production. Two usual fixes, run side by side on their own cache keys:
//! `Lock` lets one reader rebuild (SET lock NX PX) while the others wait for its
//! result, and `Early` refreshes before expiry (a reader that sees less than
//! `EARLY_MS` left takes the lock and rebuilds), so readers never miss at all.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

pub const TTL_S: u64 = 5;
/// `Early`: refresh when the cache has less than this left.
pub const EARLY_MS: i64 = 1_000;
/// How long a rebuild may hold the lock before another reader may take it.
const LOCK_MS: u64 = 2_000;

#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Strategy {
    Plain,
    Lock,
    Early,
}

impl Strategy {
    pub const ALL: [Strategy; 3] = [Strategy::Plain, Strategy::Lock, Strategy::Early];

    /// Row-key suffix ("" for the article's, whose rows keep their keys).
    pub fn suffix(self) -> &'static str {
        match self {
            Strategy::Plain => "",
            Strategy::Lock => "-lock",
            Strategy::Early => "-early",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Strategy::Plain => "the article's (rebuild on every miss)",
            Strategy::Lock => "single rebuilder (SET lock NX PX, the others wait)",
            Strategy::Early => "early refresh (< 1 s left: one reader rebuilds, with the lock)",
        }
    }
}

/// What the readers of one strategy saw.
#[derive(Default)]
pub struct Counters {
    pub reads: AtomicU64,
    /// Reads whose first GET found the cache.
    pub hits: AtomicU64,
    pub rebuilds: AtomicU64,
    /// Rebuilds that started while another reader's rebuild was running.
    pub overlapping: AtomicU64,
    pub stale: AtomicU64,
    pub sampled: AtomicU64,
    pub max_age_ms: AtomicU64,
    running: AtomicU64,
}

/// The keys one strategy works on.
#[derive(Clone)]
pub struct Keys {
    pub lb: String,
    pub cache: String,
    pub lock: String,
}

type Conn = redis::Connection;

fn err(e: redis::RedisError) -> String {
    e.to_string()
}

pub fn top100(conn: &mut Conn, lb: &str) -> Result<String, String> {
    let items: Vec<(String, f64)> = redis::cmd("ZREVRANGE")
        .arg(lb)
        .arg(0)
        .arg(99)
        .arg("WITHSCORES")
        .query(conn)
        .map_err(err)?;
    Ok(serde_json::to_string(&items).unwrap_or_default())
}

/// ZREVRANGE and SET … EX: one rebuild, counted (and whether another was running).
fn rebuild(conn: &mut Conn, keys: &Keys, c: &Counters) -> Result<String, String> {
    c.rebuilds.fetch_add(1, Ordering::Relaxed);
    if c.running.fetch_add(1, Ordering::SeqCst) > 0 {
        c.overlapping.fetch_add(1, Ordering::Relaxed);
    }
    let result = top100(conn, &keys.lb).and_then(|json| {
        redis::cmd("SET")
            .arg(&keys.cache)
            .arg(&json)
            .arg("EX")
            .arg(TTL_S)
            .query::<()>(conn)
            .map_err(err)
            .map(|()| json)
    });
    c.running.fetch_sub(1, Ordering::SeqCst);
    result
}

/// Rebuilds only if this reader wins the lock; None when another holds it.
fn rebuild_locked(conn: &mut Conn, keys: &Keys, c: &Counters) -> Result<Option<String>, String> {
    let won: Option<String> = redis::cmd("SET")
        .arg(&keys.lock)
        .arg(1)
        .arg("NX")
        .arg("PX")
        .arg(LOCK_MS)
        .query(conn)
        .map_err(err)?;
    if won.is_none() {
        return Ok(None);
    }
    let json = rebuild(conn, keys, c);
    redis::cmd("DEL")
        .arg(&keys.lock)
        .query::<()>(conn)
        .map_err(err)?;
    json.map(Some)
}

/// One read of the top 100 under `strategy`.
fn read(conn: &mut Conn, keys: &Keys, c: &Counters, strategy: Strategy) -> Result<String, String> {
    let cached: Option<String> = redis::cmd("GET")
        .arg(&keys.cache)
        .query(conn)
        .map_err(err)?;
    if let Some(json) = cached {
        c.hits.fetch_add(1, Ordering::Relaxed);
        let pttl: i64 = redis::cmd("PTTL")
            .arg(&keys.cache)
            .query(conn)
            .map_err(err)?;
        if pttl > 0 {
            c.max_age_ms
                .fetch_max(TTL_S * 1000 - pttl as u64, Ordering::Relaxed);
        }
        if strategy == Strategy::Early && pttl > 0 && pttl < EARLY_MS {
            if let Some(fresh) = rebuild_locked(conn, keys, c)? {
                return Ok(fresh);
            }
        }
        return Ok(json);
    }
    if strategy == Strategy::Plain {
        return rebuild(conn, keys, c);
    }
    // A miss under Lock or Early: one reader rebuilds, the others wait for it.
    loop {
        if let Some(fresh) = rebuild_locked(conn, keys, c)? {
            return Ok(fresh);
        }
        thread::sleep(Duration::from_millis(2));
        let cached: Option<String> = redis::cmd("GET")
            .arg(&keys.cache)
            .query(conn)
            .map_err(err)?;
        if let Some(json) = cached {
            return Ok(json);
        }
    }
}

/// A dashboard reader until `stop`: every 50th read also fetches the live top 100
/// to count how often the served one differs.
pub fn reader(
    mut conn: Conn,
    keys: Keys,
    c: Arc<Counters>,
    strategy: Strategy,
    stop: Arc<AtomicBool>,
) -> Result<(), String> {
    while !stop.load(Ordering::Relaxed) {
        let n = c.reads.fetch_add(1, Ordering::Relaxed);
        let served = read(&mut conn, &keys, &c, strategy)?;
        if n.is_multiple_of(50) {
            c.sampled.fetch_add(1, Ordering::Relaxed);
            if top100(&mut conn, &keys.lb)? != served {
                c.stale.fetch_add(1, Ordering::Relaxed);
            }
        }
        thread::sleep(Duration::from_millis(1));
    }
    Ok(())
}
