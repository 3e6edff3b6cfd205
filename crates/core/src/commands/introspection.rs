//! Commands that look at how a value is stored: `MEMORY USAGE` and `OBJECT
//! ENCODING`.
//!
//! Both are container commands in Redis: the subcommand is looked up before
//! anything else, an unknown one gets `unknown subcommand '...'. Try MEMORY
//! HELP.`, and each subcommand has its own arity, reported as `memory|usage`.
//! Only these two subcommands exist here; the others (MEMORY STATS, OBJECT
//! FREQ, ...) answer as unknown ones. The byte counts come from
//! [`crate::memory`].

use super::{unknown_subcommand, Args, CommandSpec, Server};
use crate::keyspace::Value;
use crate::memory;
use crate::reply::{errors, Reply};

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec::legacy("memory", -2, memory),
    CommandSpec::legacy("object", -2, object),
];

/// `OBJ_COMPUTE_SIZE_DEF_SAMPLES`.
const DEFAULT_SAMPLES: usize = 5;

pub fn memory(s: &mut Server, a: &Args) -> Reply {
    if !a.is(1, "usage") {
        return unknown_subcommand(a, "MEMORY");
    }
    if a.len() < 3 {
        return Reply::error(errors::arity("memory|usage"));
    }
    // Parsed for its errors only: Redis 8.6 counts a sorted set exactly.
    if let Err(reply) = parse_samples(a) {
        return reply;
    }
    // `dbFind`: no lazy expiry here, so a key past its deadline that nothing has
    // touched yet is still measured, as in Redis.
    let key = a.bytes(2);
    let slot = s.keyspace.has_expire_slot(key);
    match s.keyspace.peek(key) {
        None => Reply::Nil,
        Some(Value::Zset(z)) => {
            let bytes = memory::key_object_size(key.len(), slot) + memory::zset_alloc_size(z);
            Reply::Integer(bytes as i64)
        }
        Some(Value::String(v)) => Reply::Integer(v.alloc_size(key.len(), slot) as i64),
        Some(Value::Set(set)) => {
            Reply::Integer((memory::key_object_size(key.len(), slot) + set.alloc_size()) as i64)
        }
        Some(Value::Hash(h)) => Reply::Integer(
            (memory::key_object_size(key.len(), slot) + memory::hash_alloc_size(h)) as i64,
        ),
    }
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

pub fn object(s: &mut Server, a: &Args) -> Reply {
    if !a.is(1, "encoding") {
        return unknown_subcommand(a, "OBJECT");
    }
    if a.len() != 3 {
        return Reply::error(errors::arity("object|encoding"));
    }
    match s.keyspace.get(a.bytes(2)) {
        None => Reply::Nil,
        Some(Value::Zset(z)) => Reply::bulk(z.encoding().name()),
        Some(Value::Hash(h)) => Reply::bulk(h.encoding_name()),
        Some(Value::String(v)) => Reply::bulk(v.encoding_name()),
        Some(Value::Set(set)) => Reply::bulk(set.encoding_name()),
    }
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
    }
}
