//! 05a-order — who stands on top when scores tie?
//!
//! Article 05, section 3.2. Members with the same score are ordered by their bytes,
//! and `REV` reverses that order too: the top of a tied leaderboard is the member
//! with the largest name, not the one who got there first. Vietnamese names sort by
//! their UTF-8 bytes (Á = C3 81 and Đ = C4 90 come after every ASCII letter); a
//! database collation gives the order a reader expects instead.

use std::process::ExitCode;

use redislab_harness::{run, Kv, LabInfo, Pg, Recorder};

const LAB: LabInfo = LabInfo {
    id: "05a-order",
    uses_pg: true,
};

/// Added in this order; zed arrives first.
const PLAYERS: [(&str, &str); 4] = [
    ("100", "zed"),
    ("100", "amy"),
    ("100", "Bob"),
    ("90", "kim"),
];
/// Added in the order a Vietnamese reader would sort them.
const NAMES: [&str; 5] = ["An", "Ánh", "Bình", "Dũng", "Đức"];

fn main() -> ExitCode {
    run(LAB, |ctx| {
        let r = &mut ctx.report;
        r.exact(
            "zrange",
            "ZRANGE lb 0 -1 WITHSCORES",
            "kim 90 Bob 100 amy 100 zed 100",
        );
        r.exact(
            "zrange-rev",
            "ZRANGE lb 0 -1 REV WITHSCORES",
            "zed 100 amy 100 Bob 100 kim 90",
        );
        r.exact("zrevrank", "ZREVRANK lb zed / amy / Bob", "0 / 1 / 2");
        r.exact(
            "vn-zrange",
            "ZRANGE vn 0 -1 (names at one score)",
            "An Bình Dũng Ánh Đức",
        );
        r.exact("vn-bytes", "first bytes of Ánh / Đức", "C3 81 / C4 90");
        r.row(
            "vn-icu",
            "pg: ORDER BY name COLLATE \"vi-x-icu\"",
            redislab_harness::Kind::Exact,
            None,
        );

        ctx.each_kv(ties)?;
        ctx.with_pg(pg_orders)?;
        ctx.note("REV reverses the byte order of tied members as well: zed tops the board because 'z' > 'a' > 'B', not because it arrived first.");
        ctx.note("pg orders ties only by what ORDER BY names; COLLATE \"C\" is byte order (Redis's), an ICU collation is the reader's alphabet.");
        Ok(())
    })
}

fn ties(kv: &mut Kv, rec: &mut Recorder) -> Result<(), String> {
    let lb = kv.key("lb");
    for (score, member) in PLAYERS {
        kv.cmd(&["ZADD", &lb, score, member])?;
    }
    rec.put(
        "zrange",
        kv.reply(&["ZRANGE", &lb, "0", "-1", "WITHSCORES"]),
    );
    rec.put(
        "zrange-rev",
        kv.reply(&["ZRANGE", &lb, "0", "-1", "REV", "WITHSCORES"]),
    );
    let ranks: Vec<String> = ["zed", "amy", "Bob"]
        .iter()
        .map(|m| kv.reply(&["ZREVRANK", &lb, m]))
        .collect();
    rec.put("zrevrank", ranks.join(" / "));

    let vn = kv.key("vn");
    for name in NAMES {
        kv.cmd(&["ZADD", &vn, "0", name])?;
    }
    rec.put("vn-zrange", kv.reply(&["ZRANGE", &vn, "0", "-1"]));
    // The bytes come from the server's reply, not from this source file.
    let members = match kv.cmd(&["ZRANGE", &vn, "0", "-1"])? {
        redis::Value::Array(items) => items,
        other => return Err(format!("unexpected reply {other:?}")),
    };
    let lead = |name: &str| -> String {
        members
            .iter()
            .find_map(|m| match m {
                redis::Value::BulkString(b) if String::from_utf8_lossy(b) == name => Some(
                    b.iter()
                        .take(2)
                        .map(|x| format!("{x:02X}"))
                        .collect::<Vec<_>>()
                        .join(" "),
                ),
                _ => None,
            })
            .unwrap_or_else(|| "(missing)".into())
    };
    rec.put("vn-bytes", format!("{} / {}", lead("Ánh"), lead("Đức")));
    Ok(())
}

fn pg_orders(pg: &mut Pg, rec: &mut Recorder) -> Result<(), String> {
    pg.exec(
        "CREATE TABLE lb (seq serial, name text, points int);
         INSERT INTO lb (name, points) VALUES ('zed',100),('amy',100),('Bob',100),('kim',90);
         CREATE TABLE vn (name text);
         INSERT INTO vn VALUES ('An'),('Ánh'),('Bình'),('Dũng'),('Đức');",
    )?;
    rec.put(
        "zrange",
        pg.column("SELECT string_agg(name || ' ' || points, ' ' ORDER BY points, name COLLATE \"C\") FROM lb"),
    );
    rec.put(
        "zrange-rev",
        pg.column("SELECT string_agg(name || ' ' || points, ' ' ORDER BY points DESC, name COLLATE \"C\" DESC) FROM lb"),
    );
    rec.put(
        "vn-zrange",
        pg.column("SELECT string_agg(name, ' ' ORDER BY name COLLATE \"C\") FROM vn"),
    );
    rec.put(
        "vn-icu",
        pg.column("SELECT string_agg(name, ' ' ORDER BY name COLLATE \"vi-x-icu\") FROM vn"),
    );
    Ok(())
}
