//! Measuring and loading for the labs that time things.
//!
//! * [`measure`]: run a closure many times after a warm-up and summarise the
//!   latencies (microseconds, in an HDR histogram) as a [`Timing`];
//! * [`measure_kv`]: the same around one Redis command, plus what the server itself
//!   says it spent per call (`INFO commandstats`), when it says anything;
//! * [`bulk_load`] and [`zadd_pipelined`]: fill big data sets in batches, with a
//!   progress line on a terminal and silence otherwise (CI logs stay clean).

use std::fmt;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use crate::backend::{error_text, Kv};
use crate::progress::Phase;
use crate::report::Cell;

/// The percentiles of a distribution kept in a report (`percentiles` of a cell).
pub const PERCENTILES: [f64; 10] = [0.0, 1.0, 10.0, 25.0, 50.0, 75.0, 90.0, 99.0, 99.9, 100.0];

/// A latency distribution in microseconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Timing {
    /// How many measured calls the figures rest on (warm-up not included).
    pub calls: u64,
    pub median_us: u64,
    pub p99_us: u64,
    pub max_us: u64,
    /// The histogram at [`PERCENTILES`], µs.
    pub percentiles_us: [u64; PERCENTILES.len()],
}

impl Timing {
    /// The report cell: text as [`Timing`]'s `Display`, `median`, `p99`, `n`
    /// and the percentiles as numbers (µs).
    pub fn cell(&self) -> Cell {
        let mut cell = Cell::num(self.median_us as f64, "µs").with_text(self.to_string());
        cell.median = Some(self.median_us as f64);
        cell.p99 = Some(self.p99_us as f64);
        cell.n = Some(self.calls);
        cell.percentiles = PERCENTILES
            .iter()
            .zip(self.percentiles_us)
            .map(|(p, v)| [*p, v as f64])
            .collect();
        cell
    }
}

impl From<Timing> for Cell {
    fn from(t: Timing) -> Cell {
        t.cell()
    }
}

impl From<KvTiming> for Cell {
    /// `median 15 µs, p99 18 µs (n=5000) · server 1.26 µs/call`.
    fn from(t: KvTiming) -> Cell {
        let mut cell = t.round_trip.cell();
        if let Some(s) = t.server_usec_per_call {
            cell.server_us = Some(s);
            cell.text = format!(
                "{} · server {}",
                cell.text,
                crate::fmt::quantity(s, "µs/call")
            );
        }
        cell
    }
}

impl fmt::Display for Timing {
    /// `median 12 µs, p99 30 µs (n=2000)`, with thousands separators.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "median {} µs, p99 {} µs (n={})",
            thousands(self.median_us),
            thousands(self.p99_us),
            self.calls
        )
    }
}

pub use crate::fmt::thousands;

/// Runs `f` `warmup` times unmeasured, then `calls` times, each timed on its own.
/// The first error stops the measurement and is returned.
pub fn measure(
    warmup: usize,
    calls: usize,
    mut f: impl FnMut() -> Result<(), String>,
) -> Result<Timing, String> {
    measure_with_setup(&mut (), warmup, calls, |_| Ok(()), |_| f())
}

/// Like [`measure`], with `setup(state)` run before every call (warm-up included)
/// and left out of the time: e.g. recreating what the measured command destroys.
pub fn measure_with_setup<S>(
    state: &mut S,
    warmup: usize,
    calls: usize,
    setup: impl FnMut(&mut S) -> Result<(), String>,
    f: impl FnMut(&mut S) -> Result<(), String>,
) -> Result<Timing, String> {
    measure_labelled("timing", state, warmup, calls, setup, f)
}

/// [`measure_with_setup`] with a label for its progress line.
fn measure_labelled<S>(
    label: &str,
    state: &mut S,
    warmup: usize,
    calls: usize,
    mut setup: impl FnMut(&mut S) -> Result<(), String>,
    mut f: impl FnMut(&mut S) -> Result<(), String>,
) -> Result<Timing, String> {
    let phase = Phase::new(
        format!("{label}: {warmup} warm-up + {calls} timed calls"),
        Some((warmup + calls) as u64),
    );
    for _ in 0..warmup {
        setup(state)?;
        f(state)?;
        phase.inc(1);
    }
    let mut hist =
        Histogram::<u64>::new_with_bounds(1, 3_600_000_000, 3).expect("valid histogram bounds");
    for _ in 0..calls {
        setup(state)?;
        let start = Instant::now();
        f(state)?;
        hist.saturating_record(micros(start.elapsed()).max(1));
        phase.inc(1);
    }
    Ok(summary(&hist))
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

fn summary(hist: &Histogram<u64>) -> Timing {
    if hist.is_empty() {
        return Timing {
            calls: 0,
            median_us: 0,
            p99_us: 0,
            max_us: 0,
            percentiles_us: [0; PERCENTILES.len()],
        };
    }
    let mut percentiles_us = [0; PERCENTILES.len()];
    for (slot, p) in percentiles_us.iter_mut().zip(PERCENTILES) {
        *slot = if p == 0.0 {
            hist.min()
        } else {
            hist.value_at_quantile(p / 100.0)
        };
    }
    Timing {
        calls: hist.len(),
        median_us: hist.value_at_quantile(0.5),
        p99_us: hist.value_at_quantile(0.99),
        max_us: hist.max(),
        percentiles_us,
    }
}

/// A client-side [`Timing`] of one command and the server's own average, in
/// microseconds per call, over exactly the measured calls (None where the server has
/// no `INFO commandstats`, as the core).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KvTiming {
    pub round_trip: Timing,
    pub server_usec_per_call: Option<f64>,
}

/// Measures `f` on `kv` like [`measure`]; `command` is the command `f` sends (e.g.
/// `ZREVRANK`). The server's average is the difference of its `INFO commandstats`
/// counters before and after the measured calls, so it covers exactly those calls
/// and nothing is reset on the server (it may be someone else's).
pub fn measure_kv(
    kv: &mut Kv,
    command: &str,
    warmup: usize,
    calls: usize,
    f: impl FnMut(&mut Kv) -> Result<(), String>,
) -> Result<KvTiming, String> {
    measure_kv_with_setup(kv, command, warmup, calls, |_| Ok(()), f)
}

/// [`measure_kv`] with an untimed `setup` before every call, e.g. `DEL dst` before
/// a `…STORE` so each call builds its result from nothing. The server's average
/// counts only `command`, so setup commands of another name do not enter it.
pub fn measure_kv_with_setup(
    kv: &mut Kv,
    command: &str,
    warmup: usize,
    calls: usize,
    mut setup: impl FnMut(&mut Kv) -> Result<(), String>,
    mut f: impl FnMut(&mut Kv) -> Result<(), String>,
) -> Result<KvTiming, String> {
    let label = format!("{}: {command}", kv.name);
    {
        let phase = Phase::new(
            format!("{label}: {warmup} warm-up calls"),
            Some(warmup as u64),
        );
        for _ in 0..warmup {
            setup(kv)?;
            f(kv)?;
            phase.inc(1);
        }
    }
    let before = command_stats(kv, command);
    let round_trip = measure_labelled(&label, kv, 0, calls, &mut setup, &mut f)?;
    let after = command_stats(kv, command);
    let server_usec_per_call = match (before, after) {
        (Some((c0, u0)), Some((c1, u1))) if c1 > c0 => {
            Some(u1.saturating_sub(u0) as f64 / (c1 - c0) as f64)
        }
        _ => None,
    };
    Ok(KvTiming {
        round_trip,
        server_usec_per_call,
    })
}

/// The `usec_per_call` that `INFO commandstats` shows for `command` (an average
/// since the server started or its last `CONFIG RESETSTAT`), or None when the server
/// has no such section (the core answers INFO with its Server section only) or the
/// command was never called.
pub fn usec_per_call(kv: &mut Kv, command: &str) -> Option<f64> {
    let info = commandstats(kv)?;
    stat_field(&info, command, "usec_per_call")?.parse().ok()
}

/// `(calls, usec)` of `command` from `INFO commandstats`: `(0, 0)` if the server
/// keeps the statistics but the command was not called yet, None if it keeps none.
pub fn command_stats(kv: &mut Kv, command: &str) -> Option<(u64, u64)> {
    stats_in_info(&commandstats(kv)?, command)
}

/// [`command_stats`] of an `INFO commandstats` text already read.
pub fn stats_in_info(info: &str, command: &str) -> Option<(u64, u64)> {
    if !info.contains("# Commandstats") {
        return None;
    }
    let calls = stat_field(info, command, "calls").and_then(|v| v.parse().ok());
    let usec = stat_field(info, command, "usec").and_then(|v| v.parse().ok());
    Some((calls.unwrap_or(0), usec.unwrap_or(0)))
}

fn commandstats(kv: &mut Kv) -> Option<String> {
    redis::cmd("INFO").arg("commandstats").query(kv.conn()).ok()
}

/// One `name=value` field of the `cmdstat_<command>:` line.
fn stat_field<'a>(info: &'a str, command: &str, name: &str) -> Option<&'a str> {
    let wanted = format!("cmdstat_{}:", command.to_ascii_lowercase());
    let fields = info.lines().find_map(|l| l.strip_prefix(wanted.as_str()))?;
    fields.split(',').find_map(|kv| {
        let (k, v) = kv.split_once('=')?;
        (k == name).then_some(v.trim())
    })
}

/// Progress of a bulk load, on a terminal (see [`crate::progress`]).
pub struct Progress {
    phase: Phase,
}

impl Progress {
    pub fn new(label: impl Into<String>, total: u64) -> Progress {
        Progress {
            phase: Phase::new(label, Some(total)),
        }
    }

    pub fn advance(&mut self, n: u64) {
        self.phase.inc(n);
    }

    pub fn finish(&mut self) {
        self.phase.finish();
    }
}

/// Calls `load(start, end)` for consecutive batches of `[0, total)`, showing
/// progress under `label` on a terminal.
pub fn bulk_load(
    label: &str,
    total: usize,
    batch: usize,
    mut load: impl FnMut(usize, usize) -> Result<(), String>,
) -> Result<(), String> {
    let batch = batch.max(1);
    let mut progress = Progress::new(label, total as u64);
    let mut start = 0;
    while start < total {
        let end = (start + batch).min(total);
        load(start, end)?;
        progress.advance((end - start) as u64);
        start = end;
    }
    progress.finish();
    Ok(())
}

/// Adds `(score, member)` pairs to the zset `key` (already prefixed, see
/// [`Kv::key`]) with one `ZADD key score member` per pair, sent in pipelines of
/// `batch` commands.
pub fn zadd_pipelined<S: redis::ToRedisArgs, M: redis::ToRedisArgs>(
    kv: &mut Kv,
    key: &str,
    entries: &[(S, M)],
    batch: usize,
) -> Result<(), String> {
    let label = format!("{}: ZADD {key}", kv.name);
    let name = kv.name;
    bulk_load(&label, entries.len(), batch, |start, end| {
        let mut pipe = redis::pipe();
        for (score, member) in &entries[start..end] {
            pipe.cmd("ZADD").arg(key).arg(score).arg(member).ignore();
        }
        pipe.query::<()>(kv.conn())
            .map_err(|e| format!("{name}: ZADD pipeline failed: {}", error_text(&e)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_a_timing() {
        let t = Timing {
            calls: 2000,
            median_us: 12,
            p99_us: 30,
            max_us: 95,
            percentiles_us: [1, 2, 5, 9, 12, 14, 20, 30, 60, 95],
        };
        assert_eq!(t.to_string(), "median 12 µs, p99 30 µs (n=2000)");
        let cell = Cell::from(KvTiming {
            round_trip: t,
            server_usec_per_call: Some(1.26),
        });
        assert_eq!(
            cell.text,
            "median 12 µs, p99 30 µs (n=2000) · server 1.26 µs/call"
        );
        assert_eq!(
            (cell.median, cell.p99, cell.n),
            (Some(12.0), Some(30.0), Some(2000))
        );
        assert_eq!(cell.server_us, Some(1.26));
        assert_eq!(cell.percentiles[4], [50.0, 12.0]);
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(thousands(999), "999");
    }

    #[test]
    fn measures_every_call_but_not_the_warm_up() {
        let mut n = 0;
        let t = measure(5, 20, || {
            n += 1;
            Ok(())
        })
        .unwrap();
        assert_eq!(n, 25);
        assert_eq!(t.calls, 20);
        assert!(t.median_us >= 1 && t.median_us <= t.p99_us && t.p99_us <= t.max_us);
    }

    #[test]
    fn setup_runs_before_every_call_including_the_warm_up() {
        let mut log = Vec::new();
        let t = measure_with_setup(
            &mut log,
            1,
            2,
            |l| {
                l.push('s');
                Ok(())
            },
            |l| {
                l.push('f');
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(t.calls, 2);
        assert_eq!(log.iter().collect::<String>(), "sfsfsf");
    }

    #[test]
    fn reads_usec_per_call_from_commandstats() {
        let info = "# Commandstats\r\ncmdstat_zrange:calls=10,usec=25,usec_per_call=2.50,rejected_calls=0,failed_calls=0\r\ncmdstat_zrevrank:calls=3,usec=3,usec_per_call=1.00,rejected_calls=0,failed_calls=0\r\n";
        assert_eq!(stat_field(info, "ZRANGE", "usec_per_call"), Some("2.50"));
        assert_eq!(stat_field(info, "zrange", "usec"), Some("25"));
        assert_eq!(stat_field(info, "zrevrank", "calls"), Some("3"));
        assert_eq!(stat_field(info, "zincrby", "calls"), None);
        let core = "# Server\r\nredis_version:8.8.0\r\n";
        assert_eq!(stat_field(core, "zrange", "usec_per_call"), None);
    }

    #[test]
    fn bulk_load_covers_the_range_in_batches() {
        let mut seen = Vec::new();
        bulk_load("t", 2500, 1000, |a, b| {
            seen.push((a, b));
            Ok(())
        })
        .unwrap();
        assert_eq!(seen, [(0, 1000), (1000, 2000), (2000, 2500)]);
    }
}
