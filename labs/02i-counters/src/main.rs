//! 02i-counters — the article's counters helper (rate limit, stock, lock) in Rust.
//!
//! Article 02, section 5.2. The helper uses INCREX where the server has it (the
//! core models Redis 8.8) and falls back to a Lua script where it does not (the
//! real server here is 8.6.3); both paths must give the same answers. The core is
//! also run through the script path, to show the fallback on one server.
//!
//! The lock is released with DELEX … IFEQ, as the article's helper does; a server
//! without DELEX (Redis before 8.4, Valkey 9.1) answers with its own error, which
//! that row shows. Beside it, on every server, the same release through the Lua
//! compare-and-delete script that DELEX replaces, in a row of its own.

mod counters;

use std::process::ExitCode;

use counters::Counters;
use redislab_harness::{run, Cell, Kind, Kv, LabInfo, Recorder};

const LAB: LabInfo = LabInfo {
    id: "02i-counters",
    uses_pg: false,
};

fn main() -> ExitCode {
    run(LAB, |ctx| {
        let r = &mut ctx.report;
        r.row("path", "path the helper chose (and why)", Kind::Exact, None)
            .core_matches_redis = false;
        for prefix in ["", "script-"] {
            let via = if prefix.is_empty() {
                ""
            } else {
                " [core forced through the script]"
            };
            r.exact(
                &format!("{prefix}hit"),
                &format!("hit() 7 times, limit 5{via}"),
                "pass pass pass pass pass blocked blocked",
            );
            r.exact(
                &format!("{prefix}hit-ttl"),
                &format!("TTL of the rate-limit key{via}"),
                "60",
            );
            r.exact(
                &format!("{prefix}reserve"),
                &format!("reserve() 3 times, stock 2{via}"),
                "ok ok sold-out",
            );
            r.exact(
                &format!("{prefix}stock-left"),
                &format!("stock left{via}"),
                "0",
            );
            r.exact(
                &format!("{prefix}release"),
                &format!("release() by DELEX … IFEQ: tok-B, tok-A, lock still there?{via}"),
                "false true false",
            );
            if prefix.is_empty() {
                r.exact(
                    "release-script",
                    "release() by a Lua compare-and-delete script instead (GET = token → DEL): tok-B, tok-A, lock still there?",
                    "false true false",
                );
            }
        }
        // The forced-script rows exist only for the core.
        for row in r
            .rows
            .iter_mut()
            .filter(|row| row.key.starts_with("script-"))
        {
            row.core_matches_redis = false;
        }
        ctx.each_kv(|kv, rec| {
            let path = exercise(kv, rec, "", false)?;
            rec.put("path", path);
            if kv.name == "core" {
                exercise(kv, rec, "script-", true)?;
            }
            Ok(())
        })?;
        // Which path the real server took, from its own `path` row.
        let path = ctx
            .report
            .rows
            .iter()
            .find(|r| r.key == "path")
            .and_then(|r| r.redis.as_ref())
            .map(|c| c.text.clone());
        let note = match (ctx.server_name("redis"), path) {
            (Some(v), Some(p)) if p.starts_with("Lua script") => {
                let why = if p.contains("unknown command") {
                    "an unknown-command error".to_string()
                } else {
                    format!("an error: {}", p.trim_start_matches("Lua script").trim())
                };
                format!("Same answers on both paths: INCREX on the core, the Lua fallback on {v} (which answers INCREX with {why}), and the fallback again on the core.")
            }
            (Some(v), Some(_)) => format!("Same answers on both paths: INCREX on the core and on {v} (which has it), and the Lua fallback on the core."),
            _ => "Same answers on both paths: INCREX on the core, and the Lua fallback on the core.".to_string(),
        };
        ctx.note(note);
        // The lock's release on a server without DELEX: its own error, and the script.
        if ctx.redis_refused("release") {
            let server = ctx
                .server_name("redis")
                .unwrap_or_else(|| "The server".into());
            let script = ctx
                .report
                .rows
                .iter()
                .find(|r| r.key == "release-script")
                .and_then(|r| Some((r.redis.as_ref()?.text.clone(), r.article.clone()?)));
            let answered = match script {
                Some((text, article)) if text == article => {
                    format!("gives the article's answers there ({text})")
                }
                Some((text, _)) => format!("answers {text:?} there"),
                None => "has no answer there".into(),
            };
            ctx.note(format!("{server} refuses DELEX (its error is in the DELEX row), so the article's release() needs the Lua compare-and-delete that DELEX replaces: the script row {answered}."));
        }
        Ok(())
    })
}

/// Runs the article's three scenarios through the helper; returns the path taken.
fn exercise(
    kv: &mut Kv,
    rec: &mut Recorder,
    prefix: &str,
    force_script: bool,
) -> Result<String, String> {
    let mut counters = Counters::new(kv, force_script);
    let tag = prefix.trim_end_matches('-');
    let name = format!("rl:login:42{tag}");
    let mut hits = Vec::new();
    for _ in 0..7 {
        hits.push(if counters.hit(&name, 5, 60)? {
            "pass"
        } else {
            "blocked"
        });
    }
    rec.put(&format!("{prefix}hit"), hits.join(" "));
    let key = counters.key(&name);
    rec.put(
        &format!("{prefix}hit-ttl"),
        counters.kv().reply(&["TTL", &key]),
    );

    let stock = counters.key(&format!("stock:sku1{tag}"));
    counters.kv().cmd(&["SET", &stock, "2"])?;
    let mut reserved = Vec::new();
    for _ in 0..3 {
        reserved.push(if counters.reserve(&format!("sku1{tag}"))? {
            "ok"
        } else {
            "sold-out"
        });
    }
    rec.put(&format!("{prefix}reserve"), reserved.join(" "));
    rec.put(
        &format!("{prefix}stock-left"),
        counters.kv().reply(&["GET", &stock]),
    );

    let lock = format!("lock:order:9{tag}");
    let lock_key = counters.key(&lock);
    counters.kv().cmd(&["SET", &lock_key, "tok-A"])?;
    let released = match counters.release(&lock, "tok-B")? {
        Ok(wrong) => match counters.release(&lock, "tok-A")? {
            Ok(right) => {
                let still = counters.kv().reply(&["EXISTS", &lock_key]) == "1";
                Cell::text(format!("{wrong} {right} {still}"))
            }
            Err(e) => Cell::error(e),
        },
        // No DELEX on this server: the row is its error.
        Err(e) => Cell::error(e),
    };
    rec.put(&format!("{prefix}release"), released);
    // A refused DELEX left the lock in place; the next step starts from none.
    counters.kv().cmd(&["DEL", &lock_key])?;
    if prefix.is_empty() {
        counters.kv().cmd(&["SET", &lock_key, "tok-A"])?;
        let wrong = counters.release_by_script(&lock, "tok-B")?;
        let right = counters.release_by_script(&lock, "tok-A")?;
        let still = counters.kv().reply(&["EXISTS", &lock_key]) == "1";
        rec.put("release-script", format!("{wrong} {right} {still}"));
        counters.kv().cmd(&["DEL", &lock_key])?;
    }
    Ok(match counters.path {
        counters::Path::Increx => "INCREX".to_string(),
        counters::Path::Script => format!("Lua script ({})", counters.probe),
    })
}
