//! 02d-bitmap — attendance as bitmaps: bytes, BITOP, and the price of an offset.
//!
//! Article 02, section 3.5. 100,000 students × 7 days from a seeded generator,
//! loaded as one bitmap per day (SETBIT att:dN id 1) and as one set of ids per day.
//! The lab compares their MEMORY USAGE, runs each of the article's BITOPs (AND, OR
//! and 8.2's DIFF, DIFF1, ANDOR, ONE) with the BITCOUNT of its result and its
//! latency, against SINTERCARD over the seven sets, then sets one bit at 10 million
//! and the one past the last offset. The 512 MB SETBIT at offset 2³²−1 runs only
//! with REDISLAB_HUGE=1 in the environment.

mod attendance;
mod offsets;
mod ops;

use std::process::ExitCode;

use attendance::{bitmap_key, set_key, Attendance, DAYS};
use redislab_harness::{run, Kv, LabInfo, Recorder, Report};

const LAB: LabInfo = LabInfo {
    id: "02d-bitmap",
    uses_pg: false,
};

fn declare_memory(r: &mut Report) {
    r.exact("d1-count", "BITCOUNT att:d1 (present on day 1)", "64960");
    r.row(
        "days-count",
        "BITCOUNT att:d1 … att:d7",
        redislab_harness::Kind::Exact,
        None,
    );
    r.exact("bitmap-bytes", "MEMORY USAGE att:d1", "16416");
    r.exact("set-count", "SCARD attset:d1 (same ids as a set)", "64960");
    r.exact("set-encoding", "OBJECT ENCODING attset:d1", "hashtable");
    r.exact("set-bytes", "MEMORY USAGE attset:d1", "2530958");
}

fn memory(kv: &mut Kv, rec: &mut Recorder) {
    let d1 = bitmap_key(kv, 0);
    rec.put("d1-count", kv.reply(&["BITCOUNT", &d1]));
    let counts: Vec<String> = (0..DAYS)
        .map(|d| kv.reply(&["BITCOUNT", &bitmap_key(kv, d)]))
        .collect();
    rec.put("days-count", counts.join(" "));
    rec.put("bitmap-bytes", kv.reply(&["MEMORY", "USAGE", &d1]));
    let s1 = set_key(kv, 0);
    rec.put("set-count", kv.reply(&["SCARD", &s1]));
    rec.put("set-encoding", kv.reply(&["OBJECT", "ENCODING", &s1]));
    rec.put("set-bytes", kv.reply(&["MEMORY", "USAGE", &s1]));
}

fn main() -> ExitCode {
    run(LAB, |ctx| {
        let huge = offsets::huge_enabled();
        declare_memory(&mut ctx.report);
        ops::declare(&mut ctx.report);
        offsets::declare(&mut ctx.report);
        ctx.report.params.insert("huge".into(), huge.to_string());
        let data = Attendance::generate(ctx.seed);
        ctx.each_kv(|kv, rec| {
            attendance::load_bitmaps(kv, &data)?;
            attendance::load_sets(kv, &data)?;
            memory(kv, rec);
            ops::run(kv, rec)?;
            for d in 0..DAYS {
                kv.cmd(&["DEL", &bitmap_key(kv, d), &set_key(kv, d)])?;
            }
            offsets::run(kv, rec, huge)
        })?;
        ops::chart(&mut ctx.report);
        ctx.note("Each student has an attendance rate drawn uniformly from [0.4, 0.9] (seeded) and is present on each day with that probability, ~65% a day; bitmaps are filled by SETBIT in ascending id order, sets by SADD of 1,000 ids. The counts are those of this data, not the article's (which come from its own), and must be equal on the core and Redis.");
        ctx.note("Latencies are client round trips (the core through its own RESP listener). A first call is the operation's first on the shared `res` key, in the table's order: only AND creates it. Medians are of repeated calls on a warm key.");
        ctx.note("The core models a hashtable set's memory (dict entries, bucket array, member SDS allocations) and must give Redis's MEMORY USAGE exactly.");
        ctx.note("The 512 MB rows (SETBIT at 4294967295, its BITCOUNT) run only with REDISLAB_HUGE=1 in the environment, e.g. `REDISLAB_HUGE=1 ./run.sh 02d`.");
        Ok(())
    })
}
