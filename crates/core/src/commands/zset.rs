//! Sorted-set commands (`t_zset.c`). Each one follows the order of checks in
//! Redis: options and numbers are parsed before the key is looked up, so a syntax
//! error wins over WRONGTYPE, exactly as on a real server.
//!
//! Reply shapes follow Redis's `addReply*` calls, so both protocols come out
//! right: scores are doubles (`,1.5` in RESP3); a member-and-score list is a flat
//! array in RESP2 and an array of `[member, score]` pairs in RESP3
//! ([`Reply::Pairs`]: ZRANGE WITHSCORES, ZRANDMEMBER WITHSCORES, ZPOPMIN with a
//! count); ZPOPMIN without a count, BZPOPMIN and ZRANK WITHSCORE stay flat in
//! both; ZMPOP and BZMPOP nest `[key, [[member, score], ...]]` in both.
//!
//! Encodings: every write reads the listpack thresholds from the config
//! ([`Limits`]), so `CONFIG SET zset-max-listpack-entries 0` makes the next new
//! set a skiplist, and a set converts on its next write, never at once.
//!
//! A negative ZRANDMEMBER count asks for that many draws; Redis starts writing
//! them and keeps going, however many. The core builds a reply in memory, so it
//! refuses more than [`sampling::MAX_DRAWS`] draws with `value is out of range`
//! instead of exhausting memory.

use super::{flags::*, Args, CmdResult, CommandSpec, Server};
use crate::dict::Dict;
use crate::keyspace::Value;
use crate::num::{self, LexBoundSpec};
use crate::reply::{errors, Members, Reply};
use crate::sampling;
use crate::server::notify;
use crate::zset::{AddFlags, AddOutcome, LexBound, LexRange, Limits, ScoreRange, Zset};

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec::new("zadd", -4, zadd)
        .flags(WRITE | DENYOOM | FAST)
        .keys(1, 1, 1)
        .doc(
            "1.2.0",
            "Adds members with their scores, or changes the scores of existing members.",
            "key [NX | XX] [GT | LT] [CH] [INCR] score member [score member ...]",
        ),
    CommandSpec::new("zincrby", 4, zincrby)
        .flags(WRITE | DENYOOM | FAST)
        .keys(1, 1, 1)
        .doc(
            "1.2.0",
            "Adds an increment to a member's score (a missing member starts at 0).",
            "key increment member",
        ),
    CommandSpec::new("zscore", 3, zscore)
        .flags(READONLY | FAST)
        .keys(1, 1, 1)
        .doc("1.2.0", "Returns the score of one member.", "key member"),
    CommandSpec::new("zcard", 2, zcard)
        .flags(READONLY | FAST)
        .keys(1, 1, 1)
        .doc(
            "1.2.0",
            "Returns how many members the sorted set has.",
            "key",
        ),
    CommandSpec::new("zrem", -3, zrem)
        .flags(WRITE | FAST)
        .keys(1, 1, 1)
        .doc(
            "1.2.0",
            "Removes members; the key goes when its last member does.",
            "key member [member ...]",
        ),
    CommandSpec::new("zrank", -3, zrank)
        .flags(READONLY | FAST)
        .keys(1, 1, 1)
        .doc(
            "2.0.0",
            "Returns a member's position counted from the lowest score.",
            "key member [WITHSCORE]",
        ),
    CommandSpec::new("zrevrank", -3, zrevrank)
        .flags(READONLY | FAST)
        .keys(1, 1, 1)
        .doc(
            "2.0.0",
            "Returns a member's position counted from the highest score.",
            "key member [WITHSCORE]",
        ),
    CommandSpec::new("zcount", 4, zcount)
        .flags(READONLY | FAST)
        .keys(1, 1, 1)
        .doc(
            "2.0.0",
            "Counts the members whose scores lie in a range.",
            "key min max",
        ),
    CommandSpec::new("zrange", -4, zrange)
        .flags(READONLY)
        .keys(1, 1, 1)
        .doc(
            "1.2.0",
            "Returns members by rank, score or name range, in either direction.",
            "key start stop [BYSCORE | BYLEX] [REV] [LIMIT offset count] [WITHSCORES]",
        ),
    CommandSpec::new("zrevrange", -4, zrevrange)
        .flags(READONLY)
        .keys(1, 1, 1)
        .doc(
            "1.2.0",
            "Returns members by rank, highest score first.",
            "key start stop [WITHSCORES]",
        ),
    CommandSpec::new("zrangebyscore", -4, zrangebyscore)
        .flags(READONLY)
        .keys(1, 1, 1)
        .doc(
            "1.0.5",
            "Returns the members whose scores lie in a range, lowest first.",
            "key min max [WITHSCORES] [LIMIT offset count]",
        ),
    CommandSpec::new("zrevrangebyscore", -4, zrevrangebyscore)
        .flags(READONLY)
        .keys(1, 1, 1)
        .doc(
            "2.2.0",
            "Returns the members whose scores lie in a range, highest first.",
            "key max min [WITHSCORES] [LIMIT offset count]",
        ),
    CommandSpec::new("zrangebylex", -4, zrangebylex)
        .flags(READONLY)
        .keys(1, 1, 1)
        .doc(
            "2.8.9",
            "Returns the members in a range of names (for equal scores), in byte order.",
            "key min max [LIMIT offset count]",
        ),
    CommandSpec::new("zrevrangebylex", -4, zrevrangebylex)
        .flags(READONLY)
        .keys(1, 1, 1)
        .doc(
            "2.8.9",
            "Returns the members in a range of names (for equal scores), reversed.",
            "key max min [LIMIT offset count]",
        ),
    CommandSpec::new("zrangestore", -5, zrangestore)
        .flags(WRITE | DENYOOM)
        .keys(1, 2, 1)
        .doc(
            "6.2.0",
            "Stores a ZRANGE selection as a new sorted set.",
            "dst src min max [BYSCORE | BYLEX] [REV] [LIMIT offset count]",
        ),
    CommandSpec::new("zmscore", -3, zmscore)
        .flags(READONLY | FAST)
        .keys(1, 1, 1)
        .doc(
            "6.2.0",
            "Returns the scores of several members (null for the missing ones).",
            "key member [member ...]",
        ),
    CommandSpec::new("zlexcount", 4, zlexcount)
        .flags(READONLY | FAST)
        .keys(1, 1, 1)
        .doc(
            "2.8.9",
            "Counts the members in a range of names.",
            "key min max",
        ),
    CommandSpec::new("zpopmin", -2, zpopmin)
        .flags(WRITE | FAST)
        .keys(1, 1, 1)
        .doc(
            "5.0.0",
            "Removes and returns the members with the lowest scores.",
            "key [count]",
        ),
    CommandSpec::new("zpopmax", -2, zpopmax)
        .flags(WRITE | FAST)
        .keys(1, 1, 1)
        .doc(
            "5.0.0",
            "Removes and returns the members with the highest scores.",
            "key [count]",
        ),
    CommandSpec::new("bzpopmin", -3, bzpopmin)
        .flags(WRITE | BLOCKING | FAST)
        .keys(1, -2, 1)
        .doc(
            "5.0.0",
            "Pops the lowest member of the first non-empty set, waiting for one if none.",
            "key [key ...] timeout",
        ),
    CommandSpec::new("bzpopmax", -3, bzpopmax)
        .flags(WRITE | BLOCKING | FAST)
        .keys(1, -2, 1)
        .doc(
            "5.0.0",
            "Pops the highest member of the first non-empty set, waiting for one if none.",
            "key [key ...] timeout",
        ),
    CommandSpec::new("zmpop", -4, zmpop)
        .flags(WRITE | MOVABLE_KEYS)
        .doc(
            "7.0.0",
            "Pops members from the first non-empty set of several.",
            "numkeys key [key ...] <MIN | MAX> [COUNT count]",
        ),
    CommandSpec::new("bzmpop", -5, bzmpop)
        .flags(WRITE | BLOCKING | MOVABLE_KEYS)
        .doc(
            "7.0.0",
            "Pops members from the first non-empty set of several, waiting if all are empty.",
            "timeout numkeys key [key ...] <MIN | MAX> [COUNT count]",
        ),
    CommandSpec::new("zremrangebyrank", 4, zremrangebyrank)
        .flags(WRITE)
        .keys(1, 1, 1)
        .doc(
            "2.0.0",
            "Removes the members in a range of ranks.",
            "key start stop",
        ),
    CommandSpec::new("zremrangebyscore", 4, zremrangebyscore)
        .flags(WRITE)
        .keys(1, 1, 1)
        .doc(
            "1.2.0",
            "Removes the members whose scores lie in a range.",
            "key min max",
        ),
    CommandSpec::new("zremrangebylex", 4, zremrangebylex)
        .flags(WRITE)
        .keys(1, 1, 1)
        .doc(
            "2.8.9",
            "Removes the members in a range of names.",
            "key min max",
        ),
    CommandSpec::new("zrandmember", -2, zrandmember)
        .flags(READONLY)
        .keys(1, 1, 1)
        .doc(
            "6.2.0",
            "Returns random members, distinct for a positive count, repeated for a negative one.",
            "key [count [WITHSCORES]]",
        ),
];

const NAN_RESULT: &str = "ERR resulting score is not a number (NaN)";
const BAD_SCORE_RANGE: &str = "ERR min or max is not a float";
const BAD_LEX_RANGE: &str = "ERR min or max not valid string range item";

fn wrongtype() -> Reply {
    Reply::error(errors::WRONGTYPE)
}

/// Looks up a zset for reading: `Ok(None)` if the key is missing, an error if it
/// holds another type. The geo commands use it too: a geo set is a zset.
pub(super) fn read<'s>(s: &'s mut Server, key: &[u8]) -> Result<Option<&'s Zset>, Reply> {
    match s.keyspace.get(key) {
        None => Ok(None),
        Some(Value::Zset(z)) => Ok(Some(z)),
        Some(_) => Err(wrongtype()),
    }
}

/// [`read`] as `lookupKeyRead` whatever the command (the sources of ZRANGESTORE
/// and GEOSEARCHSTORE): a missing key is a miss and a `keymiss` event.
pub(super) fn read_source<'s>(s: &'s mut Server, key: &[u8]) -> Result<Option<&'s Zset>, Reply> {
    match s.keyspace.lookup_read(key) {
        None => Ok(None),
        Some(Value::Zset(z)) => Ok(Some(z)),
        Some(_) => Err(wrongtype()),
    }
}

/// Looks up a zset for a command that may change it; WATCH is told separately
/// ([`touched`]), only when it does.
fn write<'s>(s: &'s mut Server, key: &[u8]) -> Result<Option<&'s mut Zset>, Reply> {
    match s.keyspace.get_mut_quiet(key) {
        None => Ok(None),
        Some(Value::Zset(z)) => Ok(Some(z)),
        Some(_) => Err(wrongtype()),
    }
}

/// The command changed the set at `key` (`signalModifiedKey`).
fn touched(s: &mut Server, key: &[u8]) {
    s.keyspace.watches.note(key);
}

/// The listpack thresholds in force now.
pub(super) fn limits(s: &Server) -> Limits {
    Limits::from_config(&s.config)
}

pub fn zadd(s: &mut Server, a: &Args) -> CmdResult {
    zadd_generic(s, a, AddFlags::default())
}

pub fn zincrby(s: &mut Server, a: &Args) -> CmdResult {
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
fn zadd_generic(s: &mut Server, a: &Args, mut flags: AddFlags) -> CmdResult {
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
        return Err(Reply::error(errors::SYNTAX));
    }
    if flags.nx && flags.xx {
        return Err(Reply::error(
            "ERR XX and NX options at the same time are not compatible",
        ));
    }
    if (flags.nx && (flags.gt || flags.lt)) || (flags.gt && flags.lt) {
        return Err(Reply::error(
            "ERR GT, LT, and/or NX options at the same time are not compatible",
        ));
    }
    if flags.incr && rest > 2 {
        return Err(Reply::error(
            "ERR INCR option supports a single increment-element pair",
        ));
    }
    // Most ZADDs bring one pair (all ZINCRBYs do): kept on the stack.
    let mut pairs: smallvec::SmallVec<[(f64, &[u8]); 4]> =
        smallvec::SmallVec::with_capacity(rest / 2);
    for i in (at..a.len()).step_by(2) {
        pairs.push((a.float(i)?, a.bytes(i + 1)));
    }

    let key = a.bytes(1);
    let limits = limits(s);
    let exists = read(s, key)?.is_some();
    if !exists {
        if flags.xx {
            return Ok(if flags.incr {
                Reply::Nil
            } else {
                Reply::Integer(0)
            });
        }
        let first_member_len = pairs[0].1.len();
        let zset = Zset::with_hint(pairs.len(), first_member_len, &limits);
        s.keyspace.insert(key, Value::Zset(Box::new(zset)));
    }
    let zset = write(s, key)?.expect("zset exists");
    zset.prepare_for(pairs.len(), &limits);

    let (mut added, mut updated, mut processed) = (0, 0, 0);
    let mut last_score = 0.0;
    let mut nan = false;
    for (score, member) in pairs {
        match zset.add(score, member, flags, &limits) {
            AddOutcome::Added(v) => (added, processed, last_score) = (added + 1, processed + 1, v),
            AddOutcome::Updated(v) => {
                (updated, processed, last_score) = (updated + 1, processed + 1, v)
            }
            AddOutcome::Unchanged(v) => (processed, last_score) = (processed + 1, v),
            AddOutcome::Skipped => {}
            AddOutcome::NotANumber => {
                nan = true;
                break;
            }
        }
    }
    if added + updated > 0 {
        touched(s, key);
        let event = if flags.incr { "zincr" } else { "zadd" };
        s.notify_here(notify::ZSET, event, key);
    }
    if nan {
        return Err(Reply::error(NAN_RESULT));
    }
    Ok(if flags.incr {
        if processed > 0 {
            Reply::double(last_score)
        } else {
            Reply::Nil
        }
    } else {
        Reply::Integer(if ch { added + updated } else { added })
    })
}

pub fn zscore(s: &mut Server, a: &Args) -> CmdResult {
    Ok(
        match read(s, a.bytes(1))?.and_then(|z| z.score(a.bytes(2))) {
            Some(score) => Reply::double(score),
            None => Reply::Nil,
        },
    )
}

pub fn zcard(s: &mut Server, a: &Args) -> CmdResult {
    Ok(Reply::Integer(
        read(s, a.bytes(1))?.map_or(0, |z| z.len()) as i64
    ))
}

/// ZREM key member ...: stops once the set is empty, and deletes the key.
pub fn zrem(s: &mut Server, a: &Args) -> CmdResult {
    let key = a.bytes(1);
    let Some(zset) = write(s, key)? else {
        return Ok(Reply::Integer(0));
    };
    let mut removed = 0;
    for i in 2..a.len() {
        if zset.remove(a.bytes(i)) {
            removed += 1;
        }
        if zset.is_empty() {
            break;
        }
    }
    let empty = zset.is_empty();
    if removed > 0 {
        s.notify_here(notify::ZSET, "zrem", key);
    }
    if empty {
        s.keyspace.remove(key);
        s.notify_here(notify::GENERIC, "del", key);
    } else if removed > 0 {
        touched(s, key);
    }
    Ok(Reply::Integer(removed))
}

pub fn zrank(s: &mut Server, a: &Args) -> CmdResult {
    rank_generic(s, a, false)
}

pub fn zrevrank(s: &mut Server, a: &Args) -> CmdResult {
    rank_generic(s, a, true)
}

/// ZRANK/ZREVRANK key member [WITHSCORE]: `[rank, score]` with WITHSCORE (a null
/// array when the member is missing), else the rank (a null).
fn rank_generic(s: &mut Server, a: &Args, reverse: bool) -> CmdResult {
    if a.len() > 4 {
        return Err(Reply::error(errors::arity(if reverse {
            "zrevrank"
        } else {
            "zrank"
        })));
    }
    let with_score = a.len() == 4;
    if with_score && !a.is(3, "withscore") {
        return Err(Reply::error(errors::SYNTAX));
    }
    let missing = if with_score {
        Reply::NilArray
    } else {
        Reply::Nil
    };
    let Some(zset) = read(s, a.bytes(1))? else {
        return Ok(missing);
    };
    let member = a.bytes(2);
    Ok(match zset.rank_with_score(member, reverse) {
        None => missing,
        Some((rank, score)) if with_score => {
            Reply::Array(vec![Reply::Integer(rank as i64), Reply::double(score)])
        }
        Some((rank, _)) => Reply::Integer(rank as i64),
    })
}

pub fn zcount(s: &mut Server, a: &Args) -> CmdResult {
    let range = score_range(a.bytes(2), a.bytes(3))?;
    let Some(zset) = read(s, a.bytes(1))? else {
        return Ok(Reply::Integer(0));
    };
    let count = zset
        .score_span(&range)
        .map_or(0, |(first, last)| last + 1 - first);
    Ok(Reply::Integer(count as i64))
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

pub fn zrange(s: &mut Server, a: &Args) -> CmdResult {
    range_generic(s, a, RangeKind::Auto, None, false)
}

pub fn zrangestore(s: &mut Server, a: &Args) -> CmdResult {
    range_generic(s, a, RangeKind::Auto, None, true)
}

pub fn zrevrange(s: &mut Server, a: &Args) -> CmdResult {
    range_generic(s, a, RangeKind::Rank, Some(true), false)
}

pub fn zrangebyscore(s: &mut Server, a: &Args) -> CmdResult {
    range_generic(s, a, RangeKind::Score, Some(false), false)
}

pub fn zrevrangebyscore(s: &mut Server, a: &Args) -> CmdResult {
    range_generic(s, a, RangeKind::Score, Some(true), false)
}

pub fn zrangebylex(s: &mut Server, a: &Args) -> CmdResult {
    range_generic(s, a, RangeKind::Lex, Some(false), false)
}

pub fn zrevrangebylex(s: &mut Server, a: &Args) -> CmdResult {
    range_generic(s, a, RangeKind::Lex, Some(true), false)
}

enum ParsedRange {
    Rank(i64, i64),
    Score(ScoreRange),
    Lex(LexRange),
}

/// All the ZRANGE forms, new and old, and ZRANGESTORE (`zrangeGenericCommand`).
/// `direction` is `None` when REV may still be given as an option (once: a second
/// REV, like a second BYSCORE or BYLEX, is a syntax error, as in Redis, whose loop
/// tests the direction it has just set); with `store` the arguments start one
/// later (after the destination) and WITHSCORES is refused.
fn range_generic(
    s: &mut Server,
    a: &Args,
    mut kind: RangeKind,
    direction: Option<bool>,
    store: bool,
) -> CmdResult {
    let base = if store { 2 } else { 1 };
    let mut reverse = direction;
    let (mut with_scores, mut offset, mut limit) = (false, 0i64, -1i64);
    let mut i = base + 3;
    while i < a.len() {
        let left = a.len() - i - 1;
        if !store && a.is(i, "withscores") {
            with_scores = true;
        } else if a.is(i, "limit") && left >= 2 {
            offset = a.int(i + 1)?;
            limit = a.int(i + 2)?;
            i += 2;
        } else if reverse.is_none() && a.is(i, "rev") {
            reverse = Some(true);
        } else if kind == RangeKind::Auto && a.is(i, "bylex") {
            kind = RangeKind::Lex;
        } else if kind == RangeKind::Auto && a.is(i, "byscore") {
            kind = RangeKind::Score;
        } else {
            return Err(Reply::error(errors::SYNTAX));
        }
        i += 1;
    }
    let reverse = reverse.unwrap_or(false);
    if kind == RangeKind::Auto {
        kind = RangeKind::Rank;
    }
    if limit != -1 && kind == RangeKind::Rank {
        return Err(Reply::error(
            "ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX",
        ));
    }
    if with_scores && kind == RangeKind::Lex {
        return Err(Reply::error(
            "ERR syntax error, WITHSCORES not supported in combination with BYLEX",
        ));
    }
    // Reverse score and lex ranges are written max first.
    let (lo, hi) = if reverse && kind != RangeKind::Rank {
        (base + 2, base + 1)
    } else {
        (base + 1, base + 2)
    };
    let parsed = match kind {
        RangeKind::Score => ParsedRange::Score(score_range(a.bytes(lo), a.bytes(hi))?),
        RangeKind::Lex => ParsedRange::Lex(lex_range(a.bytes(lo), a.bytes(hi))?),
        _ => ParsedRange::Rank(a.int(lo)?, a.int(hi)?),
    };

    let source = read_source(s, a.bytes(base))?;
    if !store {
        // The reply is built from the members where they are stored.
        return Ok(match (source, parsed) {
            (None, _) => range_reply_of(std::iter::empty(), with_scores),
            (Some(zset), ParsedRange::Rank(start, end)) => {
                match clamp_ranks(start, end, zset.len()) {
                    Some((start, end)) => {
                        range_reply_of(zset.rank_range(start, end, reverse), with_scores)
                    }
                    None => range_reply_of(std::iter::empty(), with_scores),
                }
            }
            (Some(zset), parsed) => {
                let (items, _) = select_range(zset, parsed, reverse, offset, limit);
                range_reply_of(items.into_iter().map(|(m, s)| (s, m)), with_scores)
            }
        });
    }
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
    Ok(store_range(s, a.bytes(1), items, size_hint))
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
    let limit = usize::try_from(limit).ok();
    match parsed {
        ParsedRange::Rank(start, end) => match clamp_ranks(start, end, zset.len()) {
            Some((start, end)) => (zset.range_by_rank(start, end, reverse), end + 1 - start),
            None => (Vec::new(), 0),
        },
        _ if offset < 0 => (Vec::new(), 0),
        ParsedRange::Score(range) => {
            let offset = usize::try_from(offset).unwrap_or(usize::MAX);
            let span = zset.score_span(&range);
            let items = span.map_or_else(Vec::new, |span| {
                zset.walk_span(span, reverse, offset, limit)
            });
            (items, 0)
        }
        ParsedRange::Lex(range) => {
            let offset = usize::try_from(offset).unwrap_or(usize::MAX);
            (zset.lex_walk(&range, reverse, offset, limit), 0)
        }
    }
}

/// ZRANGESTORE's result: the destination is replaced (its TTL with it), or deleted
/// when the range is empty. The new set is made as `zsetTypeCreate(hint, 0)` makes
/// it, then filled member by member (so a listpack may convert on the way).
fn store_range(s: &mut Server, dst: &[u8], items: Vec<(Vec<u8>, f64)>, size_hint: usize) -> Reply {
    if items.is_empty() {
        if s.keyspace.remove_stored(dst) {
            s.notify_here(notify::GENERIC, "del", dst);
        }
        return Reply::Integer(0);
    }
    let limits = limits(s);
    let mut zset = Zset::with_hint(size_hint, 0, &limits);
    for (member, score) in &items {
        zset.add(*score, member, AddFlags::default(), &limits);
    }
    let replaced = s.overwrite_probe(dst);
    s.keyspace.insert(dst, Value::Zset(Box::new(zset)));
    s.notify_overwritten(dst, replaced);
    s.notify_here(notify::ZSET, "zrangestore", dst);
    Reply::Integer(items.len() as i64)
}

/// Redis's rank sanitising: negative ranks count from the end, then clamp.
fn clamp_ranks(start: i64, end: i64, len: usize) -> Option<(usize, usize)> {
    let len = len as i64;
    let start = if start < 0 {
        (len.saturating_add(start)).max(0)
    } else {
        start
    };
    let end = if end < 0 {
        len.saturating_add(end)
    } else {
        end
    };
    if start > end || start >= len {
        return None;
    }
    Some((start as usize, end.min(len - 1) as usize))
}

/// The reply of ZRANGE's forms from `(score, member)` pairs borrowed from a set:
/// each member copied once, into the reply's one buffer (no value and no
/// allocation per element, see [`Members`]).
fn range_reply_of<'a>(items: impl Iterator<Item = (f64, &'a [u8])>, with_scores: bool) -> Reply {
    let mut items = items.peekable();
    // Room for as many members as the first one is long (one allocation per
    // buffer for a set of members of one shape, as a leaderboard's are).
    let first_len = items.peek().map_or(0, |(_, m)| m.len());
    let mut reply = Members::with_capacity(with_scores, items.size_hint().0, first_len);
    for (score, member) in items {
        reply.push(member, score);
    }
    Reply::Members(reply)
}

/// Members, or members with their scores: a flat array in RESP2, `[member,
/// score]` pairs in RESP3 (the shape of ZRANGE, ZUNION, ZRANDMEMBER).
pub(super) fn range_reply(items: Vec<(Vec<u8>, f64)>, with_scores: bool) -> Reply {
    if with_scores {
        Reply::Pairs(
            items
                .into_iter()
                .map(|(m, score)| (Reply::bulk_vec(m), Reply::double(score)))
                .collect(),
        )
    } else {
        Reply::Array(items.into_iter().map(|(m, _)| Reply::bulk_vec(m)).collect())
    }
}

pub fn zmscore(s: &mut Server, a: &Args) -> CmdResult {
    let zset = read(s, a.bytes(1))?;
    let scores = (2..a.len())
        .map(|i| match zset.and_then(|z| z.score(a.bytes(i))) {
            Some(score) => Reply::double(score),
            None => Reply::Nil,
        })
        .collect();
    Ok(Reply::Array(scores))
}

pub fn zlexcount(s: &mut Server, a: &Args) -> CmdResult {
    let range = lex_range(a.bytes(2), a.bytes(3))?;
    let count = read(s, a.bytes(1))?.map_or(0, |z| z.lex_count(&range));
    Ok(Reply::Integer(count as i64))
}

pub fn zpopmin(s: &mut Server, a: &Args) -> CmdResult {
    pop_command(s, a, false)
}

pub fn zpopmax(s: &mut Server, a: &Args) -> CmdResult {
    pop_command(s, a, true)
}

/// `getPositiveLongFromObjectOrReply`: one message for junk and negatives.
fn positive_count(a: &Args, i: usize, message: &str) -> Result<i64, Reply> {
    match a.int(i) {
        Ok(n) if n >= 0 => Ok(n),
        _ => Err(Reply::error(message)),
    }
}

/// ZPOPMIN/ZPOPMAX key [count]: without a count a flat `[member, score]`; with
/// one, pairs (nested in RESP3).
fn pop_command(s: &mut Server, a: &Args, max: bool) -> CmdResult {
    if a.len() > 3 {
        return Err(Reply::error(errors::SYNTAX));
    }
    let count = if a.len() == 3 {
        Some(positive_count(
            a,
            2,
            "ERR value is out of range, must be positive",
        )?)
    } else {
        None
    };
    let key = a.bytes(1);
    if read(s, key)?.is_none() || count == Some(0) {
        return Ok(Reply::Array(Vec::new()));
    }
    let popped = pop_pairs(s, key, count.unwrap_or(1), max);
    Ok(match count {
        None => Reply::Array(
            popped
                .into_iter()
                .flat_map(|(m, score)| [Reply::bulk_vec(m), Reply::double(score)])
                .collect(),
        ),
        Some(_) => range_reply(popped, true),
    })
}

/// Pops up to `count` elements from an existing zset, deleting the key when it
/// empties.
fn pop_pairs(s: &mut Server, key: &[u8], count: i64, max: bool) -> Vec<(Vec<u8>, f64)> {
    let mut out = Vec::new();
    if let Ok(Some(zset)) = write(s, key) {
        let n = usize::try_from(count).unwrap_or(usize::MAX).min(zset.len());
        out.reserve(n);
        for _ in 0..n {
            let Some(popped) = zset.pop(max) else {
                break;
            };
            out.push(popped);
        }
        let empty = zset.is_empty();
        if !empty {
            touched(s, key);
        }
        if !out.is_empty() {
            let event = if max { "zpopmax" } else { "zpopmin" };
            s.notify_here(notify::ZSET, event, key);
        }
        if empty {
            s.keyspace.remove(key);
            s.notify_here(notify::GENERIC, "del", key);
        }
    }
    out
}

pub fn bzpopmin(s: &mut Server, a: &Args) -> CmdResult {
    blocking_pop(s, a, false)
}

pub fn bzpopmax(s: &mut Server, a: &Args) -> CmdResult {
    blocking_pop(s, a, true)
}

/// BZPOPMIN/BZPOPMAX key [key ...] timeout: pops from the first non-empty key and
/// replies key, member, score; with every key empty the client blocks (through the
/// listener) or, where it cannot block, gets a null array.
fn blocking_pop(s: &mut Server, a: &Args, max: bool) -> CmdResult {
    let timeout = parse_timeout(a.bytes(a.len() - 1))?;
    let keys: Vec<Vec<u8>> = (1..a.len() - 1).map(|i| a.bytes(i).to_vec()).collect();
    if let Some(key) = first_nonempty(s, &keys)? {
        let mut reply = vec![Reply::bulk(&key)];
        for (m, score) in pop_pairs(s, &key, 1, max) {
            reply.push(Reply::bulk_vec(m));
            reply.push(Reply::double(score));
        }
        return Ok(Reply::Array(reply));
    }
    // Woken only when a key holds a zset (a SET over the key must not wake
    // it into a WRONGTYPE, as `handleClientsBlockedOnKey` checks the type).
    s.block_for(keys, timeout, Some("zset"));
    Ok(Reply::NilArray)
}

/// The first key holding a non-empty zset; WRONGTYPE stops the search at the
/// first key of another type.
fn first_nonempty(s: &mut Server, keys: &[Vec<u8>]) -> Result<Option<Vec<u8>>, Reply> {
    for key in keys {
        match read(s, key)? {
            Some(z) if !z.is_empty() => return Ok(Some(key.clone())),
            _ => continue,
        }
    }
    Ok(None)
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

pub fn zmpop(s: &mut Server, a: &Args) -> CmdResult {
    mpop_generic(s, a, 1, false)
}

pub fn bzmpop(s: &mut Server, a: &Args) -> CmdResult {
    mpop_generic(s, a, 2, true)
}

/// ZMPOP/BZMPOP (`zmpopGenericCommand`): numkeys, then MIN or MAX right after the
/// keys, then at most one COUNT; BZMPOP's timeout is read after all that. The
/// reply is `[key, [[member, score], ...]]` in both protocols, a null array when
/// every set is empty (and BZMPOP cannot block).
fn mpop_generic(s: &mut Server, a: &Args, numkeys_at: usize, blocking: bool) -> CmdResult {
    // A custom message covers junk too (`getRangeLongFromObjectOrReply`).
    let numkeys = match a.int(numkeys_at) {
        Ok(n) if n >= 1 => n as u64,
        _ => return Err(Reply::error("ERR numkeys should be greater than 0")),
    };
    let where_at = (numkeys_at as u64)
        .saturating_add(numkeys)
        .saturating_add(1);
    if where_at >= a.len() as u64 {
        return Err(Reply::error(errors::SYNTAX));
    }
    let where_at = where_at as usize;
    let max = if a.is(where_at, "min") {
        false
    } else if a.is(where_at, "max") {
        true
    } else {
        return Err(Reply::error(errors::SYNTAX));
    };
    let mut count = None;
    let mut j = where_at + 1;
    while j < a.len() {
        let more = a.len() - 1 - j;
        if count.is_none() && a.is(j, "count") && more > 0 {
            j += 1;
            count = match a.int(j) {
                Ok(n) if n >= 1 => Some(n),
                _ => return Err(Reply::error("ERR count should be greater than 0")),
            };
        } else {
            return Err(Reply::error(errors::SYNTAX));
        }
        j += 1;
    }
    let count = count.unwrap_or(1);
    let timeout = if blocking {
        Some(parse_timeout(a.bytes(1))?)
    } else {
        None
    };
    let keys: Vec<Vec<u8>> = (numkeys_at + 1..where_at)
        .map(|i| a.bytes(i).to_vec())
        .collect();
    if let Some(key) = first_nonempty(s, &keys)? {
        let popped = pop_pairs(s, &key, count, max);
        let pairs = popped
            .into_iter()
            .map(|(m, score)| Reply::Array(vec![Reply::bulk_vec(m), Reply::double(score)]))
            .collect();
        return Ok(Reply::Array(vec![
            Reply::bulk_vec(key),
            Reply::Array(pairs),
        ]));
    }
    if let Some(timeout) = timeout {
        s.block_for(keys, timeout, Some("zset"));
    }
    Ok(Reply::NilArray)
}

pub fn zremrangebyrank(s: &mut Server, a: &Args) -> CmdResult {
    let (start, end) = (a.int(2)?, a.int(3)?);
    remove_range(s, a, "zremrangebyrank", |z| {
        clamp_ranks(start, end, z.len()).map_or(0, |(lo, hi)| z.remove_rank_range(lo, hi))
    })
}

pub fn zremrangebyscore(s: &mut Server, a: &Args) -> CmdResult {
    let range = score_range(a.bytes(2), a.bytes(3))?;
    remove_range(s, a, "zremrangebyscore", |z| z.remove_score_range(&range))
}

pub fn zremrangebylex(s: &mut Server, a: &Args) -> CmdResult {
    let range = lex_range(a.bytes(2), a.bytes(3))?;
    remove_range(s, a, "zremrangebylex", |z| z.remove_lex_range(&range))
}

/// Shared tail of the ZREMRANGEBY* commands: run `remove` on the zset, delete the
/// key if it emptied, reply how many went.
fn remove_range(
    s: &mut Server,
    a: &Args,
    event: &'static str,
    remove: impl FnOnce(&mut Zset) -> usize,
) -> CmdResult {
    let key = a.bytes(1);
    let Some(zset) = write(s, key)? else {
        return Ok(Reply::Integer(0));
    };
    let removed = remove(zset);
    let empty = zset.is_empty();
    if removed > 0 {
        s.notify_here(notify::ZSET, event, key);
    }
    if empty {
        s.keyspace.remove(key);
        s.notify_here(notify::GENERIC, "del", key);
    } else if removed > 0 {
        touched(s, key);
    }
    Ok(Reply::Integer(removed as i64))
}

/// The count argument of ZRANDMEMBER/HRANDFIELD (`getRangeLongFromObjectOrReply`
/// over ±LONG_MAX), with the optional WITHSCORES/WITHVALUES word after it; with
/// that word the count must also lie within ±LONG_MAX/2. A negative count beyond
/// [`sampling::MAX_DRAWS`] is refused (see the module documentation).
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
    sampling::check_draws(count)?;
    Ok(count)
}

/// ZRANDMEMBER key [count [WITHSCORES]].
pub fn zrandmember(s: &mut Server, a: &Args) -> CmdResult {
    if a.len() >= 3 {
        let count = random_count(a, "withscores")?;
        return zrandmember_count(s, a, count, a.len() == 4);
    }
    let Server { keyspace, rng, .. } = s;
    let zset = match keyspace.get_mut(a.bytes(1)) {
        None => return Ok(Reply::Nil),
        Some(Value::Zset(z)) => z,
        Some(_) => return Err(wrongtype()),
    };
    Ok(match zset.random_member(rng) {
        Some((member, _)) => Reply::bulk(member),
        None => Reply::Nil,
    })
}

/// `zrandmemberWithCountCommand`: repeats for a negative count (or 1); the whole
/// set when the count covers it; otherwise a unique sample drawn by selection on a
/// listpack, by discarding fair-random dict entries when the count is close to the
/// size, or by repeated fair draws until enough distinct members came up.
fn zrandmember_count(s: &mut Server, a: &Args, count: i64, with_scores: bool) -> CmdResult {
    let Server { keyspace, rng, .. } = s;
    let zset = match keyspace.get_mut(a.bytes(1)) {
        None => return Ok(Reply::Array(Vec::new())),
        Some(Value::Zset(z)) => z,
        Some(_) => return Err(wrongtype()),
    };
    let wanted = count.unsigned_abs() as usize;
    if wanted == 0 {
        return Ok(Reply::Array(Vec::new()));
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
        let mut seen: Dict<()> = Dict::new();
        seen.expand(wanted);
        let mut picked: Vec<(Vec<u8>, f64)> = Vec::with_capacity(wanted);
        while picked.len() < wanted {
            let (m, score) = zset.random_member(rng).expect("non-empty zset");
            if seen.add(m.clone(), ()) {
                picked.push((m, score));
            }
        }
        picked
    };
    Ok(range_reply(picks, with_scores))
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

#[cfg(test)]
mod tests {
    use crate::reply::Protocol;
    use crate::{Reply, Server};

    fn resp(r: &Reply, p: Protocol) -> String {
        let mut out = Vec::new();
        r.encode(&mut out, p);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_repeated_range_option_is_a_syntax_error() {
        let mut s = Server::new();
        s.cmd(&["ZADD", "z", "1", "a", "2", "b"]);
        let syntax = Reply::error("ERR syntax error");
        // Checked before the range is parsed: "1.5" is no rank, yet the
        // answer is the syntax error (Redis 8.6.3 answers the same).
        for argv in [
            &["ZRANGE", "z", "0", "1.5", "REV", "REV"][..],
            &["ZRANGE", "z", "0", "-1", "BYSCORE", "REV", "REV"],
            &["ZREVRANGE", "z", "0", "-1", "REV"],
            &["ZRANGE", "z", "0", "1", "BYSCORE", "BYSCORE"],
            &["ZRANGE", "z", "-", "+", "BYLEX", "BYSCORE"],
            &["ZRANGESTORE", "d", "z", "0", "-1", "REV", "REV"],
        ] {
            assert_eq!(s.cmd(argv), syntax, "{argv:?}");
        }
        // One REV, and WITHSCORES twice, are accepted.
        assert_eq!(
            s.cmd(&["ZRANGE", "z", "0", "0", "REV", "WITHSCORES", "WITHSCORES"]),
            s.cmd(&["ZRANGE", "z", "0", "0", "REV", "WITHSCORES"])
        );
        assert_eq!(s.cmd(&["EXISTS", "d"]), Reply::Integer(0));
    }

    #[test]
    fn withscores_replies_nest_in_resp3_only() {
        let mut s = Server::new();
        s.cmd(&["ZADD", "z", "1", "a", "2.5", "b"]);
        let r = s.cmd(&["ZRANGE", "z", "0", "-1", "WITHSCORES"]);
        assert_eq!(
            resp(&r, Protocol::Resp2),
            "*4\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$3\r\n2.5\r\n"
        );
        assert_eq!(
            resp(&r, Protocol::Resp3),
            "*2\r\n*2\r\n$1\r\na\r\n,1\r\n*2\r\n$1\r\nb\r\n,2.5\r\n"
        );
        // ZPOPMIN without a count stays flat; with one it nests.
        let r = s.cmd(&["ZPOPMIN", "z"]);
        assert_eq!(resp(&r, Protocol::Resp3), "*2\r\n$1\r\na\r\n,1\r\n");
        let r = s.cmd(&["ZPOPMAX", "z", "5"]);
        assert_eq!(resp(&r, Protocol::Resp3), "*1\r\n*2\r\n$1\r\nb\r\n,2.5\r\n");
        assert_eq!(s.cmd(&["EXISTS", "z"]), Reply::Integer(0));
    }

    #[test]
    fn zmpop_nests_in_both_protocols() {
        let mut s = Server::new();
        s.cmd(&["ZADD", "b", "1", "x", "2", "y"]);
        let r = s.cmd(&["ZMPOP", "2", "a", "b", "MAX", "COUNT", "10"]);
        assert_eq!(
            resp(&r, Protocol::Resp2),
            "*2\r\n$1\r\nb\r\n*2\r\n*2\r\n$1\r\ny\r\n$1\r\n2\r\n*2\r\n$1\r\nx\r\n$1\r\n1\r\n"
        );
        assert_eq!(s.cmd(&["ZMPOP", "1", "b", "MIN"]), Reply::NilArray);
        assert_eq!(
            s.cmd(&["ZMPOP", "0", "b", "MIN"]),
            Reply::error("ERR numkeys should be greater than 0")
        );
        assert_eq!(
            s.cmd(&["ZMPOP", "1", "b", "MIN", "COUNT", "0"]),
            Reply::error("ERR count should be greater than 0")
        );
        assert_eq!(
            s.cmd(&["ZMPOP", "5", "b", "MIN"]),
            Reply::error("ERR syntax error")
        );
        assert_eq!(
            s.cmd(&["ZMPOP", "9223372036854775807", "b", "MIN"]),
            Reply::error("ERR syntax error")
        );
        assert_eq!(s.cmd(&["BZMPOP", "0.01", "1", "b", "MIN"]), Reply::NilArray);
    }

    #[test]
    fn hostile_random_counts_are_refused_not_panicking() {
        let mut s = Server::new();
        s.cmd(&["ZADD", "z", "1", "a"]);
        for argv in [
            &["ZRANDMEMBER", "z", "-9223372036854775807"][..],
            &["ZRANDMEMBER", "z", "-4611686018427387903", "WITHSCORES"],
            &["ZRANDMEMBER", "z", "-9223372036854770000", "WITHSCORES"],
        ] {
            assert!(
                matches!(s.cmd(argv), Reply::Error(e) if e.starts_with("ERR value is out of range")),
                "{argv:?}"
            );
        }
        assert_eq!(
            s.cmd(&["ZRANDMEMBER", "z", "-9223372036854775808"]),
            Reply::error(
                "ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807"
            )
        );
        // A huge positive count is the whole set.
        assert_eq!(
            s.cmd(&["ZRANDMEMBER", "z", "9223372036854775807"]),
            Reply::Array(vec![Reply::bulk("a")])
        );
        let Reply::Array(items) = s.cmd(&["ZRANDMEMBER", "z", "-5"]) else {
            panic!()
        };
        assert_eq!(items.len(), 5);
        // Huge ranks and limits are clamped, not overflowed.
        assert_eq!(
            s.cmd(&["ZRANGE", "z", "-9223372036854775808", "9223372036854775807"])
                .expanded(),
            Reply::Array(vec![Reply::bulk("a")])
        );
        assert_eq!(
            s.cmd(&[
                "ZRANGE",
                "z",
                "-inf",
                "+inf",
                "BYSCORE",
                "LIMIT",
                "9223372036854775807",
                "9223372036854775807"
            ])
            .expanded(),
            Reply::Array(vec![])
        );
        assert_eq!(
            s.cmd(&["ZPOPMIN", "z", "9223372036854775807"]),
            Reply::Pairs(vec![(Reply::bulk("a"), Reply::Double(1.0))])
        );
    }

    #[test]
    fn configured_thresholds_pick_the_encoding_of_new_sets() {
        let mut s = Server::new();
        assert_eq!(
            s.cmd(&["CONFIG", "SET", "zset-max-ziplist-entries", "0"]),
            Reply::ok()
        );
        s.cmd(&["ZADD", "z", "1", "a"]);
        assert_eq!(s.cmd(&["OBJECT", "ENCODING", "z"]), Reply::bulk("skiplist"));
        s.cmd(&["CONFIG", "SET", "zset-max-listpack-entries", "2"]);
        s.cmd(&["ZADD", "y", "1", "a", "2", "b"]);
        assert_eq!(s.cmd(&["OBJECT", "ENCODING", "y"]), Reply::bulk("listpack"));
        // Raising the limit converts nothing back; lowering it converts on the
        // next write, not at once.
        s.cmd(&["CONFIG", "SET", "zset-max-listpack-entries", "1"]);
        assert_eq!(s.cmd(&["OBJECT", "ENCODING", "y"]), Reply::bulk("listpack"));
        s.cmd(&["ZADD", "y", "3", "c"]);
        assert_eq!(s.cmd(&["OBJECT", "ENCODING", "y"]), Reply::bulk("skiplist"));
        s.cmd(&["CONFIG", "SET", "zset-max-listpack-value", "3"]);
        s.cmd(&["CONFIG", "SET", "zset-max-listpack-entries", "128"]);
        s.cmd(&["ZADD", "x", "1", "abcd"]);
        assert_eq!(s.cmd(&["OBJECT", "ENCODING", "x"]), Reply::bulk("skiplist"));
    }
}
