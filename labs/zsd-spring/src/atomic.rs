//! `incrementScore` is ZINCRBY, one atomic command: N clients adding to one member
//! at once lose nothing. The read-add-write loop the article warns against
//! (ZSCORE, add in the client, ZADD) loses every update another client wrote in
//! between its read and its write.

use std::sync::Barrier;

use redis::Commands;
use redislab_harness::backend::error_text;
use redislab_harness::{Cell, Kv, Recorder, Report};

pub const CLIENTS: usize = 20;
pub const UPDATES: usize = 200;

pub fn declare(r: &mut Report) {
    let total = (CLIENTS * UPDATES).to_string();
    r.exact(
        "atomic-total",
        &format!("{CLIENTS} clients × {UPDATES} ZINCRBY lb 1 alice: final score"),
        &total,
    );
    r.exact(
        "naive-applied",
        &format!("{CLIENTS} clients × {UPDATES} ZSCORE, +1, ZADD: every write acknowledged"),
        "yes",
    );
    // At least a tenth lost: the loop's read and write are two round trips apart
    // while 19 other clients write; all but one lost would be every write racing.
    r.random(
        "naive-lost",
        "read-add-write: updates lost (total − final score)",
        None,
    )
    .bounds(
        (CLIENTS * UPDATES / 10) as f64,
        (CLIENTS * UPDATES - 1) as f64,
    );
}

/// Runs `CLIENTS` threads, released together, each doing `UPDATES` of `update`.
fn race(
    kv: &Kv,
    update: impl Fn(&mut redis::Connection) -> Result<bool, String> + Sync,
) -> Result<usize, String> {
    let mut conns = (0..CLIENTS)
        .map(|_| kv.new_connection())
        .collect::<Result<Vec<_>, _>>()?;
    let start = Barrier::new(CLIENTS);
    let acked: Result<Vec<usize>, String> = std::thread::scope(|s| {
        let handles: Vec<_> = conns
            .iter_mut()
            .map(|conn| {
                let (start, update) = (&start, &update);
                s.spawn(move || {
                    start.wait();
                    let mut acked = 0;
                    for _ in 0..UPDATES {
                        acked += usize::from(update(conn)?);
                    }
                    Ok(acked)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err("a client panicked".into())))
            .collect()
    });
    Ok(acked?.into_iter().sum())
}

pub fn run(kv: &mut Kv, rec: &mut Recorder) -> Result<(), String> {
    let key = kv.key("lb:atomic");
    race(kv, |c| {
        let _: f64 = c.zincr(&key, "alice", 1).map_err(|e| error_text(&e))?;
        Ok(true)
    })?;
    rec.put("atomic-total", kv.reply(&["ZSCORE", &key, "alice"]));

    let key = kv.key("lb:naive");
    let acked = race(kv, |c| {
        let old: Option<f64> = c.zscore(&key, "alice").map_err(|e| error_text(&e))?;
        let _: i64 = c
            .zadd(&key, "alice", old.unwrap_or(0.0) + 1.0)
            .map_err(|e| error_text(&e))?;
        Ok(true)
    })?;
    let total = CLIENTS * UPDATES;
    rec.put("naive-applied", if acked == total { "yes" } else { "no" });
    let final_score: f64 = kv
        .reply(&["ZSCORE", &key, "alice"])
        .parse()
        .map_err(|_| format!("{}: no score for alice", kv.name))?;
    let lost = total as f64 - final_score;
    rec.put(
        "naive-lost",
        Cell::num(lost, "updates").with_text(format!(
            "{} of {} (final score {})",
            lost, total, final_score
        )),
    );
    Ok(())
}
