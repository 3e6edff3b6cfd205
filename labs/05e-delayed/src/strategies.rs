//! The article's four ways for 10 workers to take due jobs from one zset, and the
//! database's way.

use std::thread::sleep;
use std::time::Duration;

use redis::Connection;
use redislab_harness::jobs::{job_name, now_ms, Ledger};

/// How long one job "runs".
pub const WORK: Duration = Duration::from_micros(300);
/// How many due jobs one ZRANGEBYSCORE (or one script call) takes.
const BATCH: usize = 10;

#[derive(Clone, Copy, PartialEq)]
pub enum Strategy {
    Naive,
    ZremClaim,
    Zpopmin,
    Lua,
}

/// ZRANGEBYSCORE + ZREM of what it found, in one script (Laravel's migrate shape).
const TAKE_DUE: &str =
    "local jobs = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[2])
if #jobs > 0 then redis.call('ZREM', KEYS[1], unpack(jobs)) end
return jobs";

fn work(ledger: &Ledger, job: &str) -> Result<(), String> {
    ledger.run(job)?;
    sleep(WORK);
    Ok(())
}

fn q<T: redis::FromRedisValue>(cmd: &mut redis::Cmd, conn: &mut Connection) -> Result<T, String> {
    cmd.query(conn).map_err(|e| e.to_string())
}

fn due_batch(conn: &mut Connection, key: &str) -> Result<Vec<String>, String> {
    let mut cmd = redis::cmd("ZRANGEBYSCORE");
    cmd.arg(key)
        .arg("-inf")
        .arg(now_ms())
        .arg("LIMIT")
        .arg(0)
        .arg(BATCH);
    q(&mut cmd, conn)
}

/// One worker: takes jobs the strategy's way until it finds none.
pub fn worker(
    strategy: Strategy,
    mut conn: Connection,
    key: &str,
    ledger: &Ledger,
) -> Result<(), String> {
    loop {
        let jobs = match strategy {
            Strategy::Naive | Strategy::ZremClaim => due_batch(&mut conn, key)?,
            Strategy::Zpopmin => {
                let popped: Vec<String> = q(redis::cmd("ZPOPMIN").arg(key).arg(1), &mut conn)?;
                popped.into_iter().take(1).collect()
            }
            Strategy::Lua => {
                let mut cmd = redis::cmd("EVAL");
                cmd.arg(TAKE_DUE).arg(1).arg(key).arg(now_ms()).arg(BATCH);
                q(&mut cmd, &mut conn)?
            }
        };
        if jobs.is_empty() {
            return Ok(());
        }
        for job in &jobs {
            match strategy {
                Strategy::Naive => {
                    work(ledger, job)?;
                    let _: i64 = q(redis::cmd("ZREM").arg(key).arg(job), &mut conn)?;
                }
                Strategy::ZremClaim => {
                    let removed: i64 = q(redis::cmd("ZREM").arg(key).arg(job), &mut conn)?;
                    if removed == 1 {
                        work(ledger, job)?;
                    }
                }
                Strategy::Zpopmin | Strategy::Lua => work(ledger, job)?,
            }
        }
    }
}

/// The PostgreSQL worker: claim one due row with `FOR UPDATE SKIP LOCKED`, run it,
/// delete it, commit.
pub fn pg_worker(mut client: postgres::Client, ledger: &Ledger) -> Result<(), String> {
    let e = |e: postgres::Error| redislab_harness::backend::pg_error_text(&e);
    loop {
        let mut tx = client.transaction().map_err(e)?;
        let row = tx
            .query_opt(
                "SELECT id FROM jobs WHERE run_at <= $1 ORDER BY run_at LIMIT 1 FOR UPDATE SKIP LOCKED",
                &[&now_ms()],
            )
            .map_err(e)?;
        let Some(row) = row else {
            tx.commit().map_err(e)?;
            return Ok(());
        };
        let id: i32 = row.get(0);
        work(ledger, &job_name(id as usize))?;
        tx.execute("DELETE FROM jobs WHERE id = $1", &[&id])
            .map_err(e)?;
        tx.commit().map_err(e)?;
    }
}
