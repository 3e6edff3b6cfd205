//! Keyspace commands: DBSIZE, FLUSHALL/FLUSHDB, DEL/UNLINK, EXISTS, TYPE, the
//! EXPIRE family, TTL/PTTL and PERSIST (db.c, expire.c).

use super::{flags::*, Args, CommandSpec, Server};
use crate::keyspace::now_ms;
use crate::reply::{errors, Reply};

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec::legacy("dbsize", 1, dbsize).flags(READONLY | FAST),
    CommandSpec::legacy("flushall", -1, flush).flags(WRITE),
    CommandSpec::legacy("flushdb", -1, flush).flags(WRITE),
    CommandSpec::legacy("del", -2, del)
        .flags(WRITE)
        .keys(1, -1, 1),
    CommandSpec::legacy("unlink", -2, del)
        .flags(WRITE | FAST)
        .keys(1, -1, 1),
    CommandSpec::legacy("exists", -2, exists)
        .flags(READONLY | FAST)
        .keys(1, -1, 1),
    CommandSpec::legacy("type", 2, type_of)
        .flags(READONLY | FAST)
        .keys(1, 1, 1),
    CommandSpec::legacy("expire", -3, expire)
        .flags(WRITE | FAST)
        .keys(1, 1, 1),
    CommandSpec::legacy("pexpire", -3, pexpire)
        .flags(WRITE | FAST)
        .keys(1, 1, 1),
    CommandSpec::legacy("expireat", -3, expireat)
        .flags(WRITE | FAST)
        .keys(1, 1, 1),
    CommandSpec::legacy("pexpireat", -3, pexpireat)
        .flags(WRITE | FAST)
        .keys(1, 1, 1),
    CommandSpec::legacy("ttl", 2, ttl)
        .flags(READONLY | FAST)
        .keys(1, 1, 1),
    CommandSpec::legacy("pttl", 2, pttl)
        .flags(READONLY | FAST)
        .keys(1, 1, 1),
    CommandSpec::legacy("persist", 2, persist)
        .flags(WRITE | FAST)
        .keys(1, 1, 1),
];

pub fn dbsize(s: &mut Server, _: &Args) -> Reply {
    Reply::Integer(s.keyspace.len() as i64)
}

/// FLUSHALL empties every database, FLUSHDB the selected one (SYNC and ASYNC
/// do the same here: the core frees memory at once either way).
pub fn flush(s: &mut Server, a: &Args) -> Reply {
    if a.len() > 2 || (a.len() == 2 && !a.is(1, "sync") && !a.is(1, "async")) {
        return Reply::error(errors::SYNTAX);
    }
    if a.is(0, "flushall") {
        for db in 0..crate::server::DATABASES {
            s.db_mut(db).clear();
        }
    } else {
        s.keyspace.clear();
    }
    Reply::ok()
}

pub fn del(s: &mut Server, a: &Args) -> Reply {
    let removed = (1..a.len())
        .filter(|&i| s.keyspace.remove(a.bytes(i)))
        .count();
    Reply::Integer(removed as i64)
}

/// Counts every argument that names a live key, duplicates included (as Redis does).
pub fn exists(s: &mut Server, a: &Args) -> Reply {
    let found = (1..a.len())
        .filter(|&i| s.keyspace.contains(a.bytes(i)))
        .count();
    Reply::Integer(found as i64)
}

pub fn type_of(s: &mut Server, a: &Args) -> Reply {
    let name = s.keyspace.get(a.bytes(1)).map_or("none", |v| v.type_name());
    Reply::Status(name.into())
}

pub fn expire(s: &mut Server, a: &Args) -> Reply {
    expire_generic(s, a, 1000, now_ms(), "expire")
}

pub fn pexpire(s: &mut Server, a: &Args) -> Reply {
    expire_generic(s, a, 1, now_ms(), "pexpire")
}

pub fn expireat(s: &mut Server, a: &Args) -> Reply {
    expire_generic(s, a, 1000, 0, "expireat")
}

pub fn pexpireat(s: &mut Server, a: &Args) -> Reply {
    expire_generic(s, a, 1, 0, "pexpireat")
}

/// EXPIRE/PEXPIRE/EXPIREAT/PEXPIREAT with NX/XX/GT/LT (`expireGenericCommand`):
/// options first, then the number, then the key. A deadline in the past deletes
/// the key, as in Redis. For GT/LT a key without a TTL counts as an infinite TTL.
fn expire_generic(s: &mut Server, a: &Args, unit_ms: i64, base_ms: i64, name: &str) -> Reply {
    let (mut nx, mut xx, mut gt, mut lt) = (false, false, false, false);
    for i in 3..a.len() {
        match () {
            _ if a.is(i, "nx") => nx = true,
            _ if a.is(i, "xx") => xx = true,
            _ if a.is(i, "gt") => gt = true,
            _ if a.is(i, "lt") => lt = true,
            _ => {
                // `%s` of a C string: up to the first NUL, line breaks as spaces.
                let c_str = a.bytes(i).split(|&b| b == 0).next().unwrap_or_default();
                let opt = String::from_utf8_lossy(c_str).replace(['\r', '\n'], " ");
                return Reply::error(format!("ERR Unsupported option {opt}"));
            }
        }
    }
    if nx && (xx || gt || lt) {
        return Reply::error("ERR NX and XX, GT or LT options at the same time are not compatible");
    }
    if gt && lt {
        return Reply::error("ERR GT and LT options at the same time are not compatible");
    }
    let amount = match a.int(2) {
        Ok(n) => n,
        Err(e) => return e,
    };
    let Some(at) = amount
        .checked_mul(unit_ms)
        .and_then(|ms| ms.checked_add(base_ms))
    else {
        return Reply::error(format!("ERR invalid expire time in '{name}' command"));
    };
    let key = a.bytes(1);
    let Some(current) = s.keyspace.expiry(key) else {
        return Reply::Integer(0);
    };
    let refused = match current {
        Some(cur) => nx || (gt && at <= cur) || (lt && at >= cur),
        None => xx || gt,
    };
    if refused {
        return Reply::Integer(0);
    }
    if at <= now_ms() {
        s.keyspace.remove(key);
    } else {
        s.keyspace.set_expiry(key, Some(at));
    }
    Reply::Integer(1)
}

pub fn ttl(s: &mut Server, a: &Args) -> Reply {
    ttl_generic(s, a, false)
}

pub fn pttl(s: &mut Server, a: &Args) -> Reply {
    ttl_generic(s, a, true)
}

/// -2 for a missing key, -1 for no expiry; TTL rounds to the nearest second.
fn ttl_generic(s: &mut Server, a: &Args, millis: bool) -> Reply {
    match s.keyspace.expiry(a.bytes(1)) {
        None => Reply::Integer(-2),
        Some(None) => Reply::Integer(-1),
        Some(Some(at)) => {
            let left = (at - now_ms()).max(0);
            Reply::Integer(if millis { left } else { (left + 500) / 1000 })
        }
    }
}

pub fn persist(s: &mut Server, a: &Args) -> Reply {
    match s.keyspace.expiry(a.bytes(1)) {
        Some(Some(_)) => {
            s.keyspace.set_expiry(a.bytes(1), None);
            Reply::Integer(1)
        }
        _ => Reply::Integer(0),
    }
}
