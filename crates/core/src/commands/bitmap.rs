//! Bitmap commands (src/bitops.c): SETBIT, GETBIT, BITCOUNT, BITPOS and BITOP,
//! with Redis 8.6.3's argument order, errors and memory behaviour.
//!
//! A bitmap is a string value ([`crate::strings`]). What the writes keep from Redis:
//!
//! * a write on a missing key creates an SDS of exactly the bytes needed
//!   (`sdsnewlen`), so SETBIT at 10,000,000 on a new key costs 1,250,001 bytes in
//!   jemalloc's 1,310,720 class;
//! * a write on an existing key first makes it a raw string of its own
//!   (`dbUnshareStringValue`, so an int or embstr becomes raw even if no bit
//!   changes), then grows it with `sdsgrowzero`, i.e. SDS's greedy preallocation;
//! * offsets are bits; one whose byte would lie at or past 512 MB
//!   (`proto-max-bulk-len`) is refused, so the largest is 4,294,967,295;
//! * BITOP stores a raw string as long as its longest source, or deletes the
//!   destination when every source is empty or missing; it drops the TTL.

use super::string::clamp_range;
use std::borrow::Cow;

use super::string_value::{lookup, max_bulk_len, store, writable_bits};
use super::{flags::*, Args, CmdResult, CommandSpec, Server};
use crate::bitmap::{self, BitOp};
use crate::keyspace::Value;
use crate::reply::{errors, Reply};
use crate::sds::Sds;
use crate::server::notify;
use crate::strings::ArgObject;

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec::new("setbit", 4, setbit)
        .flags(WRITE | DENYOOM)
        .keys(1, 1, 1)
        .doc(
            "2.2.0",
            "Sets or clears one bit of a string, growing it as needed.",
            "key offset value",
        ),
    CommandSpec::new("getbit", 3, getbit)
        .flags(READONLY | FAST)
        .keys(1, 1, 1)
        .doc("2.2.0", "Reads one bit of a string.", "key offset"),
    CommandSpec::new("bitcount", -2, bitcount)
        .flags(READONLY)
        .keys(1, 1, 1)
        .doc(
            "2.6.0",
            "Counts the set bits of a string, or of a byte or bit range of it.",
            "key [start end [BYTE | BIT]]",
        ),
    CommandSpec::new("bitpos", -3, bitpos)
        .flags(READONLY)
        .keys(1, 1, 1)
        .doc(
            "2.8.7",
            "Finds the first set or clear bit of a string, or of a range of it.",
            "key bit [start [end [BYTE | BIT]]]",
        ),
    CommandSpec::new("bitop", -4, bitop)
        .flags(WRITE | DENYOOM)
        .keys(2, -1, 1)
        .doc(
            "2.6.0",
            "Combines strings bit by bit and stores the result.",
            "<AND | OR | XOR | NOT | DIFF | DIFF1 | ANDOR | ONE> destkey key [key ...]",
        ),
];

const OFFSET_ERROR: &str = "ERR bit offset is not an integer or out of range";
const BIT_ERROR: &str = "ERR bit is not an integer or out of range";

/// `getBitOffsetFromArgument`: a bit offset, or with `hash_bits` (BITFIELD) also
/// `#n`, meaning `n * bits`. Its byte must lie below `proto-max-bulk-len`, so
/// whatever a write allocates for it is bounded as in Redis.
pub(crate) fn bit_offset(s: &Server, arg: &[u8], hash_bits: Option<u32>) -> Result<u64, Reply> {
    let (digits, mul) = match (arg.first(), hash_bits) {
        (Some(b'#'), Some(bits)) => (&arg[1..], i64::from(bits)),
        _ => (arg, 1),
    };
    // C multiplies without a check; the wrapped result is then refused or used.
    let n = crate::num::parse_i64(digits)
        .ok_or_else(|| Reply::error(OFFSET_ERROR))?
        .wrapping_mul(mul);
    if n < 0 || (n >> 3) as u64 >= max_bulk_len(s) {
        return Err(Reply::error(OFFSET_ERROR));
    }
    Ok(n as u64)
}

fn setbit(s: &mut Server, a: &Args) -> CmdResult {
    let offset = bit_offset(s, a.bytes(2), None)?;
    let on = match crate::num::parse_i64(a.bytes(3)) {
        Some(v @ (0 | 1)) => v == 1,
        _ => return Err(Reply::error(BIT_ERROR)),
    };
    let flip = |sds: &mut Sds, grew: bool| {
        let bytes = sds.as_bytes_mut();
        let old = bitmap::get_bit(bytes, offset);
        bitmap::set_bit(bytes, offset, on);
        (old, grew)
    };
    // An existing raw string: one search of the key table, grown in place.
    let fast = super::string_value::edit_raw(s, a.bytes(1), |sds| {
        let len = usize::try_from(offset >> 3).ok()?.checked_add(1)?;
        let before = sds.len();
        sds.grow_zero(len);
        let grew = sds.len() != before;
        Some(flip(sds, grew))
    });
    let (old, grew) = match fast {
        Some(done) => done,
        None => {
            let (sds, grew) = writable_bits(s, a.bytes(1), offset)?;
            flip(sds, grew)
        }
    };
    // Redis counts a change only if the string was created or grew, or the bit
    // flipped.
    s.set_dirty(u64::from(grew || old != on));
    if grew || old != on {
        s.notify_here(notify::STRING, "setbit", a.bytes(1));
    }
    Ok(Reply::Integer(i64::from(old)))
}

fn getbit(s: &mut Server, a: &Args) -> CmdResult {
    let offset = bit_offset(s, a.bytes(2), None)?;
    let bit = lookup(s, a.bytes(1))?.is_some_and(|v| bitmap::get_bit(&v.bytes(), offset));
    Ok(Reply::Integer(i64::from(bit)))
}

/// BIT or BYTE at argument `i`.
fn unit_is_bit(a: &Args, i: usize) -> Result<bool, Reply> {
    if a.is(i, "bit") {
        Ok(true)
    } else if a.is(i, "byte") {
        Ok(false)
    } else {
        Err(Reply::error(errors::SYNTAX))
    }
}

/// A clamped range in bits.
fn in_bits((start, end): (i64, i64), is_bit: bool) -> (u64, u64) {
    if is_bit {
        (start as u64, end as u64)
    } else {
        (start as u64 * 8, end as u64 * 8 + 7)
    }
}

fn bitcount(s: &mut Server, a: &Args) -> CmdResult {
    let range = match a.len() {
        2 => None,
        4 | 5 => {
            let (start, end) = (a.int(2)?, a.int(3)?);
            let is_bit = if a.len() == 5 {
                unit_is_bit(a, 4)?
            } else {
                false
            };
            Some((start, end, is_bit))
        }
        _ => return Err(Reply::error(errors::SYNTAX)),
    };
    let Some(v) = lookup(s, a.bytes(1))? else {
        return Ok(Reply::Integer(0));
    };
    let bytes = v.bytes();
    let len = bytes.len() as i64;
    let clamped = match range {
        None => clamp_range(0, len - 1, len).map(|r| in_bits(r, false)),
        Some((start, end, _)) if start < 0 && end < 0 && start > end => None,
        Some((start, end, is_bit)) => {
            let total = if is_bit { len * 8 } else { len };
            clamp_range(start, end, total).map(|r| in_bits(r, is_bit))
        }
    };
    let count = clamped.map_or(0, |(from, to)| bitmap::count_ones(&bytes, from, to));
    Ok(Reply::Integer(count as i64))
}

fn bitpos(s: &mut Server, a: &Args) -> CmdResult {
    let bit = match a.int(2)? {
        0 => false,
        1 => true,
        _ => return Err(Reply::error("ERR The bit argument must be 1 or 0.")),
    };
    let n = a.len();
    let mut range = None;
    let mut is_bit = false;
    if (4..=6).contains(&n) {
        let start = a.int(3)?;
        if n == 6 {
            is_bit = unit_is_bit(a, 5)?;
        }
        let end = if n >= 5 { Some(a.int(4)?) } else { None };
        range = Some((start, end));
    } else if n != 3 {
        return Err(Reply::error(errors::SYNTAX));
    }
    let Some(v) = lookup(s, a.bytes(1))? else {
        return Ok(Reply::Integer(if bit { -1 } else { 0 }));
    };
    let bytes = v.bytes();
    let len = bytes.len() as i64;
    let (start, end) = match range {
        None => (0, len - 1),
        Some((start, end)) => (start, end.unwrap_or(len - 1)),
    };
    let total = if is_bit { len * 8 } else { len };
    let Some(clamped) = clamp_range(start, end, total) else {
        return Ok(Reply::Integer(-1));
    };
    let (from, to) = in_bits(clamped, is_bit);
    let end_given = matches!(range, Some((_, Some(_))));
    let pos = match bitmap::first_bit(&bytes, bit, from, to) {
        Some(p) => p as i64,
        // Without an explicit end the string is taken as zero-padded on the right.
        None if !bit && !end_given => to as i64 + 1,
        None => -1,
    };
    Ok(Reply::Integer(pos))
}

fn bitop(s: &mut Server, a: &Args) -> CmdResult {
    let op = BitOp::parse(a.bytes(1)).ok_or_else(|| Reply::error(errors::SYNTAX))?;
    if op == BitOp::Not && a.len() != 4 {
        return Err(Reply::error(
            "ERR BITOP NOT must be called with a single source key.",
        ));
    }
    if matches!(op, BitOp::Diff | BitOp::Diff1 | BitOp::AndOr) && a.len() < 5 {
        let name = a.bytes(1).split(|&b| b == 0).next().unwrap_or_default();
        return Err(Reply::error(format!(
            "ERR BITOP {} must be called with at least two source keys.",
            String::from_utf8_lossy(name).to_ascii_uppercase()
        )));
    }
    // Look every source up (type check, lazy expiry), then read them in place.
    for i in 3..a.len() {
        super::string_value::lookup_source(s, a.bytes(i))?;
    }
    let sources: Vec<Cow<'_, [u8]>> = (3..a.len())
        .map(|i| match s.keyspace.peek(a.bytes(i)) {
            Some(Value::String(v)) => v.bytes(),
            _ => Cow::Borrowed(&[][..]),
        })
        .collect();
    let refs: Vec<&[u8]> = sources.iter().map(|c| c.as_ref()).collect();
    let result = bitmap::bitop(op, &refs);
    drop(refs);
    drop(sources);
    let len = result.len();
    let dest = a.bytes(2);
    let changed = if len > 0 {
        let replaced = s.overwrite_probe(dest);
        store(s, dest, ArgObject::Raw(Sds::from_vec(result)), false);
        s.notify_overwritten(dest, replaced);
        s.notify_here(notify::STRING, "set", dest);
        true
    } else {
        let deleted = s.keyspace.remove_stored(dest);
        if deleted {
            s.notify_here(notify::GENERIC, "del", dest);
        }
        deleted
    };
    s.set_dirty(u64::from(changed));
    Ok(Reply::Integer(len as i64))
}

#[cfg(test)]
mod tests {
    use crate::{Reply, Server};

    fn int(n: i64) -> Reply {
        Reply::Integer(n)
    }

    #[test]
    fn setbit_far_out_costs_what_the_article_says() {
        let mut s = Server::new();
        assert_eq!(s.cmd(&["SETBIT", "bm:sparse", "10000000", "1"]), int(0));
        assert_eq!(
            s.cmd(&["MEMORY", "USAGE", "bm:sparse"]),
            int(1_310_720 + 32)
        );
        assert_eq!(s.cmd(&["STRLEN", "bm:sparse"]), int(1_250_001));
        assert_eq!(
            s.cmd(&["OBJECT", "ENCODING", "bm:sparse"]),
            Reply::bulk("raw")
        );
        assert_eq!(s.cmd(&["GETBIT", "bm:sparse", "10000000"]), int(1));
        assert_eq!(s.cmd(&["BITCOUNT", "bm:sparse"]), int(1));
        assert_eq!(s.cmd(&["BITPOS", "bm:sparse", "1"]), int(10_000_000));
        let err = Reply::error("ERR bit offset is not an integer or out of range");
        assert_eq!(s.cmd(&["SETBIT", "k", "4294967296", "1"]), err);
        assert_eq!(s.cmd(&["SETBIT", "k", "-1", "1"]), err);
        assert_eq!(
            s.cmd(&["SETBIT", "k", "1", "2"]),
            Reply::error("ERR bit is not an integer or out of range")
        );
    }

    #[test]
    fn ranges_and_bitop_rules() {
        let mut s = Server::new();
        s.cmd(&["SET", "k", "foobar"]);
        assert_eq!(s.cmd(&["BITCOUNT", "k"]), int(26));
        assert_eq!(s.cmd(&["BITCOUNT", "k", "1", "1"]), int(6));
        assert_eq!(s.cmd(&["BITCOUNT", "k", "5", "30", "BIT"]), int(17));
        assert_eq!(s.cmd(&["BITPOS", "k", "0"]), int(0));
        s.cmd(&["SET", "m", "\u{7f}"]);
        assert_eq!(s.cmd(&["BITPOS", "m", "1", "0", "-1", "BIT"]), int(1));
        assert_eq!(
            s.cmd(&["BITOP", "NOT", "d", "k", "m"]),
            Reply::error("ERR BITOP NOT must be called with a single source key.")
        );
        assert_eq!(
            s.cmd(&["BITOP", "andor", "d", "k"]),
            Reply::error("ERR BITOP ANDOR must be called with at least two source keys.")
        );
        assert_eq!(s.cmd(&["BITOP", "ONE", "d", "k", "m"]), int(6));
        assert_eq!(s.cmd(&["BITOP", "AND", "d", "none"]), int(0));
        assert_eq!(s.cmd(&["EXISTS", "d"]), int(0));
    }
}
