//! 02g-client — what the Rust `redis` client offers for the new string commands.
//!
//! Article 02, section 5.1 shows a PHP framework reshaping options (NX silently
//! dropped) and skipping the key prefix for raw commands. The same questions asked
//! of the Rust `redis` crate, answered by running its typed calls: which command
//! each one actually sends, and what core and Redis 8.6.3 answer. The crate has no
//! connection-level key prefix at all: typed and raw calls send the key as given,
//! so a prefix lives in one place in the application (here, the harness's
//! `Kv::key`).

use std::process::ExitCode;

use redis::{
    Cmd, ExistenceCheck, Expiry, IncrexOptions, MSetOptions, SetExpiry, SetOptions, ValueComparison,
};
use redislab_harness::{run, Kind, Kv, LabInfo, Recorder};

const LAB: LabInfo = LabInfo {
    id: "02g-client",
    uses_pg: false,
};

/// Every case: row key, the typed call as written in Rust, and how to build it.
type Build = fn(&Kv) -> Cmd;

fn cases() -> Vec<(&'static str, &'static str, Build)> {
    vec![
        (
            "set-ifeq-ok",
            "set_options(cfg, v9, SetOptions::default().value_comparison(ifeq(v1)))",
            |kv| {
                Cmd::set_options(
                    kv.key("cfg"),
                    "v9",
                    SetOptions::default().value_comparison(ValueComparison::ifeq("v1")),
                )
            },
        ),
        ("set-ifeq-stale", "same call again (cfg is now v9)", |kv| {
            Cmd::set_options(
                kv.key("cfg"),
                "v8",
                SetOptions::default().value_comparison(ValueComparison::ifeq("v1")),
            )
        }),
        (
            "set-nx-ifeq",
            "SetOptions with both .conditional_set(NX) and .value_comparison(ifeq)",
            |kv| {
                Cmd::set_options(
                    kv.key("cfg"),
                    "v7",
                    SetOptions::default()
                        .conditional_set(ExistenceCheck::NX)
                        .value_comparison(ValueComparison::ifeq("v9")),
                )
            },
        ),
        (
            "set-nx-ex",
            "set_options(cfg, v6, NX + EX 60) on an existing key",
            |kv| {
                Cmd::set_options(
                    kv.key("cfg"),
                    "v6",
                    SetOptions::default()
                        .conditional_set(ExistenceCheck::NX)
                        .with_expiration(SetExpiry::EX(60)),
                )
            },
        ),
        ("digest", "digest(cfg)", |kv| Cmd::digest(kv.key("cfg"))),
        (
            "delex-wrong",
            "del_ex(lock, ValueComparison::ifeq(tok-B))",
            |kv| Cmd::del_ex(kv.key("lock"), ValueComparison::ifeq("tok-B")),
        ),
        (
            "delex-right",
            "del_ex(lock, ValueComparison::ifeq(tok-A))",
            |kv| Cmd::del_ex(kv.key("lock"), ValueComparison::ifeq("tok-A")),
        ),
        (
            "msetex",
            "mset_ex(&[(a,1),(b,2)], MSetOptions NX + EX 60)",
            |kv| {
                Cmd::mset_ex(
                    &[(kv.key("a"), "1"), (kv.key("b"), "2")],
                    MSetOptions::default()
                        .conditional_set(ExistenceCheck::NX)
                        .with_expiration(SetExpiry::EX(60)),
                )
            },
        ),
        (
            "increx",
            "increx(rl, 1, IncrexOptions::default().upper_bound(5).with_expiration(EX 60).enx())",
            |kv| {
                Cmd::increx(
                    kv.key("rl"),
                    1,
                    IncrexOptions::default()
                        .upper_bound(5)
                        .with_expiration(Expiry::EX(60))
                        .enx(),
                )
            },
        ),
    ]
}

/// The command as sent on the wire, one argument per word.
fn shown(cmd: &Cmd) -> String {
    cmd.args_iter()
        .map(|a| match a {
            redis::Arg::Simple(bytes) => String::from_utf8_lossy(bytes).into_owned(),
            _ => "<cursor>".into(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn main() -> ExitCode {
    run(LAB, |ctx| {
        let r = &mut ctx.report;
        for (key, call, build) in cases() {
            // What the call sends does not depend on the server; record it as a note row.
            let sent = shown(&build(
                ctx.core.as_ref().or(ctx.redis.as_ref()).expect("a backend"),
            ));
            let row = r.row(
                key,
                &format!("{call}\n      sends: {sent}"),
                Kind::Exact,
                None,
            );
            if key == "increx" {
                row.core_matches_redis = false;
            }
        }
        r.row(
            "keys",
            "keys that exist afterwards (typed and raw calls alike)",
            Kind::Exact,
            None,
        );
        ctx.each_kv(client_calls)?;
        ctx.note("Every typed call sends the options it was given, in a fixed order; the builder does not stop NX and IFEQ from being combined — the server answers that combination (see its row).");
        ctx.note("The redis crate has no key prefix option: typed calls and redis::cmd(...) send keys exactly as written. On a shared server the labs add their prefix in one place (Kv::key).");
        let server = match ctx.server_version("redis") {
            Some(v) if ctx.redis_refused("increx") => {
                format!(", the {v} server answers with its own error")
            }
            Some(v) => format!(", the {v} server answers it (see its row)"),
            None => String::new(),
        };
        ctx.note(format!(
            "INCREX is Redis 8.8: the typed call exists in the crate (1.8){server}."
        ));
        Ok(())
    })
}

fn client_calls(kv: &mut Kv, rec: &mut Recorder) -> Result<(), String> {
    kv.cmd(&["SET", &kv.key("cfg"), "v1"])?;
    kv.cmd(&["SET", &kv.key("lock"), "tok-A"])?;
    kv.cmd(&["SET", &kv.key("b"), "old"])?;
    for (key, _, build) in cases() {
        let cmd = build(kv);
        let result = cmd.query::<redis::Value>(kv.conn());
        let cell = match result {
            Ok(v) => redislab_harness::backend::render(&v),
            Err(e) => redislab_harness::backend::error_text(&e),
        };
        rec.put(key, cell);
    }
    // rl is left out: only a server with INCREX (8.8, the core) creates it.
    let mut keys: Vec<String> = ["cfg", "lock", "a", "b"]
        .iter()
        .filter(|k| kv.reply(&["EXISTS", &kv.key(k)]) == "1")
        .map(|k| k.to_string())
        .collect();
    keys.sort();
    rec.put("keys", keys.join(" "));
    Ok(())
}
