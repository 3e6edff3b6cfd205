//! 02k-cluster-bits — bitmaps and bitfields on a real Redis Cluster.
//!
//! Article 02 §3.7 says multi-key commands (BITOP, PFMERGE, …) need every key in
//! one slot on a Cluster, and lists "BITFIELD and BITOP on a Cluster" among what
//! it did not verify. On the 3-master cluster the harness starts:
//!
//! * seven daily attendance bitmaps without a tag spread over the nodes and
//!   BITOP AND over them fails with the server's CROSSSLOT; the client can GET
//!   and AND them itself; with `{w23}` BITOP works, all on one node ([`days`]);
//! * BITFIELD takes one key, so it simply works ([`bitfield`]);
//! * BITCOUNT/BITPOS of a bitmap split by id range over the nodes, answered by a
//!   client-side fan-out, against the same bitmap as one key, and what the
//!   fan-out costs in time ([`fanout`]);
//! * one bitmap grown to 64 MB: its node holds nearly all of the cluster's
//!   dataset memory; the same bits as 8 keys spread it ([`hotkey`]).
//!
//! The core is one node, not a cluster: it runs the same commands (its answers
//! are compared with the cluster's where they must agree) and its column says
//! "not a cluster" where a row is about nodes.

mod bitfield;
mod days;
mod fanout;
mod hotkey;
mod target;

use std::process::ExitCode;

use redislab_harness::{run, Kind, LabInfo, Recorder, Report};
use target::Target;

const LAB: LabInfo = LabInfo {
    id: "02k-cluster-bits",
    uses_pg: false,
};

const MASTERS: usize = 3;
const CROSSSLOT: &str = "CROSSSLOT Keys in request don't hash to the same slot";

fn main() -> ExitCode {
    run(LAB, |ctx| {
        declare(&mut ctx.report);
        ctx.report
            .params
            .insert("masters".into(), MASTERS.to_string());
        let days = days::generate(ctx.seed);
        let bitmap = fanout::generate(ctx.seed);

        if let Some(cluster) = ctx.start_cluster(MASTERS)? {
            let mut rec = Recorder::new("redis");
            let mut t = Target::cluster(cluster);
            steps(&mut t, &mut rec, &days, &bitmap)?;
            ctx.report.merge(rec)?;
        }
        if let Some(core) = ctx.core.as_mut() {
            let mut rec = Recorder::new("core");
            let mut t = Target::core(core);
            steps(&mut t, &mut rec, &days, &bitmap)?;
            ctx.report.merge(rec)?;
        }
        notes(ctx);
        Ok(())
    })
}

fn steps(
    t: &mut Target,
    rec: &mut Recorder,
    days: &[Vec<u8>],
    bitmap: &[u8],
) -> Result<(), String> {
    let phase = redislab_harness::progress::Phase::new(
        format!("{}: BITOP, BITFIELD, fan-out timings", t.column),
        None,
    );
    days::run(t, rec, days)?;
    bitfield::run(t, rec)?;
    let times = fanout::run(t, rec, bitmap)?;
    fanout::record_times(rec, &times);
    if let Some(nodes) = &t.nodes {
        hotkey::empty_cluster(nodes)?;
    }
    hotkey::run(t, rec)?;
    phase.finish();
    Ok(())
}

fn declare(r: &mut Report) {
    let exact = |r: &mut Report, key: &str, label: &str| {
        r.row(key, label, Kind::Exact, None);
    };
    let nodes_only = |r: &mut Report, key: &str, label: &str| {
        r.row(key, label, Kind::Exact, None).core_matches_redis = false;
    };
    exact(
        r,
        "day-slots",
        "CLUSTER KEYSLOT attendance:2026-06-01 … -07 (no tag)",
    );
    nodes_only(r, "day-nodes", "node serving each day key");
    r.exact(
        "crossslot",
        "BITOP AND attendance:all-week attendance:2026-06-01 … -07",
        CROSSSLOT,
    )
    .core_matches_redis = false;
    exact(
        r,
        "client-and",
        "client-side instead: GET the 7 days (from their nodes), AND, count the 1s",
    );
    exact(
        r,
        "tagged-slots",
        "CLUSTER KEYSLOT attendance:{w23}:2026-06-01 … -07",
    );
    nodes_only(r, "tagged-nodes", "node serving each tagged day key");
    exact(
        r,
        "tagged-bitop",
        "BITOP AND attendance:{w23}:all-week attendance:{w23}:2026-06-01 … -07",
    );
    exact(
        r,
        "tagged-count",
        "BITCOUNT attendance:{w23}:all-week (present all 7 days)",
    );
    exact(
        r,
        "bitfield",
        "BITFIELD progress:course-7 SET u7 #120 100 SET u7 #121 120 OVERFLOW SAT INCRBY u7 #121 10 GET u7 #120",
    );
    exact(
        r,
        "bitfield-ro",
        "BITFIELD_RO progress:course-7 GET u7 #121",
    );
    exact(r, "bitfield-strlen", "STRLEN progress:course-7");
    nodes_only(r, "bitfield-node", "node serving progress:course-7");
    nodes_only(
        r,
        "whole-node",
        "node serving active:all (8,388,608 ids, 1 MB)",
    );
    nodes_only(
        r,
        "shard-nodes",
        "nodes serving active:shard:0 … :7 (2²⁰ ids each, no tag)",
    );
    exact(r, "count-one", "BITCOUNT active:all");
    exact(r, "count-fan", "Σ BITCOUNT active:shard:K (fan-out)");
    exact(r, "pos-one", "BITPOS active:all 0 (first inactive id)");
    exact(
        r,
        "pos-fan",
        "fan-out: K·2²⁰ + BITPOS active:shard:K 0 0 -1 of the first shard that answers ≥ 0",
    );
    exact(
        r,
        "pos-trap",
        "BITPOS active:shard:0 0 on an all-ones shard (no range) · with 0 -1",
    );
    for (key, label) in [
        ("t-count-one", "BITCOUNT active:all (one key, one node)"),
        ("t-count-fan", "fan-out: 8 × BITCOUNT active:shard:K"),
        ("t-pos-one", "BITPOS active:all 0"),
        ("t-pos-fan", "fan-out: BITPOS shard by shard (6 calls)"),
    ] {
        r.measured(key, label, None);
    }
    r.measured(
        "r-count",
        "BITCOUNT: fan-out ÷ one key (medians, one run)",
        None,
    )
    .band(3.0);
    r.measured(
        "r-pos",
        "BITPOS: fan-out ÷ one key (medians, one run)",
        None,
    )
    .band(3.0);
    for (bits, size, min) in [
        (20, "128 KB", 20.0),
        (23, "1 MB", 50.0),
        (26, "8 MB", 85.0),
        (29, "64 MB", 95.0),
    ] {
        exact(
            r,
            &format!("mem-{bits}"),
            &format!(
                "SETBIT seen:all {} 1 ({size}) → MEMORY USAGE seen:all",
                (1u64 << bits) - 1
            ),
        );
        r.measured(
            &format!("share-{bits}"),
            &format!("{size} bitmap: share of the cluster's dataset memory on its node"),
            None,
        )
        .bounds(min, 100.0);
    }
    r.exact(
        "beyond",
        "SETBIT seen:all 4294967296 1 (2³², one past the largest offset)",
        "ERR bit offset is not an integer or out of range",
    );
    r.measured(
        "share-shards",
        "the same 64 MB as seen:shard:0 … :7 (8 MB each, no tag): hottest node's share",
        None,
    )
    .bounds(20.0, 80.0);
}

fn notes(ctx: &mut redislab_harness::Ctx) {
    // The version the cluster reported, not a fixed one.
    let version = ctx
        .server_version("redis cluster")
        .unwrap_or_else(|| "(not started)".into());
    ctx.note(format!("The redis column is a 3-master Redis Cluster (no replicas) of the same redis-server {version} binary, started by the harness on loopback and stopped at the end; the standalone Redis every lab gets is not used. The core is one node: it answers the same commands (its BITOP over untagged keys simply works, hence 'expected'), and rows about nodes say 'not a cluster'."));
    ctx.note("Article 02 §3.7: multi-key commands (BITOP, PFMERGE, PFCOUNT over several keys, MSETEX) need every key in the same slot on a Cluster. CROSSSLOT above is the server's own error; the cluster-aware client routes BITOP by its first key and that node refuses it.");
    ctx.note("A hash tag fixes CROSSSLOT by putting the whole week on one node: every day, and BITOP's work, land there. A client-side AND fetches 7 × 12,500 bytes instead and gives the same count.");
    ctx.note("Fan-out timings are client round trips over loopback (sequential calls through the cluster-aware client; the core: the same keys on its one node); the ratios are medians of one run. BITPOS over the shards stops at the first shard with a 0 bit (shard 5 here), so it makes 6 calls; each must pass the 0 -1 range, otherwise an all-ones shard answers the bit past its end instead of -1.");
    ctx.note("Hot key: a bitmap is one string, so one slot and one node, up to 512 MB (offset 2³²−1). Shares are used_memory_dataset of the node holding the key over the sum of the three nodes, on a cluster emptied before the step (bounds: the node's own overhead counts too, so small bitmaps have lower shares). The 8-shard layout spreads by slot, not evenly: the hottest node holds as many shards as their slots put on it.");
}
