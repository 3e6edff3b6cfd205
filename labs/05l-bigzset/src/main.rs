//! 05l-bigzset — how a sorted set's commands and memory grow from 10⁴ to 10⁷
//! members, and what that says about article 92's figures for 100 million.
//!
//! One zset `lb` is grown in steps to 10⁴, 10⁵, 10⁶ (and 10⁷ with `--scale 10`)
//! members on the core and on Redis, with pipelined ZADDs of 1,000 members each.
//! At every size: `MEMORY USAGE lb SAMPLES 0` and the growth of `used_memory`, then
//! ZADD, ZINCRBY, ZREVRANK, the top 10, a range around a random rank and ZSCORE,
//! each timed as a round-trip distribution beside the server's own `usec_per_call`.
//! Each command's latencies are fitted to `a + b·log2 N` (least squares, R²): a
//! skiplist walk costs one step per level, and the levels grow with log N. The
//! article (seed 003) says "1M ≈ 92 MB, 10M ≈ 916 MB, 100M ≈ 9 GB" and "0.5–2 ms at
//! 100M": the sizes not run here are extrapolated from the fits and the bytes per
//! member, and shown in the reference column as the lab's arithmetic.

mod fit;
mod grow;
mod measure;

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::Instant;

use redislab_harness::fmt::{number, quantity, quantity_with, thousands};
use redislab_harness::{run, Cell, Chart, ChartKind, LabInfo, Report};

use fit::LogFit;
use measure::COMMANDS;

const LAB: LabInfo = LabInfo {
    id: "05l-bigzset",
    uses_pg: false,
};

/// The largest size at `--scale 1`: 10⁶ (the 10⁷ step is `--scale 10`).
const LARGEST_AT_SCALE_1: f64 = 1e6;
/// The sizes the lab knows: 10⁴ … 10⁷ (10⁸ would need ~10 GB per backend).
const EXPONENTS: [u32; 4] = [4, 5, 6, 7];
/// The article's per-member estimate (seed 003: "~80 + 8 + 8 = ~96 byte/member").
const ARTICLE_BYTES_PER_MEMBER: f64 = 96.0;
/// The sizes the article talks about that the fits are carried to.
const EXTRAPOLATE_TO: [u32; 2] = [7, 8];
/// Commands the article gives a latency for at 100M ("ZADD và ZREVRANK … ZREVRANGE 0..9").
const ARTICLE_LATENCY: [&str; 3] = ["zadd", "zrevrank", "top10"];

/// 10^k as a label: `10⁶`.
fn pow10(k: u32) -> String {
    const SUP: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];
    format!("10{}", SUP[k as usize])
}

/// The exponents this run grows through: up to the largest ≤ 10⁶ × scale (at least
/// 10⁵, so a fit has two sizes; at most 10⁷).
fn exponents(scale: f64) -> Vec<u32> {
    let largest = (LARGEST_AT_SCALE_1 * scale).max(1e5);
    EXPONENTS
        .into_iter()
        .filter(|k| 10f64.powi(*k as i32) <= largest * 1.000_001)
        .collect()
}

/// What a backend's run leaves for the rows filled afterwards: its fits and its
/// bytes per member at the largest size.
#[derive(Default)]
struct Outcome {
    server_fit: BTreeMap<String, LogFit>,
    rt_fit: BTreeMap<String, LogFit>,
    bytes_per_member: Option<f64>,
}

fn main() -> ExitCode {
    run(LAB, |ctx| {
        let ks = exponents(ctx.scale);
        let largest = *ks.last().expect("at least two sizes");
        declare(&mut ctx.report, &ks);
        let seed = ctx.seed;
        let mut outcomes: BTreeMap<&'static str, Outcome> = BTreeMap::new();
        ctx.each_kv(|kv, rec| {
            let lb = kv.key("lb");
            let before = measure::used_memory(kv);
            let mut out = Outcome::default();
            let mut server: BTreeMap<&str, Vec<(f64, f64)>> = BTreeMap::new();
            let mut rt: BTreeMap<&str, Vec<(f64, f64)>> = BTreeMap::new();
            let mut had = 0u64;
            for &k in &ks {
                let n = 10u64.pow(k);
                let started = Instant::now();
                grow::grow(kv, &lb, seed, had, n)?;
                let secs = started.elapsed().as_secs_f64();
                had = n;
                let card = kv.reply(&["ZCARD", &lb]);
                if card != n.to_string() {
                    return Err(format!("{}: ZCARD is {card} after growing to {n}", kv.name));
                }
                let rate = (n - if k == ks[0] { 0 } else { n / 10 }) as f64 / secs;
                rec.put(
                    &format!("load-{k}"),
                    Cell::num(secs, "s").and("rate", rate.round(), "members/s"),
                );
                match measure::memory_usage(kv, &lb)? {
                    Ok(bytes) => {
                        let per = bytes as f64 / n as f64;
                        if k == largest {
                            out.bytes_per_member = Some(per);
                        }
                        rec.put(
                            &format!("mem-{k}"),
                            Cell::count(bytes, "B")
                                .with_text(format!(
                                    "{} B = {} MB ({})",
                                    thousands(bytes),
                                    number(bytes as f64 / 1e6),
                                    quantity(per, "B/member")
                                ))
                                .with("per_member", per, "B/member"),
                        );
                    }
                    Err(e) => rec.put(&format!("mem-{k}"), Cell::error(e)),
                }
                if let (Some(b), Some(a)) = (before, measure::used_memory(kv)) {
                    let grown = a.saturating_sub(b);
                    let per = grown as f64 / n as f64;
                    rec.put(
                        &format!("used-{k}"),
                        Cell::count(grown, "B")
                            .with_text(format!(
                                "+{} B ({})",
                                thousands(grown),
                                quantity(per, "B/member")
                            ))
                            .with("per_member", per, "B/member"),
                    );
                }
                for (cmd, _, _) in COMMANDS {
                    let t = measure::time(kv, &lb, n, cmd, seed)?;
                    rt.entry(cmd)
                        .or_default()
                        .push((n as f64, t.round_trip.median_us as f64));
                    if let Some(s) = t.server_usec_per_call {
                        server.entry(cmd).or_default().push((n as f64, s));
                    }
                    rec.put(&format!("t-{cmd}-{k}"), t);
                }
            }
            for (cmd, _, _) in COMMANDS {
                for (samples, fits, row) in [
                    (&server, &mut out.server_fit, "fit"),
                    (&rt, &mut out.rt_fit, "fitrt"),
                ] {
                    let unit = if row == "fit" { "µs/call" } else { "µs" };
                    match samples.get(cmd).and_then(|s| LogFit::of(s)) {
                        Some(f) => {
                            fits.insert(cmd.to_string(), f);
                            rec.put(&format!("{row}-{cmd}"), fit_cell(&f, unit));
                        }
                        None => rec.put(
                            &format!("{row}-{cmd}"),
                            Cell::skipped("no fit: the server gave fewer than two sizes"),
                        ),
                    }
                }
            }
            // The server keeps its memory for the next backend's run otherwise.
            kv.cmd(&["UNLINK", &lb])?;
            outcomes.insert(kv.name, out);
            Ok(())
        })?;
        let all_sizes: Vec<String> = ks
            .iter()
            .flat_map(|k| COMMANDS.iter().map(move |c| format!("t-{}-{k}", c.0)))
            .collect();
        let refs: Vec<&str> = all_sizes.iter().map(String::as_str).collect();
        fill_server_ratio(&mut ctx.report, &refs);
        fill_references(&mut ctx.report, &outcomes, largest);
        charts(&mut ctx.report, &ks, &outcomes);
        notes(ctx, largest);
        Ok(())
    })
}

/// `0.62 + 0.071·log2 N µs/call (R² 0.93, 4 sizes)`: value b, with a and R².
fn fit_cell(f: &LogFit, unit: &str) -> Cell {
    Cell::num(f.b, &format!("{unit} per doubling"))
        .with_text(format!(
            "{} + {}·log2 N {unit} (R² {:.3}, {} sizes)",
            number(f.a),
            number(f.b),
            f.r2,
            f.points
        ))
        .with("a", f.a, unit)
        .with("r2", f.r2, "")
}

fn declare(r: &mut Report, ks: &[u32]) {
    for &k in ks {
        let n = pow10(k);
        r.measured(
            &format!("load-{k}"),
            &format!("grow lb to {n} members (ZADDs of 1,000 members, 10 per pipeline)"),
            None,
        );
        let article = match k {
            6 => Some("≈ 92 MB (1M × 96 B)"),
            7 => Some("≈ 916 MB (10M × 96 B)"),
            _ => None,
        };
        // A size: only the random skiplist levels move it between runs.
        r.measured(
            &format!("mem-{k}"),
            &format!("MEMORY USAGE lb SAMPLES 0 at {n}"),
            article,
        )
        .band(1.05);
        // The whole server's heap: client buffers and the allocator's own
        // rounding ride along, more so at the small sizes.
        r.measured(
            &format!("used-{k}"),
            &format!("used_memory growth since before the load, at {n}"),
            None,
        )
        .band(1.3);
    }
    for (cmd, label, _) in COMMANDS {
        for &k in ks {
            // Article 05's 1M-member figures for the same commands (its section 3.4).
            let article = match (k, cmd) {
                (6, "zincrby") => Some("28 µs (article 05, 1M)"),
                (6, "zrevrank") => Some("15 µs (article 05, 1M)"),
                (6, "top10") => Some("18 µs (article 05, 1M)"),
                (6, "around") => Some("27 µs (article 05, 1M)"),
                (6, "zscore") => Some("10 µs (article 05, 1M)"),
                _ => None,
            };
            r.measured(
                &format!("t-{cmd}-{k}"),
                &format!("{label} at {}", pow10(k)),
                article,
            );
        }
        r.measured(
            &format!("fit-{cmd}"),
            &format!("{} server time fitted to a + b·log2 N", cmd_name(cmd)),
            Some("O(log N)"),
        );
        r.measured(
            &format!("fitrt-{cmd}"),
            &format!("{} round-trip median fitted to a + b·log2 N", cmd_name(cmd)),
            None,
        );
    }
    r.measured(
        "server-core-over-redis",
        "core ÷ redis, server µs/call of every command at every size (one run)",
        None,
    )
    .band(3.0);
    for backend in ["redis", "core"] {
        for cmd in ARTICLE_LATENCY {
            r.measured(
                &format!("x8-{cmd}-{backend}"),
                &format!(
                    "{} at 10⁸, extrapolated from {backend}'s fits (round trip; server)",
                    cmd_name(cmd)
                ),
                Some("0.5–2 ms"),
            );
        }
        for k in EXTRAPOLATE_TO {
            if ks.contains(&k) {
                continue;
            }
            r.measured(
                &format!("x{k}-mem-{backend}"),
                &format!(
                    "MEMORY USAGE at {}, extrapolated: {backend}'s B/member at {} × N",
                    pow10(k),
                    pow10(*ks.last().unwrap())
                ),
                Some(if k == 7 { "≈ 916 MB" } else { "≈ 9 GB" }),
            )
            .band(1.05);
        }
    }
}

fn cmd_name(cmd: &str) -> &'static str {
    match cmd {
        "zadd" => "ZADD",
        "zincrby" => "ZINCRBY",
        "zrevrank" => "ZREVRANK",
        "top10" => "ZRANGE top 10",
        "around" => "ZRANGE around a rank",
        _ => "ZSCORE",
    }
}

/// The geometric mean of core ÷ redis over the server times (not the round trips,
/// which are mostly the loopback).
fn fill_server_ratio(r: &mut Report, rows: &[&str]) {
    let ratios: Vec<f64> = rows
        .iter()
        .filter_map(|k| {
            let row = r.find(k)?;
            let c = row.value("core")?.server_us?;
            let s = row.value("redis")?.server_us?;
            (c > 0.0 && s > 0.0).then(|| c / s)
        })
        .collect();
    if ratios.is_empty() {
        return;
    }
    let g = (ratios.iter().map(|x| x.ln()).sum::<f64>() / ratios.len() as f64).exp();
    let (lo, hi) = ratios
        .iter()
        .fold((f64::INFINITY, 0f64), |(l, h), x| (l.min(*x), h.max(*x)));
    let mut cell = Cell::num(g, "×")
        .with_text(format!(
            "{} redis (geometric mean of {} ratios, {}–{})",
            quantity(g, "×"),
            ratios.len(),
            quantity(lo, "×"),
            quantity(hi, "×")
        ))
        .with("min", lo, "×")
        .with("max", hi, "×");
    cell.n = Some(ratios.len() as u64);
    if let Some(row) = r.find_mut("server-core-over-redis") {
        row.core = Some(cell);
    }
}

/// The extrapolations: the lab's arithmetic on each backend's fits, in the
/// reference column.
fn fill_references(r: &mut Report, outcomes: &BTreeMap<&'static str, Outcome>, largest: u32) {
    for backend in ["redis", "core"] {
        let out = outcomes.get(backend);
        for cmd in ARTICLE_LATENCY {
            let key = format!("x8-{cmd}-{backend}");
            let rt = out.and_then(|o| o.rt_fit.get(cmd)).map(|f| f.at(1e8));
            let server = out.and_then(|o| o.server_fit.get(cmd)).map(|f| f.at(1e8));
            let cell = match (rt, server) {
                (Some(rt), server) => {
                    let mut c = Cell::num(rt, "µs");
                    let mut text = format!("≈ {} round trip", quantity_with(rt, "µs", 1));
                    if let Some(s) = server {
                        c = c.with("server_us", s, "µs/call");
                        text.push_str(&format!("; {} server", quantity_with(s, "µs/call", 2)));
                    }
                    c.with_text(format!("{text} (extrapolation)"))
                }
                _ => Cell::skipped(format!("{backend} did not run")),
            };
            if let Some(row) = r.find_mut(&key) {
                row.reference(cell);
            }
        }
        for k in EXTRAPOLATE_TO {
            let Some(row) = r.find_mut(&format!("x{k}-mem-{backend}")) else {
                continue;
            };
            let cell = match out.and_then(|o| o.bytes_per_member) {
                Some(per) => {
                    let bytes = per * 10f64.powi(k as i32);
                    Cell::num(bytes, "B").with_text(format!(
                        "≈ {} MB = {} GB ({} × {}, extrapolation)",
                        thousands((bytes / 1e6).round() as u64),
                        number(bytes / 1e9),
                        quantity(per, "B/member"),
                        pow10(k)
                    ))
                }
                None => Cell::skipped(format!(
                    "{backend} gave no MEMORY USAGE at {}",
                    pow10(largest)
                )),
            };
            row.reference(cell);
        }
    }
}

fn charts(r: &mut Report, ks: &[u32], outcomes: &BTreeMap<&'static str, Outcome>) {
    let at = |cmd: &str| -> Vec<(f64, String)> {
        ks.iter()
            .map(|k| (10f64.powi(*k as i32), format!("t-{cmd}-{k}")))
            .collect()
    };
    let mut chart = Chart::new(
        "server-time",
        ChartKind::Xy,
        "Server time per call against the zset's size (INFO commandstats)",
    )
    .x("members (log)", true)
    .y("µs per call", false);
    for cmd in ["zrevrank", "zadd"] {
        for backend in ["redis", "core"] {
            chart = chart
                .rows(backend, Some("server_us"), at(cmd))
                .named(&format!("{backend} · {}", cmd_name(cmd)));
        }
    }
    let xs: Vec<f64> = (8..=16).map(|h| 10f64.powf(h as f64 / 2.0)).collect();
    for backend in ["redis", "core"] {
        if let Some(f) = outcomes
            .get(backend)
            .and_then(|o| o.server_fit.get("zrevrank"))
        {
            chart = chart.reference(
                &format!("{backend}'s ZREVRANK fit a + b·log2 N, carried to 10⁸"),
                xs.iter().map(|&x| (x, f.at(x))),
            );
        }
    }
    r.chart(chart.caption("A skiplist step per level, and about log4 N levels: the server's time grows by a constant for every tenfold growth of the set, and stays in microseconds where the article expects milliseconds at 10⁸."));
    let mems: Vec<(f64, String)> = ks
        .iter()
        .map(|k| (10f64.powi(*k as i32), format!("mem-{k}")))
        .collect();
    r.chart(
        Chart::new(
            "bytes-per-member",
            ChartKind::Xy,
            "MEMORY USAGE per member against the zset's size",
        )
        .x("members (log)", true)
        .y("bytes per member", false)
        .kv_rows(Some("per_member"), mems)
        .reference(
            "article 92's estimate: 96 B/member",
            [
                (1e4, ARTICLE_BYTES_PER_MEMBER),
                (10f64.powi(*ks.last().unwrap() as i32), ARTICLE_BYTES_PER_MEMBER),
            ],
        )
        .caption("Bytes per member move with how full the hash table's power-of-two bucket array is, around the article's 96 B."),
    );
}

fn notes(ctx: &mut redislab_harness::Ctx, largest: u32) {
    ctx.note(format!(
        "Sizes run: 10⁴ up to {} (this run's --scale; --scale 10 adds the 10⁷ step: about 1 GB of zset per backend, one at a time, and on this shared 2-core machine about 10 minutes, most of it the two loads of 9M random-position inserts). Each size is reached by growing the same key; every timing is {} warm-up + {} timed calls on a random member or rank.",
        pow10(largest), 200, 2000
    ));
    ctx.note("Fits are least squares of latency against log2 N over the sizes run; the 10⁸ rows carry each fit beyond its data (the reference column): an extrapolation, not a measurement. Round trips here are loopback on one machine; the article's 0.5–2 ms would include a network hop, and a server time of a few µs leaves most of any such latency to the network and the client.");
    ctx.note("Server times are INFO commandstats' usec over calls, taken before and after each command's timed calls. Both servers add whole microseconds per call, so a command well under 1 µs reads low (the core's ZSCORE and top 10 most of all), and on this shared machine a call descheduled mid-way adds its wait: fits of sub-µs commands are noise.");
    ctx.note("Memory is MEMORY USAGE with SAMPLES 0 (every member counted; the default samples 5). The extrapolated sizes multiply the bytes per member at the largest size run by N: the hash table's bucket array doubles in steps, so a real set can sit some percent above or below.");
}
