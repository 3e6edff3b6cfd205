//! Geo commands: GEOADD, GEOPOS, GEOHASH, GEODIST here; the searches (GEOSEARCH,
//! GEOSEARCHSTORE, GEORADIUS and friends) in `geo_search.rs`.
//!
//! A geo set is a plain sorted set whose scores are 52-bit geohashes (see
//! [`crate::geo`]), so TYPE says `zset` and every Z command works on it. GEOADD is
//! literally ZADD in Redis: it checks its own options and coordinates, turns each
//! pair into an integer score and hands a rewritten argument vector to ZADD. The
//! core does the same, so CH, NX, XX, the listpack encoding and WRONGTYPE behave
//! exactly as ZADD's. The reading commands decode whatever score a member has,
//! even one ZADD put there, the way Redis's C conversions do.

use super::geo_search;
use super::zset::read;
use super::{flags::*, Args, CmdResult, CommandSpec, Server};
use crate::geo::distance::{distance, format_distance};
use crate::geo::geohash;
use crate::reply::{errors, Reply};

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec::new("geoadd", -5, geoadd)
        .flags(WRITE | DENYOOM)
        .keys(1, 1, 1)
        .doc(
            "3.2.0",
            "Adds places by longitude and latitude to a geo set (a sorted set of geohashes).",
            "key [NX | XX] [CH] longitude latitude member [longitude latitude member ...]",
        ),
    CommandSpec::new("geopos", -2, geopos)
        .flags(READONLY)
        .keys(1, 1, 1)
        .doc(
            "3.2.0",
            "Returns the longitude and latitude of places.",
            "key [member [member ...]]",
        ),
    CommandSpec::new("geohash", -2, geohash_cmd)
        .flags(READONLY)
        .keys(1, 1, 1)
        .doc(
            "3.2.0",
            "Returns the standard 11-character geohash of places.",
            "key [member [member ...]]",
        ),
    CommandSpec::new("geodist", -4, geodist)
        .flags(READONLY)
        .keys(1, 1, 1)
        .doc(
            "3.2.0",
            "Returns the distance between two places.",
            "key member1 member2 [m | km | ft | mi]",
        ),
    CommandSpec::new("georadius", -6, geo_search::georadius)
        .flags(WRITE | DENYOOM | MOVABLE_KEYS)
        .keys(1, 1, 1)
        .doc(
            "3.2.0",
            "Finds the places within a radius of a point, optionally storing them.",
            "key longitude latitude radius <m | km | ft | mi> [WITHCOORD] [WITHDIST] [WITHHASH] [COUNT count [ANY]] [ASC | DESC] [STORE key | STOREDIST key]",
        ),
    CommandSpec::new("georadius_ro", -6, geo_search::georadius_ro)
        .flags(READONLY)
        .keys(1, 1, 1)
        .doc(
            "3.2.10",
            "Finds the places within a radius of a point.",
            "key longitude latitude radius <m | km | ft | mi> [WITHCOORD] [WITHDIST] [WITHHASH] [COUNT count [ANY]] [ASC | DESC]",
        ),
    CommandSpec::new("georadiusbymember", -5, geo_search::georadiusbymember)
        .flags(WRITE | DENYOOM | MOVABLE_KEYS)
        .keys(1, 1, 1)
        .doc(
            "3.2.0",
            "Finds the places within a radius of a member, optionally storing them.",
            "key member radius <m | km | ft | mi> [WITHCOORD] [WITHDIST] [WITHHASH] [COUNT count [ANY]] [ASC | DESC] [STORE key | STOREDIST key]",
        ),
    CommandSpec::new("georadiusbymember_ro", -5, geo_search::georadiusbymember_ro)
        .flags(READONLY)
        .keys(1, 1, 1)
        .doc(
            "3.2.10",
            "Finds the places within a radius of a member.",
            "key member radius <m | km | ft | mi> [WITHCOORD] [WITHDIST] [WITHHASH] [COUNT count [ANY]] [ASC | DESC]",
        ),
    CommandSpec::new("geosearch", -7, geo_search::geosearch)
        .flags(READONLY)
        .keys(1, 1, 1)
        .doc(
            "6.2.0",
            "Finds the places in a circle or a box around a member or a point.",
            "key <FROMMEMBER member | FROMLONLAT longitude latitude> <BYRADIUS radius <m | km | ft | mi> | BYBOX width height <m | km | ft | mi>> [ASC | DESC] [COUNT count [ANY]] [WITHCOORD] [WITHDIST] [WITHHASH]",
        ),
    CommandSpec::new("geosearchstore", -8, geo_search::geosearchstore)
        .flags(WRITE | DENYOOM)
        .keys(1, 2, 1)
        .doc(
            "6.2.0",
            "Stores the places in a circle or a box as a new geo set.",
            "destination source <FROMMEMBER member | FROMLONLAT longitude latitude> <BYRADIUS radius <m | km | ft | mi> | BYBOX width height <m | km | ft | mi>> [ASC | DESC] [COUNT count [ANY]] [STOREDIST]",
        ),
];

/// `extractLongLatOrReply`: two doubles (both parsed before either is checked),
/// then Redis's limits, with the pair printed by C's `%f`.
pub(super) fn lon_lat(a: &Args, at: usize) -> Result<[f64; 2], Reply> {
    let lon = a.float(at)?;
    let lat = a.float(at + 1)?;
    if !(geohash::LONG_MIN..=geohash::LONG_MAX).contains(&lon)
        || !(geohash::LAT_MIN..=geohash::LAT_MAX).contains(&lat)
    {
        return Err(Reply::error(format!(
            "ERR invalid longitude,latitude pair {lon:.6},{lat:.6}"
        )));
    }
    Ok([lon, lat])
}

/// `extractUnitOrReply`: the factor from the unit to metres.
pub(super) fn unit(a: &Args, at: usize) -> Result<f64, Reply> {
    match () {
        _ if a.is(at, "m") => Ok(1.0),
        _ if a.is(at, "km") => Ok(1000.0),
        _ if a.is(at, "ft") => Ok(0.3048),
        _ if a.is(at, "mi") => Ok(1609.34),
        _ => Err(Reply::error(
            "ERR unsupported unit provided. please use M, KM, FT, MI",
        )),
    }
}

/// GEOADD key [NX|XX] [CH] lon lat member [lon lat member ...]
pub fn geoadd(s: &mut Server, a: &Args) -> CmdResult {
    let (mut nx, mut xx) = (false, false);
    let mut longidx = 2;
    while longidx < a.len() {
        match () {
            _ if a.is(longidx, "nx") => nx = true,
            _ if a.is(longidx, "xx") => xx = true,
            _ if a.is(longidx, "ch") => {}
            _ => break,
        }
        longidx += 1;
    }
    if !(a.len() - longidx).is_multiple_of(3) || (xx && nx) {
        return Err(Reply::error(errors::SYNTAX));
    }
    // ZADD key [options] score member ...
    let mut argv: Vec<Vec<u8>> = Vec::with_capacity(a.len());
    argv.push(b"zadd".to_vec());
    argv.extend(a.all()[1..longidx].iter().cloned());
    for at in (longidx..a.len()).step_by(3) {
        let [lon, lat] = lon_lat(a, at)?;
        let score = geohash::score_of(lon, lat).unwrap_or(0);
        argv.push(score.to_string().into_bytes());
        argv.push(a.bytes(at + 2).to_vec());
    }
    super::zset::zadd(s, &Args::new(&argv))
}

/// GEOPOS key member ...: the decoded cell centres; a null array for a missing member.
pub fn geopos(s: &mut Server, a: &Args) -> CmdResult {
    let zset = read(s, a.bytes(1))?;
    let items = (2..a.len())
        .map(|i| match zset.and_then(|z| z.score(a.bytes(i))) {
            None => Reply::NilArray,
            Some(score) => {
                let [lon, lat] = geohash::decode_score(score);
                Reply::Array(vec![Reply::double(lon), Reply::double(lat)])
            }
        })
        .collect();
    Ok(Reply::Array(items))
}

/// GEOHASH key member ...: the 11-character standard geohash of each member.
pub fn geohash_cmd(s: &mut Server, a: &Args) -> CmdResult {
    let zset = read(s, a.bytes(1))?;
    let items = (2..a.len())
        .map(|i| match zset.and_then(|z| z.score(a.bytes(i))) {
            None => Reply::Nil,
            Some(score) => Reply::bulk(geohash::standard_string(score)),
        })
        .collect();
    Ok(Reply::Array(items))
}

/// GEODIST key member1 member2 [unit]: the unit is checked before the key.
pub fn geodist(s: &mut Server, a: &Args) -> CmdResult {
    let mut to_meter = 1.0;
    if a.len() == 5 {
        to_meter = unit(a, 4)?;
    } else if a.len() > 5 {
        return Err(Reply::error(errors::SYNTAX));
    }
    let Some(zset) = read(s, a.bytes(1))? else {
        return Ok(Reply::Nil);
    };
    let (Some(s1), Some(s2)) = (zset.score(a.bytes(2)), zset.score(a.bytes(3))) else {
        return Ok(Reply::Nil);
    };
    let [x1, y1] = geohash::decode_score(s1);
    let [x2, y2] = geohash::decode_score(s2);
    Ok(Reply::bulk(format_distance(
        distance(x1, y1, x2, y2) / to_meter,
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn article_rows() {
        let mut s = Server::new();
        assert_eq!(
            s.cmd(&["GEOADD", "shops", "105.8542", "21.0285", "hoan-kiem"]),
            Reply::Integer(1)
        );
        assert_eq!(s.cmd(&["TYPE", "shops"]), Reply::Status("zset".into()));
        assert_eq!(
            s.cmd(&["ZSCORE", "shops", "hoan-kiem"]),
            Reply::Double(3973593206939046.0)
        );
        assert_eq!(
            s.cmd(&["GEOHASH", "shops", "hoan-kiem", "nope"]),
            Reply::Array(vec![Reply::bulk("w7er8u0evs0"), Reply::Nil])
        );
        assert_eq!(
            s.cmd(&["GEOPOS", "shops", "hoan-kiem", "nope"]),
            Reply::Array(vec![
                Reply::Array(vec![
                    Reply::Double(105.85420221090317),
                    Reply::Double(21.028499185602875)
                ]),
                Reply::NilArray
            ])
        );
    }

    #[test]
    fn swapped_coordinates() {
        let mut s = Server::new();
        assert_eq!(
            s.cmd(&["GEOADD", "shops", "21.0285", "105.8542", "x"]),
            Reply::error("ERR invalid longitude,latitude pair 21.028500,105.854200")
        );
        assert_eq!(
            s.cmd(&["GEOADD", "shops", "48.8566", "2.3522", "paris"]),
            Reply::Integer(1)
        );
        assert_eq!(
            s.cmd(&["GEOADD", "shops", "105", "86", "y"]),
            Reply::error("ERR invalid longitude,latitude pair 105.000000,86.000000")
        );
        assert_eq!(
            s.cmd(&["GEOADD", "shops", "NX", "XX", "1", "2", "z"]),
            Reply::error("ERR syntax error")
        );
    }

    #[test]
    fn geodist_hanoi_saigon() {
        let mut s = Server::new();
        s.cmd(&[
            "GEOADD",
            "shops",
            "105.8542",
            "21.0285",
            "hoan-kiem",
            "106.7009",
            "10.7769",
            "quan-1",
        ]);
        let Reply::Bulk(m) = s.cmd(&["GEODIST", "shops", "hoan-kiem", "quan-1"]) else {
            panic!()
        };
        let m: f64 = String::from_utf8(m.into_vec()).unwrap().parse().unwrap();
        assert!((m - 1_143_827.0).abs() < 1.0, "{m}");
        assert_eq!(
            s.cmd(&["GEODIST", "shops", "hoan-kiem", "quan-1", "parsec"]),
            Reply::error("ERR unsupported unit provided. please use M, KM, FT, MI")
        );
    }
}
