//! Sorted-set commands. Each one follows the order of checks in Redis's
//! `t_zset.c`: options and numbers are parsed before the key is looked up, so a
//! syntax error wins over WRONGTYPE, exactly as on a real server.

use super::{spec, Args, CommandSpec, Server};
use crate::keyspace::Value;
use crate::num::{self, LexBoundSpec};
use crate::reply::{errors, Reply};
use crate::zset::{AddFlags, AddOutcome, LexBound, LexRange, ScoreRange, Zset};

pub const COMMANDS: &[CommandSpec] = &[
    spec("zadd", -4, zadd),
    spec("zincrby", 4, zincrby),
    spec("zscore", 3, zscore),
    spec("zcard", 2, zcard),
    spec("zrem", -3, zrem),
    spec("zrank", -3, zrank),
    spec("zrevrank", -3, zrevrank),
    spec("zcount", 4, zcount),
    spec("zrange", -4, zrange),
    spec("zrevrange", -4, zrevrange),
    spec("zrangebyscore", -4, zrangebyscore),
    spec("zrevrangebyscore", -4, zrevrangebyscore),
    spec("zrangebylex", -4, zrangebylex),
    spec("zrevrangebylex", -4, zrevrangebylex),
];

const NAN_RESULT: &str = "ERR resulting score is not a number (NaN)";
const BAD_SCORE_RANGE: &str = "ERR min or max is not a float";
const BAD_LEX_RANGE: &str = "ERR min or max not valid string range item";

/// Looks up a zset for reading: `Ok(None)` if the key is missing, an error if it
/// holds another type.
fn read<'s>(s: &'s mut Server, key: &[u8]) -> Result<Option<&'s Zset>, Reply> {
    match s.keyspace.get(key) {
        None => Ok(None),
        Some(Value::Zset(z)) => Ok(Some(z)),
        #[allow(unreachable_patterns)]
        Some(_) => Err(Reply::error(errors::WRONGTYPE)),
    }
}

fn write<'s>(s: &'s mut Server, key: &[u8]) -> Result<Option<&'s mut Zset>, Reply> {
    match s.keyspace.get_mut(key) {
        None => Ok(None),
        Some(Value::Zset(z)) => Ok(Some(z)),
        #[allow(unreachable_patterns)]
        Some(_) => Err(Reply::error(errors::WRONGTYPE)),
    }
}

macro_rules! tri {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(reply) => return reply,
        }
    };
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
            Value::Zset(Zset::with_hint(pairs.len(), first_member_len)),
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
    range_generic(s, a, RangeKind::Auto, None)
}

pub fn zrevrange(s: &mut Server, a: &Args) -> Reply {
    range_generic(s, a, RangeKind::Rank, Some(true))
}

pub fn zrangebyscore(s: &mut Server, a: &Args) -> Reply {
    range_generic(s, a, RangeKind::Score, Some(false))
}

pub fn zrevrangebyscore(s: &mut Server, a: &Args) -> Reply {
    range_generic(s, a, RangeKind::Score, Some(true))
}

pub fn zrangebylex(s: &mut Server, a: &Args) -> Reply {
    range_generic(s, a, RangeKind::Lex, Some(false))
}

pub fn zrevrangebylex(s: &mut Server, a: &Args) -> Reply {
    range_generic(s, a, RangeKind::Lex, Some(true))
}

/// All the ZRANGE forms, new and old (`zrangeGenericCommand`). `direction` is
/// `None` when REV may still be given as an option.
fn range_generic(s: &mut Server, a: &Args, mut kind: RangeKind, direction: Option<bool>) -> Reply {
    let mut reverse = direction;
    let (mut with_scores, mut offset, mut limit) = (false, 0i64, -1i64);
    let mut i = 4;
    while i < a.len() {
        let left = a.len() - i - 1;
        if a.is(i, "withscores") {
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
        (3, 2)
    } else {
        (2, 3)
    };

    enum Parsed {
        Rank(i64, i64),
        Score(ScoreRange),
        Lex(LexRange),
    }
    let parsed = match kind {
        RangeKind::Score => Parsed::Score(tri!(score_range(a.bytes(lo), a.bytes(hi)))),
        RangeKind::Lex => Parsed::Lex(tri!(lex_range(a.bytes(lo), a.bytes(hi)))),
        _ => Parsed::Rank(tri!(a.int(lo)), tri!(a.int(hi))),
    };

    let Some(zset) = tri!(read(s, a.bytes(1))) else {
        return Reply::Array(Vec::new());
    };
    let items = match parsed {
        Parsed::Rank(start, end) => match clamp_ranks(start, end, zset.len()) {
            Some((start, end)) => zset.range_by_rank(start, end, reverse),
            None => Vec::new(),
        },
        Parsed::Score(range) => {
            let span = zset.score_span(&range);
            walk(zset, span, reverse, offset, limit)
        }
        Parsed::Lex(range) => {
            let span = zset.lex_span(&range);
            walk(zset, span, reverse, offset, limit)
        }
    };
    range_reply(items, with_scores)
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

/// LIMIT semantics: a negative offset gives nothing, a negative count means all.
fn walk(
    zset: &Zset,
    span: Option<(usize, usize)>,
    reverse: bool,
    offset: i64,
    limit: i64,
) -> Vec<(&[u8], f64)> {
    let Some(span) = span else {
        return Vec::new();
    };
    if offset < 0 {
        return Vec::new();
    }
    let limit = if limit < 0 {
        None
    } else {
        Some(limit as usize)
    };
    zset.walk_span(span, reverse, offset as usize, limit)
}

pub(super) fn range_reply(items: Vec<(&[u8], f64)>, with_scores: bool) -> Reply {
    let mut out = Vec::with_capacity(items.len() * if with_scores { 2 } else { 1 });
    for (member, score) in items {
        out.push(Reply::bulk(member));
        if with_scores {
            out.push(Reply::double(score));
        }
    }
    Reply::Array(out)
}
