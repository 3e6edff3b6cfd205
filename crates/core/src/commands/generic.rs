//! Connection, server and key commands that every lab needs.

use super::{spec, Args, CommandSpec, Server};
use crate::keyspace::now_ms;
use crate::reply::{errors, Reply};

pub const COMMANDS: &[CommandSpec] = &[
    spec("ping", -1, ping),
    spec("echo", 2, echo),
    spec("select", 2, select),
    spec("client", -2, client),
    spec("command", -1, command),
    spec("info", -1, info),
    spec("dbsize", 1, dbsize),
    spec("flushall", -1, flush),
    spec("flushdb", -1, flush),
    spec("del", -2, del),
    spec("unlink", -2, del),
    spec("exists", -2, exists),
    spec("type", 2, type_of),
    spec("expire", -3, expire),
    spec("pexpire", -3, pexpire),
    spec("expireat", -3, expireat),
    spec("pexpireat", -3, pexpireat),
    spec("ttl", 2, ttl),
    spec("pttl", 2, pttl),
    spec("persist", 2, persist),
];

pub fn ping(_: &mut Server, a: &Args) -> Reply {
    match a.len() {
        1 => Reply::Status("PONG".into()),
        2 => Reply::bulk(a.bytes(1)),
        _ => Reply::error(errors::arity("ping")),
    }
}

pub fn echo(_: &mut Server, a: &Args) -> Reply {
    Reply::bulk(a.bytes(1))
}

/// The core has one database; SELECT 0 is accepted so clients that send it work.
pub fn select(_: &mut Server, a: &Args) -> Reply {
    match a.int(1) {
        Ok(0) => Reply::ok(),
        Ok(_) => Reply::error("ERR DB index is out of range"),
        Err(_) => Reply::error(errors::NOT_INTEGER),
    }
}

/// Clients announce themselves with CLIENT SETNAME / SETINFO; the core accepts and
/// forgets.
pub fn client(_: &mut Server, a: &Args) -> Reply {
    if a.is(1, "setname") || a.is(1, "setinfo") {
        Reply::ok()
    } else if a.is(1, "getname") {
        Reply::Nil
    } else {
        let sub = String::from_utf8_lossy(a.bytes(1));
        Reply::error(format!("ERR unknown subcommand '{sub}'. Try CLIENT HELP."))
    }
}

/// redis-cli asks for command docs at start-up; an empty answer makes it skip hints.
pub fn command(_: &mut Server, _: &Args) -> Reply {
    Reply::Array(Vec::new())
}

/// The `# Server` section. `redis_version` names the release whose replies the core
/// reproduces byte for byte (8.6.3, the server the labs compare with; the Lua
/// `redis.REDIS_VERSION` says the same); `redislab_core_extras` lists the 8.8
/// features it adds; `redislab_core_version` is this crate's own version.
pub fn info(s: &mut Server, _: &Args) -> Reply {
    let text = format!(
        "# Server\r\nredis_version:8.6.3\r\nredislab_core_version:{}\r\nredislab_core_extras:INCREX,AGGREGATE COUNT (Redis 8.8)\r\nredis_mode:standalone\r\n\r\n# Keyspace\r\ndb0:keys={},expires={}\r\n",
        crate::CORE_VERSION,
        s.keyspace.len(),
        s.keyspace.volatile_len()
    );
    Reply::bulk(text)
}

pub fn dbsize(s: &mut Server, _: &Args) -> Reply {
    Reply::Integer(s.keyspace.len() as i64)
}

pub fn flush(s: &mut Server, a: &Args) -> Reply {
    if a.len() > 2 || (a.len() == 2 && !a.is(1, "sync") && !a.is(1, "async")) {
        return Reply::error(errors::SYNTAX);
    }
    s.keyspace.clear();
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
