//! BZPOPMIN: one connection blocks; a job pushed while it waits is returned to it,
//! and an empty queue gives nil when the timeout runs out.

use std::thread::sleep;
use std::time::{Duration, Instant};

use redislab_harness::backend::render;
use redislab_harness::jobs::on_threads;
use redislab_harness::{Cell, Kind, Kv, Recorder, Report};

const PUSH_AFTER: Duration = Duration::from_millis(200);

pub fn declare(r: &mut Report) {
    r.row(
        "bzpop-reply",
        "BZPOPMIN queue 5; another client ZADDs job:late 200 ms later: reply",
        Kind::Exact,
        None,
    );
    r.row(
        "bzpop-waited",
        "… it blocked until the push (100 ms ≤ wait < 5 s)",
        Kind::Exact,
        None,
    );
    // The wait is the lab's own 200 ms before the push, not the machine's speed.
    r.row("bzpop-ms", "… waited (ms)", Kind::Measured, None)
        .band(1.5);
    r.row(
        "bzpop-nil",
        "BZPOPMIN empty 0.5 on an empty queue: reply",
        Kind::Exact,
        Some("(nil)"),
    );
    r.row(
        "bzpop-timeout",
        "… returned when the 0.5 s timeout ran out (0.5 s ≤ wait < 1.5 s)",
        Kind::Exact,
        None,
    );
    // The server's 0.5 s timeout (plus its timer granularity).
    r.row("bzpop-timeout-ms", "… waited (ms)", Kind::Measured, None)
        .band(1.5);
}

/// Sends a blocking pop on its own connection; returns the rendered reply (keys
/// without the lab's prefix) and how long it took.
fn blocking_pop(
    kv: &Kv,
    mut conn: redis::Connection,
    key: &str,
    timeout: &str,
) -> Result<(String, Duration), String> {
    let start = Instant::now();
    let reply: redis::Value = redis::cmd("BZPOPMIN")
        .arg(key)
        .arg(timeout)
        .query(&mut conn)
        .map_err(|e| e.to_string())?;
    let text = render(&reply).replace(&kv.key(""), "");
    Ok((text, start.elapsed()))
}

pub fn bzpopmin(kv: &mut Kv, rec: &mut Recorder) -> Result<(), String> {
    let q = kv.key("queue");
    let conns = vec![kv.new_connection()?, kv.new_connection()?];
    let shared: &Kv = kv;
    let results = on_threads(conns, |i, mut conn| match i {
        0 => blocking_pop(shared, conn, &q, "5").map(Some),
        _ => {
            sleep(PUSH_AFTER);
            redis::cmd("ZADD")
                .arg(&q)
                .arg(1)
                .arg("job:late")
                .query::<i64>(&mut conn)
                .map_err(|e| e.to_string())?;
            Ok(None)
        }
    })?;
    let (reply, waited) = results.into_iter().flatten().next().expect("the popper");
    rec.put("bzpop-reply", reply);
    rec.put(
        "bzpop-waited",
        (waited >= PUSH_AFTER / 2 && waited < Duration::from_secs(5)).to_string(),
    );
    rec.put(
        "bzpop-ms",
        Cell::count(waited.as_millis() as u64, "ms").with_text(waited.as_millis().to_string()),
    );

    let (reply, waited) = blocking_pop(kv, kv.new_connection()?, &kv.key("empty"), "0.5")?;
    rec.put("bzpop-nil", reply);
    rec.put(
        "bzpop-timeout",
        (waited >= Duration::from_millis(500) && waited < Duration::from_millis(1500)).to_string(),
    );
    rec.put(
        "bzpop-timeout-ms",
        Cell::count(waited.as_millis() as u64, "ms").with_text(waited.as_millis().to_string()),
    );
    Ok(())
}
