//! DEBUG (debug.c): the subcommands Redis's own tests and teachers use.
//!
//! DEBUG is one command in Redis's table (not a container): its subcommands are
//! parsed inside, and a subcommand it does not know, or one with the wrong
//! number of arguments, gets `unknown subcommand or wrong number of arguments
//! for '<sub>'. Try DEBUG HELP.`. The core answers the same way for the ones it
//! does not model (crash helpers, replication and AOF hooks, allocator dumps).
//!
//! Modelled: SLEEP (the whole server sleeps, as Redis's main thread does),
//! SET-ACTIVE-EXPIRE (turns the active expire cycle off and on), PROTOCOL (one
//! reply of each RESP3 type, to see how a client shows it), ERROR, LOG,
//! CHANGE-REPL-ID (nothing to change: OK), QUICKLIST-PACKED-THRESHOLD (from this
//! size on a list element gets a plain node of its own; per thread, where Redis's
//! is per process, see [`crate::list::quicklist`]), RELOAD (every database
//! saved as an RDB image and loaded back, [`crate::rdb::file`]), OBJECT (Redis's
//! line, `serializedlength` from the RDB writer), DIGEST and DIGEST-VALUE
//! (Redis's SHA1 digests, [`crate::rdb::digest`]), SDSLEN, LISTPACK (checks the
//! key is a listpack; Redis also prints it on its stdout), HELP.

use super::{flags::*, Args, CmdResult, CommandSpec, Server};
use crate::keyspace::Value;
use crate::rdb::digest;
use crate::reply::{ErrorText, Protocol, Reply};
use crate::server::client::Client;

pub const COMMANDS: &[CommandSpec] = &[CommandSpec::client("debug", -2, debug)
    .flags(ADMIN | NOSCRIPT | LOADING | STALE | PROTECTED)
    .doc(
        "1.0.0",
        "A container of debugging subcommands.",
        "subcommand [argument ...]",
    )];

fn syntax_error(a: &Args) -> Reply {
    crate::server::table::subcommand_syntax_error("DEBUG", a.bytes(1))
}

pub fn debug(s: &mut Server, c: &mut Client, a: &Args) -> CmdResult {
    let n = a.len();
    match () {
        _ if a.is(1, "help") && n == 2 => Ok(help()),
        _ if a.is(1, "sleep") && n == 3 => {
            let (seconds, _) = crate::num::strtod_prefix(a.bytes(2));
            // `long long utime = dtime * 1000000`; nanosleep refuses negative times.
            let micros = seconds * 1_000_000.0;
            if micros >= 1.0 && micros.is_finite() {
                std::thread::sleep(std::time::Duration::from_micros(micros as u64));
            }
            Ok(Reply::ok())
        }
        _ if a.is(1, "set-active-expire") && n == 3 => {
            s.config.active_expire = atoi(a.bytes(2)) != 0;
            Ok(Reply::ok())
        }
        _ if a.is(1, "protocol") && n == 3 => protocol(c, a),
        _ if a.is(1, "error") && n == 3 => Err(Reply::Error(ErrorText::one_line(a.bytes(2)))),
        _ if a.is(1, "log") && n == 3 => {
            eprintln!("DEBUG LOG: {}", String::from_utf8_lossy(a.bytes(2)));
            Ok(Reply::ok())
        }
        _ if a.is(1, "set-disable-deny-scripts") && n == 3 => {
            // Lets scripts call commands flagged no-script (Redis's tests use it
            // to reach DEBUG PROTOCOL from Lua).
            crate::scripting::set_deny_scripts_disabled(s, atoi(a.bytes(2)) != 0);
            Ok(Reply::ok())
        }
        _ if a.is(1, "change-repl-id") && n == 2 => Ok(Reply::ok()),
        _ if a.is(1, "quicklist-packed-threshold") && n == 3 => quicklist_packed_threshold(a),
        _ if a.is(1, "reload") => reload(s, a),
        _ if a.is(1, "listpack") && n == 3 => listpack(s, a),
        _ if a.is(1, "object") && n == 3 => object(s, a),
        _ if a.is(1, "sdslen") && n == 3 => sdslen(s, a),
        _ if a.is(1, "digest") && n == 2 => {
            Ok(Reply::Status(digest::hex(&dataset_digest(s)).into()))
        }
        _ if a.is(1, "digest-value") && n >= 2 => Ok(digest_value(s, a)),
        _ => Err(syntax_error(a)),
    }
}

/// C's `atoi`: optional spaces and sign, then digits; 0 if none.
fn atoi(s: &[u8]) -> i64 {
    let s = crate::num::c_str(s);
    let mut i = s
        .iter()
        .take_while(|c| matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r'))
        .count();
    let negative = s.get(i) == Some(&b'-');
    if matches!(s.get(i), Some(b'-' | b'+')) {
        i += 1;
    }
    let mut v: i64 = 0;
    for &c in s[i..].iter().take_while(|c| c.is_ascii_digit()) {
        v = v.wrapping_mul(10).wrapping_add(i64::from(c - b'0'));
    }
    if negative {
        -v
    } else {
        v
    }
}

fn quicklist_packed_threshold(a: &Args) -> CmdResult {
    let text = String::from_utf8_lossy(crate::num::c_str(a.bytes(2))).into_owned();
    let bytes = crate::server::config::memtoull(&text);
    match bytes {
        Some(n) if crate::list::quicklist::set_packed_threshold(n) => Ok(Reply::ok()),
        _ => Err(Reply::error(
            "ERR argument must be a memory value bigger than 1 and smaller than 4gb",
        )),
    }
}

/// DEBUG RELOAD: every database saved as an RDB image by [`crate::rdb::file`]
/// and loaded back (`rdbSave` then `emptyData` and `rdbLoad`). Loading rebuilds
/// each value with the current thresholds, drops keys past their TTL and gives
/// every key a fresh LRU/LFU field, as Redis's does. The core keeps no dump
/// file, so NOSAVE loads what a save would write now; NOFLUSH loads over the
/// data in memory, and without MERGE that fails when a key or a function
/// library of the image is already there.
fn reload(s: &mut Server, a: &Args) -> CmdResult {
    let (mut flush, mut save, mut merge) = (true, true, false);
    for j in 2..a.len() {
        if a.is(j, "merge") {
            merge = true;
        } else if a.is(j, "noflush") {
            flush = false;
        } else if a.is(j, "nosave") {
            save = false;
        } else {
            return Err(Reply::error(
                "ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.",
            ));
        }
    }
    let opts = crate::rdb::Options::of(&s.config);
    // The core keeps no dump file: NOSAVE loads what a save would write now.
    let _ = save;
    let image = save_image(s, opts.compress);
    let keys = crate::rdb::file::load(&image, &opts)
        .map_err(|_| Reply::error("ERR Error trying to load the RDB dump, check server logs."))?;
    let load_error = || Reply::error("ERR Error trying to load the RDB dump, check server logs.");
    if !flush && !merge {
        // Without MERGE, what the image holds must not be in memory already:
        // Redis refuses a function library that exists (and stops on a
        // duplicate key, which the core refuses as well).
        let libraries = s
            .scripting
            .as_ref()
            .map_or(0, |e| e.functions().library_count());
        if libraries > 0 || keys.iter().any(|(db, k, _, _)| s.db(*db).peek(k).is_some()) {
            return Err(load_error());
        }
    }
    if flush {
        for db in 0..crate::server::DATABASES {
            s.db_mut(db).clear();
        }
    }
    let now = crate::keyspace::now_ms();
    for (db, key, value, deadline) in keys {
        if deadline.is_some_and(|t| t < now) {
            continue;
        }
        let ks = s.db_mut(db);
        ks.remove(&key);
        ks.put(&key, value, deadline);
    }
    Ok(Reply::ok())
}

/// `rdbSave` of every database into memory.
fn save_image(s: &mut Server, compress: bool) -> Vec<u8> {
    let mut out = crate::rdb::file::begin();
    for db in 0..crate::server::DATABASES {
        let keys: Vec<_> = s.db_mut(db).entries_with_expiry().collect();
        crate::rdb::file::push_db(&mut out, db, &keys, compress);
    }
    crate::rdb::file::finish(out)
}

/// DEBUG OBJECT: Redis's line, `serializedlength` from the RDB writer, the
/// quicklist details for a quicklist. The address is the core's.
fn object(s: &mut Server, a: &Args) -> CmdResult {
    let compress = crate::rdb::Options::of(&s.config).compress;
    let clock = s.keyspace.access().clock;
    let Some((value, _, lru)) = s.keyspace.peek_entry(a.bytes(2)) else {
        return Err(Reply::error("ERR no such key"));
    };
    let encoding = encoding_name(value);
    let mut extra = String::new();
    if let Value::List(l) = value {
        if let Some(ql) = l.quicklist() {
            let nodes = ql.node_count();
            let size: usize = ql.nodes().map(|n| n.sz()).sum();
            extra = format!(
                " ql_nodes:{nodes} ql_avg_node:{:.2} ql_listpack_max:{} ql_compressed:{} ql_uncompressed_size:{size}",
                ql.len() as f64 / nodes as f64,
                ql.fill(),
                i32::from(ql.compress_depth() != 0),
            );
        }
    }
    let idle = crate::lru::idle_ms(lru, clock) / 1000;
    Ok(Reply::Status(format!(
        "Value at:{:p} refcount:1 encoding:{encoding} serializedlength:{} lru:{lru} lru_seconds_idle:{idle}{extra}",
        value as *const Value,
        crate::rdb::write::saved_len(value, compress),
    )
    .into()))
}

fn encoding_name(value: &Value) -> &'static str {
    match value {
        Value::List(l) => l.encoding_name(),
        Value::Zset(z) => z.encoding().name(),
        Value::Hash(h) => h.encoding_name(),
        Value::Set(set) => set.encoding_name(),
        Value::String(v) => v.encoding_name(),
    }
}

/// DEBUG SDSLEN: the key's and the value's SDS figures for a string held as an
/// SDS (embstr or raw).
fn sdslen(s: &mut Server, a: &Args) -> CmdResult {
    let key = a.bytes(2);
    let slot = s.keyspace.has_expire_slot(key);
    let Some((value, _, _)) = s.keyspace.peek_entry(key) else {
        return Err(Reply::error("ERR no such key"));
    };
    match value {
        Value::String(v) => v
            .debug_sdslen(key.len(), slot)
            .map(|l| Reply::Status(l.into()))
            .ok_or_else(|| Reply::error("ERR Not an sds encoded string.")),
        _ => Err(Reply::error("ERR Not an sds encoded string.")),
    }
}

/// `computeDatasetDigest` over the 16 databases.
fn dataset_digest(s: &mut Server) -> digest::Digest {
    let mut out = [0u8; 20];
    for db in 0..crate::server::DATABASES {
        let keys: Vec<_> = s
            .db_mut(db)
            .entries_with_expiry()
            .map(|(k, v, t)| (k, v, t.is_some()))
            .collect();
        digest::push_db(&mut out, db, &keys);
    }
    out
}

/// DEBUG DIGEST-VALUE key ...: each key's value digest (20 zero bytes for a
/// missing key), logically expired keys included.
fn digest_value(s: &mut Server, a: &Args) -> Reply {
    let mut out = Vec::new();
    for j in 2..a.len() {
        let mut d = [0u8; 20];
        if let Some((value, deadline, _)) = s.keyspace.peek_entry(a.bytes(j)) {
            digest::object_digest(&mut d, value, deadline.is_some());
        }
        out.push(Reply::Status(digest::hex(&d).into()));
    }
    Reply::Array(out)
}

fn listpack(s: &mut Server, a: &Args) -> CmdResult {
    let encoding = match s.keyspace.get(a.bytes(2)) {
        None => return Err(Reply::error("ERR no such key")),
        Some(Value::List(l)) => l.encoding_name(),
        Some(Value::Zset(z)) => z.encoding().name(),
        Some(Value::Hash(h)) => h.encoding_name(),
        Some(Value::Set(set)) => set.encoding_name(),
        Some(Value::String(v)) => v.encoding_name(),
    };
    if encoding == "listpack" || encoding == "listpackex" {
        Ok(Reply::Status("Listpack structure printed on stdout".into()))
    } else {
        Err(Reply::error("ERR Not a listpack encoded object."))
    }
}

/// DEBUG PROTOCOL <type>: one reply of each kind, as Redis sends it.
fn protocol(c: &mut Client, a: &Args) -> CmdResult {
    let name = String::from_utf8_lossy(a.bytes(2)).to_ascii_lowercase();
    let ints = |n: i64| (0..n).map(Reply::Integer).collect::<Vec<_>>();
    Ok(match name.as_str() {
        "string" => Reply::bulk("Hello World"),
        "integer" => Reply::Integer(12345),
        // Redis sends this literal, not π.
        #[allow(clippy::approx_constant)]
        "double" => Reply::Double(3.141),
        "bignum" => Reply::BigNumber("1234567999999999999999999999999999999".into()),
        "null" => Reply::Nil,
        "array" => Reply::Array(ints(3)),
        "set" => Reply::Set(ints(3)),
        "map" => Reply::Map(
            (0..3)
                .map(|j| (Reply::Integer(j), Reply::Bool(j == 1)))
                .collect(),
        ),
        "attrib" => Reply::Attributed(
            vec![(
                Reply::bulk("key-popularity"),
                Reply::Array(vec![Reply::bulk("key:123"), Reply::Integer(90)]),
            )],
            Box::new(Reply::bulk("Some real reply following the attribute")),
        ),
        "push" => {
            if c.protocol == Protocol::Resp2 {
                return Err(Reply::error("ERR RESP2 is not supported by this command"));
            }
            // Out of band first, then a normal reply for clients that skip pushes.
            c.push(&Reply::Push(vec![
                Reply::bulk("server-cpu-usage"),
                Reply::Integer(42),
            ]));
            Reply::bulk("Some real reply following the push reply")
        }
        "true" => Reply::Bool(true),
        "false" => Reply::Bool(false),
        "verbatim" => Reply::Verbatim("This is a verbatim\nstring".into()),
        _ => {
            return Err(Reply::error(
                "ERR Wrong protocol type name. Please use one of the following: string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false",
            ))
        }
    })
}

fn help() -> Reply {
    let lines = [
        "DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CHANGE-REPL-ID",
        "    Change the replication IDs of the instance (nothing to change on the core).",
        "DIGEST",
        "    Output a hex signature representing the current DB content.",
        "DIGEST-VALUE <key> [<key> ...]",
        "    Output a hex signature of the values of all the specified keys.",
        "ERROR <string>",
        "    Return a Redis protocol error with <string> as message.",
        "LISTPACK <key>",
        "    Show low level info about the ziplist encoding of <key>.",
        "LOG <message>",
        "    Write <message> to the server log.",
        "OBJECT <key>",
        "    Show low level info about the <key> and associated value.",
        "PROTOCOL <type>",
        "    Reply with a test value of the specified type. <type> can be: string,",
        "    integer, double, bignum, null, array, set, map, attrib, push, verbatim,",
        "    true, false.",
        "QUICKLIST-PACKED-THRESHOLD <size>",
        "    Sets the threshold for elements to be inserted as plain vs packed nodes",
        "RELOAD [MERGE] [NOFLUSH] [NOSAVE]",
        "    Save the RDB on disk and reload it back to memory (the core: an RDB image",
        "    in memory).",
        "SDSLEN <key>",
        "    Show low level SDS string info representing <key> and value.",
        "SET-ACTIVE-EXPIRE <0|1>",
        "    Setting it to 0 disables expiring keys in background when they are not",
        "    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
        "    default.",
        "SET-DISABLE-DENY-SCRIPTS <0|1>",
        "    Let scripts call commands that are normally denied in scripts (1), or not (0).",
        "SLEEP <seconds>",
        "    Stop the server for <seconds>. Decimals allowed.",
        "HELP",
        "    Print this help.",
    ];
    Reply::Array(lines.iter().map(|l| Reply::Status((*l).into())).collect())
}

#[cfg(test)]
mod tests {
    use crate::reply::Protocol;
    use crate::{Reply, Server};

    /// scripting.tcl's RESP parsing tests reach DEBUG PROTOCOL from Lua this way.
    #[test]
    fn deny_scripts_can_be_lifted_for_debug_protocol() {
        let mut s = Server::new();
        let script = "return redis.call('debug', 'protocol', 'true')";
        let refused = s.cmd(&["EVAL", script, "0"]);
        assert!(
            matches!(&refused, Reply::Error(e) if e.contains("not allowed from script")),
            "{refused:?}"
        );
        assert_eq!(
            s.cmd(&["DEBUG", "SET-DISABLE-DENY-SCRIPTS", "1"]),
            Reply::ok()
        );
        assert_eq!(s.cmd(&["EVAL", script, "0"]), Reply::Integer(1));
        s.cmd(&["DEBUG", "SET-DISABLE-DENY-SCRIPTS", "0"]);
        assert!(matches!(s.cmd(&["EVAL", script, "0"]), Reply::Error(_)));
    }

    #[test]
    fn protocol_replies_in_both_protocols() {
        let mut s = Server::new();
        let r = s.cmd(&["DEBUG", "PROTOCOL", "attrib"]);
        let mut two = Vec::new();
        r.encode(&mut two, Protocol::Resp2);
        assert_eq!(two, b"$39\r\nSome real reply following the attribute\r\n");
        let mut three = Vec::new();
        r.encode(&mut three, Protocol::Resp3);
        assert_eq!(
            String::from_utf8(three).unwrap(),
            "|1\r\n$14\r\nkey-popularity\r\n*2\r\n$7\r\nkey:123\r\n:90\r\n$39\r\nSome real reply following the attribute\r\n"
        );
        assert_eq!(
            s.cmd(&["DEBUG", "PROTOCOL", "push"]),
            Reply::error("ERR RESP2 is not supported by this command")
        );
        assert_eq!(
            s.cmd(&["DEBUG", "NOPE"]),
            Reply::error(
                "ERR unknown subcommand or wrong number of arguments for 'NOPE'. Try DEBUG HELP."
            )
        );
    }

    #[test]
    fn set_active_expire_turns_the_cycle_off() {
        let mut s = Server::new();
        assert_eq!(s.cmd(&["DEBUG", "SET-ACTIVE-EXPIRE", "0"]), Reply::ok());
        assert!(!s.config.active_expire);
        s.cmd(&["SET", "k", "v", "PX", "1"]);
        std::thread::sleep(std::time::Duration::from_millis(5));
        s.active_expire_cycle();
        assert_eq!(s.db(0).len(), 1);
        s.cmd(&["DEBUG", "SET-ACTIVE-EXPIRE", "1"]);
        s.active_expire_cycle();
        assert_eq!(s.db(0).len(), 0);
    }

    #[test]
    fn the_packed_threshold_makes_plain_nodes() {
        let mut s = Server::new();
        let err = |t: &str| Reply::error(t);
        assert_eq!(
            s.cmd(&["DEBUG", "QUICKLIST-PACKED-THRESHOLD", "5gb"]),
            err("ERR argument must be a memory value bigger than 1 and smaller than 4gb")
        );
        assert_eq!(
            s.cmd(&["debug", "quicklist-packed-threshold"]),
            err("ERR unknown subcommand or wrong number of arguments for 'quicklist-packed-threshold'. Try DEBUG HELP.")
        );
        assert_eq!(
            s.cmd(&["DEBUG", "QUICKLIST-PACKED-THRESHOLD", "10b"]),
            Reply::ok()
        );
        s.cmd(&["CONFIG", "SET", "list-max-listpack-size", "1"]);
        s.cmd(&["RPUSH", "l", "short", "0123456789"]);
        // The 10-byte element has a node of its own: 48 + 2 * 40 + (7 + 7) + 10.
        assert_eq!(
            s.cmd(&["OBJECT", "ENCODING", "l"]),
            Reply::bulk("quicklist")
        );
        assert_eq!(
            s.cmd(&["MEMORY", "USAGE", "l"]),
            Reply::Integer(24 + 48 + 80 + 14 + 10)
        );
        assert_eq!(
            s.cmd(&["DEBUG", "QUICKLIST-PACKED-THRESHOLD", "0"]),
            Reply::ok()
        );
        assert_eq!(
            s.cmd(&["DEBUG", "LISTPACK", "l"]),
            err("ERR Not a listpack encoded object.")
        );
        assert_eq!(
            s.cmd(&["DEBUG", "LISTPACK", "nokey"]),
            err("ERR no such key")
        );
        assert_eq!(
            s.cmd(&["DEBUG", "NOPE"]),
            err("ERR unknown subcommand or wrong number of arguments for 'NOPE'. Try DEBUG HELP.")
        );
    }
}
