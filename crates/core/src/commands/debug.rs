//! DEBUG (src/debug.c): the few subcommands the core has, one row each.
//!
//! Redis's DEBUG is a single command that dispatches on its first argument; the
//! core registers it as a container so each subcommand is its own row (which
//! makes COMMAND INFO list them as subcommands, where Redis lists none). A
//! subcommand given the wrong number of arguments answers Redis's `unknown
//! subcommand or wrong number of arguments` error, as Redis does.
//!
//! * `QUICKLIST-PACKED-THRESHOLD <size>`: from this size on, a list element
//!   gets a plain quicklist node of its own (Redis's test suite uses it to make
//!   plain nodes without gigabyte values). Per thread (Redis: per process),
//!   see [`crate::list::quicklist`].
//! * `RELOAD`: as after saving and loading the dataset, for lists (see
//!   [`reload`]).
//! * `LISTPACK <key>`: Redis prints the listpack on its stdout and answers a
//!   status; the core checks the key the same way and prints nothing.
//! * `SLEEP <seconds>`: blocks the server, as Redis's does.
//! * `SET-ACTIVE-EXPIRE <0|1>`: turns the active expire cycle off or on.

use super::{flags::*, Args, CmdResult, CommandSpec, Server};
use crate::keyspace::Value;
use crate::reply::Reply;

pub const COMMANDS: &[CommandSpec] = &[CommandSpec::container("debug", SUBCOMMANDS)
    .flags(ADMIN | NOSCRIPT | LOADING | STALE)
    .doc("1.0.0", "A container for debugging commands.", "")];

const DEBUG_FLAGS: u32 = ADMIN | NOSCRIPT | LOADING | STALE;

const SUBCOMMANDS: &[CommandSpec] = &[
    CommandSpec::new("quicklist-packed-threshold", -2, quicklist_packed_threshold)
        .flags(DEBUG_FLAGS)
        .doc(
            "7.0.0",
            "Sets the element size from which list elements get a node of their own.",
            "size",
        ),
    CommandSpec::new("reload", -2, reload)
        .flags(DEBUG_FLAGS)
        .doc(
            "1.0.0",
            "Saves and reloads the dataset (lists are rebuilt as loading builds them).",
            "[MERGE] [NOFLUSH] [NOSAVE]",
        ),
    CommandSpec::new("listpack", -2, listpack)
        .flags(DEBUG_FLAGS)
        .doc(
            "7.0.0",
            "Checks that a key is listpack-encoded (Redis also prints it).",
            "key",
        ),
    CommandSpec::new("sleep", -2, sleep).flags(DEBUG_FLAGS).doc(
        "1.0.0",
        "Stops the server for a number of seconds.",
        "seconds",
    ),
    CommandSpec::new("set-active-expire", -2, set_active_expire)
        .flags(DEBUG_FLAGS)
        .doc(
            "3.0.0",
            "Turns the active expire cycle off (0) or on.",
            "flag",
        ),
];

/// `addReplySubcommandSyntaxError`.
fn wrong_arguments(a: &Args) -> Reply {
    let sub = String::from_utf8_lossy(a.bytes(1));
    Reply::error(format!(
        "ERR unknown subcommand or wrong number of arguments for '{}'. Try DEBUG HELP.",
        crate::server::truncate(&sub, 128)
    ))
}

fn expect_args(a: &Args, n: usize) -> Result<(), Reply> {
    if a.len() == n {
        Ok(())
    } else {
        Err(wrong_arguments(a))
    }
}

fn quicklist_packed_threshold(_: &mut Server, a: &Args) -> CmdResult {
    expect_args(a, 3)?;
    let text = String::from_utf8_lossy(crate::num::c_str(a.bytes(2))).into_owned();
    let bytes = crate::server::config::parse_memory(&text)
        .filter(|&n| n >= 0)
        .map(|n| n as u64);
    match bytes {
        Some(n) if crate::list::quicklist::set_packed_threshold(n) => Ok(Reply::ok()),
        _ => Err(Reply::error(
            "ERR argument must be a memory value bigger than 1 and smaller than 4gb",
        )),
    }
}

/// DEBUG RELOAD: what saving and loading an RDB file changes. Keys past their
/// TTL are not loaded, and every list is rebuilt as `rdbLoadObject` builds it
/// (with the current `list-max-listpack-size`, see [`crate::list::List::reloaded`]).
/// Other types are kept as they are (their loaders are not modelled), and the
/// options are checked but all behave like a plain reload.
fn reload(s: &mut Server, a: &Args) -> CmdResult {
    for j in 2..a.len() {
        if !(a.is(j, "merge") || a.is(j, "noflush") || a.is(j, "nosave")) {
            return Err(Reply::error(
                "ERR DEBUG RELOAD only supports the MERGE, NOFLUSH and NOSAVE options.",
            ));
        }
    }
    let cfg = crate::list::ListConfig::of(&s.config);
    for db in 0..crate::server::DATABASES {
        let ks = s.db_mut(db);
        let keys: Vec<Vec<u8>> = ks.keys().map(<[u8]>::to_vec).collect();
        for key in keys {
            // The lookup drops a key whose TTL has passed, as loading skips it.
            if let Some(Value::List(l)) = ks.get_mut(&key) {
                **l = l.reloaded(cfg);
            }
        }
    }
    Ok(Reply::ok())
}

fn listpack(s: &mut Server, a: &Args) -> CmdResult {
    expect_args(a, 3)?;
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

fn sleep(_: &mut Server, a: &Args) -> CmdResult {
    expect_args(a, 3)?;
    let (seconds, _) = crate::num::strtod_prefix(a.bytes(2));
    // `long long utime = dtime * 1000000`; nanosleep refuses negative times.
    let micros = seconds * 1_000_000.0;
    if micros >= 1.0 && micros.is_finite() {
        std::thread::sleep(std::time::Duration::from_micros(micros as u64));
    }
    Ok(Reply::ok())
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

fn set_active_expire(s: &mut Server, a: &Args) -> CmdResult {
    expect_args(a, 3)?;
    s.config.active_expire = atoi(a.bytes(2)) as i32 != 0;
    Ok(Reply::ok())
}

#[cfg(test)]
mod tests {
    use crate::{Reply, Server};

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
            err("ERR unknown subcommand 'NOPE'. Try DEBUG HELP.")
        );
    }
}
