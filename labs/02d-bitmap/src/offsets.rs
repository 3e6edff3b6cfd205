//! The price of a bitmap is its highest offset: one bit far out allocates every
//! byte before it, up to the 512 MB limit.

use std::time::Instant;

use redislab_harness::{Cell, Kind, Kv, Recorder, Report};

/// Set to 0 to leave out the 512 MB SETBIT (it allocates 512 MB per backend, one
/// backend at a time, ~1.3 GB at the peak with the lab's own buffers, ~4 s).
pub const HUGE_VAR: &str = "REDISLAB_HUGE";

/// On unless `REDISLAB_HUGE=0`: the baseline carries the article's 512 MB rows.
pub fn huge_enabled() -> bool {
    std::env::var(HUGE_VAR).map_or(true, |v| v != "0")
}

fn skipped() -> Cell {
    Cell::skipped(format!(
        "skipped: {HUGE_VAR}=0 (it allocates 512 MB per backend)"
    ))
}

pub fn declare(r: &mut Report) {
    r.exact(
        "sparse-setbit",
        "SETBIT sparse 10000000 1 (one student, id 10 million)",
        "0",
    );
    r.exact("sparse-bytes", "… MEMORY USAGE sparse", "1310752");
    r.exact(
        "huge-over",
        "SETBIT huge 4294967296 1 (past the last offset)",
        "ERR bit offset is not an integer or out of range",
    );
    r.row(
        "huge-us",
        "SETBIT huge 4294967295 1 (last offset), µs",
        Kind::Measured,
        Some("481576"),
    );
    r.exact("huge-bytes", "… MEMORY USAGE huge", "671088664");
    r.row(
        "huge-bitcount-us",
        "BITCOUNT huge (512 MB), µs",
        Kind::Measured,
        Some("25486"),
    );
    r.exact("huge-bitcount", "… its count", "1");
}

pub fn run(kv: &mut Kv, rec: &mut Recorder, huge: bool) -> Result<(), String> {
    let sparse = kv.key("sparse");
    rec.put(
        "sparse-setbit",
        kv.reply(&["SETBIT", &sparse, "10000000", "1"]),
    );
    rec.put("sparse-bytes", kv.reply(&["MEMORY", "USAGE", &sparse]));
    kv.cmd(&["DEL", &sparse])?;
    let key = kv.key("huge");
    rec.put("huge-over", kv.reply(&["SETBIT", &key, "4294967296", "1"]));
    if !huge {
        for row in ["huge-us", "huge-bytes", "huge-bitcount-us", "huge-bitcount"] {
            rec.put(row, skipped());
        }
        return Ok(());
    }
    let t = Instant::now();
    kv.cmd(&["SETBIT", &key, "4294967295", "1"])?;
    rec.put("huge-us", Cell::count(t.elapsed().as_micros() as u64, "µs"));
    rec.put("huge-bytes", kv.reply(&["MEMORY", "USAGE", &key]));
    let t = Instant::now();
    let count = kv.reply(&["BITCOUNT", &key]);
    rec.put(
        "huge-bitcount-us",
        Cell::count(t.elapsed().as_micros() as u64, "µs"),
    );
    rec.put("huge-bitcount", count);
    kv.cmd(&["DEL", &key])?;
    Ok(())
}
