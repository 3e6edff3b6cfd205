//! Keyspace commands on whole databases and on a key's existence and lifetime:
//! DBSIZE, FLUSHDB/FLUSHALL, DEL/UNLINK, EXISTS, TYPE, the EXPIRE family,
//! TTL/PTTL, EXPIRETIME/PEXPIRETIME and PERSIST (db.c, expire.c).
//!
//! The lookups are the ones Redis makes: EXISTS, TYPE and the TTL readers look
//! keys up without touching their LRU/LFU field (`LOOKUP_NOTOUCH`), and count
//! as keyspace hits or misses; DEL deletes an expired key as expired (it is
//! not counted); EXPIRE and PERSIST look the key up for writing. FLUSHDB and
//! FLUSHALL free memory at once whether SYNC or ASYNC is asked (the core has no
//! lazy-free thread), and invalidate the WATCHes of the keys that existed.

use super::{flags::*, Args, CmdResult, CommandSpec, Server};
use crate::keyspace::now_ms;
use crate::reply::{errors, ErrorText, Reply};
use crate::server::notify;

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec::new("dbsize", 1, dbsize)
        .flags(READONLY | FAST)
        .doc(
            "1.0.0",
            "Counts the keys of the selected database, expired ones not yet reclaimed included.",
            "",
        ),
    CommandSpec::new("flushall", -1, flush)
        .flags(WRITE)
        .acl(&["@keyspace", "@dangerous"])
        .doc("1.0.0", "Deletes every key of every database.", "[ASYNC | SYNC]"),
    CommandSpec::new("flushdb", -1, flush)
        .flags(WRITE)
        .acl(&["@keyspace", "@dangerous"])
        .doc(
            "1.0.0",
            "Deletes every key of the selected database.",
            "[ASYNC | SYNC]",
        ),
    CommandSpec::new("del", -2, del_command)
        .flags(WRITE)
        .keys(1, -1, 1)
        .doc(
            "1.0.0",
            "Deletes the given keys and counts those that existed.",
            "key [key ...]",
        ),
    CommandSpec::new("unlink", -2, del_command)
        .flags(WRITE | FAST)
        .keys(1, -1, 1)
        .doc(
            "4.0.0",
            "Deletes the given keys, leaving the freeing of big values to the background in Redis.",
            "key [key ...]",
        ),
    CommandSpec::new("exists", -2, exists)
        .flags(READONLY | FAST)
        .keys(1, -1, 1)
        .doc(
            "1.0.0",
            "Counts how many of the given keys exist, repeated names counted each time.",
            "key [key ...]",
        ),
    CommandSpec::new("type", 2, type_of)
        .flags(READONLY | FAST)
        .keys(1, 1, 1)
        .doc(
            "1.0.0",
            "Names the type of the value at a key, or none.",
            "key",
        ),
    CommandSpec::new("expire", -3, expire)
        .flags(WRITE | FAST)
        .keys(1, 1, 1)
        .doc(
            "1.0.0",
            "Gives a key a time to live in seconds, optionally only under a condition.",
            "key seconds [NX | XX | GT | LT]",
        ),
    CommandSpec::new("pexpire", -3, pexpire)
        .flags(WRITE | FAST)
        .keys(1, 1, 1)
        .doc(
            "2.6.0",
            "Gives a key a time to live in milliseconds, optionally only under a condition.",
            "key milliseconds [NX | XX | GT | LT]",
        ),
    CommandSpec::new("expireat", -3, expireat)
        .flags(WRITE | FAST)
        .keys(1, 1, 1)
        .doc(
            "1.2.0",
            "Makes a key expire at a Unix time in seconds.",
            "key unix-time-seconds [NX | XX | GT | LT]",
        ),
    CommandSpec::new("pexpireat", -3, pexpireat)
        .flags(WRITE | FAST)
        .keys(1, 1, 1)
        .doc(
            "2.6.0",
            "Makes a key expire at a Unix time in milliseconds.",
            "key unix-time-milliseconds [NX | XX | GT | LT]",
        ),
    CommandSpec::new("ttl", 2, ttl)
        .flags(READONLY | FAST)
        .keys(1, 1, 1)
        .doc(
            "1.0.0",
            "Seconds a key has left to live (-1 without expiry, -2 without key).",
            "key",
        ),
    CommandSpec::new("pttl", 2, pttl)
        .flags(READONLY | FAST)
        .keys(1, 1, 1)
        .doc(
            "2.6.0",
            "Milliseconds a key has left to live (-1 without expiry, -2 without key).",
            "key",
        ),
    CommandSpec::new("expiretime", 2, expiretime)
        .flags(READONLY | FAST)
        .keys(1, 1, 1)
        .doc(
            "7.0.0",
            "The Unix time in seconds at which a key expires (-1 without expiry, -2 without key).",
            "key",
        ),
    CommandSpec::new("pexpiretime", 2, pexpiretime)
        .flags(READONLY | FAST)
        .keys(1, 1, 1)
        .doc(
            "7.0.0",
            "The Unix time in milliseconds at which a key expires (-1 without expiry, -2 without key).",
            "key",
        ),
    CommandSpec::new("persist", 2, persist)
        .flags(WRITE | FAST)
        .keys(1, 1, 1)
        .doc(
            "2.2.0",
            "Takes the time to live off a key, so it stays until deleted.",
            "key",
        ),
];

fn dbsize(s: &mut Server, _: &Args) -> CmdResult {
    Ok(Reply::Integer(s.keyspace.len() as i64))
}

/// FLUSHALL empties every database, FLUSHDB the selected one
/// (`getFlushCommandFlags`: one optional SYNC or ASYNC, anything else a syntax
/// error).
fn flush(s: &mut Server, a: &Args) -> CmdResult {
    if a.len() > 2 || (a.len() == 2 && !a.is(1, "sync") && !a.is(1, "async")) {
        return Err(Reply::error(errors::SYNTAX));
    }
    if a.is(0, "flushall") {
        for db in 0..crate::server::DATABASES {
            s.db_mut(db).clear();
        }
    } else {
        s.keyspace.clear();
    }
    Ok(Reply::ok())
}

fn del_command(s: &mut Server, a: &Args) -> CmdResult {
    Ok(del(s, a))
}

/// DEL's reply for `argv[1..]` (DELEX without a condition answers the same):
/// the number of live keys deleted; an expired key is deleted as expired and not
/// counted (`delGenericCommand`).
pub fn del(s: &mut Server, a: &Args) -> Reply {
    let mut removed = 0;
    for i in 1..a.len() {
        if s.keyspace.remove(a.bytes(i)) {
            s.notify_here(notify::GENERIC, "del", a.bytes(i));
            removed += 1;
        }
    }
    Reply::Integer(removed)
}

/// Counts every argument that names a live key, duplicates included (as Redis does).
fn exists(s: &mut Server, a: &Args) -> CmdResult {
    let found = (1..a.len())
        .filter(|&i| s.keyspace.get_untouched(a.bytes(i)).is_some())
        .count();
    Ok(Reply::Integer(found as i64))
}

fn type_of(s: &mut Server, a: &Args) -> CmdResult {
    let name = s
        .keyspace
        .get_untouched(a.bytes(1))
        .map_or("none", |v| v.type_name());
    Ok(Reply::Status(name.into()))
}

fn expire(s: &mut Server, a: &Args) -> CmdResult {
    expire_generic(s, a, 1000, true, "expire")
}

fn pexpire(s: &mut Server, a: &Args) -> CmdResult {
    expire_generic(s, a, 1, true, "pexpire")
}

fn expireat(s: &mut Server, a: &Args) -> CmdResult {
    expire_generic(s, a, 1000, false, "expireat")
}

fn pexpireat(s: &mut Server, a: &Args) -> CmdResult {
    expire_generic(s, a, 1, false, "pexpireat")
}

/// EXPIRE/PEXPIRE/EXPIREAT/PEXPIREAT with NX/XX/GT/LT (`expireGenericCommand`):
/// options first, then the number, then the key. A deadline in the past deletes
/// the key, as in Redis. For GT/LT a key without a TTL counts as an infinite TTL.
///
/// The clock is read once (Redis's `commandTimeSnapshot`): a relative TTL is added
/// to the same instant the "already passed" test compares with, so `PEXPIRE k 1`
/// never deletes the key however long the command took to get there.
fn expire_generic(s: &mut Server, a: &Args, unit_ms: i64, relative: bool, name: &str) -> CmdResult {
    let now = now_ms();
    let base_ms = if relative { now } else { 0 };
    let (mut nx, mut xx, mut gt, mut lt) = (false, false, false, false);
    for i in 3..a.len() {
        match () {
            _ if a.is(i, "nx") => nx = true,
            _ if a.is(i, "xx") => xx = true,
            _ if a.is(i, "gt") => gt = true,
            _ if a.is(i, "lt") => lt = true,
            _ => {
                // `%s` of a C string: up to the first NUL, line breaks as spaces.
                let text = ErrorText::naming("ERR Unsupported option ", a.bytes(i), "");
                return Err(Reply::Error(text));
            }
        }
    }
    if nx && (xx || gt || lt) {
        return Err(Reply::error(
            "ERR NX and XX, GT or LT options at the same time are not compatible",
        ));
    }
    if gt && lt {
        return Err(Reply::error(
            "ERR GT and LT options at the same time are not compatible",
        ));
    }
    let amount = a.int(2)?;
    let Some(at) = amount
        .checked_mul(unit_ms)
        .and_then(|ms| ms.checked_add(base_ms))
    else {
        return Err(Reply::error(format!(
            "ERR invalid expire time in '{name}' command"
        )));
    };
    let key = a.bytes(1);
    if !s.keyspace.lookup_write(key) {
        return Ok(Reply::Integer(0));
    }
    let current = s.keyspace.expiry(key).flatten();
    let refused = match current {
        Some(cur) => nx || (gt && at <= cur) || (lt && at >= cur),
        None => xx || gt,
    };
    if refused {
        return Ok(Reply::Integer(0));
    }
    if at <= now {
        s.keyspace.remove(key);
        s.notify_here(notify::GENERIC, "del", key);
    } else {
        s.keyspace.set_expiry(key, Some(at));
        s.notify_here(notify::GENERIC, "expire", key);
    }
    Ok(Reply::Integer(1))
}

fn ttl(s: &mut Server, a: &Args) -> CmdResult {
    ttl_generic(s, a, false, false)
}

fn pttl(s: &mut Server, a: &Args) -> CmdResult {
    ttl_generic(s, a, true, false)
}

fn expiretime(s: &mut Server, a: &Args) -> CmdResult {
    ttl_generic(s, a, false, true)
}

fn pexpiretime(s: &mut Server, a: &Args) -> CmdResult {
    ttl_generic(s, a, true, true)
}

/// `ttlGenericCommand`: -2 for a missing key, -1 for no expiry; otherwise the
/// time left (or the deadline itself, `absolute`), never below 0, in seconds
/// rounded to the nearest one or in milliseconds.
fn ttl_generic(s: &mut Server, a: &Args, millis: bool, absolute: bool) -> CmdResult {
    Ok(Reply::Integer(match s.keyspace.expiry(a.bytes(1)) {
        None => -2,
        Some(None) => -1,
        Some(Some(at)) => {
            let left = if absolute {
                at
            } else {
                at.saturating_sub(now_ms())
            }
            .max(0);
            if millis {
                left
            } else {
                // Rounded in 128 bits: a deadline of PXAT 9223372036854775807
                // is allowed, and `left + 500` would wrap to a negative TTL.
                ((i128::from(left) + 500) / 1000) as i64
            }
        }
    }))
}

fn persist(s: &mut Server, a: &Args) -> CmdResult {
    let key = a.bytes(1);
    if !s.keyspace.lookup_write(key) {
        return Ok(Reply::Integer(0));
    }
    match s.keyspace.expiry(key) {
        Some(Some(_)) => {
            s.keyspace.set_expiry(key, None);
            s.notify_here(notify::GENERIC, "persist", key);
            Ok(Reply::Integer(1))
        }
        _ => Ok(Reply::Integer(0)),
    }
}

#[cfg(test)]
mod tests {
    use crate::server::ConnectInfo;
    use crate::{Reply, Server};

    fn argv(words: &[&str]) -> Vec<Vec<u8>> {
        words.iter().map(|w| w.as_bytes().to_vec()).collect()
    }

    #[test]
    fn expiretime_reports_the_deadline() {
        let mut s = Server::new();
        s.cmd(&["SET", "k", "v"]);
        assert_eq!(s.cmd(&["EXPIRETIME", "k"]), Reply::Integer(-1));
        assert_eq!(s.cmd(&["PEXPIRETIME", "nokey"]), Reply::Integer(-2));
        s.cmd(&["PEXPIREAT", "k", "4102444800123"]);
        assert_eq!(s.cmd(&["PEXPIRETIME", "k"]), Reply::Integer(4102444800123));
        assert_eq!(s.cmd(&["EXPIRETIME", "k"]), Reply::Integer(4102444800));
        assert_eq!(s.cmd(&["PERSIST", "k"]), Reply::Integer(1));
        assert_eq!(s.cmd(&["PERSIST", "k"]), Reply::Integer(0));
        assert_eq!(s.cmd(&["EXPIRETIME", "k"]), Reply::Integer(-1));
    }

    #[test]
    fn the_furthest_deadline_rounds_to_seconds_without_wrapping() {
        let mut s = Server::new();
        s.cmd(&["SET", "k", "v", "PXAT", "9223372036854775807"]);
        assert_eq!(s.cmd(&["PEXPIRETIME", "k"]), Reply::Integer(i64::MAX));
        // Redis 8.6.3 answers 9223372036854776 (it wrapped to
        // -9223372036854775 here, and a debug build panicked).
        assert_eq!(
            s.cmd(&["EXPIRETIME", "k"]),
            Reply::Integer(9_223_372_036_854_776)
        );
        let Reply::Integer(ttl) = s.cmd(&["TTL", "k"]) else {
            panic!("TTL answers an integer")
        };
        // The deadline less now, in seconds (about 9.2233702e15).
        assert!(
            (9_223_370_000_000_000..9_223_372_036_854_776).contains(&ttl),
            "{ttl}"
        );
    }

    #[test]
    fn flush_checks_its_option_and_spares_other_databases() {
        let mut s = Server::new();
        s.cmd(&["SET", "a", "1"]);
        s.cmd(&["SELECT", "1"]);
        s.cmd(&["SET", "b", "1"]);
        assert_eq!(
            s.cmd(&["FLUSHDB", "LATER"]),
            Reply::error("ERR syntax error")
        );
        assert_eq!(
            s.cmd(&["FLUSHDB", "SYNC", "ASYNC"]),
            Reply::error("ERR syntax error")
        );
        assert_eq!(s.cmd(&["FLUSHDB", "async"]), Reply::ok());
        assert_eq!(s.cmd(&["DBSIZE"]), Reply::Integer(0));
        s.cmd(&["SELECT", "0"]);
        assert_eq!(s.cmd(&["DBSIZE"]), Reply::Integer(1));
        assert_eq!(s.cmd(&["FLUSHALL", "SYNC"]), Reply::ok());
        assert_eq!(s.cmd(&["DBSIZE"]), Reply::Integer(0));
    }

    #[test]
    fn a_flush_only_invalidates_watches_of_keys_that_existed() {
        let mut s = Server::new();
        let a = s.connect(ConnectInfo::in_process());
        let b = s.connect(ConnectInfo::in_process());
        // Watching a missing key: FLUSHALL changes nothing for it.
        s.call(a, &argv(&["WATCH", "missing"]));
        s.call(b, &argv(&["FLUSHALL"]));
        s.call(a, &argv(&["MULTI"]));
        s.call(a, &argv(&["PING"]));
        assert_eq!(
            s.call(a, &argv(&["EXEC"])),
            Reply::Array(vec![Reply::Status("PONG".into())])
        );
        // Watching a key that exists: FLUSHDB aborts the transaction.
        s.call(b, &argv(&["SET", "k", "v"]));
        s.call(a, &argv(&["WATCH", "k"]));
        s.call(b, &argv(&["FLUSHDB"]));
        s.call(a, &argv(&["MULTI"]));
        s.call(a, &argv(&["PING"]));
        assert_eq!(s.call(a, &argv(&["EXEC"])), Reply::NilArray);
    }

    #[test]
    fn reads_count_hits_and_misses_writes_do_not() {
        let mut s = Server::new();
        s.cmd(&["SET", "k", "v"]);
        s.cmd(&["EXISTS", "k", "k", "nope"]);
        s.cmd(&["TYPE", "k"]);
        s.cmd(&["TTL", "nope"]);
        s.cmd(&["DEL", "k", "nope"]);
        assert_eq!((s.stats.keyspace_hits, s.stats.keyspace_misses), (3, 2));
    }
}
