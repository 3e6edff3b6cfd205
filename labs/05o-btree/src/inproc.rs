//! The core in this process: for each size and layout, a fresh server, its
//! real heap per member, and the four commands' ns per call; then the
//! btree ÷ skiplist ratios.

use std::collections::BTreeMap;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use redislab_core::keyspace::Value;
use redislab_core::Server;
use redislab_harness::alloc::CountingAlloc;
use redislab_harness::inprocess::{self, member, NsTiming, Op, MAX_POINTS};
use redislab_harness::timing::thousands;
use redislab_harness::{Cell, Recorder};

use crate::rows::{LAYOUTS, OPS};
use crate::COUNT_WIDTH;

const WARMUP: usize = 2_000;
/// Timed calls per layout and command, over all rounds.
const CALLS: usize = 50_000;
const ROUNDS: usize = 5;
/// Distinct argument lists per command, used in turn.
const VARIANTS: usize = 4_096;

fn argv(words: &[String]) -> Vec<Vec<u8>> {
    words.iter().map(|w| w.as_bytes().to_vec()).collect()
}

/// The commands timed on an `n`-member `lb`, with seeded random arguments.
fn ops(n: usize, seed: u64) -> Vec<(&'static str, Op)> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ n as u64);
    let s = |x: &str| x.to_string();
    let mut gen = |op: &str| -> Vec<Vec<Vec<u8>>> {
        (0..VARIANTS)
            .map(|_| {
                let who = member(rng.gen_range(1..=n as u32));
                let words = match op {
                    "zadd" => vec![
                        s("ZADD"),
                        s("lb"),
                        rng.gen_range(0..MAX_POINTS).to_string(),
                        who,
                    ],
                    "zrank" => vec![s("ZRANK"), s("lb"), who],
                    "zrange" => {
                        let r = rng.gen_range(0..n - 10);
                        vec![
                            s("ZRANGE"),
                            s("lb"),
                            r.to_string(),
                            (r + 9).to_string(),
                            s("WITHSCORES"),
                        ]
                    }
                    _ => {
                        let lo = rng.gen_range(0..MAX_POINTS - COUNT_WIDTH);
                        vec![
                            s("ZCOUNT"),
                            s("lb"),
                            lo.to_string(),
                            (lo + COUNT_WIDTH).to_string(),
                        ]
                    }
                };
                argv(&words)
            })
            .collect()
    };
    OPS.iter()
        .map(|&(op, _)| {
            let name = match op {
                "zadd" => "zadd",
                "zrank" => "zrank",
                "zrange" => "zrange",
                _ => "zcount",
            };
            (
                op,
                Op {
                    name,
                    argvs: gen(op),
                },
            )
        })
        .collect()
}

/// Builds `lb` in both layouts at every size; times the ops. One recorder: the
/// core's cells of the `heap-*`, `ns-*` and `ratio-*` rows.
pub fn steps(
    alloc: &CountingAlloc,
    sizes: &[usize],
    seed: u64,
    redis_bytes: &BTreeMap<usize, f64>,
) -> Result<Recorder, String> {
    let mut rec = Recorder::new("core");
    for &n in sizes {
        let points = inprocess::leaderboard(seed, n);
        let mut heap = BTreeMap::new();
        let mut servers = Vec::new();
        for layout in LAYOUTS {
            let mut server = Server::new();
            server.cmd(&["CONFIG", "SET", "zset-layout", layout]);
            alloc.set_counting(true);
            let before = alloc.snapshot();
            inprocess::load(&mut server, "lb", &points, 1)?;
            let used = alloc.snapshot().since(before);
            alloc.set_counting(false);
            check_layout(&server, layout)?;
            let per = used.requested as f64 / n as f64;
            heap.insert(layout, per);
            rec.put(
                &format!("heap-{layout}-{n}"),
                Cell::num(per, "B/member")
                    .with("requested", used.requested as f64, "B")
                    .with(
                        "usable_per_member",
                        used.usable as f64 / n as f64,
                        "B/member",
                    )
                    .with("blocks", used.blocks as f64, "")
                    .with_text(format!(
                        "{per:.1} B/member requested ({} B); {:.1} usable; {} blocks",
                        thousands(used.requested.max(0) as u64),
                        used.usable as f64 / n as f64,
                        used.blocks
                    )),
            );
            servers.push((layout, server));
        }
        // The two layouts take turns, ROUNDS times per command, so a change in
        // the machine's load hits both; each keeps its best round.
        let mut means: BTreeMap<(&str, &str), f64> = BTreeMap::new();
        for (op, o) in ops(n, seed) {
            let mut best: BTreeMap<&str, NsTiming> = BTreeMap::new();
            for _ in 0..ROUNDS {
                for (layout, server) in servers.iter_mut() {
                    let t = inprocess::measure_op(server, &o, WARMUP, CALLS / ROUNDS)?;
                    let kept = best.entry(*layout).or_insert(t);
                    if t.median_ns < kept.median_ns {
                        *kept = t;
                    }
                }
            }
            for (layout, t) in best {
                means.insert((op, layout), t.median_ns as f64);
                rec.put(
                    &format!("ns-{op}-{layout}-{n}"),
                    t.cell().with_text(format!(
                        "{t}, mean {:.0} ns (best median of {ROUNDS} rounds)",
                        t.mean_ns
                    )),
                );
            }
        }
        let ratio = heap["btree"] / heap["skiplist"];
        rec.put(
            &format!("heap-ratio-{n}"),
            Cell::num(ratio, "×").with_text(format!(
                "{ratio:.2}× ({:.1} / {:.1} B/member)",
                heap["btree"], heap["skiplist"]
            )),
        );
        let key = format!("redis-ratio-{n}");
        match redis_bytes.get(&n) {
            Some(&r) if r > 0.0 => rec.put(
                &key,
                Cell::num(heap["btree"] / r, "×").with_text(format!(
                    "{:.2}× ({:.1} / {r:.1} B/member)",
                    heap["btree"] / r,
                    heap["btree"]
                )),
            ),
            _ => rec.put(
                &key,
                Cell::skipped("no Redis used_memory figure in this run"),
            ),
        }
        for (op, _) in OPS {
            let (b, s) = (means[&(op, "btree")], means[&(op, "skiplist")]);
            rec.put(
                &format!("ratio-{op}-{n}"),
                Cell::num(b / s, "×").with_text(format!(
                    "{:.2}× (medians: btree {b:.0} ns / skiplist {s:.0} ns)",
                    b / s
                )),
            );
        }
    }
    Ok(rec)
}

/// The set really is held the way the row says.
fn check_layout(server: &Server, layout: &str) -> Result<(), String> {
    match server.keyspace.peek(b"lb") {
        Some(Value::Zset(z)) if z.layout().name() == layout => Ok(()),
        Some(Value::Zset(z)) => Err(format!(
            "core: lb is held as {}, not {layout}",
            z.layout().name()
        )),
        _ => Err("core: lb is not a zset".into()),
    }
}
