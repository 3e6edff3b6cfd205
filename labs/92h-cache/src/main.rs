//! 92h-cache — a top-100 cache with a short TTL, and rank updates over pub/sub.
//!
//! Article 92, "cache top N" and "realtime updates": a dashboard refreshed by many
//! clients reads the top 100 from a string cached for 5 s instead of running
//! ZREVRANGE every time; the price is a top 100 up to 5 s old. A user's rank
//! change is published on a channel so only interested subscribers hear of it.
//! Both run against the core (whose listener serves pub/sub) and Redis.

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use redislab_harness::report::Bounds;
use redislab_harness::{run, Kind, Kv, LabInfo, Recorder};

const LAB: LabInfo = LabInfo {
    id: "92h-cache",
    uses_pg: false,
};

const USERS: u32 = 10_000;
const TTL_S: u64 = 5;
const RUN_S: u64 = 11;
const READERS: usize = 4;
const NOTIFY: usize = 200;

fn main() -> ExitCode {
    run(LAB, |ctx| {
        let r = &mut ctx.report;
        let bounded =
            |r: &mut redislab_harness::Report, key: &str, label: &str, min: f64, max: f64| {
                r.row(key, label, Kind::Random, None).bounds = Some(Bounds { min, max });
            };
        bounded(
            r,
            "reads",
            &format!("dashboard reads in {RUN_S} s ({READERS} readers)"),
            1_000.0,
            1e9,
        );
        bounded(
            r,
            "hit-ratio",
            "cache hit ratio (reads served from the cached string)",
            0.8,
            1.0,
        );
        bounded(
            r,
            "rebuilds",
            &format!("ZREVRANGE rebuilds (≈ one per {TTL_S} s TTL)"),
            1.0,
            20.0,
        );
        bounded(
            r,
            "max-age",
            "oldest cached top 100 served (s)",
            3.0,
            TTL_S as f64 + 0.5,
        );
        bounded(
            r,
            "stale-share",
            "share of sampled reads whose cached top 100 differed from the live one",
            0.0,
            1.0,
        );
        r.row(
            "published",
            &format!("score_and_notify × {NOTIFY}: PUBLISH replies (receivers)"),
            Kind::Exact,
            None,
        );
        r.row(
            "received",
            "messages the subscriber received",
            Kind::Exact,
            None,
        );
        r.row("first-message", "first message payload", Kind::Exact, None);
        r.row(
            "ranks-agree",
            "every published rank = ZREVRANK + 1 at publish time",
            Kind::Exact,
            None,
        );
        ctx.each_kv(cache_and_notify)?;
        ctx.note(format!("One writer adds points (ZINCRBY, ~500/s) while {READERS} readers call the article's get_top100_cached for {RUN_S} s; a miss rebuilds the cache with ZREVRANGE 0 99 WITHSCORES and SET … EX {TTL_S}. Every 50th read also fetches the live top 100 to measure staleness."));
        ctx.note("Pub/sub: one SUBSCRIBE connection on leaderboard:rank_update; the writer runs score_and_notify (ZINCRBY, ZREVRANK, PUBLISH of a JSON payload) and the subscriber counts what arrives.");
        Ok(())
    })
}

fn top100(conn: &mut redis::Connection, lb: &str) -> Result<String, String> {
    let items: Vec<(String, f64)> = redis::cmd("ZREVRANGE")
        .arg(lb)
        .arg(0)
        .arg(99)
        .arg("WITHSCORES")
        .query(conn)
        .map_err(|e| e.to_string())?;
    Ok(serde_json::to_string(&items).unwrap_or_default())
}

fn cache_and_notify(kv: &mut Kv, rec: &mut Recorder) -> Result<(), String> {
    let lb = kv.key("leaderboard:global");
    let cache = kv.key("leaderboard:top100:cache");
    let mut load = redis::pipe();
    for i in 0..USERS {
        load.cmd("ZADD")
            .arg(&lb)
            .arg((i * 7919) % 100_000)
            .arg(format!("u{i:05}"))
            .ignore();
    }
    load.query::<()>(kv.conn()).map_err(|e| e.to_string())?;

    let stop = Arc::new(AtomicBool::new(false));
    let (reads, hits, rebuilds, stale, sampled) = (
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicU64::new(0)),
        Arc::new(AtomicU64::new(0)),
    );
    let max_age_ms = Arc::new(AtomicU64::new(0));
    let mut threads = Vec::new();
    {
        let (mut conn, lb, stop) = (kv.new_connection()?, lb.clone(), stop.clone());
        threads.push(thread::spawn(move || -> Result<(), String> {
            let mut i = 0u32;
            while !stop.load(Ordering::Relaxed) {
                redis::cmd("ZINCRBY")
                    .arg(&lb)
                    .arg(37)
                    .arg(format!("u{:05}", (i * 131) % USERS))
                    .query::<f64>(&mut conn)
                    .map_err(|e| e.to_string())?;
                i += 1;
                thread::sleep(Duration::from_millis(2));
            }
            Ok(())
        }));
    }
    for _ in 0..READERS {
        let mut conn = kv.new_connection()?;
        let (lb, cache, stop) = (lb.clone(), cache.clone(), stop.clone());
        let (reads, hits, rebuilds, stale, sampled, max_age_ms) = (
            reads.clone(),
            hits.clone(),
            rebuilds.clone(),
            stale.clone(),
            sampled.clone(),
            max_age_ms.clone(),
        );
        threads.push(thread::spawn(move || -> Result<(), String> {
            while !stop.load(Ordering::Relaxed) {
                let n = reads.fetch_add(1, Ordering::Relaxed);
                let cached: Option<String> = redis::cmd("GET")
                    .arg(&cache)
                    .query(&mut conn)
                    .map_err(|e| e.to_string())?;
                let served = match cached {
                    Some(json) => {
                        hits.fetch_add(1, Ordering::Relaxed);
                        let pttl: i64 = redis::cmd("PTTL")
                            .arg(&cache)
                            .query(&mut conn)
                            .map_err(|e| e.to_string())?;
                        if pttl > 0 {
                            max_age_ms.fetch_max(TTL_S * 1000 - pttl as u64, Ordering::Relaxed);
                        }
                        json
                    }
                    None => {
                        rebuilds.fetch_add(1, Ordering::Relaxed);
                        let json = top100(&mut conn, &lb)?;
                        redis::cmd("SET")
                            .arg(&cache)
                            .arg(&json)
                            .arg("EX")
                            .arg(TTL_S)
                            .query::<()>(&mut conn)
                            .map_err(|e| e.to_string())?;
                        json
                    }
                };
                if n % 50 == 0 {
                    sampled.fetch_add(1, Ordering::Relaxed);
                    if top100(&mut conn, &lb)? != served {
                        stale.fetch_add(1, Ordering::Relaxed);
                    }
                }
                thread::sleep(Duration::from_millis(1));
            }
            Ok(())
        }));
    }
    thread::sleep(Duration::from_secs(RUN_S));
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        t.join().map_err(|_| "a thread panicked".to_string())??;
    }
    let (reads, hits) = (reads.load(Ordering::Relaxed), hits.load(Ordering::Relaxed));
    rec.put("reads", reads.to_string());
    rec.put(
        "hit-ratio",
        format!("{:.4}", hits as f64 / reads.max(1) as f64),
    );
    rec.put("rebuilds", rebuilds.load(Ordering::Relaxed).to_string());
    rec.put(
        "max-age",
        format!("{:.2}", max_age_ms.load(Ordering::Relaxed) as f64 / 1000.0),
    );
    rec.put(
        "stale-share",
        format!(
            "{:.2}",
            stale.load(Ordering::Relaxed) as f64 / sampled.load(Ordering::Relaxed).max(1) as f64
        ),
    );
    // The pub/sub part starts from a fresh board, so its rows do not depend on how
    // many writes the timed cache run managed.
    kv.cmd(&["DEL", &lb])?;
    let mut load = redis::pipe();
    for i in 0..USERS {
        load.cmd("ZADD")
            .arg(&lb)
            .arg((i * 7919) % 100_000)
            .arg(format!("u{i:05}"))
            .ignore();
    }
    load.query::<()>(kv.conn()).map_err(|e| e.to_string())?;
    notify(kv, rec, &lb)
}

/// The article's score_and_notify, heard by one subscriber.
fn notify(kv: &mut Kv, rec: &mut Recorder, lb: &str) -> Result<(), String> {
    let channel = kv.key("leaderboard:rank_update");
    let mut sub_conn = kv.new_connection()?;
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let ready = Arc::new(AtomicBool::new(false));
    let listener = {
        let (channel, ready) = (channel.clone(), ready.clone());
        thread::spawn(move || -> Result<(), String> {
            let mut pubsub = sub_conn.as_pubsub();
            pubsub.subscribe(&channel).map_err(|e| e.to_string())?;
            pubsub
                .set_read_timeout(Some(Duration::from_secs(5)))
                .map_err(|e| e.to_string())?;
            ready.store(true, Ordering::Relaxed);
            for _ in 0..NOTIFY {
                let msg = pubsub.get_message().map_err(|e| e.to_string())?;
                let payload: String = msg.get_payload().map_err(|e| e.to_string())?;
                if tx.send(payload).is_err() {
                    break;
                }
            }
            Ok(())
        })
    };
    let started = Instant::now();
    while !ready.load(Ordering::Relaxed) && started.elapsed() < Duration::from_secs(5) {
        thread::sleep(Duration::from_millis(5));
    }
    let (mut receivers, mut published_ranks) = (Vec::new(), Vec::new());
    for i in 0..NOTIFY {
        let user = format!("u{:05}", (i * 17) % USERS as usize);
        let score: f64 = redis::cmd("ZINCRBY")
            .arg(lb)
            .arg(1000)
            .arg(&user)
            .query(kv.conn())
            .map_err(|e| e.to_string())?;
        let rank: i64 = redis::cmd("ZREVRANK")
            .arg(lb)
            .arg(&user)
            .query(kv.conn())
            .map_err(|e| e.to_string())?;
        let payload =
            serde_json::json!({ "user_id": user, "score": score, "rank": rank + 1 }).to_string();
        let n: i64 = redis::cmd("PUBLISH")
            .arg(&channel)
            .arg(&payload)
            .query(kv.conn())
            .map_err(|e| e.to_string())?;
        receivers.push(n);
        published_ranks.push(payload);
    }
    listener
        .join()
        .map_err(|_| "the subscriber panicked".to_string())??;
    let received: Vec<String> = rx.try_iter().collect();
    let ones = receivers.iter().filter(|&&n| n == 1).count();
    rec.put(
        "published",
        format!("{NOTIFY} published, {ones} reached 1 subscriber"),
    );
    rec.put("received", received.len().to_string());
    rec.put(
        "first-message",
        received.first().cloned().unwrap_or_else(|| "(none)".into()),
    );
    rec.put("ranks-agree", (received == published_ranks).to_string());
    Ok(())
}
