//! One failover experiment: due jobs queued on the primary, ten workers taking
//! them, the primary SIGKILLed once a share of the jobs has run, and the counts
//! once the workers have emptied the queue on the new primary.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use redislab_harness::jobs::{job_name, now_ms, Ledger};
use redislab_harness::progress::Phase;

use crate::locate::{connect, Locator};
use crate::scheduler::{reap, worker, Config, Shared, Strategy, GIVE_UP};

pub const JOBS: usize = 2_000;
pub const WORKERS: usize = 10;
/// The primary is killed once this many jobs have run.
pub const KILL_AFTER: u64 = 600;
const REAP_EVERY: Duration = Duration::from_millis(100);

/// The topology under test, as the scenario needs it.
pub trait Failover {
    fn locator(&self) -> Locator;
    /// Crashes the primary (of the queue's slot); returns when it died.
    fn kill(&mut self) -> Result<Instant, String>;
    /// True once the heir calls itself a primary.
    fn promoted(&self) -> bool;
    /// What happens to the crashed server once the heir took over: called
    /// after the promotion until it returns true.
    fn recover(&mut self) -> Result<bool, String>;
}

/// What one scenario came to.
pub struct Outcome {
    pub runs: u64,
    pub twice: u64,
    pub lost: u64,
    /// Kill → first write answered by the new primary.
    pub outage: Duration,
    /// Kill → the heir says `master`.
    pub promotion: Option<Duration>,
    pub unanswered: u64,
    pub unconfirmed: u64,
    pub reaped: u64,
}

fn load(cfg: &Config) -> Result<Ledger, String> {
    let now = now_ms();
    let due: Vec<i64> = (0..JOBS).map(|i| now - 60_000 + i as i64).collect();
    let mut conn = connect(cfg.locator.primary()?)?;
    let mut p = redis::pipe();
    p.cmd("DEL").arg(&cfg.queue).arg(&cfg.processing).ignore();
    for (i, at) in due.iter().enumerate() {
        p.cmd("ZADD")
            .arg(&cfg.queue)
            .arg(at)
            .arg(job_name(i))
            .ignore();
    }
    p.query::<()>(&mut conn).map_err(|e| e.to_string())?;
    // The replica must hold the queue before anything is claimed.
    let acked: i64 = redis::cmd("WAIT")
        .arg(1)
        .arg(5000)
        .query(&mut conn)
        .map_err(|e| e.to_string())?;
    if acked < 1 {
        return Err("the replica did not acknowledge the queue".into());
    }
    Ok(Ledger::new(due))
}

pub fn run(
    topology: &mut dyn Failover,
    label: &str,
    strategy: Strategy,
    wait: bool,
    queue: String,
    processing: String,
) -> Result<Outcome, String> {
    let cfg = Config {
        strategy,
        wait,
        queue,
        processing,
        locator: topology.locator(),
    };
    let shared = Shared::new(load(&cfg)?);
    let phase = Phase::new(
        format!("{label}: {JOBS} jobs, {WORKERS} workers, primary killed after {KILL_AFTER}"),
        Some(JOBS as u64),
    );
    let mut promotion = None;
    let start = Instant::now();
    std::thread::scope(|s| -> Result<(), String> {
        let handles: Vec<_> = (0..WORKERS)
            .map(|_| s.spawn(|| worker(&cfg, &shared)))
            .collect();
        let mut killed: Option<Instant> = None;
        let mut reaper = None;
        let mut last_reap = Instant::now();
        let mut shown = 0;
        let mut recovered = false;
        while !handles.iter().all(|h| h.is_finished()) {
            let runs = shared.ledger.counts().runs;
            phase.inc(runs.saturating_sub(shown));
            shown = shown.max(runs);
            if killed.is_none() && runs >= KILL_AFTER {
                let at = topology.kill()?;
                shared.killed(at);
                killed = Some(at);
            }
            if let (Some(at), None) = (killed, promotion) {
                if topology.promoted() {
                    promotion = Some(at.elapsed());
                }
            }
            if promotion.is_some() && !recovered {
                recovered = topology.recover()?;
            }
            if strategy == Strategy::Lease && last_reap.elapsed() >= REAP_EVERY {
                if let Some(n) = reap(&cfg, &mut reaper) {
                    shared.reaped.fetch_add(n as u64, Ordering::Relaxed);
                }
                last_reap = Instant::now();
            }
            if start.elapsed() > GIVE_UP + Duration::from_secs(5) {
                return Err(format!("{label}: the workers did not finish"));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        for h in handles {
            h.join().map_err(|_| "a worker panicked".to_string())??;
        }
        if killed.is_none() {
            return Err(format!("{label}: the workers finished before the kill"));
        }
        Ok(())
    })?;
    let counts = shared.ledger.counts();
    Ok(Outcome {
        runs: counts.runs,
        twice: counts.twice,
        lost: counts.missed,
        outage: shared
            .outage()
            .ok_or_else(|| format!("{label}: no write was answered after the kill"))?,
        promotion,
        unanswered: shared.claims_unanswered.load(Ordering::Relaxed),
        unconfirmed: shared.unconfirmed.load(Ordering::Relaxed),
        reaped: shared.reaped.load(Ordering::Relaxed),
    })
}
