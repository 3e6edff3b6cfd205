//! 05g-count — in how many sets is each member? AGGREGATE COUNT (Redis 8.8).
//!
//! Article 05, section 3.8. With SUM the scores (here: how far each student got
//! in a course) pollute the count; Redis 8.8's AGGREGATE COUNT ignores them. The
//! real server here is 8.6.3, which does not have COUNT: its row shows its own
//! error beside the core's answer and the article's. The pre-8.8 workaround (copy
//! every set with score 1, then SUM) runs on both, and PostgreSQL counts with
//! GROUP BY.

use std::process::ExitCode;

use redislab_harness::{run, Kv, LabInfo, Pg, Recorder};

const LAB: LabInfo = LabInfo {
    id: "05g-count",
    uses_pg: true,
};

/// Courses and what each student reached in them. The article shows only the
/// results; these inputs produce all three of them.
const DONE: [(&str, &[(&str, &str)]); 3] = [
    ("done:c1", &[("1", "sv1"), ("1", "sv2"), ("1", "sv3")]),
    ("done:c2", &[("2", "sv1"), ("1", "sv3")]),
    ("done:c3", &[("4", "sv1"), ("9", "sv4")]),
];

fn main() -> ExitCode {
    run(LAB, |ctx| {
        let r = &mut ctx.report;
        r.exact(
            "union-count",
            "ZUNION 3 done:c1 done:c2 done:c3 AGGREGATE COUNT WITHSCORES",
            "sv2 1 sv4 1 sv3 2 sv1 3",
        )
        .core_matches_redis = false;
        r.exact(
            "union-sum",
            "ZUNION 3 … AGGREGATE SUM WITHSCORES (the default)",
            "sv2 1 sv3 2 sv1 7 sv4 9",
        );
        r.exact(
            "inter-count",
            "ZINTER 2 done:c1 done:c2 AGGREGATE COUNT WITHSCORES",
            "sv1 2 sv3 2",
        )
        .core_matches_redis = false;
        r.exact(
            "workaround",
            "before 8.8: copy each set with score 1, then ZUNION … SUM",
            "sv2 1 sv4 1 sv3 2 sv1 3",
        );
        r.exact(
            "weights-count",
            "ZUNION 3 … WEIGHTS 1 1 2 AGGREGATE COUNT WITHSCORES",
            "-",
        )
        .article = None;
        r.rows.last_mut().unwrap().core_matches_redis = false;

        ctx.each_kv(counts)?;
        ctx.with_pg(pg_counts)?;
        // What the real server said to AGGREGATE COUNT, from its own union-count cell.
        let answer = ctx
            .report
            .rows
            .iter()
            .find(|r| r.key == "union-count")
            .and_then(|r| r.redis.as_ref())
            .map(|c| c.text.clone());
        let server = match (ctx.server_name("redis"), answer) {
            (Some(v), Some(a)) if a == "ERR syntax error" => {
                format!("{v} answers AGGREGATE COUNT with a syntax error: ")
            }
            (Some(v), Some(_)) if ctx.redis_refused("union-count") => {
                format!("{v} answers AGGREGATE COUNT with its own error (see its rows): ")
            }
            (Some(v), Some(_)) => format!("{v} answers AGGREGATE COUNT (see its rows): "),
            _ => String::new(),
        };
        ctx.note(format!("{server}COUNT arrived in 8.8. The core implements it as the 8.8 documentation defines it: input scores are ignored and each set holding a member adds its weight (1 without WEIGHTS)."));
        ctx.note("SUM adds the scores, so sv1 (1 + 2 + 4) and sv4 (9) look like the most 'counted' members; COUNT gives sv1 3 and sv4 1.");
        Ok(())
    })
}

fn counts(kv: &mut Kv, rec: &mut Recorder) -> Result<(), String> {
    let keys: Vec<String> = DONE.iter().map(|(k, _)| kv.key(k)).collect();
    for ((_, entries), key) in DONE.iter().zip(&keys) {
        for (score, member) in entries.iter() {
            kv.cmd(&["ZADD", key, score, member])?;
        }
    }
    let union = |extra: &[&str]| -> Vec<String> {
        let mut args = vec!["ZUNION".to_string(), "3".to_string()];
        args.extend(keys.iter().cloned());
        args.extend(extra.iter().map(|s| s.to_string()));
        args
    };
    let call = |kv: &mut Kv, args: Vec<String>| {
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        kv.reply(&refs)
    };
    rec.put(
        "union-count",
        call(kv, union(&["AGGREGATE", "COUNT", "WITHSCORES"])),
    );
    rec.put(
        "union-sum",
        call(kv, union(&["AGGREGATE", "SUM", "WITHSCORES"])),
    );
    rec.put(
        "weights-count",
        call(
            kv,
            union(&["WEIGHTS", "1", "1", "2", "AGGREGATE", "COUNT", "WITHSCORES"]),
        ),
    );
    let inter = vec![
        "ZINTER",
        "2",
        &keys[0],
        &keys[1],
        "AGGREGATE",
        "COUNT",
        "WITHSCORES",
    ];
    rec.put("inter-count", kv.reply(&inter));

    // The pre-8.8 way: rewrite every set with score 1 (client side), then SUM.
    let mut ones = Vec::new();
    for key in &keys {
        let copy = format!("{key}:ones");
        for member in kv.items(&[b"ZRANGE", key.as_bytes(), b"0", b"-1"])? {
            kv.cmd(&["ZADD", &copy, "1", &member])?;
        }
        ones.push(copy);
    }
    let mut args = vec!["ZUNION".to_string(), "3".to_string()];
    args.extend(ones);
    args.extend(["AGGREGATE", "SUM", "WITHSCORES"].map(String::from));
    rec.put("workaround", call(kv, args));
    Ok(())
}

fn pg_counts(pg: &mut Pg, rec: &mut Recorder) -> Result<(), String> {
    pg.exec("CREATE TABLE done (course text, member text, reached int)")?;
    for (course, entries) in DONE {
        for (score, member) in entries {
            pg.exec(&format!(
                "INSERT INTO done VALUES ('{course}', '{member}', {score})"
            ))?;
        }
    }
    // Same order as Redis: by the aggregate, then by member bytes.
    let agg = |expr: &str, filter: &str| {
        format!(
            "SELECT string_agg(member || ' ' || n, ' ' ORDER BY n, member COLLATE \"C\") FROM
               (SELECT member, {expr} AS n FROM done {filter} GROUP BY member {having}) t",
            having = if filter.is_empty() {
                ""
            } else {
                "HAVING count(*) = 2"
            }
        )
    };
    rec.put("union-count", pg.column(&agg("count(*)", "")));
    rec.put("union-sum", pg.column(&agg("sum(reached)", "")));
    rec.put(
        "inter-count",
        pg.column(&agg("count(*)", "WHERE course IN ('done:c1', 'done:c2')")),
    );
    Ok(())
}
