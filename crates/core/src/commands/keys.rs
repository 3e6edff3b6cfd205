//! Commands that move, copy or pick keys (db.c, expire.c): RENAME, RENAMENX,
//! COPY, MOVE, SWAPDB, RANDOMKEY, KEYS and TOUCH.
//!
//! As in Redis, a key that changes name or database is a new key object
//! (`dbAddInternal`): its value and TTL travel, its LRU/LFU field starts afresh,
//! and an embedded string is re-embedded beside its new name if it fits. COPY
//! duplicates the value the way each type's `*Dup` function does. SWAPDB swaps
//! the data of two databases while clients and WATCHed keys stay with the
//! database numbers. RANDOMKEY is Redis's "fair" random key over the key table
//! (biased towards keys after empty buckets), deleting expired keys it lands on;
//! KEYS walks the whole table and leaves expired keys out without deleting them.

use super::{flags::*, Args, CmdResult, CommandSpec, Server};
use crate::glob::glob_match;
use crate::keyspace::now_ms;
use crate::reply::{errors, Reply};
use crate::server::notify;
use crate::server::DATABASES;

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec::new("rename", 3, rename)
        .flags(WRITE)
        .keys(1, 2, 1)
        .doc(
            "1.0.0",
            "Gives a key a new name, its TTL included, replacing any key of that name.",
            "key newkey",
        ),
    CommandSpec::new("renamenx", 3, renamenx)
        .flags(WRITE | FAST)
        .keys(1, 2, 1)
        .doc(
            "1.0.0",
            "Gives a key a new name unless a key of that name exists.",
            "key newkey",
        ),
    CommandSpec::new("copy", -3, copy)
        .flags(WRITE | DENYOOM)
        .keys(1, 2, 1)
        .doc(
            "6.2.0",
            "Duplicates a key's value and TTL under another name, possibly in another database.",
            "source destination [DB destination-db] [REPLACE]",
        ),
    CommandSpec::new("move", 3, move_key)
        .flags(WRITE | FAST)
        .keys(1, 1, 1)
        .doc(
            "1.0.0",
            "Transfers a key to another database unless it exists there.",
            "key db",
        ),
    CommandSpec::new("swapdb", 3, swapdb)
        .flags(WRITE | FAST)
        .acl(&["@keyspace", "@dangerous"])
        .doc(
            "4.0.0",
            "Exchanges the contents of two databases; connected clients see the change at once.",
            "index1 index2",
        ),
    CommandSpec::new("randomkey", 1, randomkey)
        .flags(READONLY)
        .doc(
            "1.0.0",
            "Picks a live key of the selected database at random.",
            "",
        ),
    CommandSpec::new("keys", 2, keys)
        .flags(READONLY)
        .acl(&["@keyspace", "@dangerous"])
        .doc(
            "1.0.0",
            "Lists every live key matching a glob-style pattern, in one blocking walk.",
            "pattern",
        ),
    CommandSpec::new("touch", -2, touch)
        .flags(READONLY | FAST)
        .keys(1, -1, 1)
        .doc(
            "3.2.1",
            "Counts the given keys that exist, marking each as just accessed.",
            "key [key ...]",
        ),
];

/// `getIntFromObjectOrReply`: a 32-bit integer, with Redis's two errors (or
/// the command's own message for both).
pub(crate) fn int32_arg(a: &Args, i: usize, msg: Option<&str>) -> Result<i64, Reply> {
    let err = |default: &str| Reply::error(msg.unwrap_or(default).to_string());
    let v = crate::num::parse_i64(a.bytes(i)).ok_or_else(|| err(errors::NOT_INTEGER))?;
    if v < i64::from(i32::MIN) || v > i64::from(i32::MAX) {
        return Err(err(
            "ERR value is out of range, value must between -2147483648 and 2147483647",
        ));
    }
    Ok(v)
}

/// A database index that must name one of the 16 (`selectDb`).
fn db_index(id: i64) -> Result<usize, Reply> {
    if (0..DATABASES as i64).contains(&id) {
        Ok(id as usize)
    } else {
        Err(Reply::error("ERR DB index is out of range"))
    }
}

const SAME_OBJECT: &str = "ERR source and destination objects are the same";

fn rename(s: &mut Server, a: &Args) -> CmdResult {
    rename_generic(s, a, false)
}

fn renamenx(s: &mut Server, a: &Args) -> CmdResult {
    rename_generic(s, a, true)
}

/// `renameGenericCommand`: the source must exist (even when both names are
/// the same, which then changes nothing); RENAME deletes an existing
/// destination first, RENAMENX gives up (0).
fn rename_generic(s: &mut Server, a: &Args, nx: bool) -> CmdResult {
    let (from, to) = (a.bytes(1), a.bytes(2));
    let done = |ok: bool| {
        if nx {
            Reply::Integer(i64::from(ok))
        } else {
            Reply::ok()
        }
    };
    if !s.keyspace.lookup_write(from) {
        return Err(Reply::error("ERR no such key"));
    }
    if from == to {
        return Ok(done(false));
    }
    let mut replaced = None;
    if s.keyspace.lookup_write(to) {
        if nx {
            return Ok(Reply::Integer(0));
        }
        replaced = s.keyspace.peek(to).map(|v| v.type_name());
        s.keyspace.remove(to);
    }
    let moved = s.keyspace.peek(from).map(|v| v.type_name());
    s.keyspace.rename(from, to);
    s.notify_here(notify::GENERIC, "rename_from", from);
    s.notify_here(notify::GENERIC, "rename_to", to);
    if let Some(old) = replaced {
        s.notify_here(notify::OVERWRITTEN, "overwritten", to);
        if Some(old) != moved {
            s.notify_here(notify::TYPE_CHANGED, "type_changed", to);
        }
    }
    Ok(done(true))
}

/// `copyCommand`: options first (`DB n`, `REPLACE`, in any order), then the
/// same-object check, then the source (read), then the destination.
fn copy(s: &mut Server, a: &Args) -> CmdResult {
    let src_db = s.current_db();
    let mut dst_db = src_db;
    let mut replace = false;
    let mut j = 3;
    while j < a.len() {
        let additional = a.len() - j - 1;
        if a.is(j, "replace") {
            replace = true;
        } else if a.is(j, "db") && additional >= 1 {
            dst_db = db_index(int32_arg(a, j + 1, None)?)?;
            j += 1;
        } else {
            return Err(Reply::error(errors::SYNTAX));
        }
        j += 1;
    }
    let (key, newkey) = (a.bytes(1), a.bytes(2));
    if src_db == dst_db && key == newkey {
        return Err(Reply::error(SAME_OBJECT));
    }
    let Some(value) = s.keyspace.lookup_read(key) else {
        return Ok(Reply::Integer(0));
    };
    let copy = value.dup(newkey.len());
    let new_type = copy.type_name();
    let deadline = s.keyspace.expiry(key).flatten();
    let dst = s.db_mut(dst_db);
    let mut replaced = None;
    if dst.lookup_write(newkey) {
        if !replace {
            return Ok(Reply::Integer(0));
        }
        replaced = dst.peek(newkey).map(|v| v.type_name());
        dst.remove(newkey);
    }
    dst.put(newkey, copy, deadline);
    // The write path only records WATCHes of the selected database.
    if dst_db != src_db {
        dst.watches.touch(newkey);
    }
    s.notify(notify::GENERIC, "copy_to", newkey, dst_db);
    if let Some(old) = replaced {
        s.notify(notify::OVERWRITTEN, "overwritten", newkey, dst_db);
        if old != new_type {
            s.notify(notify::TYPE_CHANGED, "type_changed", newkey, dst_db);
        }
    }
    Ok(Reply::Integer(1))
}

/// `moveCommand`: the index is checked before the key; the same database is
/// an error; a key that exists in the target stays where it is (0).
fn move_key(s: &mut Server, a: &Args) -> CmdResult {
    let src_db = s.current_db();
    let dst_db = db_index(int32_arg(a, 2, None)?)?;
    if dst_db == src_db {
        return Err(Reply::error(SAME_OBJECT));
    }
    let key = a.bytes(1);
    if !s.keyspace.lookup_write(key) || s.db_mut(dst_db).lookup_write(key) {
        return Ok(Reply::Integer(0));
    }
    let Some((value, deadline)) = s.keyspace.take(key) else {
        return Ok(Reply::Integer(0));
    };
    let dst = s.db_mut(dst_db);
    dst.put(key, value, deadline);
    dst.watches.touch(key);
    s.notify(notify::GENERIC, "move_from", key, src_db);
    s.notify(notify::GENERIC, "move_to", key, dst_db);
    Ok(Reply::Integer(1))
}

fn swapdb(s: &mut Server, a: &Args) -> CmdResult {
    let first = int32_arg(a, 1, Some("ERR invalid first DB index"))?;
    let second = int32_arg(a, 2, Some("ERR invalid second DB index"))?;
    let (first, second) = (db_index(first)?, db_index(second)?);
    s.swap_dbs(first, second);
    Ok(Reply::ok())
}

fn randomkey(s: &mut Server, _: &Args) -> CmdResult {
    Ok(match s.keyspace.random_key(&mut s.rng) {
        Some(key) => Reply::bulk_vec(key),
        None => Reply::Nil,
    })
}

/// `keysCommand`: every key in table order that matches and is not past its
/// deadline (expired keys are skipped, not deleted).
fn keys(s: &mut Server, a: &Args) -> CmdResult {
    let pattern = a.bytes(1);
    let all = pattern == b"*";
    let now = now_ms();
    let found: Vec<Reply> = s
        .keyspace
        .live_keys(now)
        .filter(|k| all || glob_match(pattern, k))
        .map(Reply::bulk)
        .collect();
    Ok(Reply::Array(found))
}

/// `touchCommand`: a read lookup per key (CLIENT NO-TOUCH does not stop this
/// one), counting the keys found.
fn touch(s: &mut Server, a: &Args) -> CmdResult {
    let found = (1..a.len())
        .filter(|&i| s.keyspace.get(a.bytes(i)).is_some())
        .count();
    Ok(Reply::Integer(found as i64))
}

#[cfg(test)]
mod tests {
    use crate::server::ConnectInfo;
    use crate::{Reply, Server};

    fn argv(words: &[&str]) -> Vec<Vec<u8>> {
        words.iter().map(|w| w.as_bytes().to_vec()).collect()
    }

    fn err(text: &str) -> Reply {
        Reply::error(text)
    }

    #[test]
    fn rename_moves_value_and_ttl() {
        let mut s = Server::new();
        assert_eq!(s.cmd(&["RENAME", "a", "b"]), err("ERR no such key"));
        assert_eq!(s.cmd(&["RENAMENX", "a", "a"]), err("ERR no such key"));
        s.cmd(&["SET", "a", "1", "EX", "100"]);
        assert_eq!(s.cmd(&["RENAME", "a", "a"]), Reply::ok());
        assert_eq!(s.cmd(&["RENAMENX", "a", "a"]), Reply::Integer(0));
        s.cmd(&["SET", "b", "2"]);
        assert_eq!(s.cmd(&["RENAMENX", "a", "b"]), Reply::Integer(0));
        assert_eq!(s.cmd(&["RENAME", "a", "b"]), Reply::ok());
        assert_eq!(s.cmd(&["GET", "b"]), Reply::bulk("1"));
        assert_eq!(s.cmd(&["TTL", "b"]), Reply::Integer(100));
        assert_eq!(s.cmd(&["EXISTS", "a"]), Reply::Integer(0));
        // The destination's own TTL does not survive.
        s.cmd(&["SET", "c", "3", "EX", "50"]);
        s.cmd(&["SET", "d", "4"]);
        assert_eq!(s.cmd(&["RENAMENX", "d", "e"]), Reply::Integer(1));
        assert_eq!(s.cmd(&["RENAME", "e", "c"]), Reply::ok());
        assert_eq!(s.cmd(&["TTL", "c"]), Reply::Integer(-1));
    }

    #[test]
    fn copy_duplicates_every_type_independently() {
        let mut s = Server::new();
        s.cmd(&["SET", "str", "hello", "PX", "100000"]);
        s.cmd(&["SADD", "set", "1", "2", "x"]);
        s.cmd(&["ZADD", "z", "1", "a", "2.5", "b"]);
        s.cmd(&["HSET", "h", "f", "v"]);
        for (src, dst) in [("str", "str2"), ("set", "set2"), ("z", "z2"), ("h", "h2")] {
            assert_eq!(s.cmd(&["COPY", src, dst]), Reply::Integer(1), "{src}");
            assert_eq!(s.cmd(&["COPY", src, dst]), Reply::Integer(0), "{src}");
            assert_eq!(s.cmd(&["COPY", src, dst, "REPLACE"]), Reply::Integer(1));
        }
        assert!(matches!(s.cmd(&["PTTL", "str2"]), Reply::Integer(n) if n > 99_000));
        s.cmd(&["SADD", "set2", "y"]);
        s.cmd(&["ZADD", "z2", "9", "c"]);
        s.cmd(&["HSET", "h2", "g", "w"]);
        assert_eq!(s.cmd(&["SCARD", "set"]), Reply::Integer(3));
        assert_eq!(s.cmd(&["ZCARD", "z"]), Reply::Integer(2));
        assert_eq!(s.cmd(&["HLEN", "h"]), Reply::Integer(1));
        assert_eq!(s.cmd(&["ZSCORE", "z2", "b"]), Reply::Double(2.5));
        // Another database, and the errors in Redis's order.
        assert_eq!(s.cmd(&["COPY", "str", "str", "DB", "3"]), Reply::Integer(1));
        assert_eq!(s.cmd(&["COPY", "str", "str"]), err(super::SAME_OBJECT));
        assert_eq!(
            s.cmd(&["COPY", "str", "str", "DB", "0"]),
            err(super::SAME_OBJECT)
        );
        assert_eq!(
            s.cmd(&["COPY", "str", "x", "DB", "16"]),
            err("ERR DB index is out of range")
        );
        assert_eq!(s.cmd(&["COPY", "str", "x", "DB"]), err("ERR syntax error"));
        assert_eq!(
            s.cmd(&["COPY", "str", "x", "DB", "y"]),
            err("ERR value is not an integer or out of range")
        );
        assert_eq!(s.cmd(&["COPY", "nokey", "x"]), Reply::Integer(0));
        s.cmd(&["SELECT", "3"]);
        assert_eq!(s.cmd(&["GET", "str"]), Reply::bulk("hello"));
    }

    #[test]
    fn move_and_its_errors() {
        let mut s = Server::new();
        s.cmd(&["SET", "k", "v", "EX", "100"]);
        assert_eq!(s.cmd(&["MOVE", "k", "0"]), err(super::SAME_OBJECT));
        assert_eq!(
            s.cmd(&["MOVE", "k", "99999999999"]),
            err("ERR value is out of range, value must between -2147483648 and 2147483647")
        );
        assert_eq!(
            s.cmd(&["MOVE", "k", "-1"]),
            err("ERR DB index is out of range")
        );
        assert_eq!(s.cmd(&["MOVE", "nokey", "1"]), Reply::Integer(0));
        assert_eq!(s.cmd(&["MOVE", "k", "1"]), Reply::Integer(1));
        assert_eq!(s.cmd(&["EXISTS", "k"]), Reply::Integer(0));
        s.cmd(&["SET", "k", "again"]);
        assert_eq!(s.cmd(&["MOVE", "k", "1"]), Reply::Integer(0));
        s.cmd(&["SELECT", "1"]);
        assert_eq!(s.cmd(&["GET", "k"]), Reply::bulk("v"));
        assert_eq!(s.cmd(&["TTL", "k"]), Reply::Integer(100));
    }

    #[test]
    fn swapdb_swaps_data_not_clients_and_touches_watches() {
        let mut s = Server::new();
        let a = s.connect(ConnectInfo::in_process());
        let b = s.connect(ConnectInfo::in_process());
        s.call(a, &argv(&["SET", "in0", "x"]));
        s.call(b, &argv(&["SELECT", "1"]));
        s.call(b, &argv(&["SET", "in1", "y"]));
        s.call(a, &argv(&["WATCH", "in1"]));
        assert_eq!(
            s.call(b, &argv(&["SWAPDB", "x", "1"])),
            err("ERR invalid first DB index")
        );
        assert_eq!(
            s.call(b, &argv(&["SWAPDB", "0", "16"])),
            err("ERR DB index is out of range")
        );
        assert_eq!(s.call(b, &argv(&["SWAPDB", "0", "1"])), Reply::ok());
        // Each client is still in its database, which now holds the other data.
        assert_eq!(s.call(a, &argv(&["GET", "in1"])), Reply::bulk("y"));
        assert_eq!(s.call(b, &argv(&["GET", "in0"])), Reply::bulk("x"));
        // `in1` did not exist in db 0 but does after the swap: modified.
        s.call(a, &argv(&["MULTI"]));
        s.call(a, &argv(&["PING"]));
        assert_eq!(s.call(a, &argv(&["EXEC"])), Reply::NilArray);
        // A key missing from both databases is not.
        s.call(a, &argv(&["WATCH", "nowhere"]));
        s.call(b, &argv(&["SWAPDB", "1", "0"]));
        s.call(a, &argv(&["MULTI"]));
        s.call(a, &argv(&["PING"]));
        assert_eq!(
            s.call(a, &argv(&["EXEC"])),
            Reply::Array(vec![Reply::Status("PONG".into())])
        );
        assert_eq!(s.call(a, &argv(&["SWAPDB", "3", "3"])), Reply::ok());
    }

    #[test]
    fn randomkey_keys_and_touch() {
        let mut s = Server::new();
        assert_eq!(s.cmd(&["RANDOMKEY"]), Reply::Nil);
        assert_eq!(s.cmd(&["KEYS", "*"]), Reply::Array(vec![]));
        for k in ["key:1", "key:2", "other"] {
            s.cmd(&["SET", k, "v"]);
        }
        s.cmd(&["SET", "gone", "v", "PX", "1"]);
        std::thread::sleep(std::time::Duration::from_millis(5));
        let Reply::Array(mut found) = s.cmd(&["KEYS", "key:*"]) else {
            panic!()
        };
        found.sort_by_key(|r| format!("{r:?}"));
        assert_eq!(found, vec![Reply::bulk("key:1"), Reply::bulk("key:2")]);
        let Reply::Array(all) = s.cmd(&["KEYS", "*"]) else {
            panic!()
        };
        assert_eq!(all.len(), 3, "expired keys are left out");
        assert_eq!(s.cmd(&["DBSIZE"]), Reply::Integer(4), "but not deleted");
        for _ in 0..20 {
            assert!(matches!(s.cmd(&["RANDOMKEY"]), Reply::Bulk(k) if k.as_bytes() != b"gone"));
        }
        assert_eq!(
            s.cmd(&["TOUCH", "key:1", "nope", "other"]),
            Reply::Integer(2)
        );
    }
}
