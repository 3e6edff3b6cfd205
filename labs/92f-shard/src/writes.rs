//! ZINCRBY throughput on one server: the article's sharded_increment, sent one at a
//! time, in pipelines, and from several connections at once.

use std::sync::Barrier;
use std::time::Instant;

use redis::Connection;
use redislab_harness::backend::error_text;
use redislab_harness::timing::thousands;
use redislab_harness::{Cell, Kv};

use crate::data::shard_of;

/// How many operations ran and how long they took, as a table cell: the rate,
/// with the count and the seconds as numbers too.
pub fn rate(ops: u64, secs: f64) -> Cell {
    let per_s = (ops as f64 / secs).round();
    Cell::num(per_s, "ops/s")
        .with("ops", ops as f64, "")
        .with("seconds", secs, "s")
        .with_text(format!(
            "{} ops/s ({} ops in {secs:.2} s)",
            thousands(per_s as u64),
            thousands(ops)
        ))
}

/// The i-th operation's user: spread over all users and shards.
fn user(i: u64, users: u64) -> u64 {
    1 + (i * 104_729) % users
}

fn zincrby(cmd: &mut redis::Pipeline, shards: &[String], u: u64) {
    cmd.cmd("ZINCRBY").arg(&shards[shard_of(u)]).arg(1).arg(u);
}

/// `ops` ZINCRBYs starting at operation `first`, in pipelines of `batch` (1 = each
/// command waits for its reply).
fn run(
    conn: &mut Connection,
    shards: &[String],
    users: u64,
    first: u64,
    ops: u64,
    batch: u64,
) -> Result<(), String> {
    let mut i = first;
    while i < first + ops {
        let end = (i + batch).min(first + ops);
        let mut pipe = redis::pipe();
        for j in i..end {
            zincrby(&mut pipe, shards, user(j, users));
            pipe.ignore();
        }
        pipe.query::<()>(conn)
            .map_err(|e| format!("ZINCRBY: {}", error_text(&e)))?;
        i = end;
    }
    Ok(())
}

/// One connection: ops/s over `ops` commands in pipelines of `batch`.
pub fn one_client(
    kv: &mut Kv,
    shards: &[String],
    users: u64,
    ops: u64,
    batch: u64,
) -> Result<Cell, String> {
    let start = Instant::now();
    run(kv.conn(), shards, users, 0, ops, batch)?;
    Ok(rate(ops, start.elapsed().as_secs_f64()))
}

/// `threads` connections, each sending `per_thread` unpipelined commands, started
/// together; ops/s over the wall time until the last one finishes.
pub fn parallel(
    kv: &Kv,
    shards: &[String],
    users: u64,
    threads: u64,
    per_thread: u64,
) -> Result<Cell, String> {
    let conns = (0..threads)
        .map(|_| kv.new_connection())
        .collect::<Result<Vec<_>, _>>()?;
    let barrier = Barrier::new(threads as usize + 1);
    let (start, results) = std::thread::scope(|s| {
        let handles: Vec<_> = conns
            .into_iter()
            .enumerate()
            .map(|(t, mut conn)| {
                let barrier = &barrier;
                s.spawn(move || {
                    barrier.wait();
                    run(
                        &mut conn,
                        shards,
                        users,
                        t as u64 * per_thread,
                        per_thread,
                        1,
                    )
                })
            })
            .collect();
        barrier.wait();
        let start = Instant::now();
        let results: Vec<_> = handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err("worker panicked".into())))
            .collect();
        (start, results)
    });
    let secs = start.elapsed().as_secs_f64();
    results.into_iter().collect::<Result<Vec<()>, _>>()?;
    Ok(rate(threads * per_thread, secs))
}
