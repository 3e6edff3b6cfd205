//! 02i's three counters under load from ten clients while the primary dies:
//! three rate-limit clients (02i's `hit()` script), four stock clients (its
//! `reserve()` script, until sold out) and three lock clients (SET NX PX, hold,
//! DELEX IFEQ — or, on a server without DELEX, the compare-and-delete script it
//! replaces). Every client keeps its own tally of what the server confirmed;
//! the lab compares it with what the new primary holds afterwards.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::Mutex;
use std::thread::sleep;
use std::time::{Duration, Instant};

use crate::client::{Client, Outcome};

/// 02i's fallback scripts (Redis 8.6.3 has no INCREX): a fixed-window hit, and
/// one unit of stock unless that would go below zero.
const HIT_SCRIPT: &str = r#"
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if current + 1 > tonumber(ARGV[1]) then return 0 end
redis.call('INCR', KEYS[1])
if redis.call('TTL', KEYS[1]) == -1 then redis.call('EXPIRE', KEYS[1], ARGV[2]) end
return 1
"#;
const RESERVE_SCRIPT: &str = r#"
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if current - 1 < 0 then return 0 end
redis.call('DECR', KEYS[1])
return -1
"#;

/// The lock release before DELEX: delete the key only if it still holds our token.
const RELEASE_SCRIPT: &str = r#"
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"#;

/// How the lock clients give the lock back.
#[derive(Clone, Copy, PartialEq)]
pub enum Release {
    /// DELEX key IFEQ token (Redis 8.4+), as 02i's helper does.
    Delex,
    /// EVAL of [`RELEASE_SCRIPT`], for a server that refuses DELEX.
    Script,
}

impl Release {
    fn command(self, token: &str) -> redis::Cmd {
        match self {
            Release::Delex => {
                let mut c = redis::cmd("DELEX");
                c.arg(LOCK_KEY).arg("IFEQ").arg(token);
                c
            }
            Release::Script => {
                let mut c = redis::cmd("EVAL");
                c.arg(RELEASE_SCRIPT).arg(1).arg(LOCK_KEY).arg(token);
                c
            }
        }
    }
}

pub const RATE_KEY: &str = "rl:api:u1";
pub const STOCK_KEY: &str = "stock:sku-42";
pub const LOCK_KEY: &str = "lock:order-7";
/// A limit no client reaches in the run: every hit should count.
pub const LIMIT: u32 = 1_000_000_000;
pub const WINDOW_S: u32 = 600;
pub const STOCK: u64 = 2_000;
pub const LOCK_TTL_MS: u64 = 2_000;
const HOLD: Duration = Duration::from_millis(10);
/// Each client paces itself, so the run spans the failover.
const PACE: Duration = Duration::from_millis(1);
pub const RATE_CLIENTS: usize = 3;
pub const STOCK_CLIENTS: usize = 4;
pub const LOCK_CLIENTS: usize = 3;

#[derive(Default)]
pub struct Counts {
    pub done: AtomicU64,
    pub unanswered: AtomicU64,
    pub unconfirmed: AtomicU64,
}

impl Counts {
    fn add<T>(&self, o: &Outcome<T>) {
        let c = match o {
            Outcome::Done(_) => &self.done,
            Outcome::Unanswered => &self.unanswered,
            Outcome::Unconfirmed => &self.unconfirmed,
        };
        c.fetch_add(1, Ordering::Relaxed);
    }
    pub fn get(&self) -> (u64, u64, u64) {
        (
            self.done.load(Ordering::Relaxed),
            self.unanswered.load(Ordering::Relaxed),
            self.unconfirmed.load(Ordering::Relaxed),
        )
    }
}

#[derive(Default)]
pub struct Tally {
    pub hits: Counts,
    pub sold: Counts,
    pub locks: Counts,
    /// Clients that believe they hold the lock right now.
    holders: AtomicI64,
    /// Acquisitions made while another client held the lock.
    pub held_twice: AtomicU64,
    pub stop: AtomicBool,
    killed_at: Mutex<Option<Instant>>,
    first_after: Mutex<Option<Instant>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Tally {
    pub fn killed(&self, at: Instant) {
        *lock(&self.killed_at) = Some(at);
    }

    /// A write answered over a connection opened after the kill ends the time
    /// without a writable primary (a reply the dead one sent does not count).
    fn answered<T>(&self, outcome: &Outcome<T>, opened: Instant) {
        if matches!(outcome, Outcome::Unanswered) {
            return;
        }
        if let Some(k) = *lock(&self.killed_at) {
            let mut first = lock(&self.first_after);
            if opened > k && first.is_none() {
                *first = Some(Instant::now());
            }
        }
    }

    pub fn outage(&self) -> Option<Duration> {
        Some((*lock(&self.first_after))?.duration_since((*lock(&self.killed_at))?))
    }

    pub fn first_write_after_kill(&self) -> Option<Instant> {
        *lock(&self.first_after)
    }
}

pub fn rate_client(mut c: Client, t: &Tally, give_up: Instant) -> Result<(), String> {
    let mut cmd = redis::cmd("EVAL");
    cmd.arg(HIT_SCRIPT)
        .arg(1)
        .arg(RATE_KEY)
        .arg(LIMIT)
        .arg(WINDOW_S);
    while !t.stop.load(Ordering::Relaxed) {
        let (o, opened) = c.write::<i64>(&cmd, give_up)?;
        if let Outcome::Done(passed) = o {
            if passed != 1 {
                return Err(format!("hit() was refused under a limit of {LIMIT}"));
            }
        }
        t.answered(&o, opened);
        t.hits.add(&o);
        sleep(PACE);
    }
    Ok(())
}

/// Reserves until the server says sold out.
pub fn stock_client(mut c: Client, t: &Tally, give_up: Instant) -> Result<(), String> {
    let mut cmd = redis::cmd("EVAL");
    cmd.arg(RESERVE_SCRIPT).arg(1).arg(STOCK_KEY);
    loop {
        let (o, opened) = c.write::<i64>(&cmd, give_up)?;
        t.answered(&o, opened);
        if let Outcome::Done(0) = o {
            return Ok(());
        }
        t.sold.add(&o);
        sleep(PACE);
    }
}

pub fn lock_client(
    mut c: Client,
    id: usize,
    how: Release,
    t: &Tally,
    give_up: Instant,
) -> Result<(), String> {
    let mut n = 0u64;
    while !t.stop.load(Ordering::Relaxed) {
        n += 1;
        let token = format!("client-{id}-{n}");
        let mut acquire = redis::cmd("SET");
        acquire
            .arg(LOCK_KEY)
            .arg(&token)
            .arg("NX")
            .arg("PX")
            .arg(LOCK_TTL_MS);
        let (o, opened) = c.write::<Option<String>>(&acquire, give_up)?;
        t.answered(&o, opened);
        let release = how.command(&token);
        match o {
            Outcome::Done(Some(_)) => {
                t.locks.add(&Outcome::Done(()));
                if t.holders.fetch_add(1, Ordering::SeqCst) > 0 {
                    t.held_twice.fetch_add(1, Ordering::Relaxed);
                }
                sleep(HOLD);
                t.holders.fetch_sub(1, Ordering::SeqCst);
                // The release may fail with the primary: the lock then lives
                // until its TTL, on the new primary too if it was replicated.
                let _ = c.write::<i64>(&release, give_up)?;
            }
            Outcome::Done(None) => sleep(PACE),
            Outcome::Unconfirmed => {
                // Not confirmed: not held. Give it back if it is there.
                t.locks.add(&o);
                let _ = c.write::<i64>(&release, give_up)?;
            }
            Outcome::Unanswered => t.locks.add(&o),
        }
    }
    Ok(())
}
