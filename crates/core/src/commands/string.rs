//! String commands (src/t_string.c and DELEX from src/db.c), with Redis 8.6.3's
//! replies and errors.
//!
//! TTL rules, as in Redis: a command that replaces the value (SET, GETSET, MSET,
//! SETEX's value part) drops the TTL unless told to keep it (KEEPTTL, or an
//! expiry given with it); commands that change the value in place (APPEND,
//! SETRANGE, and the counters) keep it. SET's IFEQ/IFNE/IFDEQ/IFDNE (8.4) and
//! DELEX, DIGEST and MSETEX are all in 8.6.3. LCS is in [`super::lcs`].
//!
//! Where the core answers differently: SET with GET and a malformed IFDEQ/IFDNE
//! digest makes Redis send two replies (the old value, then the error); the core
//! sends the error only.

use xxhash_rust::xxh3::xxh3_64;

use super::string_args::{self as ext, Kind};
use super::string_value::{check_length, lookup, lookup_source, read_bytes, store, unshared};
use super::{flags::*, Args, CmdResult, CommandSpec, Server};
use crate::keyspace::{now_ms, Value};
use crate::reply::{errors, Reply};
use crate::sds::Sds;
use crate::server::notify;
use crate::strings::ArgObject;

/// The expiry options SET, GETEX and MSETEX share, in the docs' syntax (each
/// command closes the choice with its own last option).
macro_rules! expiry {
    () => {
        "[EX seconds | PX milliseconds | EXAT unix-time-seconds | PXAT unix-time-milliseconds"
    };
}

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec::new("get", 2, get)
        .flags(READONLY | FAST)
        .keys(1, 1, 1)
        .doc("1.0.0", "Reads the string stored at a key.", "key"),
    CommandSpec::new("set", -3, set)
        .flags(WRITE | DENYOOM)
        .keys(1, 1, 1)
        .doc(
            "1.0.0",
            "Stores a string at a key, with conditions and an expiry if asked.",
            concat!(
                "key value [NX | XX | IFEQ ifeq-value | IFNE ifne-value | IFDEQ ifdeq-digest | \
                 IFDNE ifdne-digest] [GET] ",
                expiry!(),
                " | KEEPTTL]"
            ),
        ),
    CommandSpec::new("setnx", 3, setnx)
        .flags(WRITE | DENYOOM | FAST)
        .keys(1, 1, 1)
        .doc(
            "1.0.0",
            "Stores a string only if the key is missing.",
            "key value",
        ),
    CommandSpec::new("setex", 4, setex)
        .flags(WRITE | DENYOOM)
        .keys(1, 1, 1)
        .doc(
            "2.0.0",
            "Stores a string with a time to live in seconds.",
            "key seconds value",
        ),
    CommandSpec::new("psetex", 4, psetex)
        .flags(WRITE | DENYOOM)
        .keys(1, 1, 1)
        .doc(
            "2.6.0",
            "Stores a string with a time to live in milliseconds.",
            "key milliseconds value",
        ),
    CommandSpec::new("getset", 3, getset)
        .flags(WRITE | DENYOOM | FAST)
        .keys(1, 1, 1)
        .doc(
            "1.0.0",
            "Stores a string and answers the one it replaced.",
            "key value",
        ),
    CommandSpec::new("getex", -2, getex)
        .flags(WRITE | FAST)
        .keys(1, 1, 1)
        .doc(
            "6.2.0",
            "Reads a string and sets or clears its time to live.",
            concat!("key ", expiry!(), " | PERSIST]"),
        ),
    CommandSpec::new("getdel", 2, getdel)
        .flags(WRITE | FAST)
        .keys(1, 1, 1)
        .doc("6.2.0", "Reads a string and deletes its key.", "key"),
    CommandSpec::new("append", 3, append)
        .flags(WRITE | DENYOOM | FAST)
        .keys(1, 1, 1)
        .doc(
            "2.0.0",
            "Adds bytes at the end of a string, creating it if needed.",
            "key value",
        ),
    CommandSpec::new("setrange", 4, setrange)
        .flags(WRITE | DENYOOM)
        .keys(1, 1, 1)
        .doc(
            "2.2.0",
            "Overwrites part of a string at a byte offset, zero-padding as needed.",
            "key offset value",
        ),
    CommandSpec::new("getrange", 4, getrange)
        .flags(READONLY)
        .keys(1, 1, 1)
        .doc(
            "2.4.0",
            "Reads the bytes of a string between two offsets.",
            "key start end",
        ),
    CommandSpec::new("substr", 4, getrange)
        .flags(READONLY)
        .keys(1, 1, 1)
        .doc(
            "1.0.0",
            "Reads the bytes of a string between two offsets (old name of GETRANGE).",
            "key start end",
        ),
    CommandSpec::new("strlen", 2, strlen)
        .flags(READONLY | FAST)
        .keys(1, 1, 1)
        .doc("2.2.0", "Answers the length of a string.", "key"),
    CommandSpec::new("mget", -2, mget)
        .flags(READONLY | FAST)
        .keys(1, -1, 1)
        .doc(
            "1.0.0",
            "Reads the strings of several keys at once.",
            "key [key ...]",
        ),
    CommandSpec::new("mset", -3, mset)
        .flags(WRITE | DENYOOM)
        .keys(1, -1, 2)
        .doc(
            "1.0.1",
            "Stores several strings at once.",
            "key value [key value ...]",
        ),
    CommandSpec::new("msetnx", -3, msetnx)
        .flags(WRITE | DENYOOM)
        .keys(1, -1, 2)
        .doc(
            "1.0.1",
            "Stores several strings only if none of the keys exists.",
            "key value [key value ...]",
        ),
    CommandSpec::new("msetex", -4, msetex)
        .flags(WRITE | DENYOOM | MOVABLE_KEYS)
        .doc(
            "8.4.0",
            "Stores several strings with one condition and one expiry for all.",
            concat!(
                "numkeys key value [key value ...] [NX | XX] ",
                expiry!(),
                " | KEEPTTL]"
            ),
        ),
    CommandSpec::new("delex", -2, delex)
        .flags(WRITE | FAST)
        .keys(1, 1, 1)
        .doc(
            "8.4.0",
            "Deletes a key, or a string only if its value or digest matches.",
            "key [IFEQ ifeq-value | IFNE ifne-value | IFDEQ ifdeq-digest | IFDNE ifdne-digest]",
        ),
    CommandSpec::new("digest", 2, digest)
        .flags(READONLY | FAST)
        .keys(1, 1, 1)
        .doc(
            "8.4.0",
            "Answers the XXH3 hash of a string as 16 hex digits.",
            "key",
        ),
    CommandSpec::new("lcs", -3, super::lcs::lcs)
        .flags(READONLY)
        .keys(1, 2, 1)
        .doc(
            "7.0.0",
            "Finds the longest common subsequence of two strings.",
            "key1 key2 [LEN] [IDX] [MINMATCHLEN min-match-len] [WITHMATCHLEN]",
        ),
];

/// `DIGEST_HEX_LENGTH`.
const DIGEST_HEX_LENGTH: usize = 16;

/// XXH3-64 of the value, as 16 lower-case hex digits (`stringDigest`).
pub fn digest_hex(bytes: &[u8]) -> String {
    format!("{:016x}", xxh3_64(bytes))
}

/// `getGenericCommand`: the value as a bulk string, nil if missing.
fn get_reply(s: &mut Server, key: &[u8]) -> CmdResult {
    Ok(lookup_source(s, key)?.map_or(Reply::Nil, |v| v.reply()))
}

fn get(s: &mut Server, a: &Args) -> CmdResult {
    get_reply(s, a.bytes(1))
}

fn set(s: &mut Server, a: &Args) -> CmdResult {
    let opts = ext::parse(a, 3, Kind::Set)?;
    set_generic(
        s,
        a.bytes(1),
        a.bytes(2),
        &opts,
        "set",
        (Reply::ok(), Reply::Nil),
    )
}

/// `setGenericCommand`; `replies` are what it answers when it stores and when
/// a condition stops it (without GET).
fn set_generic(
    s: &mut Server,
    key: &[u8],
    value: &[u8],
    opts: &ext::ExtArgs<'_>,
    name: &str,
    (ok, abort): (Reply, Reply),
) -> CmdResult {
    let deadline = ext::deadline_ms(opts, name)?;
    let old = if opts.has(ext::GET) {
        Some(get_reply(s, key)?)
    } else {
        None
    };
    // Only a condition needs to know beforehand; a plain SET looks the key up
    // once, in `store` (which expires a key past its deadline just the same).
    let conditions = ext::NX | ext::XX | ext::IFEQ | ext::IFNE | ext::IFDEQ | ext::IFDNE;
    let found = opts.has(conditions) && s.keyspace.contains(key);
    if (opts.has(ext::NX) && found) || (opts.has(ext::XX | ext::IFEQ | ext::IFDEQ) && !found) {
        s.set_dirty(0);
        return Ok(old.unwrap_or(abort));
    }
    if found && opts.has(ext::IFEQ | ext::IFNE | ext::IFDEQ | ext::IFDNE) {
        let current = read_bytes(s, key)?.unwrap_or_default();
        let wanted = opts.match_value.unwrap_or_default();
        let holds = if opts.has(ext::IFEQ | ext::IFNE) {
            (current == wanted) == opts.has(ext::IFEQ)
        } else {
            check_digest_length(wanted)?;
            digest_matches(&current, wanted) == opts.has(ext::IFDEQ)
        };
        if !holds {
            s.set_dirty(0);
            return Ok(old.unwrap_or(abort));
        }
    }
    let keep_ttl = opts.has(ext::KEEPTTL) || deadline.is_some();
    let replaced = s.overwrite_probe(key);
    store(s, key, ArgObject::from_argument(value), keep_ttl);
    s.notify_overwritten(key, replaced);
    if let Some(at) = deadline {
        s.keyspace.set_expiry(key, Some(at));
    }
    s.notify_here(notify::STRING, "set", key);
    if deadline.is_some() {
        s.notify_here(notify::GENERIC, "expire", key);
    }
    Ok(old.unwrap_or(ok))
}

/// `validateHexDigest`: only the length is checked.
fn check_digest_length(digest: &[u8]) -> Result<(), Reply> {
    if digest.len() == DIGEST_HEX_LENGTH {
        Ok(())
    } else {
        Err(Reply::error(format!(
            "ERR must be exactly {DIGEST_HEX_LENGTH} hexadecimal characters"
        )))
    }
}

/// `strcasecmp(stringDigest(value), match)`: a C comparison, so it stops at NUL.
fn digest_matches(value: &[u8], wanted: &[u8]) -> bool {
    let wanted = wanted.split(|&b| b == 0).next().unwrap_or_default();
    digest_hex(value).as_bytes().eq_ignore_ascii_case(wanted)
}

fn setnx(s: &mut Server, a: &Args) -> CmdResult {
    let opts = ext::ExtArgs {
        flags: ext::NX,
        ..Default::default()
    };
    let replies = (Reply::Integer(1), Reply::Integer(0));
    set_generic(s, a.bytes(1), a.bytes(2), &opts, "setnx", replies)
}

fn setex(s: &mut Server, a: &Args) -> CmdResult {
    timed_set(s, a, ext::EX, "setex")
}

fn psetex(s: &mut Server, a: &Args) -> CmdResult {
    timed_set(s, a, ext::PX, "psetex")
}

fn timed_set(s: &mut Server, a: &Args, flag: u32, name: &str) -> CmdResult {
    let opts = ext::ExtArgs {
        flags: flag,
        expire: Some(a.bytes(2)),
        match_value: None,
    };
    set_generic(
        s,
        a.bytes(1),
        a.bytes(3),
        &opts,
        name,
        (Reply::ok(), Reply::Nil),
    )
}

fn getset(s: &mut Server, a: &Args) -> CmdResult {
    let old = get_reply(s, a.bytes(1))?;
    let replaced = s.overwrite_probe(a.bytes(1));
    store(s, a.bytes(1), ArgObject::from_argument(a.bytes(2)), false);
    s.notify_overwritten(a.bytes(1), replaced);
    s.notify_here(notify::STRING, "set", a.bytes(1));
    Ok(old)
}

fn getex(s: &mut Server, a: &Args) -> CmdResult {
    let opts = ext::parse(a, 2, Kind::Get)?;
    let key = a.bytes(1);
    let Some(value) = lookup_source(s, key)? else {
        s.set_dirty(0);
        return Ok(Reply::Nil);
    };
    let reply = value.reply();
    let deadline = ext::deadline_ms(&opts, "getex")?;
    let changed = if opts.has(ext::EXAT | ext::PXAT) && deadline.is_some_and(|at| at <= now_ms()) {
        let deleted = s.keyspace.remove(key);
        s.notify_here(notify::GENERIC, "del", key);
        deleted
    } else if let Some(at) = deadline {
        let set = s.keyspace.set_expiry(key, Some(at));
        s.notify_here(notify::GENERIC, "expire", key);
        set
    } else if opts.has(ext::PERSIST) {
        let had_ttl = matches!(s.keyspace.expiry(key), Some(Some(_)));
        s.keyspace.set_expiry(key, None);
        if had_ttl {
            s.notify_here(notify::GENERIC, "persist", key);
        }
        had_ttl
    } else {
        false
    };
    s.set_dirty(u64::from(changed));
    Ok(reply)
}

fn getdel(s: &mut Server, a: &Args) -> CmdResult {
    let reply = get_reply(s, a.bytes(1))?;
    let deleted = s.keyspace.remove(a.bytes(1));
    if deleted {
        s.notify_here(notify::GENERIC, "del", a.bytes(1));
    }
    s.set_dirty(u64::from(deleted));
    Ok(reply)
}

fn append(s: &mut Server, a: &Args) -> CmdResult {
    let key = a.bytes(1);
    let tail = a.bytes(2);
    let Some(current) = lookup(s, key)? else {
        store(s, key, ArgObject::from_argument(tail), false);
        s.notify_here(notify::STRING, "append", key);
        return Ok(Reply::Integer(tail.len() as i64));
    };
    let current_len = current.len() as u64;
    check_length(s, current_len, tail.len() as u64)?;
    let sds = unshared(s, key)?;
    sds.append(tail);
    let len = sds.len() as i64;
    s.notify_here(notify::STRING, "append", key);
    Ok(Reply::Integer(len))
}

fn setrange(s: &mut Server, a: &Args) -> CmdResult {
    let offset = a.int(2)?;
    if offset < 0 {
        return Err(Reply::error("ERR offset is out of range"));
    }
    let offset = offset as u64;
    let key = a.bytes(1);
    let data = a.bytes(3);
    let old_len = lookup(s, key)?.map(|v| v.len());
    if data.is_empty() {
        s.set_dirty(0);
        return Ok(Reply::Integer(old_len.unwrap_or(0) as i64));
    }
    check_length(s, offset, data.len() as u64)?;
    // Bounded by proto-max-bulk-len above, so the sum fits.
    let offset = offset as usize;
    if old_len.is_none() {
        let mut bytes = vec![0u8; offset + data.len()];
        bytes[offset..].copy_from_slice(data);
        let len = bytes.len();
        store(s, key, ArgObject::Raw(Sds::from_vec(bytes)), false);
        s.notify_here(notify::STRING, "setrange", key);
        return Ok(Reply::Integer(len as i64));
    }
    let sds = unshared(s, key)?;
    sds.write_at(offset, data);
    let len = sds.len() as i64;
    s.notify_here(notify::STRING, "setrange", key);
    Ok(Reply::Integer(len))
}

/// Redis's clamping of `start..=end` (negative: from the end) over `len`
/// units; `None` when nothing is left. Shared with BITCOUNT and BITPOS.
pub(crate) fn clamp_range(mut start: i64, mut end: i64, len: i64) -> Option<(i64, i64)> {
    if start < 0 {
        start = start.saturating_add(len);
    }
    if end < 0 {
        end = end.saturating_add(len);
    }
    start = start.max(0);
    end = end.max(0);
    if end >= len {
        end = len - 1;
    }
    (start <= end && len > 0).then_some((start, end))
}

fn getrange(s: &mut Server, a: &Args) -> CmdResult {
    let (start, end) = (a.int(2)?, a.int(3)?);
    let Some(value) = lookup(s, a.bytes(1))? else {
        return Ok(Reply::bulk(""));
    };
    let value = value.bytes();
    if start < 0 && end < 0 && start > end {
        return Ok(Reply::bulk(""));
    }
    Ok(match clamp_range(start, end, value.len() as i64) {
        Some((from, to)) => Reply::bulk(&value[from as usize..=to as usize]),
        None => Reply::bulk(""),
    })
}

fn strlen(s: &mut Server, a: &Args) -> CmdResult {
    let len = lookup(s, a.bytes(1))?.map_or(0, |v| v.len());
    Ok(Reply::Integer(len as i64))
}

fn mget(s: &mut Server, a: &Args) -> CmdResult {
    // Another type reads as nil here, not as an error.
    let items = (1..a.len())
        .map(|i| match lookup(s, a.bytes(i)) {
            Ok(Some(v)) => v.reply(),
            _ => Reply::Nil,
        })
        .collect();
    Ok(Reply::Array(items))
}

fn mset(s: &mut Server, a: &Args) -> CmdResult {
    mset_generic(s, a, false, "mset")
}

fn msetnx(s: &mut Server, a: &Args) -> CmdResult {
    mset_generic(s, a, true, "msetnx")
}

fn mset_generic(s: &mut Server, a: &Args, nx: bool, name: &str) -> CmdResult {
    if a.len().is_multiple_of(2) {
        return Err(Reply::error(errors::arity(name)));
    }
    let keys = || (1..a.len()).step_by(2);
    if nx && keys().any(|i| s.keyspace.contains(a.bytes(i))) {
        s.set_dirty(0);
        return Ok(Reply::Integer(0));
    }
    for i in keys() {
        let replaced = s.overwrite_probe(a.bytes(i));
        store(
            s,
            a.bytes(i),
            ArgObject::from_argument(a.bytes(i + 1)),
            false,
        );
        s.notify_overwritten(a.bytes(i), replaced);
        s.notify_here(notify::STRING, "set", a.bytes(i));
    }
    s.set_dirty(keys().count() as u64);
    Ok(if nx { Reply::Integer(1) } else { Reply::ok() })
}

/// MSETEX numkeys key value [key value ...] [NX | XX] [EX | PX | EXAT | PXAT |
/// KEEPTTL].
fn msetex(s: &mut Server, a: &Args) -> CmdResult {
    let count = match a.int(1) {
        Ok(n) if (1..=i64::from(i32::MAX)).contains(&n) => n as usize,
        _ => return Err(Reply::error("ERR invalid numkeys value")),
    };
    if count * 2 + 2 > a.len() {
        return Err(Reply::error("ERR wrong number of key-value pairs"));
    }
    let opts = ext::parse(a, count * 2 + 2, Kind::MsetEx)?;
    let deadline = ext::deadline_ms(&opts, "msetex")?;
    let keys = || (0..count).map(|j| 2 + 2 * j);
    if opts.has(ext::NX | ext::XX) {
        for k in keys() {
            let found = s.keyspace.contains(a.bytes(k));
            if (opts.has(ext::NX) && found) || (opts.has(ext::XX) && !found) {
                s.set_dirty(0);
                return Ok(Reply::Integer(0));
            }
        }
    }
    let keep_ttl = opts.has(ext::KEEPTTL);
    for k in keys() {
        let key = a.bytes(k);
        let replaced = s.overwrite_probe(key);
        store(s, key, ArgObject::from_argument(a.bytes(k + 1)), keep_ttl);
        s.notify_overwritten(key, replaced);
        if let Some(at) = deadline.filter(|_| !keep_ttl) {
            s.keyspace.set_expiry(key, Some(at));
            s.notify_here(notify::GENERIC, "expire", key);
        }
        s.notify_here(notify::STRING, "set", key);
    }
    s.set_dirty(count as u64);
    Ok(Reply::Integer(1))
}

/// DELEX key [IFEQ value | IFNE value | IFDEQ digest | IFDNE digest].
fn delex(s: &mut Server, a: &Args) -> CmdResult {
    let key = a.bytes(1);
    if a.len() == 2 {
        // `delGenericCommand` on one key.
        let deleted = s.keyspace.remove(key);
        if deleted {
            s.notify_here(notify::GENERIC, "del", key);
        }
        s.set_dirty(u64::from(deleted));
        return Ok(Reply::Integer(i64::from(deleted)));
    }
    if a.len() != 4 {
        return Err(Reply::error(errors::arity("delex")));
    }
    let current = match s.keyspace.get(key) {
        None => {
            s.set_dirty(0);
            return Ok(Reply::Integer(0));
        }
        Some(Value::String(v)) => v.bytes().into_owned(),
        Some(_) => {
            return Err(Reply::error(
                "ERR Key should be of string type if conditions are specified",
            ))
        }
    };
    let wanted = a.bytes(3);
    let delete = if a.is(2, "ifeq") {
        current == wanted
    } else if a.is(2, "ifne") {
        current != wanted
    } else if a.is(2, "ifdeq") || a.is(2, "ifdne") {
        check_digest_length(wanted)?;
        digest_matches(&current, wanted) == a.is(2, "ifdeq")
    } else {
        return Err(Reply::error(
            "ERR Invalid condition. Use IFEQ, IFNE, IFDEQ, or IFDNE",
        ));
    };
    let deleted = delete && s.keyspace.remove(key);
    if deleted {
        s.notify_here(notify::GENERIC, "del", key);
    }
    s.set_dirty(u64::from(deleted));
    Ok(Reply::Integer(i64::from(deleted)))
}

fn digest(s: &mut Server, a: &Args) -> CmdResult {
    Ok(match lookup(s, a.bytes(1))? {
        None => Reply::Nil,
        Some(v) => Reply::bulk(digest_hex(&v.bytes())),
    })
}

#[cfg(test)]
mod tests {
    use crate::{Reply, Server};

    fn int(n: i64) -> Reply {
        Reply::Integer(n)
    }

    #[test]
    fn set_options_and_conditions() {
        let mut s = Server::new();
        assert_eq!(s.cmd(&["SET", "cfg", "v1"]), Reply::ok());
        assert_eq!(s.cmd(&["SET", "cfg", "v2", "IFEQ", "v1"]), Reply::ok());
        assert_eq!(s.cmd(&["SET", "cfg", "v3", "IFEQ", "v1"]), Reply::Nil);
        assert_eq!(s.cmd(&["GET", "cfg"]), Reply::bulk("v2"));
        assert_eq!(s.cmd(&["SET", "missing", "x", "IFEQ", "y"]), Reply::Nil);
        assert_eq!(s.cmd(&["EXISTS", "missing"]), int(0));
        assert_eq!(s.cmd(&["SET", "missing", "x", "IFNE", "y"]), Reply::ok());
        assert_eq!(
            s.cmd(&["SET", "k", "v", "NX", "XX"]),
            Reply::error("ERR syntax error")
        );
        assert_eq!(
            s.cmd(&["SET", "k", "v", "EX", "0"]),
            Reply::error("ERR invalid expire time in 'set' command")
        );
        assert_eq!(s.cmd(&["SET", "cfg", "v9", "GET"]), Reply::bulk("v2"));
        assert_eq!(s.cmd(&["SET", "new", "v", "NX", "GET"]), Reply::Nil);
    }

    #[test]
    fn digest_and_delex() {
        let mut s = Server::new();
        let big = "x".repeat(50_000);
        s.cmd(&["SET", "doc", &big]);
        let Reply::Bulk(d) = s.cmd(&["DIGEST", "doc"]) else {
            panic!()
        };
        assert_eq!(d.len(), 16);
        let d = String::from_utf8(d.into_vec()).unwrap();
        assert_eq!(s.cmd(&["SET", "doc", "new", "IFDEQ", &d]), Reply::ok());
        assert_eq!(
            s.cmd(&["SET", "doc", "n", "IFDEQ", "abc"]),
            Reply::error("ERR must be exactly 16 hexadecimal characters")
        );
        s.cmd(&["SET", "lock", "token"]);
        assert_eq!(s.cmd(&["DELEX", "lock", "IFEQ", "wrong"]), int(0));
        assert_eq!(s.cmd(&["DELEX", "lock", "IFEQ", "token"]), int(1));
        assert_eq!(s.cmd(&["EXISTS", "lock"]), int(0));
        // XXH3-64 of the empty string.
        s.cmd(&["SET", "e", ""]);
        assert_eq!(s.cmd(&["DIGEST", "e"]), Reply::bulk("2d06800538d394c2"));
    }

    #[test]
    fn msetex_sets_all_or_nothing() {
        let mut s = Server::new();
        assert_eq!(
            s.cmd(&["MSETEX", "3", "a", "1", "b", "2", "c", "3", "EX", "60"]),
            int(1)
        );
        for k in ["a", "b", "c"] {
            assert_eq!(s.cmd(&["TTL", k]), int(60));
        }
        assert_eq!(
            s.cmd(&["MSETEX", "2", "a", "1", "z", "2", "NX", "EX", "60"]),
            int(0)
        );
        assert_eq!(s.cmd(&["EXISTS", "z"]), int(0));
        assert_eq!(
            s.cmd(&["MSETEX", "0", "a", "1"]),
            Reply::error("ERR invalid numkeys value")
        );
        assert_eq!(
            s.cmd(&["MSETEX", "3", "a", "1"]),
            Reply::error("ERR wrong number of key-value pairs")
        );
    }

    #[test]
    fn the_articles_ttl_table() {
        let cases: &[&[&str]] = &[
            &["SET", "k", "2"],
            &["SET", "k", "2", "KEEPTTL"],
            &["INCR", "k"],
            &["INCRBY", "k", "5"],
            &["APPEND", "k", "0"],
            &["SETRANGE", "k", "0", "9"],
            &["GETSET", "k", "3"],
            &["SET", "k", "3", "GET"],
            &["GETEX", "k", "PERSIST"],
        ];
        let expected = [-1, 100, 100, 100, 100, 100, -1, -1, -1];
        for (cmd, want) in cases.iter().zip(expected) {
            let mut s = Server::new();
            s.cmd(&["SET", "k", "1", "EX", "100"]);
            s.cmd(cmd);
            assert_eq!(s.cmd(&["TTL", "k"]), int(want), "{cmd:?}");
        }
    }

    #[test]
    fn memory_of_the_articles_strings() {
        let mut s = Server::new();
        let chunk = "a".repeat(100);
        for _ in 0..1000 {
            s.cmd(&["APPEND", "s:append", &chunk]);
        }
        s.cmd(&["SET", "s:set", &"a".repeat(100_000)]);
        assert_eq!(s.cmd(&["STRLEN", "s:append"]), int(100_000));
        assert_eq!(s.cmd(&["MEMORY", "USAGE", "s:append"]), int(196_640));
        assert_eq!(s.cmd(&["MEMORY", "USAGE", "s:set"]), int(114_712));
        assert_eq!(
            s.cmd(&["SETRANGE", "s:far", "10000000", "x"]),
            int(10_000_001)
        );
        assert_eq!(s.cmd(&["MEMORY", "USAGE", "s:far"]), int(10_485_784));
        assert_eq!(
            s.cmd(&["SETRANGE", "s:far2", "536870912", "x"]),
            Reply::error("ERR string exceeds maximum allowed size (proto-max-bulk-len)")
        );
        assert_eq!(s.cmd(&["OBJECT", "ENCODING", "s:far"]), Reply::bulk("raw"));
    }

    #[test]
    fn getrange_clamps_like_redis() {
        let mut s = Server::new();
        s.cmd(&["SET", "k", "Hello World"]);
        assert_eq!(s.cmd(&["GETRANGE", "k", "0", "4"]), Reply::bulk("Hello"));
        assert_eq!(s.cmd(&["GETRANGE", "k", "-5", "-1"]), Reply::bulk("World"));
        assert_eq!(s.cmd(&["GETRANGE", "k", "-1", "-5"]), Reply::bulk(""));
        assert_eq!(
            s.cmd(&["GETRANGE", "k", "5", "1000"]),
            Reply::bulk(" World")
        );
        assert_eq!(s.cmd(&["GETRANGE", "nokey", "0", "1"]), Reply::bulk(""));
        s.cmd(&["SET", "n", "12345"]);
        assert_eq!(s.cmd(&["GETRANGE", "n", "1", "2"]), Reply::bulk("23"));
    }

    #[test]
    fn wrong_type_both_ways() {
        let mut s = Server::new();
        s.cmd(&["ZADD", "z", "1", "a"]);
        s.cmd(&["SET", "str", "x"]);
        let wrong = Reply::error(crate::reply::errors::WRONGTYPE);
        assert_eq!(s.cmd(&["GET", "z"]), wrong);
        assert_eq!(s.cmd(&["APPEND", "z", "x"]), wrong);
        assert_eq!(s.cmd(&["ZADD", "str", "1", "a"]), wrong);
        assert_eq!(s.cmd(&["TYPE", "str"]), Reply::Status("string".into()));
        // SET overwrites any type.
        assert_eq!(s.cmd(&["SET", "z", "v"]), Reply::ok());
        assert_eq!(s.cmd(&["TYPE", "z"]), Reply::Status("string".into()));
    }
}
