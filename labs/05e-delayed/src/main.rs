//! 05e-delayed — scheduled jobs in a zset: who gets to run a due job?
//!
//! Article 05, section 3.6. 1,000 jobs are due and 100 are due in an hour; 10
//! workers (each its own connection and thread) take jobs, and each job "runs"
//! 0.3 ms. Read-then-remove runs jobs many times; letting ZREM's reply decide, or
//! a script that reads and removes in one step, runs each once; ZPOPMIN takes the
//! future jobs too. PostgreSQL claims a row with `FOR UPDATE SKIP LOCKED`.

mod strategies;

use std::process::ExitCode;

use redislab_harness::jobs::{job_name, now_ms, on_threads, Counts, Ledger};
use redislab_harness::report::Bounds;
use redislab_harness::{run, Cell, Chart, ChartKind, Kind, Kv, LabInfo, Pg, Recorder, Report};
use strategies::{pg_worker, worker, Strategy};

const LAB: LabInfo = LabInfo {
    id: "05e-delayed",
    uses_pg: true,
};

const DUE: usize = 1_000;
const FUTURE: usize = 100;
const WORKERS: usize = 10;
const HOUR_MS: i64 = 3_600_000;
/// The naive count depends on scheduling: it is run this many times.
const NAIVE_REPEATS: usize = 3;

/// Row prefix, label, strategy, the article's (runs, more than once, early, missed).
const STRATEGIES: [(&str, &str, Strategy, [&str; 4]); 4] = [
    (
        "naive",
        "naive (ZRANGEBYSCORE → run → ZREM, reply ignored)",
        Strategy::Naive,
        ["8927", "1000", "0", "0"],
    ),
    (
        "zrem-claim",
        "zrem-claim (run only if my ZREM returned 1)",
        Strategy::ZremClaim,
        ["1000", "0", "0", "0"],
    ),
    (
        "zpopmin",
        "zpopmin (ZPOPMIN 1, run)",
        Strategy::Zpopmin,
        ["1100", "0", "100", "0"],
    ),
    (
        "lua",
        "lua (ZRANGEBYSCORE + ZREM in one script)",
        Strategy::Lua,
        ["1000", "0", "0", "0"],
    ),
];

const COUNTERS: [(&str, &str); 4] = [
    ("runs", "runs"),
    ("twice", "jobs run more than once"),
    ("early", "runs before the job was due"),
    ("missed", "due jobs never run"),
];

fn declare(r: &mut Report) {
    for (prefix, label, strategy, article) in STRATEGIES {
        for ((suffix, what), figure) in COUNTERS.into_iter().zip(article) {
            let key = format!("{prefix}-{suffix}");
            let label = format!("{label}: {what}");
            let bounds = match (strategy, suffix) {
                (Strategy::Naive, "runs") => Some((1_100.0, 20_000.0)),
                (Strategy::Naive, "twice") => Some((100.0, 1_000.0)),
                _ => None,
            };
            match bounds {
                Some((min, max)) => {
                    let row = r.row(&key, &label, Kind::Random, Some(figure));
                    row.bounds = Some(Bounds { min, max });
                    row.note = Some(format!(
                        "median of {NAIVE_REPEATS} runs, with their min and max"
                    ));
                }
                None => {
                    r.exact(&key, &label, figure);
                }
            }
        }
    }
    for (suffix, what) in COUNTERS {
        r.row(
            &format!("pg-{suffix}"),
            &format!("pg FOR UPDATE SKIP LOCKED: {what}"),
            Kind::Exact,
            None,
        );
    }
}

/// Due times: 1,000 in the last minute, 100 an hour from now.
fn due_times() -> Vec<i64> {
    let now = now_ms();
    (0..DUE + FUTURE)
        .map(|i| match i < DUE {
            true => now - 60_000 + i as i64,
            false => now + HOUR_MS + i as i64,
        })
        .collect()
}

fn schedule(kv: &mut Kv, key: &str) -> Result<Ledger, String> {
    let ledger = Ledger::new(due_times());
    let mut p = redis::pipe();
    p.cmd("DEL").arg(key).ignore();
    for (i, due) in ledger.due().iter().enumerate() {
        p.cmd("ZADD").arg(key).arg(due).arg(job_name(i)).ignore();
    }
    p.query::<()>(kv.conn()).map_err(|e| e.to_string())?;
    Ok(ledger)
}

fn run_once(kv: &mut Kv, strategy: Strategy) -> Result<Counts, String> {
    let key = kv.key("jobs");
    let ledger = schedule(kv, &key)?;
    let conns = (0..WORKERS)
        .map(|_| kv.new_connection())
        .collect::<Result<Vec<_>, _>>()?;
    on_threads(conns, |_, conn| worker(strategy, conn, &key, &ledger))?;
    Ok(ledger.counts())
}

fn put(rec: &mut Recorder, prefix: &str, c: Counts) {
    for ((suffix, _), v) in COUNTERS
        .into_iter()
        .zip([c.runs, c.twice, c.early, c.missed])
    {
        rec.put(
            &format!("{prefix}-{suffix}"),
            Cell::count(v, "").with_text(v.to_string()),
        );
    }
}

fn median_with_spread(mut values: Vec<u64>) -> Cell {
    values.sort_unstable();
    let (median, min, max) = (
        values[values.len() / 2],
        values[0],
        values[values.len() - 1],
    );
    let mut cell = Cell::count(median, "")
        .with("min", min as f64, "")
        .with("max", max as f64, "")
        .with_text(format!("{median} (min {min}, max {max})"));
    cell.n = Some(values.len() as u64);
    cell
}

fn strategies(kv: &mut Kv, rec: &mut Recorder) -> Result<(), String> {
    for (prefix, _, strategy, _) in STRATEGIES {
        if strategy != Strategy::Naive {
            put(rec, prefix, run_once(kv, strategy)?);
            continue;
        }
        let runs = (0..NAIVE_REPEATS)
            .map(|_| run_once(kv, strategy))
            .collect::<Result<Vec<_>, _>>()?;
        put(rec, prefix, runs[0]);
        rec.put(
            "naive-runs",
            median_with_spread(runs.iter().map(|c| c.runs).collect()),
        );
        rec.put(
            "naive-twice",
            median_with_spread(runs.iter().map(|c| c.twice).collect()),
        );
        for c in &runs[1..] {
            if (c.early, c.missed) != (runs[0].early, runs[0].missed) {
                return Err(format!("naive: early/missed changed between runs: {c:?}"));
            }
        }
    }
    Ok(())
}

fn skip_locked(pg: &mut Pg, rec: &mut Recorder) -> Result<(), String> {
    pg.exec("CREATE TABLE jobs (id int PRIMARY KEY, run_at bigint NOT NULL); CREATE INDEX ON jobs (run_at)")?;
    let ledger = Ledger::new(due_times());
    let values: Vec<String> = ledger
        .due()
        .iter()
        .enumerate()
        .map(|(i, due)| format!("({i}, {due})"))
        .collect();
    pg.exec(&format!("INSERT INTO jobs VALUES {}", values.join(", ")))?;
    let clients = (0..WORKERS)
        .map(|_| pg.new_client())
        .collect::<Result<Vec<_>, _>>()?;
    on_threads(clients, |_, client| pg_worker(client, &ledger))?;
    put(rec, "pg", ledger.counts());
    Ok(())
}

fn main() -> ExitCode {
    run(LAB, |ctx| {
        declare(&mut ctx.report);
        ctx.each_kv(strategies)?;
        ctx.with_pg(skip_locked)?;
        let mut names: Vec<String> = STRATEGIES.iter().map(|s| s.0.to_string()).collect();
        names.push("pg SKIP LOCKED".into());
        let kv: Vec<(f64, String)> = STRATEGIES
            .iter()
            .enumerate()
            .map(|(i, s)| (i as f64, format!("{}-runs", s.0)))
            .collect();
        let article: Vec<(f64, f64)> = STRATEGIES
            .iter()
            .enumerate()
            .filter_map(|(i, s)| Some((i as f64, s.3[0].parse().ok()?)))
            .collect();
        ctx.report.chart(
            Chart::new("runs", ChartKind::Bars, "Runs of 1,100 jobs (1,000 due) under 10 workers, per strategy")
                .x("strategy", false)
                .y("job runs", false)
                .categories(names)
                .kv_rows(None, kv)
                .rows("pg", None, [(STRATEGIES.len() as f64, "pg-runs")])
                .reference("article (its machine)", article)
                .caption("1,000 is right. The naive worker runs every due job many times over (all ten read the same oldest jobs before anyone removes them); ZPOPMIN runs 1,100: the 100 jobs due in an hour as well. A ZREM that must return 1, a script, or SKIP LOCKED in PostgreSQL run each due job once."),
        );
        ctx.note(format!("{DUE} jobs due in the last minute and {FUTURE} due in one hour, in one zset scored by due time (epoch ms); {WORKERS} workers, each a thread with its own connection, take jobs until they find none; a job \"runs\" by sleeping 0.3 ms. The article's workers were forked processes."));
        ctx.note("naive: every worker reads the same 10 oldest due jobs and runs them before anyone removes them, so almost every job runs several times; how many depends on scheduling (checked by bounds). zrem-claim and lua run each job exactly once. ZPOPMIN does not look at the score: it also takes the 100 jobs due in an hour and runs them at once.");
        ctx.note("pg: each worker, in a transaction, selects the oldest due row FOR UPDATE SKIP LOCKED, runs it, deletes it and commits: a row locked by one worker is skipped by the others, so each job runs once.");
        Ok(())
    })
}
