//! Hash commands, enough for the labs: HSET/HMSET, HGET, HLEN, HDEL, HEXISTS,
//! HGETALL and HRANDFIELD (Redis's biased single draw on a dict).

use super::{flags::*, Args, CommandSpec, Server};
use crate::hash::Hash;
use crate::keyspace::Value;
use crate::reply::{errors, Reply};
use crate::sampling;

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec::legacy("hset", -4, hset)
        .flags(WRITE | DENYOOM | FAST)
        .keys(1, 1, 1),
    CommandSpec::legacy("hmset", -4, hset)
        .flags(WRITE | DENYOOM | FAST)
        .keys(1, 1, 1),
    CommandSpec::legacy("hget", 3, hget)
        .flags(READONLY | FAST)
        .keys(1, 1, 1),
    CommandSpec::legacy("hlen", 2, hlen)
        .flags(READONLY | FAST)
        .keys(1, 1, 1),
    CommandSpec::legacy("hdel", -3, hdel)
        .flags(WRITE | FAST)
        .keys(1, 1, 1),
    CommandSpec::legacy("hexists", 3, hexists)
        .flags(READONLY | FAST)
        .keys(1, 1, 1),
    CommandSpec::legacy("hgetall", 2, hgetall)
        .flags(READONLY)
        .keys(1, 1, 1),
    CommandSpec::legacy("hrandfield", -2, hrandfield)
        .flags(READONLY)
        .keys(1, 1, 1),
];

fn read<'s>(s: &'s mut Server, key: &[u8]) -> Result<Option<&'s mut Hash>, Reply> {
    match s.keyspace.get_mut(key) {
        None => Ok(None),
        Some(Value::Hash(h)) => Ok(Some(h)),
        Some(_) => Err(Reply::error(errors::WRONGTYPE)),
    }
}

/// HSET key field value [field value ...] (HMSET answers OK instead of a count).
pub fn hset(s: &mut Server, a: &Args) -> Reply {
    if a.len() % 2 == 1 {
        let name = String::from_utf8_lossy(a.bytes(0)).to_ascii_lowercase();
        return Reply::error(errors::arity(&name));
    }
    let key = a.bytes(1);
    if tri!(read(s, key)).is_none() {
        s.keyspace.insert(key, Value::Hash(Hash::new()));
    }
    let hash = tri!(read(s, key)).expect("hash exists");
    let args: Vec<&[u8]> = (2..a.len()).map(|i| a.bytes(i)).collect();
    hash.prepare_for(&args);
    let created = args
        .chunks(2)
        .filter(|pair| hash.set(pair[0], pair[1]))
        .count();
    if a.bytes(0)[1].eq_ignore_ascii_case(&b's') {
        Reply::Integer(created as i64)
    } else {
        Reply::ok()
    }
}

pub fn hget(s: &mut Server, a: &Args) -> Reply {
    match tri!(read(s, a.bytes(1))).and_then(|h| h.get(a.bytes(2))) {
        Some(v) => Reply::bulk(v),
        None => Reply::Nil,
    }
}

pub fn hlen(s: &mut Server, a: &Args) -> Reply {
    Reply::Integer(tri!(read(s, a.bytes(1))).map_or(0, |h| h.len()) as i64)
}

pub fn hexists(s: &mut Server, a: &Args) -> Reply {
    let found = tri!(read(s, a.bytes(1))).is_some_and(|h| h.get(a.bytes(2)).is_some());
    Reply::Integer(found as i64)
}

pub fn hdel(s: &mut Server, a: &Args) -> Reply {
    let key = a.bytes(1);
    let Some(hash) = tri!(read(s, key)) else {
        return Reply::Integer(0);
    };
    let removed = (2..a.len()).filter(|&i| hash.remove(a.bytes(i))).count();
    if hash.is_empty() {
        s.keyspace.remove(key);
    }
    Reply::Integer(removed as i64)
}

pub fn hgetall(s: &mut Server, a: &Args) -> Reply {
    let Some(hash) = tri!(read(s, a.bytes(1))) else {
        return Reply::Array(Vec::new());
    };
    let items = hash
        .pairs()
        .into_iter()
        .flat_map(|(f, v)| [Reply::bulk(f), Reply::bulk(v)])
        .collect();
    Reply::Array(items)
}

/// HRANDFIELD key [count [WITHVALUES]].
pub fn hrandfield(s: &mut Server, a: &Args) -> Reply {
    if a.len() >= 3 {
        let count = tri!(super::zset::random_count(a, "withvalues"));
        return hrandfield_count(s, a, count, a.len() == 4);
    }
    let Server { keyspace, rng, .. } = s;
    let hash = match keyspace.get_mut(a.bytes(1)) {
        None => return Reply::Nil,
        Some(Value::Hash(h)) => h,
        Some(_) => return Reply::error(errors::WRONGTYPE),
    };
    match hash.random_pair(rng) {
        Some((field, _)) => Reply::bulk(field),
        None => Reply::Nil,
    }
}

/// `hrandfieldWithCountCommand`: repeats allowed for a negative count (and for 1),
/// the whole hash when the count covers it, else a unique sample whose strategy
/// depends on the encoding and on how close the count is to the size.
fn hrandfield_count(s: &mut Server, a: &Args, count: i64, with_values: bool) -> Reply {
    let Server { keyspace, rng, .. } = s;
    let hash = match keyspace.get_mut(a.bytes(1)) {
        None => return Reply::Array(Vec::new()),
        Some(Value::Hash(h)) => h,
        Some(_) => return Reply::error(errors::WRONGTYPE),
    };
    let emit = |pairs: Vec<(Vec<u8>, Vec<u8>)>| {
        let items = pairs
            .into_iter()
            .flat_map(|(f, v)| {
                if with_values {
                    vec![Reply::bulk(f), Reply::bulk(v)]
                } else {
                    vec![Reply::bulk(f)]
                }
            })
            .collect();
        Reply::Array(items)
    };
    let wanted = count.unsigned_abs() as usize;
    if wanted == 0 {
        return Reply::Array(Vec::new());
    }
    let listpack = hash.encoding_name() == "listpack";
    let owned = |h: &Hash| -> Vec<(Vec<u8>, Vec<u8>)> {
        h.pairs()
            .into_iter()
            .map(|(f, v)| (f.to_vec(), v.to_vec()))
            .collect()
    };
    if count < 0 || wanted == 1 {
        let picks = if listpack {
            let all = owned(hash);
            sampling::draws_with_repeats(all.len(), wanted, rng)
                .into_iter()
                .map(|i| all[i].clone())
                .collect()
        } else {
            (0..wanted)
                .filter_map(|_| hash.random_pair(rng).map(|(f, v)| (f.to_vec(), v.to_vec())))
                .collect()
        };
        return emit(picks);
    }
    let size = hash.len();
    if wanted >= size {
        return emit(owned(hash));
    }
    if listpack {
        let all = owned(hash);
        return emit(
            sampling::unique_in_order(size, wanted, rng)
                .into_iter()
                .map(|i| all[i].clone())
                .collect(),
        );
    }
    if wanted * 3 > size {
        return emit(sampling::discard_down_to(owned(hash), wanted, rng));
    }
    let mut picked: Vec<(Vec<u8>, Vec<u8>)> = Vec::with_capacity(wanted);
    while picked.len() < wanted {
        let (f, v) = hash
            .random_pair(rng)
            .map(|(f, v)| (f.to_vec(), v.to_vec()))
            .expect("non-empty hash");
        if !picked.iter().any(|(seen, _)| *seen == f) {
            picked.push((f, v));
        }
    }
    emit(picked)
}
