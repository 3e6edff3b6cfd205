//! DUMP and RESTORE (cluster.c `dumpCommand`, `restoreCommand`): a value in
//! Redis's RDB serialization with the version and CRC64 footer, and back
//! ([`crate::rdb`]).
//!
//! RESTORE checks in Redis's order: the options (REPLACE, ABSTTL, IDLETIME s,
//! FREQ f; IDLETIME and FREQ exclude each other, the second is a syntax error),
//! then whether the key exists, then the TTL, then the footer, then the body.
//! A TTL already in the past (with ABSTTL, or a relative one that overflows)
//! deletes the old key under REPLACE, adds nothing and counts an expired key.
//! IDLETIME sets the LRU clock under an LRU policy, FREQ the LFU counter under
//! an LFU policy; each is ignored under the other policy, as in Redis.
//! Not modelled: keyspace notifications, command rewriting for propagation.

use super::{flags::*, Args, CmdResult, CommandSpec, Server};
use crate::keyspace::now_ms;
use crate::lru::{Policy, LRU_CLOCK_MAX};
use crate::rdb::{self, Options};
use crate::reply::{errors, Reply};
use crate::server::notify;

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec::new("dump", 2, dump)
        .flags(READONLY)
        .keys(1, 1, 1)
        .doc(
            "2.6.0",
            "Serializes a key's value in the RDB format, with a version and a checksum.",
            "key",
        ),
    CommandSpec::new("restore", -4, restore)
        .flags(WRITE | DENYOOM)
        .keys(1, 1, 1)
        .acl(&["@keyspace", "@dangerous"])
        .doc(
            "2.6.0",
            "Creates a key from a value serialized by DUMP.",
            "key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ frequency]",
        ),
];

fn dump(s: &mut Server, a: &Args) -> CmdResult {
    let compress = Options::of(&s.config).compress;
    match s.keyspace.lookup_read(a.bytes(1)) {
        None => Ok(Reply::Nil),
        Some(v) => Ok(Reply::bulk(rdb::dump_payload(v, compress))),
    }
}

fn restore(s: &mut Server, a: &Args) -> CmdResult {
    let (mut replace, mut absttl) = (false, false);
    let (mut idle, mut freq): (Option<i64>, Option<i64>) = (None, None);
    let mut j = 4;
    while j < a.len() {
        let additional = a.len() - j - 1;
        if a.is(j, "replace") {
            replace = true;
        } else if a.is(j, "absttl") {
            absttl = true;
        } else if a.is(j, "idletime") && additional >= 1 && freq.is_none() {
            let v = a.int(j + 1)?;
            if v < 0 {
                return Err(Reply::error("ERR Invalid IDLETIME value, must be >= 0"));
            }
            idle = Some(v);
            j += 1;
        } else if a.is(j, "freq") && additional >= 1 && idle.is_none() {
            let v = a.int(j + 1)?;
            if !(0..=255).contains(&v) {
                return Err(Reply::error(
                    "ERR Invalid FREQ value, must be >= 0 and <= 255",
                ));
            }
            freq = Some(v);
            j += 1;
        } else {
            return Err(Reply::error(errors::SYNTAX));
        }
        j += 1;
    }
    let key = a.bytes(1);
    if !replace && s.keyspace.lookup_write(key) {
        return Err(Reply::error("BUSYKEY Target key name already exists."));
    }
    let ttl = a.int(2)?;
    if ttl < 0 {
        return Err(Reply::error("ERR Invalid TTL value, must be >= 0"));
    }
    let payload = a.bytes(3);
    if !rdb::verify_payload(payload) {
        return Err(Reply::error(
            "ERR DUMP payload version or checksum are wrong",
        ));
    }
    let opts = Options::of(&s.config);
    let value = rdb::load_payload(payload, key.len(), &opts)
        .map_err(|_| Reply::error("ERR Bad data format"))?;
    let now = now_ms();
    let deadline = match ttl {
        0 => None,
        t if absttl => Some(t),
        t => Some(t.wrapping_add(now)),
    };
    // The old value's type, for the overwritten/type_changed events.
    let old = if replace {
        s.overwrite_probe(key)
    } else {
        None
    };
    let deleted = replace && s.keyspace.remove(key);
    if deadline.is_some_and(|t| t <= now) {
        if deleted {
            s.notify_here(notify::GENERIC, "del", key);
        }
        s.stats.expired_keys += 1;
        return Ok(Reply::ok());
    }
    s.keyspace.put(key, value, deadline);
    let access = s.keyspace.access();
    let field = match access.policy {
        Policy::Lfu { .. } => freq.map(|f| (access.clock.minutes << 8) | f as u32),
        Policy::Lru | Policy::Lrm => idle.map(|secs| {
            let abs = i64::from(access.clock.lru).wrapping_sub(secs);
            let abs = if abs < 0 {
                abs.wrapping_add(i64::from(LRU_CLOCK_MAX))
            } else {
                abs
            };
            (abs as u32) & LRU_CLOCK_MAX
        }),
    };
    if let Some(field) = field {
        s.keyspace.set_lru_field(key, field);
    }
    s.notify_here(notify::GENERIC, "restore", key);
    if deleted {
        s.notify_overwritten(key, old);
    }
    Ok(Reply::ok())
}

#[cfg(test)]
mod tests {
    use crate::{Reply, Server};

    fn dump(s: &mut Server, key: &str) -> Vec<u8> {
        match s.cmd(&["DUMP", key]) {
            Reply::Bulk(b) => b.into_vec(),
            other => panic!("{other:?}"),
        }
    }

    fn restore(s: &mut Server, args: &[&[u8]]) -> Reply {
        let mut argv: Vec<Vec<u8>> = vec![b"RESTORE".to_vec()];
        argv.extend(args.iter().map(|a| a.to_vec()));
        s.run(&argv)
    }

    #[test]
    fn strings_round_trip_with_redis_bytes() {
        let mut s = Server::new();
        s.cmd(&["SET", "k", "hello"]);
        let p = dump(&mut s, "k");
        // Type 0, length 5, "hello", version 13, CRC64 (Redis 8.6.3's bytes).
        assert_eq!(&p[..9], b"\x00\x05hello\x0d\x00");
        assert_eq!(p.len(), 17);
        assert_eq!(
            restore(&mut s, &[b"k", b"0", &p]),
            Reply::error("BUSYKEY Target key name already exists.")
        );
        assert_eq!(restore(&mut s, &[b"k2", b"0", &p]), Reply::ok());
        assert_eq!(s.cmd(&["GET", "k2"]), Reply::bulk("hello"));
        s.cmd(&["SET", "n", "-12345"]);
        assert_eq!(&dump(&mut s, "n")[..4], &[0, 0xc1, 0xc7, 0xcf]);
        assert_eq!(s.cmd(&["DUMP", "nokey"]), Reply::Nil);
    }

    #[test]
    fn restore_errors_in_redis_order() {
        let mut s = Server::new();
        s.cmd(&["SET", "k", "v"]);
        let p = dump(&mut s, "k");
        let e = Reply::error;
        assert_eq!(
            restore(&mut s, &[b"x", b"-1", &p]),
            e("ERR Invalid TTL value, must be >= 0")
        );
        assert_eq!(
            restore(&mut s, &[b"x", b"a", &p]),
            e("ERR value is not an integer or out of range")
        );
        assert_eq!(
            restore(&mut s, &[b"x", b"0", b"junk"]),
            e("ERR DUMP payload version or checksum are wrong")
        );
        assert_eq!(
            restore(&mut s, &[b"x", b"0", &p, b"idletime", b"-1"]),
            e("ERR Invalid IDLETIME value, must be >= 0")
        );
        assert_eq!(
            restore(&mut s, &[b"x", b"0", &p, b"freq", b"256"]),
            e("ERR Invalid FREQ value, must be >= 0 and <= 255")
        );
        assert_eq!(
            restore(&mut s, &[b"x", b"0", &p, b"idletime", b"1", b"freq", b"1"]),
            e("ERR syntax error")
        );
        let mut bad = p.clone();
        bad[0] = 99;
        let n = bad.len();
        let crc = crate::rdb::crc64::crc64(0, &bad[..n - 8]);
        bad[n - 8..].copy_from_slice(&crc.to_le_bytes());
        assert_eq!(
            restore(&mut s, &[b"x", b"0", &bad]),
            e("ERR Bad data format")
        );
        // An elapsed absolute TTL: OK, nothing added, the old key deleted.
        assert_eq!(
            restore(&mut s, &[b"k", b"1", &p, b"REPLACE", b"ABSTTL"]),
            Reply::ok()
        );
        assert_eq!(s.cmd(&["EXISTS", "k"]), Reply::Integer(0));
        assert_eq!(restore(&mut s, &[b"k", b"100000", &p]), Reply::ok());
        assert!(matches!(s.cmd(&["PTTL", "k"]), Reply::Integer(n) if n > 99_000));
        assert_eq!(
            restore(&mut s, &[b"i", b"0", &p, b"IDLETIME", b"1000"]),
            Reply::ok()
        );
        assert!(matches!(s.cmd(&["OBJECT", "IDLETIME", "i"]), Reply::Integer(n) if n >= 999));
    }
}
