//! 02l-increx-load — INCREX against 02i's Lua fallback under load.
//!
//! Article 02 ends with what it could not verify, among it "INCREX against Lua
//! under high load". The rate-limit hit of lab 02i (count a hit unless the limit is
//! reached, set the window's TTL only once) is sent by 1, 8, 32 and 128 clients,
//! each on its own connection, one call per round trip and in pipelines of 16, for
//! a fixed time: as one `INCREX … UBOUND … EX … ENX` (Redis 8.8's command, which
//! the core implements) and as 02i's script through EVALSHA. Each run reports
//! hits/s and the latency of a call (p50, p99); the sum of the counters must equal
//! the hits sent. The ratios INCREX ÷ script come from runs side by side on the
//! core. Redis 8.6.3 has no INCREX: its INCREX rows show the server's own error,
//! its script rows the same load. No Redis 8.8 could be obtained here.

mod load;

#[allow(dead_code)]
#[path = "../../02i-counters/src/counters.rs"]
mod counters_02i;

use std::process::ExitCode;
use std::time::Duration;

use redis::Value;
use redislab_harness::backend::render;
use redislab_harness::fmt::{quantity, thousands};
use redislab_harness::progress::Phase;
use redislab_harness::timing::command_stats;
use redislab_harness::{run, Cell, Chart, ChartKind, Kind, Kv, LabInfo, Recorder, Report};

use load::{Outcome, Path};

const LAB: LabInfo = LabInfo {
    id: "02l-increx-load",
    uses_pg: false,
};

const CLIENTS: [usize; 4] = [1, 8, 32, 128];
/// Hits per call: one per round trip, and pipelines of 16.
const MODES: [(usize, &str); 2] = [(1, "one call per round trip"), (16, "pipelines of 16")];
/// Each (clients, mode) is run in slices that alternate between the two paths, so
/// both see the same moments of this shared machine: ROUNDS × SLICE per path.
const SLICE: Duration = Duration::from_millis(200);
const ROUNDS: usize = 5;
/// A ratio of two runs taken one after the other on this shared 2-core machine.
const RATIO_BAND: f64 = 2.5;

fn mode_key(pipeline: usize) -> &'static str {
    if pipeline == 1 {
        "single"
    } else {
        "pipe"
    }
}

/// `1 client`, `8 clients`.
fn clients(c: usize) -> String {
    if c == 1 {
        "1 client".into()
    } else {
        format!("{c} clients")
    }
}

fn main() -> ExitCode {
    run(LAB, |ctx| {
        declare(&mut ctx.report);
        let seed = ctx.seed;
        ctx.each_kv(|kv, rec| steps(kv, rec, seed))?;
        ratios(&mut ctx.report);
        // What the real server did with INCREX, from its own answer to the probe.
        let version = ctx.server_name("redis");
        let refused = ctx.redis_refused("probe");
        charts(
            &mut ctx.report,
            version.as_deref().unwrap_or("Redis"),
            refused,
        );
        let server = match &version {
            Some(v) if refused => format!("; {v} answers INCREX with its own error, shown in its INCREX rows, and runs the script path"),
            Some(v) => format!("; {v} answers INCREX: its INCREX rows are its own, beside its script path"),
            None => String::new(),
        };
        ctx.note(format!("No Redis 8.8 could be obtained on this machine (Debian carries 8.6.3 at the newest, DESIGN.md): the INCREX figures are the core's, which implements 8.8's INCREX from its documentation{server}."));
        ctx.note(format!("Each path runs {ROUNDS} slices of {} ms per row, alternating with the other path (INCREX first in odd rounds, the script first in even ones), so a burst of other work on this shared machine falls on both; the clients are threads of this process, each with its own connection, spreading hits over {} rate-limit keys (limit 10⁹ so every hit is applied on both paths, TTL set once with ENX / the script's TTL check). Latency is that of one call: a pipeline of 16 is one call for all its hits.", SLICE.as_millis(), load::KEYS));
        ctx.note("The core's listener runs in this process, so on 2 cores its one executor thread competes with up to 128 client threads; Redis runs in its own process. Compare INCREX with the script on one server (the ratio rows), not the core with Redis.");
        Ok(())
    })
}

fn declare(r: &mut Report) {
    r.row(
        "probe",
        "INCREX rl:probe BYINT 0 (does the server have INCREX?)",
        Kind::Exact,
        None,
    )
    .core_matches_redis = false;
    r.exact(
        "counted",
        "every hit counted: Σ counters = hits sent = hits applied, every run",
        "yes",
    );
    for (pipeline, how) in MODES {
        let m = mode_key(pipeline);
        for c in CLIENTS {
            r.measured(
                &format!("increx-{m}-{c}"),
                &format!("INCREX, {}, {how}: hits/s · p50/p99 of a call", clients(c)),
                None,
            );
            r.measured(
                &format!("script-{m}-{c}"),
                &format!("02i's script (EVALSHA), {}, {how}", clients(c)),
                None,
            );
            r.measured(
                &format!("ratio-{m}-{c}"),
                &format!("INCREX ÷ script hits/s, {}, {how} (one run)", clients(c)),
                None,
            )
            .band(RATIO_BAND);
        }
    }
    r.measured(
        "server-increx",
        "server time of INCREX over every run (INFO commandstats)",
        None,
    );
    r.measured(
        "server-script",
        "server time of EVALSHA of the script over every run",
        None,
    );
    // No band: INCREX takes well under a microsecond and the servers count whole
    // microseconds per call, so its average is mostly the few calls that were
    // descheduled mid-way on this shared machine.
    r.measured(
        "server-ratio",
        "script ÷ INCREX server µs/call (one run; reported, not checked)",
        None,
    );
}

fn steps(kv: &mut Kv, rec: &mut Recorder, seed: u64) -> Result<(), String> {
    let probe_key = kv.key("rl:probe");
    let probe = kv.cmd(&["INCREX", &probe_key, "BYINT", "0"]);
    kv.cmd(&["DEL", &probe_key])?;
    rec.put(
        "probe",
        match &probe {
            Ok(v) => render(v),
            Err(e) => e.clone(),
        },
    );
    let sha = match kv.cmd(&["SCRIPT", "LOAD", counters_02i::HIT_SCRIPT])? {
        Value::BulkString(b) => String::from_utf8_lossy(&b).into_owned(),
        other => return Err(format!("{}: SCRIPT LOAD gave {}", kv.name, render(&other))),
    };
    let mut conns = (0..*CLIENTS.iter().max().unwrap())
        .map(|_| kv.new_connection())
        .collect::<Result<Vec<_>, _>>()?;
    let increx_before = command_stats(kv, "increx");
    let script_before = command_stats(kv, "evalsha");
    let mut paths = Vec::new();
    if probe.is_ok() {
        paths.push(("increx", Path::Increx));
    }
    paths.push(("script", Path::Script { sha }));
    let runs = (MODES.len() * CLIENTS.len() * paths.len() * ROUNDS) as u64;
    let phase = Phase::new(format!("{}: {runs} load slices", kv.name), Some(runs));
    let mut all_counted = true;
    let mut run_no = 0u64;
    for (pipeline, _) in MODES {
        let m = mode_key(pipeline);
        for c in CLIENTS {
            let mut outs: Vec<Option<Outcome>> = paths.iter().map(|_| None).collect();
            for round in 0..ROUNDS {
                for i in 0..paths.len() {
                    let i = if round % 2 == 0 {
                        i
                    } else {
                        paths.len() - 1 - i
                    };
                    let (name, path) = &paths[i];
                    run_no += 1;
                    let prefix = kv.key(&format!("rl:{name}:{m}:{c}:"));
                    let out = load::run(
                        &mut conns[..c],
                        path,
                        &prefix,
                        pipeline,
                        SLICE,
                        seed ^ run_no,
                    )?;
                    match &mut outs[i] {
                        Some(acc) => acc.absorb(out)?,
                        slot => *slot = Some(out),
                    }
                    phase.inc(1);
                }
            }
            for ((name, _), out) in paths.iter().zip(outs) {
                let out = out.expect("at least one round");
                let prefix = kv.key(&format!("rl:{name}:{m}:{c}:"));
                let total = counter_sum(kv, &prefix)?;
                all_counted &= total == out.hits && out.applied == out.hits;
                rec.put(&format!("{name}-{m}-{c}"), cell(&out));
            }
            if probe.is_err() {
                // The run's own first command, so the row shows what this server
                // says to exactly what the INCREX path would send.
                let key = kv.key(&format!("rl:increx:{m}:{c}:0"));
                let refused = kv.cmd(&[
                    "INCREX",
                    &key,
                    "BYINT",
                    "1",
                    "UBOUND",
                    load::LIMIT,
                    "EX",
                    load::WINDOW_SECONDS,
                    "ENX",
                ]);
                rec.put(
                    &format!("increx-{m}-{c}"),
                    match refused {
                        Err(e) => Cell::error(e),
                        Ok(v) => Cell::error(format!(
                            "INCREX answered {} after the probe failed",
                            render(&v)
                        )),
                    },
                );
            }
        }
    }
    phase.finish();
    rec.put("counted", if all_counted { "yes" } else { "no" });
    let per_call = |before: Option<(u64, u64)>, after: Option<(u64, u64)>| match (before, after) {
        (Some((c0, u0)), Some((c1, u1))) if c1 > c0 => {
            Some(((u1 - u0) as f64 / (c1 - c0) as f64, c1 - c0))
        }
        _ => None,
    };
    let increx = per_call(increx_before, command_stats(kv, "increx"));
    let script = per_call(script_before, command_stats(kv, "evalsha"));
    let server_cell = |t: Option<(f64, u64)>| match t {
        Some((us, calls)) => {
            let mut c = Cell::num(us, "µs/call").with_text(format!(
                "{} ({} calls)",
                quantity(us, "µs/call"),
                thousands(calls)
            ));
            c.n = Some(calls);
            c
        }
        None => Cell::skipped("no calls"),
    };
    match &probe {
        Ok(_) => rec.put("server-increx", server_cell(increx)),
        Err(e) => rec.put("server-increx", Cell::error(e.clone())),
    }
    rec.put("server-script", server_cell(script));
    if let (Some((i, _)), Some((s, _))) = (increx, script) {
        if i > 0.0 {
            rec.put(
                "server-ratio",
                Cell::num(s / i, "×").with_text(format!(
                    "{} ({} / {} µs/call)",
                    quantity(s / i, "×"),
                    quantity(s, ""),
                    quantity(i, "")
                )),
            );
        }
    }
    Ok(())
}

/// Σ of the run's counters (MGET of its keys).
fn counter_sum(kv: &mut Kv, prefix: &str) -> Result<u64, String> {
    let keys: Vec<String> = (0..load::KEYS).map(|i| format!("{prefix}{i}")).collect();
    let mut args: Vec<&[u8]> = vec![b"MGET"];
    args.extend(keys.iter().map(|k| k.as_bytes()));
    Ok(kv
        .items(&args)?
        .iter()
        .filter_map(|v| v.parse::<u64>().ok())
        .sum())
}

/// `51,234 hits/s · p50 120 µs, p99 900 µs (61,000 hits)`.
fn cell(out: &Outcome) -> Cell {
    let rate = out.per_second();
    let (p50, p99) = (
        out.latency.value_at_quantile(0.5) as f64,
        out.latency.value_at_quantile(0.99) as f64,
    );
    let mut c = Cell::num(rate.round(), "hits/s")
        .with("p50", p50, "µs")
        .with("p99", p99, "µs")
        .with("hits", out.hits as f64, "")
        .with_text(format!(
            "{} · p50 {}, p99 {} ({} hits)",
            quantity(rate.round(), "hits/s"),
            quantity(p50, "µs"),
            quantity(p99, "µs"),
            thousands(out.hits)
        ));
    c.median = Some(p50);
    c.p99 = Some(p99);
    c.n = Some(out.latency.len());
    c
}

/// INCREX ÷ script on each backend that ran both (the core), into its column.
fn ratios(r: &mut Report) {
    for (pipeline, _) in MODES {
        let m = mode_key(pipeline);
        for c in CLIENTS {
            for backend in ["core", "redis"] {
                let rate = |k: &str| {
                    r.find(k)
                        .and_then(|row| row.value(backend))
                        .filter(|c| !c.error)
                        .and_then(|c| c.value)
                };
                let (Some(i), Some(s)) = (
                    rate(&format!("increx-{m}-{c}")),
                    rate(&format!("script-{m}-{c}")),
                ) else {
                    continue;
                };
                let cell = Cell::num(i / s, "×").with_text(format!(
                    "{} ({} / {} hits/s)",
                    quantity(i / s, "×"),
                    thousands(i as u64),
                    thousands(s as u64)
                ));
                if let Some(row) = r.find_mut(&format!("ratio-{m}-{c}")) {
                    match backend {
                        "core" => row.core = Some(cell),
                        _ => row.redis = Some(cell),
                    }
                }
            }
        }
    }
}

/// Hits/s by client count, one chart per mode: INCREX and the script on the
/// core, the script on Redis.
/// `version`: the real server's name (`Redis 8.6.3`), for its series; `refused`: it has no INCREX.
fn charts(r: &mut Report, version: &str, refused: bool) {
    for (pipeline, how) in MODES {
        let m = mode_key(pipeline);
        let at = |path: &str| -> Vec<(f64, String)> {
            CLIENTS
                .iter()
                .enumerate()
                .map(|(i, c)| (i as f64, format!("{path}-{m}-{c}")))
                .collect()
        };
        r.chart(
            Chart::new(
                &format!("hits-{m}"),
                ChartKind::Bars,
                &format!("Rate-limit hits per second, {how}"),
            )
            .y("hits/s", false)
            .categories(CLIENTS.iter().map(|c| clients(*c)))
            .rows("core", None, at("increx"))
            .named("core · INCREX")
            .rows("core", None, at("script"))
            .named("core · 02i's script")
            .rows("redis", None, at("script"))
            .named(&format!("{} · 02i's script", version.to_lowercase()))
            .caption(&if refused {
                format!("{version} has no INCREX (its rows are its error), so only its script bar is drawn.")
            } else {
                format!("Only {version}'s script bar is drawn; its INCREX figures are in the rows.")
            }),
        );
    }
}
