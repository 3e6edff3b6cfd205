//! PostGIS 3 on Debian's PostgreSQL 15 (a second server the harness starts, since
//! PostGIS is not built for 18.4): geography(Point, 4326) + GiST, ST_DWithin for
//! the radius, `<->` for the ten nearest, ST_Distance on the WGS84 spheroid.

use redislab_harness::{Pg, Recorder};

use crate::geo::{near, HOAN_KIEM, QUAN_1};
use crate::pg18::number;
use crate::pgq::{self, copy_shops, timed};
use crate::{CALLS, RADII_KM};

pub fn steps(pg: &mut Pg, rec: &mut Recorder, data: &[(f64, f64)]) -> Result<String, String> {
    let schema = pg.schema.clone();
    // Steadier timings on 2 shared cores: no parallel workers, no JIT.
    pg.exec(crate::pgq::STEADY)?;
    pg.exec(&format!(
        "CREATE EXTENSION IF NOT EXISTS postgis SCHEMA {schema};
         CREATE TABLE shops_raw (id integer, lon float8, lat float8);"
    ))?;
    let version = pgq::column(pg, "SELECT postgis_lib_version()")?
        .first()
        .cloned()
        .unwrap_or_default();
    copy_shops(pg, "shops_raw", data)?;
    pg.exec(
        "CREATE TABLE shops AS
           SELECT id, ST_SetSRID(ST_MakePoint(lon, lat), 4326)::geography AS g FROM shops_raw;
         CREATE INDEX shops_g ON shops USING gist (g);",
    )?;
    pg.exec("VACUUM ANALYZE shops")?;
    let centre = format!(
        "ST_SetSRID(ST_MakePoint({}, {}), 4326)::geography",
        HOAN_KIEM.0, HOAN_KIEM.1
    );
    for km in RADII_KM {
        let sql = format!(
            "SELECT count(*) FROM shops WHERE ST_DWithin(g, {centre}, {})",
            km * 1000
        );
        rec.put(&format!("postgis-count-{km}"), pgq::value(pg, &sql));
        rec.put(&format!("t-postgis-{km}"), timed(pg, &sql, CALLS)?);
    }
    let sql = format!("SELECT 's' || id FROM shops ORDER BY g <-> {centre} LIMIT 10");
    rec.put("knn-postgis", pgq::column(pg, &sql)?.join(" "));
    rec.put("t-knn-postgis", timed(pg, &sql, CALLS)?);
    for (row, point) in [("d-near", near()), ("d-far", QUAN_1)] {
        let sql = format!(
            "SELECT ST_Distance({centre}, ST_SetSRID(ST_MakePoint({}, {}), 4326)::geography)",
            point.0, point.1
        );
        rec.put(&format!("{row}-postgis"), number(pg, &sql, point));
    }
    Ok(version)
}
