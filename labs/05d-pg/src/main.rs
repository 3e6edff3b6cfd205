//! 05d-pg — the same leaderboard in PostgreSQL: four questions, EXPLAIN ANALYZE
//! beside Redis.
//!
//! Article 05, section 3.5. A table of 1,000,000 (user_id, points) rows with an
//! index on (points DESC, user_id) answers "top 10" from the first ten index entries,
//! but "what is my rank" has to count every entry above the user, and a rank() window
//! walks the whole table. A sorted set answers the rank from the spans of its
//! skiplist. The same seeded data goes into the table and into a zset on Redis and on
//! the core; each question is asked of all three, timed, and the answers compared.

use std::io::Write;
use std::process::ExitCode;
use std::time::Instant;

use postgres::SimpleQueryMessage;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use redis::Value;
use redislab_harness::backend::pg_error_text;
use redislab_harness::report::Report;
use redislab_harness::timing::{self, thousands, KvTiming};
use redislab_harness::{run, Kind, Kv, LabInfo, Pg, Recorder};

const LAB: LabInfo = LabInfo {
    id: "05d-pg",
    uses_pg: true,
};

/// Rows at scale 1.
const ROWS: f64 = 1_000_000.0;
/// Points are uniform in [0, MAX_POINTS) (the article's 05c figures fit this: 200,290
/// members between 400,000 and 600,000).
const MAX_POINTS: u32 = 1_000_000;
/// The user whose rank the article asks for.
const USER: u32 = 123_456;
/// Points added by the third question.
const BONUS: u32 = 10;
/// EXPLAIN ANALYZE: one warm-up, then this many runs; the median is reported.
const PG_RUNS: usize = 5;
/// Single-member commands: warm-up and measured calls.
const KV_WARMUP: usize = 200;
const KV_CALLS: usize = 2_000;
/// The whole-zset walk moves ~25 MB per call.
const WALK_WARMUP: usize = 1;
const WALK_CALLS: usize = 5;
/// ZADD commands per pipeline.
const ZADD_BATCH: usize = 1_000;

/// The seeded data set: user `i + 1` has `points[i]`.
struct Data {
    points: Vec<u32>,
    /// The user the questions are about (123456, or a proportional id when the
    /// scaled table is smaller than that).
    user: u32,
}

impl Data {
    fn generate(seed: u64, scale: f64) -> Data {
        let n = ((ROWS * scale).round() as usize).max(10);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let points = (0..n).map(|_| rng.gen_range(0..MAX_POINTS)).collect();
        let user = if n >= USER as usize {
            USER
        } else {
            ((n as f64 * USER as f64 / ROWS) as u32).max(1)
        };
        Data { points, user }
    }

    fn len(&self) -> usize {
        self.points.len()
    }

    fn points_of(&self, user: u32) -> u32 {
        self.points[user as usize - 1]
    }
}

/// Zero-padded so that byte order (Redis's order of tied members) is numeric order.
fn member(user: u32) -> String {
    format!("u{user:07}")
}

/// What one question's EXPLAIN ANALYZE runs showed.
struct Explained {
    median_ms: f64,
    min_ms: f64,
    max_ms: f64,
    /// The main node: the scan of `lb` that produced the most rows.
    node: String,
    /// Rows × loops of that scan node (index entries read).
    node_rows: u64,
    /// The plan of the run whose time is the median.
    text: String,
}

struct Node {
    name: String,
    on_lb: bool,
    rows: f64,
}

fn main() -> ExitCode {
    run(LAB, |ctx| {
        let data = Data::generate(ctx.seed, ctx.scale);
        let n = data.len();
        let user = member(data.user);
        declare_rows(&mut ctx.report, n, &user);

        let mut plans = Vec::new();
        ctx.with_pg(|pg, rec| pg_questions(pg, rec, &data, &mut plans))?;
        ctx.each_kv(|kv, rec| kv_questions(kv, rec, &data))?;
        agreement(&mut ctx.report)?;

        ctx.note(format!(
            "Data: {} users u0000001..; points uniform in [0, {}) from ChaCha8 seed {}; {} has {} points. The same pairs are COPYed into pg and ZADDed (pipelines of {} commands) into Redis and the core.",
            thousands(n as u64),
            thousands(MAX_POINTS as u64),
            ctx.seed,
            user,
            data.points_of(data.user),
            ZADD_BATCH
        ));
        ctx.note(format!(
            "pg times are the server's own 'Execution Time' of EXPLAIN (ANALYZE, COSTS OFF, BUFFERS OFF), median of {PG_RUNS} runs after one warm-up. Redis/core times are client round trips over loopback (request, server work, reply transfer and parsing into a redis::Value), median/p99 over n calls after a warm-up; 'server' rows are INFO commandstats usec over calls for the measured calls only (the core has its own commandstats too)."
        ));
        ctx.note("Rank is 1 + the number of users with strictly more points, in every backend: pg counts them (question 2) or uses rank() (question 4), Redis/core use ZCOUNT lb (p +inf, or count them in the walked reply. ZREVRANK is a position, not a rank: users tied with u on points are ordered by member bytes, larger first under REV, so ZREVRANK + 1 = rank + the tied users with a larger id. Ids are zero-padded (u0123456) so byte order is numeric order, and pg's 'position' counts (points > p) OR (points = p AND user_id > id) to match.");
        ctx.note(format!(
            "Question 3 runs each EXPLAIN ANALYZE UPDATE inside BEGIN … ROLLBACK: the update really happens (heap tuple + an entry in both indexes, all inside the measured time), only the commit is skipped, and every run starts from the same table. On Redis/core every timed ZINCRBY adds {BONUS}; the member's score is put back with ZADD before the walk."
        ));
        ctx.note("Round trips against 05c: both labs time the same commands with the same timing module over loopback (2,000 calls after 200 warm-ups here, 5,000 in 05c), and both now give 17–22 µs for Redis's single-member commands. The baseline of 30 Nov had 57–62 µs for Redis, with the same server time (INFO commandstats 0.26–0.51 µs a call) and the core at 24–26 µs in that same run: the extra ~40 µs was outside Redis's command, in getting the separate redis-server process scheduled and its reply back on two cores shared with other jobs (the core runs inside the lab's own process). Compare the server rows across labs; a round-trip median on this machine also measures what else runs.");
        ctx.note("The top ten agree on points; a tie at #10 is broken differently: pg's query orders by (points DESC, user_id), the index order, while ZRANGE … REV lists tied members by bytes descending (05a), so the two can name different users there.");
        ctx.note("Question 4's Redis counterpart is the whole ordered set: ZRANGE lb 0 -1 REV WITHSCORES returns every (member, score) in rank order, which is what a rank() over the whole table computes. To know one user's rank, Redis needs only ZREVRANK (or ZCOUNT).");
        ctx.note("The article's user 123456 had few points (986,236 index entries above it: 'the bad case, but the common one'); here the count reads as many entries as there are users above this seed's user 123456, which sets the time of question 2.");
        for (question, text) in plans {
            ctx.note(format!("pg plan, {question}:\n{text}"));
        }
        Ok(())
    })
}

fn declare_rows(r: &mut Report, n: usize, user: &str) {
    let rows = thousands(n as u64);
    let measured = |r: &mut Report, key: &str, label: &str, article: Option<&str>| {
        r.row(key, label, Kind::Measured, article);
    };
    measured(
        r,
        "load",
        &format!("load {rows} users (pg: COPY, 2 indexes, VACUUM ANALYZE)"),
        None,
    );

    // 1. top 10
    measured(
        r,
        "q1-pg-ms",
        "1 top 10 · pg ORDER BY points DESC LIMIT 10: execution",
        Some("0.168 ms"),
    );
    r.row(
        "q1-pg-plan",
        "1 top 10 · pg plan: scan node",
        Kind::Exact,
        Some("Index Only Scan"),
    );
    measured(
        r,
        "q1-kv",
        "1 top 10 · ZRANGE lb 0 9 REV WITHSCORES: round trip",
        Some("18 µs (§3.4)"),
    );
    measured(r, "q1-kv-server", "1 top 10 · ZRANGE: server µs/call", None);
    r.row("q1-answer", "1 top 10 · their points", Kind::Exact, None);
    r.row(
        "q1-tenth",
        "1 top 10 · #10 (ties: pg by user_id, REV by member desc)",
        Kind::Exact,
        None,
    );

    // 2. rank of one user
    measured(
        r,
        "q2-pg-ms",
        &format!("2 rank of {user} · pg count(*) of higher points: execution"),
        Some("103.6 ms"),
    );
    r.row(
        "q2-pg-plan",
        "2 rank · pg plan: scan node",
        Kind::Exact,
        Some("Parallel Index Only Scan (2 workers)"),
    );
    r.row(
        "q2-pg-rows",
        "2 rank · pg index entries counted (rows × loops)",
        Kind::Exact,
        Some("986,236"),
    );
    measured(
        r,
        "q2-kv",
        &format!("2 rank · ZREVRANK lb {user}: round trip"),
        Some("15 µs (§3.4)"),
    );
    measured(r, "q2-kv-server", "2 rank · ZREVRANK: server µs/call", None);
    r.row(
        "q2-rank",
        "2 rank = 1 + users with more points (pg count; ZCOUNT lb (p +inf)",
        Kind::Exact,
        None,
    );
    r.row(
        "q2-position",
        "2 position, ties by id desc (pg count with tie-break; ZREVRANK+1)",
        Kind::Exact,
        None,
    );

    // 3. add points
    measured(
        r,
        "q3-pg-ms",
        &format!("3 add {BONUS} points · pg UPDATE by user_id: execution"),
        Some("0.478 ms"),
    );
    r.row(
        "q3-pg-plan",
        "3 add points · pg plan: top ← scan node",
        Kind::Exact,
        Some("Update ← (not shown)"),
    );
    measured(
        r,
        "q3-kv",
        &format!("3 add points · ZINCRBY lb {BONUS} {user}: round trip"),
        Some("28 µs (§3.4, +5)"),
    );
    measured(
        r,
        "q3-kv-server",
        "3 add points · ZINCRBY: server µs/call",
        None,
    );
    r.row(
        "q3-answer",
        &format!("3 points of {user} after +{BONUS}"),
        Kind::Exact,
        None,
    );

    // 4. whole-table rank
    measured(
        r,
        "q4-pg-ms",
        "4 rank() OVER (ORDER BY points DESC), whole table: execution",
        Some("563.6 ms"),
    );
    r.row(
        "q4-pg-plan",
        "4 whole-table rank · pg plan: scan node",
        Kind::Exact,
        None,
    );
    measured(
        r,
        "q4-kv",
        "4 nearest: walk every rank, ZRANGE lb 0 -1 REV WITHSCORES: round trip",
        None,
    );
    measured(
        r,
        "q4-kv-server",
        "4 walk · ZRANGE 0 -1: server µs/call",
        None,
    );
    r.row(
        "q4-answer",
        &format!("4 rank of {user} from the whole pass (pg rank(); counted in the walk)"),
        Kind::Exact,
        None,
    );

    r.row(
        "agree",
        "answers agree (redis/core: with pg; pg: count+1 = rank())",
        Kind::Exact,
        None,
    );
}

// ---------------------------------------------------------------- PostgreSQL

fn pg_questions(
    pg: &mut Pg,
    rec: &mut Recorder,
    data: &Data,
    plans: &mut Vec<(&'static str, String)>,
) -> Result<(), String> {
    let started = Instant::now();
    load_table(pg, data)?;
    rec.put("load", format!("{:.1} s", started.elapsed().as_secs_f64()));

    let u = data.user;
    let top10 = "SELECT user_id, points FROM lb ORDER BY points DESC, user_id LIMIT 10";
    let count = format!(
        "SELECT count(*) + 1 FROM lb WHERE points > (SELECT points FROM lb WHERE user_id = {u})"
    );
    let update = format!("UPDATE lb SET points = points + {BONUS} WHERE user_id = {u}");
    let window = format!(
        "SELECT rank FROM (SELECT user_id, rank() OVER (ORDER BY points DESC) AS rank FROM lb) ranked WHERE user_id = {u}"
    );

    // The answers, asked plainly.
    let rows = pg
        .client
        .simple_query(top10)
        .map_err(|e| format!("pg: {}", pg_error_text(&e)))?;
    // user_id shown as the zset's member, to compare with Redis.
    let top: Vec<(String, String)> = pairs_of_rows(&rows)
        .into_iter()
        .map(|(id, pts)| match id.parse() {
            Ok(id) => (member(id), pts),
            Err(_) => (id, pts),
        })
        .collect();
    put_top(rec, &top);
    rec.put("q2-rank", pg.column(&count));
    rec.put(
        "q2-position",
        pg.column(&format!(
            "SELECT count(*) + 1 FROM lb l, (SELECT points FROM lb WHERE user_id = {u}) me \
             WHERE l.points > me.points OR (l.points = me.points AND l.user_id > {u})"
        )),
    );
    rec.put("q4-answer", pg.column(&window));
    // The plans. The update runs last: even rolled back, it clears the visibility-map
    // bit of the page it touched, and index-only scans would then visit that page.
    for (q, sql, rollback, name) in [
        ("q1", top10.to_string(), false, "1 top 10"),
        ("q2", count, false, "2 rank by count"),
        ("q4", window, false, "4 rank() over the whole table"),
        ("q3", update.clone(), true, "3 add points (rolled back)"),
    ] {
        let e = explain(pg, &sql, rollback)?;
        rec.put(
            &format!("{q}-pg-ms"),
            format!(
                "{:.3} ms (median of {PG_RUNS}, {:.3}–{:.3})",
                e.median_ms, e.min_ms, e.max_ms
            ),
        );
        rec.put(&format!("{q}-pg-plan"), e.node.clone());
        if q == "q2" {
            rec.put("q2-pg-rows", thousands(e.node_rows));
        }
        plans.push((name, format!("{sql}\n{}", e.text)));
    }
    pg.client.batch_execute("BEGIN").map_err(pg_err)?;
    rec.put(
        "q3-answer",
        pg.column(&format!("{update} RETURNING points")),
    );
    pg.client.batch_execute("ROLLBACK").map_err(pg_err)?;
    Ok(())
}

/// Every row's first two columns, from a simple query.
fn pairs_of_rows(messages: &[SimpleQueryMessage]) -> Vec<(String, String)> {
    messages
        .iter()
        .filter_map(|m| match m {
            SimpleQueryMessage::Row(r) => Some((
                r.get(0).unwrap_or("NULL").to_string(),
                r.get(1).unwrap_or("NULL").to_string(),
            )),
            _ => None,
        })
        .collect()
}

fn load_table(pg: &mut Pg, data: &Data) -> Result<(), String> {
    pg.client
        .batch_execute("CREATE TABLE lb (user_id integer NOT NULL, points integer NOT NULL)")
        .map_err(pg_err)?;
    let mut writer = pg
        .client
        .copy_in("COPY lb (user_id, points) FROM STDIN")
        .map_err(pg_err)?;
    let mut buf = String::new();
    timing::bulk_load("pg: COPY lb", data.len(), 100_000, |start, end| {
        buf.clear();
        for i in start..end {
            buf.push_str(&format!("{}\t{}\n", i + 1, data.points[i]));
        }
        writer
            .write_all(buf.as_bytes())
            .map_err(|e| format!("pg: COPY: {e}"))
    })?;
    writer.finish().map_err(pg_err)?;
    pg.client
        .batch_execute(
            "ALTER TABLE lb ADD PRIMARY KEY (user_id);
             CREATE INDEX lb_points ON lb (points DESC, user_id);",
        )
        .map_err(pg_err)?;
    // Alone: VACUUM cannot run in the implicit transaction of a multi-statement batch.
    pg.client.batch_execute("VACUUM ANALYZE lb").map_err(pg_err)
}

/// EXPLAIN ANALYZE of `sql`: one warm-up and [`PG_RUNS`] runs; `rollback` wraps each
/// run in BEGIN … ROLLBACK.
fn explain(pg: &mut Pg, sql: &str, rollback: bool) -> Result<Explained, String> {
    let mut runs: Vec<(f64, String)> = Vec::new();
    for i in 0..=PG_RUNS {
        if rollback {
            pg.client.batch_execute("BEGIN").map_err(pg_err)?;
        }
        let messages = pg
            .client
            .simple_query(&format!("EXPLAIN (ANALYZE, COSTS OFF, BUFFERS OFF) {sql}"))
            .map_err(|e| format!("pg: EXPLAIN {sql}: {}", pg_error_text(&e)));
        if rollback {
            pg.client.batch_execute("ROLLBACK").map_err(pg_err)?;
        }
        let text: Vec<String> = messages?
            .iter()
            .filter_map(|m| match m {
                SimpleQueryMessage::Row(r) => r.get(0).map(str::to_string),
                _ => None,
            })
            .collect();
        let text = text.join("\n");
        let ms = execution_ms(&text)
            .ok_or_else(|| format!("pg: no Execution Time in the plan of {sql}:\n{text}"))?;
        if i > 0 {
            runs.push((ms, text));
        }
    }
    runs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (median_ms, text) = runs[runs.len() / 2].clone();
    let (node, node_rows) = main_node(&text);
    Ok(Explained {
        median_ms,
        min_ms: runs[0].0,
        max_ms: runs[runs.len() - 1].0,
        node,
        node_rows,
        text,
    })
}

fn execution_ms(plan: &str) -> Option<f64> {
    plan.lines().find_map(|l| {
        l.trim()
            .strip_prefix("Execution Time: ")?
            .strip_suffix(" ms")?
            .parse()
            .ok()
    })
}

/// The scan of `lb` that produced the most rows, e.g. `Parallel Index Only Scan (2
/// workers)`, prefixed with `Update ← ` for the update; and its rows × loops.
fn main_node(plan: &str) -> (String, u64) {
    let mut nodes = Vec::new();
    let mut workers = None;
    for line in plan.lines() {
        let t = line.trim_start();
        let t = t.strip_prefix("->").map(str::trim_start).unwrap_or(t);
        if let Some(w) = t.strip_prefix("Workers Launched: ") {
            workers = workers.or(w.trim().parse::<u32>().ok());
        }
        let Some(at) = t.find(" (actual") else {
            continue;
        };
        let head = &t[..at];
        let name = head
            .split(" using ")
            .next()
            .unwrap_or(head)
            .split(" on ")
            .next()
            .unwrap_or(head)
            .to_string();
        let on_lb = head.ends_with(" on lb") || head.contains(" on lb ");
        let stats = &t[at..];
        let field = |key: &str| -> f64 {
            stats
                .split(key)
                .nth(1)
                .and_then(|s| s.split(|c: char| !(c.is_ascii_digit() || c == '.')).next())
                .and_then(|s| s.parse().ok())
                .unwrap_or(0.0)
        };
        nodes.push(Node {
            name,
            on_lb,
            rows: field("rows=") * field("loops="),
        });
    }
    let mut best: Option<&Node> = None;
    for node in nodes.iter().filter(|n| n.on_lb && n.name.contains("Scan")) {
        if best.is_none_or(|b| node.rows > b.rows) {
            best = Some(node);
        }
    }
    let Some(scan) = best else {
        return ("(no scan of lb)".into(), 0);
    };
    let mut shown = scan.name.clone();
    if scan.name.starts_with("Parallel") {
        if let Some(w) = workers {
            shown.push_str(&format!(" ({w} workers)"));
        }
    }
    if let Some(top) = nodes.first() {
        if top.name == "Update" {
            shown = format!("Update ← {shown}");
        }
    }
    (shown, scan.rows.round() as u64)
}

fn pg_err(e: postgres::Error) -> String {
    format!("pg: {}", pg_error_text(&e))
}

/// The top ten's points (the answer every backend must agree on) and who is #10
/// (where a tie shows each backend's tie order).
fn put_top(rec: &mut Recorder, top: &[(String, String)]) {
    let points: Vec<&str> = top.iter().map(|(_, p)| p.as_str()).collect();
    rec.put("q1-answer", points.join(" "));
    rec.put(
        "q1-tenth",
        top.get(9).map_or_else(
            || format!("only {} rows", top.len()),
            |t| format!("{} {}", t.0, t.1),
        ),
    );
}

// ---------------------------------------------------------------- Redis and core

fn kv_questions(kv: &mut Kv, rec: &mut Recorder, data: &Data) -> Result<(), String> {
    let lb = kv.key("lb");
    let user = member(data.user);
    let p = data.points_of(data.user);

    let entries: Vec<(u32, String)> = data
        .points
        .iter()
        .enumerate()
        .map(|(i, &pts)| (pts, member(i as u32 + 1)))
        .collect();
    let started = Instant::now();
    timing::zadd_pipelined(kv, &lb, &entries, ZADD_BATCH)?;
    drop(entries);
    rec.put("load", format!("{:.1} s", started.elapsed().as_secs_f64()));
    let card = kv.reply(&["ZCARD", &lb]);
    if card != data.len().to_string() {
        return Err(format!(
            "{}: ZCARD {lb} is {card} after loading {}",
            kv.name,
            data.len()
        ));
    }

    // The answers.
    let top = pairs(&kv.cmd(&["ZRANGE", &lb, "0", "9", "REV", "WITHSCORES"])?);
    put_top(rec, &top);
    let above = kv.cmd(&["ZCOUNT", &lb, &format!("({p}"), "+inf"])?;
    rec.put("q2-rank", plus_one(&above));
    let revrank = kv.cmd(&["ZREVRANK", &lb, &user])?;
    rec.put("q2-position", plus_one(&revrank));

    // The timings.
    let t = timing::measure_kv(kv, "zrange", KV_WARMUP, KV_CALLS, |kv| {
        kv.cmd(&["ZRANGE", &lb, "0", "9", "REV", "WITHSCORES"])
            .map(drop)
    })?;
    put_timing(rec, "q1", &t);
    let t = timing::measure_kv(kv, "zrevrank", KV_WARMUP, KV_CALLS, |kv| {
        kv.cmd(&["ZREVRANK", &lb, &user]).map(drop)
    })?;
    put_timing(rec, "q2", &t);

    let bonus = BONUS.to_string();
    rec.put("q3-answer", kv.reply(&["ZINCRBY", &lb, &bonus, &user]));
    let t = timing::measure_kv(kv, "zincrby", KV_WARMUP, KV_CALLS, |kv| {
        kv.cmd(&["ZINCRBY", &lb, &bonus, &user]).map(drop)
    })?;
    put_timing(rec, "q3", &t);
    kv.cmd(&["ZADD", &lb, &p.to_string(), &user])?;

    let mut last = Value::Nil;
    let t = timing::measure_kv(kv, "zrange", WALK_WARMUP, WALK_CALLS, |kv| {
        last = kv.cmd(&["ZRANGE", &lb, "0", "-1", "REV", "WITHSCORES"])?;
        Ok(())
    })?;
    put_timing(rec, "q4", &t);
    let walked = pairs(&last);
    let higher = walked
        .iter()
        .filter(|(_, s)| s.parse::<f64>().is_ok_and(|s| s > p as f64))
        .count();
    rec.put(
        "q4-answer",
        if walked.len() == data.len() {
            (higher + 1).to_string()
        } else {
            format!("walk returned {} members", walked.len())
        },
    );
    Ok(())
}

fn put_timing(rec: &mut Recorder, q: &str, t: &KvTiming) {
    rec.put(&format!("{q}-kv"), t.round_trip.cell());
    if let Some(us) = t.server_usec_per_call {
        let shown = if us < 100.0 {
            format!("{us:.2} µs")
        } else {
            format!("{} µs", thousands(us.round() as u64))
        };
        let mut cell = redislab_harness::Cell::num(us, "µs")
            .with_text(format!("{shown} (n={})", t.round_trip.calls));
        cell.server_us = Some(us);
        cell.n = Some(t.round_trip.calls);
        rec.put(&format!("{q}-kv-server"), cell);
    }
}

/// A flat `member score member score …` reply as pairs.
fn pairs(v: &Value) -> Vec<(String, String)> {
    let Value::Array(items) = v else {
        return Vec::new();
    };
    let text = |v: &Value| match v {
        Value::BulkString(b) => String::from_utf8_lossy(b).into_owned(),
        Value::Int(i) => i.to_string(),
        other => format!("{other:?}"),
    };
    items
        .chunks(2)
        .filter(|c| c.len() == 2)
        .map(|c| (text(&c[0]), text(&c[1])))
        .collect()
}

fn plus_one(v: &Value) -> String {
    match v {
        Value::Int(i) => (i + 1).to_string(),
        other => redislab_harness::backend::render(other),
    }
}

/// Fills the `agree` row once every backend has answered.
fn agreement(report: &mut Report) -> Result<(), String> {
    let get = |key: &str, backend: &str| -> Option<String> {
        report
            .rows
            .iter()
            .find(|r| r.key == key)
            .and_then(|r| r.text(backend).map(str::to_string))
    };
    let keys = [
        "q1-answer",
        "q2-rank",
        "q2-position",
        "q3-answer",
        "q4-answer",
    ];
    let mut recs = Vec::new();
    if let (Some(count), Some(window)) = (get("q2-rank", "pg"), get("q4-answer", "pg")) {
        let mut rec = Recorder::new("pg");
        rec.put(
            "agree",
            if count == window {
                "yes".to_string()
            } else {
                format!("no: count+1 = {count}, rank() = {window}")
            },
        );
        recs.push(rec);
    }
    let reference = if get("q2-rank", "pg").is_some() {
        "pg"
    } else {
        "redis"
    };
    for backend in ["redis", "core"] {
        if backend == reference || get("q2-rank", backend).is_none() {
            continue;
        }
        let differing: Vec<&str> = keys
            .iter()
            .copied()
            .filter(|k| get(k, backend) != get(k, reference))
            .collect();
        let mut rec = Recorder::new(backend);
        rec.put(
            "agree",
            if differing.is_empty() {
                "yes".to_string()
            } else {
                format!("no: {}", differing.join(", "))
            },
        );
        recs.push(rec);
    }
    for rec in recs {
        report.merge(rec)?;
    }
    Ok(())
}
