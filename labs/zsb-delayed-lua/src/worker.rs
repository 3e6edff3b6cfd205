//! The worker process: the lab binary started again as `lab-zsb-delayed-lua
//! --worker …`, so the lab can SIGKILL it in the middle of a job. It prints
//! `start <job>` and `done <job>` lines on stdout for the parent to count.

use std::process::ExitCode;
use std::thread::sleep;
use std::time::Duration;

use redis::Connection;
use redislab_harness::jobs::now_ms;

/// The article's script (section 4.2), unchanged: pop at most one due job.
pub const POP_DUE: &str =
    "local jobs = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, 1)
if #jobs == 0 then return false end
redis.call('ZREM', KEYS[1], jobs[1])
return jobs[1]
";

/// At-least-once: the popped job moves to the processing zset, scored by the
/// deadline (ARGV[2]) by which the worker must acknowledge it.
pub const POP_TO_PROCESSING: &str =
    "local jobs = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, 1)
if #jobs == 0 then return false end
redis.call('ZREM', KEYS[1], jobs[1])
redis.call('ZADD', KEYS[2], ARGV[2], jobs[1])
return jobs[1]
";

/// The reaper: jobs whose deadline passed go back to the queue, due now.
pub const REAP: &str = "local jobs = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
for _, job in ipairs(jobs) do
  redis.call('ZREM', KEYS[1], job)
  redis.call('ZADD', KEYS[2], ARGV[1], job)
end
return #jobs
";

/// What a worker process is told on its command line.
#[derive(Clone)]
pub struct Job {
    pub url: String,
    /// `plain` (article's pop) or `lease` (processing zset + deadline).
    pub design: String,
    pub queue: String,
    pub processing: String,
    pub work_ms: u64,
    pub lease_ms: i64,
    /// The victim's crash point: after printing its `hold_at`-th `start` line the
    /// worker stops mid-job and waits (reading its stdin) for the parent's
    /// SIGKILL, so the kill always lands inside that job whatever the machine's
    /// load. 0: never (the other workers).
    pub hold_at: usize,
}

impl Job {
    pub fn args(&self) -> Vec<String> {
        vec![
            "--worker".into(),
            self.url.clone(),
            self.design.clone(),
            self.queue.clone(),
            self.processing.clone(),
            self.work_ms.to_string(),
            self.lease_ms.to_string(),
            self.hold_at.to_string(),
        ]
    }

    fn parse(args: &[String]) -> Option<Job> {
        match args {
            [url, design, queue, processing, work, lease, hold] => Some(Job {
                url: url.clone(),
                design: design.clone(),
                queue: queue.clone(),
                processing: processing.clone(),
                work_ms: work.parse().ok()?,
                lease_ms: lease.parse().ok()?,
                hold_at: hold.parse().ok()?,
            }),
            _ => None,
        }
    }
}

fn q<T: redis::FromRedisValue>(cmd: &mut redis::Cmd, conn: &mut Connection) -> Result<T, String> {
    cmd.query(conn).map_err(|e| e.to_string())
}

fn pop(job: &Job, conn: &mut Connection) -> Result<Option<String>, String> {
    let now = now_ms();
    if job.design == "plain" {
        return q(
            redis::cmd("EVAL")
                .arg(POP_DUE)
                .arg(1)
                .arg(&job.queue)
                .arg(now),
            conn,
        );
    }
    let mut cmd = redis::cmd("EVAL");
    cmd.arg(POP_TO_PROCESSING)
        .arg(2)
        .arg(&job.queue)
        .arg(&job.processing)
        .arg(now)
        .arg(now + job.lease_ms);
    q(&mut cmd, conn)
}

/// Whether a lease worker should wait for jobs that may come back from the reaper.
fn anything_left(job: &Job, conn: &mut Connection) -> Result<bool, String> {
    let queued: i64 = q(redis::cmd("ZCARD").arg(&job.queue), conn)?;
    let running: i64 = q(redis::cmd("ZCARD").arg(&job.processing), conn)?;
    Ok(queued + running > 0)
}

fn work(job: &Job) -> Result<(), String> {
    let mut conn = redis::Client::open(job.url.as_str())
        .and_then(|c| c.get_connection())
        .map_err(|e| e.to_string())?;
    let mut starts = 0;
    loop {
        let Some(id) = pop(job, &mut conn)? else {
            if job.design == "lease" && anything_left(job, &mut conn)? {
                sleep(Duration::from_millis(20));
                continue;
            }
            return Ok(());
        };
        if !tell(&format!("start {id}")) {
            return Ok(());
        }
        starts += 1;
        if starts == job.hold_at {
            // Mid-job until killed; stdin's end (the parent gone) ends the wait.
            let _ = std::io::stdin().read_line(&mut String::new());
            return Err(format!("{id}: the lab did not kill this worker mid-job"));
        }
        sleep(Duration::from_millis(job.work_ms));
        if !tell(&format!("done {id}")) {
            return Ok(());
        }
        if job.design == "lease" {
            let _: i64 = q(redis::cmd("ZREM").arg(&job.processing).arg(&id), &mut conn)?;
        }
    }
}

/// Tells the lab one line of progress on stdout; false once the lab no
/// longer reads it. That happens when the lab is interrupted: it stops
/// reading before it has killed every worker, and a worker that wrote with
/// `println!` then panicked on the broken pipe (seen in the interrupt tests,
/// where a panic message is a failure). Such a worker just stops.
fn tell(line: &str) -> bool {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}").and_then(|()| out.flush()).is_ok()
}

/// `main` of a worker process; `args` follow `--worker`.
pub fn main(args: &[String]) -> ExitCode {
    let Some(job) = Job::parse(args) else {
        eprintln!("worker: bad arguments {args:?}");
        return ExitCode::from(2);
    };
    match work(&job) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("worker: {e}");
            ExitCode::FAILURE
        }
    }
}
