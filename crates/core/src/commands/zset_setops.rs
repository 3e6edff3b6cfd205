//! Set operations over sorted sets: ZUNION, ZINTER, ZDIFF, their STORE forms and
//! ZINTERCARD, as one routine the way Redis runs them all through
//! `zunionInterDiffGenericCommand` (`t_zset.c`).
//!
//! Behaviour kept from Redis 8.6.3:
//!
//! - **Order of checks.** `numkeys` must be an integer, then at least 1, then no more
//!   than the arguments left; the input keys are looked up (WRONGTYPE) *before* the
//!   options are parsed, so a wrong type wins over a bad weight or a syntax error.
//! - **Options.** `WEIGHTS` needs one float per key ("weight value is not a float");
//!   `AGGREGATE` takes SUM, MIN or MAX; `WITHSCORES` only where a reply lists members;
//!   `LIMIT` only for ZINTERCARD. ZDIFF and ZINTERCARD take no WEIGHTS or AGGREGATE.
//!   Anything else, or too few words left for an option, is a syntax error.
//! - **Scores.** Each input score is multiplied by its set's weight (`inf * 0` is NaN,
//!   which becomes 0). SUM turns `+inf + -inf` into 0 instead of NaN; MIN and MAX
//!   keep the current value when the comparison fails. Union and intersection visit
//!   the inputs from the smallest to the largest (a stable sort, as glibc's `qsort`
//!   is for these sizes), which decides the order of the additions. In an
//!   intersection only the first (smallest) input's value is cleared of NaN before
//!   aggregation; the others go to the aggregate as they are, so SUM resets to 0.
//!   ZDIFF keeps the first set's scores, unweighted.
//! - **Results** are ordered by score, then member bytes. A STORE form replaces the
//!   destination (dropping its TTL), or deletes it and answers 0 when the result is
//!   empty; the stored set is a listpack when it would fit one
//!   (`zsetConvertToListpackIfNeeded`), otherwise a skiplist. ZUNION/ZINTER/ZDIFF
//!   reply from the unconverted skiplist, so a `-0` score shows as `-0`.
//! - **ZINTERCARD** counts the intersection and stops at `LIMIT` (0 = no limit); a
//!   non-integer or negative limit is "LIMIT can't be negative".
//!
//! - **Plain sets** are accepted as inputs, each member with score 1 (`zuiNext` on
//!   an `OBJ_SET`); any other type is WRONGTYPE. Membership in a set input is
//!   checked without advancing its dict's rehash (the core reads its inputs
//!   immutably), which changes nothing but the moment a rehash ends.
//!
//! One Redis 8.8 feature is added: `AGGREGATE COUNT` (absent from 8.6.3, which
//! answers it with a syntax error). Redis 8.8's ZUNIONSTORE page
//! (<https://redis.io/docs/latest/commands/zunionstore/>) defines it: the input scores
//! are ignored, and each input set that holds a member adds its weight (1 without
//! WEIGHTS), so the score is the number of sets holding the member, or the sum of
//! their weights. As in redis/redis#14892, the weights are summed like SUM does,
//! including the NaN-to-0 rule (`WEIGHTS inf -inf` gives 0).

use super::zset::range_reply;
use super::{flags::*, Args, CmdResult, CommandSpec, Server};
use crate::keyspace::Value;
use crate::num;
use crate::reply::{errors, Reply};
use crate::server::notify;
use crate::set::Set;
use crate::zset::Zset;
use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::HashMap;

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec::new("zunion", -3, zunion)
        .flags(READONLY | MOVABLE_KEYS)
        .doc(
            "6.2.0",
            "Returns the union of sorted sets (and sets), with aggregated scores.",
            "numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE SUM | MIN | MAX] [WITHSCORES]",
        ),
    CommandSpec::new("zinter", -3, zinter)
        .flags(READONLY | MOVABLE_KEYS)
        .doc(
            "6.2.0",
            "Returns the members every input holds, with aggregated scores.",
            "numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE SUM | MIN | MAX] [WITHSCORES]",
        ),
    CommandSpec::new("zdiff", -3, zdiff)
        .flags(READONLY | MOVABLE_KEYS)
        .doc(
            "6.2.0",
            "Returns the members of the first input that no other input holds.",
            "numkeys key [key ...] [WITHSCORES]",
        ),
    CommandSpec::new("zunionstore", -4, zunionstore)
        .flags(WRITE | DENYOOM | MOVABLE_KEYS)
        .keys(1, 1, 1)
        .doc(
            "2.0.0",
            "Stores the union of sorted sets (and sets) in a key.",
            "destination numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE SUM | MIN | MAX]",
        ),
    CommandSpec::new("zinterstore", -4, zinterstore)
        .flags(WRITE | DENYOOM | MOVABLE_KEYS)
        .keys(1, 1, 1)
        .doc(
            "2.0.0",
            "Stores the intersection of sorted sets (and sets) in a key.",
            "destination numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE SUM | MIN | MAX]",
        ),
    CommandSpec::new("zdiffstore", -4, zdiffstore)
        .flags(WRITE | DENYOOM | MOVABLE_KEYS)
        .keys(1, 1, 1)
        .doc(
            "6.2.0",
            "Stores the difference of the first input and the others in a key.",
            "destination numkeys key [key ...]",
        ),
    CommandSpec::new("zintercard", -3, zintercard)
        .flags(READONLY | MOVABLE_KEYS)
        .doc(
            "7.0.0",
            "Counts the members every input holds, stopping at an optional limit.",
            "numkeys key [key ...] [LIMIT limit]",
        ),
];

const BAD_WEIGHT: &str = "ERR weight value is not a float";
const BAD_LIMIT: &str = "ERR LIMIT can't be negative";

#[derive(Clone, Copy, PartialEq)]
enum Op {
    Union,
    Inter,
    Diff,
}

/// What becomes of the result.
#[derive(Clone, Copy, PartialEq)]
enum Target {
    /// ZUNION, ZINTER, ZDIFF: list the members (WITHSCORES allowed).
    Reply,
    /// The STORE forms: `argv[1]` is the destination.
    Store,
    /// ZINTERCARD: only the count (LIMIT allowed).
    Card,
}

#[derive(Clone, Copy, PartialEq, Debug)]
enum Aggregate {
    Sum,
    Min,
    Max,
    /// Redis 8.8: sum of the weights of the sets holding the member.
    Count,
}

impl Aggregate {
    fn parse(a: &Args, i: usize) -> Option<Aggregate> {
        match () {
            _ if a.is(i, "sum") => Some(Aggregate::Sum),
            _ if a.is(i, "min") => Some(Aggregate::Min),
            _ if a.is(i, "max") => Some(Aggregate::Max),
            _ if a.is(i, "count") => Some(Aggregate::Count),
            _ => None,
        }
    }

    /// What one input holding a member contributes: its weighted score, or under
    /// COUNT only its weight.
    fn contribution(self, score: f64, weight: f64) -> f64 {
        match self {
            Aggregate::Count => weight,
            _ => weight * score,
        }
    }

    /// Folds one more contribution into `acc` (`zunionInterAggregate`).
    fn fold(self, acc: &mut f64, value: f64) {
        match self {
            Aggregate::Sum | Aggregate::Count => {
                *acc += value;
                if acc.is_nan() {
                    *acc = 0.0;
                }
            }
            Aggregate::Min => {
                if value < *acc {
                    *acc = value;
                }
            }
            Aggregate::Max => {
                if value > *acc {
                    *acc = value;
                }
            }
        }
    }
}

/// The first contribution of a member: NaN (`inf * 0`) becomes 0.
fn first_value(agg: Aggregate, score: f64, weight: f64) -> f64 {
    let v = agg.contribution(score, weight);
    if v.is_nan() {
        0.0
    } else {
        v
    }
}

struct Options {
    weights: Vec<f64>,
    aggregate: Aggregate,
    with_scores: bool,
    /// ZINTERCARD's LIMIT; 0 means no limit.
    limit: usize,
}

/// What one input key holds.
#[derive(Clone, Copy)]
enum Input<'a> {
    Missing,
    Zset(&'a Zset),
    /// A plain set: every member scores 1.
    Set(&'a Set),
}

/// One input with its weight.
struct Source<'a> {
    input: Input<'a>,
    weight: f64,
}

impl<'a> Source<'a> {
    fn len(&self) -> usize {
        match self.input {
            Input::Missing => 0,
            Input::Zset(z) => z.len(),
            Input::Set(set) => set.len(),
        }
    }

    fn score(&self, member: &[u8]) -> Option<f64> {
        match self.input {
            Input::Missing => None,
            Input::Zset(z) => z.score(member),
            Input::Set(set) => set.has(member).then_some(1.0),
        }
    }

    /// Calls `f` with each member and score in order until it returns false,
    /// without collecting them first (a zset's members are borrowed where
    /// they are stored).
    fn each(&self, mut f: impl FnMut(Cow<'a, [u8]>, f64) -> bool) {
        match self.input {
            Input::Missing => {}
            Input::Zset(z) => {
                for (m, score) in z.iter() {
                    if !f(Cow::Borrowed(m), score) {
                        return;
                    }
                }
            }
            Input::Set(set) => {
                for m in set.members() {
                    if !f(Cow::Owned(m), 1.0) {
                        return;
                    }
                }
            }
        }
    }

    fn items(&self) -> Vec<(Cow<'a, [u8]>, f64)> {
        match self.input {
            Input::Missing => Vec::new(),
            Input::Zset(z) => z.iter().map(|(m, s)| (Cow::Borrowed(m), s)).collect(),
            Input::Set(set) => set
                .members()
                .into_iter()
                .map(|m| (Cow::Owned(m), 1.0))
                .collect(),
        }
    }
}

pub fn zunion(s: &mut Server, a: &Args) -> CmdResult {
    set_op(s, a, "zunion", Op::Union, Target::Reply)
}

pub fn zinter(s: &mut Server, a: &Args) -> CmdResult {
    set_op(s, a, "zinter", Op::Inter, Target::Reply)
}

pub fn zdiff(s: &mut Server, a: &Args) -> CmdResult {
    set_op(s, a, "zdiff", Op::Diff, Target::Reply)
}

pub fn zunionstore(s: &mut Server, a: &Args) -> CmdResult {
    set_op(s, a, "zunionstore", Op::Union, Target::Store)
}

pub fn zinterstore(s: &mut Server, a: &Args) -> CmdResult {
    set_op(s, a, "zinterstore", Op::Inter, Target::Store)
}

pub fn zdiffstore(s: &mut Server, a: &Args) -> CmdResult {
    set_op(s, a, "zdiffstore", Op::Diff, Target::Store)
}

pub fn zintercard(s: &mut Server, a: &Args) -> CmdResult {
    set_op(s, a, "zintercard", Op::Inter, Target::Card)
}

/// The shared routine: arguments in Redis's order, then the operation, then the
/// reply or the store.
fn set_op(s: &mut Server, a: &Args, name: &str, op: Op, target: Target) -> CmdResult {
    let first_key = if target == Target::Store { 3 } else { 2 };
    let numkeys = a.int(first_key - 1)?;
    if numkeys < 1 {
        return Err(Reply::error(format!(
            "ERR at least 1 input key is needed for '{name}' command"
        )));
    }
    if numkeys > (a.len() - first_key) as i64 {
        return Err(Reply::error(errors::SYNTAX));
    }
    let keys = first_key..first_key + numkeys as usize;
    for i in keys.clone() {
        check_input(s, a.bytes(i))?;
    }
    let opts = parse_options(a, keys.end, keys.len(), op, target)?;
    let limits = super::zset::limits(s);

    let mut sources: Vec<Source> = keys
        .zip(&opts.weights)
        .map(|(i, &weight)| Source {
            input: match s.keyspace.peek(a.bytes(i)) {
                Some(Value::Zset(z)) => Input::Zset(z),
                Some(Value::Set(set)) => Input::Set(set),
                _ => Input::Missing,
            },
            weight,
        })
        .collect();
    if op != Op::Diff {
        // Smallest first; a stable sort keeps equal sizes in argument order.
        sources.sort_by_key(|src| src.len());
    }
    if target == Target::Card {
        let limit = (opts.limit > 0).then_some(opts.limit);
        return Ok(Reply::Integer(intersect_count(&sources, limit) as i64));
    }
    let mut result = match op {
        Op::Union => union(&sources, opts.aggregate),
        Op::Inter => intersect(&sources, opts.aggregate),
        Op::Diff => difference(&sources),
    };
    result.sort_by(skiplist_order);
    let owned = result
        .into_iter()
        .map(|(m, v)| (m.into_owned(), v))
        .collect();
    Ok(match target {
        Target::Store => {
            let event = match op {
                Op::Union => "zunionstore",
                Op::Inter => "zinterstore",
                Op::Diff => "zdiffstore",
            };
            store(s, a.bytes(1), owned, &limits, event)
        }
        _ => range_reply(owned, opts.with_scores),
    })
}

/// The skiplist's order: by score compared with `<` (so `-0` and `0` tie; result
/// scores are never NaN), then by member bytes.
fn skiplist_order(x: &(Cow<[u8]>, f64), y: &(Cow<[u8]>, f64)) -> Ordering {
    let by_score = x.1.partial_cmp(&y.1).expect("result scores are never NaN");
    by_score.then_with(|| x.0.cmp(&y.0))
}

/// An input key must be missing or hold a sorted set or a set. Looking it up also
/// applies lazy expiry, as `lookupKeyRead` does.
fn check_input(s: &mut Server, key: &[u8]) -> Result<(), Reply> {
    match s.keyspace.lookup_read(key) {
        None | Some(Value::Zset(_)) | Some(Value::Set(_)) => Ok(()),
        Some(_) => Err(Reply::error(errors::WRONGTYPE)),
    }
}

/// The options after the keys, starting at argument `at`, for `n` input keys.
fn parse_options(
    a: &Args,
    mut at: usize,
    n: usize,
    op: Op,
    target: Target,
) -> Result<Options, Reply> {
    let mut o = Options {
        weights: vec![1.0; n],
        aggregate: Aggregate::Sum,
        with_scores: false,
        limit: 0,
    };
    let scored = op != Op::Diff && target != Target::Card;
    while at < a.len() {
        let remaining = a.len() - at;
        if scored && remaining > n && a.is(at, "weights") {
            for (i, w) in o.weights.iter_mut().enumerate() {
                *w = num::parse_double_arg(a.bytes(at + 1 + i))
                    .ok_or_else(|| Reply::error(BAD_WEIGHT))?;
            }
            at += 1 + n;
        } else if scored && remaining >= 2 && a.is(at, "aggregate") {
            o.aggregate =
                Aggregate::parse(a, at + 1).ok_or_else(|| Reply::error(errors::SYNTAX))?;
            at += 2;
        } else if target == Target::Reply && a.is(at, "withscores") {
            o.with_scores = true;
            at += 1;
        } else if target == Target::Card && remaining >= 2 && a.is(at, "limit") {
            o.limit = match a.int(at + 1) {
                Ok(limit) if limit >= 0 => limit as usize,
                _ => return Err(Reply::error(BAD_LIMIT)),
            };
            at += 2;
        } else {
            return Err(Reply::error(errors::SYNTAX));
        }
    }
    Ok(o)
}

/// Every member of every input; a member's first contribution starts its score and
/// later ones are folded in, input by input.
fn union<'a>(sources: &[Source<'a>], agg: Aggregate) -> Vec<(Cow<'a, [u8]>, f64)> {
    let mut scores: HashMap<Cow<'a, [u8]>, f64> = HashMap::new();
    for src in sources {
        for (member, score) in src.items() {
            let value = first_value(agg, score, src.weight);
            scores
                .entry(member)
                .and_modify(|acc| agg.fold(acc, value))
                .or_insert(value);
        }
    }
    scores.into_iter().collect()
}

/// Members of the first (smallest) input found in all the others, stopping after
/// `limit` of them if given.
fn intersect<'a>(sources: &[Source<'a>], agg: Aggregate) -> Vec<(Cow<'a, [u8]>, f64)> {
    let (first, rest) = sources.split_first().expect("at least one input");
    let mut out = Vec::new();
    first.each(|member, score| {
        let mut acc = first_value(agg, score, first.weight);
        let everywhere = rest.iter().all(|src| match src.score(&member) {
            Some(v) => {
                agg.fold(&mut acc, agg.contribution(v, src.weight));
                true
            }
            None => false,
        });
        if everywhere {
            out.push((member, acc));
        }
        true
    });
    out
}

/// ZINTERCARD: how many members of the first (smallest) input are in every
/// other, stopping at `limit`; no scores are combined and nothing is kept.
fn intersect_count(sources: &[Source<'_>], limit: Option<usize>) -> usize {
    let (first, rest) = sources.split_first().expect("at least one input");
    let mut count = 0;
    first.each(|member, _| {
        if rest.iter().all(|src| src.score(&member).is_some()) {
            count += 1;
        }
        limit != Some(count)
    });
    count
}

/// Members of the first input absent from all the others, with their own scores.
fn difference<'a>(sources: &[Source<'a>]) -> Vec<(Cow<'a, [u8]>, f64)> {
    let (first, rest) = sources.split_first().expect("at least one input");
    first
        .items()
        .into_iter()
        .filter(|(member, _)| rest.iter().all(|src| src.score(member).is_none()))
        .collect()
}

/// Replaces `dst` with the result, or deletes it when the result is empty.
fn store(
    s: &mut Server,
    dst: &[u8],
    items: Vec<(Vec<u8>, f64)>,
    limits: &crate::zset::Limits,
    event: &'static str,
) -> Reply {
    if items.is_empty() {
        if s.keyspace.remove_stored(dst) {
            s.notify_here(notify::GENERIC, "del", dst);
        }
        return Reply::Integer(0);
    }
    let len = items.len() as i64;
    let replaced = s.overwrite_probe(dst);
    s.keyspace
        .insert(dst, Value::Zset(Box::new(Zset::from_result(items, limits))));
    s.notify_overwritten(dst, replaced);
    s.notify_here(notify::ZSET, event, dst);
    Reply::Integer(len)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::zset::Encoding;

    fn bulks(items: &[&str]) -> Reply {
        Reply::Array(items.iter().map(Reply::bulk).collect())
    }

    /// `member, score, member, score, ...` as a WITHSCORES reply.
    fn scored(items: &[&str]) -> Reply {
        Reply::Pairs(
            items
                .chunks(2)
                .map(|pair| {
                    let score = crate::num::parse_double_arg(pair[1].as_bytes()).expect("a score");
                    (Reply::bulk(pair[0]), Reply::Double(score))
                })
                .collect(),
        )
    }

    fn err(text: &str) -> Reply {
        Reply::error(text)
    }

    /// The article's sets (lab 05g): which servers finished each check, scored by
    /// the attempts it took.
    fn article() -> Server {
        let mut s = Server::new();
        s.cmd(&["ZADD", "done:c1", "1", "sv1", "1", "sv2", "1", "sv3"]);
        s.cmd(&["ZADD", "done:c2", "2", "sv1", "1", "sv3"]);
        s.cmd(&["ZADD", "done:c3", "4", "sv1", "9", "sv4"]);
        s
    }

    #[test]
    fn article_example_count_and_sum() {
        let mut s = article();
        assert_eq!(
            s.cmd(&[
                "ZUNION",
                "3",
                "done:c1",
                "done:c2",
                "done:c3",
                "AGGREGATE",
                "COUNT",
                "WITHSCORES"
            ]),
            scored(&["sv2", "1", "sv4", "1", "sv3", "2", "sv1", "3"])
        );
        assert_eq!(
            s.cmd(&[
                "ZUNION",
                "3",
                "done:c1",
                "done:c2",
                "done:c3",
                "AGGREGATE",
                "SUM",
                "WITHSCORES"
            ]),
            scored(&["sv2", "1", "sv3", "2", "sv1", "7", "sv4", "9"])
        );
        assert_eq!(
            s.cmd(&[
                "ZINTER",
                "2",
                "done:c1",
                "done:c2",
                "AGGREGATE",
                "COUNT",
                "WITHSCORES"
            ]),
            scored(&["sv1", "2", "sv3", "2"])
        );
        assert_eq!(
            s.cmd(&["ZINTER", "2", "done:c1", "done:c2", "AGGREGATE", "count"]),
            bulks(&["sv1", "sv3"])
        );
    }

    #[test]
    fn count_sums_the_weights_of_the_sets_holding_a_member() {
        let mut s = article();
        assert_eq!(
            s.cmd(&[
                "ZUNION",
                "3",
                "done:c1",
                "done:c2",
                "done:c3",
                "WEIGHTS",
                "1",
                "10",
                "100",
                "AGGREGATE",
                "COUNT",
                "WITHSCORES"
            ]),
            scored(&["sv2", "1", "sv3", "11", "sv4", "100", "sv1", "111"])
        );
        // inf + -inf follows SUM's rule: 0, not NaN.
        assert_eq!(
            s.cmd(&[
                "ZINTERSTORE",
                "out",
                "2",
                "done:c1",
                "done:c2",
                "WEIGHTS",
                "inf",
                "-inf",
                "AGGREGATE",
                "COUNT"
            ]),
            Reply::Integer(2)
        );
        assert_eq!(
            s.cmd(&["ZRANGE", "out", "0", "-1", "WITHSCORES"])
                .expanded(),
            scored(&["sv1", "0", "sv3", "0"])
        );
        // Not an option of ZDIFF or ZINTERCARD.
        assert_eq!(
            s.cmd(&["ZDIFF", "1", "done:c1", "AGGREGATE", "COUNT"]),
            err("ERR syntax error")
        );
    }

    #[test]
    fn numkeys_errors_come_first_and_in_order() {
        let mut s = article();
        assert_eq!(
            s.cmd(&["ZUNIONSTORE", "out", "0", "a"]),
            err("ERR at least 1 input key is needed for 'zunionstore' command")
        );
        assert_eq!(
            s.cmd(&["ZINTERCARD", "-1", "a"]),
            err("ERR at least 1 input key is needed for 'zintercard' command")
        );
        assert_eq!(
            s.cmd(&["ZUNION", "x", "a"]),
            err("ERR value is not an integer or out of range")
        );
        assert_eq!(s.cmd(&["ZDIFF", "3", "a", "b"]), err("ERR syntax error"));
        assert_eq!(
            s.cmd(&["ZUNION", "2", "done:c1", "done:c2", "WEIGHTS", "1"]),
            err("ERR syntax error")
        );
        assert_eq!(
            s.cmd(&["ZUNION", "2", "done:c1", "done:c2", "WEIGHTS", "1", "x"]),
            err("ERR weight value is not a float")
        );
        assert_eq!(
            s.cmd(&["ZUNION", "1", "done:c1", "AGGREGATE", "AVG"]),
            err("ERR syntax error")
        );
        assert_eq!(
            s.cmd(&["ZUNIONSTORE", "out", "1", "done:c1", "WITHSCORES"]),
            err("ERR syntax error")
        );
        assert_eq!(
            s.cmd(&["ZINTERCARD", "1", "done:c1", "LIMIT", "-1"]),
            err("ERR LIMIT can't be negative")
        );
        assert_eq!(
            s.cmd(&["ZINTERCARD", "1", "done:c1", "LIMIT", "x"]),
            err("ERR LIMIT can't be negative")
        );
        assert_eq!(
            s.cmd(&["ZINTERCARD", "2", "done:c1", "done:c2", "LIMIT", "1"]),
            Reply::Integer(1)
        );
        assert_eq!(
            s.cmd(&["ZINTERCARD", "2", "done:c1", "done:c2", "LIMIT", "0"]),
            Reply::Integer(2)
        );
    }

    #[test]
    fn weights_and_infinities_follow_redis_nan_rules() {
        let mut s = Server::new();
        s.cmd(&["ZADD", "p", "inf", "x", "1", "y"]);
        s.cmd(&["ZADD", "n", "-inf", "x", "2", "y", "3", "z"]);
        // SUM: +inf + -inf = 0.
        assert_eq!(
            s.cmd(&["ZUNION", "2", "p", "n", "WITHSCORES"]),
            scored(&["x", "0", "y", "3", "z", "3"])
        );
        // Union: inf * 0 is NaN, which becomes 0 before aggregation.
        assert_eq!(
            s.cmd(&[
                "ZUNION",
                "2",
                "p",
                "n",
                "WEIGHTS",
                "0",
                "1",
                "AGGREGATE",
                "MIN",
                "WITHSCORES"
            ]),
            scored(&["x", "-inf", "y", "0", "z", "3"])
        );
        // Intersection: only the smallest input's NaN is cleared; a later NaN makes
        // SUM reset to 0 and is ignored by MAX.
        assert_eq!(
            s.cmd(&["ZINTER", "2", "p", "n", "WEIGHTS", "1", "0", "WITHSCORES"]),
            scored(&["x", "0", "y", "1"])
        );
        assert_eq!(
            s.cmd(&[
                "ZINTER",
                "2",
                "p",
                "n",
                "WEIGHTS",
                "1",
                "0",
                "AGGREGATE",
                "MAX",
                "WITHSCORES"
            ]),
            scored(&["y", "1", "x", "inf"])
        );
        // A reply keeps -0; a stored listpack turns it into 0.
        s.cmd(&["ZADD", "zero", "0", "m"]);
        // (Compared as RESP bytes: -0.0 == 0.0 as doubles.)
        assert_eq!(
            s.cmd(&["ZUNION", "1", "zero", "WEIGHTS", "-1", "WITHSCORES"])
                .to_resp2(),
            b"*2\r\n$1\r\nm\r\n$2\r\n-0\r\n"
        );
        s.cmd(&["ZUNIONSTORE", "dst", "1", "zero", "WEIGHTS", "-1"]);
        assert_eq!(s.cmd(&["ZSCORE", "dst", "m"]).to_resp2(), b"$1\r\n0\r\n");
    }

    #[test]
    fn diff_keeps_first_scores_and_store_deletes_empty_results() {
        let mut s = article();
        assert_eq!(
            s.cmd(&["ZDIFF", "3", "done:c1", "done:c2", "missing", "WITHSCORES"]),
            scored(&["sv2", "1"])
        );
        assert_eq!(s.cmd(&["ZDIFF", "2", "done:c1", "done:c1"]), bulks(&[]));
        s.cmd(&["ZADD", "out", "5", "old"]);
        assert_eq!(
            s.cmd(&["ZDIFFSTORE", "out", "2", "done:c2", "done:c1"]),
            Reply::Integer(0)
        );
        assert_eq!(s.cmd(&["EXISTS", "out"]), Reply::Integer(0));
        assert_eq!(
            s.cmd(&["ZINTERSTORE", "out", "2", "done:c1", "nokey"]),
            Reply::Integer(0)
        );
        assert_eq!(
            s.cmd(&["ZUNIONSTORE", "done:c1", "2", "done:c1", "done:c3"]),
            Reply::Integer(4)
        );
        assert_eq!(
            s.cmd(&["ZRANGE", "done:c1", "0", "-1", "WITHSCORES"])
                .expanded(),
            scored(&["sv2", "1", "sv3", "1", "sv1", "5", "sv4", "9"])
        );
    }

    #[test]
    fn plain_sets_are_inputs_with_score_one() {
        let mut s = Server::new();
        s.cmd(&["SADD", "ints", "1", "2", "3"]);
        s.cmd(&["SADD", "words", "a", "2"]);
        s.cmd(&["ZADD", "z", "10", "2", "20", "a"]);
        assert_eq!(
            s.cmd(&["ZUNION", "3", "ints", "words", "z", "WITHSCORES"]),
            scored(&["1", "1", "3", "1", "2", "12", "a", "21"])
        );
        assert_eq!(
            s.cmd(&[
                "ZINTER",
                "2",
                "words",
                "z",
                "WEIGHTS",
                "5",
                "1",
                "WITHSCORES"
            ]),
            scored(&["2", "15", "a", "25"])
        );
        assert_eq!(
            s.cmd(&["ZDIFF", "2", "ints", "words", "WITHSCORES"]),
            scored(&["1", "1", "3", "1"])
        );
        assert_eq!(
            s.cmd(&["ZINTERCARD", "2", "ints", "words"]),
            Reply::Integer(1)
        );
        assert_eq!(
            s.cmd(&["ZUNIONSTORE", "out", "1", "ints"]),
            Reply::Integer(3)
        );
        assert_eq!(s.cmd(&["TYPE", "out"]), Reply::Status("zset".into()));
        s.cmd(&["SET", "str", "x"]);
        assert_eq!(
            s.cmd(&["ZUNION", "2", "ints", "str"]),
            err("WRONGTYPE Operation against a key holding the wrong kind of value")
        );
    }

    #[test]
    fn stored_encoding_follows_the_listpack_limits() {
        let mut s = Server::new();
        let long = "m".repeat(65);
        s.cmd(&["ZADD", "a", "1", "short", "2", &long]);
        s.cmd(&["ZUNIONSTORE", "one", "1", "a"]);
        s.cmd(&["ZDIFFSTORE", "two", "1", "a"]);
        s.cmd(&["ZREM", "a", &long]);
        s.cmd(&["ZUNIONSTORE", "three", "1", "a"]);
        let mut big = vec!["ZADD", "b"];
        let names: Vec<String> = (0..129).map(|i| format!("m{i}")).collect();
        for n in &names {
            big.extend(["1", n.as_str()]);
        }
        s.cmd(&big);
        s.cmd(&["ZINTERSTORE", "four", "1", "b"]);
        s.cmd(&["ZREM", "b", "m0"]);
        s.cmd(&["ZINTERSTORE", "five", "1", "b"]);
        let expected = [
            ("one", Encoding::Skiplist),
            ("two", Encoding::Skiplist),
            ("three", Encoding::Listpack),
            ("four", Encoding::Skiplist),
            ("five", Encoding::Listpack),
        ];
        for (key, encoding) in expected {
            match s.keyspace.get(key.as_bytes()) {
                Some(Value::Zset(z)) => assert_eq!(z.encoding(), encoding, "{key}"),
                other => panic!("{key}: {other:?}"),
            }
        }
    }
}
