//! 02e-bitfield — millions of small numbers in one string.
//!
//! Article 02, section 3.6. Progress 0–100 of 100,000 students × 40 lessons
//! (seeded) stored as u7 cells of one string, cell `#(student*40+lesson)`, written
//! with BITFIELD SET in pipelines; then the same data as one hash per student
//! (HSET prog:s lesson progress). The lab compares their MEMORY USAGE (and Redis's
//! used_memory), reads a cell both ways, and shows OVERFLOW WRAP/SAT/FAIL on u7.

mod overflow;
mod progress;

use std::process::ExitCode;
use std::time::Instant;

use progress::{hash_key, LESSONS, STUDENTS};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use redislab_harness::{run, Cell, Kind, Kv, LabInfo, Recorder, Report};

const LAB: LabInfo = LabInfo {
    id: "02e-bitfield",
    uses_pg: false,
};

/// The article's sample cell: student 12345, lesson 7.
const SAMPLE: (usize, usize) = (12_345, 7);
const SPOT_CHECKS: usize = 1_000;

fn declare(r: &mut Report) {
    r.row(
        "cells-ms",
        "BITFIELD prog SET u7 #(s*40+l) v ×40, 100,000 commands pipelined, ms",
        Kind::Measured,
        None,
    );
    r.exact(
        "cells-strlen",
        "STRLEN prog (4,000,000 cells × 7 bits)",
        "3500000",
    );
    r.exact("cells-bytes", "MEMORY USAGE prog", "5242904");
    r.exact("cells-get", "BITFIELD_RO prog GET u7 #(12345*40+7)", "30");
    r.exact(
        "cells-spot",
        &format!("{SPOT_CHECKS} seeded cells read back equal to the data"),
        &format!("{SPOT_CHECKS}"),
    );
    r.row(
        "cells-used",
        "used_memory after the string − before, bytes",
        Kind::Measured,
        None,
    )
    .note(USED_MEMORY_NOTE)
    // A size, not a speed: jemalloc's accounting moves little between machines.
    .band(1.3);
    r.row(
        "hash-ms",
        "HSET prog:s 0 v … 39 v, 100,000 commands pipelined, ms",
        Kind::Measured,
        None,
    );
    r.exact("hash-get", "HGET prog:12345 7", "30");
    r.exact("hash-encoding", "OBJECT ENCODING prog:12345", "listpack");
    // The article gives used_memory's increase (+23,931,808) and its ratio to the
    // string (4.56); Σ MEMORY USAGE is a different figure it does not give.
    r.row(
        "hash-one-bytes",
        "MEMORY USAGE prog:12345",
        Kind::Exact,
        None,
    );
    r.row("hash-bytes", "Σ MEMORY USAGE prog:0 … prog:99999", Kind::Exact, None)
        .note("the article has no Σ MEMORY USAGE: its 23,931,808 is used_memory's increase (the row below)");
    r.row(
        "hash-ratio",
        "… Σ MEMORY USAGE ÷ MEMORY USAGE prog (×)",
        Kind::Exact,
        None,
    );
    r.row(
        "hash-used",
        "used_memory after the hashes − before, bytes",
        Kind::Measured,
        Some("23931808"),
    )
    .note(USED_MEMORY_NOTE)
    // A size, not a speed: jemalloc's accounting moves little between machines.
    .band(1.3);
    r.measured(
        "hash-used-ratio",
        "… used_memory's increase ÷ MEMORY USAGE prog (×)",
        Some("4.56"),
    )
    .note("redis only: the article's ratio, of used_memory to the string's MEMORY USAGE")
    .band(1.3);
}

/// Why the used_memory rows have no comparable core figure.
const USED_MEMORY_NOTE: &str = "core: its used_memory is the whole lab process's heap (the core runs in it, behind its listener, beside the lab's own buffers), not the core's data: not comparable";

fn elapsed_ms(t: Instant) -> Cell {
    Cell::count((t.elapsed().as_secs_f64() * 1e3).round() as u64, "ms")
}

fn cells(kv: &mut Kv, rec: &mut Recorder, data: &[u8], seed: u64) -> Result<(), String> {
    let key = kv.key("prog");
    let before = progress::used_memory(kv);
    let t = Instant::now();
    progress::load_cells(kv, &key, data)?;
    rec.put("cells-ms", elapsed_ms(t));
    if let (Some(b), Some(a)) = (before, progress::used_memory(kv)) {
        rec.put(
            "cells-used",
            Cell::num((a - b) as f64, "B").with_text((a - b).to_string()),
        );
    }
    rec.put("cells-strlen", kv.reply(&["STRLEN", &key]));
    rec.put("cells-bytes", kv.reply(&["MEMORY", "USAGE", &key]));
    let sample = format!("#{}", SAMPLE.0 * LESSONS + SAMPLE.1);
    rec.put(
        "cells-get",
        kv.reply(&["BITFIELD_RO", &key, "GET", "u7", &sample]),
    );
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5eed);
    let mut equal = 0;
    for _ in 0..SPOT_CHECKS {
        let i = rng.gen_range(0..STUDENTS * LESSONS);
        let got = kv.reply(&["BITFIELD_RO", &key, "GET", "u7", &format!("#{i}")]);
        equal += usize::from(got == data[i].to_string());
    }
    rec.put("cells-spot", equal.to_string());
    Ok(())
}

fn hashes(kv: &mut Kv, rec: &mut Recorder, data: &[u8]) -> Result<(), String> {
    let before = progress::used_memory(kv);
    let t = Instant::now();
    progress::load_hashes(kv, data)?;
    rec.put("hash-ms", elapsed_ms(t));
    let string_bytes: f64 = kv
        .reply(&["MEMORY", "USAGE", &kv.key("prog")])
        .parse()
        .unwrap_or(f64::NAN);
    if let (Some(b), Some(a)) = (before, progress::used_memory(kv)) {
        rec.put(
            "hash-used",
            Cell::num((a - b) as f64, "B").with_text((a - b).to_string()),
        );
        if kv.name == "redis" {
            let ratio = (a - b) as f64 / string_bytes;
            rec.put(
                "hash-used-ratio",
                Cell::num(ratio, "×").with_text(format!("{ratio:.2}")),
            );
        }
    }
    let sample = hash_key(kv, SAMPLE.0);
    rec.put(
        "hash-get",
        kv.reply(&["HGET", &sample, &SAMPLE.1.to_string()]),
    );
    rec.put("hash-encoding", kv.reply(&["OBJECT", "ENCODING", &sample]));
    rec.put("hash-one-bytes", kv.reply(&["MEMORY", "USAGE", &sample]));
    match progress::hash_bytes(kv)? {
        Ok(sum) => {
            rec.put("hash-bytes", sum.to_string());
            rec.put("hash-ratio", format!("{:.2}", sum as f64 / string_bytes));
        }
        Err(said) => {
            rec.put("hash-bytes", said.clone());
            rec.put("hash-ratio", said);
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    run(LAB, |ctx| {
        declare(&mut ctx.report);
        overflow::declare(&mut ctx.report);
        let seed = ctx.seed;
        let data = progress::generate(seed);
        ctx.each_kv(|kv, rec| {
            cells(kv, rec, &data, seed)?;
            hashes(kv, rec, &data)?;
            overflow::run(kv, rec)
        })?;
        ctx.note("Progress values are uniform in 0..=100 from a seeded generator, so the sample cell holds this data's value, not the article's 30; the string and the hash must give the same one, on the core and on Redis.");
        ctx.note("Cells are written in ascending order, one BITFIELD with 40 SETs per student, so the string grows by SDS's greedy preallocation (past 1 MB, +1 MB a time): 3,500,000 bytes of data in a larger allocation.");
        ctx.note("The article's 23,931,808 and 4.56 are used_memory's increase (INFO memory) and its ratio to the string's MEMORY USAGE: the rows labelled used_memory carry them. Σ MEMORY USAGE of the 100,000 hashes (the core models it, byte for byte with Redis) is smaller: it counts each key's object and listpack but not what the keyspace itself spends on 100,000 more keys (its hash table, the key strings' allocations).");
        Ok(())
    })
}
