//! Set commands (src/t_set.c), with Redis 8.6.3's replies: SADD, SREM, SCARD,
//! SISMEMBER, SMISMEMBER, SMEMBERS, SMOVE, SPOP, SRANDMEMBER, SINTER,
//! SINTERSTORE, SINTERCARD, SUNION, SUNIONSTORE, SDIFF and SDIFFSTORE. (SSCAN is
//! with the other SCAN commands.)
//!
//! Replies: SMEMBERS, SINTER, SUNION, SDIFF and SPOP with a count are sets
//! (`addReplySetLen`: `~n` in RESP3); SRANDMEMBER with a count is an array.
//!
//! The intersection follows `sinterGenericCommand`: a missing key makes the
//! result empty at once; otherwise the sources are ordered by size (a stable
//! sort) and the members of the smallest are looked up in the others, so
//! SINTER replies in the smallest set's order. SINTERSTORE builds an intset when
//! the smallest source is one, a listpack otherwise, and turns an all-integer
//! result back into an intset; SINTERCARD stops counting at LIMIT.
//!
//! Union and difference follow `sunionDiffGenericCommand`: the result is built in
//! a temporary set that starts as an intset (when every input is one, or for the
//! STORE forms) or as an empty dict, and converts as members arrive, so the
//! reply walks that set and a stored result keeps its encoding. SDIFF picks
//! Redis's algorithm by the same estimate (walk the first set and look each
//! member up, or copy it and remove the others), which decides the temporary
//! set's conversions. A repeated first key makes the difference empty.
//!
//! SPOP and SRANDMEMBER with a count choose among Redis's strategies by the same
//! ratios (SPOP: pop one by one while the rest is over a fifth of the count,
//! else rebuild the set from the members that stay; SRANDMEMBER: the whole set,
//! a listpack sample, a dict copy trimmed at random, or random draws until enough
//! distinct ones came up). A negative SRANDMEMBER count beyond
//! [`crate::sampling::MAX_DRAWS`] is refused (Redis would stream it without end).
//!
//! An emptied set is deleted, as in Redis. A write that changes nothing does not
//! touch the key (WATCH).

use super::{flags::*, Args, CmdResult, CommandSpec, Server};
use crate::dict::Dict;
use crate::keyspace::Value;
use crate::num::parse_i64;
use crate::reply::{errors, Reply};
use crate::sampling;
use crate::server::notify;
use crate::set::{Limits, Set};

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec::new("sadd", -3, sadd)
        .flags(WRITE | DENYOOM | FAST)
        .keys(1, 1, 1)
        .doc(
            "1.0.0",
            "Adds members to a set, creating it if needed.",
            "key member [member ...]",
        ),
    CommandSpec::new("srem", -3, srem)
        .flags(WRITE | FAST)
        .keys(1, 1, 1)
        .doc(
            "1.0.0",
            "Removes members from a set; the key goes with its last member.",
            "key member [member ...]",
        ),
    CommandSpec::new("scard", 2, scard)
        .flags(READONLY | FAST)
        .keys(1, 1, 1)
        .doc("1.0.0", "Returns how many members a set has.", "key"),
    CommandSpec::new("sismember", 3, sismember)
        .flags(READONLY | FAST)
        .keys(1, 1, 1)
        .doc(
            "1.0.0",
            "Tells whether a value is a member of a set.",
            "key member",
        ),
    CommandSpec::new("smismember", -3, smismember)
        .flags(READONLY | FAST)
        .keys(1, 1, 1)
        .doc(
            "6.2.0",
            "Tells, for each of several values, whether it is a member.",
            "key member [member ...]",
        ),
    CommandSpec::new("smembers", 2, smembers)
        .flags(READONLY)
        .keys(1, 1, 1)
        .doc("1.0.0", "Returns every member of a set.", "key"),
    CommandSpec::new("smove", 4, smove)
        .flags(WRITE | FAST)
        .keys(1, 2, 1)
        .doc(
            "1.0.0",
            "Moves a member from one set to another.",
            "source destination member",
        ),
    CommandSpec::new("spop", -2, spop)
        .flags(WRITE | FAST)
        .keys(1, 1, 1)
        .doc(
            "1.0.0",
            "Removes and returns random members of a set.",
            "key [count]",
        ),
    CommandSpec::new("srandmember", -2, srandmember)
        .flags(READONLY)
        .keys(1, 1, 1)
        .doc(
            "1.0.0",
            "Returns random members, distinct for a positive count, repeated for a negative one.",
            "key [count]",
        ),
    CommandSpec::new("sinter", -2, sinter)
        .flags(READONLY)
        .keys(1, -1, 1)
        .doc(
            "1.0.0",
            "Returns the members every given set holds.",
            "key [key ...]",
        ),
    CommandSpec::new("sinterstore", -3, sinterstore)
        .flags(WRITE | DENYOOM)
        .keys(1, -1, 1)
        .doc(
            "1.0.0",
            "Stores the intersection of sets in a key.",
            "destination key [key ...]",
        ),
    CommandSpec::new("sintercard", -3, sintercard)
        .flags(READONLY | MOVABLE_KEYS)
        .doc(
            "7.0.0",
            "Counts the members every given set holds, stopping at an optional limit.",
            "numkeys key [key ...] [LIMIT limit]",
        ),
    CommandSpec::new("sunion", -2, sunion)
        .flags(READONLY)
        .keys(1, -1, 1)
        .doc(
            "1.0.0",
            "Returns the members of any of the given sets.",
            "key [key ...]",
        ),
    CommandSpec::new("sunionstore", -3, sunionstore)
        .flags(WRITE | DENYOOM)
        .keys(1, -1, 1)
        .doc(
            "1.0.0",
            "Stores the union of sets in a key.",
            "destination key [key ...]",
        ),
    CommandSpec::new("sdiff", -2, sdiff)
        .flags(READONLY)
        .keys(1, -1, 1)
        .doc(
            "1.0.0",
            "Returns the members of the first set that no other given set holds.",
            "key [key ...]",
        ),
    CommandSpec::new("sdiffstore", -3, sdiffstore)
        .flags(WRITE | DENYOOM)
        .keys(1, -1, 1)
        .doc(
            "1.0.0",
            "Stores the difference of the first set and the others in a key.",
            "destination key [key ...]",
        ),
];

/// `SPOP_MOVE_STRATEGY_MUL`.
const SPOP_MOVE_STRATEGY_MUL: usize = 5;
/// `SRANDMEMBER_SUB_STRATEGY_MUL`.
const SRANDMEMBER_SUB_STRATEGY_MUL: usize = 3;

fn wrongtype() -> Reply {
    Reply::error(errors::WRONGTYPE)
}

fn limits(s: &Server) -> Limits {
    Limits::from_config(&s.config)
}

/// The set at `key` for reading: `Ok(None)` if missing, WRONGTYPE if another type.
fn read<'s>(s: &'s mut Server, key: &[u8]) -> Result<Option<&'s Set>, Reply> {
    match s.keyspace.get(key) {
        None => Ok(None),
        Some(Value::Set(set)) => Ok(Some(set)),
        Some(_) => Err(wrongtype()),
    }
}

/// A source set of SINTER/SUNION/SDIFF and their STOREs: `lookupKeyRead`
/// whatever the command, so a missing source is a keyspace miss (and a
/// `keymiss` event) even for the STORE forms.
fn read_source<'s>(s: &'s mut Server, key: &[u8]) -> Result<Option<&'s Set>, Reply> {
    match s.keyspace.lookup_read(key) {
        None => Ok(None),
        Some(Value::Set(set)) => Ok(Some(set)),
        Some(_) => Err(wrongtype()),
    }
}

/// The set at `key` for a command that may change it (or whose lookups make a
/// dict rehash step); WATCH is told separately ([`touched`]), only when the
/// command changes the set.
fn write<'s>(s: &'s mut Server, key: &[u8]) -> Result<Option<&'s mut Set>, Reply> {
    match s.keyspace.get_mut_quiet(key) {
        None => Ok(None),
        Some(Value::Set(set)) => Ok(Some(set)),
        Some(_) => Err(wrongtype()),
    }
}

/// The command changed the set at `key` (`signalModifiedKey`).
fn touched(s: &mut Server, key: &[u8]) {
    s.keyspace.watches.note(key);
}

fn bulks(members: Vec<Vec<u8>>) -> Vec<Reply> {
    members.into_iter().map(Reply::bulk_vec).collect()
}

pub fn sadd(s: &mut Server, a: &Args) -> CmdResult {
    let key = a.bytes(1);
    let hint = a.len() - 2;
    let limits = limits(s);
    match write(s, key)? {
        None => {
            let set = Set::create(a.bytes(2), hint, &limits);
            s.keyspace.insert(key, Value::Set(set));
        }
        Some(set) => set.maybe_convert(hint, &limits),
    }
    let set = write(s, key)?.expect("created above");
    let added = (2..a.len())
        .filter(|&i| set.add(a.bytes(i), &limits))
        .count();
    if added > 0 {
        touched(s, key);
        s.notify_here(notify::SET, "sadd", key);
    }
    Ok(Reply::Integer(added as i64))
}

pub fn srem(s: &mut Server, a: &Args) -> CmdResult {
    let key = a.bytes(1);
    let Some(set) = write(s, key)? else {
        return Ok(Reply::Integer(0));
    };
    let mut removed = 0;
    for i in 2..a.len() {
        if set.remove(a.bytes(i)) {
            removed += 1;
            if set.is_empty() {
                break;
            }
        }
    }
    let empty = set.is_empty();
    if removed > 0 {
        s.notify_here(notify::SET, "srem", key);
    }
    if empty {
        s.keyspace.remove(key);
        s.notify_here(notify::GENERIC, "del", key);
    } else if removed > 0 {
        touched(s, key);
    }
    Ok(Reply::Integer(removed))
}

pub fn scard(s: &mut Server, a: &Args) -> CmdResult {
    Ok(Reply::Integer(
        read(s, a.bytes(1))?.map_or(0, |set| set.len() as i64),
    ))
}

/// The set at `key` as Redis reads it for a membership test (the dict lookup
/// makes a rehash step).
fn lookup_mut<'s>(s: &'s mut Server, key: &[u8]) -> Result<Option<&'s mut Set>, Reply> {
    // A read command: the keyspace does not record it for WATCH.
    write(s, key)
}

pub fn sismember(s: &mut Server, a: &Args) -> CmdResult {
    Ok(match lookup_mut(s, a.bytes(1))? {
        None => Reply::Integer(0),
        Some(set) => Reply::Integer(i64::from(set.contains(a.bytes(2)))),
    })
}

pub fn smismember(s: &mut Server, a: &Args) -> CmdResult {
    let mut set = lookup_mut(s, a.bytes(1))?;
    let replies = (2..a.len())
        .map(|i| {
            let hit = set.as_mut().is_some_and(|set| set.contains(a.bytes(i)));
            Reply::Integer(i64::from(hit))
        })
        .collect();
    Ok(Reply::Array(replies))
}

pub fn smembers(s: &mut Server, a: &Args) -> CmdResult {
    Ok(match read(s, a.bytes(1))? {
        None => Reply::Set(Vec::new()),
        Some(set) => Reply::Set(bulks(set.members())),
    })
}

/// SMOVE source destination member: both keys are looked up first; the same key
/// twice answers whether the member is there.
pub fn smove(s: &mut Server, a: &Args) -> CmdResult {
    let (src, dst, member) = (a.bytes(1), a.bytes(2), a.bytes(3));
    let limits = limits(s);
    let src_kind = s.keyspace.get(src).map(|v| matches!(v, Value::Set(_)));
    let dst_kind = s.keyspace.get(dst).map(|v| matches!(v, Value::Set(_)));
    let Some(src_is_set) = src_kind else {
        return Ok(Reply::Integer(0));
    };
    if !src_is_set || dst_kind == Some(false) {
        return Err(wrongtype());
    }
    if src == dst {
        let present = lookup_mut(s, src)?.is_some_and(|set| set.contains(member));
        return Ok(Reply::Integer(i64::from(present)));
    }
    let set = write(s, src)?.expect("looked up above");
    if !set.remove(member) {
        return Ok(Reply::Integer(0));
    }
    let empty = set.is_empty();
    s.notify_here(notify::SET, "srem", src);
    if empty {
        s.keyspace.remove(src);
        s.notify_here(notify::GENERIC, "del", src);
    } else {
        touched(s, src);
    }
    if dst_kind.is_none() {
        s.keyspace
            .insert(dst, Value::Set(Set::create(member, 1, &limits)));
    }
    if write(s, dst)?
        .expect("exists or created")
        .add(member, &limits)
    {
        touched(s, dst);
        s.notify_here(notify::SET, "sadd", dst);
    }
    Ok(Reply::Integer(1))
}

/// SPOP key [count].
pub fn spop(s: &mut Server, a: &Args) -> CmdResult {
    if a.len() == 3 {
        return spop_count(s, a);
    }
    if a.len() > 3 {
        return Err(Reply::error(errors::SYNTAX));
    }
    let key = a.bytes(1);
    if read(s, key)?.is_none() {
        return Ok(Reply::Nil);
    }
    let Server { keyspace, rng, .. } = s;
    let Some(Value::Set(set)) = keyspace.get_mut(key) else {
        unreachable!("looked up above")
    };
    let member = set.pop_random(rng).expect("a set is never empty");
    let empty = set.is_empty();
    if !empty {
        keyspace.watches.note(key);
    }
    s.notify_here(notify::SET, "spop", key);
    if empty {
        s.keyspace.remove(key);
        s.notify_here(notify::GENERIC, "del", key);
    }
    Ok(Reply::bulk_vec(member))
}

/// `spopWithCountCommand`.
fn spop_count(s: &mut Server, a: &Args) -> CmdResult {
    let count = match a.int(2) {
        Ok(n) if n >= 0 => n as u64,
        _ => return Err(Reply::error("ERR value is out of range, must be positive")),
    };
    let key = a.bytes(1);
    let Some(set) = read(s, key)? else {
        return Ok(Reply::Set(Vec::new()));
    };
    if count == 0 {
        return Ok(Reply::Set(Vec::new()));
    }
    let size = set.len();
    s.notify_here(notify::SET, "spop", key);
    if count >= size as u64 {
        // The whole set, as SUNION of this one key replies it.
        let members = union_diff(s, &[key.to_vec()], false, Op::Union)?.members();
        s.keyspace.remove(key);
        s.notify_here(notify::GENERIC, "del", key);
        return Ok(Reply::Set(bulks(members)));
    }
    let count = count as usize;
    let remaining = size - count;
    let limits = limits(s);
    let Server { keyspace, rng, .. } = s;
    let Some(Value::Set(set)) = keyspace.get_mut(key) else {
        unreachable!("looked up above")
    };
    let popped = if remaining * SPOP_MOVE_STRATEGY_MUL > count {
        if set.is_listpack() {
            let picked = set.listpack_sample(count, rng);
            for (_, m) in &picked {
                set.remove(m);
            }
            picked.into_iter().map(|(_, m)| m).collect()
        } else {
            (0..count)
                .filter_map(|_| set.pop_random(rng))
                .collect::<Vec<_>>()
        }
    } else {
        // Keep `remaining` random members in a new set, reply with the rest.
        let mut kept: Option<Set> = None;
        if set.is_listpack() {
            let mut new = Set::listpack();
            for (_, m) in set.listpack_sample(remaining, rng) {
                new.add(&m, &limits);
                set.remove(&m);
            }
            kept = Some(new);
        } else {
            for _ in 0..remaining {
                let m = set.random_member(rng).expect("members remain");
                let new = kept.get_or_insert_with(|| {
                    if set.is_intset() {
                        Set::intset()
                    } else {
                        Set::listpack()
                    }
                });
                new.add(&m, &limits);
                set.remove(&m);
            }
        }
        let rest = set.members();
        *set = kept.expect("at least one member stays");
        rest
    };
    Ok(Reply::Set(bulks(popped)))
}

/// SRANDMEMBER key [count].
pub fn srandmember(s: &mut Server, a: &Args) -> CmdResult {
    if a.len() == 3 {
        return srandmember_count(s, a);
    }
    if a.len() > 3 {
        return Err(Reply::error(errors::SYNTAX));
    }
    let Server { keyspace, rng, .. } = s;
    match keyspace.get_mut(a.bytes(1)) {
        None => Ok(Reply::Nil),
        Some(Value::Set(set)) => Ok(set.random_member(rng).map_or(Reply::Nil, Reply::bulk_vec)),
        Some(_) => Err(wrongtype()),
    }
}

/// `srandmemberWithCountCommand`.
fn srandmember_count(s: &mut Server, a: &Args) -> CmdResult {
    let count = a.int(2)?;
    if count == i64::MIN {
        return Err(Reply::error(format!(
            "ERR value is out of range, value must between {} and {}",
            -i64::MAX,
            i64::MAX
        )));
    }
    sampling::check_draws(count)?;
    let Server { keyspace, rng, .. } = s;
    let set = match keyspace.get_mut(a.bytes(1)) {
        None => return Ok(Reply::Array(Vec::new())),
        Some(Value::Set(set)) => set,
        Some(_) => return Err(wrongtype()),
    };
    let wanted = count.unsigned_abs() as usize;
    if wanted == 0 {
        return Ok(Reply::Array(Vec::new()));
    }
    let size = set.len();
    let members = if count < 0 || wanted == 1 {
        set.draws(wanted, rng)
    } else if wanted >= size {
        set.members()
    } else if set.is_listpack() {
        set.listpack_sample(wanted, rng)
            .into_iter()
            .map(|(_, m)| m)
            .collect()
    } else if wanted * SRANDMEMBER_SUB_STRATEGY_MUL > size {
        let mut copy: Dict<()> = Dict::new();
        copy.expand(size);
        for m in set.members() {
            copy.add(m, ());
        }
        while copy.len() > wanted {
            let victim = copy
                .fair_random_entry(rng)
                .map(|(m, _)| m.to_vec())
                .expect("non-empty dict");
            copy.remove(&victim);
        }
        copy.iter().map(|(m, _)| m.to_vec()).collect()
    } else {
        let mut picked: Dict<()> = Dict::new();
        picked.expand(wanted);
        while picked.len() < wanted {
            let m = set.random_member(rng).expect("non-empty set");
            picked.add(m, ());
        }
        picked.iter().map(|(m, _)| m.to_vec()).collect()
    };
    Ok(Reply::Array(bulks(members)))
}

pub fn sinter(s: &mut Server, a: &Args) -> CmdResult {
    let keys: Vec<&[u8]> = (1..a.len()).map(|i| a.bytes(i)).collect();
    intersect(s, &keys, Target::Reply)
}

pub fn sinterstore(s: &mut Server, a: &Args) -> CmdResult {
    let keys: Vec<&[u8]> = (2..a.len()).map(|i| a.bytes(i)).collect();
    intersect(s, &keys, Target::Store(a.bytes(1)))
}

/// SINTERCARD numkeys key [key ...] [LIMIT limit].
pub fn sintercard(s: &mut Server, a: &Args) -> CmdResult {
    let numkeys = match parse_i64(a.bytes(1)) {
        Some(n) if n >= 1 => n as u64,
        _ => return Err(Reply::error("ERR numkeys should be greater than 0")),
    };
    if numkeys > (a.len() - 2) as u64 {
        return Err(Reply::error(
            "ERR Number of keys can't be greater than number of args",
        ));
    }
    let numkeys = numkeys as usize;
    let mut limit = 0;
    let mut j = 2 + numkeys;
    while j < a.len() {
        if a.is(j, "limit") && j + 1 < a.len() {
            j += 1;
            limit = match parse_i64(a.bytes(j)) {
                Some(n) if n >= 0 => n as usize,
                _ => return Err(Reply::error("ERR LIMIT can't be negative")),
            };
        } else {
            return Err(Reply::error(errors::SYNTAX));
        }
        j += 1;
    }
    let keys: Vec<&[u8]> = (2..2 + numkeys).map(|i| a.bytes(i)).collect();
    intersect(s, &keys, Target::Count(limit))
}

/// What an intersection produces.
enum Target<'a> {
    Reply,
    Store(&'a [u8]),
    /// A count, stopping at the limit (0: no limit).
    Count(usize),
}

/// `sinterGenericCommand`.
fn intersect(s: &mut Server, keys: &[&[u8]], target: Target) -> CmdResult {
    let limits = limits(s);
    let mut sizes = Vec::with_capacity(keys.len());
    let mut empty = false;
    for key in keys {
        match read_source(s, key)? {
            None => empty = true,
            Some(set) => sizes.push(set.len()),
        }
    }
    if empty {
        return Ok(match target {
            Target::Reply => Reply::Set(Vec::new()),
            Target::Count(_) => Reply::Integer(0),
            Target::Store(dst) => {
                if s.keyspace.remove_stored(dst) {
                    s.notify_here(notify::GENERIC, "del", dst);
                }
                Reply::Integer(0)
            }
        });
    }
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_by_key(|&i| sizes[i]);
    let first = keys[order[0]];
    let (members, mut dest) = {
        let smallest = read(s, first)?.expect("looked up above");
        let dest = matches!(target, Target::Store(_)).then(|| Set::store_target_for(smallest));
        (smallest.members(), dest)
    };
    let mut hits = Vec::new();
    let mut count = 0;
    let mut only_integers = true;
    'members: for m in members {
        for &i in &order[1..] {
            if keys[i] == first {
                continue;
            }
            let other = lookup_mut(s, keys[i])?.expect("looked up above");
            if !other.contains(&m) {
                continue 'members;
            }
        }
        count += 1;
        match (&target, dest.as_mut()) {
            (Target::Count(limit), _) => {
                if *limit != 0 && count >= *limit {
                    break;
                }
            }
            (_, Some(set)) => {
                only_integers &= parse_i64(&m).is_some();
                set.add(&m, &limits);
            }
            _ => hits.push(m),
        }
    }
    Ok(match target {
        Target::Reply => Reply::Set(bulks(hits)),
        Target::Count(_) => Reply::Integer(count as i64),
        Target::Store(dst) => {
            let mut set = dest.expect("built for a store");
            if set.is_empty() {
                if s.keyspace.remove_stored(dst) {
                    s.notify_here(notify::GENERIC, "del", dst);
                }
                return Ok(Reply::Integer(0));
            }
            if only_integers {
                set.maybe_to_intset(&limits);
            }
            let len = set.len();
            let replaced = s.overwrite_probe(dst);
            s.keyspace.insert(dst, Value::Set(set));
            s.notify_overwritten(dst, replaced);
            s.notify_here(notify::SET, "sinterstore", dst);
            Reply::Integer(len as i64)
        }
    })
}

#[derive(Clone, Copy, PartialEq)]
enum Op {
    Union,
    Diff,
}

pub fn sunion(s: &mut Server, a: &Args) -> CmdResult {
    union_diff_command(s, a, Op::Union, false)
}

pub fn sunionstore(s: &mut Server, a: &Args) -> CmdResult {
    union_diff_command(s, a, Op::Union, true)
}

pub fn sdiff(s: &mut Server, a: &Args) -> CmdResult {
    union_diff_command(s, a, Op::Diff, false)
}

pub fn sdiffstore(s: &mut Server, a: &Args) -> CmdResult {
    union_diff_command(s, a, Op::Diff, true)
}

fn union_diff_command(s: &mut Server, a: &Args, op: Op, store: bool) -> CmdResult {
    let first = if store { 2 } else { 1 };
    let keys: Vec<Vec<u8>> = (first..a.len()).map(|i| a.bytes(i).to_vec()).collect();
    let result = union_diff(s, &keys, store, op)?;
    if !store {
        return Ok(Reply::Set(bulks(result.members())));
    }
    let dst = a.bytes(1);
    if result.is_empty() {
        if s.keyspace.remove_stored(dst) {
            s.notify_here(notify::GENERIC, "del", dst);
        }
        return Ok(Reply::Integer(0));
    }
    let len = result.len();
    let replaced = s.overwrite_probe(dst);
    s.keyspace.insert(dst, Value::Set(result));
    s.notify_overwritten(dst, replaced);
    let event = match op {
        Op::Union => "sunionstore",
        Op::Diff => "sdiffstore",
    };
    s.notify_here(notify::SET, event, dst);
    Ok(Reply::Integer(len as i64))
}

/// `sunionDiffGenericCommand` up to the result set.
fn union_diff(s: &mut Server, keys: &[Vec<u8>], store: bool, op: Op) -> Result<Set, Reply> {
    let limits = limits(s);
    // Look every key up first (WRONGTYPE stops at the first wrong one).
    let mut present: Vec<Option<usize>> = Vec::with_capacity(keys.len());
    let mut all_intsets = true;
    for key in keys {
        match read_source(s, key)? {
            None => present.push(None),
            Some(set) => {
                all_intsets &= set.is_intset();
                present.push(Some(set.len()));
            }
        }
    }
    let mut dest = if store || all_intsets {
        Set::intset()
    } else {
        Set::table()
    };
    let same_as_first = present[0].is_some() && keys[1..].iter().any(|k| *k == keys[0]);
    let members_of = |s: &mut Server, key: &[u8]| -> Vec<Vec<u8>> {
        match s.keyspace.peek(key) {
            Some(Value::Set(set)) => set.members(),
            _ => Vec::new(),
        }
    };
    match op {
        Op::Union => {
            for (key, size) in keys.iter().zip(&present) {
                if size.is_some() {
                    for m in members_of(s, key) {
                        dest.add(&m, &limits);
                    }
                }
            }
        }
        Op::Diff if same_as_first || present[0].is_none() => {}
        Op::Diff => {
            let first_len = present[0].expect("checked above");
            let (mut one, mut two) = (0u64, 0u64);
            for size in present.iter().flatten() {
                one += first_len as u64;
                two += *size as u64;
            }
            one /= 2;
            // The others, each with its size, without the first.
            let mut others: Vec<(&Vec<u8>, usize)> = keys[1..]
                .iter()
                .zip(&present[1..])
                .filter_map(|(k, size)| size.map(|n| (k, n)))
                .collect();
            if one <= two {
                // Algorithm 1: the largest sets first, to find members sooner.
                others.sort_by_key(|x| std::cmp::Reverse(x.1));
                'members: for m in members_of(s, &keys[0]) {
                    for (key, _) in &others {
                        if lookup_mut(s, key)?.is_some_and(|set| set.contains(&m)) {
                            continue 'members;
                        }
                    }
                    dest.add(&m, &limits);
                }
            } else {
                // Algorithm 2: copy the first set, then remove the others.
                for m in members_of(s, &keys[0]) {
                    dest.add(&m, &limits);
                }
                for (key, size) in keys[1..].iter().zip(&present[1..]) {
                    if dest.is_empty() {
                        break;
                    }
                    if size.is_some() {
                        for m in members_of(s, key) {
                            dest.remove(&m);
                            if dest.is_empty() {
                                break;
                            }
                        }
                    }
                }
            }
        }
    }
    Ok(dest)
}

#[cfg(test)]
mod tests {
    use crate::reply::Protocol;
    use crate::{Reply, Server};

    fn int(n: i64) -> Reply {
        Reply::Integer(n)
    }

    fn bulks(items: &[&str]) -> Vec<Reply> {
        items.iter().map(Reply::bulk).collect()
    }

    #[test]
    fn sadd_srem_and_encodings() {
        let mut s = Server::new();
        assert_eq!(s.cmd(&["SADD", "s", "3", "1", "2", "1"]), int(3));
        assert_eq!(s.cmd(&["OBJECT", "ENCODING", "s"]), Reply::bulk("intset"));
        assert_eq!(
            s.cmd(&["SMEMBERS", "s"]),
            Reply::Set(bulks(&["1", "2", "3"]))
        );
        assert_eq!(s.cmd(&["MEMORY", "USAGE", "s"]), int(24 + 8 + 6));
        assert_eq!(s.cmd(&["SADD", "s", "x"]), int(1));
        assert_eq!(s.cmd(&["OBJECT", "ENCODING", "s"]), Reply::bulk("listpack"));
        assert_eq!(s.cmd(&["SISMEMBER", "s", "x"]), int(1));
        assert_eq!(s.cmd(&["SREM", "s", "1", "2", "3", "x", "y"]), int(4));
        assert_eq!(s.cmd(&["EXISTS", "s"]), int(0));
        assert_eq!(s.cmd(&["TYPE", "s"]), Reply::Status("none".into()));
    }

    #[test]
    fn intersections() {
        let mut s = Server::new();
        s.cmd(&["SADD", "a", "1", "2", "3", "4"]);
        s.cmd(&["SADD", "b", "2", "3", "x"]);
        assert_eq!(s.cmd(&["SINTERCARD", "2", "a", "b"]), int(2));
        assert_eq!(s.cmd(&["SINTERCARD", "2", "a", "b", "LIMIT", "1"]), int(1));
        assert_eq!(
            s.cmd(&["SINTERCARD", "0", "a"]),
            Reply::error("ERR numkeys should be greater than 0")
        );
        assert_eq!(
            s.cmd(&["SINTERCARD", "3", "a", "b"]),
            Reply::error("ERR Number of keys can't be greater than number of args")
        );
        assert_eq!(s.cmd(&["SINTERSTORE", "d", "a", "b"]), int(2));
        assert_eq!(s.cmd(&["OBJECT", "ENCODING", "d"]), Reply::bulk("intset"));
        assert_eq!(s.cmd(&["SINTERSTORE", "d", "a", "none"]), int(0));
        assert_eq!(s.cmd(&["EXISTS", "d"]), int(0));
    }

    #[test]
    fn unions_and_differences() {
        let mut s = Server::new();
        s.cmd(&["SADD", "a", "3", "1", "2"]);
        s.cmd(&["SADD", "b", "2", "5"]);
        s.cmd(&["SADD", "w", "x", "2"]);
        assert_eq!(
            s.cmd(&["SUNION", "a", "b", "nokey"]),
            Reply::Set(bulks(&["1", "2", "3", "5"]))
        );
        assert_eq!(s.cmd(&["SDIFF", "a", "b"]), Reply::Set(bulks(&["1", "3"])));
        assert_eq!(s.cmd(&["SDIFF", "a", "a"]), Reply::Set(vec![]));
        assert_eq!(s.cmd(&["SDIFFSTORE", "d", "a", "w"]), int(2));
        assert_eq!(s.cmd(&["OBJECT", "ENCODING", "d"]), Reply::bulk("intset"));
        assert_eq!(s.cmd(&["SUNIONSTORE", "u", "a", "w"]), int(4));
        assert_eq!(s.cmd(&["OBJECT", "ENCODING", "u"]), Reply::bulk("listpack"));
        assert_eq!(
            s.cmd(&["SMEMBERS", "u"]),
            Reply::Set(bulks(&["1", "2", "3", "x"]))
        );
        assert_eq!(s.cmd(&["SDIFFSTORE", "u", "nokey", "a"]), int(0));
        assert_eq!(s.cmd(&["EXISTS", "u"]), int(0));
        s.cmd(&["SET", "str", "v"]);
        assert_eq!(
            s.cmd(&["SUNION", "nokey", "str"]),
            Reply::error("WRONGTYPE Operation against a key holding the wrong kind of value")
        );
        let mut out = Vec::new();
        s.cmd(&["SMEMBERS", "b"]).encode(&mut out, Protocol::Resp3);
        assert_eq!(out, b"~2\r\n$1\r\n2\r\n$1\r\n5\r\n");
    }

    #[test]
    fn smove_spop_srandmember() {
        let mut s = Server::new();
        s.cmd(&["SADD", "a", "1", "2"]);
        assert_eq!(s.cmd(&["SMOVE", "a", "b", "1"]), int(1));
        assert_eq!(s.cmd(&["SMOVE", "a", "b", "9"]), int(0));
        assert_eq!(s.cmd(&["SMOVE", "a", "a", "2"]), int(1));
        assert_eq!(s.cmd(&["SMOVE", "a", "b", "2"]), int(1));
        assert_eq!(s.cmd(&["EXISTS", "a"]), int(0));
        assert_eq!(s.cmd(&["SMEMBERS", "b"]), Reply::Set(bulks(&["1", "2"])));
        assert_eq!(
            s.cmd(&["SPOP", "b", "-1"]),
            Reply::error("ERR value is out of range, must be positive")
        );
        assert_eq!(s.cmd(&["SPOP", "b", "0"]), Reply::Set(vec![]));
        assert_eq!(s.cmd(&["SPOP", "b", "5"]), Reply::Set(bulks(&["1", "2"])));
        assert_eq!(s.cmd(&["EXISTS", "b"]), int(0));
        assert_eq!(s.cmd(&["SPOP", "b"]), Reply::Nil);
        for i in 0..50 {
            s.cmd(&["SADD", "big", &format!("m{i}")]);
        }
        let Reply::Set(popped) = s.cmd(&["SPOP", "big", "45"]) else {
            panic!()
        };
        assert_eq!(popped.len(), 45);
        assert_eq!(s.cmd(&["SCARD", "big"]), int(5));
        let Reply::Array(drawn) = s.cmd(&["SRANDMEMBER", "big", "-20"]) else {
            panic!()
        };
        assert_eq!(drawn.len(), 20);
        assert!(matches!(
            s.cmd(&["SRANDMEMBER", "big", "-9223372036854775807"]),
            Reply::Error(e) if e == "ERR value is out of range"
        ));
        assert_eq!(
            s.cmd(&["SRANDMEMBER", "big", "-9223372036854775808"]),
            Reply::error(
                "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"
            )
        );
        let Reply::Array(all) = s.cmd(&["SRANDMEMBER", "big", "9223372036854775807"]) else {
            panic!()
        };
        assert_eq!(all.len(), 5);
    }
}
