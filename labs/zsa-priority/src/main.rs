//! zsa-priority — a priority queue in a zset: score = priority × 10^13 + millis.
//!
//! Article 04, section 4.1. The composite score keeps priority 0 ahead of 9 and
//! FIFO inside one priority, and stays far below 2^53 where doubles stop holding
//! every integer. ZPOPMIN hands each job to one worker only; BZPOPMIN waits for a
//! job or for its timeout.

mod blocking;

use std::process::ExitCode;
use std::thread::sleep;
use std::time::Duration;

use redislab_harness::jobs::{job_index, job_name, now_ms, on_threads};
use redislab_harness::{run, Kind, Kv, LabInfo, Recorder, Report};

const LAB: LabInfo = LabInfo {
    id: "zsa-priority",
    uses_pg: false,
};

/// 2026-01-01T00:00:00Z in epoch milliseconds: a fixed clock for the score rows.
const JAN_2026_MS: i64 = 1_767_225_600_000;
const TWO_53: i64 = 1 << 53;
const JOBS: usize = 10_000;
const WORKERS: usize = 10;

/// The article's `enqueue`: priority × 1e13 + millis, as a double.
fn score(priority: u32, millis: i64, scale: f64) -> f64 {
    f64::from(priority) * scale + millis as f64
}

fn declare(r: &mut Report) {
    r.row(
        "largest-score",
        "ZSCORE of priority 9 at 2026-01-01 00:00 UTC (article: ≈ 9.2×10^13, 2^53 = 9007199254740992)",
        Kind::Exact,
        None,
    );
    r.row(
        "below-2-53",
        "read back equal to 9×10^13 + millis and below 2^53",
        Kind::Exact,
        None,
    );
    r.row(
        "scale-16",
        "priority × 10^16 instead: b-job at t, a-job at t+1 ms (priority 9), ZRANGE",
        Kind::Exact,
        None,
    );
    r.exact(
        "article-test",
        "enqueue newsletter 5, password-reset 0; poll ×3 (ZPOPMIN)",
        "password-reset newsletter (empty)",
    );
    r.row(
        "fifo",
        "6 jobs of priorities 5 0 5 0 9 5, 2 ms apart; ZPOPMIN until empty",
        Kind::Exact,
        None,
    );
    r.row(
        "same-ms",
        "z-job then a-job in the same millisecond, same priority; ZPOPMIN ×2",
        Kind::Exact,
        None,
    );
    r.row(
        "pop-total",
        "10,000 jobs, 10 workers ZPOPMIN until empty: jobs handed out",
        Kind::Exact,
        Some("10000"),
    );
    r.exact("pop-twice", "… jobs handed to two workers", "0");
    r.row(
        "pop-lost",
        "… jobs never handed out",
        Kind::Exact,
        Some("0"),
    );
    blocking::declare(r);
}

fn zadd(kv: &mut Kv, key: &str, score: f64, member: &str) -> Result<(), String> {
    kv.cmd(&["ZADD", key, &score.to_string(), member]).map(drop)
}

/// ZPOPMIN until the queue is empty; `(empty)` marks the empty reply.
fn drain(kv: &mut Kv, key: &str, polls: Option<usize>) -> Result<String, String> {
    let mut out = Vec::new();
    for _ in 0..polls.unwrap_or(usize::MAX) {
        match kv.items(&[b"ZPOPMIN", key.as_bytes()])?.first() {
            Some(job) => out.push(job.clone()),
            None if polls.is_some() => out.push("(empty)".into()),
            None => break,
        }
    }
    Ok(out.join(" "))
}

fn scores(kv: &mut Kv, rec: &mut Recorder) -> Result<(), String> {
    let q = kv.key("queue:email-jobs");
    let s = score(9, JAN_2026_MS, 1e13);
    zadd(kv, &q, s, "late")?;
    let back = kv.reply(&["ZSCORE", &q, "late"]);
    let exact = back.parse::<i64>() == Ok(9 * 10_i64.pow(13) + JAN_2026_MS);
    rec.put("below-2-53", format!("{}", exact && s < TWO_53 as f64));
    rec.put("largest-score", back);
    kv.cmd(&["DEL", &q])?;

    zadd(kv, &q, score(9, JAN_2026_MS, 1e16), "b-job")?;
    zadd(kv, &q, score(9, JAN_2026_MS + 1, 1e16), "a-job")?;
    rec.put(
        "scale-16",
        kv.reply(&["ZRANGE", &q, "0", "-1", "WITHSCORES"]),
    );
    kv.cmd(&["DEL", &q])?;

    zadd(kv, &q, score(5, now_ms(), 1e13), "newsletter")?;
    zadd(kv, &q, score(0, now_ms(), 1e13), "password-reset")?;
    rec.put("article-test", drain(kv, &q, Some(3))?);

    let mix = [
        ("newsletter", 5),
        ("password-reset", 0),
        ("report", 5),
        ("invoice", 0),
        ("cleanup", 9),
        ("welcome", 5),
    ];
    for (job, priority) in mix {
        zadd(kv, &q, score(priority, now_ms(), 1e13), job)?;
        sleep(Duration::from_millis(2));
    }
    rec.put("fifo", drain(kv, &q, None)?);

    let t = now_ms();
    zadd(kv, &q, score(1, t, 1e13), "z-job")?;
    zadd(kv, &q, score(1, t, 1e13), "a-job")?;
    rec.put("same-ms", drain(kv, &q, Some(2))?);
    Ok(())
}

fn workers(kv: &mut Kv, rec: &mut Recorder) -> Result<(), String> {
    let q = kv.key("queue:workers");
    let mut p = redis::pipe();
    let t = now_ms();
    for i in 0..JOBS {
        p.cmd("ZADD")
            .arg(&q)
            .arg(score(1, t + i as i64, 1e13))
            .arg(job_name(i))
            .ignore();
    }
    p.query::<()>(kv.conn()).map_err(|e| e.to_string())?;
    let conns = (0..WORKERS)
        .map(|_| kv.new_connection())
        .collect::<Result<Vec<_>, _>>()?;
    let got = on_threads(conns, |_, mut conn| {
        let mut mine = Vec::new();
        loop {
            let popped: Vec<String> = redis::cmd("ZPOPMIN")
                .arg(&q)
                .query(&mut conn)
                .map_err(|e| e.to_string())?;
            match popped.first() {
                Some(job) => mine.push(job_index(job)?),
                None => return Ok(mine),
            }
        }
    })?;
    let mut handed = vec![0u32; JOBS];
    for i in got.into_iter().flatten() {
        handed[i] += 1;
    }
    let total: u32 = handed.iter().sum();
    rec.put("pop-total", total.to_string());
    rec.put(
        "pop-twice",
        handed.iter().filter(|&&n| n > 1).count().to_string(),
    );
    rec.put(
        "pop-lost",
        handed.iter().filter(|&&n| n == 0).count().to_string(),
    );
    Ok(())
}

fn main() -> ExitCode {
    run(LAB, |ctx| {
        declare(&mut ctx.report);
        ctx.each_kv(|kv, rec| {
            scores(kv, rec)?;
            workers(kv, rec)?;
            blocking::bzpopmin(kv, rec)
        })?;
        ctx.note("The article's enqueue: score = priority × 1e13 + System.currentTimeMillis(), priority 0..9. Its largest score (priority 9) is ≈ 9.2×10^13, 98× below 2^53, so every millisecond stays distinct; with × 10^16 the scores pass 2^53, neighbouring milliseconds round to one double, and the tie falls back to member order (a-job before b-job, against FIFO).");
        ctx.note("FIFO holds across milliseconds only: two jobs of one priority enqueued in the same millisecond have equal scores and come out in member byte order.");
        ctx.note(format!("ZPOPMIN under {WORKERS} threads, each with its own connection: the pop is one atomic command, so no job is handed twice."));
        Ok(())
    })
}
