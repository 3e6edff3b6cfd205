//! zsc-sliding-window — the article's sliding-window rate limiter.
//!
//! Article 04, section 5. A script removes entries older than the window, counts
//! the rest and adds the request if under the limit. The article's test: the 4th
//! request of c-42 within 10 s is refused, c-99 is not. Then: why the member is a
//! random id and not the timestamp; the fixed window's double burst at a boundary;
//! and what 100,000 requests an hour cost in memory per client.

mod burst;
mod limiter;

use std::process::ExitCode;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use redislab_harness::jobs::now_ms;
use redislab_harness::report::Bounds;
use redislab_harness::{run, Cell, Chart, ChartKind, Kind, Kv, LabInfo, Recorder, Report};

use limiter::{fixed, sliding, sliding_cmd, uuid};

const LAB: LabInfo = LabInfo {
    id: "zsc-sliding-window",
    uses_pg: false,
};

/// 2026-01-01 00:01:00 UTC: a minute boundary for the fixed-window comparison.
const BOUNDARY_MS: i64 = 1_767_225_660_000;
const HOUR_MS: i64 = 3_600_000;
const PER_HOUR: usize = 100_000;

fn declare(r: &mut Report) {
    r.exact(
        "article-test",
        "c-42: 4 requests, limit 3, window 10 s (1 = allowed)",
        "1 1 1 0",
    );
    r.exact("per-client", "… then c-99's first request", "1");
    r.exact("slides", "… c-42 again 10 s later (clock advanced)", "1");
    r.row(
        "same-ms-uuid",
        "5 requests in one millisecond, member = random id: ZCARD",
        Kind::Exact,
        Some("5"),
    );
    r.row(
        "same-ms-ts",
        "… member = timestamp: ZCARD",
        Kind::Exact,
        Some("1"),
    );
    let burst = format!(
        "{} threads for {} ms on the real clock, limit {} per {} s",
        burst::THREADS,
        burst::BURST.as_millis(),
        burst::LIMIT,
        burst::WINDOW_MS / 1000
    );
    r.row(
        "burst-uuid-allowed",
        &format!("{burst}: allowed with random-id members"),
        Kind::Exact,
        None,
    );
    r.row("burst-uuid-sent", "… requests sent", Kind::Measured, None);
    for (key, label, min, max) in [
        (
            "burst-ts-allowed",
            "… allowed with timestamp members",
            101.0,
            1e7,
        ),
        (
            "burst-ts-counted",
            "… entries in the zset (ZCARD)",
            1.0,
            100.0,
        ),
        (
            "burst-ts-undercount",
            "… allowed − counted (the undercount)",
            1.0,
            1e7,
        ),
    ] {
        let row = r.row(key, label, Kind::Random, None);
        row.bounds = Some(Bounds { min, max });
        row.note = Some("depends on how many requests share a millisecond".into());
    }
    r.row("burst-ts-sent", "… requests sent", Kind::Measured, None);
    r.exact(
        "boundary-fixed",
        "limit 100/min: 100 requests at 00:00:59.x + 100 at 00:01:00.x; fixed window (INCR + EXPIRE) allows",
        "200",
    );
    r.row(
        "boundary-sliding",
        "… the sliding-window script allows",
        Kind::Exact,
        Some("100"),
    );
    r.exact("boundary-ratio", "… fixed ÷ sliding at the boundary", "2×");
    r.row(
        "hour-card",
        "100,000 requests over one hour, one client: ZCARD",
        Kind::Exact,
        None,
    );
    r.row("hour-encoding", "… OBJECT ENCODING", Kind::Exact, None);
    let row = r.row(
        "hour-bytes",
        "… MEMORY USAGE key SAMPLES 0 (bytes)",
        Kind::Measured,
        None,
    );
    row.band = Some(1.3);
    let row = r.row(
        "hour-per-request",
        "… bytes per request",
        Kind::Measured,
        None,
    );
    row.band = Some(1.3);
}

fn conn(kv: &Kv) -> Result<redis::Connection, String> {
    kv.new_connection()
}

fn article_test(kv: &mut Kv, rec: &mut Recorder, rng: &mut ChaCha8Rng) -> Result<(), String> {
    let mut c = conn(kv)?;
    let (c42, c99) = (kv.key("rate:c-42"), kv.key("rate:c-99"));
    let t = now_ms();
    let answers = (0..4)
        .map(|i| sliding(&mut c, &c42, t + i, 10_000, 3, &uuid(rng)).map(|a| a.to_string()))
        .collect::<Result<Vec<_>, _>>()?;
    rec.put("article-test", answers.join(" "));
    rec.put(
        "per-client",
        sliding(&mut c, &c99, t + 4, 10_000, 3, &uuid(rng))?.to_string(),
    );
    rec.put(
        "slides",
        sliding(&mut c, &c42, t + 10_004, 10_000, 3, &uuid(rng))?.to_string(),
    );

    let t = now_ms();
    for (row, key) in [
        ("same-ms-uuid", "rate:same:uuid"),
        ("same-ms-ts", "rate:same:ts"),
    ] {
        let key = kv.key(key);
        for _ in 0..5 {
            let member = if row == "same-ms-ts" {
                t.to_string()
            } else {
                uuid(rng)
            };
            sliding(&mut c, &key, t, 10_000, 100, &member)?;
        }
        rec.put(row, kv.reply(&["ZCARD", &key]));
    }
    Ok(())
}

fn boundary(kv: &mut Kv, rec: &mut Recorder, rng: &mut ChaCha8Rng) -> Result<(), String> {
    let mut c = conn(kv)?;
    let (fixed_key, sliding_key) = (kv.key("rate:fixed:c-7"), kv.key("rate:sliding:c-7"));
    let times = (0..100)
        .map(|i| BOUNDARY_MS - 1_000 + i * 9)
        .chain((0..100).map(|i| BOUNDARY_MS + i * 9));
    let (mut by_fixed, mut by_sliding) = (0, 0);
    // Requests allowed so far, at each request's time relative to the boundary.
    let (mut fixed_curve, mut sliding_curve) = (Vec::new(), Vec::new());
    for t in times {
        by_fixed += fixed(&mut c, &fixed_key, t, 60_000, 100)?;
        by_sliding += sliding(&mut c, &sliding_key, t, 60_000, 100, &uuid(rng))?;
        let at = (t - BOUNDARY_MS) as f64;
        fixed_curve.push([at, by_fixed as f64]);
        sliding_curve.push([at, by_sliding as f64]);
    }
    rec.put(
        "boundary-fixed",
        Cell::count(by_fixed as u64, "")
            .with_text(by_fixed.to_string())
            .with_points(fixed_curve),
    );
    rec.put(
        "boundary-sliding",
        Cell::count(by_sliding as u64, "")
            .with_text(by_sliding.to_string())
            .with_points(sliding_curve),
    );
    rec.put(
        "boundary-ratio",
        format!("{}×", by_fixed as f64 / by_sliding.max(1) as f64),
    );
    Ok(())
}

fn hour(kv: &mut Kv, rec: &mut Recorder, rng: &mut ChaCha8Rng) -> Result<(), String> {
    let key = kv.key("rate:busy");
    let t0 = now_ms() - HOUR_MS;
    let step = HOUR_MS / PER_HOUR as i64;
    for batch in 0..PER_HOUR / 1_000 {
        let mut p = redis::pipe();
        for i in batch * 1_000..(batch + 1) * 1_000 {
            let now = t0 + i as i64 * step;
            p.add_command(sliding_cmd(&key, now, HOUR_MS, 1_000_000, &uuid(rng)))
                .ignore();
        }
        p.query::<()>(kv.conn()).map_err(|e| e.to_string())?;
    }
    rec.put("hour-card", kv.reply(&["ZCARD", &key]));
    rec.put("hour-encoding", kv.reply(&["OBJECT", "ENCODING", &key]));
    let bytes = kv.reply(&["MEMORY", "USAGE", &key, "SAMPLES", "0"]);
    match bytes.parse::<f64>() {
        Ok(b) => {
            let per = b / PER_HOUR as f64;
            rec.put("hour-bytes", Cell::num(b, "B").with_text(bytes));
            rec.put(
                "hour-per-request",
                Cell::num(per, "B/request").with_text(format!("{per:.1}")),
            );
        }
        Err(_) => rec.put("hour-bytes", Cell::error(bytes)),
    }
    Ok(())
}

/// Requests allowed against time around the minute boundary.
fn chart(r: &mut Report) {
    r.chart(
        Chart::new("boundary", ChartKind::Xy, "100 requests just before a minute boundary and 100 just after (limit 100/min)")
            .x("ms from the minute boundary", false)
            .y("requests allowed so far", false)
            .cell_points("redis", "redis · fixed window (INCR + EXPIRE)", "boundary-fixed")
            .cell_points("core", "core · fixed window", "boundary-fixed")
            .cell_points("redis", "redis · sliding window (the zset script)", "boundary-sliding")
            .cell_points("core", "core · sliding window", "boundary-sliding")
            .marker(0.0, "minute boundary")
            .caption("The fixed window's counter starts again at the boundary, so 200 requests pass in under two seconds; the sliding window still sees the first 100 in its last 60 s and refuses everything after them."),
    );
}

fn main() -> ExitCode {
    run(LAB, |ctx| {
        declare(&mut ctx.report);
        let seed = ctx.seed;
        ctx.each_kv(|kv, rec| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            article_test(kv, rec, &mut rng)?;
            for ts in [false, true] {
                let b = burst::run(kv, ts, seed)?;
                let name = if ts { "burst-ts" } else { "burst-uuid" };
                rec.put(&format!("{name}-allowed"), b.allowed.to_string());
                rec.put(&format!("{name}-sent"), b.sent.to_string());
                if ts {
                    rec.put("burst-ts-counted", b.counted.to_string());
                    rec.put(
                        "burst-ts-undercount",
                        (b.allowed as i64 - b.counted).to_string(),
                    );
                }
            }
            boundary(kv, rec, &mut rng)?;
            hour(kv, rec, &mut rng)
        })?;
        ctx.note("The script is the article's, unchanged; the lab passes now (ms), window, limit and a member, like the article's Java (clock.millis(), UUID.randomUUID()). The first rows and the boundary rows use a clock the lab sets, as the article's MutableClock suggestion; the burst rows use the real clock.");
        ctx.note("Timestamp members: every request in one millisecond writes the same member, so the zset counts one where several passed; ZCARD stays below the limit far longer and many more requests are let through.");
        chart(&mut ctx.report);
        ctx.note("Fixed window: counter key per minute (INCR, EXPIRE 60 on the first); 100 requests in the last second of a minute and 100 in the first second of the next all pass: 200 in under 2 s. The sliding window counts the previous 60 s and stops at 100.");
        ctx.note("Memory: each request is a zset entry (36-byte UUID member + score, in the skiplist and the dict), so one busy client at 100,000 requests/hour holds the whole hour's entries.");
        Ok(())
    })
}
