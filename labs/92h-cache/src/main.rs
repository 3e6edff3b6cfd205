//! 92h-cache — a top-100 cache with a short TTL, and rank updates over pub/sub.
//!
//! Article 92, "cache top N" and "realtime updates": a dashboard refreshed by many
//! clients reads the top 100 from a string cached for 5 s instead of running
//! ZREVRANGE every time; the price is a top 100 up to 5 s old. A user's rank
//! change is published on a channel so only interested subscribers hear of it.
//! Both run against the core (whose listener serves pub/sub) and Redis.

mod cache;

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use cache::{Counters, Keys, Strategy, EARLY_MS, TTL_S};
use redislab_harness::report::Bounds;
use redislab_harness::{run, Kind, Kv, LabInfo, Recorder};

const LAB: LabInfo = LabInfo {
    id: "92h-cache",
    uses_pg: false,
};

const USERS: u32 = 10_000;
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
            &format!("ZREVRANGE rebuilds in {RUN_S} s ({TTL_S} s TTL: 3 needed)"),
            1.0,
            20.0,
        );
        bounded(
            r,
            "overlapping",
            "… rebuilds started while another reader's was running (the stampede)",
            0.0,
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
        for strategy in [Strategy::Lock, Strategy::Early] {
            let sfx = strategy.suffix();
            let name = strategy.name();
            bounded(
                r,
                &format!("rebuilds{sfx}"),
                &format!("fix: {name}: rebuilds"),
                1.0,
                8.0,
            );
            bounded(
                r,
                &format!("overlapping{sfx}"),
                &format!("fix: {name}: overlapping rebuilds"),
                0.0,
                0.0,
            );
            bounded(
                r,
                &format!("hit-ratio{sfx}"),
                &format!("fix: {name}: hit ratio"),
                0.8,
                1.0,
            );
            bounded(
                r,
                &format!("max-age{sfx}"),
                &format!("fix: {name}: oldest top 100 served (s)"),
                0.0,
                TTL_S as f64 + 0.5,
            );
        }
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
        ctx.note(format!("The article's cache rebuilds on every miss, so when the TTL runs out each reader that misses before the first rebuild lands runs its own ZREVRANGE + SET: a cache stampede (dog-pile). With {READERS} readers the rebuilds row counts more than the 3 that {RUN_S} s of a {TTL_S} s TTL need, and the overlapping row those that ran while another was already running; with thousands of dashboards each expiry sends thousands of ZREVRANGEs at once. The fix rows run beside it (same board, same writer, own cache keys, {READERS} readers each): a single rebuilder (SET lock NX PX: the winner rebuilds, the others re-read the cache until it lands) and early refresh (a reader that sees under {} ms left takes the same lock and rebuilds before expiry, so after the first fill nobody misses). Both must show no overlapping rebuild.", EARLY_MS));
        ctx.note("Pub/sub: one SUBSCRIBE connection on leaderboard:rank_update; the writer runs score_and_notify (ZINCRBY, ZREVRANK, PUBLISH of a JSON payload) and the subscriber counts what arrives.");
        Ok(())
    })
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
    // The three strategies run at once, each with its own readers and cache key,
    // over the same leaderboard and writer.
    let mut counters = Vec::new();
    for strategy in Strategy::ALL {
        let keys = Keys {
            lb: lb.clone(),
            cache: format!("{cache}{}", strategy.suffix()),
            lock: kv.key(&format!("leaderboard:top100:lock{}", strategy.suffix())),
        };
        let c = Arc::new(Counters::default());
        for _ in 0..READERS {
            let conn = kv.new_connection()?;
            let (keys, c, stop) = (keys.clone(), c.clone(), stop.clone());
            threads.push(thread::spawn(move || {
                cache::reader(conn, keys, c, strategy, stop)
            }));
        }
        counters.push((strategy, keys, c));
    }
    let phase = redislab_harness::progress::Phase::new(
        format!(
            "{}: {READERS} readers × 3 strategies for {RUN_S} s",
            kv.name
        ),
        None,
    );
    thread::sleep(Duration::from_secs(RUN_S));
    phase.finish();
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        t.join().map_err(|_| "a thread panicked".to_string())??;
    }
    for (strategy, keys, c) in &counters {
        let sfx = strategy.suffix();
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
        let (reads, hits) = (load(&c.reads), load(&c.hits));
        rec.put(
            &format!("hit-ratio{sfx}"),
            format!("{:.4}", hits as f64 / reads.max(1) as f64),
        );
        rec.put(&format!("rebuilds{sfx}"), load(&c.rebuilds).to_string());
        rec.put(
            &format!("overlapping{sfx}"),
            load(&c.overlapping).to_string(),
        );
        rec.put(
            &format!("max-age{sfx}"),
            format!("{:.2}", load(&c.max_age_ms) as f64 / 1000.0),
        );
        if *strategy == Strategy::Plain {
            rec.put("reads", reads.to_string());
            rec.put(
                "stale-share",
                format!(
                    "{:.2}",
                    load(&c.stale) as f64 / load(&c.sampled).max(1) as f64
                ),
            );
        }
        kv.cmd(&["DEL", &keys.cache, &keys.lock])?;
    }
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
