//! zsb-delayed-lua — the delayed queue's pop-due script, and at-least-once.
//!
//! Article 04, section 4.2. The article's script pops at most one due job
//! atomically, so 10 concurrent workers never run a job twice. But a popped job
//! lives only in its worker: kill the worker mid-job and the job is gone. The
//! article's remedy: move the job to a "processing" zset scored by a deadline,
//! acknowledge it by removing it there, and let a reaper put expired jobs back.
//! Here the workers of that part are real processes, and one is SIGKILLed.

mod crash;
mod worker;

use std::process::ExitCode;

use redislab_harness::jobs::{job_name, now_ms, on_threads, Ledger};
use redislab_harness::{run, Kind, Kv, LabInfo, Recorder, Report};

const LAB: LabInfo = LabInfo {
    id: "zsb-delayed-lua",
    uses_pg: false,
};

const DUE: usize = 1_000;
const FUTURE: usize = 100;
const WORKERS: usize = 10;

fn declare(r: &mut Report) {
    let pop = "pop-due script, 1,000 due + 100 future jobs, 10 workers";
    r.row(
        "pop-runs",
        &format!("{pop}: runs"),
        Kind::Exact,
        Some("1000"),
    );
    r.exact("pop-twice", "… jobs run more than once", "0");
    r.row(
        "pop-early",
        "… runs before the job was due",
        Kind::Exact,
        None,
    );
    r.row("pop-missed", "… due jobs never run", Kind::Exact, None);
    r.row(
        "pop-left",
        "… ZCARD after (the future jobs)",
        Kind::Exact,
        None,
    );
    r.exact(
        "pop-nil",
        "the script on an empty queue (return false)",
        "(nil)",
    );
    for (design, name) in [
        ("plain", "plain pop"),
        ("lease", "processing zset + reaper"),
    ] {
        let run = format!(
            "{name}, {} jobs, {} worker processes",
            crash::JOBS,
            crash::PROCESSES
        );
        for (suffix, what) in [
            ("killed", "one worker SIGKILLed mid-job"),
            ("done", "jobs done"),
            ("lost", "jobs lost"),
            ("twice", "jobs done twice"),
            ("redelivered", "jobs started twice"),
            ("reaped", "jobs the reaper put back"),
        ] {
            let label = match suffix {
                "killed" => format!("{run}: {what}"),
                _ => format!("… {what}"),
            };
            if design == "plain" && suffix == "reaped" {
                continue;
            }
            r.row(&format!("{design}-{suffix}"), &label, Kind::Exact, None);
        }
    }
}

fn pop_due(kv: &mut Kv, rec: &mut Recorder) -> Result<(), String> {
    let key = kv.key("queue:delayed");
    let now = now_ms();
    let due: Vec<i64> = (0..DUE + FUTURE)
        .map(|i| match i < DUE {
            true => now - 60_000 + i as i64,
            false => now + 3_600_000 + i as i64,
        })
        .collect();
    let mut p = redis::pipe();
    for (i, at) in due.iter().enumerate() {
        p.cmd("ZADD").arg(&key).arg(at).arg(job_name(i)).ignore();
    }
    p.query::<()>(kv.conn()).map_err(|e| e.to_string())?;
    let ledger = Ledger::new(due);
    let conns = (0..WORKERS)
        .map(|_| kv.new_connection())
        .collect::<Result<Vec<_>, _>>()?;
    on_threads(conns, |_, mut conn| loop {
        let job: Option<String> = redis::cmd("EVAL")
            .arg(worker::POP_DUE)
            .arg(1)
            .arg(&key)
            .arg(now_ms())
            .query(&mut conn)
            .map_err(|e| e.to_string())?;
        match job {
            Some(job) => ledger.run(&job)?,
            None => return Ok(()),
        }
    })?;
    let c = ledger.counts();
    rec.put("pop-runs", c.runs.to_string());
    rec.put("pop-twice", c.twice.to_string());
    rec.put("pop-early", c.early.to_string());
    rec.put("pop-missed", c.missed.to_string());
    rec.put("pop-left", kv.reply(&["ZCARD", &key]));
    let empty = kv.key("queue:empty");
    rec.put(
        "pop-nil",
        kv.reply(&["EVAL", worker::POP_DUE, "1", &empty, "0"]),
    );
    Ok(())
}

fn crashes(kv: &mut Kv, rec: &mut Recorder) -> Result<(), String> {
    for design in ["plain", "lease"] {
        let o = crash::run(kv, design)?;
        rec.put(&format!("{design}-killed"), o.killed_mid_job.to_string());
        rec.put(&format!("{design}-done"), o.done.to_string());
        rec.put(&format!("{design}-lost"), o.lost.to_string());
        rec.put(&format!("{design}-twice"), o.twice.to_string());
        rec.put(&format!("{design}-redelivered"), o.redelivered.to_string());
        if design == "lease" {
            rec.put("lease-reaped", o.reaped.to_string());
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--worker") {
        return worker::main(&args[1..]);
    }
    run(LAB, |ctx| {
        declare(&mut ctx.report);
        ctx.each_kv(|kv, rec| {
            pop_due(kv, rec)?;
            crashes(kv, rec)
        })?;
        ctx.note("Part 1: the article's POP_DUE script unchanged (ZRANGEBYSCORE … LIMIT 0 1, ZREM, return the job; `return false` becomes nil), called by 10 threads with their own connections until it returns nil.");
        ctx.note(format!("Part 2: {} worker processes (this binary started again with --worker) each pop a job, print `start`, work 20 ms, print `done`. The lab SIGKILLs the first process right after its 3rd `start` line, while that job is running: that worker holds its 3rd job until the kill comes (it waits on its stdin instead of working), so the kill lands mid-job on every run however late the lab reads the line. plain: the article's pop; the killed worker's job is gone (\"Nếu worker chết giữa chừng, job mất luôn\"). lease: the pop moves the job to a processing zset scored by now + 1 s, `done` is followed by ZREM from processing, and the lab's reaper (every 100 ms) moves jobs whose deadline passed back to the queue; the killed worker's job is started again by another worker, and done once.", crash::PROCESSES));
        ctx.note("At-least-once means a job can also run twice: a worker killed after `done` but before its ZREM would have its job redone. The kill here lands mid-job, so nothing is done twice.");
        Ok(())
    })
}
