//! At-least-once under a real crash: worker processes take jobs; one of them is
//! SIGKILLed in the middle of a job; the lab counts what was lost or done twice.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, RecvTimeoutError};
use std::time::{Duration, Instant};

use redislab_harness::jobs::{job_name, now_ms};
use redislab_harness::Kv;

use crate::worker::{Job, REAP};

pub const PROCESSES: usize = 4;
pub const JOBS: usize = 200;
const WORK_MS: u64 = 20;
const LEASE_MS: i64 = 1_000;
/// The victim is killed right after it announces this many job starts (it
/// holds that job until the kill: see [`spawn`]).
const KILL_AFTER_STARTS: usize = 3;
const GIVE_UP: Duration = Duration::from_secs(30);

/// What one design's run came to.
pub struct Outcome {
    pub killed_mid_job: bool,
    pub done: usize,
    pub lost: usize,
    pub twice: usize,
    pub redelivered: usize,
    pub reaped: i64,
}

/// Worker processes, killed and reaped when this is dropped (on every path).
struct Workers(Vec<Child>);

impl Drop for Workers {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Starts the workers; the first (the victim) stops mid-job at its
/// [`KILL_AFTER_STARTS`]-th job and waits there for the kill, on a stdin pipe
/// the parent keeps open (its end, if the parent dies first, lets it exit).
fn spawn(job: &Job) -> Result<Workers, String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut workers = Workers(Vec::new());
    for i in 0..PROCESSES {
        let args = Job {
            hold_at: if i == 0 { KILL_AFTER_STARTS } else { 0 },
            ..job.clone()
        }
        .args();
        let child = Command::new(&exe)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start a worker process: {e}"))?;
        workers.0.push(child);
    }
    Ok(workers)
}

fn reap(kv: &mut Kv, processing: &str, queue: &str) -> Result<i64, String> {
    let mut cmd = redis::cmd("EVAL");
    cmd.arg(REAP)
        .arg(2)
        .arg(processing)
        .arg(queue)
        .arg(now_ms());
    cmd.query(kv.conn()).map_err(|e| e.to_string())
}

/// Runs one design (`plain` or `lease`) with `JOBS` due jobs.
pub fn run(kv: &mut Kv, design: &str) -> Result<Outcome, String> {
    let job = Job {
        url: kv.url().to_string(),
        design: design.into(),
        queue: kv.key(&format!("{design}:queue")),
        processing: kv.key(&format!("{design}:processing")),
        work_ms: WORK_MS,
        lease_ms: LEASE_MS,
        hold_at: 0,
    };
    let mut p = redis::pipe();
    let t = now_ms() - 1_000;
    for i in 0..JOBS {
        p.cmd("ZADD")
            .arg(&job.queue)
            .arg(t + i as i64)
            .arg(job_name(i))
            .ignore();
    }
    p.query::<()>(kv.conn()).map_err(|e| e.to_string())?;

    let mut workers = spawn(&job)?;
    let (tx, rx) = channel();
    for (i, child) in workers.0.iter_mut().enumerate() {
        let out = child.stdout.take().expect("piped stdout");
        let tx = tx.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                if tx.send((i, line)).is_err() {
                    return;
                }
            }
        });
    }
    drop(tx);

    let mut started: HashMap<String, usize> = HashMap::new();
    let mut done: HashMap<String, usize> = HashMap::new();
    let (mut victim_starts, mut victim_job, mut victim_done) = (0, None, false);
    let mut reaped = 0;
    let begin = Instant::now();
    loop {
        if begin.elapsed() > GIVE_UP {
            return Err(format!("{design}: workers still busy after {GIVE_UP:?}"));
        }
        match rx.recv_timeout(Duration::from_millis(100)) {
            Ok((i, line)) => {
                let (what, id) = line.split_once(' ').unwrap_or((&line, ""));
                let seen = if what == "start" {
                    &mut started
                } else {
                    &mut done
                };
                *seen.entry(id.to_string()).or_default() += 1;
                if i == 0 && victim_job.is_none() && what == "start" {
                    victim_starts += 1;
                    if victim_starts == KILL_AFTER_STARTS {
                        workers.0[0].kill().map_err(|e| e.to_string())?;
                        victim_job = Some(id.to_string());
                    }
                } else if i == 0 && what == "done" && victim_job.as_deref() == Some(id) {
                    victim_done = true;
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
        if design == "lease" {
            reaped += reap(kv, &job.processing, &job.queue)?;
        }
    }
    for (i, child) in workers.0.iter_mut().enumerate().skip(1) {
        let status = child.wait().map_err(|e| e.to_string())?;
        if !status.success() {
            return Err(format!("{design}: worker {i} failed: {status}"));
        }
    }
    let all: Vec<String> = (0..JOBS).map(job_name).collect();
    let count = |m: &HashMap<String, usize>, f: fn(usize) -> bool| {
        all.iter().filter(|j| f(*m.get(*j).unwrap_or(&0))).count()
    };
    Ok(Outcome {
        killed_mid_job: victim_job.is_some() && !victim_done,
        done: count(&done, |n| n > 0),
        lost: count(&done, |n| n == 0),
        twice: count(&done, |n| n > 1),
        redelivered: count(&started, |n| n > 1),
        reaped,
    })
}
