//! 92b-periods — daily, weekly and monthly leaderboards as keys with a TTL.
//!
//! Article 92, "time-bound leaderboards": one key per period, its TTL set once
//! with EXPIRE … NX (Redis 7.0+) so later increments do not push it back, and the
//! week rebuilt from the existing daily keys with ZUNIONSTORE (SUM for totals, MAX
//! for peak performance).

use std::process::ExitCode;

use redislab_harness::{run, Kind, Kv, LabInfo, Recorder};

const LAB: LabInfo = LabInfo {
    id: "92b-periods",
    uses_pg: false,
};

const TTL_DAILY: u32 = 7 * 86_400;
const TTL_WEEKLY: u32 = 8 * 7 * 86_400;
const TTL_MONTHLY: u32 = 3 * 30 * 86_400;

/// (day of the week 2026-W23, user, points). Days 4 and 6 have no activity.
const EVENTS: [(u32, &str, u32); 10] = [
    (1, "u1", 10),
    (1, "u2", 30),
    (2, "u1", 25),
    (2, "u3", 5),
    (3, "u2", 10),
    (3, "u3", 40),
    (5, "u1", 5),
    (5, "u2", 15),
    (7, "u3", 10),
    (7, "u1", 20),
];

fn day_key(day: u32) -> String {
    format!("leaderboard:day:2026-06-{day:02}")
}

fn main() -> ExitCode {
    run(LAB, |ctx| {
        let r = &mut ctx.report;
        for (key, label) in [
            (
                "ttls",
                "after increment_all_periods: TTL day / week / month",
            ),
            (
                "ttl-nx",
                "EXPIRE day 100, then another increment (EXPIRE … NX): TTL day",
            ),
            ("ttl-plain", "the same with a plain EXPIRE: TTL day"),
            (
                "existing",
                "daily keys of 2026-W23 that exist (EXISTS each)",
            ),
            (
                "week-sum",
                "ZUNIONSTORE week (existing days) AGGREGATE SUM → ZREVRANGE WITHSCORES",
            ),
            ("week-max", "… AGGREGATE MAX (peak day)"),
            ("week-ttl", "EXPIRE week after the rebuild; TTL"),
        ] {
            r.row(key, label, Kind::Exact, None);
        }
        ctx.each_kv(periods)?;
        ctx.note("EXPIRE … NX sets a TTL only on a key that has none, so the first event of a period fixes when it disappears; a plain EXPIRE would push the deadline back on every event.");
        ctx.note("ZUNIONSTORE overwrites the destination and its TTL: the rebuilt week needs its EXPIRE again.");
        Ok(())
    })
}

/// The article's increment_all_periods for a user on 2026-06-01, as one pipeline.
fn increment_all_periods(
    kv: &mut Kv,
    user: &str,
    by: u32,
    plain_expire: bool,
) -> Result<(), String> {
    let mut pipe = redis::pipe();
    for (key, ttl) in [
        (kv.key(&day_key(1)), TTL_DAILY),
        (kv.key("leaderboard:week:2026-W23"), TTL_WEEKLY),
        (kv.key("leaderboard:month:2026-06"), TTL_MONTHLY),
    ] {
        pipe.cmd("ZINCRBY").arg(&key).arg(by).arg(user).ignore();
        let expire = pipe.cmd("EXPIRE").arg(&key).arg(ttl);
        if !plain_expire {
            expire.arg("NX");
        }
        expire.ignore();
    }
    pipe.query::<()>(kv.conn())
        .map_err(|e| format!("{}: {e}", kv.name))
}

fn periods(kv: &mut Kv, rec: &mut Recorder) -> Result<(), String> {
    let day1 = kv.key(&day_key(1));
    increment_all_periods(kv, "u1", 5, false)?;
    let ttls: Vec<String> = [
        day1.clone(),
        kv.key("leaderboard:week:2026-W23"),
        kv.key("leaderboard:month:2026-06"),
    ]
    .iter()
    .map(|k| kv.reply(&["TTL", k]))
    .collect();
    rec.put("ttls", ttls.join(" / "));
    kv.cmd(&["EXPIRE", &day1, "100"])?;
    increment_all_periods(kv, "u1", 5, false)?;
    rec.put("ttl-nx", kv.reply(&["TTL", &day1]));
    kv.cmd(&["EXPIRE", &day1, "100"])?;
    increment_all_periods(kv, "u1", 5, true)?;
    rec.put("ttl-plain", kv.reply(&["TTL", &day1]));
    kv.cmd(&["DEL", &day1])?;

    for (day, user, points) in EVENTS {
        kv.cmd(&["ZINCRBY", &kv.key(&day_key(day)), &points.to_string(), user])?;
    }
    let days: Vec<String> = (1..=7).map(|d| kv.key(&day_key(d))).collect();
    let existing: Vec<String> = days
        .into_iter()
        .filter(|k| kv.reply(&["EXISTS", k]) == "1")
        .collect();
    rec.put("existing", format!("{} of 7", existing.len()));
    let week = kv.key("leaderboard:week:2026-W23");
    for (row, aggregate) in [("week-sum", "SUM"), ("week-max", "MAX")] {
        let mut args = vec![
            "ZUNIONSTORE".to_string(),
            week.clone(),
            existing.len().to_string(),
        ];
        args.extend(existing.iter().cloned());
        args.extend(["AGGREGATE".to_string(), aggregate.to_string()]);
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        kv.cmd(&refs)?;
        rec.put(
            row,
            kv.reply(&["ZREVRANGE", &week, "0", "-1", "WITHSCORES"]),
        );
    }
    let before = kv.reply(&["TTL", &week]);
    kv.cmd(&["EXPIRE", &week, &TTL_WEEKLY.to_string()])?;
    rec.put(
        "week-ttl",
        format!("{before} → {}", kv.reply(&["TTL", &week])),
    );
    Ok(())
}
