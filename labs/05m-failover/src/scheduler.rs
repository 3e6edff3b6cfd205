//! The delayed-job scheduler of 05e/zsb, written to survive a failover: ten
//! workers claim due jobs from one zset, run them, and whenever a command fails
//! they find the primary again ([`Locator`]) and carry on.
//!
//! Three ways to claim, as in the earlier labs:
//!
//! * **ZPOPMIN** — `ZPOPMIN queue 1` (every job here is due, so it takes no job
//!   early);
//! * **pop-due script** — article 04 §4.2's script, ZRANGEBYSCORE + ZREM of one
//!   due job in one step;
//! * **processing zset + reaper** — the script moves the job to a processing
//!   zset scored by a deadline, the worker removes it there after running it,
//!   and a reaper (the lab's main thread) puts jobs whose deadline passed back.
//!
//! Optionally each claim is followed by `WAIT 1 100`: the worker runs the job
//! only once the replica has acknowledged the claim; a claim WAIT does not
//! confirm (0 replicas, or the connection failed) is not run by this worker.
//!
//! What the worker never does: retry a claim whose reply it did not get. It
//! cannot know whether the primary executed it; that is exactly the doubt a
//! failover leaves.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::thread::sleep;
use std::time::{Duration, Instant};

use redis::Connection;
use redislab_harness::jobs::{now_ms, Ledger};

use crate::locate::{connect, Locator};

/// How long one job "runs".
pub const WORK: Duration = Duration::from_millis(1);
/// A worker's pause before it looks for the primary again.
const RETRY: Duration = Duration::from_millis(20);
/// The processing zset's lease: longer than a failover, so a worker that
/// survives always acknowledges before the reaper would hand its job out again.
pub const LEASE_MS: i64 = 5_000;
/// A scenario that has not finished by then failed.
pub const GIVE_UP: Duration = Duration::from_secs(60);

#[derive(Clone, Copy, PartialEq, Debug)]
pub enum Strategy {
    Zpopmin,
    Script,
    Lease,
}

/// Article 04 §4.2's pop-due script, unchanged.
const POP_DUE: &str =
    "local jobs = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, 1)
if #jobs == 0 then return false end
redis.call('ZREM', KEYS[1], jobs[1])
return jobs[1]
";

/// The same, moving the job to the processing zset with its deadline.
const POP_TO_PROCESSING: &str =
    "local jobs = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, 1)
if #jobs == 0 then return false end
redis.call('ZREM', KEYS[1], jobs[1])
redis.call('ZADD', KEYS[2], ARGV[2], jobs[1])
return jobs[1]
";

/// Jobs whose deadline passed go back to the queue, due now.
const REAP: &str = "local jobs = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
for _, job in ipairs(jobs) do
  redis.call('ZREM', KEYS[1], job)
  redis.call('ZADD', KEYS[2], ARGV[1], job)
end
return #jobs
";

/// What every worker is told.
pub struct Config {
    pub strategy: Strategy,
    pub wait: bool,
    pub queue: String,
    pub processing: String,
    pub locator: Locator,
}

/// What the workers and the main thread share.
pub struct Shared {
    pub ledger: Ledger,
    /// When the primary was killed.
    pub killed_at: Mutex<Option<Instant>>,
    /// The first claim answered over a connection opened after the kill.
    pub first_write_after_kill: Mutex<Option<Instant>>,
    /// Claims sent whose reply never came (the connection died under them).
    pub claims_unanswered: AtomicU64,
    /// Claims WAIT did not confirm (0 replicas or a failed WAIT): not run.
    pub unconfirmed: AtomicU64,
    /// Jobs the reaper put back.
    pub reaped: AtomicU64,
}

impl Shared {
    pub fn new(ledger: Ledger) -> Shared {
        Shared {
            ledger,
            killed_at: Mutex::new(None),
            first_write_after_kill: Mutex::new(None),
            claims_unanswered: AtomicU64::new(0),
            unconfirmed: AtomicU64::new(0),
            reaped: AtomicU64::new(0),
        }
    }

    fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
        m.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn killed(&self, at: Instant) {
        *Self::lock(&self.killed_at) = Some(at);
    }

    /// A write was answered on a connection opened at `opened`: once the
    /// primary is dead, the first such answer on a connection opened after the
    /// kill ends the time without a writable primary. (A reply the dead primary
    /// sent before it died may still be read after the kill: it does not count.)
    fn answered(&self, opened: Instant) {
        let Some(killed) = *Self::lock(&self.killed_at) else {
            return;
        };
        if opened > killed {
            let mut first = Self::lock(&self.first_write_after_kill);
            if first.is_none() {
                *first = Some(Instant::now());
            }
        }
    }

    /// Time from the kill to the first write answered by the new primary.
    pub fn outage(&self) -> Option<Duration> {
        let killed = (*Self::lock(&self.killed_at))?;
        let first = (*Self::lock(&self.first_write_after_kill))?;
        Some(first.duration_since(killed))
    }
}

fn q<T: redis::FromRedisValue>(cmd: &redis::Cmd, conn: &mut Connection) -> Result<T, String> {
    cmd.query(conn).map_err(|e| e.to_string())
}

/// A connection to the primary as the topology names it now, checked with ROLE.
fn open(cfg: &Config) -> Result<(Connection, Instant), String> {
    let opened = Instant::now();
    let mut conn = connect(cfg.locator.primary()?)?;
    let role: Vec<redis::Value> = q(&redis::cmd("ROLE"), &mut conn)?;
    match role.first() {
        Some(redis::Value::BulkString(r)) if r == b"master" => Ok((conn, opened)),
        _ => Err("not a primary (yet)".into()),
    }
}

fn claim(cfg: &Config, conn: &mut Connection) -> Result<Option<String>, String> {
    let now = now_ms();
    match cfg.strategy {
        Strategy::Zpopmin => {
            let popped: Vec<String> = q(redis::cmd("ZPOPMIN").arg(&cfg.queue).arg(1), conn)?;
            Ok(popped.into_iter().next())
        }
        Strategy::Script => q(
            redis::cmd("EVAL")
                .arg(POP_DUE)
                .arg(1)
                .arg(&cfg.queue)
                .arg(now),
            conn,
        ),
        Strategy::Lease => q(
            redis::cmd("EVAL")
                .arg(POP_TO_PROCESSING)
                .arg(2)
                .arg(&cfg.queue)
                .arg(&cfg.processing)
                .arg(now)
                .arg(now + LEASE_MS),
            conn,
        ),
    }
}

/// Jobs still queued or being processed (the lease design waits for them).
fn left(cfg: &Config, conn: &mut Connection) -> Result<i64, String> {
    let queued: i64 = q(redis::cmd("ZCARD").arg(&cfg.queue), conn)?;
    let running: i64 = q(redis::cmd("ZCARD").arg(&cfg.processing), conn)?;
    Ok(queued + running)
}

/// One worker: claims and runs jobs until the queue is empty on the primary.
pub fn worker(cfg: &Config, shared: &Shared) -> Result<(), String> {
    let give_up = Instant::now() + GIVE_UP;
    let mut conn: Option<(Connection, Instant)> = None;
    loop {
        if Instant::now() > give_up {
            return Err(format!("a worker was still busy after {GIVE_UP:?}"));
        }
        if conn.is_none() {
            match open(cfg) {
                Ok(c) => conn = Some(c),
                Err(_) => {
                    sleep(RETRY);
                    continue;
                }
            }
        }
        let (c, opened) = conn.as_mut().expect("connected above");
        let opened = *opened;
        let job = match claim(cfg, c) {
            Ok(Some(job)) => job,
            Ok(None) => {
                shared.answered(opened);
                if cfg.strategy != Strategy::Lease {
                    return Ok(());
                }
                // Jobs in processing may still come back from the reaper.
                match left(cfg, c) {
                    Ok(0) => return Ok(()),
                    Ok(_) => {}
                    Err(_) => conn = None,
                }
                sleep(RETRY);
                continue;
            }
            Err(_) => {
                shared.claims_unanswered.fetch_add(1, Ordering::Relaxed);
                conn = None;
                sleep(RETRY);
                continue;
            }
        };
        shared.answered(opened);
        if cfg.wait {
            let acked: Result<i64, String> = q(redis::cmd("WAIT").arg(1).arg(100), c);
            match acked {
                Ok(n) if n >= 1 => {}
                Ok(_) => {
                    shared.unconfirmed.fetch_add(1, Ordering::Relaxed);
                    continue;
                }
                Err(_) => {
                    shared.unconfirmed.fetch_add(1, Ordering::Relaxed);
                    conn = None;
                    continue;
                }
            }
        }
        shared.ledger.run(&job)?;
        sleep(WORK);
        if cfg.strategy == Strategy::Lease {
            acknowledge(cfg, &mut conn, &job, give_up)?;
        }
    }
}

/// Removes a finished job from the processing zset, on whatever is the primary
/// by then (ZREM is idempotent, so retrying it is safe).
fn acknowledge(
    cfg: &Config,
    conn: &mut Option<(Connection, Instant)>,
    job: &str,
    give_up: Instant,
) -> Result<(), String> {
    while Instant::now() < give_up {
        if conn.is_none() {
            *conn = open(cfg).ok();
        }
        if let Some((c, _)) = conn.as_mut() {
            let done: Result<i64, String> = q(redis::cmd("ZREM").arg(&cfg.processing).arg(job), c);
            if done.is_ok() {
                return Ok(());
            }
            *conn = None;
        }
        sleep(RETRY);
    }
    Err(format!("could not acknowledge {job} in {GIVE_UP:?}"))
}

/// One pass of the reaper on the current primary; `None` if it is unreachable.
pub fn reap(cfg: &Config, conn: &mut Option<Connection>) -> Option<i64> {
    if conn.is_none() {
        *conn = open(cfg).ok().map(|(c, _)| c);
    }
    let c = conn.as_mut()?;
    let cmd = redis::cmd("EVAL")
        .arg(REAP)
        .arg(2)
        .arg(&cfg.processing)
        .arg(&cfg.queue)
        .arg(now_ms())
        .clone();
    match q::<i64>(&cmd, c) {
        Ok(n) => Some(n),
        Err(_) => {
            *conn = None;
            None
        }
    }
}
