//! Commands that look at how a value is stored: `MEMORY USAGE` and `OBJECT
//! ENCODING | REFCOUNT | IDLETIME | FREQ | HELP` (object.c).
//!
//! Both are container commands in Redis: the subcommand is looked up before
//! anything else, an unknown one gets `unknown subcommand '...'. Try MEMORY
//! HELP.`, and each subcommand has its own arity, reported as `memory|usage`.
//! MEMORY DOCTOR, STATS, PURGE and MALLOC-STATS are not modelled and answer as
//! unknown subcommands. The byte counts come from [`crate::memory`].
//!
//! OBJECT looks its key up without touching it (`LOOKUP_NOTOUCH`). IDLETIME is
//! the distance from the key's LRU field to the LRU clock, in seconds, and
//! FREQ the decayed LFU counter ([`crate::lru`]); each answers an error under
//! the other kind of `maxmemory-policy`, as Redis does. REFCOUNT is always 1
//! in Redis 8.6: every key holds its own key object (`kvobj`), even for the
//! integers 0..9999 that older versions shared (and reported as 2147483647).

use super::{flags::*, Args, CmdResult, CommandSpec, Server};
use crate::keyspace::Value;
use crate::lru::{self, Policy};
use crate::memory;
use crate::reply::{errors, Reply};

pub const COMMANDS: &[CommandSpec] = &[CommandSpec::container("memory", MEMORY_SUBCOMMANDS).doc(
    "4.0.0",
    "Container of the memory introspection subcommands.",
    "",
)];

/// OBJECT's rows, registered with the generic (keyspace) group.
pub const OBJECT_COMMANDS: &[CommandSpec] = &[CommandSpec::container("object", OBJECT_SUBCOMMANDS)
    .doc(
        "2.2.3",
        "Container of the subcommands that inspect a key's value object.",
        "",
    )];

const MEMORY_SUBCOMMANDS: &[CommandSpec] = &[
    CommandSpec::new("usage", -3, memory_usage)
        .flags(READONLY)
        .keys(2, 2, 1)
        .doc(
            "4.0.0",
            "Bytes a key and its value take, as Redis's allocator would count them.",
            "key [SAMPLES count]",
        ),
    CommandSpec::new("help", 2, memory_help)
        .flags(LOADING | STALE)
        .doc("4.0.0", "Lists the MEMORY subcommands.", ""),
];

const OBJECT_SUBCOMMANDS: &[CommandSpec] = &[
    CommandSpec::new("encoding", 3, object_encoding)
        .flags(READONLY)
        .keys(2, 2, 1)
        .doc(
            "2.2.3",
            "Names the internal representation of a key's value.",
            "key",
        ),
    CommandSpec::new("freq", 3, object_freq)
        .flags(READONLY)
        .keys(2, 2, 1)
        .doc(
            "4.0.0",
            "The logarithmic access counter of a key under an LFU policy.",
            "key",
        ),
    CommandSpec::new("idletime", 3, object_idletime)
        .flags(READONLY)
        .keys(2, 2, 1)
        .doc(
            "2.2.3",
            "Seconds since a key was last accessed, under an LRU policy.",
            "key",
        ),
    CommandSpec::new("refcount", 3, object_refcount)
        .flags(READONLY)
        .keys(2, 2, 1)
        .doc(
            "2.2.3",
            "How many references hold a key's value object.",
            "key",
        ),
    CommandSpec::new("help", 2, object_help)
        .flags(LOADING | STALE)
        .doc("6.2.0", "Lists the OBJECT subcommands.", ""),
];

/// `OBJ_COMPUTE_SIZE_DEF_SAMPLES`.
const DEFAULT_SAMPLES: usize = 5;

fn help(lines: &[&str]) -> CmdResult {
    Ok(Reply::Array(
        lines
            .iter()
            .map(|l| Reply::Status(l.to_string().into()))
            .collect(),
    ))
}

fn memory_usage(s: &mut Server, a: &Args) -> CmdResult {
    // Parsed for its errors only: Redis 8.6 counts a sorted set exactly.
    parse_samples(a)?;
    // `dbFind`: no lazy expiry here, so a key past its deadline that nothing has
    // touched yet is still measured, as in Redis.
    let key = a.bytes(2);
    let slot = s.keyspace.has_expire_slot(key);
    let bytes = match s.keyspace.peek(key) {
        None => return Ok(Reply::Nil),
        Some(Value::Zset(z)) => {
            memory::key_object_size(key.len(), slot) + memory::zset_alloc_size(z)
        }
        Some(Value::List(l)) => {
            memory::key_object_size(key.len(), slot) + memory::list_alloc_size(l)
        }
        Some(Value::String(v)) => v.alloc_size(key.len(), slot),
        Some(Value::Set(set)) => memory::key_object_size(key.len(), slot) + set.alloc_size(),
        Some(Value::Hash(h)) => {
            memory::key_object_size(key.len(), slot) + memory::hash_alloc_size(h)
        }
    };
    Ok(Reply::Integer(bytes as i64))
}

/// `[SAMPLES count]` options (repeatable, the last wins; 0 means all), checked
/// before the key is looked up, as in `memoryCommand`.
fn parse_samples(a: &Args) -> Result<usize, Reply> {
    let mut samples = DEFAULT_SAMPLES;
    let mut j = 3;
    while j < a.len() {
        if !a.is(j, "samples") || j + 1 >= a.len() {
            return Err(Reply::error(errors::SYNTAX));
        }
        let n = a.int(j + 1)?;
        if n < 0 {
            return Err(Reply::error(errors::SYNTAX));
        }
        samples = if n == 0 { usize::MAX } else { n as usize };
        j += 2;
    }
    Ok(samples)
}

fn memory_help(_: &mut Server, _: &Args) -> CmdResult {
    help(&[
        "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "DOCTOR",
        "    Return memory problems reports.",
        "MALLOC-STATS",
        "    Return internal statistics report from the memory allocator.",
        "PURGE",
        "    Attempt to purge dirty pages for reclamation by the allocator.",
        "STATS",
        "    Return information about the memory usage of the server.",
        "USAGE <key> [SAMPLES <count>]",
        "    Return memory in bytes used by <key> and its value. Nested values are",
        "    sampled up to <count> times (default: 5, 0 means sample all).",
        "HELP",
        "    Print this help.",
    ])
}

fn object_encoding(s: &mut Server, a: &Args) -> CmdResult {
    Ok(match s.keyspace.object_lookup(a.bytes(2)) {
        None => Reply::Nil,
        Some(Value::Zset(z)) => Reply::bulk(z.encoding().name()),
        Some(Value::Hash(h)) => Reply::bulk(h.encoding_name()),
        Some(Value::String(v)) => Reply::bulk(v.encoding_name()),
        Some(Value::Set(set)) => Reply::bulk(set.encoding_name()),
        Some(Value::List(l)) => Reply::bulk(l.encoding_name()),
    })
}

fn object_refcount(s: &mut Server, a: &Args) -> CmdResult {
    Ok(match s.keyspace.object_lookup(a.bytes(2)) {
        None => Reply::Nil,
        Some(_) => Reply::Integer(1),
    })
}

fn object_idletime(s: &mut Server, a: &Args) -> CmdResult {
    let Some(field) = s.keyspace.lru_field(a.bytes(2)) else {
        return Ok(Reply::Nil);
    };
    if s.eviction_policy().is_lfu() {
        return Err(Reply::error(
            "ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.",
        ));
    }
    Ok(Reply::Integer(
        (lru::idle_ms(field, s.lru_clock()) / 1000) as i64,
    ))
}

fn object_freq(s: &mut Server, a: &Args) -> CmdResult {
    let Some(field) = s.keyspace.lru_field(a.bytes(2)) else {
        return Ok(Reply::Nil);
    };
    let Policy::Lfu { decay_time, .. } = s.eviction_policy() else {
        return Err(Reply::error(
            "ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.",
        ));
    };
    Ok(Reply::Integer(i64::from(lru::lfu_counter(
        field,
        decay_time,
        s.lru_clock(),
    ))))
}

fn object_help(_: &mut Server, _: &Args) -> CmdResult {
    help(&[
        "OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "ENCODING <key>",
        "    Return the kind of internal representation used in order to store the value",
        "    associated with a <key>.",
        "FREQ <key>",
        "    Return the access frequency index of the <key>. The returned integer is",
        "    proportional to the logarithm of the recent access frequency of the key.",
        "IDLETIME <key>",
        "    Return the idle time of the <key>, that is the approximated number of",
        "    seconds elapsed since the last access to the key.",
        "REFCOUNT <key>",
        "    Return the number of references of the value associated with the specified",
        "    <key>.",
        "HELP",
        "    Print this help.",
    ])
}

#[cfg(test)]
mod tests {
    use crate::{Reply, Server};

    #[test]
    fn memory_usage_and_encoding_of_a_small_set() {
        let mut s = Server::new();
        s.cmd(&["ZADD", "k", "1", "a"]);
        assert_eq!(s.cmd(&["MEMORY", "USAGE", "k"]), Reply::Integer(36));
        assert_eq!(
            s.cmd(&["memory", "usage", "k", "SAMPLES", "0"]),
            Reply::Integer(36)
        );
        assert_eq!(s.cmd(&["OBJECT", "ENCODING", "k"]), Reply::bulk("listpack"));
        assert_eq!(s.cmd(&["MEMORY", "USAGE", "nokey"]), Reply::Nil);
        assert_eq!(s.cmd(&["OBJECT", "ENCODING", "nokey"]), Reply::Nil);
    }

    #[test]
    fn errors_read_like_redis() {
        let mut s = Server::new();
        s.cmd(&["ZADD", "k", "1", "a"]);
        let err = |t: &str| Reply::error(t);
        assert_eq!(
            s.cmd(&["MEMORY", "USAGE", "k", "SAMPLES", "-1"]),
            err("ERR syntax error")
        );
        assert_eq!(
            s.cmd(&["MEMORY", "USAGE", "k", "SAMPLES", "x"]),
            err("ERR value is not an integer or out of range")
        );
        assert_eq!(
            s.cmd(&["MEMORY", "USAGE", "k", "SAMPLES"]),
            err("ERR syntax error")
        );
        assert_eq!(
            s.cmd(&["Memory", "Foo", "bar"]),
            err("ERR unknown subcommand 'Foo'. Try MEMORY HELP.")
        );
        assert_eq!(
            s.cmd(&["MEMORY", "USAGE"]),
            err("ERR wrong number of arguments for 'memory|usage' command")
        );
        assert_eq!(
            s.cmd(&["MEMORY"]),
            err("ERR wrong number of arguments for 'memory' command")
        );
        assert_eq!(
            s.cmd(&["OBJECT", "ENCODING", "k", "x"]),
            err("ERR wrong number of arguments for 'object|encoding' command")
        );
        assert_eq!(
            s.cmd(&["OBJECT", "FOO"]),
            err("ERR unknown subcommand 'FOO'. Try OBJECT HELP.")
        );
        assert_eq!(
            s.cmd(&["OBJECT", "HELP", "x"]),
            err("ERR wrong number of arguments for 'object|help' command")
        );
    }

    #[test]
    fn refcount_idletime_and_freq_follow_the_policy() {
        let mut s = Server::new();
        s.cmd(&["SET", "small", "100"]);
        s.cmd(&["SET", "text", "hello"]);
        assert_eq!(s.cmd(&["OBJECT", "REFCOUNT", "small"]), Reply::Integer(1));
        assert_eq!(s.cmd(&["OBJECT", "REFCOUNT", "nokey"]), Reply::Nil);
        assert_eq!(s.cmd(&["OBJECT", "IDLETIME", "text"]), Reply::Integer(0));
        assert_eq!(s.cmd(&["OBJECT", "FREQ", "nokey"]), Reply::Nil);
        assert!(matches!(
            s.cmd(&["OBJECT", "FREQ", "text"]),
            Reply::Error(e) if e.starts_with("ERR An LFU maxmemory policy is not selected")
        ));
        s.cmd(&["CONFIG", "SET", "maxmemory-policy", "allkeys-lfu"]);
        s.cmd(&["SET", "fresh", "v"]);
        assert_eq!(s.cmd(&["OBJECT", "FREQ", "fresh"]), Reply::Integer(5));
        assert!(matches!(
            s.cmd(&["OBJECT", "IDLETIME", "fresh"]),
            Reply::Error(e) if e.starts_with("ERR An LFU maxmemory policy is selected")
        ));
        let help = s.cmd(&["OBJECT", "HELP"]);
        assert!(matches!(help, Reply::Array(lines) if lines.len() == 15));
    }
}
