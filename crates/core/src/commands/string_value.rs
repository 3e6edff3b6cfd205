//! The string value as the commands reach it: one home for the helpers that
//! t_string.c, bitops.c and hyperloglog.c share in Redis (they live in db.c and
//! object.c there).
//!
//! * [`lookup`]: `lookupKeyRead`/`lookupKeyWrite` + `checkType(OBJ_STRING)`: the
//!   value, `None` for a missing key, WRONGTYPE for any other type;
//! * [`store`]: `setKey` / `dbReplaceValue` with Redis's object-reuse rule: the
//!   key's old object is kept (and its content swapped) only when the old value
//!   and the new object are both unshared and not embstr. Which object survives
//!   decides whether the key object has an expiry slot, so MEMORY USAGE sees it;
//! * [`store_int`]: INCR's shortcut, an int-encoded value changed in place;
//! * [`unshare`]: `dbUnshareStringValue`, the raw SDS of its own that APPEND,
//!   SETRANGE, SETBIT, BITFIELD and the HLL commands edit in place (an int or
//!   embstr value is first copied into an exact-size raw SDS);
//! * [`writable_bits`]: `lookupStringForBitCommand`, a raw SDS long enough for a
//!   bit offset, created exactly or grown greedily;
//! * [`check_length`]: `checkStringLength` against the configured
//!   `proto-max-bulk-len`.
//!
//! How it differs from the C code: Redis decides sharing by reference counts
//! (shared integers, argv objects kept by the client); the core has no shared
//! objects under a key, so "shared or encoded" is just "not raw", and the
//! argument object's own sharing ([`ArgObject::swappable`]) is all the reuse rule
//! needs.

use super::Server;
use crate::keyspace::Value;
use crate::reply::{errors, Reply};
use crate::sds::Sds;
use crate::strings::{ArgObject, StringValue};

/// The string at `key`: `Ok(None)` if missing, WRONGTYPE if another type.
pub(crate) fn lookup<'s>(s: &'s mut Server, key: &[u8]) -> Result<Option<&'s StringValue>, Reply> {
    match s.keyspace.get(key) {
        None => Ok(None),
        Some(Value::String(v)) => Ok(Some(v)),
        Some(_) => Err(Reply::error(errors::WRONGTYPE)),
    }
}

/// [`lookup`] for a read Redis does with `lookupKeyRead` inside a write command
/// (GETDEL, GETEX, SET ... GET, BITOP's and PFMERGE's sources): counted as a
/// hit or a miss (and a `keymiss` event) whatever the command.
pub(crate) fn lookup_source<'s>(
    s: &'s mut Server,
    key: &[u8],
) -> Result<Option<&'s StringValue>, Reply> {
    match s.keyspace.lookup_read(key) {
        None => Ok(None),
        Some(Value::String(v)) => Ok(Some(v)),
        Some(_) => Err(Reply::error(errors::WRONGTYPE)),
    }
}

/// The bytes of the string at `key` (an int printed), `None` if missing.
pub(crate) fn read_bytes(s: &mut Server, key: &[u8]) -> Result<Option<Vec<u8>>, Reply> {
    Ok(lookup(s, key)?.map(|v| v.bytes().into_owned()))
}

/// `setKey` / `dbReplaceValue` for a string: Redis keeps the key's old object
/// when both the old value and the new object are unshared and not embstr.
pub(crate) fn store(s: &mut Server, key: &[u8], obj: ArgObject, keep_ttl: bool) {
    s.keyspace.set_with(key, keep_ttl, |old| {
        let old_allows = !matches!(old, Some(Value::String(StringValue::Embstr(_))));
        let reuse = old_allows && obj.swappable();
        (Value::String(obj.into_stored(key.len())), reuse)
    });
}

/// Stores an integer result: in place if the value already is an int (the TTL and
/// the key object stay), else as a new int object with the TTL kept.
pub(crate) fn store_int(s: &mut Server, key: &[u8], value: i64) {
    if let Some(Value::String(StringValue::Int(n))) = s.keyspace.get_mut(key) {
        *n = value;
        return;
    }
    store(s, key, ArgObject::int(value), true);
}

/// The raw SDS of the string at `key`, which the caller found (with [`lookup`])
/// to be a string: `dbUnshareStringValue`. `None` if the key holds no string
/// (a caller bug; the command then answers an error instead of panicking).
pub(crate) fn unshare<'s>(s: &'s mut Server, key: &[u8]) -> Option<&'s mut Sds> {
    let copy = match s.keyspace.get(key) {
        Some(Value::String(v)) => v.unshared(),
        _ => return None,
    };
    if let Some(obj) = copy {
        store(s, key, obj, true);
    }
    match s.keyspace.get_mut(key) {
        Some(Value::String(v)) => v.raw_mut(),
        _ => None,
    }
}

/// The fast path of the commands that edit a string in place (PFADD, SETBIT):
/// one search of the key table. If `key` holds a raw string (an SDS of its own,
/// what [`unshare`] would give without copying), `f` edits it; when `f` returns
/// `Some`, the lookup is recorded as the write it was (as `lookupKeyWrite` +
/// `dbUnshareStringValue`: WATCH notices, the write access). `None` — no key,
/// another type or encoding, or `f` declined — leaves the caller to take the
/// general path ([`lookup`], then [`unshare`] or [`add_raw`]), which answers
/// the errors.
pub(crate) fn edit_raw<R>(
    s: &mut Server,
    key: &[u8],
    f: impl FnOnce(&mut Sds) -> Option<R>,
) -> Option<R> {
    s.keyspace.modify(key, |v| match v {
        Some(Value::String(StringValue::Raw(sds))) => {
            let r = f(sds);
            let edited = r.is_some();
            (r, edited)
        }
        _ => (None, false),
    })
}

/// [`unshare`] for a key just checked, with the error a caller bug would get.
pub(crate) fn unshared<'s>(s: &'s mut Server, key: &[u8]) -> Result<&'s mut Sds, Reply> {
    unshare(s, key).ok_or_else(|| Reply::error(errors::WRONGTYPE))
}

/// A new key holding `sds` as a raw string (`dbAdd` of a fresh object), and that
/// SDS to edit.
pub(crate) fn add_raw<'s>(s: &'s mut Server, key: &[u8], sds: Sds) -> Result<&'s mut Sds, Reply> {
    store(s, key, ArgObject::Raw(sds), false);
    unshared(s, key)
}

/// `lookupStringForBitCommand`: the string at `key` as a raw SDS long enough to
/// address bit `maxbit` (which the caller bounded by `proto-max-bulk-len`),
/// created with exactly the bytes needed, or unshared and zero-padded with
/// SDS's greedy growth. Returns the SDS and whether it was created or grew.
pub(crate) fn writable_bits<'s>(
    s: &'s mut Server,
    key: &[u8],
    maxbit: u64,
) -> Result<(&'s mut Sds, bool), Reply> {
    let len = usize::try_from(maxbit >> 3)
        .ok()
        .and_then(|b| b.checked_add(1))
        .ok_or_else(|| Reply::error(LENGTH_ERROR))?;
    if lookup(s, key)?.is_none() {
        return Ok((add_raw(s, key, Sds::from_vec(vec![0; len]))?, true));
    }
    let sds = unshared(s, key)?;
    let old = sds.len();
    sds.grow_zero(len);
    let grew = sds.len() != old;
    Ok((sds, grew))
}

const LENGTH_ERROR: &str = "ERR string exceeds maximum allowed size (proto-max-bulk-len)";

/// `checkStringLength`: a string of `size + append` bytes must not pass
/// `proto-max-bulk-len`.
pub(crate) fn check_length(s: &Server, size: u64, append: u64) -> Result<(), Reply> {
    let limit = u64::try_from(s.config.proto_max_bulk_len).unwrap_or(0);
    match size.checked_add(append) {
        Some(total) if total <= limit => Ok(()),
        _ => Err(Reply::error(LENGTH_ERROR)),
    }
}

/// `proto-max-bulk-len` as bytes.
pub(crate) fn max_bulk_len(s: &Server) -> u64 {
    u64::try_from(s.config.proto_max_bulk_len).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unshare_makes_ints_and_embstrs_raw_and_keeps_the_ttl() {
        let mut s = Server::new();
        s.cmd(&["SET", "n", "12345", "EX", "100"]);
        s.cmd(&["SET", "e", "hello"]);
        for key in ["n", "e"] {
            let sds = unshare(&mut s, key.as_bytes()).expect("a string");
            assert_eq!(sds.alloc_size(), Sds::new(sds.as_bytes()).alloc_size());
            assert_eq!(
                s.cmd(&["OBJECT", "ENCODING", key]),
                Reply::bulk("raw"),
                "{key}"
            );
        }
        assert_eq!(s.cmd(&["TTL", "n"]), Reply::Integer(100));
        s.cmd(&["ZADD", "z", "1", "a"]);
        assert!(unshare(&mut s, b"z").is_none());
        assert!(unshare(&mut s, b"missing").is_none());
        assert_eq!(
            lookup(&mut s, b"z").err(),
            Some(Reply::error(errors::WRONGTYPE))
        );
    }

    #[test]
    fn check_length_follows_the_configured_limit() {
        let mut s = Server::new();
        assert!(check_length(&s, 512 << 20, 0).is_ok());
        assert!(check_length(&s, 512 << 20, 1).is_err());
        assert!(check_length(&s, u64::MAX, 2).is_err());
        s.cmd(&["CONFIG", "SET", "proto-max-bulk-len", "2mb"]);
        assert!(check_length(&s, 1 << 20, 1 << 20).is_ok());
        assert!(check_length(&s, 1 << 20, (1 << 20) + 1).is_err());
    }

    /// `server.dirty` moves as Redis moves it (bitops.tcl's "SETBIT/BITFIELD only
    /// increase dirty when the value changed", and the other string commands).
    #[test]
    fn changes_are_counted_like_redis() {
        let mut s = Server::new();
        let step = |s: &mut Server, cmd: &[&str], want: u64| {
            let before = s.dirty();
            s.cmd(cmd);
            assert_eq!(s.dirty() - before, want, "{cmd:?}");
        };
        step(&mut s, &["SETBIT", "foo", "0", "0"], 1);
        step(&mut s, &["BITFIELD", "foo2", "SET", "i5", "0", "0"], 1);
        step(&mut s, &["SETBIT", "foo", "0", "0"], 0);
        step(&mut s, &["BITFIELD", "foo2", "SET", "i5", "0", "0"], 0);
        step(&mut s, &["SETBIT", "foo", "0", "1"], 1);
        step(
            &mut s,
            &["BITFIELD", "foo2", "SET", "i5", "0", "1", "GET", "u8", "0"],
            1,
        );
        step(&mut s, &["BITFIELD", "foo3", "INCRBY", "i5", "0", "1"], 1);
        step(&mut s, &["BITFIELD", "foo3", "INCRBY", "i5", "0", "1"], 1);
        step(&mut s, &["SETBIT", "foo", "90", "0"], 1);
        step(
            &mut s,
            &[
                "BITFIELD", "foo2", "OVERFLOW", "FAIL", "SET", "u2", "100", "9",
            ],
            0,
        );
        step(&mut s, &["BITFIELD", "foo2", "GET", "u2", "100"], 0);
        step(&mut s, &["SET", "k", "v"], 1);
        step(&mut s, &["SET", "k", "v", "NX"], 0);
        step(&mut s, &["SET", "k", "v", "IFEQ", "other"], 0);
        step(&mut s, &["MSET", "a", "1", "b", "2", "c", "3"], 3);
        step(&mut s, &["MSETNX", "a", "1", "z", "2"], 0);
        step(&mut s, &["GETEX", "k"], 0);
        step(&mut s, &["GETEX", "k", "PERSIST"], 0);
        step(&mut s, &["GETEX", "k", "EX", "100"], 1);
        step(&mut s, &["GETEX", "k", "PERSIST"], 1);
        step(&mut s, &["GETDEL", "nokey"], 0);
        step(&mut s, &["SETRANGE", "k", "3", ""], 0);
        step(&mut s, &["DELEX", "k", "IFEQ", "nope"], 0);
        step(&mut s, &["DELEX", "k", "IFEQ", "v"], 1);
        step(&mut s, &["INCR", "n"], 1);
        step(&mut s, &["INCR", "k2", "x"], 0);
        step(&mut s, &["BITOP", "AND", "none", "missing"], 0);
        step(&mut s, &["PFADD", "h", "a", "b", "c"], 4);
        step(&mut s, &["PFADD", "h", "a"], 0);
        step(&mut s, &["PFCOUNT", "h"], 1);
        step(&mut s, &["PFCOUNT", "h"], 0);
        step(&mut s, &["PFDEBUG", "ENCODING", "h"], 0);
        step(&mut s, &["PFDEBUG", "TODENSE", "h"], 1);
        step(&mut s, &["PFDEBUG", "TODENSE", "h"], 0);
        step(&mut s, &["LCS", "a", "b"], 0);
    }
}
