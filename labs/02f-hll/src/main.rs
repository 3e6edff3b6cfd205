//! 02f-hll — HyperLogLog: error, size and encoding by true cardinality.
//!
//! Article 02, section 3.7. One stream of distinct elements goes into one key; at
//! each checkpoint (100 … 10,000,000 true elements) the lab reads PFCOUNT, its
//! error, MEMORY USAGE and PFDEBUG ENCODING. The sparse→dense switch is then found
//! by bisection on the element count. The article's week: 7 days × 200,000 viewers,
//! consecutive days sharing half → 800,000 distinct, counted over 7 keys, merged,
//! and counted again from the cache. PFADD answers 0 when no register changes,
//! which can happen for an element never seen: the lab finds one.
//!
//! The core's sketch is Redis's byte for byte, so every count is exact between the
//! two backends (same elements, same hash, same registers).
//!
//! Then the core in process ([`inproc`]): its real heap per dense and sparse
//! sketch beside Redis's `used_memory` growth, and its ns per PFADD, PFCOUNT of
//! 1/3/10 dense keys and PFMERGE of 3/10 beside Redis's `usec_per_call`, with the
//! dense merge's AVX2 path and its scalar loop (PFDEBUG SIMD).

mod inproc;

use std::process::ExitCode;
use std::time::Instant;

use redislab_core::hll;
use redislab_harness::alloc::CountingAlloc;
use redislab_harness::heap;
use redislab_harness::{run, Cell, Chart, ChartKind, Kind, Kv, LabInfo, Recorder};

/// Counts the heap while the in-process core builds sketches (off otherwise).
#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc::new();

const LAB: LabInfo = LabInfo {
    id: "02f-hll",
    uses_pg: false,
};

/// True cardinalities of the article's table, with its PFCOUNT, bytes, encoding.
const TABLE: &[(u64, &str, &str, &str)] = &[
    (100, "99", "408", "sparse"),
    (1_000, "994", "2584", "sparse"),
    (1_500, "1497", "3096", "sparse"),
    (2_000, "2006", "14360", "dense"),
    (10_000, "9977", "14360", "dense"),
    (100_000, "100420", "14360", "dense"),
    (1_000_000, "1005024", "14360", "dense"),
    (10_000_000, "10089687", "14360", "dense"),
];

const BATCH: u64 = 1_000;
/// One standard error of a 16,384-register HyperLogLog, in %: 1.04/√m.
const STD_ERR_PCT: f64 = 104.0 / 128.0;
const DAYS: u64 = 7;
const VIEWERS: u64 = 200_000;

pub fn viewer(i: u64) -> String {
    format!("u{i}")
}

fn element(i: u64) -> String {
    format!("e:{i}")
}

/// PFADD of elements `from..to` built by `name`, pipelined in batches.
fn pfadd_range(
    kv: &mut Kv,
    key: &str,
    from: u64,
    to: u64,
    name: fn(u64) -> String,
) -> Result<(), String> {
    let mut i = from;
    while i < to {
        let mut p = redis::pipe();
        for _ in 0..20 {
            if i >= to {
                break;
            }
            let end = (i + BATCH).min(to);
            let cmd = p.cmd("PFADD").arg(key);
            for j in i..end {
                cmd.arg(name(j));
            }
            cmd.ignore();
            i = end;
        }
        p.query::<()>(kv.conn())
            .map_err(|e| format!("{}: PFADD: {e}", kv.name))?;
    }
    Ok(())
}

fn int(kv: &mut Kv, args: &[&str]) -> Result<u64, String> {
    kv.reply(args)
        .parse()
        .map_err(|_| format!("{}: {:?} did not answer a number", kv.name, args))
}

/// One call's time, µs (a single call: the article timed one).
fn micros(start: Instant) -> Cell {
    Cell::count(start.elapsed().as_micros() as u64, "µs")
}

/// `n` calls in `since`, as a rate.
fn rate(n: u64, since: Instant) -> Cell {
    Cell::num((n as f64 / since.elapsed().as_secs_f64()).round(), "ops/s")
}

fn main() -> ExitCode {
    // On only around the memory rows' builds (inproc::heap_steps).
    ALLOC.set_counting(false);
    run(LAB, |ctx| {
        let scale = ctx.scale;
        let top = (10_000_000.0 * scale).round() as u64;
        let table: Vec<_> = TABLE.iter().filter(|t| t.0 <= top.max(2000)).collect();
        let r = &mut ctx.report;
        for &&(n, count, bytes, enc) in &table {
            r.exact(&format!("count-{n}"), &format!("{n} true: PFCOUNT"), count);
            let row = r.row(
                &format!("err-{n}"),
                &format!("{n} true: error %"),
                Kind::Exact,
                None,
            );
            row.reference = Some(Cell::text(format!("±{STD_ERR_PCT:.2} (1 σ)")));
            row.note = Some("(PFCOUNT − true) / true; reference: one standard error 1.04/√m (m = 16,384) and this error in standard errors".into());
            r.exact(
                &format!("bytes-{n}"),
                &format!("{n} true: MEMORY USAGE"),
                bytes,
            );
            if enc == "sparse" {
                r.row(
                    &format!("strlen-{n}"),
                    &format!("{n} true: STRLEN (sparse sketch bytes)"),
                    Kind::Exact,
                    None,
                );
            }
            r.exact(
                &format!("enc-{n}"),
                &format!("{n} true: PFDEBUG ENCODING"),
                enc,
            );
        }
        r.exact(
            "switch-n",
            "sparse→dense: fewest elements that make it dense (bisection)",
            "1500 < n ≤ 2000",
        );
        r.row(
            "switch-before",
            "… MEMORY USAGE with one element fewer",
            Kind::Exact,
            None,
        );
        r.row(
            "switch-sparse-len",
            "… STRLEN of the sparse sketch just before (limit 3000)",
            Kind::Exact,
            None,
        );
        let days = (VIEWERS as f64 * scale).round().max(1000.0) as u64;
        let truth = days / 2 * (DAYS - 1) + days;
        // The true count is the lab's arithmetic (the days it generated), so it is
        // a reference, not a backend's answer.
        r.exact(
            "week-true",
            "7 days × viewers, 50% overlap: distinct viewers (generated)",
            "800000",
        )
        .reference(truth.to_string());
        r.exact(
            "week-pfcount7",
            "PFCOUNT d1 … d7 (merged on the fly)",
            "807767",
        );
        r.row("week-pfcount7-us", "… time, µs", Kind::Measured, Some("34"));
        r.exact("week-merge", "PFMERGE week d1 … d7", "OK");
        r.row("week-merge-us", "… time, µs", Kind::Measured, Some("37"));
        r.exact("week-count", "PFCOUNT week", "807767");
        r.row(
            "week-count-us",
            "… time, µs (stale cache: computed and stored)",
            Kind::Measured,
            Some("6"),
        );
        r.row(
            "week-count2-us",
            "second PFCOUNT week, µs (cached)",
            Kind::Measured,
            Some("7"),
        );
        r.exact("week-bytes", "MEMORY USAGE week", "14360");
        r.exact("week-scard", "SCARD of the same viewers as a set", "800000");
        r.row(
            "week-set-bytes",
            "MEMORY USAGE of that set",
            Kind::Measured,
            Some("34677578"),
        )
        .band(1.2);
        r.measured(
            "week-set-bgsave-bytes",
            "… the same set, one SADD per viewer while a BGSAVE child runs (redis this run started)",
            Some("34677578"),
        )
        .band(1.2)
        .note("a fork shares the parent's pages, so Redis grows a hash table then only past 4 elements a bucket: the set keeps 2^19 buckets instead of 2^20");
        r.measured(
            "week-set-bgsave-diff",
            "… MEMORY USAGE of the set minus this one",
            Some("4,194,304 B (34,677,578 vs 38,871,882)"),
        )
        .band(1.01);
        r.measured(
            "week-set-vs-hll",
            "… the set's bytes ÷ the HyperLogLog's",
            Some("2,415× (34,677,578 / 14,360)"),
        )
        .band(1.3);
        r.exact("pfadd-old", "PFADD week u5 (already counted)", "0");
        r.exact(
            "new-element",
            "a brand-new viewer whose register is already as high",
            "brand-new-user",
        );
        r.exact("pfadd-new", "PFADD week <that viewer>", "0");
        r.exact(
            "count-after-new",
            "PFCOUNT week after it (unchanged)",
            "807767",
        );
        for (key, label) in [
            (
                "pfadd-ops",
                "PFADD throughput, 1 element per command, pipelined, ops/s",
            ),
            (
                "pfcount-ops",
                "PFCOUNT one dense key (cached), pipelined, ops/s",
            ),
            (
                "pfcount7-ops",
                "PFCOUNT over the 7 day keys, pipelined, ops/s",
            ),
        ] {
            r.row(key, label, Kind::Measured, None);
            r.measured(&format!("{key}-ratio"), "… core ÷ redis (one run)", None)
                .band(3.0);
        }
        let prefix = ctx
            .redis
            .as_ref()
            .or(ctx.core.as_ref())
            .map(|kv| kv.key(""))
            .unwrap_or_default();
        let cases = inproc::heap_cases(&prefix, truth);
        inproc::declare(&mut ctx.report, &cases);
        // Only a redis-server this run started gets a BGSAVE (it writes a file).
        let redis_pid = ctx.redis_pid;
        ctx.each_kv(|kv, rec| {
            table_rows(kv, rec, &table)?;
            switch_rows(kv, rec)?;
            let fork_server = if kv.name == "redis" { redis_pid } else { None };
            week_rows(kv, rec, days, truth, fork_server)?;
            throughput_rows(kv, rec)
        })?;
        for key in ["pfadd-ops", "pfcount-ops", "pfcount7-ops"] {
            ctx.report.core_over_redis(key, &format!("{key}-ratio"));
        }
        {
            let core = ctx.core.is_some();
            let mut recs = heap::measure(&ALLOC, core, ctx.redis.as_mut(), &cases)?;
            inproc::time_steps(
                core,
                ctx.redis.as_mut(),
                redis_pid.is_some(),
                &prefix,
                &mut recs,
            )?;
            for rec in recs {
                ctx.report.merge(rec)?;
            }
        }
        // ±1.04/√m with m = 16,384 registers, in %: the standard error.
        let se = 104.0 / (16_384f64).sqrt();
        let xs: Vec<f64> = table.iter().map(|t| t.0 as f64).collect();
        let (lo, hi) = (xs[0], *xs.last().unwrap());
        ctx.report.chart(
            Chart::new("hll-error", ChartKind::Xy, "PFCOUNT error against the true cardinality")
                .x("true cardinality (log)", true)
                .y("error, %", false)
                .kv_rows(None, xs.iter().map(|&x| (x, format!("err-{x}"))).collect::<Vec<_>>())
                .reference("+1.04/√m = +0.81% (one standard error)", [(lo, se), (hi, se)])
                .reference("−1.04/√m", [(lo, -se), (hi, -se)])
                .caption("Every count lands inside a few standard errors of 1.04/√16384 = 0.81%, from 100 to 10 million elements, in 12 KB (dense) or less (sparse). The core's points sit on Redis's: their sketches are byte-identical."),
        );
        ctx.note(format!("Elements are e:0, e:1, … added in PFADDs of {BATCH}; the table's checkpoints are points of one growing stream, up to {} (--scale {scale}).", redislab_harness::timing::thousands(top.max(2000))));
        ctx.note("Counts differ from the article's because its elements differ; they are exact between the core and Redis, whose sketches are byte-identical. The error stays within about 3 × 0.81% (1.04/√16384).");
        ctx.note(format!("The article's \"errors within ±1%\" is about 1.2 standard errors (1.04/√16384 = {STD_ERR_PCT:.2}%): a count lands outside ±1 σ about a third of the time, so 1,500's −1.07% (−1.32 σ) is ordinary, not a fault; the reference column and each error's σ say so."));
        ctx.note("100 elements: MEMORY USAGE 472 where the article has 408. A sparse sketch is a list of opcodes (runs of empty registers, runs of equal values), so its length depends on which registers the elements hit: the STRLEN row shows this sketch's length; its SDS lands in jemalloc's 448-byte class, while the article's elements gave a sketch one class (64 B) smaller. From 1,000 elements on the sizes agree.");
        ctx.note("The set of 800,000 viewers: MEMORY USAGE 38,871,882 B where the article has 34,677,578 B, exactly 4,194,304 B = 2^19 buckets × 8 B less. The set row built again while a BGSAVE child is alive gives the article's figure to the byte: Redis does not grow a hash table past 2^19 buckets while a fork shares its memory (until 4 elements a bucket). So the article's server most likely had a save running while the set grew, as a default redis-server's save rules (60 s / 10,000 changes) start one during 800,000 SADDs. The harness's servers run with save \"\", so the first row grew to 2^20 buckets. The core does not fork: it has no such row.");
        ctx.note("A dense sketch is a 12,304-byte string (16-byte header + 16,384 × 6 bits) whose SDS takes jemalloc's 14,336-byte class; MEMORY USAGE adds the key object. The sparse→dense row: the sketch goes dense when an edit would take the string past hll-sparse-max-bytes (3000) or a register needs a value above 32.");
        ctx.note("Real memory (heap-* rows): the core's figure is its live heap in this process, counted by a global allocator around sending the same PFADDs to a fresh in-process Server (requested bytes; 'usable' is what glibc malloc set aside); Redis's is INFO memory used_memory after minus before the same PFADDs, pipelined (jemalloc's count, so a dense sketch shows its 14,336-byte size class plus the key's objects). MEMORY USAGE, above, is Redis's model on both backends and is not this figure. The set row is the week's viewers again (u0, u1, …), as SADDs of 1,000 members. The core keeps a sketch in a Vec of its exact length (12,304 B dense), where jemalloc rounds Redis's up to 14,336 B.");
        ctx.note("In process (ip-* rows): the core's Server is called directly (run, then RESP2 encode into a reused buffer), each call timed on its own after a warm-up; Redis's figure is INFO commandstats' usec difference over exactly its timed calls (its own work and writing the reply into the client buffer, not the socket). Each command is timed in 3 rounds, the core and then Redis straight after in each, on the same 10 dense keys of 20,000 elements (consecutive keys share half); each side keeps its round with the lowest mean (on this shared machine a preempted round inflates one side's mean only). The ratio divides means, as usec_per_call is one; the core's median over Redis's mean is shown beside it. On a loaded machine the mean is the harsher figure for the core: its timed loop is CPU-bound and is preempted mid-call at the end of each time slice (a few calls of milliseconds lift the mean above the p99), while redis-server sleeps between requests and is rarely preempted inside one. The 10-key PFCOUNT and PFMERGE are timed again with PFDEBUG SIMD OFF: the dense merge (and PFMERGE's write-back) then take the scalar loop on both (Redis only when this run started it: the switch is server-wide). A ratio below 1 means the core's call is cheaper than Redis's own server-side time; the ratios are within one run and carry a band (but the single-key PFADD and PFCOUNT ratios, a few hundred ns on each side, swing too far between runs and are reported only), the ns figures are reported only.");
        ctx.note("The set of viewers is built on both backends (the core models Redis's set encodings and their MEMORY USAGE). The core is reached through its own RESP listener, so its timings include that hop.");
        Ok(())
    })
}

fn table_rows(
    kv: &mut Kv,
    rec: &mut Recorder,
    table: &[&(u64, &str, &str, &str)],
) -> Result<(), String> {
    let key = kv.key("hll");
    let mut added = 0;
    for &&(n, ..) in table {
        pfadd_range(kv, &key, added, n, element)?;
        added = n;
        let count = int(kv, &["PFCOUNT", &key])?;
        rec.put(&format!("count-{n}"), count.to_string());
        let err = (count as f64 - n as f64) / n as f64 * 100.0;
        rec.put(
            &format!("err-{n}"),
            Cell::num(err, "%").with_text(format!("{err:.2} ({:+.2} σ)", err / STD_ERR_PCT)),
        );
        rec.put(&format!("bytes-{n}"), kv.reply(&["MEMORY", "USAGE", &key]));
        if n < 2_000 {
            rec.put(&format!("strlen-{n}"), kv.reply(&["STRLEN", &key]));
        }
        rec.put(
            &format!("enc-{n}"),
            kv.reply(&["PFDEBUG", "ENCODING", &key]),
        );
    }
    kv.cmd(&["DEL", &key])?;
    Ok(())
}

/// Whether the first `n` elements leave the sketch dense; also its size and length.
fn probe(kv: &mut Kv, n: u64) -> Result<(bool, String, String), String> {
    let key = kv.key("probe");
    kv.cmd(&["DEL", &key])?;
    pfadd_range(kv, &key, 0, n, element)?;
    let dense = kv.reply(&["PFDEBUG", "ENCODING", &key]) == "dense";
    Ok((
        dense,
        kv.reply(&["MEMORY", "USAGE", &key]),
        kv.reply(&["STRLEN", &key]),
    ))
}

fn switch_rows(kv: &mut Kv, rec: &mut Recorder) -> Result<(), String> {
    // Sparse at lo, dense at hi.
    let (mut lo, mut hi) = (1u64, 4_000u64);
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        if probe(kv, mid)?.0 {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    rec.put("switch-n", hi.to_string());
    let (_, bytes, len) = probe(kv, lo)?;
    rec.put("switch-before", bytes);
    rec.put("switch-sparse-len", len);
    kv.cmd(&["DEL", &kv.key("probe")])?;
    Ok(())
}

/// SADD of viewers `0..n` to `set`, pipelined in batches.
fn add_viewers(kv: &mut Kv, set: &str, n: u64) -> Result<(), String> {
    let mut i = 0;
    while i < n {
        let mut p = redis::pipe();
        for _ in 0..20 {
            let end = (i + BATCH).min(n);
            let cmd = p.cmd("SADD").arg(set);
            for j in i..end {
                cmd.arg(viewer(j));
            }
            cmd.ignore();
            i = end;
            if i >= n {
                break;
            }
        }
        p.query::<()>(kv.conn()).map_err(|e| format!("SADD: {e}"))?;
    }
    Ok(())
}

/// The set built again while a BGSAVE child is alive (kept alive by
/// rdb-key-save-delay): Redis then holds back the hash table's growth (it resizes
/// only past 4 elements a bucket while a fork shares its pages), so the set keeps
/// fewer buckets. Only on a redis-server this run started (`pid`); the child is
/// stopped with SIGUSR1, the signal Redis itself uses to cancel a save.
fn set_during_bgsave(kv: &mut Kv, set: &str, n: u64, pid: u32) -> Result<u64, String> {
    kv.cmd(&["CONFIG", "SET", "rdb-key-save-delay", "1000000"])?;
    kv.cmd(&["BGSAVE"])?;
    let result = (|| {
        // One member per SADD, as an application adds viewers: a SADD of many
        // members sizes the table for all of them at once and ends elsewhere
        // (2^18 buckets, measured).
        let mut i = 0;
        while i < n {
            let mut p = redis::pipe();
            for j in i..(i + BATCH).min(n) {
                p.cmd("SADD").arg(set).arg(viewer(j)).ignore();
            }
            i = (i + BATCH).min(n);
            p.query::<()>(kv.conn()).map_err(|e| format!("SADD: {e}"))?;
        }
        if !kv
            .reply(&["INFO", "persistence"])
            .contains("rdb_bgsave_in_progress:1")
        {
            return Err("the BGSAVE child ended before the set was built".into());
        }
        int(kv, &["MEMORY", "USAGE", set])
    })();
    let children =
        std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default();
    for child in children.split_whitespace() {
        let _ = std::process::Command::new("kill")
            .args(["-USR1", child])
            .status();
    }
    kv.cmd(&["CONFIG", "SET", "rdb-key-save-delay", "0"])?;
    for _ in 0..200 {
        if kv
            .reply(&["INFO", "persistence"])
            .contains("rdb_bgsave_in_progress:0")
        {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    kv.cmd(&["DEL", set])?;
    result
}

fn week_rows(
    kv: &mut Kv,
    rec: &mut Recorder,
    per_day: u64,
    truth: u64,
    fork_server: Option<u32>,
) -> Result<(), String> {
    let day_keys: Vec<String> = (1..=DAYS).map(|d| kv.key(&format!("d{d}"))).collect();
    for (d, key) in day_keys.iter().enumerate() {
        let from = d as u64 * per_day / 2;
        pfadd_range(kv, key, from, from + per_day, viewer)?;
    }
    let mut args: Vec<&str> = vec!["PFCOUNT"];
    args.extend(day_keys.iter().map(String::as_str));
    let t = Instant::now();
    let count7 = kv.reply(&args);
    rec.put("week-pfcount7-us", micros(t));
    rec.put("week-pfcount7", count7);
    let week = kv.key("week");
    let mut merge: Vec<&str> = vec!["PFMERGE", &week];
    merge.extend(day_keys.iter().map(String::as_str));
    let t = Instant::now();
    let ok = kv.reply(&merge);
    rec.put("week-merge-us", micros(t));
    rec.put("week-merge", ok);
    let t = Instant::now();
    let count = kv.reply(&["PFCOUNT", &week]);
    rec.put("week-count-us", micros(t));
    rec.put("week-count", count.clone());
    let t = Instant::now();
    kv.reply(&["PFCOUNT", &week]);
    rec.put("week-count2-us", micros(t));
    let bytes = int(kv, &["MEMORY", "USAGE", &week])?;
    rec.put("week-bytes", bytes.to_string());
    {
        let set = kv.key("wset");
        add_viewers(kv, &set, truth)?;
        rec.put("week-scard", kv.reply(&["SCARD", &set]));
        let set_bytes = int(kv, &["MEMORY", "USAGE", &set])?;
        rec.put("week-set-bytes", Cell::count(set_bytes, "B"));
        rec.put(
            "week-set-vs-hll",
            Cell::num(set_bytes as f64 / bytes as f64, "×"),
        );
        kv.cmd(&["DEL", &set])?;
        if let Some(pid) = fork_server {
            let during = set_during_bgsave(kv, &set, truth, pid)?;
            rec.put("week-set-bgsave-bytes", Cell::count(during, "B"));
            rec.put(
                "week-set-bgsave-diff",
                Cell::num((set_bytes as f64 - during as f64) / 8.0, "buckets").with_text(format!(
                    "{} B = {} buckets × 8 B",
                    redislab_harness::timing::thousands(set_bytes - during),
                    redislab_harness::timing::thousands((set_bytes - during) / 8)
                )),
            );
        }
    }
    rec.put("pfadd-old", kv.reply(&["PFADD", &week, "u5"]));
    // A viewer never added whose register already holds at least its run length,
    // found with the core's copy of Redis's hash on the sketch's own bytes.
    let bytes = match kv.cmd_bytes(&[b"GET", week.as_bytes()])? {
        redis::Value::BulkString(b) => b,
        other => return Err(format!("GET week: {other:?}")),
    };
    let registers = &bytes[hll::HDR_SIZE..];
    let fresh = (0..)
        .map(|k| format!("brand-new-user-{k}"))
        .find(|e| {
            let (index, run) = hll::hash::pattern(e.as_bytes());
            hll::dense::get(registers, index) >= run
        })
        .expect("an element is found");
    rec.put("pfadd-new", kv.reply(&["PFADD", &week, &fresh]));
    rec.put("new-element", fresh);
    rec.put("count-after-new", kv.reply(&["PFCOUNT", &week]));
    let _ = count;
    Ok(())
}

fn throughput_rows(kv: &mut Kv, rec: &mut Recorder) -> Result<(), String> {
    const N: u64 = 100_000;
    let key = kv.key("tp");
    let t = Instant::now();
    for chunk in 0..N / BATCH {
        let mut p = redis::pipe();
        for j in 0..BATCH {
            p.cmd("PFADD")
                .arg(&key)
                .arg(element(chunk * BATCH + j))
                .ignore();
        }
        p.query::<()>(kv.conn())
            .map_err(|e| format!("PFADD: {e}"))?;
    }
    rec.put("pfadd-ops", rate(N, t));
    let week = kv.key("week");
    let t = Instant::now();
    for _ in 0..N / BATCH {
        let mut p = redis::pipe();
        for _ in 0..BATCH {
            p.cmd("PFCOUNT").arg(&week).ignore();
        }
        p.query::<()>(kv.conn())
            .map_err(|e| format!("PFCOUNT: {e}"))?;
    }
    rec.put("pfcount-ops", rate(N, t));
    let days: Vec<String> = (1..=DAYS).map(|d| kv.key(&format!("d{d}"))).collect();
    let n7 = 2_000u64;
    let t = Instant::now();
    for _ in 0..n7 / 100 {
        let mut p = redis::pipe();
        for _ in 0..100 {
            p.cmd("PFCOUNT").arg(&days).ignore();
        }
        p.query::<()>(kv.conn())
            .map_err(|e| format!("PFCOUNT: {e}"))?;
    }
    rec.put("pfcount7-ops", rate(n7, t));
    Ok(())
}
