//! Book-keeping for the queue labs: which job ran how often, and whether it ran
//! before it was due; and a helper that runs closures on concurrent threads.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch (what the articles' `System.currentTimeMillis()`
/// gives).
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// `job:0042`: the member name of job 42.
pub fn job_name(i: usize) -> String {
    format!("job:{i:04}")
}

/// The index in a member name made by [`job_name`].
pub fn job_index(name: &str) -> Result<usize, String> {
    name.strip_prefix("job:")
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| format!("unexpected job {name:?}"))
}

/// The four counters of article 05, section 3.6.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counts {
    /// Every execution of every job.
    pub runs: u64,
    /// Jobs executed more than once.
    pub twice: u64,
    /// Executions that started before the job was due.
    pub early: u64,
    /// Jobs that were due when the workers stopped and never ran.
    pub missed: u64,
}

/// Each job's due time and how often it ran; shared by the workers.
pub struct Ledger {
    due: Vec<i64>,
    runs: Mutex<Vec<u32>>,
    early: AtomicU64,
}

impl Ledger {
    /// `due[i]` is when job `i` may run (epoch milliseconds).
    pub fn new(due: Vec<i64>) -> Ledger {
        let n = due.len();
        Ledger {
            due,
            runs: Mutex::new(vec![0; n]),
            early: AtomicU64::new(0),
        }
    }

    pub fn due(&self) -> &[i64] {
        &self.due
    }

    /// Records that a worker is running `job` now.
    pub fn run(&self, job: &str) -> Result<(), String> {
        let i = job_index(job)?;
        if i >= self.due.len() {
            return Err(format!("job {job} was never scheduled"));
        }
        if now_ms() < self.due[i] {
            self.early.fetch_add(1, Ordering::Relaxed);
        }
        self.runs.lock().unwrap()[i] += 1;
        Ok(())
    }

    /// The counters, with "missed" judged at the moment of the call.
    pub fn counts(&self) -> Counts {
        let now = now_ms();
        let runs = self.runs.lock().unwrap();
        Counts {
            runs: runs.iter().map(|&r| u64::from(r)).sum(),
            twice: runs.iter().filter(|&&r| r > 1).count() as u64,
            early: self.early.load(Ordering::Relaxed),
            missed: runs
                .iter()
                .zip(&self.due)
                .filter(|(&r, &due)| r == 0 && due <= now)
                .count() as u64,
        }
    }
}

/// Runs `worker(i, state)` for every state (e.g. its own connection) on its own
/// thread, all at once, and returns their results in order; the first error wins.
pub fn on_threads<S: Send, T: Send>(
    states: Vec<S>,
    worker: impl Fn(usize, S) -> Result<T, String> + Sync,
) -> Result<Vec<T>, String> {
    let worker = &worker;
    std::thread::scope(|s| {
        let handles: Vec<_> = states
            .into_iter()
            .enumerate()
            .map(|(i, state)| s.spawn(move || worker(i, state)))
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().map_err(|_| "a worker panicked".to_string())?)
            .collect()
    })
}
