//! The article's warning on BZPOPMIN: Lettuce shares one connection by default, and
//! a blocking command on it holds back every other command on it until it returns.
//! The Rust client's multiplexed connection is the same design (one socket, many
//! callers, replies in order), so the lab blocks a worker in `BZPOPMIN q 1` on a
//! shared connection and times a ZSCORE another caller sends 50 ms later; then the
//! fix, the worker on its own connection. The Rust client also has a 500 ms
//! response timeout by default, which a 1 s BZPOPMIN runs into: shown as its error.

use std::time::{Duration, Instant};

use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, Value};
use redislab_harness::backend::{error_text, render};
use redislab_harness::{Cell, Kind, Kv, Recorder, Report};

/// BZPOPMIN's timeout, seconds.
const BLOCK_S: u64 = 1;
/// When the other caller sends its ZSCORE, after the worker's BZPOPMIN.
const OTHER_AFTER: Duration = Duration::from_millis(50);

pub fn declare(r: &mut Report) {
    r.exact(
        "blk-shared-order",
        "shared connection: BZPOPMIN q 1 (empty queue), ZSCORE 50 ms later: which answers first",
        "BZPOPMIN (nil), then ZSCORE",
    );
    // Held until BZPOPMIN's 1 s timeout: 950 ms less scheduling noise.
    r.random(
        "blk-shared-ms",
        "shared connection: the ZSCORE's latency (ms)",
        Some("blocks the other commands"),
    )
    .bounds(800.0, 3_000.0);
    r.exact(
        "blk-dedicated-order",
        "worker on its own connection (the fix): which answers first",
        "ZSCORE, then BZPOPMIN (nil)",
    );
    r.random(
        "blk-dedicated-ms",
        "worker on its own connection: the ZSCORE's latency (ms)",
        None,
    )
    .bounds(0.0, 300.0);
    r.row(
        "blk-default-timeout",
        "BZPOPMIN q 1 on a multiplexed connection with the client's defaults (500 ms response timeout)",
        Kind::Exact,
        None,
    );
}

async fn connect(url: &str, timeout: Option<Duration>) -> Result<MultiplexedConnection, String> {
    let client = redis::Client::open(url).map_err(|e| error_text(&e))?;
    let config = AsyncConnectionConfig::new().set_response_timeout(timeout);
    client
        .get_multiplexed_async_connection_with_config(&config)
        .await
        .map_err(|e| error_text(&e))
}

/// What one scenario saw: who answered first, the ZSCORE's latency.
struct Seen {
    order: String,
    other_ms: f64,
}

/// The worker blocks on `worker`, the other caller uses `other` (the same
/// connection, or another).
async fn scenario(
    worker: MultiplexedConnection,
    mut other: MultiplexedConnection,
    queue: String,
    lb: String,
) -> Result<Seen, String> {
    let started = Instant::now();
    let pop = tokio::spawn(async move {
        let mut worker = worker;
        let reply: Result<Value, _> = redis::cmd("BZPOPMIN")
            .arg(&queue)
            .arg(BLOCK_S)
            .query_async(&mut worker)
            .await;
        (reply.map_err(|e| error_text(&e)), started.elapsed())
    });
    tokio::time::sleep(OTHER_AFTER).await;
    let sent = Instant::now();
    let score: Value = redis::cmd("ZSCORE")
        .arg(&lb)
        .arg("alice")
        .query_async(&mut other)
        .await
        .map_err(|e| error_text(&e))?;
    let other_done = started.elapsed();
    let other_ms = sent.elapsed().as_secs_f64() * 1e3;
    let (popped, pop_done) = pop.await.map_err(|e| e.to_string())?;
    let popped = render(&popped?);
    let zscore = format!("ZSCORE {}", render(&score));
    let order = if pop_done <= other_done {
        format!("BZPOPMIN {popped}, then {zscore}")
    } else {
        format!("{zscore}, then BZPOPMIN {popped}")
    };
    Ok(Seen { order, other_ms })
}

pub fn run(kv: &mut Kv, rec: &mut Recorder) -> Result<(), String> {
    let (queue, lb) = (kv.key("queue:email-jobs"), kv.key("lb:blocking"));
    kv.cmd(&["DEL", &queue])?;
    kv.cmd(&["ZADD", &lb, "120", "alice"])?;
    let url = kv.url().to_string();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let (shared, dedicated, default_err) = rt.block_on(async {
        let conn = connect(&url, None).await?;
        let shared = scenario(conn.clone(), conn, queue.clone(), lb.clone()).await?;
        let worker = connect(&url, None).await?;
        let other = connect(&url, None).await?;
        let dedicated = scenario(worker, other, queue.clone(), lb.clone()).await?;
        let mut defaults = connect(&url, Some(Duration::from_millis(500))).await?;
        let reply: Result<Value, _> = redis::cmd("BZPOPMIN")
            .arg(&queue)
            .arg(BLOCK_S)
            .query_async(&mut defaults)
            .await;
        let default_err = match reply {
            Ok(v) => render(&v),
            Err(e) => format!("client error: {}", error_text(&e)),
        };
        Ok::<_, String>((shared, dedicated, default_err))
    })?;
    // The ZSCORE's text (120 on both) is part of the order row.
    rec.put("blk-shared-order", trim_reply(&shared.order));
    rec.put("blk-shared-ms", Cell::num(shared.other_ms.round(), "ms"));
    rec.put("blk-dedicated-order", trim_reply(&dedicated.order));
    rec.put(
        "blk-dedicated-ms",
        Cell::num_with(dedicated.other_ms, "ms", 2),
    );
    rec.put("blk-default-timeout", default_err);
    Ok(())
}

/// `ZSCORE 120` → `ZSCORE`: the order rows name the calls, the score is not news.
fn trim_reply(order: &str) -> String {
    order.replace("ZSCORE 120", "ZSCORE")
}
