//! A lab's claims on servers the harness did not start (`--redis-url`, `--pg-url`):
//! the key prefix `redislab:<id>:` on a Redis and the schema `redislab_<id>` on a
//! PostgreSQL, taken atomically at the start and released at the end — normally,
//! after an error or panic, or by the signal handler ([`crate::shutdown`]).
//!
//! **Redis.** A run claims its prefix with one `SET <prefix>__claim__ <who> NX`
//! (the value names pid, host, start time and a random token) *before* it looks
//! for other keys under the prefix. Of two runs starting together exactly one
//! sets the marker; the other reads it and refuses, naming the run that holds it.
//! A run that sets the marker but then finds keys under the prefix (someone's, or
//! a killed run's) refuses too and removes only its marker. Releasing deletes the
//! keys under the prefix, then the marker — last, so the prefix is not free again
//! while keys of this run remain — and only if it still holds this run's token.
//!
//! **PostgreSQL.** `CREATE SCHEMA` (not `IF NOT EXISTS`) is atomic already; the
//! run creates the schema and a `COMMENT` carrying its token in one transaction.
//! Releasing drops the schema only if the comment is this run's, so a run that
//! was refused (or interrupted while creating it) never drops another run's.
//!
//! **Connections.** Every connection the lab opens to a claimed server is
//! recorded (its Redis `CLIENT ID`, its PostgreSQL backend pid). On an interrupt
//! they are killed first, over a fresh connection, so no thread of the lab can
//! write a key after the clean-up looked; a connection opened after the interrupt
//! is refused (the check and the registration happen under one lock).
//!
//! **One releaser at a time.** The main thread ending its run and the signal
//! handler may release together; releases are serialised, so the second finds the
//! claim released instead of failing on a schema the first has just dropped.

use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::backend::error_text;
use crate::shutdown::{self, lock};

/// The marker's name under the prefix.
pub const MARKER: &str = "__claim__";
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
const IO_TIMEOUT: Duration = Duration::from_secs(15);
/// Keys deleted per UNLINK.
const UNLINK_BATCH: usize = 500;

/// One claim; its index in [`CLAIMS`] is its id.
enum Claim {
    Redis {
        url: String,
        prefix: String,
        /// This run's marker value.
        token: String,
        /// False until the prefix was found free: before that, the keys under it
        /// are not this run's and only the marker may be removed.
        owns_keys: bool,
        client_ids: Vec<i64>,
        released: bool,
    },
    Pg {
        url: String,
        schema: String,
        /// The schema's comment if this run created it.
        token: String,
        backend_pids: Vec<i32>,
        released: bool,
    },
}

static CLAIMS: Mutex<Vec<Claim>> = Mutex::new(Vec::new());
/// Held while claims are released: the main thread ending its run and the signal
/// handler may both release, and of two releasers of one claim the second must
/// find it released, not drop a schema the first has just dropped.
static RELEASING: Mutex<()> = Mutex::new(());

/// A claim of this run, to register further connections with.
#[derive(Clone, Copy, Debug)]
pub struct ClaimId(usize);

fn refuse_if_interrupted() -> Result<(), String> {
    if shutdown::interrupted() {
        Err("interrupted: no new connection to the server".into())
    } else {
        Ok(())
    }
}

/// `pid=… host=… started=… token=…`: who holds a claim.
fn who_token() -> String {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let random: u64 = rand::random();
    format!(
        "pid={} host={} started={now} token={random:016x}",
        std::process::id(),
        hostname()
    )
}

fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most buf.len() bytes into buf.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return "unknown".into();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// "pid 123 on host x, started 42 s ago" from a marker value, or the value itself.
fn describe(value: &str) -> String {
    let field = |name: &str| {
        value
            .split_whitespace()
            .find_map(|f| f.strip_prefix(name)?.strip_prefix('='))
    };
    match (field("pid"), field("host"), field("started")) {
        (Some(pid), Some(host), Some(started)) => {
            let now = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            let age = started
                .parse::<u64>()
                .map(|s| format!(", started {} s ago", now.saturating_sub(s)))
                .unwrap_or_default();
            format!("pid {pid} on host {host}{age}")
        }
        _ => format!("'{value}'"),
    }
}

/// Claims `prefix` on the Redis at `url` through the lab's connection `conn`, whose
/// `CLIENT ID` is `client_id`. Refuses if another run holds it or any key already
/// lives under it.
pub fn claim_redis(
    conn: &mut redis::Connection,
    name: &str,
    url: &str,
    prefix: &str,
    client_id: Option<i64>,
) -> Result<ClaimId, String> {
    let token = who_token();
    let marker = format!("{prefix}{MARKER}");
    let id = {
        let mut claims = lock(&CLAIMS);
        refuse_if_interrupted()?;
        claims.push(Claim::Redis {
            url: url.to_string(),
            prefix: prefix.to_string(),
            token: token.clone(),
            owns_keys: false,
            client_ids: client_id.into_iter().collect(),
            released: false,
        });
        ClaimId(claims.len() - 1)
    };
    let set: Result<redis::Value, _> = redis::cmd("SET")
        .arg(&marker)
        .arg(&token)
        .arg("NX")
        .query(conn);
    match set {
        Ok(redis::Value::Nil) => {
            let holder: Option<String> = redis::cmd("GET").arg(&marker).query(conn).ok().flatten();
            mark_released(id);
            return Err(format!(
                "{name}: the prefix '{prefix}' on {url} is claimed by another run of this lab ({}; marker key '{marker}'). Two runs must not share it: wait for that run, or use another server. If that run was killed, delete its keys (redis-cli --scan --pattern '{prefix}*', then UNLINK them, the marker last).",
                holder.as_deref().map_or_else(|| "gone since".to_string(), describe)
            ));
        }
        Ok(_) => {}
        Err(e) => {
            // The SET may have happened with its reply lost: remove the marker if
            // it is this run's.
            let _ = release(id, false, &mut || false);
            return Err(format!(
                "{name}: cannot claim the prefix '{prefix}' on {url} (SET {marker} … NX): {}",
                error_text(&e)
            ));
        }
    }
    let existing = match keys_under(conn, prefix) {
        Ok(keys) => keys,
        Err(e) => {
            let _ = release(id, false, &mut || false);
            return Err(format!("{name}: cannot list keys: {e}"));
        }
    };
    if let Some(first) = existing.first() {
        let _ = release(id, false, &mut || false);
        return Err(format!(
            "{name}: {} key(s) already exist under the lab's prefix '{prefix}' on {url} (e.g. '{first}'); the lab will not touch them. Delete them or use another server.",
            existing.len()
        ));
    }
    if let Claim::Redis { owns_keys, .. } = &mut lock(&CLAIMS)[id.0] {
        *owns_keys = true;
    }
    Ok(id)
}

/// Records one more connection of the lab to a claimed Redis; refused once the
/// run is interrupted.
pub fn add_redis_connection(id: ClaimId, client_id: Option<i64>) -> Result<(), String> {
    let mut claims = lock(&CLAIMS);
    refuse_if_interrupted()?;
    if let (Some(Claim::Redis { client_ids, .. }), Some(c)) = (claims.get_mut(id.0), client_id) {
        client_ids.push(c);
    }
    Ok(())
}

/// Claims `schema` on the PostgreSQL at `url` through the lab's client (backend
/// `backend_pid`): creates it with this run's comment, in one transaction.
pub fn claim_pg(
    client: &mut postgres::Client,
    url: &str,
    schema: &str,
    backend_pid: i32,
) -> Result<ClaimId, String> {
    let token = format!("redislab claim: {}", who_token());
    let id = {
        let mut claims = lock(&CLAIMS);
        refuse_if_interrupted()?;
        claims.push(Claim::Pg {
            url: url.to_string(),
            schema: schema.to_string(),
            token: token.clone(),
            backend_pids: vec![backend_pid],
            released: false,
        });
        ClaimId(claims.len() - 1)
    };
    let created = client.transaction().and_then(|mut tx| {
        tx.batch_execute(&format!(
            "CREATE SCHEMA {}; COMMENT ON SCHEMA {} IS {}",
            quote_ident(schema),
            quote_ident(schema),
            quote_literal(&token)
        ))?;
        tx.commit()
    });
    match created {
        Ok(()) => Ok(id),
        Err(e) => {
            mark_released(id);
            let duplicate = e.code() == Some(&postgres::error::SqlState::DUPLICATE_SCHEMA);
            if !duplicate {
                return Err(format!(
                    "pg: cannot create schema {schema}: {}",
                    crate::backend::pg_error_text(&e)
                ));
            }
            let comment: Option<String> = client
                .query_opt(
                    "SELECT obj_description(oid, 'pg_namespace') FROM pg_namespace WHERE nspname = $1",
                    &[&schema],
                )
                .ok()
                .flatten()
                .and_then(|row| row.get(0));
            let whose = match comment
                .as_deref()
                .and_then(|c| c.strip_prefix("redislab claim: "))
            {
                Some(who) => format!(
                    "it is in use by another run of this lab ({})",
                    describe(who)
                ),
                None => "it is not this run's".into(),
            };
            Err(format!(
                "pg: schema {schema} already exists on {url}; {whose}, and the lab will not touch it. Wait for that run, drop the schema, or use another database."
            ))
        }
    }
}

/// Records one more client of the lab on a claimed PostgreSQL; refused once the
/// run is interrupted.
pub fn add_pg_client(id: ClaimId, backend_pid: i32) -> Result<(), String> {
    let mut claims = lock(&CLAIMS);
    refuse_if_interrupted()?;
    if let Some(Claim::Pg { backend_pids, .. }) = claims.get_mut(id.0) {
        backend_pids.push(backend_pid);
    }
    Ok(())
}

/// Gives up a claim without undoing it (its server is the harness's and is thrown
/// away whole).
pub fn forget(id: ClaimId) {
    mark_released(id);
}

fn mark_released(id: ClaimId) {
    if let Some(Claim::Redis { released, .. } | Claim::Pg { released, .. }) =
        lock(&CLAIMS).get_mut(id.0)
    {
        *released = true;
    }
}

/// Releases every claim not released yet (the end of a run, normal or not).
/// Returns what could not be undone, one message each.
pub fn release_all() -> Vec<String> {
    release_all_with(false, &mut || false)
}

/// The interrupt's release: the lab's own connections are killed first (its
/// threads may still be running), and `settle` is called after the keys are
/// deleted and before the marker is: if it returns true (it found and killed
/// another process of the lab), the keys are looked for again.
pub fn release_all_interrupted(settle: &mut dyn FnMut() -> bool) -> Vec<String> {
    release_all_with(true, settle)
}

fn release_all_with(kill: bool, settle: &mut dyn FnMut() -> bool) -> Vec<String> {
    let count = lock(&CLAIMS).len();
    (0..count)
        .filter_map(|i| release(ClaimId(i), kill, settle).err())
        .collect()
}

/// Cuts off every connection the lab opened to a claimed server (`CLIENT KILL ID`,
/// `pg_terminate_backend`), over fresh connections: from here on no thread of the
/// lab can write there. The first step of the interrupt. Returns the problems.
pub fn cut_connections() -> Vec<String> {
    let snapshots: Vec<Snapshot> = {
        let claims = lock(&CLAIMS);
        (0..claims.len())
            .filter_map(|i| snapshot(&claims, ClaimId(i)))
            .collect()
    };
    let mut problems = Vec::new();
    for snap in snapshots {
        let cut = match &snap {
            Snapshot::Redis {
                url, client_ids, ..
            } => fresh_redis(url).map(|mut conn| kill_clients(&mut conn, client_ids)),
            Snapshot::Pg {
                url, backend_pids, ..
            } => fresh_pg(url).and_then(|mut client| terminate(&mut client, backend_pids)),
        };
        if let Err(e) = cut {
            problems.push(format!("cannot cut the lab's connections: {e}"));
        }
    }
    problems
}

/// A copy of a claim's facts, so no lock is held during network I/O.
enum Snapshot {
    Redis {
        url: String,
        prefix: String,
        token: String,
        owns_keys: bool,
        client_ids: Vec<i64>,
    },
    Pg {
        url: String,
        schema: String,
        token: String,
        backend_pids: Vec<i32>,
    },
}

fn snapshot(claims: &[Claim], id: ClaimId) -> Option<Snapshot> {
    match claims.get(id.0)? {
        Claim::Redis { released: true, .. } | Claim::Pg { released: true, .. } => None,
        Claim::Redis {
            url,
            prefix,
            token,
            owns_keys,
            client_ids,
            ..
        } => Some(Snapshot::Redis {
            url: url.clone(),
            prefix: prefix.clone(),
            token: token.clone(),
            owns_keys: *owns_keys,
            client_ids: client_ids.clone(),
        }),
        Claim::Pg {
            url,
            schema,
            token,
            backend_pids,
            ..
        } => Some(Snapshot::Pg {
            url: url.clone(),
            schema: schema.clone(),
            token: token.clone(),
            backend_pids: backend_pids.clone(),
        }),
    }
}

fn release(id: ClaimId, kill: bool, settle: &mut dyn FnMut() -> bool) -> Result<(), String> {
    let _one_releaser = lock(&RELEASING);
    let Some(snap) = snapshot(&lock(&CLAIMS), id) else {
        return Ok(());
    };
    match snap {
        Snapshot::Redis {
            url,
            prefix,
            token,
            owns_keys,
            client_ids,
        } => release_redis(
            &url,
            &prefix,
            &token,
            owns_keys,
            kill.then_some(&client_ids[..]),
            settle,
        )
        .map_err(|e| format!("redis: could not clean up the prefix '{prefix}' on {url}: {e}"))?,
        Snapshot::Pg {
            url,
            schema,
            token,
            backend_pids,
        } => release_pg(&url, &schema, &token, kill.then_some(&backend_pids[..]))
            .map_err(|e| format!("pg: could not drop schema {schema} on {url}: {e}"))?,
    }
    mark_released(id);
    Ok(())
}

/// A connection of the harness's own, with timeouts: the clean-up must not hang on
/// a server that stopped answering.
fn fresh_redis(url: &str) -> Result<redis::Connection, String> {
    let conn = redis::Client::open(url)
        .and_then(|c| c.get_connection_with_timeout(CONNECT_TIMEOUT))
        .map_err(|e| format!("cannot connect: {}", error_text(&e)))?;
    conn.set_read_timeout(Some(IO_TIMEOUT))
        .and_then(|_| conn.set_write_timeout(Some(IO_TIMEOUT)))
        .map_err(|e| error_text(&e))?;
    Ok(conn)
}

/// Every key under `prefix` but the marker, by SCAN (never KEYS: this may be
/// someone's busy server).
pub fn keys_under(conn: &mut redis::Connection, prefix: &str) -> Result<Vec<String>, String> {
    let pattern = format!("{}*", glob_escape(prefix));
    let marker = format!("{prefix}{MARKER}");
    let mut cursor = 0u64;
    let mut keys = Vec::new();
    loop {
        let (next, batch): (u64, Vec<String>) = redis::cmd("SCAN")
            .arg(cursor)
            .arg("MATCH")
            .arg(&pattern)
            .arg("COUNT")
            .arg(1000)
            .query(conn)
            .map_err(|e| error_text(&e))?;
        keys.extend(batch.into_iter().filter(|k| *k != marker));
        if next == 0 {
            keys.sort();
            keys.dedup();
            return Ok(keys);
        }
        cursor = next;
    }
}

/// Deletes `marker` if it still holds `token` (compare-and-delete in a script; a
/// GET and DEL where scripts are not allowed).
const DELETE_IF_EQUAL: &str =
    "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";

fn kill_clients(conn: &mut redis::Connection, ids: &[i64]) {
    for id in ids {
        // A connection that already closed is simply not found.
        let _: Result<redis::Value, _> = redis::cmd("CLIENT")
            .arg("KILL")
            .arg("ID")
            .arg(id)
            .query(conn);
    }
}

/// Deletes every key under `prefix` but the marker. `patient`: after an interrupt
/// a killed worker process's last commands may still sit in the server's socket
/// buffer, so a pass that finds nothing is repeated 50 ms later.
fn delete_keys(conn: &mut redis::Connection, prefix: &str, patient: bool) -> Result<(), String> {
    let mut empty_passes = 0;
    for _ in 0..50 {
        let keys = keys_under(conn, prefix)?;
        if keys.is_empty() {
            empty_passes += 1;
            if !patient || empty_passes == 2 {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(50));
            continue;
        }
        empty_passes = 0;
        for batch in keys.chunks(UNLINK_BATCH) {
            let _: i64 = redis::cmd("UNLINK")
                .arg(batch)
                .query(conn)
                .map_err(|e| error_text(&e))?;
        }
    }
    let left = keys_under(conn, prefix)?;
    match left.first() {
        None => Ok(()),
        Some(first) => Err(format!(
            "{} key(s) keep coming back (e.g. '{first}'); the marker is kept",
            left.len()
        )),
    }
}

fn release_redis(
    url: &str,
    prefix: &str,
    token: &str,
    owns_keys: bool,
    kill: Option<&[i64]>,
    settle: &mut dyn FnMut() -> bool,
) -> Result<(), String> {
    let mut conn = fresh_redis(url)?;
    if let Some(ids) = kill {
        kill_clients(&mut conn, ids);
    }
    if owns_keys {
        delete_keys(&mut conn, prefix, kill.is_some())?;
        // A process of the lab started after the last look may have written
        // since: the marker goes only once none is left.
        for _ in 0..5 {
            if !settle() {
                break;
            }
            delete_keys(&mut conn, prefix, true)?;
        }
    }
    let marker = format!("{prefix}{MARKER}");
    let scripted: Result<i64, _> = redis::cmd("EVAL")
        .arg(DELETE_IF_EQUAL)
        .arg(1)
        .arg(&marker)
        .arg(token)
        .query(&mut conn);
    if scripted.is_err() {
        let value: Option<String> = redis::cmd("GET")
            .arg(&marker)
            .query(&mut conn)
            .map_err(|e| error_text(&e))?;
        if value.as_deref() == Some(token) {
            let _: i64 = redis::cmd("DEL")
                .arg(&marker)
                .query(&mut conn)
                .map_err(|e| error_text(&e))?;
        }
    }
    Ok(())
}

/// A client of the harness's own, with a connect timeout and statement and lock
/// timeouts.
fn fresh_pg(url: &str) -> Result<postgres::Client, String> {
    let mut config: postgres::Config = url.parse().map_err(|e| format!("bad url: {e}"))?;
    config.connect_timeout(CONNECT_TIMEOUT);
    let mut client = config
        .connect(postgres::NoTls)
        .map_err(|e| format!("cannot connect: {e}"))?;
    client
        .batch_execute("SET statement_timeout = '20s'; SET lock_timeout = '15s'")
        .map_err(|e| crate::backend::pg_error_text(&e))?;
    Ok(client)
}

/// Terminates the lab's backends and waits until they are gone: a terminated
/// backend rolls back and releases its locks as it exits.
fn terminate(client: &mut postgres::Client, pids: &[i32]) -> Result<(), String> {
    let text = |e: postgres::Error| crate::backend::pg_error_text(&e);
    let pids = pids.to_vec();
    client
        .execute(
            "SELECT pg_terminate_backend(p) FROM unnest($1::int4[]) AS p WHERE p <> pg_backend_pid()",
            &[&pids],
        )
        .map_err(text)?;
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while std::time::Instant::now() < deadline {
        let alive: i64 = client
            .query_one(
                "SELECT count(*) FROM pg_stat_activity WHERE pid = ANY($1::int4[])",
                &[&pids],
            )
            .map_err(text)?
            .get(0);
        if alive == 0 {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Err("the lab's backends did not exit in 10 s".into())
}

fn release_pg(url: &str, schema: &str, token: &str, kill: Option<&[i32]>) -> Result<(), String> {
    let mut client = fresh_pg(url)?;
    let text = |e: postgres::Error| crate::backend::pg_error_text(&e);
    if let Some(pids) = kill {
        // The claim's comment below is final only once they are gone.
        terminate(&mut client, pids)?;
    }
    let comment: Option<Option<String>> = client
        .query_opt(
            "SELECT obj_description(oid, 'pg_namespace') FROM pg_namespace WHERE nspname = $1",
            &[&schema],
        )
        .map_err(text)?
        .map(|row| row.get(0));
    if comment.flatten().as_deref() == Some(token) {
        client
            .batch_execute(&format!(
                "DROP SCHEMA IF EXISTS {} CASCADE",
                quote_ident(schema)
            ))
            .map_err(text)?;
    }
    Ok(())
}

/// Escapes the characters SCAN MATCH treats specially.
pub fn glob_escape(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `"name"` with inner quotes doubled.
pub fn quote_ident(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

/// `'text'` with inner quotes doubled (standard_conforming_strings is on by default
/// and for every server this project supports).
fn quote_literal(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_marker_value_is_described_by_pid_host_and_age() {
        let d = describe("pid=12 host=box started=0 token=ab");
        assert!(d.starts_with("pid 12 on host box, started "), "{d}");
        assert_eq!(describe("garbage"), "'garbage'");
    }

    #[test]
    fn who_token_names_this_process() {
        let t = who_token();
        assert!(
            t.starts_with(&format!("pid={} host=", std::process::id())),
            "{t}"
        );
        assert_ne!(t, who_token(), "the random token differs between claims");
    }

    #[test]
    fn quoting_and_glob_escaping() {
        assert_eq!(quote_ident("a\"b"), "\"a\"\"b\"");
        assert_eq!(quote_literal("it's"), "'it''s'");
        assert_eq!(glob_escape("redislab:a*[b]?"), "redislab:a\\*\\[b\\]\\?");
    }
}
