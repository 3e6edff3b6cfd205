//! 05k-skiplist — the skiplist as it really is, in the core and in Redis.
//!
//! Article 05 (section 3.1) draws a skiplist with spans and says the figure "is an
//! illustration, not dumped from the server". This lab dumps two real ones for
//! the same 12-member zset: the core's (read in process with
//! `SkipList::dump`: levels, forward pointers, spans, backward links) and Redis's
//! (read from the live redis-server's memory with gdb, following
//! `zset->zsl->header->level[i].forward`). Both are drawn (text here, SVG in the
//! HTML report), then a ZRANK is walked on each (the spans it adds up, checked
//! against the server's own ZRANK), one ZADD is made and its changes listed, and
//! the level distribution of a 1,000,000-member list is measured on both beside
//! what P = 0.25 expects.
//!
//! The levels are random (the core's from a seeded ChaCha8, Redis's from
//! `random()`), so the pictures differ; the rules (spans along a level sum to the
//! length, rank = sum of the spans walked) hold on both.

mod gdb;
mod zsl;

use std::process::ExitCode;

use redislab_core::zset::skiplist::{SkipList, ZSKIPLIST_P};
use redislab_core::Server;
use redislab_harness::progress::Phase;
use redislab_harness::{fmt, run, timing, Cell, Chart, ChartKind, Ctx, Kv, LabInfo};
use zsl::Zsl;

const LAB: LabInfo = LabInfo {
    id: "05k-skiplist",
    uses_pg: false,
};

/// The small zset: 12 players, scores 10 … 120.
fn players() -> Vec<(u32, String)> {
    (1..=12).map(|i| (i * 10, format!("u{i:02}"))).collect()
}
/// The member whose rank is walked, and the one ZADD adds.
const WALK: (f64, &str) = (90.0, "u09");
const ADDED: (u32, &str) = (55, "u05b");
/// Levels shown for the big list.
const LEVELS: usize = 8;

fn main() -> ExitCode {
    run(LAB, |ctx| {
        declare(ctx);
        let big = ((1_000_000.0 * ctx.scale).round() as usize).max(1000);
        ctx.report.params.insert("members".into(), big.to_string());

        // The core: the same ZADDs in an in-process Server, then its skiplist.
        let mut core = Recorder2::new("core");
        let mut server = Server::new();
        server.cmd(&["CONFIG", "SET", "zset-max-listpack-entries", "0"]);
        for (s, m) in players() {
            server.cmd(&["ZADD", "lb", &s.to_string(), &m]);
        }
        let before = core_zsl(&mut server)?;
        server.cmd(&["ZADD", "lb", &ADDED.0.to_string(), ADDED.1]);
        let after = core_zsl(&mut server)?;
        core.small(&before, &after);
        core.levels_core(big, ctx.seed);
        let have_core = ctx.core.is_some();

        let pid = ctx.redis_pid;
        ctx.each_kv(|kv, rec| {
            let lb = kv.key("lb");
            if kv.name == "redis" {
                kv.cmd(&["CONFIG", "SET", "zset-max-listpack-entries", "0"])?;
            }
            for (s, m) in players() {
                kv.cmd(&["ZADD", &lb, &s.to_string(), &m])?;
            }
            if kv.name == "redis" {
                rec.put("encoding", kv.reply(&["OBJECT", "ENCODING", &lb]));
            }
            rec.put(
                "members",
                kv.reply(&["ZRANGE", &lb, "0", "-1", "WITHSCORES"]),
            );
            rec.put("zrank", kv.reply(&["ZRANK", &lb, WALK.1]));
            if kv.name == "core" {
                for (k, v) in core.values.drain(..) {
                    rec.put(&k, v);
                }
                return Ok(());
            }
            redis_rows(kv, rec, pid, big)
        })?;
        if !have_core {
            // --no-core: the in-process read-out is the core's, so it is not shown.
            core.values.clear();
        }
        charts(ctx);
        notes(ctx, big);
        Ok(())
    })
}

type Recorder = redislab_harness::Recorder;

/// The core's values, computed before the backends' steps run.
struct Recorder2 {
    values: Vec<(String, Cell)>,
}

impl Recorder2 {
    fn new(_: &str) -> Recorder2 {
        Recorder2 { values: Vec::new() }
    }

    fn put(&mut self, key: &str, cell: Cell) {
        self.values.push((key.into(), cell));
    }

    fn small(&mut self, before: &Zsl, after: &Zsl) {
        for (k, c) in small_cells(before, after) {
            self.put(&k, c);
        }
    }

    /// 1M inserts into the core's SkipList in process, and its levels.
    fn levels_core(&mut self, n: usize, seed: u64) {
        let phase = Phase::new(
            format!("core: {} inserts into a SkipList", fmt::thousands(n as u64)),
            Some(n as u64),
        );
        let mut list = SkipList::with_seed(seed);
        for i in 0..n {
            list.insert(i as f64, format!("m{i}").into_bytes());
            if i % 10_000 == 0 {
                phase.inc(10_000);
            }
        }
        phase.finish();
        let mut exactly = vec![0u64; 33];
        for h in list.node_levels() {
            exactly[h] += 1;
        }
        for (k, c) in level_cells(n, &exactly, list.level()) {
            self.put(&k, c);
        }
    }
}

fn core_zsl(server: &mut Server) -> Result<Zsl, String> {
    match server.keyspace.get(b"lb") {
        Some(redislab_core::keyspace::Value::Zset(z)) => z
            .skiplist()
            .map(|list| Zsl::from_core(&list.dump()))
            .ok_or_else(|| "core: lb is held in the btree layout (zset-layout)".into()),
        _ => Err("core: lb is not a zset".into()),
    }
}

fn declare(ctx: &mut Ctx) {
    let r = &mut ctx.report;
    r.exact(
        "members",
        "ZRANGE lb 0 -1 WITHSCORES (12 players added in score order)",
        "u01 10 u02 20 u03 30 u04 40 u05 50 u06 60 u07 70 u08 80 u09 90 u10 100 u11 110 u12 120",
    );
    r.row("encoding", "redis: OBJECT ENCODING lb after CONFIG SET zset-max-listpack-entries 0", redislab_harness::Kind::Exact, Some("skiplist"))
        .note("the core keeps its skiplist at every size and is read in process; its CONFIG SET of this parameter is accepted but does not change the encoding it reports (it answers listpack), a gap of the core");
    r.random(
        "dump",
        "the skiplist of lb, read out (levels, forward pointers with spans, backward chain)",
        Some("an illustration (§3.1)"),
    )
    .bounds(1.0, 32.0)
    .note("value: the levels in use (zsl->level); the drawing is in the text");
    r.random("heights", "levels of each node, head to tail", None)
        .bounds(1.0, 32.0);
    r.exact(
        "zrank",
        &format!("ZRANK lb {} (the server's answer)", WALK.1),
        "8",
    );
    r.random(
        "walk",
        &format!(
            "the walk to {}: links followed, top level first, spans added",
            WALK.1
        ),
        None,
    )
    .bounds(1.0, 12.0)
    .note("value: how many links the walk followed");
    r.exact(
        "walk-rank",
        "… sum of the spans − 1 (ranks count from 0)",
        "8",
    );
    r.random(
        "zadd",
        &format!("ZADD lb {} {}: what changed", ADDED.0, ADDED.1),
        None,
    )
    .bounds(1.0, 32.0)
    .note("value: the new node's levels");
    r.random("zadd-after", "… the list after it", None)
        .bounds(1.0, 32.0);
    for k in 1..=LEVELS {
        let expect = (1.0 - ZSKIPLIST_P) * ZSKIPLIST_P.powi(k as i32 - 1) * 100.0;
        let (lo, hi) = bounds_for(expect);
        r.random(
            &format!("level-{k}"),
            &format!(
                "1,000,000 members: nodes with exactly {k} level(s), % (P = 0.25 expects {})",
                fmt::quantity(expect, "%")
            ),
            None,
        )
        .bounds(lo, hi);
    }
    r.random(
        "level-top",
        "1,000,000 members: levels in use (zsl->level)",
        None,
    )
    .bounds(7.0, 20.0);
}

/// Bounds for a share expected at `expect`%: generous (a million draws), wide
/// where the level is rare.
fn bounds_for(expect: f64) -> (f64, f64) {
    if expect > 1.0 {
        (expect * 0.9, expect * 1.1)
    } else {
        (0.0, expect * 4.0 + 0.01)
    }
}

fn small_cells(before: &Zsl, after: &Zsl) -> Vec<(String, Cell)> {
    let detail = |z: &Zsl| serde_json::to_value(z).expect("serialises");
    let heights = before.heights();
    let (steps, rank, links) = before.walk_links(WALK.0, WALK.1);
    // The walk, for the drawing: the links ZRANK follows, highlighted.
    let mut drawn = detail(before);
    drawn["walk"] = serde_json::json!(links
        .iter()
        .map(|(lvl, from, to)| serde_json::json!({"level": lvl, "from": from, "to": to}))
        .collect::<Vec<_>>());
    drawn["walk_to"] = serde_json::json!(WALK.1);
    let changes = before.diff(after);
    let new_levels = after
        .nodes
        .iter()
        .find(|n| n.member == ADDED.1)
        .map_or(0, |n| n.levels.len());
    vec![
        (
            "dump".into(),
            Cell::count(before.level as u64, "levels")
                .with_text(before.draw())
                .with_detail(drawn),
        ),
        (
            "heights".into(),
            Cell::count(*heights.iter().max().unwrap_or(&0) as u64, "levels").with_text(
                heights
                    .iter()
                    .map(|h| h.to_string())
                    .collect::<Vec<_>>()
                    .join(" "),
            ),
        ),
        (
            "walk".into(),
            Cell::count(steps.len() as u64, "links")
                .with_text(format!("{} = {rank}", steps.join(" · "))),
        ),
        ("walk-rank".into(), Cell::text((rank - 1).to_string())),
        (
            "zadd".into(),
            Cell::count(new_levels as u64, "levels").with_text(changes.join("; ")),
        ),
        (
            "zadd-after".into(),
            Cell::count(after.level as u64, "levels")
                .with_text(after.draw())
                .with_detail(detail(after)),
        ),
    ]
}

fn level_cells(n: usize, exactly: &[u64], top: usize) -> Vec<(String, Cell)> {
    let mut out: Vec<(String, Cell)> = (1..=LEVELS)
        .map(|k| {
            let share = exactly.get(k).copied().unwrap_or(0) as f64 / n as f64 * 100.0;
            (
                format!("level-{k}"),
                Cell::num(share, "%")
                    .with("nodes", exactly.get(k).copied().unwrap_or(0) as f64, "")
                    .with_text(format!(
                        "{} ({} nodes)",
                        fmt::quantity_with(share, "%", 3),
                        fmt::thousands(exactly.get(k).copied().unwrap_or(0))
                    )),
            )
        })
        .collect();
    out.push(("level-top".into(), Cell::count(top as u64, "levels")));
    out
}

/// Redis: the same zset's skiplist from the server's memory, the ZADD, and the
/// level counts of a 1M-member zset.
fn redis_rows(kv: &mut Kv, rec: &mut Recorder, pid: Option<u32>, big: usize) -> Result<(), String> {
    let lb = kv.key("lb");
    let Some(pid) = pid else {
        let why = "skipped: gdb reads only a redis-server this run started (not --redis-url)";
        for k in [
            "dump",
            "heights",
            "walk",
            "walk-rank",
            "zadd",
            "zadd-after",
            "level-top",
        ] {
            rec.put(k, Cell::skipped(why));
        }
        for k in 1..=LEVELS {
            rec.put(&format!("level-{k}"), Cell::skipped(why));
        }
        return Ok(());
    };
    let read = |kv: &mut Kv, key: &str, mode: &str| -> Result<serde_json::Value, String> {
        let addr = gdb::object_address(kv, key)?;
        // The server's version goes with any failure: the node layout gdb reads
        // is the version's (see zsl_dump.py).
        gdb::read(pid, &addr, mode).map_err(|e| format!("{e} (server {})", kv.version))
    };
    match read(kv, &lb, "nodes")
        .and_then(|v| serde_json::from_value::<Zsl>(v).map_err(|e| e.to_string()))
    {
        Ok(before) => {
            kv.cmd(&["ZADD", &lb, &ADDED.0.to_string(), ADDED.1])?;
            let after = read(kv, &lb, "nodes")
                .and_then(|v| serde_json::from_value::<Zsl>(v).map_err(|e| e.to_string()))?;
            for (k, c) in small_cells(&before, &after) {
                rec.put(&k, c);
            }
        }
        Err(e) => {
            for k in ["dump", "heights", "walk", "walk-rank", "zadd", "zadd-after"] {
                rec.put(k, Cell::error(e.clone()));
            }
        }
    }
    // The big zset: loaded with ZADD, then only the levels are walked.
    let big_key = kv.key("big");
    let entries: Vec<(usize, String)> = (0..big).map(|i| (i, format!("m{i}"))).collect();
    timing::zadd_pipelined(kv, &big_key, &entries, 1_000)?;
    let phase = Phase::new(
        format!(
            "redis: gdb walks the upper levels of {} nodes (the server is paused)",
            fmt::thousands(big as u64)
        ),
        None,
    );
    let levels = read(kv, &big_key, "levels");
    phase.finish();
    match levels {
        Ok(v) => {
            let at_least: Vec<u64> = v["at_least"]
                .as_array()
                .map(|a| a.iter().filter_map(|x| x.as_u64()).collect())
                .unwrap_or_default();
            let mut exactly = vec![0u64; 34];
            for (i, c) in at_least.iter().enumerate() {
                let above = at_least.get(i + 1).copied().unwrap_or(0);
                exactly[i + 1] = c - above;
            }
            let top = v["level"].as_u64().unwrap_or(0) as usize;
            for (k, c) in level_cells(big, &exactly, top) {
                rec.put(&k, c);
            }
        }
        Err(e) => {
            for k in 1..=LEVELS {
                rec.put(&format!("level-{k}"), Cell::error(e.clone()));
            }
            rec.put("level-top", Cell::error(e));
        }
    }
    kv.cmd(&["DEL", &big_key])?;
    Ok(())
}

fn charts(ctx: &mut Ctx) {
    for (backend, row, what) in [
        ("core", "dump", "before"),
        ("redis", "dump", "before"),
        ("core", "zadd-after", "after"),
        ("redis", "zadd-after", "after"),
    ] {
        let title = if what == "before" {
            format!(
                "{backend}: the skiplist of lb, read from the {}",
                if backend == "core" {
                    "core's SkipList (in process)"
                } else {
                    "redis-server's memory (gdb)"
                }
            )
        } else {
            format!("{backend}: after ZADD lb {} {}", ADDED.0, ADDED.1)
        };
        let mut chart = Chart::new(&format!("{backend}-{row}"), ChartKind::Skiplist, &title)
            .caption(if what == "before" {
                "Each column is a node (the header first), each box one of its levels; an arrow is a forward pointer with its span (how many level-0 steps it skips). Red: the backward chain. Orange: the links ZRANK lb u09 follows from the top level down; their spans add up to 9, its 1-based rank. The spans along any level add up to the length."
            } else {
                "One ZADD: a new node with a random number of levels; every link above its levels that now jumps over it gains 1 in span, the links into it are split."
            });
        chart.series.push(redislab_harness::chart::Series {
            label: backend.into(),
            backend: Some(backend.into()),
            field: Some("detail".into()),
            points: vec![redislab_harness::chart::Point {
                x: 0.0,
                y: None,
                row: Some(row.into()),
            }],
            reference: false,
        });
        ctx.report.chart(chart);
    }
    let rows: Vec<(f64, String)> = (1..=LEVELS)
        .map(|k| (k as f64, format!("level-{k}")))
        .collect();
    let expect: Vec<(f64, f64)> = (1..=LEVELS)
        .map(|k| {
            (
                k as f64,
                (1.0 - ZSKIPLIST_P) * ZSKIPLIST_P.powi(k as i32 - 1) * 100.0,
            )
        })
        .collect();
    ctx.report.chart(
        Chart::new("levels", ChartKind::Xy, "Nodes by number of levels in a 1,000,000-member skiplist")
            .x("levels of a node", false)
            .y("share of the nodes, % (log)", true)
            .kv_rows(None, rows)
            .reference("P = 0.25: (1 − P)·P^(k−1)", expect)
            .caption("Each extra level is four times rarer: 75% of nodes have one level, 18.75% two, 4.7% three … on the core (ChaCha8) and on Redis (random()) alike, which is what makes a search O(log N) on average."),
    );
}

fn notes(ctx: &mut Ctx, big: usize) {
    ctx.note("Core: the ZADDs run in an in-process Server (the same code the listener serves), and SkipList::dump reads the list as stored: each node's levels with forward pointers and spans, its backward link, the header. The core's levels come from a ChaCha8 generator seeded per list, so they are the same on every run. The ZRANK row is asked over the socket, of the listener's own copy.");
    ctx.note("Redis: CONFIG SET zset-max-listpack-entries 0 makes even a 12-member zset a skiplist. DEBUG OBJECT gives the key object's address; gdb attaches to the redis-server this run started (it is built with -g) and follows zset->zsl->header->level[i].forward through the process's memory (labs/05k-skiplist/src/zsl_dump.py). In Redis 8.6 a node's level-0 span field holds its level count and the offset of its embedded member, and the level-0 span is 1 (0 for the last node): the read-out shows those derived spans. Redis 7.0 and 8.0 lay the node out as {sds ele; score; backward; level[]}: the member behind a pointer, real level-0 spans, no level count (a node has the levels whose chains from the header reach it); the script tells the layouts apart by the fields of zskiplistNode in the binary's debug info, and names the fields of any other (Valkey 9.1's) instead of reading it.");
    ctx.note(format!("The 1,000,000-member lists: the core inserts {} members into a SkipList in process and counts node_levels(); Redis gets them by ZADD and gdb walks each level's chain from the header (a node reaching level k is on chains 1..k), a few seconds with the server paused. Bounds: ±10% of P = 0.25's expectation for the common levels.", fmt::thousands(big as u64)));
}
