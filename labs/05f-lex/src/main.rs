//! 05f-lex — autocomplete with BYLEX, and why every score must be equal.
//!
//! Article 05, section 3.7. With every member at score 0 the set is ordered by
//! bytes, so `[lara (lara\xff` is "everything starting with lara". Vietnamese input
//! needs an unaccented search key stored in front of the display text
//! (`dien may:điện máy`), because `điện` and `dien` are different bytes. A member
//! with another score sorts after all the score-0 members and lands in the wrong
//! place. PostgreSQL does the same search with `unaccent` and a prefix index.

use std::process::ExitCode;

use redislab_harness::{run, Kind, Kv, LabInfo, Pg, Recorder};

const LAB: LabInfo = LabInfo {
    id: "05f-lex",
    uses_pg: true,
};

/// Display texts offered by the autocomplete (all at score 0 in Redis).
const ENTRIES: [&str; 12] = [
    "api",
    "cache",
    "docker",
    "điện máy",
    "điện thoại",
    "git",
    "javascript",
    "lara",
    "larastan",
    "laravel",
    "laravel livewire",
    "laravel nang cao",
];

/// The search key: Vietnamese letters without their marks, lower case. Only the
/// letters these entries use are mapped; PostgreSQL's `unaccent` is the general tool.
fn unaccent(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            'đ' | 'Đ' => 'd',
            'á' | 'à' | 'ả' | 'ã' | 'ạ' => 'a',
            'ệ' | 'ế' | 'ề' | 'ể' | 'ễ' | 'ê' | 'é' | 'è' => 'e',
            'ọ' | 'ó' | 'ò' | 'ô' | 'ơ' => 'o',
            other => other,
        })
        .collect::<String>()
        .to_lowercase()
}

/// The member stored for an entry: the key alone when it equals the display text,
/// else `key:display`.
fn member(entry: &str) -> String {
    let key = unaccent(entry);
    if key == entry {
        key
    } else {
        format!("{key}:{entry}")
    }
}

/// `[prefix` and `(prefix\xff`: every member that starts with `prefix`.
fn prefix_bounds(prefix: &str) -> (Vec<u8>, Vec<u8>) {
    let min = [b"[", prefix.as_bytes()].concat();
    let max = [b"(", prefix.as_bytes(), b"\xff"].concat();
    (min, max)
}

fn main() -> ExitCode {
    run(LAB, |ctx| {
        let r = &mut ctx.report;
        r.exact(
            "lara",
            "ZRANGE ac [lara (lara\\xff BYLEX LIMIT 0 5",
            "lara|larastan|laravel|laravel livewire|laravel nang cao",
        );
        r.exact(
            "typed-dien-accented",
            "typed 'điện': ZRANGE ac [điện (điện\\xff BYLEX",
            "(empty)",
        );
        r.exact(
            "typed-dien",
            "typed 'dien': ZRANGE ac [dien (dien\\xff BYLEX",
            "dien may:điện máy|dien thoai:điện thoại",
        );
        r.row(
            "lexcount",
            "ZLEXCOUNT ac [lara (lara\\xff",
            Kind::Exact,
            None,
        );
        r.exact(
            "mixed-score",
            "ZADD ac 1 'laravel 13'; ZRANGE ac [lara (lara\\xff BYLEX",
            "lara|larastan|laravel|laravel livewire|laravel nang cao|laravel 13",
        );
        r.row("encoding", "OBJECT ENCODING ac", Kind::Exact, None);
        r.row(
            "pg-plan",
            "pg: plan of the unaccent prefix search",
            Kind::Exact,
            None,
        );

        ctx.each_kv(autocomplete)?;
        ctx.with_pg(pg_search)?;
        ctx.note("'laravel 13' has score 1, so it sorts after every score-0 member: BYLEX returns it last, after 'laravel nang cao', although its bytes sort before 'laravel livewire'.");
        ctx.note("On a small set (listpack) Redis answers a lex range by scanning from the head; on a skiplist the answer to a mixed-score lex range depends on the random node levels. The core reproduces the listpack scan.");
        ctx.note("pg: unaccent is not IMMUTABLE, so the index is on an immutable wrapper; with a dozen rows the planner prefers a sequential scan, so the plan is shown with enable_seqscan off.");
        Ok(())
    })
}

fn joined(kv: &mut Kv, args: &[&[u8]]) -> String {
    match kv.items(args) {
        Ok(items) if items.is_empty() => "(empty)".into(),
        Ok(items) => items.join("|"),
        Err(e) => e,
    }
}

fn autocomplete(kv: &mut Kv, rec: &mut Recorder) -> Result<(), String> {
    let ac = kv.key("ac");
    for entry in ENTRIES {
        kv.cmd(&["ZADD", &ac, "0", &member(entry)])?;
    }
    let ac = ac.as_bytes();
    let (min, max) = prefix_bounds("lara");
    rec.put(
        "lara",
        joined(
            kv,
            &[b"ZRANGE", ac, &min, &max, b"BYLEX", b"LIMIT", b"0", b"5"],
        ),
    );
    let (dmin, dmax) = prefix_bounds("điện");
    rec.put(
        "typed-dien-accented",
        joined(kv, &[b"ZRANGE", ac, &dmin, &dmax, b"BYLEX"]),
    );
    let (umin, umax) = prefix_bounds(&unaccent("điện"));
    rec.put(
        "typed-dien",
        joined(kv, &[b"ZRANGE", ac, &umin, &umax, b"BYLEX"]),
    );
    let count = kv.cmd_bytes(&[b"ZLEXCOUNT", ac, &min, &max]);
    rec.put(
        "lexcount",
        count
            .map(|v| redislab_harness::backend::render(&v))
            .unwrap_or_else(|e| e),
    );
    kv.cmd_bytes(&[b"ZADD", ac, b"1", b"laravel 13"])?;
    rec.put(
        "mixed-score",
        joined(kv, &[b"ZRANGE", ac, &min, &max, b"BYLEX"]),
    );
    rec.put(
        "encoding",
        kv.reply(&["OBJECT", "ENCODING", &String::from_utf8_lossy(ac)]),
    );
    Ok(())
}

fn pg_search(pg: &mut Pg, rec: &mut Recorder) -> Result<(), String> {
    let schema = pg.schema.clone();
    pg.exec(&format!(
        "CREATE EXTENSION IF NOT EXISTS unaccent SCHEMA {schema};
         CREATE FUNCTION f_unaccent(text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
           AS $$ SELECT {schema}.unaccent('{schema}.unaccent', $1) $$;
         CREATE TABLE ac (display text);
         CREATE INDEX ac_search ON ac (f_unaccent(display) text_pattern_ops);"
    ))?;
    for entry in ENTRIES {
        pg.exec(&format!("INSERT INTO ac VALUES ('{entry}')"))?;
    }
    let search = |typed: &str, limit: &str| {
        format!(
            "SELECT coalesce(string_agg(display, '|' ORDER BY display COLLATE \"C\"), '(empty)') FROM
               (SELECT display FROM ac WHERE f_unaccent(display) LIKE f_unaccent('{typed}') || '%'
                ORDER BY display COLLATE \"C\" {limit}) hits"
        )
    };
    rec.put("lara", pg.column(&search("lara", "LIMIT 5")));
    rec.put("typed-dien-accented", pg.column(&search("điện", "")));
    rec.put("typed-dien", pg.column(&search("dien", "")));
    pg.exec("SET enable_seqscan = off")?;
    let plan = pg.rows(
        "EXPLAIN (COSTS OFF) SELECT display FROM ac WHERE f_unaccent(display) LIKE 'dien%'",
    )?;
    // The plan nodes that read the table or the index, outermost first.
    let nodes: Vec<&str> = plan
        .iter()
        .filter(|l| l.contains("Scan"))
        .map(|l| l.trim().trim_start_matches("->").trim())
        .collect();
    rec.put("pg-plan", nodes.join(" → "));
    Ok(())
}
