//! 05j-client — the article's application code with the Rust `redis` client.
//!
//! Article 05 (000), section 6.1 shows Laravel code that ran against Redis: a
//! weekly course leaderboard (top 3, rank, ±5 around a user), a scheduler where
//! whoever ZREMs a job runs it, and the nearest shops with their distance. Here the
//! same steps go through `redis::Commands` on the article's data. Its PHP pitfall
//! (`['rev' => true]` silently ignored) becomes the same question asked of the Rust
//! client: which call shapes drop REV or WITHSCORES, or the order, without an
//! error — answered by running each one and showing the command it sends.

mod app;
mod pitfalls;

use std::process::ExitCode;

use redis::geo::{Coord, RadiusOptions, RadiusOrder, Unit};
use redis::Cmd;
use redislab_harness::{run, Kind, Kv, LabInfo, Recorder, Report};

use app::{NOW, SHOPS};

const LAB: LabInfo = LabInfo {
    id: "05j-client",
    uses_pg: false,
};

const COURSE: u32 = 42;
const DAY: (i64, i64, i64) = (2026, 10, 1);

/// The command as sent, one argument per word.
fn shown(cmd: &Cmd) -> String {
    cmd.args_iter()
        .map(|a| match a {
            redis::Arg::Simple(bytes) => String::from_utf8_lossy(bytes).into_owned(),
            _ => "<cursor>".into(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn geosearch(key: &str) -> Cmd {
    let mut cmd = redis::cmd("GEOSEARCH");
    cmd.arg(key)
        .arg("FROMLONLAT")
        .arg(105.85)
        .arg(21.03)
        .arg("BYRADIUS")
        .arg(10)
        .arg("km")
        .arg("WITHDIST")
        .arg("ASC")
        .arg("COUNT")
        .arg(3);
    cmd
}

fn declare(r: &mut Report, lb: &str) {
    let shops: Vec<(Coord<f64>, &str)> = SHOPS
        .iter()
        .map(|&(n, lon, lat)| (Coord::lon_lat(lon, lat), n))
        .collect();
    let radius = RadiusOptions::default()
        .with_dist()
        .order(RadiusOrder::Asc)
        .limit(3);
    let near = "hoan-kiem 0.4671, hai-ba-trung 3.7825, cau-giay 4.9998";
    let rows: Vec<(&str, String, Cmd, Option<&str>)> = vec![
        ("ttl", format!("zincr(lb, user, points) × 5 (u1 first), expire(lb, 60 × 86400), then ttl(lb); lb = weekly_key({COURSE}, 2026-10-01)"), Cmd::zincr(lb, "u1", 1500.0), Some("5184000")),
        ("top3", "zrevrange_withscores(lb, 0, 2) -> Vec<(String, f64)>  [PHP: zrange(…, ['rev', 'withscores'])]".into(), Cmd::zrevrange_withscores(lb, 0, 2), Some("u3 1700, u2 1700, u1 1500")),
        ("top3-asc", "zrange_withscores(lb, 0, 2)  [PHP: ['rev' => true, 'withscores' => true], rev ignored]".into(), Cmd::zrange_withscores(lb, 0, 2), Some("u4 950, u5 1200, u1 1500")),
        ("rank", "zrevrank(lb, u5) -> Option<isize>, + 1".into(), Cmd::zrevrank(lb, "u5"), Some("4")),
        ("around-1", "zrevrange_withscores(lb, max(0, r − 1), r + 1): the window of the article's printed output".into(), Cmd::zrevrange_withscores(lb, 2, 4), Some("u1 1500, u5 1200, u4 950")),
        ("around-5", "zrevrange_withscores(lb, max(0, r − 5), r + 5): the ±5 the code asks for".into(), Cmd::zrevrange_withscores(lb, 0, 8), None),
        ("due", "zrangebyscore_limit(jobs:due, \"-inf\", now, 0, 50), read by worker A then worker B".into(), Cmd::zrangebyscore_limit("jobs:due", "-inf", NOW, 0, 50), None),
        ("worker-a", "worker A: zrem(jobs:due, remind:9) == 1 → runs".into(), Cmd::zrem("jobs:due", "remind:9"), Some("runs")),
        ("worker-b", "worker B: the same zrem afterwards == 0 → skips".into(), Cmd::zrem("jobs:due", "remind:9"), None),
        ("geoadd", "geo_add(shops, &[(Coord::lon_lat(lon, lat), name); 4])".into(), Cmd::geo_add("shops", &shops), None),
        ("geosearch", "redis::cmd(\"GEOSEARCH\")… (redis 1.8 has no typed GEOSEARCH)".into(), geosearch("shops"), Some(near)),
        ("georadius", "geo_radius(shops, 105.85, 21.03, 10.0, Unit::Kilometers, with_dist().order(Asc).limit(3))".into(), Cmd::geo_radius("shops", 105.85, 21.03, 10.0, Unit::Kilometers, radius), Some(near)),
        ("geodist", "geo_dist(shops, hoan-kiem, quan-1, Unit::Kilometers) -> Option<f64>".into(), Cmd::geo_dist("shops", "hoan-kiem", "quan-1", Unit::Kilometers), Some("1143.8269")),
    ];
    for (key, call, cmd, article) in rows {
        r.row(
            key,
            &format!("{call}\n      sends: {}", shown(&cmd)),
            Kind::Exact,
            article,
        );
    }
    let keys = pitfalls::Keys {
        lb: lb.into(),
        half: "half".into(),
    };
    for case in pitfalls::cases() {
        let sent = shown(&(case.sent)(&keys));
        r.row(
            case.key,
            &format!("{}\n      sends: {sent}", case.call),
            Kind::Exact,
            None,
        );
    }
}

fn main() -> ExitCode {
    run(LAB, |ctx| {
        let lb = app::weekly_key(COURSE, DAY);
        declare(&mut ctx.report, &lb);
        ctx.each_kv(|kv, rec| client(kv, rec, &lb))?;
        ctx.note("The article's 'around u5' output (u1, u5, u4) is a window of 1; the code's ±5 on five users returns all five.");
        ctx.note("The shops other than hoan-kiem are not given in the article: hai-ba-trung (105.8600, 20.9973), cau-giay (105.8019, 21.0278) and quan-1 (106.7009, 10.7769) were found by computing Redis's haversine (Earth radius 6372797.560856 m, on the centres of the 52-bit geohash cells) and reproduce the article's 3.7825, 4.9998 and 1143.8269 km on Redis 8.6.3.");
        ctx.note("Pitfalls: the crate never drops an argument it was given — every call sends exactly its method's fixed shape. What goes wrong silently is the choice of method and of return type: zrange has no REV, a negative range is the bottom in ascending order, TypedCommands::zrevrange_withscores is a flat list, a map reorders by member name, zrevrangebyscore takes (max, min) and answers an empty list when swapped. REV and the BYSCORE/BYLEX/LIMIT forms of ZRANGE have no typed method in redis 1.8: append them with .arg() to the typed Cmd.");
        Ok(())
    })
}

fn client(kv: &mut Kv, rec: &mut Recorder, lb_name: &str) -> Result<(), String> {
    let lb = kv.key(lb_name);
    app::leaderboard(kv, rec, &lb)?;
    app::scheduler(kv, rec)?;
    app::shops(kv, rec);
    let keys = pitfalls::Keys {
        lb,
        half: kv.key("half"),
    };
    for (user, score) in pitfalls::HALF {
        kv.cmd(&["ZADD", &keys.half, &score.to_string(), user])?;
    }
    for case in pitfalls::cases() {
        rec.put(case.key, (case.run)(kv.conn(), &keys));
    }
    Ok(())
}
