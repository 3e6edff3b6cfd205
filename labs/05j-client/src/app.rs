//! The article's Laravel code (section 6.1), written with `redis::Commands`.
//!
//! Each step returns its table cell; a server error is shown as the server's text.

use redis::geo::{Coord, RadiusOptions, RadiusOrder, Unit};
use redis::{Commands, Connection, RedisError};
use redislab_harness::backend::error_text;
use redislab_harness::{Kv, Recorder};

/// The article's scores.
pub const USERS: [(&str, f64); 5] = [
    ("u1", 1500.0),
    ("u2", 1700.0),
    ("u3", 1700.0),
    ("u4", 950.0),
    ("u5", 1200.0),
];

/// The shops: hoan-kiem as in the article; the others chosen so that Redis's
/// haversine (on the 52-bit geohash cell centres) gives the article's distances.
pub const SHOPS: [(&str, f64, f64); 4] = [
    ("hoan-kiem", 105.8542, 21.0285),
    ("hai-ba-trung", 105.8600, 20.9973),
    ("cau-giay", 105.8019, 21.0278),
    ("quan-1", 106.7009, 10.7769),
];

/// "Now" for the scheduler, fixed so the rows do not move: remind:9 is a minute
/// overdue, remind:10 is due in an hour.
pub const NOW: i64 = 1_790_000_000;

/// `lb:course:<id>:<ISO year>w<ISO week>` (PHP's `format('o\wW')`).
pub fn weekly_key(course: u32, (y, m, d): (i64, i64, i64)) -> String {
    let (year, week) = iso_week(y, m, d);
    format!("lb:course:{course}:{year}w{week:02}")
}

/// Days since 1970-01-01 (proleptic Gregorian).
fn days(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * ((m + 9) % 12) + 2) / 5 + d - 1;
    era * 146_097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719_468
}

/// ISO 8601 year and week: the week of the date's Thursday.
fn iso_week(y: i64, m: i64, d: i64) -> (i64, i64) {
    let n = days(y, m, d);
    let weekday = (n + 3).rem_euclid(7) + 1; // 1970-01-01 was a Thursday (4)
    let thursday = n + 4 - weekday;
    let year = if thursday >= days(y + 1, 1, 1) {
        y + 1
    } else if thursday < days(y, 1, 1) {
        y - 1
    } else {
        y
    };
    (year, (thursday - days(year, 1, 1)) / 7 + 1)
}

pub fn pairs(list: &[(String, f64)]) -> String {
    if list.is_empty() {
        return "(empty)".into();
    }
    list.iter()
        .map(|(m, s)| format!("{m} {s}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The cell for a call's result: its rendering, or the error's text.
pub fn cell<T>(result: Result<T, RedisError>, show: impl FnOnce(T) -> String) -> String {
    result.map_or_else(|e| error_text(&e), show)
}

pub fn leaderboard(kv: &mut Kv, rec: &mut Recorder, lb: &str) -> Result<(), String> {
    let conn = kv.conn();
    for (user, points) in USERS {
        let _: f64 = conn.zincr(lb, user, points).map_err(|e| error_text(&e))?;
    }
    let _: bool = conn.expire(lb, 60 * 86_400).map_err(|e| error_text(&e))?;
    rec.put("ttl", cell(conn.ttl(lb), |t: i64| t.to_string()));
    rec.put(
        "top3",
        cell(
            conn.zrevrange_withscores(lb, 0, 2),
            |v: Vec<(String, f64)>| pairs(&v),
        ),
    );
    rec.put(
        "top3-asc",
        cell(conn.zrange_withscores(lb, 0, 2), |v: Vec<(String, f64)>| {
            pairs(&v)
        }),
    );
    let rank: Option<isize> = conn.zrevrank(lb, "u5").map_err(|e| error_text(&e))?;
    rec.put("rank", rank.map_or("None".into(), |r| (r + 1).to_string()));
    let r = rank.unwrap_or(0);
    for (key, window) in [("around-1", 1), ("around-5", 5)] {
        rec.put(
            key,
            cell(
                conn.zrevrange_withscores(lb, (r - window).max(0), r + window),
                |v: Vec<(String, f64)>| pairs(&v),
            ),
        );
    }
    Ok(())
}

/// Two workers read the due jobs, then each tries to ZREM them; only the one whose
/// ZREM returns 1 runs the job.
pub fn scheduler(kv: &mut Kv, rec: &mut Recorder) -> Result<(), String> {
    let jobs = kv.key("jobs:due");
    let mut b = kv.new_connection()?;
    let a = kv.conn();
    let _: usize = a
        .zadd(&jobs, "remind:9", NOW - 60)
        .map_err(|e| error_text(&e))?;
    let _: usize = a
        .zadd(&jobs, "remind:10", NOW + 3_600)
        .map_err(|e| error_text(&e))?;
    let due = |c: &mut Connection| -> Result<Vec<String>, String> {
        c.zrangebyscore_limit(&jobs, "-inf", NOW, 0, 50)
            .map_err(|e| error_text(&e))
    };
    let (seen_a, seen_b) = (due(a)?, due(&mut b)?);
    rec.put(
        "due",
        format!("A: {} · B: {}", seen_a.join(" "), seen_b.join(" ")),
    );
    for (key, conn, seen) in [("worker-a", a, seen_a), ("worker-b", &mut b, seen_b)] {
        let mut outcome = Vec::new();
        for id in seen {
            let removed: usize = conn.zrem(&jobs, &id).map_err(|e| error_text(&e))?;
            outcome.push(if removed == 1 { "runs" } else { "skips" });
        }
        rec.put(key, outcome.join(" "));
    }
    Ok(())
}

pub fn shops(kv: &mut Kv, rec: &mut Recorder) {
    let key = kv.key("shops");
    let conn = kv.conn();
    let points: Vec<(Coord<f64>, &str)> = SHOPS
        .iter()
        .map(|&(name, lon, lat)| (Coord::lon_lat(lon, lat), name))
        .collect();
    rec.put(
        "geoadd",
        cell(conn.geo_add(&key, &points), |n: usize| n.to_string()),
    );
    // redis 1.8 has no typed GEOSEARCH: the article's call goes through redis::cmd.
    let near = redis::cmd("GEOSEARCH")
        .arg(&key)
        .arg("FROMLONLAT")
        .arg(105.85)
        .arg(21.03)
        .arg("BYRADIUS")
        .arg(10)
        .arg("km")
        .arg("WITHDIST")
        .arg("ASC")
        .arg("COUNT")
        .arg(3)
        .query::<Vec<(String, String)>>(conn);
    rec.put(
        "geosearch",
        cell(near, |v| {
            v.iter()
                .map(|(m, d)| format!("{m} {d}"))
                .collect::<Vec<_>>()
                .join(", ")
        }),
    );
    let opts = RadiusOptions::default()
        .with_dist()
        .order(RadiusOrder::Asc)
        .limit(3);
    let radius = conn.geo_radius(&key, 105.85, 21.03, 10.0, Unit::Kilometers, opts);
    rec.put(
        "georadius",
        cell(radius, |v: Vec<redis::geo::RadiusSearchResult>| {
            v.iter()
                .map(|r| format!("{} {}", r.name, r.dist.unwrap_or(f64::NAN)))
                .collect::<Vec<_>>()
                .join(", ")
        }),
    );
    rec.put(
        "geodist",
        cell(
            conn.geo_dist(&key, "hoan-kiem", "quan-1", Unit::Kilometers),
            |d: Option<f64>| d.map_or("(nil)".into(), |d| d.to_string()),
        ),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_weeks() {
        assert_eq!(weekly_key(42, (2026, 10, 1)), "lb:course:42:2026w40");
        assert_eq!(iso_week(2021, 1, 3), (2020, 53));
        assert_eq!(iso_week(2024, 12, 30), (2025, 1));
        assert_eq!(iso_week(2026, 1, 1), (2026, 1));
    }
}
