//! List commands (src/t_list.c): pushes, pops with a count, ranges, LINDEX,
//! LSET, LREM, LTRIM, LINSERT, LPOS, LMOVE/RPOPLPUSH and LMPOP, with Redis
//! 8.6.3's replies and its order of checks (each command parses its numbers
//! before or after looking the key up exactly where Redis does, so which error
//! wins is the same). The blocking forms are in [`super::list_blocking`].
//!
//! Encodings change where Redis changes them (see [`crate::list`]): before
//! elements are added (growing) and after some went (shrinking), with the
//! thresholds read from the config at that moment; an emptied list is deleted.

use super::{flags::*, Args, CmdResult, CommandSpec, Server};
use crate::keyspace::Value;
use crate::list::{End, List, ListConfig};
use crate::reply::{errors, Reply};
use crate::server::notify;

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec::new("lpush", -3, lpush)
        .flags(WRITE | DENYOOM | FAST)
        .keys(1, 1, 1)
        .doc(
            "1.0.0",
            "Adds elements at the head of a list, creating it if needed.",
            "key element [element ...]",
        ),
    CommandSpec::new("rpush", -3, rpush)
        .flags(WRITE | DENYOOM | FAST)
        .keys(1, 1, 1)
        .doc(
            "1.0.0",
            "Adds elements at the tail of a list, creating it if needed.",
            "key element [element ...]",
        ),
    CommandSpec::new("lpushx", -3, lpushx)
        .flags(WRITE | DENYOOM | FAST)
        .keys(1, 1, 1)
        .doc(
            "2.2.0",
            "Adds elements at the head of a list that already exists.",
            "key element [element ...]",
        ),
    CommandSpec::new("rpushx", -3, rpushx)
        .flags(WRITE | DENYOOM | FAST)
        .keys(1, 1, 1)
        .doc(
            "2.2.0",
            "Adds elements at the tail of a list that already exists.",
            "key element [element ...]",
        ),
    CommandSpec::new("lpop", -2, lpop)
        .flags(WRITE | FAST)
        .keys(1, 1, 1)
        .doc(
            "1.0.0",
            "Removes and returns the first element, or the first count elements, of a list.",
            "key [count]",
        ),
    CommandSpec::new("rpop", -2, rpop)
        .flags(WRITE | FAST)
        .keys(1, 1, 1)
        .doc(
            "1.0.0",
            "Removes and returns the last element, or the last count elements, of a list.",
            "key [count]",
        ),
    CommandSpec::new("lrange", 4, lrange)
        .flags(READONLY)
        .keys(1, 1, 1)
        .doc(
            "1.0.0",
            "Returns the elements between two indexes of a list.",
            "key start stop",
        ),
    CommandSpec::new("llen", 2, llen)
        .flags(READONLY | FAST)
        .keys(1, 1, 1)
        .doc("1.0.0", "Returns how many elements a list holds.", "key"),
    CommandSpec::new("lindex", 3, lindex)
        .flags(READONLY)
        .keys(1, 1, 1)
        .doc(
            "1.0.0",
            "Returns the element at an index of a list.",
            "key index",
        ),
    CommandSpec::new("lset", 4, lset)
        .flags(WRITE | DENYOOM)
        .keys(1, 1, 1)
        .doc(
            "1.0.0",
            "Overwrites the element at an index of a list.",
            "key index element",
        ),
    CommandSpec::new("lrem", 4, lrem)
        .flags(WRITE)
        .keys(1, 1, 1)
        .doc(
            "1.0.0",
            "Removes elements equal to a value from a list, from either end.",
            "key count element",
        ),
    CommandSpec::new("ltrim", 4, ltrim)
        .flags(WRITE)
        .keys(1, 1, 1)
        .doc(
            "1.0.0",
            "Keeps only the elements between two indexes of a list.",
            "key start stop",
        ),
    CommandSpec::new("linsert", 5, linsert)
        .flags(WRITE | DENYOOM)
        .keys(1, 1, 1)
        .doc(
            "2.2.0",
            "Inserts an element before or after the first occurrence of a pivot.",
            "key <BEFORE | AFTER> pivot element",
        ),
    CommandSpec::new("lpos", -3, lpos)
        .flags(READONLY)
        .keys(1, 1, 1)
        .doc(
            "6.0.6",
            "Returns the indexes of the elements equal to a value in a list.",
            "key element [RANK rank] [COUNT num-matches] [MAXLEN len]",
        ),
    CommandSpec::new("lmove", 5, lmove)
        .flags(WRITE | DENYOOM)
        .keys(1, 2, 1)
        .doc(
            "6.2.0",
            "Pops an element from one end of a list and pushes it at an end of another.",
            "source destination <LEFT | RIGHT> <LEFT | RIGHT>",
        ),
    CommandSpec::new("rpoplpush", 3, rpoplpush)
        .flags(WRITE | DENYOOM)
        .keys(1, 2, 1)
        .doc(
            "1.2.0",
            "Pops the last element of a list and pushes it at the head of another.",
            "source destination",
        ),
    CommandSpec::new("lmpop", -4, lmpop)
        .flags(WRITE | MOVABLE_KEYS)
        .doc(
            "7.0.0",
            "Pops elements from the first non-empty list among several keys.",
            "numkeys key [key ...] <LEFT | RIGHT> [COUNT count]",
        ),
];

// ----- shared helpers (also used by the blocking forms and SORT) -----

pub(super) fn wrongtype() -> Reply {
    Reply::error(errors::WRONGTYPE)
}

/// The list at `key` for reading: `Ok(None)` if missing, WRONGTYPE if another type.
pub(super) fn read<'s>(s: &'s mut Server, key: &[u8]) -> Result<Option<&'s List>, Reply> {
    match s.keyspace.get(key) {
        None => Ok(None),
        Some(Value::List(l)) => Ok(Some(l)),
        Some(_) => Err(wrongtype()),
    }
}

/// The list at `key`, already known to exist, for writing.
pub(super) fn list_mut<'s>(s: &'s mut Server, key: &[u8]) -> &'s mut List {
    match s.keyspace.get_mut(key) {
        Some(Value::List(l)) => l,
        _ => unreachable!("the caller checked that {key:?} holds a list"),
    }
}

pub(super) fn config(s: &Server) -> ListConfig {
    ListConfig::of(&s.config)
}

/// `listElementsRemoved`: the command's `event` is notified; an emptied list
/// is deleted (and `del` notified), a shrunk one may turn back into a listpack.
pub(super) fn after_removal(s: &mut Server, key: &[u8], event: &'static str) {
    s.notify_here(notify::LIST, event, key);
    let cfg = config(s);
    let list = list_mut(s, key);
    if list.is_empty() {
        s.keyspace.remove(key);
        s.notify_here(notify::GENERIC, "del", key);
    } else {
        list.convert_after_shrink(cfg);
    }
}

/// The event of a pop from `end`.
fn pop_event(end: End) -> &'static str {
    match end {
        End::Head => "lpop",
        End::Tail => "rpop",
    }
}

/// The event of a push at `end`.
fn push_event(end: End) -> &'static str {
    match end {
        End::Head => "lpush",
        End::Tail => "rpush",
    }
}

/// `getLongFromObjectOrReply`, with Redis's message or `msg`.
fn long_arg(a: &Args, i: usize, msg: Option<&str>) -> Result<i64, Reply> {
    crate::num::parse_i64(a.bytes(i)).ok_or_else(|| match msg {
        Some(m) => Reply::error(format!("ERR {m}")),
        None => Reply::error(errors::NOT_INTEGER),
    })
}

/// `getRangeLongFromObjectOrReply`.
pub(super) fn range_long(
    a: &Args,
    i: usize,
    min: i64,
    max: i64,
    msg: Option<&str>,
) -> Result<i64, Reply> {
    let v = long_arg(a, i, msg)?;
    if v < min || v > max {
        return Err(match msg {
            Some(m) => Reply::error(format!("ERR {m}")),
            None => Reply::error(format!(
                "ERR value is out of range, value must between {min} and {max}"
            )),
        });
    }
    Ok(v)
}

/// `getPositiveLongFromObjectOrReply`.
fn positive_long(a: &Args, i: usize, msg: Option<&str>) -> Result<i64, Reply> {
    range_long(
        a,
        i,
        0,
        i64::MAX,
        Some(msg.unwrap_or("value is out of range, must be positive")),
    )
}

/// `getListPositionFromObjectOrReply`: LEFT or RIGHT.
pub(super) fn end_arg(a: &Args, i: usize) -> Result<End, Reply> {
    if a.is(i, "right") {
        Ok(End::Tail)
    } else if a.is(i, "left") {
        Ok(End::Head)
    } else {
        Err(Reply::error(errors::SYNTAX))
    }
}

fn bulks<'a>(items: impl Iterator<Item = &'a [u8]>) -> Reply {
    Reply::Array(items.map(Reply::bulk).collect())
}

/// `addListRangeReply`: the elements `start..=end` (negative from the end),
/// from `end` down to `start` when `reverse`.
fn range_reply(list: &List, start: i64, end: i64, reverse: bool) -> Reply {
    match list.range_bounds(start, end) {
        None => Reply::Array(Vec::new()),
        Some((from, to)) => {
            let n = to - from + 1;
            let first = if reverse { to } else { from };
            bulks(list.iter_from(first, reverse).take(n))
        }
    }
}

/// Pops up to `count` elements from an end of the list at `key` (which exists),
/// as LPOP/RPOP with a count and LMPOP do: the reply is the elements in pop
/// order.
pub(super) fn pop_range(s: &mut Server, key: &[u8], end: End, count: usize) -> Reply {
    let list = list_mut(s, key);
    let n = count.min(list.len());
    let len = list.len() as i64;
    let reply = match end {
        End::Head => range_reply(list, 0, n as i64 - 1, false),
        End::Tail => range_reply(list, len - n as i64, -1, true),
    };
    let start = match end {
        End::Head => 0,
        End::Tail => list.len() - n,
    };
    list.delete_range(start, n);
    after_removal(s, key, pop_event(end));
    reply
}

/// Pops one element from an end of the existing list at `key`.
pub(super) fn pop_one(s: &mut Server, key: &[u8], end: End) -> Vec<u8> {
    let value = list_mut(s, key)
        .pop(end)
        .expect("the list is not empty")
        .value;
    after_removal(s, key, pop_event(end));
    value
}

// ----- pushes -----

fn lpush(s: &mut Server, a: &Args) -> CmdResult {
    push_generic(s, a, End::Head, false)
}

fn rpush(s: &mut Server, a: &Args) -> CmdResult {
    push_generic(s, a, End::Tail, false)
}

fn lpushx(s: &mut Server, a: &Args) -> CmdResult {
    push_generic(s, a, End::Head, true)
}

fn rpushx(s: &mut Server, a: &Args) -> CmdResult {
    push_generic(s, a, End::Tail, true)
}

/// `pushGenericCommand`: `xx` pushes only onto an existing list.
fn push_generic(s: &mut Server, a: &Args, end: End, xx: bool) -> CmdResult {
    let key = a.bytes(1);
    if read(s, key)?.is_none() {
        if xx {
            return Ok(Reply::Integer(0));
        }
        s.keyspace.insert(key, Value::List(Box::default()));
    }
    let cfg = config(s);
    let values = &a.all()[2..];
    let list = list_mut(s, key);
    let bytes = values.iter().map(|v| v.len()).sum();
    list.convert_for_growth(cfg, bytes, values.len());
    for v in values {
        list.push(v, end);
    }
    let len = list.len() as i64;
    s.notify_here(notify::LIST, push_event(end), key);
    Ok(Reply::Integer(len))
}

/// `lmoveHandlePush`: pushes `popped` onto `dst` (creating it), checking the
/// size as Redis does for an element that may be an integer object.
pub(super) fn push_moved(s: &mut Server, dst: &[u8], popped: &crate::list::Popped, end: End) {
    if s.keyspace.peek(dst).is_none() {
        s.keyspace.insert(dst, Value::List(Box::default()));
    }
    let cfg = config(s);
    let list = list_mut(s, dst);
    let bytes = if popped.int_object {
        0
    } else {
        popped.value.len()
    };
    list.convert_for_growth(cfg, bytes, 1);
    list.push(&popped.value, end);
    s.notify_here(notify::LIST, push_event(end), dst);
}

// ----- pops -----

fn lpop(s: &mut Server, a: &Args) -> CmdResult {
    pop_generic(s, a, End::Head)
}

fn rpop(s: &mut Server, a: &Args) -> CmdResult {
    pop_generic(s, a, End::Tail)
}

/// `popGenericCommand`: one element as a bulk string, or with a count an array.
fn pop_generic(s: &mut Server, a: &Args, end: End) -> CmdResult {
    if a.len() > 3 {
        return Err(Reply::error(errors::arity(if end == End::Head {
            "lpop"
        } else {
            "rpop"
        })));
    }
    let count = if a.len() == 3 {
        Some(positive_long(a, 2, None)?)
    } else {
        None
    };
    let key = a.bytes(1);
    if read(s, key)?.is_none() {
        return Ok(if count.is_some() {
            Reply::NilArray
        } else {
            Reply::Nil
        });
    }
    match count {
        Some(0) => Ok(Reply::Array(Vec::new())),
        Some(n) => Ok(pop_range(s, key, end, n as usize)),
        None => Ok(Reply::bulk_vec(pop_one(s, key, end))),
    }
}

/// LMPOP numkeys key [key ...] LEFT|RIGHT [COUNT count].
fn lmpop(s: &mut Server, a: &Args) -> CmdResult {
    let parsed = parse_mpop(a, 1)?;
    for key in parsed.keys.clone() {
        let key = a.bytes(key);
        match read(s, key)? {
            Some(l) if !l.is_empty() => {
                let elements = pop_range(s, key, parsed.end, parsed.count);
                return Ok(Reply::Array(vec![Reply::bulk(key), elements]));
            }
            _ => continue,
        }
    }
    Ok(Reply::NilArray)
}

/// What `lmpopGenericCommand` parses: the key positions, the end and the count.
pub(super) struct Mpop {
    pub keys: std::ops::Range<usize>,
    pub end: End,
    pub count: usize,
}

/// The arguments of LMPOP (numkeys at 1) and BLMPOP (numkeys at 2).
pub(super) fn parse_mpop(a: &Args, numkeys_at: usize) -> Result<Mpop, Reply> {
    let numkeys = range_long(
        a,
        numkeys_at,
        1,
        i64::MAX,
        Some("numkeys should be greater than 0"),
    )?;
    let first = numkeys_at + 1;
    // The position of LEFT|RIGHT; huge counts cannot fit the arguments.
    let where_at = (first as u64).saturating_add(numkeys as u64);
    if where_at >= a.len() as u64 {
        return Err(Reply::error(errors::SYNTAX));
    }
    let where_at = where_at as usize;
    let end = end_arg(a, where_at)?;
    let mut count = None;
    let mut j = where_at + 1;
    while j < a.len() {
        if count.is_none() && a.is(j, "count") && j + 1 < a.len() {
            j += 1;
            count = Some(range_long(
                a,
                j,
                1,
                i64::MAX,
                Some("count should be greater than 0"),
            )?);
        } else {
            return Err(Reply::error(errors::SYNTAX));
        }
        j += 1;
    }
    Ok(Mpop {
        keys: first..where_at,
        end,
        count: count.unwrap_or(1) as usize,
    })
}

// ----- reading -----

fn lrange(s: &mut Server, a: &Args) -> CmdResult {
    let start = long_arg(a, 2, None)?;
    let end = long_arg(a, 3, None)?;
    Ok(match read(s, a.bytes(1))? {
        None => Reply::Array(Vec::new()),
        Some(l) => range_reply(l, start, end, false),
    })
}

fn llen(s: &mut Server, a: &Args) -> CmdResult {
    Ok(Reply::Integer(
        read(s, a.bytes(1))?.map_or(0, |l| l.len()) as i64
    ))
}

/// LINDEX looks the key up before it parses the index.
fn lindex(s: &mut Server, a: &Args) -> CmdResult {
    let Some(list) = read(s, a.bytes(1))? else {
        return Ok(Reply::Nil);
    };
    let index = long_arg(a, 2, None)?;
    Ok(list.get(index).map_or(Reply::Nil, Reply::bulk))
}

/// LPOS key element [RANK rank] [COUNT num-matches] [MAXLEN len].
fn lpos(s: &mut Server, a: &Args) -> CmdResult {
    let element = a.bytes(2);
    let (mut rank, mut count, mut maxlen) = (1i64, None, 0i64);
    let mut j = 3;
    while j < a.len() {
        let more = j + 1 < a.len();
        if a.is(j, "rank") && more {
            j += 1;
            rank = range_long(a, j, -i64::MAX, i64::MAX, None)?;
            if rank == 0 {
                return Err(Reply::error(
                    "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use negative to start from the end of the list",
                ));
            }
        } else if a.is(j, "count") && more {
            j += 1;
            count = Some(positive_long(a, j, Some("COUNT can't be negative"))?);
        } else if a.is(j, "maxlen") && more {
            j += 1;
            maxlen = positive_long(a, j, Some("MAXLEN can't be negative"))?;
        } else {
            return Err(Reply::error(errors::SYNTAX));
        }
        j += 1;
    }
    let from_tail = rank < 0;
    let rank = rank.unsigned_abs();
    let Some(list) = read(s, a.bytes(1))? else {
        return Ok(if count.is_some() {
            Reply::Array(Vec::new())
        } else {
            Reply::Nil
        });
    };
    let len = list.len();
    let start = if from_tail { len.saturating_sub(1) } else { 0 };
    let mut found = Vec::new();
    let mut matches: u64 = 0;
    let mut single = None;
    if len > 0 {
        for (index, e) in list.iter_from(start, from_tail).enumerate() {
            if maxlen != 0 && index as i64 >= maxlen {
                break;
            }
            if e != element {
                continue;
            }
            matches += 1;
            let at = if from_tail { len - index - 1 } else { index };
            if matches < rank {
                continue;
            }
            match count {
                None => {
                    single = Some(at);
                    break;
                }
                Some(c) => {
                    found.push(Reply::Integer(at as i64));
                    if c != 0 && matches - rank + 1 >= c as u64 {
                        break;
                    }
                }
            }
        }
    }
    Ok(match count {
        Some(_) => Reply::Array(found),
        None => single.map_or(Reply::Nil, |i| Reply::Integer(i as i64)),
    })
}

// ----- changes -----

/// LSET: the key first ("no such key"), then the index.
fn lset(s: &mut Server, a: &Args) -> CmdResult {
    let key = a.bytes(1);
    if read(s, key)?.is_none() {
        return Err(Reply::error("ERR no such key"));
    }
    // `listTypeReplaceAtIndex` takes an `int`: the index wraps to 32 bits, so
    // 9223372036854775807 is -1 and 4294967296 is 0.
    let index = long_arg(a, 2, None)? as i32 as i64;
    let value = a.bytes(3);
    let cfg = config(s);
    let list = list_mut(s, key);
    // Growing is checked before the index (and stays if it is out of range).
    list.convert_for_growth(cfg, value.len(), 1);
    if !list.set(index, value) {
        return Err(Reply::error("ERR index out of range"));
    }
    list.convert_after_shrink(cfg);
    s.notify_here(notify::LIST, "lset", key);
    Ok(Reply::ok())
}

fn lrem(s: &mut Server, a: &Args) -> CmdResult {
    let count = range_long(a, 2, -i64::MAX, i64::MAX, None)?;
    let key = a.bytes(1);
    if read(s, key)?.is_none() {
        return Ok(Reply::Integer(0));
    }
    let removed =
        list_mut(s, key).remove_matching(a.bytes(3), count.unsigned_abs() as usize, count < 0);
    if removed > 0 {
        after_removal(s, key, "lrem");
    }
    Ok(Reply::Integer(removed as i64))
}

fn ltrim(s: &mut Server, a: &Args) -> CmdResult {
    let start = long_arg(a, 2, None)?;
    let end = long_arg(a, 3, None)?;
    let key = a.bytes(1);
    let Some(list) = read(s, key)? else {
        return Ok(Reply::ok());
    };
    let len = list.len();
    let (ltrim, rtrim) = match list.range_bounds(start, end) {
        None => (len, 0),
        Some((from, to)) => (from, len - to - 1),
    };
    let list = list_mut(s, key);
    list.delete_range(0, ltrim);
    let left = list.len();
    list.delete_range(left - rtrim.min(left), rtrim);
    after_removal(s, key, "ltrim");
    Ok(Reply::ok())
}

/// LINSERT: BEFORE/AFTER is checked first, then the key. The list is made
/// ready for the new element before the pivot is searched, so a conversion
/// happens even when the pivot is missing.
fn linsert(s: &mut Server, a: &Args) -> CmdResult {
    let after = if a.is(2, "after") {
        true
    } else if a.is(2, "before") {
        false
    } else {
        return Err(Reply::error(errors::SYNTAX));
    };
    let key = a.bytes(1);
    let cfg = config(s);
    let Some(list) = read(s, key)? else {
        return Ok(Reply::Integer(0));
    };
    let (pivot, value) = (a.bytes(3), a.bytes(4));
    // Without a pivot and without a conversion nothing changes (and the key is
    // not handed out for writing, so WATCH does not see it).
    if !list.iter().any(|e| e == pivot) && !list.grows_out_of_listpack(cfg, value.len(), 1) {
        return Ok(Reply::Integer(-1));
    }
    let list = list_mut(s, key);
    list.convert_for_growth(cfg, value.len(), 1);
    if !list.insert_at_pivot(pivot, value, after) {
        return Ok(Reply::Integer(-1));
    }
    let len = list.len() as i64;
    s.notify_here(notify::LIST, "linsert", key);
    Ok(Reply::Integer(len))
}

fn lmove(s: &mut Server, a: &Args) -> CmdResult {
    let from = end_arg(a, 3)?;
    let to = end_arg(a, 4)?;
    lmove_generic(s, a.bytes(1), a.bytes(2), from, to)
}

fn rpoplpush(s: &mut Server, a: &Args) -> CmdResult {
    lmove_generic(s, a.bytes(1), a.bytes(2), End::Tail, End::Head)
}

/// `lmoveGenericCommand`: both types are checked before anything moves; the
/// element is pushed before the source is deleted or converted.
pub(super) fn lmove_generic(
    s: &mut Server,
    src: &[u8],
    dst: &[u8],
    from: End,
    to: End,
) -> CmdResult {
    match read(s, src)? {
        None => return Ok(Reply::Nil),
        Some(l) if l.is_empty() => return Ok(Reply::Nil),
        Some(_) => {}
    }
    read(s, dst)?;
    let popped = list_mut(s, src).pop(from).expect("the source is not empty");
    push_moved(s, dst, &popped, to);
    after_removal(s, src, pop_event(from));
    Ok(Reply::bulk_vec(popped.value))
}
