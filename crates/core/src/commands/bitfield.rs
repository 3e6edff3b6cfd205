//! BITFIELD and BITFIELD_RO (src/bitops.c, `bitfieldGeneric`).
//!
//! All operations are parsed first, so a bad type, offset or value anywhere in
//! the command is reported before anything is read or written. Types are `i1` to
//! `i64` and `u1` to `u63` (a u64 could not be returned as a RESP integer);
//! `#n` offsets mean `n * width`. OVERFLOW applies to the operations after it
//! (default WRAP); under FAIL an overflowing SET or INCRBY replies nil and writes
//! nothing. As in Redis, a command with any write makes the key a raw string
//! padded to its farthest written bit before the first operation runs, even if
//! every write then fails; BITFIELD_RO accepts only GET.

use super::bitmap::bit_offset;
use super::string_value::{read_bytes, writable_bits};
use super::{flags::*, Args, CmdResult, CommandSpec, Server};
use crate::bitmap::{self, Overflow};
use crate::reply::{errors, Reply};
use crate::server::notify;

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec::new("bitfield", -2, bitfield)
        .flags(WRITE | DENYOOM)
        .keys(1, 1, 1)
        .doc(
            "3.2.0",
            "Reads, writes and increments integers of any width at any bit offset.",
            "key [GET encoding offset | [OVERFLOW <WRAP | SAT | FAIL>] \
             <SET encoding offset value | INCRBY encoding offset increment> \
             [GET encoding offset | [OVERFLOW <WRAP | SAT | FAIL>] \
             <SET encoding offset value | INCRBY encoding offset increment> ...]]",
        ),
    CommandSpec::new("bitfield_ro", -2, bitfield_ro)
        .flags(READONLY | FAST)
        .keys(1, 1, 1)
        .doc(
            "6.0.0",
            "Reads integers of any width at any bit offset.",
            "key [GET encoding offset [GET encoding offset ...]]",
        ),
];

const TYPE_ERROR: &str =
    "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Get,
    Set(i64),
    IncrBy(i64),
}

#[derive(Clone, Copy, Debug)]
struct FieldOp {
    op: Op,
    offset: u64,
    bits: u32,
    signed: bool,
    overflow: Overflow,
}

/// `getBitfieldTypeFromArgument`.
fn field_type(arg: &[u8]) -> Result<(bool, u32), Reply> {
    let arg = arg.split(|&b| b == 0).next().unwrap_or_default();
    let signed = match arg.first() {
        Some(b'i') => true,
        Some(b'u') => false,
        _ => return Err(Reply::error(TYPE_ERROR)),
    };
    match crate::num::parse_i64(&arg[1..]) {
        Some(n) if n >= 1 && n <= if signed { 64 } else { 63 } => Ok((signed, n as u32)),
        _ => Err(Reply::error(TYPE_ERROR)),
    }
}

fn parse(s: &Server, a: &Args) -> Result<Vec<FieldOp>, Reply> {
    let mut ops = Vec::new();
    let mut overflow = Overflow::Wrap;
    let mut j = 2;
    while j < a.len() {
        let remaining = a.len() - j - 1;
        let (is_get, is_set) = (a.is(j, "get"), a.is(j, "set"));
        if a.is(j, "overflow") && remaining >= 1 {
            overflow = if a.is(j + 1, "wrap") {
                Overflow::Wrap
            } else if a.is(j + 1, "sat") {
                Overflow::Sat
            } else if a.is(j + 1, "fail") {
                Overflow::Fail
            } else {
                return Err(Reply::error("ERR Invalid OVERFLOW type specified"));
            };
            j += 2;
            continue;
        }
        let valid = (is_get && remaining >= 2) || ((is_set || a.is(j, "incrby")) && remaining >= 3);
        if !valid {
            return Err(Reply::error(errors::SYNTAX));
        }
        let (signed, bits) = field_type(a.bytes(j + 1))?;
        let offset = bit_offset(s, a.bytes(j + 2), Some(bits))?;
        let op = if is_get {
            Op::Get
        } else if is_set {
            Op::Set(a.int(j + 3)?)
        } else {
            Op::IncrBy(a.int(j + 3)?)
        };
        ops.push(FieldOp {
            op,
            offset,
            bits,
            signed,
            overflow,
        });
        j += if is_get { 3 } else { 4 };
    }
    Ok(ops)
}

fn bitfield(s: &mut Server, a: &Args) -> CmdResult {
    run(s, a, false)
}

fn bitfield_ro(s: &mut Server, a: &Args) -> CmdResult {
    run(s, a, true)
}

fn run(s: &mut Server, a: &Args, read_only: bool) -> CmdResult {
    let ops = parse(s, a)?;
    let key = a.bytes(1);
    let highest = ops
        .iter()
        .filter(|o| o.op != Op::Get)
        .map(|o| o.offset + u64::from(o.bits) - 1)
        .max();
    let Some(highest) = highest else {
        // Only GETs: a missing key reads as zeros.
        let bytes = read_bytes(s, key)?.unwrap_or_default();
        s.set_dirty(0);
        return Ok(Reply::Array(ops.iter().map(|o| get(&bytes, o)).collect()));
    };
    if read_only {
        return Err(Reply::error(
            "ERR BITFIELD_RO only supports the GET subcommand",
        ));
    }
    let (sds, grew) = writable_bits(s, key, highest)?;
    let bytes = sds.as_bytes_mut();
    let mut changes = 0;
    let replies = ops
        .iter()
        .map(|o| {
            let (reply, changed) = apply(bytes, o);
            // Redis counts every write once the string was created or grew.
            changes += u64::from(changed || (grew && o.op != Op::Get && reply != Reply::Nil));
            reply
        })
        .collect();
    s.set_dirty(changes);
    if changes > 0 {
        s.notify_here(notify::STRING, "setbit", a.bytes(1));
    }
    Ok(Reply::Array(replies))
}

fn get(bytes: &[u8], o: &FieldOp) -> Reply {
    if o.signed {
        Reply::Integer(bitmap::get_signed(bytes, o.offset, o.bits))
    } else {
        Reply::Integer(bitmap::get_unsigned(bytes, o.offset, o.bits) as i64)
    }
}

/// One operation on a buffer already long enough for every write, and whether
/// it changed the bits.
fn apply(bytes: &mut [u8], o: &FieldOp) -> (Reply, bool) {
    let (value, incr, is_incr) = match o.op {
        Op::Get => return (get(bytes, o), false),
        Op::Set(v) => (v, 0, false),
        Op::IncrBy(n) => (0, n, true),
    };
    if o.signed {
        let old = bitmap::get_signed(bytes, o.offset, o.bits);
        let base = if is_incr { old } else { value };
        let limited = bitmap::check_signed(base, incr, o.bits, o.overflow);
        if limited.is_some() && o.overflow == Overflow::Fail {
            return (Reply::Nil, false);
        }
        let new = limited.unwrap_or_else(|| base.wrapping_add(incr));
        bitmap::set_unsigned(bytes, o.offset, o.bits, new as u64);
        (Reply::Integer(if is_incr { new } else { old }), new != old)
    } else {
        let old = bitmap::get_unsigned(bytes, o.offset, o.bits);
        let base = if is_incr { old } else { value as u64 };
        let limited = bitmap::check_unsigned(base, incr, o.bits, o.overflow);
        if limited.is_some() && o.overflow == Overflow::Fail {
            return (Reply::Nil, false);
        }
        let new = limited.unwrap_or_else(|| base.wrapping_add(incr as u64));
        bitmap::set_unsigned(bytes, o.offset, o.bits, new);
        (
            Reply::Integer(if is_incr { new as i64 } else { old as i64 }),
            new != old,
        )
    }
}

#[cfg(test)]
mod tests {
    use crate::{Reply, Server};

    #[test]
    fn the_articles_overflow_modes_on_u7() {
        let mut s = Server::new();
        let arr = |v: Vec<Reply>| Reply::Array(v);
        for (mode, want) in [
            ("WRAP", Reply::Integer(2)),
            ("SAT", Reply::Integer(127)),
            ("FAIL", Reply::Nil),
        ] {
            s.cmd(&["BITFIELD", "p", "SET", "u7", "#3", "120"]);
            assert_eq!(
                s.cmd(&["BITFIELD", "p", "OVERFLOW", mode, "INCRBY", "u7", "#3", "10"]),
                arr(vec![want])
            );
        }
        assert_eq!(
            s.cmd(&["BITFIELD_RO", "p", "GET", "u7", "#3"]),
            arr(vec![Reply::Integer(120)])
        );
        assert_eq!(
            s.cmd(&["BITFIELD_RO", "p", "SET", "u7", "0", "1"]),
            Reply::error("ERR BITFIELD_RO only supports the GET subcommand")
        );
        assert_eq!(
            s.cmd(&["BITFIELD", "p", "GET", "u64", "0"]),
            Reply::error("ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but i64 is.")
        );
        assert_eq!(
            s.cmd(&["BITFIELD", "p", "OVERFLOW", "X"]),
            Reply::error("ERR Invalid OVERFLOW type specified")
        );
        assert_eq!(s.cmd(&["BITFIELD", "none"]), arr(vec![]));
    }
}
