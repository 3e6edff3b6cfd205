//! String commands (src/t_string.c and DELEX from src/db.c), with Redis 8.6.3's
//! replies and errors.
//!
//! TTL rules, as in Redis: a command that replaces the value (SET, GETSET, MSET,
//! SETEX's value part) drops the TTL unless told to keep it (KEEPTTL, or an
//! expiry given with it); commands that change the value in place (APPEND,
//! SETRANGE, and the counters) keep it. SET's IFEQ/IFNE/IFDEQ/IFDNE (8.4) and
//! DELEX, DIGEST and MSETEX are all in 8.6.3.

use xxhash_rust::xxh3::xxh3_64;

use super::string_args::{self as ext, Kind};
use super::{flags::*, Args, CommandSpec, Server};
use crate::keyspace::{now_ms, Value};
use crate::reply::{errors, Reply};
use crate::strings::{ArgObject, StringValue, PROTO_MAX_BULK_LEN};

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec::legacy("get", 2, get)
        .flags(READONLY | FAST)
        .keys(1, 1, 1),
    CommandSpec::legacy("set", -3, set)
        .flags(WRITE | DENYOOM)
        .keys(1, 1, 1),
    CommandSpec::legacy("setnx", 3, setnx)
        .flags(WRITE | DENYOOM | FAST)
        .keys(1, 1, 1),
    CommandSpec::legacy("setex", 4, setex)
        .flags(WRITE | DENYOOM)
        .keys(1, 1, 1),
    CommandSpec::legacy("psetex", 4, psetex)
        .flags(WRITE | DENYOOM)
        .keys(1, 1, 1),
    CommandSpec::legacy("getset", 3, getset)
        .flags(WRITE | DENYOOM | FAST)
        .keys(1, 1, 1),
    CommandSpec::legacy("getex", -2, getex)
        .flags(WRITE | FAST)
        .keys(1, 1, 1),
    CommandSpec::legacy("getdel", 2, getdel)
        .flags(WRITE | FAST)
        .keys(1, 1, 1),
    CommandSpec::legacy("append", 3, append)
        .flags(WRITE | DENYOOM | FAST)
        .keys(1, 1, 1),
    CommandSpec::legacy("setrange", 4, setrange)
        .flags(WRITE | DENYOOM)
        .keys(1, 1, 1),
    CommandSpec::legacy("getrange", 4, getrange)
        .flags(READONLY)
        .keys(1, 1, 1),
    CommandSpec::legacy("substr", 4, getrange)
        .flags(READONLY)
        .keys(1, 1, 1),
    CommandSpec::legacy("strlen", 2, strlen)
        .flags(READONLY | FAST)
        .keys(1, 1, 1),
    CommandSpec::legacy("mget", -2, mget)
        .flags(READONLY | FAST)
        .keys(1, -1, 1),
    CommandSpec::legacy("mset", -3, mset)
        .flags(WRITE | DENYOOM)
        .keys(1, -1, 2),
    CommandSpec::legacy("msetnx", -3, msetnx)
        .flags(WRITE | DENYOOM)
        .keys(1, -1, 2),
    CommandSpec::legacy("msetex", -4, msetex).flags(WRITE | DENYOOM | MOVABLE_KEYS),
    CommandSpec::legacy("delex", -2, delex)
        .flags(WRITE | FAST)
        .keys(1, 1, 1),
    CommandSpec::legacy("digest", 2, digest)
        .flags(READONLY | FAST)
        .keys(1, 1, 1),
];

/// `DIGEST_HEX_LENGTH`.
const DIGEST_HEX_LENGTH: usize = 16;

/// The string at `key`: `Ok(None)` if missing, WRONGTYPE if another type.
pub(crate) fn lookup<'s>(s: &'s mut Server, key: &[u8]) -> Result<Option<&'s StringValue>, Reply> {
    match s.keyspace.get(key) {
        None => Ok(None),
        Some(Value::String(v)) => Ok(Some(v)),
        Some(_) => Err(Reply::error(errors::WRONGTYPE)),
    }
}

/// `setKey` / `dbReplaceValue` for a string: Redis keeps the key's old object
/// when both the old value and the new object are unshared and not embstr.
pub(crate) fn store(s: &mut Server, key: &[u8], obj: ArgObject, keep_ttl: bool) {
    let old_allows = !matches!(
        s.keyspace.get(key),
        Some(Value::String(StringValue::Embstr(_)))
    );
    let reuse = old_allows && obj.swappable();
    let value = Value::String(obj.into_stored(key.len()));
    s.keyspace.set_value(key, value, keep_ttl, reuse);
}

/// `checkStringLength`.
fn check_length(size: u64, append: u64) -> Result<(), Reply> {
    if size.saturating_add(append) > PROTO_MAX_BULK_LEN {
        return Err(Reply::error(
            "ERR string exceeds maximum allowed size (proto-max-bulk-len)",
        ));
    }
    Ok(())
}

/// XXH3-64 of the value, as 16 lower-case hex digits (`stringDigest`).
pub fn digest_hex(bytes: &[u8]) -> String {
    format!("{:016x}", xxh3_64(bytes))
}

/// `getGenericCommand`: the reply, or WRONGTYPE as `Err`.
fn get_reply(s: &mut Server, key: &[u8]) -> Result<Reply, Reply> {
    Ok(lookup(s, key)?.map_or(Reply::Nil, |v| Reply::bulk(v.bytes())))
}

pub fn get(s: &mut Server, a: &Args) -> Reply {
    get_reply(s, a.bytes(1)).unwrap_or_else(|e| e)
}

pub fn set(s: &mut Server, a: &Args) -> Reply {
    let opts = match ext::parse(a, 3, Kind::Set) {
        Ok(o) => o,
        Err(e) => return e,
    };
    set_generic(
        s,
        a.bytes(1),
        a.bytes(2),
        &opts,
        "set",
        Reply::ok(),
        Reply::Nil,
    )
}

/// `setGenericCommand`.
fn set_generic(
    s: &mut Server,
    key: &[u8],
    value: &[u8],
    opts: &ext::ExtArgs<'_>,
    name: &str,
    ok: Reply,
    abort: Reply,
) -> Reply {
    let deadline = match ext::deadline_ms(opts, name) {
        Ok(d) => d,
        Err(e) => return e,
    };
    let old = if opts.has(ext::GET) {
        match get_reply(s, key) {
            Ok(r) => Some(r),
            Err(e) => return e,
        }
    } else {
        None
    };
    let aborted = |old: Option<Reply>| old.unwrap_or_else(|| abort.clone());
    let found = s.keyspace.contains(key);
    if (opts.has(ext::NX) && found) || (opts.has(ext::XX | ext::IFEQ | ext::IFDEQ) && !found) {
        return aborted(old);
    }
    if found && opts.has(ext::IFEQ | ext::IFNE | ext::IFDEQ | ext::IFDNE) {
        let current = match lookup(s, key) {
            Ok(v) => v.expect("found above").bytes().into_owned(),
            Err(e) => return e,
        };
        let wanted = opts.match_value.unwrap_or_default();
        let holds = if opts.has(ext::IFEQ | ext::IFNE) {
            (current == wanted) == opts.has(ext::IFEQ)
        } else {
            if wanted.len() != DIGEST_HEX_LENGTH {
                return digest_length_error();
            }
            digest_matches(&current, wanted) == opts.has(ext::IFDEQ)
        };
        if !holds {
            return aborted(old);
        }
    }
    let keep_ttl = opts.has(ext::KEEPTTL) || deadline.is_some();
    store(s, key, ArgObject::from_argument(value), keep_ttl);
    if let Some(at) = deadline {
        s.keyspace.set_expiry(key, Some(at));
    }
    old.unwrap_or(ok)
}

fn digest_length_error() -> Reply {
    Reply::error(format!(
        "ERR must be exactly {DIGEST_HEX_LENGTH} hexadecimal characters"
    ))
}

/// `strcasecmp(stringDigest(value), match)`: a C comparison, so it stops at NUL.
fn digest_matches(value: &[u8], wanted: &[u8]) -> bool {
    let wanted = wanted.split(|&b| b == 0).next().unwrap_or_default();
    digest_hex(value).as_bytes().eq_ignore_ascii_case(wanted)
}

pub fn setnx(s: &mut Server, a: &Args) -> Reply {
    let opts = ext::ExtArgs {
        flags: ext::NX,
        ..Default::default()
    };
    set_generic(
        s,
        a.bytes(1),
        a.bytes(2),
        &opts,
        "setnx",
        Reply::Integer(1),
        Reply::Integer(0),
    )
}

pub fn setex(s: &mut Server, a: &Args) -> Reply {
    timed_set(s, a, ext::EX, "setex")
}

pub fn psetex(s: &mut Server, a: &Args) -> Reply {
    timed_set(s, a, ext::PX, "psetex")
}

fn timed_set(s: &mut Server, a: &Args, flag: u32, name: &str) -> Reply {
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
        Reply::ok(),
        Reply::Nil,
    )
}

pub fn getset(s: &mut Server, a: &Args) -> Reply {
    let old = match get_reply(s, a.bytes(1)) {
        Ok(r) => r,
        Err(e) => return e,
    };
    store(s, a.bytes(1), ArgObject::from_argument(a.bytes(2)), false);
    old
}

pub fn getex(s: &mut Server, a: &Args) -> Reply {
    let opts = match ext::parse(a, 2, Kind::Get) {
        Ok(o) => o,
        Err(e) => return e,
    };
    let key = a.bytes(1);
    let reply = match lookup(s, key) {
        Ok(None) => return Reply::Nil,
        Ok(Some(v)) => Reply::bulk(v.bytes()),
        Err(e) => return e,
    };
    let deadline = match ext::deadline_ms(&opts, "getex") {
        Ok(d) => d,
        Err(e) => return e,
    };
    if opts.has(ext::EXAT | ext::PXAT) && deadline.is_some_and(|at| at <= now_ms()) {
        s.keyspace.remove(key);
    } else if let Some(at) = deadline {
        s.keyspace.set_expiry(key, Some(at));
    } else if opts.has(ext::PERSIST) {
        s.keyspace.set_expiry(key, None);
    }
    reply
}

pub fn getdel(s: &mut Server, a: &Args) -> Reply {
    let reply = match get_reply(s, a.bytes(1)) {
        Ok(r) => r,
        Err(e) => return e,
    };
    s.keyspace.remove(a.bytes(1));
    reply
}

pub fn append(s: &mut Server, a: &Args) -> Reply {
    let key = a.bytes(1);
    let tail = a.bytes(2);
    let current_len = match lookup(s, key) {
        Err(e) => return e,
        Ok(None) => {
            let obj = ArgObject::from_argument(tail);
            store(s, key, obj, false);
            return Reply::Integer(tail.len() as i64);
        }
        Ok(Some(v)) => v.len(),
    };
    if let Err(e) = check_length(current_len as u64, tail.len() as u64) {
        return e;
    }
    let sds = unshare(s, key);
    sds.append(tail);
    Reply::Integer(sds.len() as i64)
}

/// `dbUnshareStringValue`: makes the value at `key` raw and returns its SDS.
pub(crate) fn unshare<'s>(s: &'s mut Server, key: &[u8]) -> &'s mut crate::sds::Sds {
    let copy = match s.keyspace.get(key) {
        Some(Value::String(v)) => v.unshared(),
        _ => unreachable!("checked by the caller"),
    };
    if let Some(obj) = copy {
        store(s, key, obj, true);
    }
    match s.keyspace.get_mut(key) {
        Some(Value::String(v)) => v.raw_mut().expect("made raw above"),
        _ => unreachable!("stored above"),
    }
}

pub fn setrange(s: &mut Server, a: &Args) -> Reply {
    let offset = match a.int(2) {
        Ok(n) => n,
        Err(e) => return e,
    };
    if offset < 0 {
        return Reply::error("ERR offset is out of range");
    }
    let key = a.bytes(1);
    let data = a.bytes(3);
    match lookup(s, key) {
        Err(e) => e,
        Ok(None) => {
            if data.is_empty() {
                return Reply::Integer(0);
            }
            if let Err(e) = check_length(offset as u64, data.len() as u64) {
                return e;
            }
            let offset = offset as usize;
            let mut bytes = vec![0u8; offset + data.len()];
            bytes[offset..].copy_from_slice(data);
            let len = bytes.len();
            let raw = ArgObject::Raw(crate::sds::Sds::new(&bytes));
            store(s, key, raw, false);
            Reply::Integer(len as i64)
        }
        Ok(Some(v)) => {
            let old_len = v.len();
            if data.is_empty() {
                return Reply::Integer(old_len as i64);
            }
            if let Err(e) = check_length(offset as u64, data.len() as u64) {
                return e;
            }
            let sds = unshare(s, key);
            sds.write_at(offset as usize, data);
            Reply::Integer(sds.len() as i64)
        }
    }
}

pub fn getrange(s: &mut Server, a: &Args) -> Reply {
    let (mut start, mut end) = match (a.int(2), a.int(3)) {
        (Ok(x), Ok(y)) => (x, y),
        (Err(e), _) | (_, Err(e)) => return e,
    };
    let value = match lookup(s, a.bytes(1)) {
        Err(e) => return e,
        Ok(None) => return Reply::bulk(""),
        Ok(Some(v)) => v.bytes(),
    };
    let len = value.len() as i64;
    if start < 0 && end < 0 && start > end {
        return Reply::bulk("");
    }
    if start < 0 {
        start += len;
    }
    if end < 0 {
        end += len;
    }
    start = start.max(0);
    end = end.max(0);
    if end >= len {
        end = len - 1;
    }
    if start > end || len == 0 {
        return Reply::bulk("");
    }
    Reply::bulk(&value[start as usize..=end as usize])
}

pub fn strlen(s: &mut Server, a: &Args) -> Reply {
    match lookup(s, a.bytes(1)) {
        Err(e) => e,
        Ok(v) => Reply::Integer(v.map_or(0, |v| v.len() as i64)),
    }
}

pub fn mget(s: &mut Server, a: &Args) -> Reply {
    let items = (1..a.len())
        .map(|i| match s.keyspace.get(a.bytes(i)) {
            Some(Value::String(v)) => Reply::bulk(v.bytes()),
            _ => Reply::Nil,
        })
        .collect();
    Reply::Array(items)
}

pub fn mset(s: &mut Server, a: &Args) -> Reply {
    mset_generic(s, a, false, "mset")
}

pub fn msetnx(s: &mut Server, a: &Args) -> Reply {
    mset_generic(s, a, true, "msetnx")
}

fn mset_generic(s: &mut Server, a: &Args, nx: bool, name: &str) -> Reply {
    if a.len().is_multiple_of(2) {
        return Reply::error(errors::arity(name));
    }
    if nx
        && (1..a.len())
            .step_by(2)
            .any(|i| s.keyspace.contains(a.bytes(i)))
    {
        return Reply::Integer(0);
    }
    for i in (1..a.len()).step_by(2) {
        store(
            s,
            a.bytes(i),
            ArgObject::from_argument(a.bytes(i + 1)),
            false,
        );
    }
    if nx {
        Reply::Integer(1)
    } else {
        Reply::ok()
    }
}

/// MSETEX numkeys key value [key value ...] [NX | XX] [EX | PX | EXAT | PXAT |
/// KEEPTTL].
pub fn msetex(s: &mut Server, a: &Args) -> Reply {
    let count = match a.int(1) {
        Ok(n) if (1..=i64::from(i32::MAX)).contains(&n) => n as usize,
        _ => return Reply::error("ERR invalid numkeys value"),
    };
    if count * 2 + 2 > a.len() {
        return Reply::error("ERR wrong number of key-value pairs");
    }
    let opts = match ext::parse(a, count * 2 + 2, Kind::MsetEx) {
        Ok(o) => o,
        Err(e) => return e,
    };
    let deadline = match ext::deadline_ms(&opts, "msetex") {
        Ok(d) => d,
        Err(e) => return e,
    };
    let keys = || (0..count).map(|j| 2 + 2 * j);
    if opts.has(ext::NX | ext::XX) {
        for k in keys() {
            let found = s.keyspace.contains(a.bytes(k));
            if (opts.has(ext::NX) && found) || (opts.has(ext::XX) && !found) {
                return Reply::Integer(0);
            }
        }
    }
    let keep_ttl = opts.has(ext::KEEPTTL);
    for k in keys() {
        let key = a.bytes(k);
        store(s, key, ArgObject::from_argument(a.bytes(k + 1)), keep_ttl);
        if let Some(at) = deadline {
            if !keep_ttl {
                s.keyspace.set_expiry(key, Some(at));
            }
        }
    }
    Reply::Integer(1)
}

/// DELEX key [IFEQ value | IFNE value | IFDEQ digest | IFDNE digest].
pub fn delex(s: &mut Server, a: &Args) -> Reply {
    if a.len() == 2 {
        return super::generic::del(s, a);
    }
    if a.len() != 4 {
        return Reply::error(errors::arity("delex"));
    }
    let key = a.bytes(1);
    let current = match s.keyspace.get(key) {
        None => return Reply::Integer(0),
        Some(Value::String(v)) => v.bytes().into_owned(),
        Some(_) => {
            return Reply::error("ERR Key should be of string type if conditions are specified")
        }
    };
    let wanted = a.bytes(3);
    let delete = if a.is(2, "ifeq") {
        current == wanted
    } else if a.is(2, "ifne") {
        current != wanted
    } else if a.is(2, "ifdeq") || a.is(2, "ifdne") {
        if wanted.len() != DIGEST_HEX_LENGTH {
            return digest_length_error();
        }
        digest_matches(&current, wanted) == a.is(2, "ifdeq")
    } else {
        return Reply::error("ERR Invalid condition. Use IFEQ, IFNE, IFDEQ, or IFDNE");
    };
    Reply::Integer(i64::from(delete && s.keyspace.remove(key)))
}

pub fn digest(s: &mut Server, a: &Args) -> Reply {
    match lookup(s, a.bytes(1)) {
        Err(e) => e,
        Ok(None) => Reply::Nil,
        Ok(Some(v)) => Reply::bulk(digest_hex(&v.bytes())),
    }
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
        let d = String::from_utf8(d).unwrap();
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
