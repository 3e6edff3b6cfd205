//! Sorted-set commands. Each one follows the order of checks in Redis's
//! `t_zset.c`: options and numbers are parsed before the key is looked up, so a
//! syntax error wins over WRONGTYPE, exactly as on a real server.

use super::{flags::*, Args, CommandSpec, Server};
use crate::dict::Dict;
use crate::keyspace::Value;
use crate::num::{self, LexBoundSpec};
use crate::reply::{errors, Reply};
use crate::sampling;
use crate::zset::{AddFlags, AddOutcome, LexBound, LexRange, ScoreRange, Zset};

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec::legacy("zadd", -4, zadd)
        .flags(WRITE | DENYOOM | FAST)
        .keys(1, 1, 1),
    CommandSpec::legacy("zincrby", 4, zincrby)
        .flags(WRITE | DENYOOM | FAST)
        .keys(1, 1, 1),
    CommandSpec::legacy("zscore", 3, zscore)
        .flags(READONLY | FAST)
        .keys(1, 1, 1),
    CommandSpec::legacy("zcard", 2, zcard)
        .flags(READONLY | FAST)
        .keys(1, 1, 1),
    CommandSpec::legacy("zrem", -3, zrem)
        .flags(WRITE | FAST)
        .keys(1, 1, 1),
    CommandSpec::legacy("zrank", -3, zrank)
        .flags(READONLY | FAST)
        .keys(1, 1, 1),
    CommandSpec::legacy("zrevrank", -3, zrevrank)
        .flags(READONLY | FAST)
        .keys(1, 1, 1),
    CommandSpec::legacy("zcount", 4, zcount)
        .flags(READONLY | FAST)
        .keys(1, 1, 1),
    CommandSpec::legacy("zrange", -4, zrange)
        .flags(READONLY)
        .keys(1, 1, 1),
    CommandSpec::legacy("zrevrange", -4, zrevrange)
        .flags(READONLY)
        .keys(1, 1, 1),
    CommandSpec::legacy("zrangebyscore", -4, zrangebyscore)
        .flags(READONLY)
        .keys(1, 1, 1),
    CommandSpec::legacy("zrevrangebyscore", -4, zrevrangebyscore)
        .flags(READONLY)
        .keys(1, 1, 1),
    CommandSpec::legacy("zrangebylex", -4, zrangebylex)
        .flags(READONLY)
        .keys(1, 1, 1),
    CommandSpec::legacy("zrevrangebylex", -4, zrevrangebylex)
        .flags(READONLY)
        .keys(1, 1, 1),
    CommandSpec::legacy("zrangestore", -5, zrangestore)
        .flags(WRITE | DENYOOM)
        .keys(1, 2, 1),
    CommandSpec::legacy("zmscore", -3, zmscore)
        .flags(READONLY | FAST)
        .keys(1, 1, 1),
    CommandSpec::legacy("zlexcount", 4, zlexcount)
        .flags(READONLY | FAST)
        .keys(1, 1, 1),
    CommandSpec::legacy("zpopmin", -2, zpopmin)
        .flags(WRITE | FAST)
        .keys(1, 1, 1),
    CommandSpec::legacy("zpopmax", -2, zpopmax)
        .flags(WRITE | FAST)
        .keys(1, 1, 1),
    CommandSpec::legacy("bzpopmin", -3, bzpopmin)
        .flags(WRITE | BLOCKING | FAST)
        .keys(1, -2, 1),
    CommandSpec::legacy("bzpopmax", -3, bzpopmax)
        .flags(WRITE | BLOCKING | FAST)
        .keys(1, -2, 1),
    CommandSpec::legacy("zremrangebyrank", 4, zremrangebyrank)
        .flags(WRITE)
        .keys(1, 1, 1),
    CommandSpec::legacy("zremrangebyscore", 4, zremrangebyscore)
        .flags(WRITE)
        .keys(1, 1, 1),
    CommandSpec::legacy("zremrangebylex", 4, zremrangebylex)
        .flags(WRITE)
        .keys(1, 1, 1),
    CommandSpec::legacy("zrandmember", -2, zrandmember)
        .flags(READONLY)
        .keys(1, 1, 1),
];

const NAN_RESULT: &str = "ERR resulting score is not a number (NaN)";
const BAD_SCORE_RANGE: &str = "ERR min or max is not a float";
const BAD_LEX_RANGE: &str = "ERR min or max not valid string range item";

/// Looks up a zset for reading: `Ok(None)` if the key is missing, an error if it
/// holds another type. The geo commands use it too: a geo set is a zset.
pub(super) fn read<'s>(s: &'s mut Server, key: &[u8]) -> Result<Option<&'s Zset>, Reply> {
    match s.keyspace.get(key) {
        None => Ok(None),
        Some(Value::Zset(z)) => Ok(Some(z)),
        Some(_) => Err(Reply::error(errors::WRONGTYPE)),
    }
}

fn write<'s>(s: &'s mut Server, key: &[u8]) -> Result<Option<&'s mut Zset>, Reply> {
    match s.keyspace.get_mut(key) {
        None => Ok(None),
        Some(Value::Zset(z)) => Ok(Some(z)),
        Some(_) => Err(Reply::error(errors::WRONGTYPE)),
    }
}

pub fn zadd(s: &mut Server, a: &Args) -> Reply {
    zadd_generic(s, a, AddFlags::default())
}

pub fn zincrby(s: &mut Server, a: &Args) -> Reply {
    zadd_generic(
        s,
        a,
        AddFlags {
            incr: true,
            ..Default::default()
        },
    )
}

/// ZADD and ZINCRBY share this, as in Redis (`zaddGenericCommand`).
fn zadd_generic(s: &mut Server, a: &Args, mut flags: AddFlags) -> Reply {
    let mut ch = false;
    let mut at = 2;
    while at < a.len() {
        match () {
            _ if a.is(at, "nx") => flags.nx = true,
            _ if a.is(at, "xx") => flags.xx = true,
            _ if a.is(at, "ch") => ch = true,
            _ if a.is(at, "incr") => flags.incr = true,
            _ if a.is(at, "gt") => flags.gt = true,
            _ if a.is(at, "lt") => flags.lt = true,
            _ => break,
        }
        at += 1;
    }
    let rest = a.len() - at;
    if rest == 0 || rest % 2 == 1 {
        return Reply::error(errors::SYNTAX);
    }
    if flags.nx && flags.xx {
        return Reply::error("ERR XX and NX options at the same time are not compatible");
    }
    if (flags.nx && (flags.gt || flags.lt)) || (flags.gt && flags.lt) {
        return Reply::error("ERR GT, LT, and/or NX options at the same time are not compatible");
    }
    if flags.incr && rest > 2 {
        return Reply::error("ERR INCR option supports a single increment-element pair");
    }
    let mut pairs = Vec::with_capacity(rest / 2);
    for i in (at..a.len()).step_by(2) {
        pairs.push((tri!(a.float(i)), a.bytes(i + 1)));
    }

    let key = a.bytes(1);
    let exists = tri!(read(s, key)).is_some();
    if !exists {
        if flags.xx {
            return if flags.incr {
                Reply::Nil
            } else {
                Reply::Integer(0)
            };
        }
        let first_member_len = pairs[0].1.len();
        s.keyspace.insert(
            key,
            Value::Zset(Box::new(Zset::with_hint(pairs.len(), first_member_len))),
        );
    }
    let zset = tri!(write(s, key)).expect("zset exists");
    zset.prepare_for(pairs.len());

    let (mut added, mut updated, mut processed) = (0, 0, 0);
    let mut last_score = 0.0;
    for (score, member) in pairs {
        match zset.add(score, member, flags) {
            AddOutcome::Added(v) => (added, processed, last_score) = (added + 1, processed + 1, v),
            AddOutcome::Updated(v) => {
                (updated, processed, last_score) = (updated + 1, processed + 1, v)
            }
            AddOutcome::Unchanged(v) => (processed, last_score) = (processed + 1, v),
            AddOutcome::Skipped => {}
            AddOutcome::NotANumber => return Reply::error(NAN_RESULT),
        }
    }
    if flags.incr {
        if processed > 0 {
            Reply::double(last_score)
        } else {
            Reply::Nil
        }
    } else {
        Reply::Integer(if ch { added + updated } else { added })
    }
}

pub fn zscore(s: &mut Server, a: &Args) -> Reply {
    match tri!(read(s, a.bytes(1))).and_then(|z| z.score(a.bytes(2))) {
        Some(score) => Reply::double(score),
        None => Reply::Nil,
    }
}

pub fn zcard(s: &mut Server, a: &Args) -> Reply {
    Reply::Integer(tri!(read(s, a.bytes(1))).map_or(0, |z| z.len()) as i64)
}

pub fn zrem(s: &mut Server, a: &Args) -> Reply {
    let key = a.bytes(1);
    let Some(zset) = tri!(write(s, key)) else {
        return Reply::Integer(0);
    };
    let removed = (2..a.len()).filter(|&i| zset.remove(a.bytes(i))).count();
    if zset.is_empty() {
        s.keyspace.remove(key);
    }
    Reply::Integer(removed as i64)
}

pub fn zrank(s: &mut Server, a: &Args) -> Reply {
    rank_generic(s, a, false)
}

pub fn zrevrank(s: &mut Server, a: &Args) -> Reply {
    rank_generic(s, a, true)
}

/// ZRANK/ZREVRANK key member [WITHSCORE].
fn rank_generic(s: &mut Server, a: &Args, reverse: bool) -> Reply {
    if a.len() > 4 {
        return Reply::error(errors::arity(if reverse { "zrevrank" } else { "zrank" }));
    }
    let with_score = a.len() == 4;
    if with_score && !a.is(3, "withscore") {
        return Reply::error(errors::SYNTAX);
    }
    let missing = if with_score {
        Reply::NilArray
    } else {
        Reply::Nil
    };
    let Some(zset) = tri!(read(s, a.bytes(1))) else {
        return missing;
    };
    let member = a.bytes(2);
    match zset.rank(member, reverse) {
        None => missing,
        Some(rank) if with_score => {
            let score = zset.score(member).expect("ranked member has a score");
            Reply::Array(vec![Reply::Integer(rank as i64), Reply::double(score)])
        }
        Some(rank) => Reply::Integer(rank as i64),
    }
}

pub fn zcount(s: &mut Server, a: &Args) -> Reply {
    let range = tri!(score_range(a.bytes(2), a.bytes(3)));
    let Some(zset) = tri!(read(s, a.bytes(1))) else {
        return Reply::Integer(0);
    };
    let count = zset
        .score_span(&range)
        .map_or(0, |(first, last)| last + 1 - first);
    Reply::Integer(count as i64)
}

fn score_range(min: &[u8], max: &[u8]) -> Result<ScoreRange, Reply> {
    match (num::parse_score_bound(min), num::parse_score_bound(max)) {
        (Some((min, minex)), Some((max, maxex))) => Ok(ScoreRange {
            min,
            max,
            minex,
            maxex,
        }),
        _ => Err(Reply::error(BAD_SCORE_RANGE)),
    }
}

fn lex_bound(spec: LexBoundSpec) -> LexBound {
    match spec {
        LexBoundSpec::NegInf => LexBound::NegInf,
        LexBoundSpec::PosInf => LexBound::PosInf,
        LexBoundSpec::Inclusive(v) => LexBound::Inclusive(v),
        LexBoundSpec::Exclusive(v) => LexBound::Exclusive(v),
    }
}

fn lex_range(min: &[u8], max: &[u8]) -> Result<LexRange, Reply> {
    match (num::parse_lex_bound(min), num::parse_lex_bound(max)) {
        (Some(min), Some(max)) => Ok(LexRange {
            min: lex_bound(min),
            max: lex_bound(max),
        }),
        _ => Err(Reply::error(BAD_LEX_RANGE)),
    }
}

#[derive(Clone, Copy, PartialEq)]
enum RangeKind {
    Auto,
    Rank,
    Score,
    Lex,
}

pub fn zrange(s: &mut Server, a: &Args) -> Reply {
    range_generic(s, a, RangeKind::Auto, None, false)
}

pub fn zrangestore(s: &mut Server, a: &Args) -> Reply {
    range_generic(s, a, RangeKind::Auto, None, true)
}

pub fn zrevrange(s: &mut Server, a: &Args) -> Reply {
    range_generic(s, a, RangeKind::Rank, Some(true), false)
}

pub fn zrangebyscore(s: &mut Server, a: &Args) -> Reply {
    range_generic(s, a, RangeKind::Score, Some(false), false)
}

pub fn zrevrangebyscore(s: &mut Server, a: &Args) -> Reply {
    range_generic(s, a, RangeKind::Score, Some(true), false)
}

pub fn zrangebylex(s: &mut Server, a: &Args) -> Reply {
    range_generic(s, a, RangeKind::Lex, Some(false), false)
}

pub fn zrevrangebylex(s: &mut Server, a: &Args) -> Reply {
    range_generic(s, a, RangeKind::Lex, Some(true), false)
}

enum ParsedRange {
    Rank(i64, i64),
    Score(ScoreRange),
    Lex(LexRange),
}

/// All the ZRANGE forms, new and old, and ZRANGESTORE (`zrangeGenericCommand`).
/// `direction` is `None` when REV may still be given as an option; with `store` the
/// arguments start one later (after the destination) and WITHSCORES is refused.
fn range_generic(
    s: &mut Server,
    a: &Args,
    mut kind: RangeKind,
    direction: Option<bool>,
    store: bool,
) -> Reply {
    let base = if store { 2 } else { 1 };
    let mut reverse = direction;
    let (mut with_scores, mut offset, mut limit) = (false, 0i64, -1i64);
    let mut i = base + 3;
    while i < a.len() {
        let left = a.len() - i - 1;
        if !store && a.is(i, "withscores") {
            with_scores = true;
        } else if a.is(i, "limit") && left >= 2 {
            offset = tri!(a.int(i + 1));
            limit = tri!(a.int(i + 2));
            i += 2;
        } else if direction.is_none() && a.is(i, "rev") {
            reverse = Some(true);
        } else if kind == RangeKind::Auto && a.is(i, "bylex") {
            kind = RangeKind::Lex;
        } else if kind == RangeKind::Auto && a.is(i, "byscore") {
            kind = RangeKind::Score;
        } else {
            return Reply::error(errors::SYNTAX);
        }
        i += 1;
    }
    let reverse = reverse.unwrap_or(false);
    if kind == RangeKind::Auto {
        kind = RangeKind::Rank;
    }
    if limit != -1 && kind == RangeKind::Rank {
        return Reply::error(
            "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX",
        );
    }
    if with_scores && kind == RangeKind::Lex {
        return Reply::error(
            "ERR syntax error, WITHSCORES not supported in combination with BYLEX",
        );
    }
    // Reverse score and lex ranges are written max first.
    let (lo, hi) = if reverse && kind != RangeKind::Rank {
        (base + 2, base + 1)
    } else {
        (base + 1, base + 2)
    };
    let parsed = match kind {
        RangeKind::Score => ParsedRange::Score(tri!(score_range(a.bytes(lo), a.bytes(hi)))),
        RangeKind::Lex => ParsedRange::Lex(tri!(lex_range(a.bytes(lo), a.bytes(hi)))),
        _ => ParsedRange::Rank(tri!(a.int(lo)), tri!(a.int(hi))),
    };

    let source = tri!(read(s, a.bytes(base)));
    let (items, size_hint): (Vec<(Vec<u8>, f64)>, usize) = match source {
        None => (Vec::new(), 0),
        Some(zset) => {
            let (items, hint) = select_range(zset, parsed, reverse, offset, limit);
            (
                items.into_iter().map(|(m, s)| (m.to_vec(), s)).collect(),
                hint,
            )
        }
    };
    if store {
        store_range(s, a.bytes(1), items, size_hint)
    } else {
        range_reply(items, with_scores)
    }
}

/// The elements a range selects, and the size hint Redis gives the destination of
/// ZRANGESTORE (the exact count for rank ranges, none for score and lex ranges).
fn select_range(
    zset: &Zset,
    parsed: ParsedRange,
    reverse: bool,
    offset: i64,
    limit: i64,
) -> (Vec<(&[u8], f64)>, usize) {
    // LIMIT: a negative offset gives nothing, a negative count means all.
    let limit = if limit < 0 {
        None
    } else {
        Some(limit as usize)
    };
    match parsed {
        ParsedRange::Rank(start, end) => match clamp_ranks(start, end, zset.len()) {
            Some((start, end)) => (zset.range_by_rank(start, end, reverse), end + 1 - start),
            None => (Vec::new(), 0),
        },
        _ if offset < 0 => (Vec::new(), 0),
        ParsedRange::Score(range) => {
            let span = zset.score_span(&range);
            let items = span.map_or_else(Vec::new, |span| {
                zset.walk_span(span, reverse, offset as usize, limit)
            });
            (items, 0)
        }
        ParsedRange::Lex(range) => (zset.lex_walk(&range, reverse, offset as usize, limit), 0),
    }
}

/// ZRANGESTORE's result: the destination is replaced (its TTL with it), or deleted
/// when the range is empty.
fn store_range(s: &mut Server, dst: &[u8], items: Vec<(Vec<u8>, f64)>, size_hint: usize) -> Reply {
    if items.is_empty() {
        s.keyspace.remove(dst);
        return Reply::Integer(0);
    }
    let mut zset = Zset::with_hint(size_hint, 0);
    for (member, score) in &items {
        zset.add(*score, member, AddFlags::default());
    }
    s.keyspace.insert(dst, Value::Zset(Box::new(zset)));
    Reply::Integer(items.len() as i64)
}

/// Redis's rank sanitising: negative ranks count from the end, then clamp.
fn clamp_ranks(start: i64, end: i64, len: usize) -> Option<(usize, usize)> {
    let len = len as i64;
    let start = if start < 0 {
        (len + start).max(0)
    } else {
        start
    };
    let end = if end < 0 { len + end } else { end };
    if start > end || start >= len {
        return None;
    }
    Some((start as usize, end.min(len - 1) as usize))
}

pub(super) fn range_reply(items: Vec<(Vec<u8>, f64)>, with_scores: bool) -> Reply {
    let mut out = Vec::with_capacity(items.len() * if with_scores { 2 } else { 1 });
    for (member, score) in items {
        out.push(Reply::Bulk(member));
        if with_scores {
            out.push(Reply::double(score));
        }
    }
    Reply::Array(out)
}

pub fn zmscore(s: &mut Server, a: &Args) -> Reply {
    let zset = tri!(read(s, a.bytes(1)));
    let scores = (2..a.len())
        .map(|i| match zset.and_then(|z| z.score(a.bytes(i))) {
            Some(score) => Reply::double(score),
            None => Reply::Nil,
        })
        .collect();
    Reply::Array(scores)
}

pub fn zlexcount(s: &mut Server, a: &Args) -> Reply {
    let range = tri!(lex_range(a.bytes(2), a.bytes(3)));
    let count = tri!(read(s, a.bytes(1))).map_or(0, |z| z.lex_count(&range));
    Reply::Integer(count as i64)
}

pub fn zpopmin(s: &mut Server, a: &Args) -> Reply {
    pop_command(s, a, false)
}

pub fn zpopmax(s: &mut Server, a: &Args) -> Reply {
    pop_command(s, a, true)
}

/// ZPOPMIN/ZPOPMAX key [count]: a flat array of member, score pairs.
fn pop_command(s: &mut Server, a: &Args, max: bool) -> Reply {
    if a.len() > 3 {
        return Reply::error(errors::SYNTAX);
    }
    let count = if a.len() == 3 {
        // getPositiveLongFromObjectOrReply: one message for junk and negatives.
        match a.int(2) {
            Ok(n) if n >= 0 => Some(n as usize),
            _ => return Reply::error("ERR value is out of range, must be positive"),
        }
    } else {
        None
    };
    let key = a.bytes(1);
    if tri!(read(s, key)).is_none() || count == Some(0) {
        return Reply::Array(Vec::new());
    }
    Reply::Array(pop_pairs(s, key, count.unwrap_or(1), max))
}

/// Pops up to `count` elements from an existing zset, deleting the key when it
/// empties; returns member, score, member, score, ...
fn pop_pairs(s: &mut Server, key: &[u8], count: usize, max: bool) -> Vec<Reply> {
    let mut out = Vec::new();
    if let Ok(Some(zset)) = write(s, key) {
        for _ in 0..count {
            let Some((member, score)) = zset.pop(max) else {
                break;
            };
            out.push(Reply::bulk(member));
            out.push(Reply::double(score));
        }
        if zset.is_empty() {
            s.keyspace.remove(key);
        }
    }
    out
}

pub fn bzpopmin(s: &mut Server, a: &Args) -> Reply {
    blocking_pop(s, a, false)
}

pub fn bzpopmax(s: &mut Server, a: &Args) -> Reply {
    blocking_pop(s, a, true)
}

/// BZPOPMIN/BZPOPMAX key [key ...] timeout: pops from the first non-empty key and
/// replies key, member, score; with every key empty the client blocks (through the
/// listener) or, where it cannot block, gets a null array.
fn blocking_pop(s: &mut Server, a: &Args, max: bool) -> Reply {
    let timeout = tri!(parse_timeout(a.bytes(a.len() - 1)));
    let keys = 1..a.len() - 1;
    for i in keys.clone() {
        let key = a.bytes(i);
        match tri!(read(s, key)) {
            Some(z) if !z.is_empty() => {
                let mut reply = vec![Reply::bulk(key)];
                reply.extend(pop_pairs(s, key, 1, max));
                return Reply::Array(reply);
            }
            _ => continue,
        }
    }
    let keys = keys.map(|i| a.bytes(i).to_vec()).collect();
    s.block(keys, timeout);
    Reply::NilArray
}

/// A blocking command's timeout in seconds (0 waits forever), as milliseconds
/// rounded up (`getTimeoutFromObjectOrReply`).
fn parse_timeout(arg: &[u8]) -> Result<Option<i64>, Reply> {
    let seconds = num::parse_double_arg(arg)
        .filter(|v| v.is_finite())
        .ok_or_else(|| Reply::error("ERR timeout is not a float or out of range"))?;
    let ms = (seconds * 1000.0).ceil();
    if ms > i64::MAX as f64 / 2.0 {
        return Err(Reply::error("ERR timeout is out of range"));
    }
    if ms < 0.0 {
        return Err(Reply::error("ERR timeout is negative"));
    }
    Ok((ms > 0.0).then_some(ms as i64))
}

pub fn zremrangebyrank(s: &mut Server, a: &Args) -> Reply {
    let (start, end) = (tri!(a.int(2)), tri!(a.int(3)));
    remove_range(s, a, |z| {
        clamp_ranks(start, end, z.len()).map_or(0, |(lo, hi)| z.remove_rank_range(lo, hi))
    })
}

pub fn zremrangebyscore(s: &mut Server, a: &Args) -> Reply {
    let range = tri!(score_range(a.bytes(2), a.bytes(3)));
    remove_range(s, a, |z| z.remove_score_range(&range))
}

pub fn zremrangebylex(s: &mut Server, a: &Args) -> Reply {
    let range = tri!(lex_range(a.bytes(2), a.bytes(3)));
    remove_range(s, a, |z| z.remove_lex_range(&range))
}

/// Shared tail of the ZREMRANGEBY* commands: run `remove` on the zset, delete the
/// key if it emptied, reply how many went.
fn remove_range(s: &mut Server, a: &Args, remove: impl FnOnce(&mut Zset) -> usize) -> Reply {
    let key = a.bytes(1);
    let Some(zset) = tri!(write(s, key)) else {
        return Reply::Integer(0);
    };
    let removed = remove(zset);
    if zset.is_empty() {
        s.keyspace.remove(key);
    }
    Reply::Integer(removed as i64)
}

/// The count argument of ZRANDMEMBER/HRANDFIELD (`getRangeLongFromObjectOrReply`
/// over ±LONG_MAX), with the optional WITHSCORES/WITHVALUES word after it.
pub(super) fn random_count(a: &Args, with_word: &str) -> Result<i64, Reply> {
    let count = a.int(2)?;
    if count == i64::MIN {
        return Err(Reply::error(format!(
            "ERR value is out of range, value must between {} and {}",
            -i64::MAX,
            i64::MAX
        )));
    }
    if a.len() > 4 || (a.len() == 4 && !a.is(3, with_word)) {
        return Err(Reply::error(errors::SYNTAX));
    }
    if a.len() == 4 && !(-i64::MAX / 2..=i64::MAX / 2).contains(&count) {
        return Err(Reply::error("ERR value is out of range"));
    }
    Ok(count)
}

/// ZRANDMEMBER key [count [WITHSCORES]].
pub fn zrandmember(s: &mut Server, a: &Args) -> Reply {
    if a.len() >= 3 {
        let count = tri!(random_count(a, "withscores"));
        return zrandmember_count(s, a, count, a.len() == 4);
    }
    let Server { keyspace, rng, .. } = s;
    let zset = match keyspace.get_mut(a.bytes(1)) {
        None => return Reply::Nil,
        Some(Value::Zset(z)) => z,
        Some(_) => return Reply::error(errors::WRONGTYPE),
    };
    match zset.random_member(rng) {
        Some((member, _)) => Reply::bulk(member),
        None => Reply::Nil,
    }
}

/// `zrandmemberWithCountCommand`: repeats for a negative count (or 1); the whole
/// set when the count covers it; otherwise a unique sample drawn by selection on a
/// listpack, by discarding fair-random dict entries when the count is close to the
/// size, or by repeated fair draws until enough distinct members came up.
fn zrandmember_count(s: &mut Server, a: &Args, count: i64, with_scores: bool) -> Reply {
    let Server { keyspace, rng, .. } = s;
    let zset = match keyspace.get_mut(a.bytes(1)) {
        None => return Reply::Array(Vec::new()),
        Some(Value::Zset(z)) => z,
        Some(_) => return Reply::error(errors::WRONGTYPE),
    };
    let wanted = count.unsigned_abs() as usize;
    if wanted == 0 {
        return Reply::Array(Vec::new());
    }
    let listpack = zset.encoding() == crate::zset::Encoding::Listpack;
    // Listpack picks index the entries in order; the whole-set and dict-copy cases
    // walk from the highest score down (zuiNext goes backwards).
    let all =
        |z: &Zset| -> Vec<(Vec<u8>, f64)> { z.iter().map(|(m, s)| (m.to_vec(), s)).collect() };
    let all_descending = |z: &Zset| {
        let mut items = all(z);
        items.reverse();
        items
    };
    let picks: Vec<(Vec<u8>, f64)> = if count < 0 || wanted == 1 {
        if listpack {
            let items = all(zset);
            sampling::draws_with_repeats(items.len(), wanted, rng)
                .into_iter()
                .map(|i| items[i].clone())
                .collect()
        } else {
            (0..wanted)
                .filter_map(|_| zset.random_member(rng))
                .collect()
        }
    } else if wanted >= zset.len() {
        all_descending(zset)
    } else if listpack {
        let items = all(zset);
        sampling::unique_in_order(items.len(), wanted, rng)
            .into_iter()
            .map(|i| items[i].clone())
            .collect()
    } else if wanted * 3 > zset.len() {
        discard_with_fair_draws(all_descending(zset), wanted, rng)
    } else {
        let mut picked: Vec<(Vec<u8>, f64)> = Vec::with_capacity(wanted);
        while picked.len() < wanted {
            let (m, score) = zset.random_member(rng).expect("non-empty zset");
            if !picked.iter().any(|(seen, _)| *seen == m) {
                picked.push((m, score));
            }
        }
        picked
    };
    range_reply(picks, with_scores)
}

/// The "count close to the size" case: copy every element into a fresh dict, drop
/// fair-random entries until `wanted` remain, reply in the dict's order.
fn discard_with_fair_draws(
    items: Vec<(Vec<u8>, f64)>,
    wanted: usize,
    rng: &mut impl rand::RngCore,
) -> Vec<(Vec<u8>, f64)> {
    let mut copy: Dict<f64> = Dict::new();
    copy.expand(items.len());
    for (member, score) in items {
        copy.add(member, score);
    }
    while copy.len() > wanted {
        let victim = copy
            .fair_random_entry(rng)
            .map(|(m, _)| m.to_vec())
            .expect("non-empty dict");
        copy.remove(&victim);
    }
    copy.iter().map(|(m, s)| (m.to_vec(), *s)).collect()
}
