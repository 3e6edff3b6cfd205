//! The real memory of some data on both sides: the core's live heap (what the
//! allocator handed out) beside Redis's `used_memory` growth, for the same commands.
//!
//! The two figures are different measurements, and the rows that show them say so:
//!
//! * **core**: the commands are sent to a fresh in-process [`Server`] (the same
//!   code the listener runs) under a [`CountingAlloc`]; the difference of its
//!   snapshots before and after is what the data keeps (temporaries freed on the
//!   way cancel out): bytes requested, the same at `malloc_usable_size`, blocks.
//! * **redis**: `INFO memory`'s `used_memory` (jemalloc's count of allocated
//!   bytes) before and after sending the same commands, pipelined, to the lab's
//!   Redis; client buffers and the key table's rehash add some noise, so a lab
//!   builds enough elements to drown it.
//!
//! Neither is `MEMORY USAGE`, which both backends answer from Redis's own model
//! (the core computes Redis's figure, it does not measure its own heap).

use redislab_core::Server;

use crate::alloc::{CountingAlloc, Heap};
use crate::report::Cell;
use crate::timing::thousands;
use crate::Kv;

/// Commands sent per pipeline to Redis.
const PIPELINE: usize = 1_000;

/// Runs `commands` on a fresh [`Server`] with counting on, and returns what it
/// kept on the heap (counting is left off afterwards, so later timings are not
/// slowed). A reply that is an error fails the measurement.
pub fn core_heap(alloc: &CountingAlloc, commands: &[Vec<Vec<u8>>]) -> Result<Heap, String> {
    let mut server = Server::new();
    alloc.set_counting(true);
    let before = alloc.snapshot();
    let mut failed = None;
    for argv in commands {
        let reply = server.run(argv);
        if reply.is_error() && failed.is_none() {
            failed = Some(format!("core: {:?} failed: {reply:?}", shown(argv)));
        }
    }
    let heap = alloc.snapshot().since(before);
    alloc.set_counting(false);
    // The server (and what it holds) is freed with counting off.
    drop(server);
    match failed {
        Some(e) => Err(e),
        None => Ok(heap),
    }
}

/// `used_memory` from `INFO memory`; None where the server has no such field.
pub fn used_memory(kv: &mut Kv) -> Option<i64> {
    let info: String = redis::cmd("INFO").arg("memory").query(kv.conn()).ok()?;
    info.lines()
        .find_map(|l| l.strip_prefix("used_memory:"))
        .and_then(|v| v.trim().parse().ok())
}

/// `used_memory` once it holds still: the same over two readings 150 ms
/// apart (at most 2 s of waiting). Deleting the last case's keys leaves the
/// key table shrinking by incremental rehash, and the old table is freed
/// when the server's cron finishes it: read too early, that free lands in the
/// next case's growth (a clean run measured 4.6 B per small-hash field
/// against the usual 17).
fn settled_used_memory(kv: &mut Kv) -> Option<i64> {
    let mut last = used_memory(kv)?;
    for _ in 0..13 {
        std::thread::sleep(std::time::Duration::from_millis(150));
        let now = used_memory(kv)?;
        if now == last {
            break;
        }
        last = now;
    }
    Some(last)
}

/// Sends `commands` to `kv` pipelined and returns `used_memory`'s growth over
/// them, or None if the server reports no `used_memory`. The caller deletes the
/// keys afterwards.
pub fn redis_growth(kv: &mut Kv, commands: &[Vec<Vec<u8>>]) -> Result<Option<i64>, String> {
    let Some(before) = settled_used_memory(kv) else {
        return Ok(None);
    };
    for chunk in commands.chunks(PIPELINE) {
        let mut p = redis::pipe();
        for argv in chunk {
            let c = p.cmd(&String::from_utf8_lossy(&argv[0]));
            for a in &argv[1..] {
                c.arg(a.as_slice());
            }
            c.ignore();
        }
        p.query::<()>(kv.conn())
            .map_err(|e| format!("{}: {}: {e}", kv.name, shown(&chunk[0])))?;
    }
    Ok(used_memory(kv).map(|after| after - before))
}

/// The core's cell: bytes requested per element (its value), usable bytes and
/// blocks per element as extras.
pub fn core_cell(heap: Heap, elements: usize, unit: &str) -> Cell {
    let n = elements as f64;
    Cell::num(heap.requested as f64 / n, unit)
        .with("requested", heap.requested as f64, "B")
        .with("usable", heap.usable as f64, "B")
        .with("usable_per_element", heap.usable as f64 / n, unit)
        .with("blocks_per_element", heap.blocks as f64 / n, "")
        .with_text(format!(
            "heap {:.1} {unit} requested, {:.1} usable, {:.2} blocks each ({} B in all)",
            heap.requested as f64 / n,
            heap.usable as f64 / n,
            heap.blocks as f64 / n,
            thousands(heap.requested.max(0) as u64)
        ))
}

/// Redis's cell: `used_memory` growth per element.
pub fn redis_cell(growth: i64, elements: usize, unit: &str) -> Cell {
    let per = growth as f64 / elements as f64;
    Cell::num(per, unit)
        .with("used_memory_growth", growth as f64, "B")
        .with_text(format!(
            "used_memory +{per:.1} {unit} (+{} B in all)",
            thousands(growth.max(0) as u64)
        ))
}

/// The ratio row's cell: the core's usable bytes over Redis's growth.
pub fn ratio_cell(heap: Heap, growth: i64) -> Cell {
    let r = heap.usable as f64 / growth as f64;
    Cell::num(r, "×").with_text(format!(
        "{r:.2}× (core usable {} B / redis used_memory +{} B)",
        thousands(heap.usable.max(0) as u64),
        thousands(growth.max(0) as u64)
    ))
}

/// One memory comparison: the commands that build some data, how many elements
/// it has, the keys to delete afterwards, and its rows `<key>` and `<key>-ratio`.
pub struct Case {
    pub key: String,
    pub label: String,
    /// The per-element unit, e.g. `B/field`.
    pub unit: &'static str,
    pub elements: usize,
    pub commands: Vec<Vec<Vec<u8>>>,
    /// Deleted from Redis after the measurement.
    pub keys: Vec<Vec<u8>>,
}

/// Declares each case's two rows: the figures (band `band`: a fresh run's bytes
/// per element against the baseline's) and the core ÷ redis ratio.
pub fn declare(r: &mut crate::Report, cases: &[Case], band: f64) {
    for c in cases {
        r.measured(
            &c.key,
            &format!(
                "{} · real memory per element: core heap in process (counting allocator) vs redis used_memory growth",
                c.label
            ),
            None,
        )
        .band(band);
        r.measured(
            &format!("{}-ratio", c.key),
            "… core usable heap ÷ redis used_memory growth (one run)",
            None,
        )
        .band(band);
    }
}

/// Runs every case: on a fresh in-process core if `core`, and on `redis` (then
/// deletes the case's keys there). Returns the core's and Redis's recorders.
pub fn measure(
    alloc: &CountingAlloc,
    core: bool,
    mut redis: Option<&mut Kv>,
    cases: &[Case],
) -> Result<[crate::Recorder; 2], String> {
    let mut recs = [crate::Recorder::new("core"), crate::Recorder::new("redis")];
    for c in cases {
        let phase = crate::progress::Phase::new(format!("memory: {}", c.label), None);
        let core_heap = if core {
            let h = core_heap(alloc, &c.commands)?;
            recs[0].put(&c.key, core_cell(h, c.elements, c.unit));
            Some(h)
        } else {
            None
        };
        if let Some(kv) = redis.as_deref_mut() {
            let growth = redis_growth(kv, &c.commands);
            for keys in c.keys.chunks(500) {
                let mut del = vec![b"DEL".as_slice()];
                del.extend(keys.iter().map(Vec::as_slice));
                kv.cmd_bytes(&del)?;
            }
            if let Some(growth) = growth? {
                recs[1].put(&c.key, redis_cell(growth, c.elements, c.unit));
                if let Some(h) = core_heap {
                    recs[0].put(&format!("{}-ratio", c.key), ratio_cell(h, growth));
                }
            }
        }
        drop(phase);
    }
    Ok(recs)
}

fn shown(argv: &[Vec<u8>]) -> String {
    let words: Vec<String> = argv
        .iter()
        .take(4)
        .map(|a| String::from_utf8_lossy(&a[..a.len().min(40)]).into_owned())
        .collect();
    words.join(" ")
}

/// An argv from text words.
pub fn argv(words: &[&str]) -> Vec<Vec<u8>> {
    words.iter().map(|w| w.as_bytes().to_vec()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failing_command_fails_the_measurement() {
        let alloc = CountingAlloc::new();
        assert!(core_heap(&alloc, &[argv(&["SET", "k", "v"])]).is_ok());
        let err = core_heap(&alloc, &[argv(&["SET", "k", "v"]), argv(&["LPUSH"])]).unwrap_err();
        assert!(err.contains("LPUSH"), "{err}");
    }

    #[test]
    fn cells_carry_per_element_figures() {
        let heap = Heap {
            requested: 2_000,
            usable: 2_400,
            blocks: 20,
        };
        let c = core_cell(heap, 10, "B/key");
        assert_eq!(c.number(), Some(200.0));
        assert_eq!(c.field("usable_per_element"), Some(240.0));
        assert_eq!(c.field("blocks_per_element"), Some(2.0));
        assert_eq!(redis_cell(1_500, 10, "B/key").number(), Some(150.0));
        assert_eq!(ratio_cell(heap, 1_200).number(), Some(2.0));
    }
}
