//! Set commands (src/t_set.c): SADD, SREM, SCARD, SISMEMBER, SMISMEMBER,
//! SMEMBERS, SINTER, SINTERSTORE and SINTERCARD, with Redis 8.6.3's replies.
//!
//! The intersection follows `sinterGenericCommand`: a missing key makes the
//! result empty at once; otherwise the sources are ordered by size (a stable
//! sort) and the members of the smallest are looked up in the others, so
//! SINTER replies in the smallest set's order. SINTERSTORE builds an intset when
//! the smallest source is one, a listpack otherwise, and turns an all-integer
//! result back into an intset; SINTERCARD stops counting at LIMIT. An emptied
//! set is deleted, as in Redis.

use super::{flags::*, Args, CommandSpec, Server};
use crate::keyspace::Value;
use crate::reply::{errors, Reply};
use crate::set::Set;

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec::legacy("sadd", -3, sadd)
        .flags(WRITE | DENYOOM | FAST)
        .keys(1, 1, 1),
    CommandSpec::legacy("srem", -3, srem)
        .flags(WRITE | FAST)
        .keys(1, 1, 1),
    CommandSpec::legacy("scard", 2, scard)
        .flags(READONLY | FAST)
        .keys(1, 1, 1),
    CommandSpec::legacy("sismember", 3, sismember)
        .flags(READONLY | FAST)
        .keys(1, 1, 1),
    CommandSpec::legacy("smismember", -3, smismember)
        .flags(READONLY | FAST)
        .keys(1, 1, 1),
    CommandSpec::legacy("smembers", 2, smembers)
        .flags(READONLY)
        .keys(1, 1, 1),
    CommandSpec::legacy("sinter", -2, sinter)
        .flags(READONLY)
        .keys(1, -1, 1),
    CommandSpec::legacy("sinterstore", -3, sinterstore)
        .flags(WRITE | DENYOOM)
        .keys(1, -1, 1),
    CommandSpec::legacy("sintercard", -3, sintercard).flags(READONLY | MOVABLE_KEYS),
];

fn wrongtype() -> Reply {
    Reply::error(errors::WRONGTYPE)
}

/// The set at `key`: `Ok(None)` if missing, WRONGTYPE if another type.
fn lookup<'s>(s: &'s mut Server, key: &[u8]) -> Result<Option<&'s mut Set>, Reply> {
    match s.keyspace.get_mut(key) {
        None => Ok(None),
        Some(Value::Set(set)) => Ok(Some(set)),
        Some(_) => Err(wrongtype()),
    }
}

fn bulk_members(members: Vec<Vec<u8>>) -> Reply {
    Reply::Array(members.into_iter().map(Reply::Bulk).collect())
}

pub fn sadd(s: &mut Server, a: &Args) -> Reply {
    let key = a.bytes(1);
    let hint = a.len() - 2;
    match lookup(s, key) {
        Err(e) => return e,
        Ok(Some(set)) => set.maybe_convert(hint),
        Ok(None) => s
            .keyspace
            .insert(key, Value::Set(Set::create(a.bytes(2), hint))),
    }
    let Ok(Some(set)) = lookup(s, key) else {
        unreachable!("created above")
    };
    let added = (2..a.len()).filter(|&i| set.add(a.bytes(i))).count();
    Reply::Integer(added as i64)
}

pub fn srem(s: &mut Server, a: &Args) -> Reply {
    let key = a.bytes(1);
    let set = match lookup(s, key) {
        Err(e) => return e,
        Ok(None) => return Reply::Integer(0),
        Ok(Some(set)) => set,
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
    if set.is_empty() {
        s.keyspace.remove(key);
    }
    Reply::Integer(removed)
}

pub fn scard(s: &mut Server, a: &Args) -> Reply {
    match lookup(s, a.bytes(1)) {
        Err(e) => e,
        Ok(set) => Reply::Integer(set.map_or(0, |set| set.len() as i64)),
    }
}

pub fn sismember(s: &mut Server, a: &Args) -> Reply {
    match lookup(s, a.bytes(1)) {
        Err(e) => e,
        Ok(None) => Reply::Integer(0),
        Ok(Some(set)) => Reply::Integer(i64::from(set.contains(a.bytes(2)))),
    }
}

pub fn smismember(s: &mut Server, a: &Args) -> Reply {
    match lookup(s, a.bytes(1)) {
        Err(e) => e,
        Ok(set) => {
            let mut set = set;
            let replies = (2..a.len())
                .map(|i| {
                    let hit = set.as_mut().is_some_and(|set| set.contains(a.bytes(i)));
                    Reply::Integer(i64::from(hit))
                })
                .collect();
            Reply::Array(replies)
        }
    }
}

pub fn smembers(s: &mut Server, a: &Args) -> Reply {
    match lookup(s, a.bytes(1)) {
        Err(e) => e,
        Ok(None) => Reply::Array(Vec::new()),
        Ok(Some(set)) => bulk_members(set.members()),
    }
}

pub fn sinter(s: &mut Server, a: &Args) -> Reply {
    let keys: Vec<&[u8]> = (1..a.len()).map(|i| a.bytes(i)).collect();
    intersect(s, &keys, Target::Reply)
}

pub fn sinterstore(s: &mut Server, a: &Args) -> Reply {
    let keys: Vec<&[u8]> = (2..a.len()).map(|i| a.bytes(i)).collect();
    intersect(s, &keys, Target::Store(a.bytes(1)))
}

/// SINTERCARD numkeys key [key ...] [LIMIT limit].
pub fn sintercard(s: &mut Server, a: &Args) -> Reply {
    let numkeys = match crate::num::parse_i64(a.bytes(1)) {
        Some(n) if n >= 1 => n as usize,
        _ => return Reply::error("ERR numkeys should be greater than 0"),
    };
    if numkeys > a.len() - 2 {
        return Reply::error("ERR Number of keys can't be greater than number of args");
    }
    let mut limit = 0;
    let mut j = 2 + numkeys;
    while j < a.len() {
        if a.is(j, "limit") && j + 1 < a.len() {
            j += 1;
            limit = match crate::num::parse_i64(a.bytes(j)) {
                Some(n) if n >= 0 => n as usize,
                _ => return Reply::error("ERR LIMIT can't be negative"),
            };
        } else {
            return Reply::error(errors::SYNTAX);
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
fn intersect(s: &mut Server, keys: &[&[u8]], target: Target) -> Reply {
    let mut sizes = Vec::with_capacity(keys.len());
    let mut empty = false;
    for key in keys {
        match lookup(s, key) {
            Err(e) => return e,
            Ok(None) => empty = true,
            Ok(Some(set)) => sizes.push(set.len()),
        }
    }
    if empty {
        return match target {
            Target::Reply => Reply::Array(Vec::new()),
            Target::Count(_) => Reply::Integer(0),
            Target::Store(dst) => {
                s.keyspace.remove(dst);
                Reply::Integer(0)
            }
        };
    }
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_by_key(|&i| sizes[i]);
    let first = keys[order[0]];
    let (members, mut dest) = {
        let Ok(Some(smallest)) = lookup(s, first) else {
            unreachable!("looked up above")
        };
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
            let Ok(Some(other)) = lookup(s, keys[i]) else {
                unreachable!("looked up above")
            };
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
                only_integers &= crate::num::parse_i64(&m).is_some();
                set.add(&m);
            }
            _ => hits.push(m),
        }
    }
    match target {
        Target::Reply => bulk_members(hits),
        Target::Count(_) => Reply::Integer(count as i64),
        Target::Store(dst) => {
            let mut set = dest.expect("built for a store");
            if set.is_empty() {
                s.keyspace.remove(dst);
                return Reply::Integer(0);
            }
            if only_integers {
                set.maybe_to_intset();
            }
            let len = set.len();
            s.keyspace.insert(dst, Value::Set(set));
            Reply::Integer(len as i64)
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{Reply, Server};

    fn int(n: i64) -> Reply {
        Reply::Integer(n)
    }

    #[test]
    fn sadd_srem_and_encodings() {
        let mut s = Server::new();
        assert_eq!(s.cmd(&["SADD", "s", "3", "1", "2", "1"]), int(3));
        assert_eq!(s.cmd(&["OBJECT", "ENCODING", "s"]), Reply::bulk("intset"));
        assert_eq!(
            s.cmd(&["SMEMBERS", "s"]),
            Reply::Array(vec![Reply::bulk("1"), Reply::bulk("2"), Reply::bulk("3")])
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
}
