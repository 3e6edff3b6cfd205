//! The blocking list commands: BLPOP, BRPOP, BLMPOP, BLMOVE and BRPOPLPUSH
//! (`blockingPopGenericCommand`, `blmoveGenericCommand` in src/t_list.c).
//!
//! With an element to serve they answer like their non-blocking forms (BLPOP
//! and BRPOP reply key and element, BLMPOP key and elements). With nothing to
//! serve the client blocks: the command calls `Server::block_for` with its
//! keys, its timeout and the type it waits for (a list), and returns the reply a client that may not block gets at once
//! (inside MULTI, from a script, in process): a null array, or a null bulk for
//! BLMOVE/BRPOPLPUSH. A transport parks a blocked client and runs the whole
//! command again after a write that left a list at one of its keys (a string
//! set there does not wake it, as in Redis), keeping its first deadline, so
//! what it eventually pops is decided by the same code; at the timeout the listener answers a null array, which is what
//! Redis answers every blocked list command (`replyToBlockedClientTimedOut`),
//! BLMOVE included.
//!
//! Timeouts follow `getTimeoutFromObjectOrReply`: seconds as a `long double`
//! (`string2ld` decides what parses), times 1000, rounded up; 0 waits forever.

use super::list::{end_arg, lmove_generic, parse_mpop, pop_one, pop_range, read};
use super::{flags::*, Args, CmdResult, CommandSpec, Server};
use crate::ldouble::LongDouble;
use crate::list::End;
use crate::reply::Reply;

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec::new("blpop", -3, blpop)
        .flags(WRITE | BLOCKING)
        .keys(1, -2, 1)
        .doc(
            "2.0.0",
            "Pops the first element of the first non-empty list, waiting for one if none is.",
            "key [key ...] timeout",
        ),
    CommandSpec::new("brpop", -3, brpop)
        .flags(WRITE | BLOCKING)
        .keys(1, -2, 1)
        .doc(
            "2.0.0",
            "Pops the last element of the first non-empty list, waiting for one if none is.",
            "key [key ...] timeout",
        ),
    CommandSpec::new("blmove", 6, blmove)
        .flags(WRITE | DENYOOM | BLOCKING)
        .keys(1, 2, 1)
        .doc(
            "6.2.0",
            "Moves an element between lists like LMOVE, waiting while the source is empty.",
            "source destination <LEFT | RIGHT> <LEFT | RIGHT> timeout",
        ),
    CommandSpec::new("brpoplpush", 4, brpoplpush)
        .flags(WRITE | DENYOOM | BLOCKING)
        .keys(1, 2, 1)
        .doc(
            "2.2.0",
            "Moves the last element of a list to the head of another, waiting while the source is empty.",
            "source destination timeout",
        ),
    CommandSpec::new("blmpop", -5, blmpop)
        .flags(WRITE | BLOCKING | MOVABLE_KEYS)
        .doc(
            "7.0.0",
            "Pops elements from the first non-empty list among several, waiting for one if none is.",
            "timeout numkeys key [key ...] <LEFT | RIGHT> [COUNT count]",
        ),
];

const NOT_A_TIMEOUT: &str = "ERR timeout is not a float or out of range";
const TIMEOUT_OUT_OF_RANGE: &str = "ERR timeout is out of range";

/// `getTimeoutFromObjectOrReply(..., UNIT_SECONDS)`: the timeout in
/// milliseconds, `None` for 0 (forever).
pub(super) fn parse_timeout(arg: &[u8]) -> Result<Option<i64>, Reply> {
    let Some(ld) = LongDouble::parse(arg) else {
        return Err(Reply::error(NOT_A_TIMEOUT));
    };
    // The value as a double: what string2ld accepted but a double cannot hold
    // is far beyond the limits below (or below a millisecond).
    let seconds = crate::num::parse_double_arg(arg).unwrap_or_else(|| {
        if ld.is_infinite() || ld > LongDouble::from_i64(1) {
            f64::INFINITY
        } else if ld < LongDouble::from_i64(-1) {
            f64::NEG_INFINITY
        } else {
            0.0
        }
    });
    let ms = seconds * 1000.0;
    if ms > i64::MAX as f64 {
        return Err(Reply::error(TIMEOUT_OUT_OF_RANGE));
    }
    // `(long long)ceill(x)`: -inf converts to LLONG_MIN on x86_64.
    let ms = ms.ceil() as i64;
    if ms < 0 {
        return Err(Reply::error("ERR timeout is negative"));
    }
    if ms > 0 && ms > i64::MAX - crate::keyspace::now_ms() {
        return Err(Reply::error(TIMEOUT_OUT_OF_RANGE));
    }
    Ok((ms > 0).then_some(ms))
}

fn blpop(s: &mut Server, a: &Args) -> CmdResult {
    let keys = (1..a.len() - 1).collect();
    blocking_pop(s, a, keys, End::Head, a.len() - 1, None)
}

fn brpop(s: &mut Server, a: &Args) -> CmdResult {
    let keys = (1..a.len() - 1).collect();
    blocking_pop(s, a, keys, End::Tail, a.len() - 1, None)
}

/// BLMPOP timeout numkeys key [key ...] LEFT|RIGHT [COUNT count]: the keys
/// and options are checked before the timeout.
fn blmpop(s: &mut Server, a: &Args) -> CmdResult {
    let parsed = parse_mpop(a, 2)?;
    let keys = parsed.keys.collect();
    blocking_pop(s, a, keys, parsed.end, 1, Some(parsed.count))
}

/// `blockingPopGenericCommand`: the first non-empty list among `keys` (argument
/// positions) is popped; a key of another type fails the command; with nothing
/// to pop the client blocks.
fn blocking_pop(
    s: &mut Server,
    a: &Args,
    keys: Vec<usize>,
    end: End,
    timeout_at: usize,
    count: Option<usize>,
) -> CmdResult {
    let timeout = parse_timeout(a.bytes(timeout_at))?;
    for &i in &keys {
        let key = a.bytes(i);
        match read(s, key)? {
            Some(l) if !l.is_empty() => {
                let popped = match count {
                    Some(n) => pop_range(s, key, end, n),
                    None => Reply::bulk_vec(pop_one(s, key, end)),
                };
                return Ok(Reply::Array(vec![Reply::bulk(key), popped]));
            }
            _ => continue,
        }
    }
    let keys = keys.iter().map(|&i| a.bytes(i).to_vec()).collect();
    s.block_for(keys, timeout, Some("list"));
    Ok(Reply::NilArray)
}

fn blmove(s: &mut Server, a: &Args) -> CmdResult {
    let from = end_arg(a, 3)?;
    let to = end_arg(a, 4)?;
    let timeout = parse_timeout(a.bytes(5))?;
    blmove_generic(s, a, from, to, timeout)
}

fn brpoplpush(s: &mut Server, a: &Args) -> CmdResult {
    let timeout = parse_timeout(a.bytes(3))?;
    blmove_generic(s, a, End::Tail, End::Head, timeout)
}

/// `blmoveGenericCommand`: blocks on the source only.
fn blmove_generic(s: &mut Server, a: &Args, from: End, to: End, timeout: Option<i64>) -> CmdResult {
    let src = a.bytes(1);
    if read(s, src)?.is_none() {
        s.block_for(vec![src.to_vec()], timeout, Some("list"));
        return Ok(Reply::Nil);
    }
    lmove_generic(s, src, a.bytes(2), from, to)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_in_process_caller_gets_the_null_reply_at_once_and_it_counts() {
        let mut s = Server::new();
        assert_eq!(s.cmd(&["BLPOP", "none", "0"]), Reply::NilArray);
        assert_eq!(
            s.cmd(&["BLMOVE", "none", "d", "LEFT", "RIGHT", "0"]),
            Reply::Nil
        );
        s.cmd(&["RPUSH", "l", "a", "b"]);
        assert_eq!(
            s.cmd(&["BRPOP", "none", "l", "0"]),
            Reply::Array(vec![Reply::bulk("l"), Reply::bulk("b")])
        );
        let info = match s.cmd(&["INFO", "commandstats"]) {
            Reply::Verbatim(text) => text,
            Reply::Bulk(bytes) => String::from_utf8(bytes.into_vec()).unwrap(),
            other => panic!("INFO answered {other:?}"),
        };
        assert!(info.contains("cmdstat_blpop:calls=1,"), "{info}");
        assert!(info.contains("cmdstat_blmove:calls=1,"), "{info}");
    }

    #[test]
    fn timeouts_parse_like_redis() {
        assert_eq!(parse_timeout(b"0"), Ok(None));
        assert_eq!(parse_timeout(b"1"), Ok(Some(1000)));
        assert_eq!(parse_timeout(b"0.0001"), Ok(Some(1)));
        assert_eq!(parse_timeout(b"-0.0001"), Ok(None));
        assert_eq!(parse_timeout(b"0x10"), Ok(Some(16000)));
        let err = |t: &str| Err(Reply::error(t));
        assert_eq!(parse_timeout(b"-1"), err("ERR timeout is negative"));
        assert_eq!(parse_timeout(b"abc"), err(NOT_A_TIMEOUT));
        assert_eq!(parse_timeout(b" 1"), err(NOT_A_TIMEOUT));
        assert_eq!(parse_timeout(b"nan"), err(NOT_A_TIMEOUT));
        assert_eq!(parse_timeout(b"inf"), err(TIMEOUT_OUT_OF_RANGE));
        assert_eq!(parse_timeout(b"1e400"), err(TIMEOUT_OUT_OF_RANGE));
        assert_eq!(parse_timeout(b"-inf"), err("ERR timeout is negative"));
        assert_eq!(
            parse_timeout(b"9223372036854775"),
            err(TIMEOUT_OUT_OF_RANGE)
        );
    }
}
