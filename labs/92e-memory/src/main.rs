//! 92e-memory — bytes per member, by set size and member length.
//!
//! Article 92, "memory encoding": a small set (≤ 128 members of ≤ 64 bytes) is a
//! compact listpack; beyond either limit it becomes skiplist + hash table and each
//! member costs a node, a dict entry and a bucket. The article estimates ~96
//! bytes per member (1M ≈ 92 MB); article 05 measured ~85. MEMORY USAGE answers
//! per set; the core models Redis 8.6.3's accounting. A skiplist node's size
//! depends on its random level, so those rows are compared by bounds.

mod realheap;

use std::process::ExitCode;

use redislab_harness::alloc::CountingAlloc;
use redislab_harness::heap;

use redislab_harness::report::Bounds;
use redislab_harness::timing::bulk_load;
use redislab_harness::{run, Cell, Chart, ChartKind, Kind, Kv, LabInfo, Recorder};

/// Counts the core's heap while the real-memory rows build their data.
#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc::new();

const LAB: LabInfo = LabInfo {
    id: "92e-memory",
    uses_pg: false,
};

const SIZES: [usize; 8] = [1, 10, 100, 128, 129, 1_000, 10_000, 100_000];
/// Member lengths of the second sweep (10 members each), around the 64-byte limit.
const LENGTHS: [usize; 8] = [16, 32, 48, 64, 65, 80, 96, 128];
const LEN_MEMBERS: usize = 10;

pub fn member(kind: &str, i: usize) -> String {
    match kind {
        "id" => format!("{:08}", 10_000_000 + i),
        // A UUID-shaped 36-character member, deterministic.
        _ => format!(
            "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
            i * 2_654_435_761 % (1 << 32),
            i % 65_536,
            i % 4_096,
            (i * 7) % 4_096,
            i * 97
        ),
    }
}

fn main() -> ExitCode {
    // On only while heap::measure builds a case in process.
    ALLOC.set_counting(false);
    run(LAB, |ctx| {
        let r = &mut ctx.report;
        for kind in ["id", "uuid"] {
            for n in SIZES {
                let what = if kind == "id" {
                    "8-digit ids"
                } else {
                    "36-char UUIDs"
                };
                r.row(
                    &format!("{kind}-{n}-enc"),
                    &format!("{n} × {what}: OBJECT ENCODING"),
                    Kind::Exact,
                    None,
                );
                let row = r.row(
                    &format!("{kind}-{n}-bpm"),
                    &format!("{n} × {what}: MEMORY USAGE / member"),
                    Kind::Exact,
                    None,
                );
                if n > 128 {
                    // Random node levels: a few percent either way between two servers.
                    row.kind = Kind::Random;
                    row.bounds = Some(if kind == "id" {
                        Bounds {
                            min: 70.0,
                            max: 130.0,
                        }
                    } else {
                        Bounds {
                            min: 90.0,
                            max: 200.0,
                        }
                    });
                }
            }
        }
        r.row(
            "len-64",
            "one member of 64 bytes: OBJECT ENCODING",
            Kind::Exact,
            None,
        );
        r.row(
            "len-65",
            "one member of 65 bytes: OBJECT ENCODING",
            Kind::Exact,
            None,
        );
        r.row(
            "estimate",
            "8-digit ids at 100,000: B/member (article 92 estimate; article 05 measured ~85)",
            Kind::Random,
            Some("~96"),
        )
        .bounds = Some(Bounds {
            min: 70.0,
            max: 110.0,
        });
        r.row(
            "at-1m",
            "1,000,000 × 8-digit ids: MEMORY USAGE, MB (measured; article: 1M ≈ 92 MB)",
            Kind::Random,
            Some("92"),
        )
        .bounds = Some(Bounds {
            min: 70.0,
            max: 110.0,
        });
        for len in LENGTHS {
            r.random(
                &format!("len-{len}-bpm"),
                &format!("{LEN_MEMBERS} members of {len} bytes: MEMORY USAGE / member"),
                None,
            )
            .bounds(10.0, 400.0);
        }
        r.measured(
            "cliff-ratio",
            "B/member at 129 ÷ at 128 (8-digit ids): the listpack → skiplist step",
            None,
        )
        .band(1.3);
        let prefix = ctx
            .redis
            .as_ref()
            .or(ctx.core.as_ref())
            .map(|kv| kv.key(""))
            .unwrap_or_default();
        let cases = realheap::cases(&prefix, ctx.scale);
        heap::declare(&mut ctx.report, &cases, 1.25);
        ctx.each_kv(memory)?;
        let core = ctx.core.is_some();
        for rec in heap::measure(&ALLOC, core, ctx.redis.as_mut(), &cases)? {
            ctx.report.merge(rec)?;
        }
        let sizes = |kind: &str| {
            SIZES
                .iter()
                .map(|n| (*n as f64, format!("{kind}-{n}-bpm")))
                .collect::<Vec<_>>()
        };
        ctx.report.chart(
            Chart::new("bytes-per-member", ChartKind::Xy, "MEMORY USAGE per member against the zset's size")
                .x("members (log)", true)
                .y("bytes per member", false)
                .rows("redis", None, sizes("id"))
                .named("redis · 8-digit ids")
                .rows("core", None, sizes("id"))
                .named("core · 8-digit ids")
                .rows("redis", None, sizes("uuid"))
                .named("redis · 36-char UUIDs")
                .rows("core", None, sizes("uuid"))
                .named("core · 36-char UUIDs")
                .marker(128.5, "128 → 129: listpack → skiplist")
                .caption("Up to 128 members a zset is one listpack: a few bytes per member once the fixed header is shared. The 129th member turns it into a skiplist plus a hash table, and every member pays a node, a dict entry and a bucket share: the cliff, then a plateau near 85–100 B."),
        );
        let lens: Vec<(f64, String)> = LENGTHS
            .iter()
            .map(|l| (*l as f64, format!("len-{l}-bpm")))
            .collect();
        ctx.report.chart(
            Chart::new("bytes-per-length", ChartKind::Xy, "MEMORY USAGE per member against the member's length (10 members)")
                .x("member length, bytes", false)
                .y("bytes per member", false)
                .kv_rows(None, lens)
                .marker(64.5, "64 → 65 bytes: listpack → skiplist")
                .caption("The other limit: one member longer than 64 bytes (zset-max-listpack-value) converts the set, so ten 65-byte members cost far more than ten 64-byte ones."),
        );
        ctx.note("The listpack stores an 8-digit id as an integer (a few bytes) and the score beside it; past 128 members or 64 bytes every member gets a skiplist node (16 B + 16 B per level + the member), a 24 B dict entry and a share of the bucket array.");
        ctx.note("The article says a 36-character UUID is over 64 bytes, so such a set is always a skiplist. The UUID rows refute it: a 36-char UUID is 36 bytes, under zset-max-listpack-value (64), and up to 128 of them stay a listpack (about 40 B/member) on both servers; only the 129th member (the entries limit, not the length) converts the set. The one-member rows show where length alone converts: at 65 bytes.");
        ctx.note("The article's 96 B/member is an estimate ('~80 overhead + member + score'). MEMORY USAGE on 8.6.3 gives 86–97 B for 8-digit ids depending on how full the power-of-two bucket array is (85.7 at 1M, lab 05c); the core's model agrees within the random node levels.");
        ctx.note("Real memory (heap-* rows): the core's figure is its live heap in this process, counted by a global allocator around sending the same SET/HSET commands to a fresh in-process Server (bytes requested; 'usable' = what glibc malloc set aside, which is what the ratio uses); Redis's is INFO memory used_memory after minus before the same commands, pipelined (jemalloc's count of what it allocated, key table included). MEMORY USAGE above is Redis's accounting on both backends, not these figures.");
        Ok(())
    })
}

/// A zset of 1,000,000 8-digit ids, measured (not extrapolated from 100,000: the
/// bucket array doubles at 2^17 and 2^20 members, so bytes/member move with size).
fn at_million(kv: &mut Kv, rec: &mut Recorder) -> Result<(), String> {
    const N: usize = 1_000_000;
    let key = kv.key("m:id:1m");
    let name = kv.name;
    bulk_load(
        &format!("{name}: ZADD 1,000,000 ids"),
        N,
        10_000,
        |start, end| {
            let mut pipe = redis::pipe();
            for chunk in (start..end).collect::<Vec<_>>().chunks(1_000) {
                let cmd = pipe.cmd("ZADD").arg(&key);
                for &i in chunk {
                    cmd.arg(i).arg(member("id", i));
                }
                cmd.ignore();
            }
            pipe.query::<()>(kv.conn())
                .map_err(|e| format!("{name}: ZADD: {e}"))
        },
    )?;
    // SAMPLES 0: every member counted, not an estimate from 5 of them.
    let bytes: f64 = kv
        .reply(&["MEMORY", "USAGE", &key, "SAMPLES", "0"])
        .parse()
        .map_err(|_| "MEMORY USAGE failed".to_string())?;
    let mb = bytes / 1_048_576.0;
    rec.put(
        "at-1m",
        Cell::num(mb, "MB").with_text(format!("{mb:.1} ({:.1} B/member)", bytes / N as f64)),
    );
    kv.cmd(&["DEL", &key])?;
    Ok(())
}

fn memory(kv: &mut Kv, rec: &mut Recorder) -> Result<(), String> {
    let mut at_128 = f64::NAN;
    for kind in ["id", "uuid"] {
        for n in SIZES {
            let key = kv.key(&format!("m:{kind}:{n}"));
            let mut pipe = redis::pipe();
            for i in 0..n {
                pipe.cmd("ZADD")
                    .arg(&key)
                    .arg(i)
                    .arg(member(kind, i))
                    .ignore();
            }
            pipe.query::<()>(kv.conn())
                .map_err(|e| format!("{}: {e}", kv.name))?;
            rec.put(
                &format!("{kind}-{n}-enc"),
                kv.reply(&["OBJECT", "ENCODING", &key]),
            );
            let bytes: f64 = kv
                .reply(&["MEMORY", "USAGE", &key])
                .parse()
                .map_err(|_| "MEMORY USAGE failed".to_string())?;
            let bpm = bytes / n as f64;
            rec.put(
                &format!("{kind}-{n}-bpm"),
                Cell::num(bpm, "B/member").with_text(format!("{bpm:.1}")),
            );
            if kind == "id" && n == 128 {
                at_128 = bpm;
            }
            if kind == "id" && n == 129 {
                rec.put("cliff-ratio", Cell::num(bpm / at_128, "×"));
            }
            if kind == "id" && n == 100_000 {
                rec.put(
                    "estimate",
                    Cell::num(bpm, "B/member").with_text(format!("{bpm:.1}")),
                );
            }
            kv.cmd(&["DEL", &key])?;
        }
    }
    at_million(kv, rec)?;
    for (row, len) in [("len-64", 64), ("len-65", 65)] {
        let key = kv.key(row);
        kv.cmd(&["ZADD", &key, "1", &"m".repeat(len)])?;
        rec.put(row, kv.reply(&["OBJECT", "ENCODING", &key]));
    }
    for len in LENGTHS {
        let key = kv.key(&format!("len:{len}"));
        for i in 0..LEN_MEMBERS {
            let m = format!("{i:0len$}");
            kv.cmd(&["ZADD", &key, &i.to_string(), &m])?;
        }
        let bytes: f64 = kv
            .reply(&["MEMORY", "USAGE", &key])
            .parse()
            .map_err(|_| "MEMORY USAGE failed".to_string())?;
        let bpm = bytes / LEN_MEMBERS as f64;
        rec.put(
            &format!("len-{len}-bpm"),
            Cell::num(bpm, "B/member").with_text(format!("{bpm:.1}")),
        );
        kv.cmd(&["DEL", &key])?;
    }
    Ok(())
}
