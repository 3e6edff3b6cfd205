//! One load run: `clients` threads, each on its own connection, calling the
//! rate-limit hit for a fixed time, one call at a time or in pipelines; every call's
//! latency goes into an HDR histogram, every applied hit is counted.

use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use redis::Value;
use redislab_harness::backend::error_text;

/// How a hit reaches the server.
#[derive(Clone, Debug)]
pub enum Path {
    /// `INCREX key BYINT 1 UBOUND limit EX window ENX` (Redis 8.8; the core).
    Increx,
    /// `EVALSHA sha 1 key limit window`: 02i's fallback script.
    Script { sha: String },
}

/// The rate limit: high enough that every hit is applied (both paths then do
/// the full increment, and the sum of the counters must equal the hits sent).
pub const LIMIT: &str = "1000000000";
pub const WINDOW_SECONDS: &str = "60";
/// Keys the hits spread over (users of the limiter), shared by every client.
pub const KEYS: u64 = 1_000;

/// What one run measured.
pub struct Outcome {
    /// Hits sent and answered.
    pub hits: u64,
    /// Hits the server said it applied (INCREX's increment, the script's 1).
    pub applied: u64,
    pub elapsed: Duration,
    /// Latency of each call (a pipeline counts as one call for all its hits), µs.
    pub latency: Histogram<u64>,
}

impl Outcome {
    /// Adds another slice of the same path's load.
    pub fn absorb(&mut self, other: Outcome) -> Result<(), String> {
        self.hits += other.hits;
        self.applied += other.applied;
        self.elapsed += other.elapsed;
        self.latency.add(&other.latency).map_err(|e| e.to_string())
    }

    pub fn per_second(&self) -> f64 {
        self.hits as f64 / self.elapsed.as_secs_f64()
    }
}

/// One client's hits sent, hits applied, and call latencies.
type ClientResult = (u64, u64, Histogram<u64>);

fn command(path: &Path, key: &str) -> redis::Cmd {
    match path {
        Path::Increx => {
            let mut c = redis::cmd("INCREX");
            c.arg(key).arg("BYINT").arg(1).arg("UBOUND").arg(LIMIT);
            c.arg("EX").arg(WINDOW_SECONDS).arg("ENX");
            c
        }
        Path::Script { sha } => {
            let mut c = redis::cmd("EVALSHA");
            c.arg(sha).arg(1).arg(key).arg(LIMIT).arg(WINDOW_SECONDS);
            c
        }
    }
}

/// 1 if the reply says the hit was applied, 0 if refused.
fn applied(path: &Path, v: &Value) -> Result<u64, String> {
    match (path, v) {
        (Path::Increx, Value::Array(items)) if items.len() == 2 => match items[1] {
            Value::Int(n) => Ok(n as u64),
            _ => Err(format!("INCREX increment {:?}", items[1])),
        },
        (Path::Script { .. }, Value::Int(n)) => Ok(*n as u64),
        (_, other) => Err(format!("unexpected reply {other:?}")),
    }
}

/// Runs `conns.len()` clients for `duration`, `pipeline` hits per call (1: one
/// command per round trip). Keys are `key_prefix` + a user number.
pub fn run(
    conns: &mut [redis::Connection],
    path: &Path,
    key_prefix: &str,
    pipeline: usize,
    duration: Duration,
    seed: u64,
) -> Result<Outcome, String> {
    let started = Instant::now();
    let deadline = started + duration;
    let results: Vec<Result<ClientResult, String>> = std::thread::scope(|s| {
        let handles: Vec<_> = conns
            .iter_mut()
            .enumerate()
            .map(|(i, conn)| {
                s.spawn(move || {
                    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ (i as u64 + 1));
                    let mut hist =
                        Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).expect("valid bounds");
                    let (mut hits, mut applied_hits) = (0u64, 0u64);
                    while Instant::now() < deadline {
                        let mut pipe = redis::pipe();
                        for _ in 0..pipeline {
                            let key = format!("{key_prefix}{}", rng.gen_range(0..KEYS));
                            pipe.add_command(command(path, &key));
                        }
                        let t = Instant::now();
                        let replies: Vec<Value> = pipe.query(conn).map_err(|e| error_text(&e))?;
                        let us = t.elapsed().as_micros() as u64;
                        hist.saturating_record(us.max(1));
                        for r in &replies {
                            applied_hits += applied(path, r)?;
                        }
                        hits += replies.len() as u64;
                    }
                    Ok((hits, applied_hits, hist))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err("a client panicked".into())))
            .collect()
    });
    let elapsed = started.elapsed();
    let mut latency = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).expect("valid bounds");
    let (mut hits, mut applied_hits) = (0, 0);
    for r in results {
        let (h, a, hist) = r?;
        hits += h;
        applied_hits += a;
        latency.add(&hist).map_err(|e| e.to_string())?;
    }
    Ok(Outcome {
        hits,
        applied: applied_hits,
        elapsed,
        latency,
    })
}
