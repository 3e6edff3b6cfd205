//! 05b-precision — a score is a double: exact up to 2^53, then it rounds.
//!
//! Article 05, section 3.3. Packing "points, then who came first" into one score
//! works while it fits in 53 bits; past that, different people get the same score
//! and the byte order of their names (05a) decides, inverting the intended order.
//! Packing points × 2^32 + (2^32 − 1 − seconds) with points < 2^21 stays exact.
//! PostgreSQL's bigint and numeric keep the same values exact.

use std::process::ExitCode;

use redislab_harness::{run, Kind, Kv, LabInfo, Pg, Recorder};

const LAB: LabInfo = LabInfo {
    id: "05b-precision",
    uses_pg: true,
};

const POINTS: u64 = 50_000_000;
/// (member, second at which the points were reached)
const COMPOSITE: [(&str, u64); 3] = [
    ("u1", 1_790_000_000),
    ("u2", 1_790_000_001),
    ("u3", 1_790_000_040),
];
const SAFE_POINTS: u64 = 2_000_000;
const SAFE: [(&str, u64); 2] = [("v1", 1_790_000_000), ("v2", 1_790_000_001)];

/// points × 10^10 + (9999999999 − seconds): earlier seconds get a larger score.
fn decimal_packing(points: u64, seconds: u64) -> u64 {
    points * 10_000_000_000 + (9_999_999_999 - seconds)
}

/// points × 2^32 + (2^32 − 1 − seconds): below 2^53 while points < 2^21.
fn binary_packing(points: u64, seconds: u64) -> u64 {
    (points << 32) + (u32::MAX as u64 - seconds)
}

fn main() -> ExitCode {
    run(LAB, |ctx| {
        let r = &mut ctx.report;
        r.exact(
            "2^53-a",
            "ZADD big 9007199254740992 a; ZSCORE a",
            "9007199254740992",
        );
        r.exact(
            "2^53+1-b",
            "ZADD big 9007199254740993 b; ZSCORE b",
            "9007199254740992",
        );
        for (member, t) in COMPOSITE {
            let wanted = decimal_packing(POINTS, t);
            let article = match member {
                "u1" => "500000008210000000",
                "u2" => "500000008210000000",
                _ => "500000008209999936",
            };
            r.exact(
                &format!("comp-{member}"),
                &format!("{member}: t={t} wants {wanted}; ZSCORE"),
                article,
            );
        }
        r.exact(
            "comp-rev",
            "ZRANGE comp 0 -1 REV WITHSCORES",
            "u2 500000008210000000 u1 500000008210000000 u3 500000008209999936",
        );
        for (member, t) in SAFE {
            let wanted = binary_packing(SAFE_POINTS, t);
            let article = if member == "v1" {
                "8589937096967295"
            } else {
                "8589937096967294"
            };
            r.exact(
                &format!("safe-{member}"),
                &format!("{member}: t={t} wants {wanted}; ZSCORE"),
                article,
            );
        }
        r.exact("safe-rev", "ZRANGE comp2 0 -1 REV", "v1 v2");
        r.exact(
            "zincrby",
            "10 × ZINCRBY f 0.1 x; ZSCORE f x",
            "0.9999999999999999",
        );
        r.exact("nan", "ZADD f nan y", "ERR value is not a valid float");
        r.exact("inf-add", "ZADD f inf z", "1");
        r.exact("inf-score", "ZSCORE f z", "inf");
        r.row(
            "pg-float8-sum",
            "pg: sum of ten 0.1::float8",
            Kind::Exact,
            None,
        );

        ctx.each_kv(scores)?;
        ctx.with_pg(pg_exact)?;
        ctx.note("u1 reached 50,000,000 points first, yet REV lists u2 first: both round to 500000008210000000 and the tie falls back to byte order, where 'u2' > 'u1'.");
        ctx.note("pg stores the same numbers in bigint (and sums 0.1 in numeric) without rounding; its float8 rounds like Redis.");
        Ok(())
    })
}

fn scores(kv: &mut Kv, rec: &mut Recorder) -> Result<(), String> {
    let big = kv.key("big");
    kv.cmd(&["ZADD", &big, "9007199254740992", "a"])?;
    kv.cmd(&["ZADD", &big, "9007199254740993", "b"])?;
    rec.put("2^53-a", kv.reply(&["ZSCORE", &big, "a"]));
    rec.put("2^53+1-b", kv.reply(&["ZSCORE", &big, "b"]));

    let comp = kv.key("comp");
    for (member, t) in COMPOSITE {
        kv.cmd(&[
            "ZADD",
            &comp,
            &decimal_packing(POINTS, t).to_string(),
            member,
        ])?;
        rec.put(
            &format!("comp-{member}"),
            kv.reply(&["ZSCORE", &comp, member]),
        );
    }
    rec.put(
        "comp-rev",
        kv.reply(&["ZRANGE", &comp, "0", "-1", "REV", "WITHSCORES"]),
    );

    let comp2 = kv.key("comp2");
    for (member, t) in SAFE {
        kv.cmd(&[
            "ZADD",
            &comp2,
            &binary_packing(SAFE_POINTS, t).to_string(),
            member,
        ])?;
        rec.put(
            &format!("safe-{member}"),
            kv.reply(&["ZSCORE", &comp2, member]),
        );
    }
    rec.put("safe-rev", kv.reply(&["ZRANGE", &comp2, "0", "-1", "REV"]));

    let f = kv.key("f");
    for _ in 0..10 {
        kv.cmd(&["ZINCRBY", &f, "0.1", "x"])?;
    }
    rec.put("zincrby", kv.reply(&["ZSCORE", &f, "x"]));
    rec.put("nan", kv.reply(&["ZADD", &f, "nan", "y"]));
    rec.put("inf-add", kv.reply(&["ZADD", &f, "inf", "z"]));
    rec.put("inf-score", kv.reply(&["ZSCORE", &f, "z"]));
    Ok(())
}

fn pg_exact(pg: &mut Pg, rec: &mut Recorder) -> Result<(), String> {
    pg.exec("CREATE TABLE comp (member text, score bigint); CREATE TABLE comp2 (member text, score bigint);")?;
    rec.put("2^53-a", pg.column("SELECT 9007199254740992::bigint"));
    rec.put("2^53+1-b", pg.column("SELECT 9007199254740993::bigint"));
    for (member, t) in COMPOSITE {
        let score = decimal_packing(POINTS, t);
        pg.exec(&format!("INSERT INTO comp VALUES ('{member}', {score})"))?;
        rec.put(
            &format!("comp-{member}"),
            pg.column(&format!("SELECT score FROM comp WHERE member = '{member}'")),
        );
    }
    rec.put(
        "comp-rev",
        pg.column("SELECT string_agg(member || ' ' || score, ' ' ORDER BY score DESC, member COLLATE \"C\" DESC) FROM comp"),
    );
    for (member, t) in SAFE {
        let score = binary_packing(SAFE_POINTS, t);
        pg.exec(&format!("INSERT INTO comp2 VALUES ('{member}', {score})"))?;
        rec.put(
            &format!("safe-{member}"),
            pg.column(&format!(
                "SELECT score FROM comp2 WHERE member = '{member}'"
            )),
        );
    }
    rec.put(
        "safe-rev",
        pg.column("SELECT string_agg(member, ' ' ORDER BY score DESC) FROM comp2"),
    );
    rec.put(
        "zincrby",
        pg.column("SELECT sum(0.1::numeric) FROM generate_series(1, 10)"),
    );
    rec.put("nan", pg.column("SELECT 'nan'::bigint"));
    rec.put(
        "pg-float8-sum",
        pg.column("SELECT sum(0.1::float8) FROM generate_series(1, 10)"),
    );
    Ok(())
}
