//! GEOSEARCH on the core and on Redis: the radius counts, their round trips, the
//! ten nearest, and GEODIST for the distance rows.

use redislab_harness::timing;
use redislab_harness::{Kv, Recorder};

use crate::geo::{near, HOAN_KIEM, QUAN_1};
use crate::{distance_cell, CALLS, RADII_KM};

const GEOADD_POINTS: usize = 500;

pub fn steps(kv: &mut Kv, rec: &mut Recorder, data: &[(f64, f64)]) -> Result<(), String> {
    let key = kv.key("shops");
    redislab_harness::geo_load::geoadd_points(kv, &key, data, GEOADD_POINTS)?;
    let (lon, lat) = (HOAN_KIEM.0.to_string(), HOAN_KIEM.1.to_string());
    for km in RADII_KM {
        let r = km.to_string();
        let args = [
            "GEOSEARCH",
            &key,
            "FROMLONLAT",
            &lon,
            &lat,
            "BYRADIUS",
            &r,
            "km",
        ];
        let bytes: Vec<&[u8]> = args.iter().map(|s| s.as_bytes()).collect();
        rec.put(&format!("count-{km}"), kv.items(&bytes)?.len().to_string());
        let t = timing::measure_kv(kv, "geosearch", 3, CALLS, |kv| kv.cmd(&args).map(drop))?;
        rec.put(&format!("t-geo-{km}"), t);
    }
    let nearest = [
        "GEOSEARCH",
        &key,
        "FROMLONLAT",
        &lon,
        &lat,
        "BYRADIUS",
        "100",
        "km",
        "COUNT",
        "10",
        "ASC",
    ];
    let bytes: Vec<&[u8]> = nearest.iter().map(|s| s.as_bytes()).collect();
    rec.put("knn", kv.items(&bytes)?.join(" "));
    // GEODIST between the lab's fixed points, added to a key of their own.
    let pts = kv.key("points");
    for (name, (plon, plat)) in [
        ("hoan-kiem", HOAN_KIEM),
        ("quan-1", QUAN_1),
        ("near", near()),
    ] {
        kv.cmd(&["GEOADD", &pts, &plon.to_string(), &plat.to_string(), name])?;
    }
    for (row, to, point) in [("d-near", "near", near()), ("d-far", "quan-1", QUAN_1)] {
        let reply = kv.reply(&["GEODIST", &pts, "hoan-kiem", to, "m"]);
        let cell = match reply.parse::<f64>() {
            Ok(d) => distance_cell(d, HOAN_KIEM, point),
            Err(_) => reply.into(),
        };
        rec.put(&format!("{row}-geodist"), cell);
    }
    kv.cmd(&["DEL", &key, &pts])?;
    Ok(())
}
