//! PostgreSQL 18.4 (the harness's usual server): earthdistance/cube + GiST, as
//! 05i does, and the built-in `point` type on a plane with a GiST and an SP-GiST
//! index, KNN by `<->`.

use redislab_harness::{Cell, Pg, Recorder};

use crate::geo::{near, plane, HOAN_KIEM, QUAN_1};
use crate::pgq::{self, copy_shops, timed};
use crate::{distance_cell, CALLS, RADII_KM};

pub fn steps(pg: &mut Pg, rec: &mut Recorder, data: &[(f64, f64)]) -> Result<(), String> {
    let schema = pg.schema.clone();
    let (x0, y0) = (HOAN_KIEM.0, HOAN_KIEM.1);
    let k = HOAN_KIEM.1.to_radians().cos();
    let m = 6_371_008.8 * std::f64::consts::PI / 180.0;
    // Steadier timings on 2 shared cores: no parallel workers, no JIT.
    pg.exec(crate::pgq::STEADY)?;
    pg.exec(&format!(
        "CREATE EXTENSION IF NOT EXISTS cube SCHEMA {schema};
         CREATE EXTENSION IF NOT EXISTS earthdistance SCHEMA {schema};
         CREATE TABLE shops (id integer, lon float8, lat float8);"
    ))?;
    copy_shops(pg, "shops", data)?;
    // The plane of geo::plane, in SQL: metres east/north of Hoan Kiem.
    pg.exec(&format!(
        "CREATE INDEX shops_earth ON shops USING gist (ll_to_earth(lat, lon));
         CREATE TABLE shops_gist AS
           SELECT id, point((lon - {x0}) * {k} * {m}, (lat - {y0}) * {m}) AS p FROM shops;
         CREATE TABLE shops_spgist AS SELECT * FROM shops_gist;
         CREATE INDEX shops_gist_p ON shops_gist USING gist (p);
         CREATE INDEX shops_spgist_p ON shops_spgist USING spgist (p);"
    ))?;
    // VACUUM cannot share a batch (an implicit transaction) with anything.
    for table in ["shops", "shops_gist", "shops_spgist"] {
        pg.exec(&format!("VACUUM ANALYZE {table}"))?;
    }
    let centre = format!("ll_to_earth({y0}, {x0})");
    for km in RADII_KM {
        let r = km * 1000;
        let queries = [
            ("earth", format!("SELECT count(*) FROM shops WHERE earth_box({centre}, {r}) @> ll_to_earth(lat, lon) AND earth_distance({centre}, ll_to_earth(lat, lon)) <= {r}")),
            ("point", format!("SELECT count(*) FROM shops_gist WHERE p <@ circle(point(0, 0), {r})")),
            ("spgist", format!("SELECT count(*) FROM shops_spgist WHERE p <@ box(point(-{r}, -{r}), point({r}, {r})) AND p <-> point(0, 0) <= {r}")),
        ];
        for (what, sql) in queries {
            rec.put(&format!("{what}-count-{km}"), pgq::value(pg, &sql));
            rec.put(&format!("t-{what}-{km}"), timed(pg, &sql, CALLS)?);
        }
    }
    for (what, table) in [("point", "shops_gist"), ("spgist", "shops_spgist")] {
        let sql = format!("SELECT 's' || id FROM {table} ORDER BY p <-> point(0, 0) LIMIT 10");
        rec.put(&format!("knn-{what}"), pgq::column(pg, &sql)?.join(" "));
        rec.put(&format!("t-knn-{what}"), timed(pg, &sql, CALLS)?);
    }
    for (row, point) in [("d-near", near()), ("d-far", QUAN_1)] {
        let earth = format!(
            "SELECT earth_distance(ll_to_earth({y0}, {x0}), ll_to_earth({}, {}))",
            point.1, point.0
        );
        rec.put(&format!("{row}-earth"), number(pg, &earth, point));
        let (px, py) = plane(point);
        let flat = format!("SELECT point(0, 0) <-> point({px}, {py})");
        rec.put(&format!("{row}-point"), number(pg, &flat, point));
    }
    Ok(())
}

/// A distance the server computed, as a distance cell, or its error.
pub fn number(pg: &mut Pg, sql: &str, to: (f64, f64)) -> Cell {
    let cell = pgq::value(pg, sql);
    match cell.text.parse::<f64>() {
        Ok(d) => distance_cell(d, HOAN_KIEM, to),
        Err(_) => cell,
    }
}
