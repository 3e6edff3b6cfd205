//! 92f-shard — the article's 8-shard leaderboard on one server.
//!
//! Article 92 (003), sharding section: shard by `user_id % 8` into
//! `leaderboard:global:shard:<i>`, read the top N as each shard's top N merged, and
//! the warning that a shard's ZREVRANK is not a global rank. On seeded data the lab
//! shows the merged top N equals the unsharded key's, computes the global rank from
//! all shards (ZCOUNT above + ties) against ZREVRANK and times both, and measures
//! ZINCRBY throughput on one node beside the article's 100–200k ops/s.

mod data;
mod rank;
mod top;
mod writes;

use std::process::ExitCode;

use redislab_harness::report::Report;
use redislab_harness::{run, timing, Kind, Kv, LabInfo, Recorder};

const LAB: LabInfo = LabInfo {
    id: "92f-shard",
    uses_pg: false,
};

const TOP_N: usize = 10;
const SAMPLED: u64 = 1_000;
const TIMED_CALLS: usize = 2_000;
const UNPIPELINED_OPS: u64 = 20_000;
const PIPELINED_OPS: u64 = 200_000;
const PER_THREAD_OPS: u64 = 10_000;
const ARTICLE_RATE: &str = "100k–200k ops/s";

fn declare(r: &mut Report, users: u64) {
    let exact = |r: &mut Report, key: &str, label: &str| {
        r.row(key, label, Kind::Exact, None);
    };
    exact(
        r,
        "cards",
        "ZCARD leaderboard:global; Σ ZCARD of the 8 shards",
    );
    exact(r, "shard-cards", "ZCARD of shards 0…7");
    exact(
        r,
        "top-global",
        "global top 10: ZREVRANGE leaderboard:global 0 9 WITHSCORES",
    );
    exact(
        r,
        "top-merged",
        "merged top 10: each shard's ZREVRANGE 0 9 WITHSCORES, sorted by score desc then member bytes desc",
    );
    r.exact("top-equal", "merged top 10 vs global top 10", "equal");
    r.exact(
        "top100-equal",
        "merged top 100 vs global top 100 (8 × 100 candidates)",
        "equal",
    );
    exact(
        r,
        "top-article",
        "the article's merge (sort by score only; ties keep shard order) vs global top 10",
    );
    exact(
        r,
        "rank-user",
        "a sampled user whose rank needs the tie part: 8-shard rank / ZREVRANK global / ZREVRANK in own shard (1-based)",
    );
    exact(
        r,
        "rank-all",
        &format!("{SAMPLED} sampled users: 8-shard rank = ZREVRANK leaderboard:global"),
    );
    exact(
        r,
        "rank-no-ties",
        &format!("{SAMPLED} sampled users: Σ ZCOUNT (s +inf alone (ties ignored) = ZREVRANK"),
    );
    let measured = |r: &mut Report, key: &str, label: &str, article: Option<&str>| {
        r.row(key, label, Kind::Measured, article);
    };
    measured(
        r,
        "rank-cost-shards",
        "global rank across 8 shards (8 round trips)",
        None,
    );
    measured(
        r,
        "rank-cost-one",
        "ZREVRANK leaderboard:global (1 round trip)",
        None,
    );
    // Eight sequential round trips against one: about 8 by construction.
    // Checked by bounds, not by a band around one run's figure: on a loaded
    // machine one of the two medians can move alone (a clean CI run measured
    // 3.17 where the baseline had 10.56), and a timing must not fail a check
    // on noise. What the bounds catch is the lesson changing: a sharded rank
    // that no longer costs several round trips, or one that costs far more.
    r.measured(
        "rank-cost-ratio",
        "… 8 shards ÷ 1 key, medians of one run",
        None,
    )
    .bounds(2.0, 24.0);
    for (key, label) in [
        (
            "zincr-1",
            format!(
                "ZINCRBY, one client, unpipelined ({} ops)",
                timing::thousands(UNPIPELINED_OPS)
            ),
        ),
        (
            "zincr-p100",
            format!(
                "ZINCRBY, one client, pipelines of 100 ({} ops)",
                timing::thousands(PIPELINED_OPS)
            ),
        ),
        (
            "zincr-p1000",
            format!(
                "ZINCRBY, one client, pipelines of 1000 ({} ops)",
                timing::thousands(PIPELINED_OPS)
            ),
        ),
        (
            "zincr-t4",
            format!(
                "ZINCRBY, 4 clients in parallel, unpipelined (4 × {} ops)",
                timing::thousands(PER_THREAD_OPS)
            ),
        ),
        (
            "zincr-t8",
            format!(
                "ZINCRBY, 8 clients in parallel, unpipelined (8 × {} ops)",
                timing::thousands(PER_THREAD_OPS)
            ),
        ),
    ] {
        measured(r, key, &label, Some(ARTICLE_RATE));
    }
    r.params.insert("users".into(), users.to_string());
}

fn main() -> ExitCode {
    run(LAB, |ctx| {
        let count = ((100_000.0 * ctx.scale) as u64).max(1_000);
        declare(&mut ctx.report, count);
        let users = data::users(ctx.seed, count);
        ctx.each_kv(|kv, rec| shard_lab(kv, rec, &users))?;
        ctx.note("Ties are common by construction (scores 0–19,999 for 100,000 users). ZREVRANGE orders tied members by bytes, highest first, so the merge must too: a sort on the score alone keeps tied users in shard order, and the article's sharded_top_n then differs from the one-key top N wherever a tie crosses shards.");
        ctx.note("The global rank of a user is not stored anywhere once the set is sharded: it is ZREVRANK in the user's own shard plus, in each other shard, ZCOUNT key (s +inf and the members tied at s whose bytes are greater — one pipelined round trip per shard, 8 in all, against one ZREVRANK.");
        ctx.note("Throughput is measured from one client process on the same 2-core machine as the server, so it is a floor for the server, not its ceiling: the unpipelined figure is round-trip bound, the pipelined ones show what one node does when the client is not the limit.");
        Ok(())
    })
}

fn shard_lab(kv: &mut Kv, rec: &mut Recorder, users: &[(u64, u32)]) -> Result<(), String> {
    data::load(kv, users)?;
    let global = kv.key(data::GLOBAL);
    let shards = data::shard_keys(kv);
    let count = users.len() as u64;

    let mut cards = Vec::new();
    for key in &shards {
        cards.push(kv.reply(&["ZCARD", key]));
    }
    let sum: u64 = cards.iter().filter_map(|c| c.parse::<u64>().ok()).sum();
    rec.put(
        "cards",
        format!("{} / {sum}", kv.reply(&["ZCARD", &global])),
    );
    rec.put("shard-cards", cards.join(" "));

    let want = top::global(kv, TOP_N)?;
    let candidates = top::candidates(kv, TOP_N)?;
    let merged = top::merge(candidates.clone(), TOP_N);
    rec.put("top-global", top::render(&want));
    rec.put("top-merged", top::render(&merged));
    rec.put("top-equal", top::compare(&merged, &want));
    rec.put(
        "top-article",
        top::compare(&top::article_merge(candidates, TOP_N), &want),
    );
    let want100 = top::global(kv, 100)?;
    let merged100 = top::merge(top::candidates(kv, 100)?, 100);
    rec.put("top100-equal", top::compare(&merged100, &want100));

    ranks(kv, rec, &global, &shards, count)?;
    throughput(kv, rec, &shards, count)
}

fn sample(count: u64) -> impl Iterator<Item = u64> + Clone {
    (0..SAMPLED).map(move |i| 1 + (i * 7_919 + 13) % count)
}

fn ranks(
    kv: &mut Kv,
    rec: &mut Recorder,
    global: &str,
    shards: &[String],
    count: u64,
) -> Result<(), String> {
    let (mut equal, mut no_ties_equal, mut shown) = (0, 0, None);
    for user in sample(count) {
        let conn = kv.conn();
        let sharded = rank::across_shards(conn, shards, user)?;
        let want = rank::zrevrank(conn, global, user)?;
        let score = rank::zscore(conn, global, user)?;
        let above = rank::strictly_above(conn, shards, score)?;
        equal += u64::from(sharded == want);
        no_ties_equal += u64::from(Some(above) == want);
        if shown.is_none() && Some(above) != want {
            let own = rank::zrevrank(conn, &shards[data::shard_of(user)], user)?;
            let one = |r: Option<u64>| r.map_or("nil".into(), |r| (r + 1).to_string());
            shown = Some(format!(
                "user {user} (score {score}): {} / {} / {}",
                one(sharded),
                one(want),
                one(own)
            ));
        }
    }
    rec.put(
        "rank-user",
        shown.unwrap_or_else(|| "no sampled user has ties".into()),
    );
    rec.put("rank-all", format!("{equal} of {SAMPLED}"));
    rec.put("rank-no-ties", format!("{no_ties_equal} of {SAMPLED}"));

    let mut users = sample(count).cycle();
    let conn = kv.conn();
    let t = timing::measure(200, TIMED_CALLS, || {
        rank::across_shards(conn, shards, users.next().unwrap_or(1)).map(|_| ())
    })?;
    let shards_median = t.median_us;
    rec.put("rank-cost-shards", t.cell());
    let t = timing::measure(200, TIMED_CALLS, || {
        rank::zrevrank(conn, global, users.next().unwrap_or(1)).map(|_| ())
    })?;
    rec.put("rank-cost-one", t.cell());
    let ratio = shards_median as f64 / t.median_us.max(1) as f64;
    rec.put(
        "rank-cost-ratio",
        redislab_harness::Cell::num(ratio, "×").with_text(format!(
            "{} ({} / {} µs)",
            redislab_harness::fmt::quantity(ratio, "×"),
            shards_median,
            t.median_us
        )),
    );
    Ok(())
}

fn throughput(
    kv: &mut Kv,
    rec: &mut Recorder,
    shards: &[String],
    count: u64,
) -> Result<(), String> {
    rec.put(
        "zincr-1",
        writes::one_client(kv, shards, count, UNPIPELINED_OPS, 1)?,
    );
    rec.put(
        "zincr-p100",
        writes::one_client(kv, shards, count, PIPELINED_OPS, 100)?,
    );
    rec.put(
        "zincr-p1000",
        writes::one_client(kv, shards, count, PIPELINED_OPS, 1000)?,
    );
    rec.put(
        "zincr-t4",
        writes::parallel(kv, shards, count, 4, PER_THREAD_OPS)?,
    );
    rec.put(
        "zincr-t8",
        writes::parallel(kv, shards, count, 8, PER_THREAD_OPS)?,
    );
    Ok(())
}
