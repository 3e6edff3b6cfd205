//! 02h-race — many clients doing read-modify-write on one value.
//!
//! Article 02, section 10. A naive GET → change → SET loses updates when two
//! clients interleave. Both optimistic fixes retry instead: WATCH/MULTI/EXEC (the
//! server aborts EXEC if the key changed since WATCH) and SET … IFEQ old (the
//! condition travels inside the one write). The article counted 10,611 retries
//! with WATCH against 3,944 with IFEQ for the same load; the counts depend on
//! scheduling, so each strategy runs a few times and is checked by bounds.
//!
//! A server without SET … IFEQ (Redis 7.0 and 8.0 here) answers the first IFEQ write
//! with its own error: the IFEQ rows and the WATCH / IFEQ ratios show that error,
//! and the naive and WATCH rows still run.

use std::process::ExitCode;
use std::thread;

use redislab_harness::backend::error_text;
use redislab_harness::report::Bounds;
use redislab_harness::{run, Cell, Kind, Kv, LabInfo, Recorder};

const LAB: LabInfo = LabInfo {
    id: "02h-race",
    uses_pg: false,
};

const CLIENTS: usize = 20;
const UPDATES: usize = 100;
const REPEATS: usize = 3;
/// Lighter loads for the WATCH / IFEQ ratio: it depends on how contended the key is.
const FEWER_CLIENTS: [usize; 2] = [2, 5];

#[derive(Clone, Copy, PartialEq)]
enum Strategy {
    Naive,
    Watch,
    IfEq,
}

/// Why a round stopped.
enum Failed {
    /// The server answered a strategy's write with an error (a server without
    /// SET … IFEQ): its own text, for the rows of that strategy.
    Refused(String),
    /// Anything else (a lost connection, a bad document): the lab fails.
    Other(String),
}

impl From<String> for Failed {
    fn from(e: String) -> Failed {
        Failed::Other(e)
    }
}

/// One client's update loop; returns how many times it had to retry.
fn client_loop(mut conn: redis::Connection, key: &str, strategy: Strategy) -> Result<u64, Failed> {
    let err = |e: redis::RedisError| Failed::Other(e.to_string());
    let mut retries = 0;
    for _ in 0..UPDATES {
        loop {
            if strategy == Strategy::Watch {
                redis::cmd("WATCH")
                    .arg(key)
                    .query::<()>(&mut conn)
                    .map_err(err)?;
            }
            let old: String = redis::cmd("GET").arg(key).query(&mut conn).map_err(err)?;
            let new = bump(&old)?;
            let written = match strategy {
                Strategy::Naive => {
                    redis::cmd("SET")
                        .arg(key)
                        .arg(&new)
                        .query::<()>(&mut conn)
                        .map_err(err)?;
                    true
                }
                Strategy::Watch => {
                    let reply: Option<Vec<String>> = redis::pipe()
                        .atomic()
                        .cmd("SET")
                        .arg(key)
                        .arg(&new)
                        .query(&mut conn)
                        .map_err(err)?;
                    reply.is_some()
                }
                Strategy::IfEq => {
                    let reply: Option<String> = redis::cmd("SET")
                        .arg(key)
                        .arg(&new)
                        .arg("IFEQ")
                        .arg(&old)
                        .query(&mut conn)
                        .map_err(|e| match e.code() {
                            // The server's own answer to the option: it lacks it.
                            Some(_) => Failed::Refused(error_text(&e)),
                            None => err(e),
                        })?;
                    reply.is_some()
                }
            };
            if written {
                break;
            }
            retries += 1;
        }
    }
    Ok(retries)
}

/// The value is a small JSON document, `{"count":N}`; one update adds 1.
fn bump(old: &str) -> Result<String, String> {
    let doc: serde_json::Value =
        serde_json::from_str(old).map_err(|e| format!("bad document {old:?}: {e}"))?;
    let count = doc["count"].as_u64().ok_or("no count")?;
    Ok(serde_json::json!({ "count": count + 1 }).to_string())
}

/// Runs `clients` threads once; returns (final count, total retries).
fn round(kv: &mut Kv, strategy: Strategy, clients: usize) -> Result<(u64, u64), Failed> {
    let key = kv.key("doc");
    kv.cmd(&["SET", &key, r#"{"count":0}"#])?;
    let conns: Vec<redis::Connection> = (0..clients)
        .map(|_| kv.new_connection())
        .collect::<Result<_, _>>()?;
    let handles: Vec<_> = conns
        .into_iter()
        .map(|conn| {
            let key = key.clone();
            thread::spawn(move || client_loop(conn, &key, strategy))
        })
        .collect();
    // Every thread is joined before a failure is reported, so none outlives the round.
    let results: Vec<Result<u64, Failed>> = handles
        .into_iter()
        .map(|h| {
            h.join()
                .unwrap_or_else(|_| Err(Failed::Other("a client thread panicked".into())))
        })
        .collect();
    let mut retries = 0;
    for r in results {
        retries += r?;
    }
    let last = kv.reply(&["GET", &key]);
    let doc: serde_json::Value = serde_json::from_str(&last).map_err(|e| e.to_string())?;
    Ok((doc["count"].as_u64().unwrap_or(0), retries))
}

/// [`round`] for a strategy the server may refuse: `Ok(None)` (and `refused` set to
/// the server's error) when it does, and every later call then skips the round.
fn optional_round(
    kv: &mut Kv,
    strategy: Strategy,
    clients: usize,
    refused: &mut Option<String>,
) -> Result<Option<(u64, u64)>, String> {
    if refused.is_some() {
        return Ok(None);
    }
    match round(kv, strategy, clients) {
        Ok(r) => Ok(Some(r)),
        Err(Failed::Refused(e)) => {
            *refused = Some(e);
            Ok(None)
        }
        Err(Failed::Other(e)) => Err(e),
    }
}

/// [`round`] for a strategy every server has: any failure fails the lab.
fn plain_round(kv: &mut Kv, strategy: Strategy, clients: usize) -> Result<(u64, u64), String> {
    round(kv, strategy, clients).map_err(|e| match e {
        Failed::Refused(e) | Failed::Other(e) => e,
    })
}

/// The median of the runs, with their min and max, as numbers.
fn spread(values: &mut [u64]) -> redislab_harness::Cell {
    values.sort_unstable();
    let (median, min, max) = (
        values[values.len() / 2],
        values[0],
        values[values.len() - 1],
    );
    let mut cell = redislab_harness::Cell::count(median, "")
        .with("min", min as f64, "")
        .with("max", max as f64, "")
        .with_text(format!(
            "{} (min {}, max {}, {} runs)",
            redislab_harness::fmt::thousands(median),
            redislab_harness::fmt::thousands(min),
            redislab_harness::fmt::thousands(max),
            values.len()
        ));
    cell.n = Some(values.len() as u64);
    cell
}

fn main() -> ExitCode {
    run(LAB, |ctx| {
        let total = (CLIENTS * UPDATES) as f64;
        let r = &mut ctx.report;
        let random = |r: &mut redislab_harness::Report,
                      key: &str,
                      label: &str,
                      article: Option<&str>,
                      min: f64,
                      max: f64| {
            r.row(key, label, Kind::Random, article).bounds = Some(Bounds { min, max });
        };
        random(
            r,
            "naive-lost",
            "naive GET/SET: updates lost (median of runs)",
            None,
            0.0,
            total,
        );
        r.exact(
            "watch-final",
            "WATCH/MULTI/EXEC: final count",
            &format!("{}", CLIENTS * UPDATES),
        )
        .article = None;
        random(
            r,
            "watch-retries",
            "WATCH/MULTI/EXEC: retries (median of runs)",
            Some("10611"),
            0.0,
            total * 50.0,
        );
        r.exact(
            "ifeq-final",
            "SET … IFEQ: final count",
            &format!("{}", CLIENTS * UPDATES),
        )
        .article = None;
        random(
            r,
            "ifeq-retries",
            "SET … IFEQ: retries (median of runs)",
            Some("3944"),
            0.0,
            total * 50.0,
        );
        // The lesson: the condition inside the write leaves a shorter window.
        random(
            r,
            "ratio",
            "retries WATCH / IFEQ (medians)",
            Some("2.69"),
            1.0,
            20.0,
        );
        // At light loads the denominator can be 0: with 2 clients a clean CI
        // run saw WATCH retry 100 times and IFEQ never (shown as 100×, the
        // denominator taken as 1). The bound only catches a runaway count.
        for clients in FEWER_CLIENTS {
            random(
                r,
                &format!("ratio-{clients}"),
                &format!("… the same ratio with {clients} clients × {UPDATES} updates (medians of {REPEATS} runs)"),
                Some("2.69 (load not stated)"),
                0.0,
                1000.0,
            );
        }
        // The real server's error to SET … IFEQ, when it lacks the option.
        let mut refused = None;
        ctx.each_kv(|kv, rec| {
            let e = race(kv, rec)?;
            if kv.name == "redis" {
                refused = e;
            }
            Ok(())
        })?;
        ctx.note(format!("{CLIENTS} clients (threads, one connection each) × {UPDATES} updates of one JSON value {{\"count\":N}}, {REPEATS} runs per strategy; the final count should be {}.", CLIENTS * UPDATES));
        ctx.note("The ratio WATCH / IFEQ is ~1.3 here against the article's 2.69, and the lab did not find a load that gives 2.69: the 2- and 5-client rows measure it at lighter loads, where it does not rise (with 2 clients WATCH hardly ever retries while IFEQ does). WATCH's window is longer (WATCH, GET, then MULTI/SET/EXEC against IFEQ's GET then SET), but a retry count also depends on how the clients' loops fall into step (cores, scheduling, round-trip time), which the article does not state; so the rows compare shapes, not the article's figures.");
        ctx.note("The article does not state its load, so the retry counts are compared by shape: both optimistic strategies end with every update applied, and the naive loop usually loses some. On the core every command runs on one executor thread, as on Redis, so the same races happen.");
        if let (Some(e), Some(server)) = (refused, ctx.server_name("redis")) {
            ctx.note(format!("{server} answers SET … IFEQ with {e:?} (it lacks the option): its IFEQ rows and the WATCH / IFEQ ratios show that error; the naive and WATCH/MULTI/EXEC rows ran as everywhere."));
        }
        Ok(())
    })
}

/// Runs every strategy; returns the server's error to SET … IFEQ when it refused
/// it (its rows then hold that error and the IFEQ rounds are skipped).
fn race(kv: &mut Kv, rec: &mut Recorder) -> Result<Option<String>, String> {
    let total = (CLIENTS * UPDATES) as u64;
    let (mut lost, mut watch_retries, mut ifeq_retries) = (Vec::new(), Vec::new(), Vec::new());
    let (mut watch_final, mut ifeq_final) = (Vec::new(), Vec::new());
    let mut refused = None;
    for _ in 0..REPEATS {
        let (count, _) = plain_round(kv, Strategy::Naive, CLIENTS)?;
        lost.push(total - count);
        let (count, retries) = plain_round(kv, Strategy::Watch, CLIENTS)?;
        watch_final.push(count);
        watch_retries.push(retries);
        if let Some((count, retries)) = optional_round(kv, Strategy::IfEq, CLIENTS, &mut refused)? {
            ifeq_final.push(count);
            ifeq_retries.push(retries);
        }
    }
    rec.put("naive-lost", spread(&mut lost));
    rec.put("watch-retries", spread(&mut watch_retries));
    // Every run must apply every update: report the smallest final count seen.
    rec.put("watch-final", watch_final.iter().min().unwrap().to_string());
    if let Some(e) = &refused {
        // No IFEQ: its rows, and every ratio over it, are the server's error.
        for key in ["ifeq-final", "ifeq-retries", "ratio"] {
            rec.put(key, Cell::error(e.clone()));
        }
        for clients in FEWER_CLIENTS {
            rec.put(&format!("ratio-{clients}"), Cell::error(e.clone()));
        }
        return Ok(refused);
    }
    rec.put("ifeq-retries", spread(&mut ifeq_retries));
    let median = |v: &[u64]| v[v.len() / 2] as f64;
    let ratio = median(&watch_retries) / median(&ifeq_retries).max(1.0);
    rec.put("ratio", Cell::num_with(ratio, "×", 2));
    for clients in FEWER_CLIENTS {
        let (mut w, mut i) = (Vec::new(), Vec::new());
        for _ in 0..REPEATS {
            w.push(plain_round(kv, Strategy::Watch, clients)?.1);
            i.push(plain_round(kv, Strategy::IfEq, clients)?.1);
        }
        w.sort_unstable();
        i.sort_unstable();
        let (w, i) = (median(&w), median(&i));
        rec.put(
            &format!("ratio-{clients}"),
            Cell::num_with(w / i.max(1.0), "×", 2).with_text(format!(
                "{:.2}× ({} / {})",
                w / i.max(1.0),
                w,
                i
            )),
        );
    }
    rec.put("ifeq-final", ifeq_final.iter().min().unwrap().to_string());
    Ok(None)
}
