//! 05h-random — ZRANDMEMBER and HRANDFIELD are not uniform.
//!
//! Article 05, section 3.9. A single draw on a big zset or hash asks Redis's dict
//! for a "fair" random key: it picks a random bucket, samples up to 15 keys from
//! the next few buckets and returns one of them. A key that follows a run of empty
//! buckets is reached from more starting points, so some members come up five
//! times as often as others. The core keeps a Redis-faithful dict and shows the
//! same bias for the same reason. The fair alternative is to draw an index in the
//! application and read that rank with ZRANGE key i i.

use std::process::ExitCode;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use redislab_harness::{run, Kind, Kv, LabInfo, Recorder, Report};
use redislab_harness::{Cell, Chart, ChartKind};

const LAB: LabInfo = LabInfo {
    id: "05h-random",
    uses_pg: false,
};

const MEMBERS: usize = 1_000;
const DRAWS: usize = 200_000;
const BATCH: usize = 1_000;
/// Width of a histogram bin, in draws.
const BIN: u64 = 10;

/// How often each of the `MEMBERS` names came up.
struct Tally {
    counts: Vec<u64>,
}

impl Tally {
    fn new() -> Tally {
        Tally {
            counts: vec![0; MEMBERS],
        }
    }

    fn add(&mut self, name: &str) -> Result<(), String> {
        let i: usize = name
            .trim_start_matches('m')
            .parse()
            .map_err(|_| format!("unexpected member {name:?}"))?;
        self.counts[i] += 1;
        Ok(())
    }

    fn chi_square(&self) -> f64 {
        let total: u64 = self.counts.iter().sum();
        let expected = total as f64 / MEMBERS as f64;
        self.counts
            .iter()
            .map(|&c| (c as f64 - expected).powi(2) / expected)
            .sum()
    }

    fn record(&self, rec: &mut Recorder, prefix: &str) {
        let (min, max) = (
            *self.counts.iter().min().unwrap(),
            *self.counts.iter().max().unwrap(),
        );
        rec.put(
            &format!("{prefix}-min"),
            Cell::count(min, "draws").with_text(min.to_string()),
        );
        rec.put(
            &format!("{prefix}-max"),
            Cell::count(max, "draws").with_text(max.to_string()),
        );
        let chi = self.chi_square();
        rec.put(
            &format!("{prefix}-chi2"),
            Cell::num(chi, "").with_text(format!("{chi:.0}")),
        );
        // The shape: how many members were drawn 0–9, 10–19, ... times.
        let mut bins = std::collections::BTreeMap::<u64, u64>::new();
        for &c in &self.counts {
            *bins.entry(c / BIN * BIN).or_default() += 1;
        }
        let points = bins
            .iter()
            .map(|(lo, n)| [(*lo + BIN / 2) as f64, *n as f64])
            .collect();
        let far = self
            .counts
            .iter()
            .filter(|&&c| !(150..=250).contains(&c))
            .count();
        let share = far as f64 / MEMBERS as f64 * 100.0;
        rec.put(
            &format!("{prefix}-hist"),
            Cell::num(share, "%")
                .with_text(format!(
                    "{} of members drawn < 150 or > 250 times",
                    redislab_harness::fmt::quantity(share, "%")
                ))
                .with_points(points),
        );
    }
}

fn member(i: usize) -> String {
    format!("m{i:03}")
}

/// Rows for one experiment: min, max, chi-square, each checked by bounds.
fn declare(r: &mut Report, prefix: &str, label: &str, article: [&str; 3], biased: bool) {
    let (chi, min, max) = if biased {
        ((3_000.0, 60_000.0), (0.0, 170.0), (230.0, 2_000.0))
    } else {
        // A uniform draw: chi-square ≈ 999 ± 45, counts 200 ± ~45.
        ((800.0, 1_250.0), (120.0, 200.0), (200.0, 290.0))
    };
    for ((suffix, what, figure), (lo, hi)) in [
        ("min", "fewest draws of one member", article[0]),
        ("max", "most draws", article[1]),
        ("chi2", "chi-square", article[2]),
    ]
    .into_iter()
    .zip([min, max, chi])
    {
        let row = r.row(
            &format!("{prefix}-{suffix}"),
            &format!("{label}: {what}"),
            Kind::Random,
            Some(figure),
        );
        row.bounds = Some(redislab_harness::report::Bounds { min: lo, max: hi });
    }
    let (lo, hi) = if biased { (20.0, 100.0) } else { (0.0, 2.0) };
    r.random(
        &format!("{prefix}-hist"),
        &format!("{label}: share of members far from 200 (histogram in the report)"),
        None,
    )
    .bounds(lo, hi);
}

/// Members per bin of `BIN` draws if every member had the same chance: 1,000 ×
/// the binomial(200,000, 1/1,000) mass of the bin, by the normal approximation
/// (mean 200, sd ≈ 14.1). The lab computes it; the chart draws it as a reference.
fn fair_expectation() -> Vec<(f64, f64)> {
    let mean = DRAWS as f64 / MEMBERS as f64;
    let sd = (mean * (1.0 - 1.0 / MEMBERS as f64)).sqrt();
    let phi = |x: f64| 0.5 * (1.0 + erf((x - mean) / (sd * std::f64::consts::SQRT_2)));
    (100..300)
        .step_by(BIN as usize)
        .map(|lo| {
            let lo = lo as f64;
            (
                lo + BIN as f64 / 2.0,
                MEMBERS as f64 * (phi(lo + BIN as f64) - phi(lo)),
            )
        })
        .collect()
}

/// The error function (Abramowitz & Stegun 7.1.26, |error| < 1.5e-7).
fn erf(x: f64) -> f64 {
    let t = 1.0 / (1.0 + 0.327_591_1 * x.abs());
    let y = 1.0
        - (((((1.061_405_429 * t - 1.453_152_027) * t) + 1.421_413_741) * t - 0.284_496_736) * t
            + 0.254_829_592)
            * t
            * (-x * x).exp();
    y.copysign(x)
}

fn main() -> ExitCode {
    run(LAB, |ctx| {
        let r = &mut ctx.report;
        r.row(
            "zset-encoding",
            "OBJECT ENCODING of the 1,000-member zset",
            Kind::Exact,
            Some("skiplist"),
        );
        r.row(
            "hash-encoding",
            "OBJECT ENCODING of the 1,000-field hash",
            Kind::Exact,
            Some("hashtable"),
        );
        declare(
            r,
            "zrand",
            "200,000 × ZRANDMEMBER",
            ["65", "378", "13829"],
            true,
        );
        declare(
            r,
            "hrand",
            "200,000 × HRANDFIELD",
            ["67", "388", "13436"],
            true,
        );
        declare(
            r,
            "fair",
            "200,000 × ZRANGE z i i, i uniform in [0, ZCARD)",
            ["-", "-", "994"],
            false,
        );
        let seed = ctx.seed;
        ctx.each_kv(|kv, rec| draws(kv, rec, seed))?;
        ctx.report.chart(
            Chart::new("draws", ChartKind::Xy, "How often each of 1,000 members was drawn in 200,000 draws")
                .x("draws of one member (bins of 10)", false)
                .y("members", false)
                .cell_points("redis", "redis · ZRANDMEMBER", "zrand-hist")
                .cell_points("core", "core · ZRANDMEMBER", "zrand-hist")
                .cell_points("redis", "redis · fair (random index + ZRANGE i i)", "fair-hist")
                .cell_points("core", "core · fair", "fair-hist")
                .reference("a fair draw: binomial(200,000, 1/1,000)", fair_expectation())
                .caption("A fair draw piles up around 200 like the binomial reference. ZRANDMEMBER picks a random bucket of the hash table, then a random entry of that bucket's chain: members sharing a bucket are drawn less, members alone in one more, so its counts spread from tens to hundreds — on the core too, for the same reason."),
        );
        ctx.note(format!("Each backend: {MEMBERS} members added one by one, {DRAWS} single draws sent in pipelines of {BATCH}; expected 200 per member; a uniform draw gives chi-square ≈ 999 (999 degrees of freedom)."));
        ctx.note("Redis seeds its dict hash at random on every start, so the exact counts change from run to run (and between Redis and the core); the bias does not. The rows are checked by bounds.");
        Ok(())
    })
}

fn draws(kv: &mut Kv, rec: &mut Recorder, seed: u64) -> Result<(), String> {
    let z = kv.key("z");
    let h = kv.key("h");
    let mut load = redis::pipe();
    for i in 0..MEMBERS {
        load.cmd("ZADD").arg(&z).arg(i).arg(member(i)).ignore();
        load.cmd("HSET").arg(&h).arg(member(i)).arg(i).ignore();
    }
    load.query::<()>(kv.conn())
        .map_err(|e| format!("{}: load: {e}", kv.name))?;
    rec.put("zset-encoding", kv.reply(&["OBJECT", "ENCODING", &z]));
    rec.put("hash-encoding", kv.reply(&["OBJECT", "ENCODING", &h]));

    tally(kv, |p| {
        p.cmd("ZRANDMEMBER").arg(&z);
    })?
    .record(rec, "zrand");
    tally(kv, |p| {
        p.cmd("HRANDFIELD").arg(&h);
    })?
    .record(rec, "hrand");
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    tally(kv, |p| {
        let i = rng.gen_range(0..MEMBERS);
        p.cmd("ZRANGE").arg(&z).arg(i).arg(i);
    })?
    .record(rec, "fair");
    Ok(())
}

/// Sends `DRAWS` commands built by `one` in pipelines and counts the members.
fn tally(kv: &mut Kv, mut one: impl FnMut(&mut redis::Pipeline)) -> Result<Tally, String> {
    let mut tally = Tally::new();
    for _ in 0..DRAWS / BATCH {
        let mut p = redis::pipe();
        for _ in 0..BATCH {
            one(&mut p);
        }
        let replies: Vec<redis::Value> = p
            .query(kv.conn())
            .map_err(|e| format!("{}: {e}", kv.name))?;
        for reply in replies {
            match reply {
                redis::Value::BulkString(b) => tally.add(&String::from_utf8_lossy(&b))?,
                redis::Value::Array(items) if items.len() == 1 => {
                    tally.add(&redislab_harness::backend::render(&items[0]))?
                }
                other => return Err(format!("{}: unexpected reply {other:?}", kv.name)),
            }
        }
    }
    Ok(tally)
}
