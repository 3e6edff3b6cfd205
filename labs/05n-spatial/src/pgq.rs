//! What the PostgreSQL rows share: COPY of the shops, a timed query with the plan
//! node that answered it, a single value.

use std::io::Write;

use postgres::SimpleQueryMessage;
use redislab_harness::backend::pg_error_text;
use redislab_harness::{timing, Cell, Pg};

/// Session settings for the timed queries: a plan that does not depend on how many
/// cores happen to be free (parallel workers) or on JIT compilation.
pub const STEADY: &str = "SET max_parallel_workers_per_gather = 0; SET jit = off";

pub fn err(e: postgres::Error) -> String {
    format!("pg: {}", pg_error_text(&e))
}

/// COPY of (id, lon, lat) into `table`, which must have those columns.
pub fn copy_shops(pg: &mut Pg, table: &str, data: &[(f64, f64)]) -> Result<(), String> {
    let label = format!("pg {}: COPY {table}", pg.version);
    let mut writer = pg
        .client
        .copy_in(&format!("COPY {table} (id, lon, lat) FROM STDIN"))
        .map_err(err)?;
    let mut buf = String::new();
    timing::bulk_load(&label, data.len(), 50_000, |start, end| {
        buf.clear();
        for (i, (lon, lat)) in data[start..end].iter().enumerate() {
            buf.push_str(&format!("{}\t{lon}\t{lat}\n", start + i));
        }
        writer
            .write_all(buf.as_bytes())
            .map_err(|e| format!("pg: COPY: {e}"))
    })?;
    writer.finish().map_err(err)?;
    Ok(())
}

/// The first column of every row `sql` returns.
pub fn column(pg: &mut Pg, sql: &str) -> Result<Vec<String>, String> {
    Ok(pg
        .client
        .simple_query(sql)
        .map_err(err)?
        .iter()
        .filter_map(|m| match m {
            SimpleQueryMessage::Row(r) => r.get(0).map(str::to_string),
            _ => None,
        })
        .collect())
}

/// The first value `sql` returns, or the server's error as a cell.
pub fn value(pg: &mut Pg, sql: &str) -> Cell {
    match column(pg, sql) {
        Ok(v) => Cell::text(v.first().cloned().unwrap_or_default()),
        Err(e) => Cell::error(e),
    }
}

/// The plan's first scan node (`Index Scan using shops_pt_gist on shops_pt`).
fn scan_node(pg: &mut Pg, sql: &str) -> Result<String, String> {
    let plan = column(pg, &format!("EXPLAIN (COSTS OFF) {sql}"))?;
    Ok(plan
        .iter()
        .find(|l| l.contains("Scan"))
        .map(|l| {
            let l = l.trim().trim_start_matches("->").trim();
            l.split(" (").next().unwrap_or(l).to_string()
        })
        .unwrap_or_else(|| plan.first().cloned().unwrap_or_default()))
}

/// `sql`'s client round trip over `calls` runs (after two warm-ups), with the
/// scan node that answered it in the text.
pub fn timed(pg: &mut Pg, sql: &str, calls: usize) -> Result<Cell, String> {
    let node = scan_node(pg, sql)?;
    let client = &mut pg.client;
    let t = timing::measure(2, calls, || client.simple_query(sql).map(drop).map_err(err))?;
    let cell = Cell::from(t);
    let text = format!("{} · {node}", cell.text);
    Ok(cell.with_text(text))
}
