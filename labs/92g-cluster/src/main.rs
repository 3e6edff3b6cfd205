//! 92g-cluster — a leaderboard on a real Redis Cluster: slots, CROSSSLOT, hash
//! tags, shards spread over the nodes, and the core's key-slot function.
//!
//! Article 003 (leaderboards), "Vấn đề với Redis Cluster", sections 10 and 11. The
//! harness starts a real 3-master Redis Cluster on loopback for this lab (and a
//! standalone Redis, as for every lab). On the cluster:
//!
//! * ZUNIONSTORE of seven day keys into a week key fails with the server's own
//!   CROSSSLOT error; with the `{global}` hash tag every key has one slot and the
//!   same ZUNIONSTORE works ([`periods`]);
//! * the article's 8-shard leaderboard (`user_id % 8`, keys without a common tag)
//!   lands on every node, written and read through a cluster-aware client, and its
//!   top 10 merged client-side equals the global top 10 of one node holding the
//!   same data ([`shards`]);
//! * the core's key-slot function gives the slot `CLUSTER KEYSLOT` gives, on
//!   thousands of seeded keys with braces everywhere ([`slots`]).
//!
//! The core is one node, not a cluster: its column shows its `CLUSTER KEYSLOT`, the
//! same commands on one node, and the single-node global top 10.

mod node;
mod periods;
mod shards;
mod slots;

use std::process::ExitCode;

use redislab_harness::{run, Kind, LabInfo, Recorder};

const LAB: LabInfo = LabInfo {
    id: "92g-cluster",
    uses_pg: false,
};

/// Masters in the cluster (Redis's minimum; no replicas).
const MASTERS: usize = 3;

fn main() -> ExitCode {
    run(LAB, |ctx| {
        declare_rows(&mut ctx.report);
        ctx.report
            .params
            .insert("masters".into(), MASTERS.to_string());
        let seed = ctx.seed;
        let events = shards::events(seed, ctx.scale);
        let keys = slots::keys(seed, slots::count(ctx.scale));

        // The cluster's answers go in the redis column.
        let mut cluster_slots = None;
        let mut cluster_top = None;
        if let Some(cluster) = ctx.start_cluster(MASTERS)? {
            let mut rec = Recorder::new("redis");
            periods::run(cluster, &mut rec, seed, true)?;
            cluster_top = Some(shards::on_cluster(cluster, &mut rec, &events)?);
            cluster_slots = Some(slots::on_cluster(cluster, &mut rec, &keys)?);
            ctx.report.merge(rec)?;
        }

        // The standalone Redis: only the single-node global top 10.
        if let Some(redis) = ctx.redis.as_mut() {
            let mut rec = Recorder::new("redis");
            let global = shards::on_one_node(redis, &mut rec, &events, false)?;
            if let Some(merged) = &cluster_top {
                rec.put("merged-is-global", shards::verdict(merged, &global));
            }
            ctx.report.merge(rec)?;
        }

        if let Some(core) = ctx.core.as_mut() {
            let mut rec = Recorder::new("core");
            periods::run(core, &mut rec, seed, false)?;
            shards::on_one_node(core, &mut rec, &events, true)?;
            slots::on_core(core, &mut rec, &keys, cluster_slots.as_deref())?;
            ctx.report.merge(rec)?;
        }

        notes(ctx);
        Ok(())
    })
}

fn declare_rows(r: &mut redislab_harness::Report) {
    let exact = |r: &mut redislab_harness::Report, key: &str, label: &str| {
        r.row(key, label, Kind::Exact, None);
    };
    exact(
        r,
        "period-slots",
        "CLUSTER KEYSLOT leaderboard:day:2026-06-01 … -06-07, leaderboard:week:2026-W23",
    );
    r.exact(
        "crossslot",
        "ZUNIONSTORE leaderboard:week:2026-W23 7 leaderboard:day:2026-06-01 … (no tag)",
        "CROSSSLOT Keys in request don't hash to the same slot",
    )
    .note("cluster only: the core is one node holding every slot, not a cluster, so it has no CROSSSLOT to give and is left out of this row");
    exact(
        r,
        "tagged-slots",
        "CLUSTER KEYSLOT of the same 8 keys with {global}: leaderboard:{global}:day:…",
    );
    exact(
        r,
        "tagged-union",
        "ZUNIONSTORE leaderboard:{global}:week:2026-W23 7 leaderboard:{global}:day:…",
    );
    exact(
        r,
        "tagged-top",
        "ZREVRANGE leaderboard:{global}:week:2026-W23 0 4 WITHSCORES",
    );
    exact(
        r,
        "shard-slots",
        "CLUSTER KEYSLOT leaderboard:global:shard:0 … :7",
    );
    exact(
        r,
        "shard-nodes",
        "node serving each shard (cluster; nodes n1..n3 by slot range)",
    );
    exact(
        r,
        "shard-cards",
        "ZCARD of each shard (cluster: asked of the node that serves it, no redirect)",
    );
    exact(
        r,
        "top-merged",
        "top 10 merged client-side from the 8 shards' ZREVRANGE 0 9 WITHSCORES",
    );
    exact(
        r,
        "top-global",
        "global top 10 on one node: ZREVRANGE leaderboard:global 0 9 WITHSCORES (redis: standalone)",
    );
    r.exact("merged-is-global", "merged top 10 = global top 10", "yes");
    exact(
        r,
        "keyslot-digest",
        "CLUSTER KEYSLOT of the seeded random keys: count · distinct slots · sum",
    );
    exact(
        r,
        "keyslot-agree",
        "keys whose slot agrees (redis: cluster vs the core's key_slot(); core: its CLUSTER KEYSLOT vs the cluster's)",
    );
}

fn notes(ctx: &mut redislab_harness::Ctx) {
    // The version the cluster reported, not a fixed one.
    let version = ctx
        .server_version("redis cluster")
        .unwrap_or_else(|| "(not started)".into());
    ctx.note(format!("The cluster is 3 masters without replicas, started by the harness from the same redis-server {version} binary (--cluster-enabled yes, node timeout 2000 ms), joined with redis-cli --cluster create, and stopped at the end. The redis column of the cluster rows is the cluster; of the global top 10 row, a standalone Redis."));
    ctx.note("CROSSSLOT is the server's own error: the cluster-aware client routes ZUNIONSTORE by its first key and the node refuses it because the 7 day keys and the week key are in 8 different slots. The core is not a cluster (one node, every slot): it would simply run the command, so it is left out of that row rather than shown as a mismatch.");
    ctx.note("The article pairs leaderboard:day:2026-06-01 with leaderboard:week:2026-W22, but 2026-06-01 is the Monday of ISO week 23, and the article's own weekly_key() gives 2026-W23: the lab uses W23.");
    ctx.note("The article's merge sorts the candidates by score only; the lab breaks ties as ZREVRANGE does (higher member bytes first), otherwise a merged top N can list tied users in another order than the global one.");
    ctx.note("{global} puts the whole leaderboard on one node: it fixes CROSSSLOT and gives up spreading that key group, as the article warns; the shard keys have no common tag so they spread over all three nodes.");
    ctx.note("A Redis started without cluster support answers every CLUSTER subcommand, KEYSLOT included, with 'ERR This instance has cluster support disabled'. The core answers KEYSLOT like a cluster node (a pure function of the key) and every other subcommand like the non-cluster server.");
}
