//! 05n-spatial — the radius queries of 05i in PostgreSQL three ways, beside GEOSEARCH.
//!
//! Article 05, section 3.10 (its "PostgreSQL has PostGIS" aside). The same seeded
//! shops go into a geo set on the core and on Redis (GEOSEARCH BYRADIUS: a
//! geohash grid and Redis's haversine), into PostgreSQL 18.4 twice (earthdistance's
//! cube + GiST on a sphere, as 05i; the built-in `point` type on a plane chosen by
//! the lab, with a GiST and an SP-GiST index and KNN by `<->`), and into PostGIS 3
//! on Debian's PostgreSQL 15 (geography + GiST, ST_DWithin, ST_Distance on the
//! WGS84 spheroid), a second server the harness starts since PostGIS is not built
//! for 18.4. Each row's label names the server that answered it. Radius counts,
//! round trips (with ratios to earthdistance, banded), the ten nearest, and two
//! distances by every method beside the WGS84 geodesic (geographiclib) in the
//! reference column.

mod geo;
mod kv;
mod pg18;
mod pgq;
mod postgis;

use std::process::ExitCode;

use redislab_harness::timing::thousands;
use redislab_harness::{run, Cell, Chart, ChartKind, Kind, LabInfo, Recorder, Report};

const LAB: LabInfo = LabInfo {
    id: "05n-spatial",
    uses_pg: true,
};

/// Shops at scale 1 (05i has 1,000,000; here every one is loaded five times).
const SHOPS: f64 = 200_000.0;
pub const RADII_KM: [u32; 3] = [5, 20, 100];
/// Timed calls per query.
pub const CALLS: usize = 50;

const PG18: &str = "pg 18.4";
const POSTGIS: &str = "PostGIS (pg 15)";

/// A distance a server gave, with its difference from the WGS84 geodesic.
pub fn distance_cell(d: f64, from: (f64, f64), to: (f64, f64)) -> Cell {
    let g = geo::geodesic(from, to);
    let pct = (d - g) / g * 100.0;
    Cell::num(d, "m").with_text(format!("{} m ({pct:+.3}%)", thousands(d.round() as u64)))
}

fn declare(r: &mut Report) {
    for km in RADII_KM {
        r.row(
            &format!("count-{km}"),
            &format!("{km} km: GEOSEARCH BYRADIUS, shops found [core, redis]"),
            Kind::Exact,
            None,
        );
        r.row(
            &format!("earth-count-{km}"),
            &format!("{km} km: earthdistance earth_box @> + earth_distance <= [{PG18}]"),
            Kind::Exact,
            None,
        );
        r.row(
            &format!("point-count-{km}"),
            &format!("{km} km: point <@ circle, GiST, on the lab's plane [{PG18}]"),
            Kind::Exact,
            None,
        );
        r.row(
            &format!("spgist-count-{km}"),
            &format!("{km} km: point <@ box and <-> ≤ r, SP-GiST [{PG18}]"),
            Kind::Exact,
            None,
        );
        r.row(
            &format!("postgis-count-{km}"),
            &format!("{km} km: ST_DWithin(geography), GiST [{POSTGIS}]"),
            Kind::Exact,
            None,
        );
        r.measured(
            &format!("t-geo-{km}"),
            &format!("{km} km: GEOSEARCH round trip [core, redis]"),
            None,
        );
        r.measured(
            &format!("t-earth-{km}"),
            &format!("{km} km: earthdistance round trip [{PG18}]"),
            None,
        );
        r.measured(
            &format!("t-point-{km}"),
            &format!("{km} km: point GiST round trip [{PG18}]"),
            None,
        );
        r.measured(
            &format!("t-spgist-{km}"),
            &format!("{km} km: point SP-GiST round trip [{PG18}]"),
            None,
        );
        r.measured(
            &format!("t-postgis-{km}"),
            &format!("{km} km: ST_DWithin round trip [{POSTGIS}]"),
            None,
        );
        for (what, name) in [
            ("geo", "GEOSEARCH"),
            ("point", "point GiST"),
            ("spgist", "point SP-GiST"),
            ("postgis", "PostGIS ST_DWithin"),
        ] {
            r.measured(
                &format!("r-{what}-{km}"),
                &format!("{km} km: {name} ÷ earthdistance, fastest of the timed calls (one run)"),
                None,
            )
            .band(10.0);
        }
    }
    r.row(
        "knn",
        "10 nearest: GEOSEARCH … COUNT 10 ASC [core, redis]",
        Kind::Exact,
        None,
    );
    r.row(
        "knn-point",
        &format!("10 nearest: ORDER BY p <-> centre LIMIT 10, GiST KNN, lab's plane [{PG18}]"),
        Kind::Exact,
        None,
    );
    r.row(
        "knn-spgist",
        &format!("10 nearest: the same, SP-GiST KNN [{PG18}]"),
        Kind::Exact,
        None,
    );
    r.row(
        "knn-postgis",
        &format!("10 nearest: ORDER BY geography <-> centre LIMIT 10 [{POSTGIS}]"),
        Kind::Exact,
        None,
    );
    for what in ["point", "spgist", "postgis"] {
        r.measured(
            &format!("t-knn-{what}"),
            &format!("… {what} KNN round trip"),
            None,
        );
    }
    let near = geo::near();
    for (row, what, to) in [
        ("d-near", "hoan-kiem → 5 km north-east", near),
        ("d-far", "hoan-kiem → quan-1", geo::QUAN_1),
    ] {
        let g = geo::geodesic(geo::HOAN_KIEM, to);
        let reference = Cell::num(g, "m").with_text(format!(
            "{} m (WGS84 geodesic, geographiclib)",
            thousands(g.round() as u64)
        ));
        for (method, label) in [
            (
                "geodist",
                "GEODIST (haversine, sphere of 6,372,797.56 m) [core, redis]".to_string(),
            ),
            (
                "earth",
                format!("earth_distance (sphere of 6,378,168 m) [{PG18}]"),
            ),
            (
                "point",
                format!("point <-> on the lab's plane (m) [{PG18}]"),
            ),
            (
                "postgis",
                format!("ST_Distance(geography): WGS84 spheroid [{POSTGIS}]"),
            ),
        ] {
            let row = r.row(
                &format!("{row}-{method}"),
                &format!("{what}: {label}"),
                Kind::Exact,
                None,
            );
            row.reference = Some(reference.clone());
        }
    }
}

/// The fastest of `backend`'s timed calls in row `key` (percentile 0): on two
/// cores shared with other jobs the medians of sub-millisecond queries swing by
/// several ×, the fastest call much less, so the ratios use it.
fn fastest(r: &Report, key: &str, backend: &str) -> Option<f64> {
    let cell = r.find(key)?.value(backend)?;
    cell.percentiles
        .iter()
        .find(|p| p[0] == 0.0)
        .map(|p| p[1])
        .or_else(|| cell.number())
}

/// The ratio rows: each method's fastest call ÷ earthdistance's, same radius, one run.
fn ratios(r: &mut Report) {
    for km in RADII_KM {
        let Some(earth) = fastest(r, &format!("t-earth-{km}"), "pg") else {
            continue;
        };
        for (what, backends) in [
            ("geo", &["redis", "core"][..]),
            ("point", &["pg"][..]),
            ("spgist", &["pg"][..]),
            ("postgis", &["pg"][..]),
        ] {
            let mut cells = Vec::new();
            for &b in backends {
                if let Some(v) = fastest(r, &format!("t-{what}-{km}"), b) {
                    let ratio = v / earth;
                    cells.push((
                        b,
                        Cell::num(ratio, "×").with_text(format!(
                            "{ratio:.2}× ({} / {} µs)",
                            thousands(v.round() as u64),
                            thousands(earth.round() as u64)
                        )),
                    ));
                }
            }
            for (b, cell) in cells {
                if let Some(row) = r
                    .rows
                    .iter_mut()
                    .find(|x| x.key == format!("r-{what}-{km}"))
                {
                    match b {
                        "redis" => row.redis = Some(cell),
                        "core" => row.core = Some(cell),
                        _ => row.pg = Some(cell),
                    }
                }
            }
        }
    }
}

fn chart(r: &mut Report) {
    let names: Vec<String> = RADII_KM.iter().map(|km| format!("{km} km")).collect();
    let mut chart = Chart::new(
        "radius",
        ChartKind::Bars,
        "Radius query round trip: GEOSEARCH beside three PostgreSQL ways",
    )
    .x("radius", false)
    .y("µs (log)", true)
    .categories(names);
    for (what, label) in [
        ("earth", "earthdistance (pg 18.4)"),
        ("point", "point GiST (pg 18.4)"),
        ("spgist", "point SP-GiST (pg 18.4)"),
        ("postgis", "PostGIS (pg 15)"),
    ] {
        let rows: Vec<(f64, String)> = RADII_KM
            .iter()
            .enumerate()
            .map(|(i, km)| (i as f64, format!("t-{what}-{km}")))
            .collect();
        chart = chart.rows("pg", None, rows).named(label);
    }
    let rows: Vec<(f64, String)> = RADII_KM
        .iter()
        .enumerate()
        .map(|(i, km)| (i as f64, format!("t-geo-{km}")))
        .collect();
    chart = chart.kv_rows(None, rows).caption("Client round trips (median), each query on its own server: GEOSEARCH on the core and Redis, earthdistance and the point type on PostgreSQL 18.4, PostGIS on PostgreSQL 15.");
    r.chart(chart);
}

fn main() -> ExitCode {
    run(LAB, |ctx| {
        let n = ((SHOPS * ctx.scale).round() as usize).max(1_000);
        let data = geo::shops(ctx.seed, n);
        declare(&mut ctx.report);
        ctx.each_kv(|kv, rec| kv::steps(kv, rec, &data))?;
        ctx.with_pg(|pg, rec| pg18::steps(pg, rec, &data))?;
        if let Some(pg) = ctx.start_postgis()? {
            let mut rec = Recorder::new("pg");
            let version = postgis::steps(pg, &mut rec, &data)?;
            ctx.report.merge(rec)?;
            ctx.report.versions.insert("postgis".into(), version);
        }
        ratios(&mut ctx.report);
        chart(&mut ctx.report);
        ctx.note(format!("Data: {} shops uniform in 05i's Vietnam box (ChaCha8 seed {}), searched around hoan-kiem ({}, {}). The same points go to every server; the label of each row names the server that answered it: [core, redis] GEOSEARCH, [{PG18}] the harness's PostgreSQL 18.4, [{POSTGIS}] PostGIS {} on Debian's PostgreSQL 15, a second server the harness starts (scripts/get-postgis.sh installs it with apt-get) because PostGIS is not built for 18.4. Both PostgreSQL results sit in the pg column.", thousands(n as u64), ctx.seed, geo::HOAN_KIEM.0, geo::HOAN_KIEM.1, ctx.report.versions.get("postgis").cloned().unwrap_or_else(|| "(not run)".into())));
        ctx.note("The counts differ at the edge because each method measures a different distance: Redis's haversine on a sphere of 6,372,797.56 m, earthdistance's great circle on a sphere of 6,378,168 m (earth()), PostGIS's geodesic on the WGS84 spheroid (the reference's), and the point type's straight line on a plane the lab chose: metres east and north of hoan-kiem with longitudes scaled by cos 21.03°. That plane is right near the centre and wrong far from it (the distance rows: 7 m off over 5 km, 5 km off over quan-1's 1,138 km): PostgreSQL's point has no Earth, so the lab, not the server, decides how wrong it is.");
        ctx.note("Timings are client round trips (median of 50 after 2 warm-ups, with no parallel workers and no JIT on either PostgreSQL; the pg texts name the plan's scan node). The ratio rows divide each method's fastest call by earthdistance's for the same radius in the same run (the fastest, because medians of sub-millisecond queries swing by several × on two shared cores), so they carry a band (×10: on two cores shared with other jobs even the fastest call of a query moves by up to ×5 between runs, measured); the two pg servers are separate processes on the same machine.");
        ctx.note("KNN: the point type's GiST and SP-GiST indexes answer ORDER BY p <-> centre LIMIT 10 by walking the index nearest-first (no radius needed), as PostGIS's <-> does on geography; GEOSEARCH needs a radius (here 100 km) and COUNT 10 ASC sorts what the cells hold. The plane's ten nearest can differ from the sphere's only where two shops' distances differ by less than the plane's distortion.");
        Ok(())
    })
}
