//! The sorted-set skiplist of Redis (`zskiplist` in `src/t_zset.c`).
//!
//! A sorted set with more than a handful of members keeps two views of the
//! same data: a dict (member -> score) for O(1) `ZSCORE`, and this skiplist,
//! which keeps the members ordered for everything positional (`ZRANK`,
//! `ZRANGE`, `ZRANGEBYSCORE`, `ZRANGEBYLEX`, `ZCOUNT`, `ZREMRANGEBY*`).
//!
//! # Order
//!
//! Elements are ordered by `(score, member)`: score ascending (an `f64`, never
//! NaN, `±inf` allowed), and members with the same score by `memcmp` byte
//! order, a shorter member before any longer member it is a prefix of. This is
//! `zslCompareWithNode`: the scores are compared with `<` and `>`, so `-0.0`
//! and `0.0` count as the same score and the member decides.
//!
//! # Shape
//!
//! Every node has a random number of levels between 1 and
//! [`ZSKIPLIST_MAXLEVEL`] (32): level 2 with probability [`ZSKIPLIST_P`]
//! (1/4), level 3 with probability 1/16, and so on. Level `i` of a node holds
//! a forward link to the next node that also has a level `i`, so level 0 is a
//! plain sorted linked list and each level above skips about four times
//! further. A search starts at the highest level of a header node (a sentinel
//! with all 32 levels and no member) and drops a level whenever the next step
//! would overshoot, which takes O(log N) steps on average. Each node also has
//! a backward link (level 0 only) so the list can be walked tail to head, and
//! the list remembers its tail.
//!
//! # Spans, and why they give rank
//!
//! Each forward link also records its *span*: how many level-0 steps it
//! covers. A link to the very next node has span 1; a link that skips three
//! nodes has span 4. A link to nothing (the end of that level) spans the
//! number of nodes left after its node. So the spans along any one level,
//! starting at the header, add up to the length of the list.
//!
//! While searching for an element we add up the spans of the links we
//! follow; when we arrive, the sum is the number of nodes we have passed,
//! which is the element's rank. The same walk in reverse -- follow a link
//! only if the running sum stays at most `r` -- finds the element of rank
//! `r`. Both take O(log N), and insert/delete keep the spans right at the
//! same cost because they already visit the one node per level whose link
//! crosses the changed position.
//!
//! # How this model differs from the C code
//!
//! * Nodes live in an arena (`super::arena`, the one the B+tree layout's
//!   records live in too) and link to each other by `u32` id (the 4-byte
//!   word offset in the arena's one shared buffer); freed records go on a
//!   free list per size and are reused. Id 0 is the header. A record is
//!   read in place from the buffer's bytes (the descent's loop and the rank
//!   walk through the arena's `Reader`, one bounds check per read of two
//!   fields; everything else through checked slices).
//! * One record per node, like Redis's one allocation per node with its sds
//!   embedded: score (8 bytes), backward id (4), height and member length (4:
//!   5 bits and 27 bits, a longer member keeps its length in 4 more bytes),
//!   the link to the next node in the same bucket of the sorted set's dict
//!   (4: the dict's entry is the record itself, where Redis's is a 16-byte
//!   `dictEntry` pointing at the node unless the node is alone in its
//!   bucket), the levels (8 bytes each: `u32` forward id, `u32` span), then
//!   the member's bytes, rounded up to 4 bytes. A descent step reads the score and
//!   one level of the same record; a score tie compares the member from that
//!   record too. Records are packed end to end in the shared buffer (it
//!   doubles up to 2 MiB, so a small set stays small, then grows 2 MiB at a
//!   time), the nodes of one level and the taller ones in regions of their
//!   own (the tall nodes every descent passes share cache lines with each
//!   other, as Redis's do by sitting in a bigger jemalloc size class); a
//!   record over 16 KiB gets a buffer of its own, freed with it. The
//!   ids cap a list at 8 GiB of records and the spans at 2^32 - 1 members. Redis's
//!   node sizes in its allocator are modelled separately (`crate::memory`).
//! * Nodes are addressed by a [`NodeKey`] (the id, never 0) outside this
//!   module: the sorted set's dict keeps these handles instead of a copy of
//!   each member.
//! * Redis 8.6 stores node metadata in the level-0 span and derives that span
//!   (1, or 0 for the tail). Here every level, level 0 included, stores its
//!   span, so the "spans sum to the length" rule holds on every level.
//! * A score update (`zslUpdateScore`) starts from the node the dict found,
//!   as in Redis 8.6: it stays in place when its neighbours allow, else the
//!   search for the links to unlink and the search for the new place run
//!   side by side, a step of each per round, so that their cache misses
//!   overlap (Redis runs one after the other: [`SkipList::update_node_score`]).
//!   A rank from a node walks the spans forward (`zslGetRankByNode`,
//!   [`SkipList::rank_of`]); the sorted set's ZRANK uses the descent by
//!   (score, member) instead, which measured cheaper in these records.
//! * The public API counts ranks from 0; Redis's `zslGetRank` and
//!   `zslGetElementByRank` count from 1 (the header's span to the first node).
//! * The random level comes from a seedable `ChaCha8Rng` instead of libc
//!   `random()`, so a run can be reproduced exactly.
//! * The range deletions return the removed members, where Redis deletes them
//!   from the dict itself.

use super::arena::{Pages, Reader};
use crate::dict::{siphash12, Chains, Slot, NIL};
use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::cmp::Ordering;
use std::num::NonZeroU32;
pub mod dump;

/// The members of removed `(handle, member)` pairs.
fn members(removed: Vec<(NodeKey, Vec<u8>)>) -> Vec<Vec<u8>> {
    removed.into_iter().map(|(_, m)| m).collect()
}

/// Most levels a node can have (`ZSKIPLIST_MAXLEVEL`; enough for 2^64 elements).
pub const ZSKIPLIST_MAXLEVEL: usize = 32;

/// Chance that a node gets one more level (`ZSKIPLIST_P`).
pub const ZSKIPLIST_P: f64 = 0.25;

/// Seed used by [`SkipList::new`], so default runs are reproducible.
pub const DEFAULT_SEED: u64 = 0x5EED_2E15;

/// Largest value of libc `random()` on Linux (`RAND_MAX`).
const RAND_MAX: u32 = 0x7fff_ffff;

/// `zslRandomLevel`'s `threshold = ZSKIPLIST_P * RAND_MAX`, truncated to an int.
const LEVEL_THRESHOLD: u32 = (ZSKIPLIST_P * RAND_MAX as f64) as u32;

/// `zslRandomLevel` from `rng`: keep adding a level while a 31-bit draw
/// (like `random()`) is below P * RAND_MAX, up to the maximum.
pub(crate) fn draw_level(rng: &mut ChaCha8Rng) -> usize {
    let mut level = 1;
    while level < ZSKIPLIST_MAXLEVEL && (rng.next_u32() >> 1) < LEVEL_THRESHOLD {
        level += 1;
    }
    level
}

/// A node's place in the arena: its offset in 4-byte words in the arena's
/// shared buffer (or, with the top bit set, the number of a big record's own
/// buffer).
type NodeId = u32;

/// A node's handle as the sorted set's dict keeps it (never the header, so
/// never 0).
pub type NodeKey = NonZeroU32;

/// The header sentinel always sits at the start of the shared buffer.
const HEADER: NodeId = 0;

/// Bytes per arena word: records start on 4-byte boundaries.
const WORD: usize = 4;
/// The zsets' record arena ([`super::arena`]) in 4-byte words: one shared
/// buffer, so a descent's every step is two dependent reads as in Redis; a
/// record over 16 KiB gets a buffer of its own, exactly its size, freed with
/// it.
type Arena = Pages<WORD>;

/// Byte offsets inside a record.
const SCORE_AT: usize = 0;
const BACKWARD_AT: usize = 8;
/// `meta`: bits 0..5 are the height minus one, bits 5..32 the member's length,
/// or [`LEN_ESCAPE`] when the length (then a `u32` after the levels) is longer.
const META_AT: usize = 12;
/// The next node in the same bucket of the sorted set's dict
/// ([`crate::dict::NIL`] at the end of the chain): the dict's entries are the
/// records themselves (see [`Chains`]).
const CHAIN_AT: usize = 16;
const LEVELS_AT: usize = 20;
const LEVEL_BYTES: usize = 8;
/// A level is the forward id, then the span.
const SPAN_IN_LEVEL: usize = 4;
const LEN_ESCAPE: u32 = (1 << 27) - 1;

/// Bytes of a record with `height` levels and a `len`-byte member.
fn record_bytes(height: usize, len: usize) -> usize {
    let ext = if len >= LEN_ESCAPE as usize { 4 } else { 0 };
    LEVELS_AT + height * LEVEL_BYTES + ext + len
}

/// The same in whole words, as the arena lays it out.
fn record_words(height: usize, len: usize) -> usize {
    record_bytes(height, len).div_ceil(WORD)
}

#[inline(always)]
fn read_u32(r: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(r[at..at + 4].try_into().expect("4 bytes"))
}

fn write_u32(r: &mut [u8], at: usize, v: u32) {
    r[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

/// One level of a node: where it points and how many nodes that link covers.
///
/// 8 bytes in the record: the forward id (0 means "end of level": the header,
/// id 0, is never a forward target) and the span, both `u32`. Both cap a list
/// at `u32::MAX` (2^32 - 1) members, where Redis's `unsigned long` spans would
/// allow more.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Level {
    /// Next node at this level; `None` is the end of the level (NULL in C).
    forward: Option<NonZeroU32>,
    /// Level-0 steps from this node to `forward`, or to the end of the list.
    span: u32,
}

const EMPTY_LEVEL: Level = Level {
    forward: None,
    span: 0,
};

impl Level {
    fn new(forward: Option<NodeId>, span: usize) -> Level {
        Level {
            forward: forward.and_then(NonZeroU32::new),
            span: u32::try_from(span).expect("skiplist spans fit in u32"),
        }
    }

    fn forward(self) -> Option<NodeId> {
        self.forward.map(NonZeroU32::get)
    }

    /// A level as the record stores it: forward id, then (at
    /// [`SPAN_IN_LEVEL`], 4) span.
    #[inline(always)]
    fn from_bytes(b: [u8; LEVEL_BYTES]) -> Level {
        // Destructured, not sliced: no bounds check left in the descent.
        let [f0, f1, f2, f3, s0, s1, s2, s3] = b;
        Level {
            forward: NonZeroU32::new(u32::from_le_bytes([f0, f1, f2, f3])),
            span: u32::from_le_bytes([s0, s1, s2, s3]),
        }
    }

    fn span(self) -> usize {
        self.span as usize
    }
}

/// A node's record, read in place (see the module documentation for the
/// layout): score, backward link, height and length, the levels, the member.
#[derive(Clone, Copy)]
struct Node<'a>(&'a [u8]);

impl<'a> Node<'a> {
    #[inline(always)]
    fn score(self) -> f64 {
        f64::from_le_bytes(self.0[SCORE_AT..SCORE_AT + 8].try_into().expect("8 bytes"))
    }

    #[inline(always)]
    fn height(self) -> usize {
        (read_u32(self.0, META_AT) & 31) as usize + 1
    }

    /// Level `i`, which must be below the node's height.
    #[inline(always)]
    fn level(self, i: usize) -> Level {
        debug_assert!(i < self.height());
        let at = LEVELS_AT + i * LEVEL_BYTES;
        Level::from_bytes(self.0[at..at + LEVEL_BYTES].try_into().expect("8 bytes"))
    }

    #[inline(always)]
    fn next(self) -> Option<NodeId> {
        self.level(0).forward()
    }

    /// Previous node at level 0; `None` for the first node (C uses NULL
    /// rather than the header here too).
    #[inline(always)]
    fn backward(self) -> Option<NodeId> {
        NonZeroU32::new(read_u32(self.0, BACKWARD_AT)).map(NonZeroU32::get)
    }

    #[inline(always)]
    fn member(self) -> &'a [u8] {
        let meta = read_u32(self.0, META_AT);
        let height = (meta & 31) as usize + 1;
        let mut at = LEVELS_AT + height * LEVEL_BYTES;
        let mut len = meta >> 5;
        if len == LEN_ESCAPE {
            len = read_u32(self.0, at);
            at += 4;
        }
        &self.0[at..at + len as usize]
    }
}

/// A score interval, as parsed from `ZRANGEBYSCORE min max` (`zrangespec`).
/// `(1.5` in Redis syntax is `min: 1.5, minex: true`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ScoreRange {
    pub min: f64,
    pub max: f64,
    /// Exclude `min` itself.
    pub minex: bool,
    /// Exclude `max` itself.
    pub maxex: bool,
}

impl ScoreRange {
    /// `[min, max]`, both ends included.
    pub fn inclusive(min: f64, max: f64) -> Self {
        ScoreRange {
            min,
            max,
            minex: false,
            maxex: false,
        }
    }

    /// `zslValueGteMin`: is `score` at or past the lower end?
    pub fn gte_min(&self, score: f64) -> bool {
        if self.minex {
            score > self.min
        } else {
            score >= self.min
        }
    }

    /// `zslValueLteMax`: is `score` at or before the upper end?
    pub fn lte_max(&self, score: f64) -> bool {
        if self.maxex {
            score < self.max
        } else {
            score <= self.max
        }
    }

    pub fn contains(&self, score: f64) -> bool {
        self.gte_min(score) && self.lte_max(score)
    }

    /// True when no score can be in the range (the first test of `zslIsInRange`).
    pub fn is_empty(&self) -> bool {
        self.min > self.max || (self.min == self.max && (self.minex || self.maxex))
    }
}

/// One end of a lex range: `-`, `+`, `[member` or `(member`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LexBound {
    /// `-`: before every string.
    NegInf,
    /// `+`: after every string.
    PosInf,
    /// `[member`: this string included.
    Inclusive(Vec<u8>),
    /// `(member`: this string excluded.
    Exclusive(Vec<u8>),
}

impl LexBound {
    /// Key for comparing bounds with each other: `-` < any string < `+`.
    fn key(&self) -> (u8, &[u8]) {
        match self {
            LexBound::NegInf => (0, &[]),
            LexBound::Inclusive(s) | LexBound::Exclusive(s) => (1, s),
            LexBound::PosInf => (2, &[]),
        }
    }

    /// `-` and `+` count as exclusive, as in `zslParseLexRangeItem`.
    fn is_exclusive(&self) -> bool {
        !matches!(self, LexBound::Inclusive(_))
    }

    /// `sdscmplex(value, bound)`.
    fn cmp_value(value: &[u8], bound: &LexBound) -> Ordering {
        match bound {
            LexBound::NegInf => Ordering::Greater,
            LexBound::PosInf => Ordering::Less,
            LexBound::Inclusive(s) | LexBound::Exclusive(s) => value.cmp(s.as_slice()),
        }
    }
}

/// A member interval, as parsed from `ZRANGEBYLEX min max` (`zlexrangespec`).
/// It is only meaningful when all the scores are equal; checking that is the
/// caller's job, as in Redis.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LexRange {
    pub min: LexBound,
    pub max: LexBound,
}

impl LexRange {
    /// `zslLexValueGteMin`.
    pub fn gte_min(&self, member: &[u8]) -> bool {
        let ord = LexBound::cmp_value(member, &self.min);
        if self.min.is_exclusive() {
            ord.is_gt()
        } else {
            ord.is_ge()
        }
    }

    /// `zslLexValueLteMax`.
    pub fn lte_max(&self, member: &[u8]) -> bool {
        let ord = LexBound::cmp_value(member, &self.max);
        if self.max.is_exclusive() {
            ord.is_lt()
        } else {
            ord.is_le()
        }
    }

    pub fn contains(&self, member: &[u8]) -> bool {
        self.gte_min(member) && self.lte_max(member)
    }

    /// True when no string can be in the range (first test of `zslIsInLexRange`).
    pub fn is_empty(&self) -> bool {
        match self.min.key().cmp(&self.max.key()) {
            Ordering::Greater => true,
            Ordering::Equal => self.min.is_exclusive() || self.max.is_exclusive(),
            Ordering::Less => false,
        }
    }
}

/// A node as the search predicates see it: the score, which the descent has
/// already loaded, and the member, read from the same record only if the
/// predicate asks for it (on a score tie, or for lex ranges).
#[derive(Clone, Copy)]
struct Elem<'a> {
    score: f64,
    list: &'a SkipList,
    id: NodeId,
}

impl<'a> Elem<'a> {
    fn member(self) -> &'a [u8] {
        self.list.node(self.id).member()
    }
}

/// Where a top-down search stopped on each level (`update[]` and `rank[]` in C).
struct Path {
    /// Last node visited on each level: the one whose link crosses the target.
    update: [NodeId; ZSKIPLIST_MAXLEVEL],
    /// 1-based rank of `update[i]` (0 for the header).
    rank: [usize; ZSKIPLIST_MAXLEVEL],
}

impl Path {
    /// Every level at the header: where a walk from the top starts.
    fn at_header() -> Path {
        Path {
            update: [HEADER; ZSKIPLIST_MAXLEVEL],
            rank: [0; ZSKIPLIST_MAXLEVEL],
        }
    }
}

/// The Redis zset skiplist. See the module documentation.
#[derive(Clone, Debug)]
pub struct SkipList {
    /// The records, laid end to end; the header comes first.
    arena: Arena,
    tail: Option<NodeId>,
    len: usize,
    /// Levels in use: the highest level of any node, at least 1.
    level: usize,
    rng: ChaCha8Rng,
}

impl Default for SkipList {
    fn default() -> Self {
        Self::new()
    }
}

/// The sorted set's dict runs its bucket chains through the nodes' records
/// (the link at [`CHAIN_AT`]), so a member costs the dict no entry of its
/// own, only its share of the buckets; a rehash hashes the member's bytes
/// again, as Redis's does (nothing is cached). A lookup reads the bucket and
/// then the node itself, as Redis 8.6's zset dict does (its key is the
/// node's embedded sds).
impl Chains for SkipList {
    #[inline(always)]
    fn next(&self, at: Slot) -> Slot {
        read_u32(self.arena.bytes(at), CHAIN_AT)
    }

    #[inline(always)]
    fn set_next(&mut self, at: Slot, next: Slot) -> Slot {
        let r = self.record_mut(at);
        let old = read_u32(r, CHAIN_AT);
        write_u32(r, CHAIN_AT, next);
        old
    }

    fn hash(&self, at: Slot, seed: &[u8; 16]) -> u64 {
        siphash12(self.member(at), seed)
    }
}

impl SkipList {
    /// An empty list whose random levels come from [`DEFAULT_SEED`].
    pub fn new() -> Self {
        Self::with_seed(DEFAULT_SEED)
    }

    /// An empty list with its own seed for the random levels (`zslCreate`).
    pub fn with_seed(seed: u64) -> Self {
        let mut list = SkipList {
            arena: Arena::new(),
            tail: None,
            len: 0,
            level: 1,
            rng: ChaCha8Rng::seed_from_u64(seed),
        };
        let header = list.alloc(0.0, &[], ZSKIPLIST_MAXLEVEL);
        debug_assert_eq!(header, HEADER);
        list
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Levels in use (`zsl->level`): the tallest node's level, at least 1.
    pub fn level(&self) -> usize {
        self.level
    }

    /// Add an element. The caller guarantees `member` is not already present
    /// (Redis checks the dict first), and `score` must not be NaN.
    /// Answers the new node's handle, valid until it is deleted.
    pub fn insert(&mut self, score: f64, member: impl AsRef<[u8]>) -> NodeKey {
        assert!(!score.is_nan(), "zset scores are never NaN");
        let level = self.random_level();
        let id = self.alloc(score, member.as_ref(), level);
        self.link(id);
        NonZeroU32::new(id).expect("a node is never the header")
    }

    /// The member of a live node.
    pub fn member_of(&self, key: NodeKey) -> &[u8] {
        self.node(key.get()).member()
    }

    /// The member of node `at`, a slot of the sorted set's dict (a live
    /// node's id).
    #[inline(always)]
    pub(crate) fn member_at(&self, at: Slot) -> &[u8] {
        self.node(at).member()
    }

    /// The score of a live node.
    pub fn score_of(&self, key: NodeKey) -> f64 {
        self.node(key.get()).score()
    }

    /// Remove the element `(score, member)`; false if it is not there.
    pub fn delete(&mut self, score: f64, member: &[u8]) -> bool {
        let Some((id, path)) = self.find(score, member) else {
            return false;
        };
        self.unlink(id, &path.update);
        self.release(id);
        true
    }

    /// Change the score of `member` from `cur_score` to `new_score`
    /// (`zslUpdateScore`). If the node would stay where it is, only the score
    /// changes; otherwise the same node (same level) is unlinked and linked
    /// again. Returns false, changing nothing, if the element is not there.
    pub fn update_score(&mut self, cur_score: f64, member: &[u8], new_score: f64) -> bool {
        let Some((id, _)) = self.find(cur_score, member) else {
            return false;
        };
        self.update_node_score(NonZeroU32::new(id).expect("not the header"), new_score);
        true
    }

    /// `zslUpdateScore` on a live node the caller already holds (the sorted
    /// set's dict hands it over, as Redis's dict hands over the node): the
    /// node's neighbours decide first, with no search; only a node that has
    /// to move is looked for from the top (for the links to unlink) and
    /// linked again at its new place, keeping its record and its level.
    ///
    /// The two searches run together ([`SkipList::descend_pair`]). On the
    /// bench's 1M-member key, members and scores drawn at random
    /// (`cargo run --release -p redislab-core --example zset_random -- 200000
    /// 1000000 ZADD`, old and new binaries in turn, on a machine whose
    /// neighbours made every figure move by a third between runs): 9,754 /
    /// 12,872 ns per ZADD before, 7,348 / 7,663 after; on a 20,000-member
    /// set, all in cache, 2,157 / 2,075 before and 2,199 / 2,357 after. (The
    /// version before searched for the place from below the levels the two
    /// searches shared, which saved steps on a short move but not the misses
    /// of a far one.)
    pub fn update_node_score(&mut self, key: NodeKey, new_score: f64) {
        assert!(!new_score.is_nan(), "zset scores are never NaN");
        let id = key.get();
        // Like Redis, the fast path compares scores only: an equal neighbour
        // score sends us down the slow path even if the member order would
        // have kept the node in place.
        let node = self.node(id);
        let prev_ok = node
            .backward()
            .is_none_or(|b| self.node(b).score() < new_score);
        let next_ok = node.next().is_none_or(|f| self.node(f).score() > new_score);
        if prev_ok && next_ok {
            self.set_score(id, new_score);
            return;
        }
        let (score, member) = (node.score(), node.member());
        // Redis searches for the node, unlinks it, then searches from the
        // top for the new place; both searches here run side by side.
        let (to_node, to_place) = self.descend_pair(
            id,
            |n| Self::compare(score, member, n).is_gt(),
            |n| Self::compare(new_score, member, n).is_gt(),
        );
        debug_assert_eq!(self.node(to_node.update[0]).next(), Some(id));
        self.unlink(id, &to_node.update);
        self.set_score(id, new_score);
        // The place's path is whole: nothing left to search.
        self.link_from(id, to_place, 0);
    }

    /// 0-based rank of a live node, from the spans alone
    /// (`zslGetRankByNode`): walk forward from the node along the top level
    /// of each node met, adding the spans to the end of the list; the rank
    /// is what is left. No score or member is compared, and the walk starts
    /// at the node the dict just found, so its record is in cache.
    pub fn rank_of(&self, key: NodeKey) -> usize {
        let read = self.arena.reader();
        // The top level's index from the word at BACKWARD_AT (the backward
        // link, then the meta word).
        let top_of = |back_and_meta: [u8; 8]| {
            let [.., m0, m1, m2, m3] = back_and_meta;
            (u32::from_le_bytes([m0, m1, m2, m3]) & 31) as usize
        };
        let id = key.get();
        let mut level = top_of(read.word(id, BACKWARD_AT));
        let mut link = Level::from_bytes(read.word(id, LEVELS_AT + level * LEVEL_BYTES));
        let mut to_end = link.span();
        // A node's top link leads to a node at least as tall, whose link on
        // the same level is read together with its height (one dependent
        // read a step); only a taller node costs a second read, its top.
        while let Some(next) = link.forward() {
            let (back_and_meta, same_level) =
                read.two_words(next, BACKWARD_AT, LEVELS_AT + level * LEVEL_BYTES);
            let top = top_of(back_and_meta);
            link = if top > level {
                level = top;
                Level::from_bytes(read.word(next, LEVELS_AT + top * LEVEL_BYTES))
            } else {
                Level::from_bytes(same_level)
            };
            to_end += link.span();
        }
        // The last link of each level spans the nodes after it, so `to_end`
        // counts the nodes after `key`'s.
        self.len - 1 - to_end
    }

    /// 0-based rank of `(score, member)` (`zslGetRank` minus one).
    pub fn rank(&self, score: f64, member: &[u8]) -> Option<usize> {
        // Walk while the next node is <= the target: we stop *on* it.
        let (x, rank) = self.seek(|_, n| Self::compare(score, member, n).is_ge());
        let found = x != HEADER && Self::compare(score, member, self.elem(x)).is_eq();
        found.then(|| rank - 1)
    }

    /// Element at 0-based `rank` (`zslGetElementByRank(rank + 1)`).
    pub fn get_by_rank(&self, rank: usize) -> Option<(f64, &[u8])> {
        let id = self.id_by_rank(rank)?;
        let node = self.node(id);
        Some((node.score(), node.member()))
    }

    /// All elements, lowest first.
    pub fn iter(&self) -> Iter<'_> {
        self.iter_from_rank(0)
    }

    /// Elements from 0-based `rank` towards the tail. O(log N) to find the
    /// start, then O(1) per element along the level-0 links.
    pub fn iter_from_rank(&self, rank: usize) -> Iter<'_> {
        Iter {
            list: self,
            cur: self.id_by_rank(rank),
            reverse: false,
            remaining: self.len.saturating_sub(rank),
        }
    }

    /// Elements from 0-based `rank` (counted from the head) back towards
    /// rank 0, along the backward links. This is how `ZREVRANGE` walks.
    pub fn rev_iter_from_rank(&self, rank: usize) -> Iter<'_> {
        let cur = self.id_by_rank(rank);
        Iter {
            list: self,
            cur,
            reverse: true,
            remaining: if cur.is_some() { rank + 1 } else { 0 },
        }
    }

    /// 0-based rank of the first element whose score is in `range`
    /// (`zslNthInRange(range, 0)`).
    pub fn first_in_score_range(&self, range: &ScoreRange) -> Option<usize> {
        if !self.may_intersect(|s| range.gte_min(s), |s| range.lte_max(s), range.is_empty()) {
            return None;
        }
        self.first_matching(|n| range.gte_min(n.score), |n| range.lte_max(n.score))
    }

    /// 0-based rank of the last element whose score is in `range`
    /// (`zslNthInRange(range, -1)`). `ZCOUNT` is `last - first + 1`.
    pub fn last_in_score_range(&self, range: &ScoreRange) -> Option<usize> {
        if !self.may_intersect(|s| range.gte_min(s), |s| range.lte_max(s), range.is_empty()) {
            return None;
        }
        self.last_matching(|n| range.lte_max(n.score), |n| range.gte_min(n.score))
    }

    /// Both ends of `range` at once: `(first_in_score_range,
    /// last_in_score_range)` when the range holds an element (ZCOUNT, ZRANGE
    /// BYSCORE). Redis finds them one after the other (two `zslNthInRange`
    /// calls); here the two descents walk side by side (see
    /// [`SkipList::seek_pair`]).
    pub fn score_range_span(&self, range: &ScoreRange) -> Option<(usize, usize)> {
        if !self.may_intersect(|s| range.gte_min(s), |s| range.lte_max(s), range.is_empty()) {
            return None;
        }
        self.span_matching(|n| range.gte_min(n.score), |n| range.lte_max(n.score))
    }

    /// [`SkipList::score_range_span`] for a lex range (ZLEXCOUNT, ZRANGE BYLEX).
    pub fn lex_range_span(&self, range: &LexRange) -> Option<(usize, usize)> {
        if !self.lex_may_intersect(range) {
            return None;
        }
        self.span_matching(|n| range.gte_min(n.member()), |n| range.lte_max(n.member()))
    }

    /// 0-based rank of the first member in `range` (`zslNthInLexRange(range, 0)`).
    /// Only meaningful when all scores are equal.
    pub fn first_in_lex_range(&self, range: &LexRange) -> Option<usize> {
        if !self.lex_may_intersect(range) {
            return None;
        }
        self.first_matching(|n| range.gte_min(n.member()), |n| range.lte_max(n.member()))
    }

    /// 0-based rank of the last member in `range` (`zslNthInLexRange(range, -1)`).
    pub fn last_in_lex_range(&self, range: &LexRange) -> Option<usize> {
        if !self.lex_may_intersect(range) {
            return None;
        }
        self.last_matching(|n| range.lte_max(n.member()), |n| range.gte_min(n.member()))
    }

    /// Remove the elements of 0-based ranks `start..=end`
    /// (`zslDeleteRangeByRank`, which is 1-based) and return their members
    /// in order. An `end` past the tail is clipped.
    pub fn delete_range_by_rank(&mut self, start: usize, end: usize) -> Vec<Vec<u8>> {
        members(self.delete_rank_range_keyed(start, end))
    }

    /// [`SkipList::delete_range_by_rank`], answering each removed node's
    /// handle (no longer live) beside its member, for the dict.
    pub(crate) fn delete_rank_range_keyed(
        &mut self,
        start: usize,
        end: usize,
    ) -> Vec<(NodeKey, Vec<u8>)> {
        if start > end || start >= self.len {
            return Vec::new();
        }
        // Stop before the node of 0-based rank `start` (1-based `start + 1`).
        let path = self.descend(|next_rank, _| next_rank <= start);
        let count = end.min(self.len - 1) - start + 1;
        self.delete_run(&path, |i, _| i < count)
    }

    /// [`SkipList::delete_rank_range_keyed`] showing each removed node to
    /// `removed(list, id)` instead of copying its member out.
    pub(crate) fn delete_rank_range_each(
        &mut self,
        start: usize,
        end: usize,
        removed: impl FnMut(&mut SkipList, Slot),
    ) -> usize {
        if start > end || start >= self.len {
            return 0;
        }
        let path = self.descend(|next_rank, _| next_rank <= start);
        let count = end.min(self.len - 1) - start + 1;
        self.delete_run_each(&path, |i, _| i < count, removed)
    }

    /// [`SkipList::delete_score_range_keyed`] showing each removed node to
    /// `removed(list, id)` instead of copying its member out.
    pub(crate) fn delete_score_range_each(
        &mut self,
        range: &ScoreRange,
        removed: impl FnMut(&mut SkipList, Slot),
    ) -> usize {
        let path = self.descend(|_, n| !range.gte_min(n.score));
        self.delete_run_each(&path, |_, n| range.lte_max(n.score), removed)
    }

    /// Remove the elements whose score is in `range` (`zslDeleteRangeByScore`).
    pub fn delete_range_by_score(&mut self, range: &ScoreRange) -> Vec<Vec<u8>> {
        members(self.delete_score_range_keyed(range))
    }

    /// [`SkipList::delete_range_by_score`] with the removed nodes' handles.
    pub(crate) fn delete_score_range_keyed(
        &mut self,
        range: &ScoreRange,
    ) -> Vec<(NodeKey, Vec<u8>)> {
        let path = self.descend(|_, n| !range.gte_min(n.score));
        self.delete_run(&path, |_, n| range.lte_max(n.score))
    }

    /// Remove the members in `range` (`zslDeleteRangeByLex`).
    pub fn delete_range_by_lex(&mut self, range: &LexRange) -> Vec<Vec<u8>> {
        let path = self.descend(|_, n| !range.gte_min(n.member()));
        members(self.delete_run(&path, |_, n| range.lte_max(n.member())))
    }

    /// Level of every element, head to tail: the real shape, for drawing.
    pub fn node_levels(&self) -> Vec<usize> {
        self.ids().map(|id| self.node(id).height()).collect()
    }

    /// `(level, member length)` of every element, head to tail: what the size
    /// of each Redis node allocation depends on.
    pub fn node_shapes(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.ids()
            .map(|id| (self.node(id).height(), self.node(id).member().len()))
    }

    /// The header's span on each level in use, bottom first. With
    /// [`node_levels`](Self::node_levels) this is enough to draw the list.
    pub fn header_spans(&self) -> Vec<usize> {
        let header = self.node(HEADER);
        (0..self.level).map(|i| header.level(i).span()).collect()
    }

    /// Bytes the arena has allocated: its buffers (by capacity) and the free
    /// lists (their vectors' capacity; the map's own table is not counted).
    /// The RNG and the struct itself are not counted.
    pub fn heap_bytes(&self) -> usize {
        self.arena.heap_bytes()
    }

    // ----- internals ---------------------------------------------------

    /// The record of node `id`, to the end of its buffer.
    #[inline(always)]
    fn node(&self, id: NodeId) -> Node<'_> {
        Node(self.arena.bytes(id))
    }

    fn record_mut(&mut self, id: NodeId) -> &mut [u8] {
        self.arena.bytes_mut(id)
    }

    fn member(&self, id: NodeId) -> &[u8] {
        self.node(id).member()
    }

    fn set_score(&mut self, id: NodeId, score: f64) {
        self.record_mut(id)[SCORE_AT..SCORE_AT + 8].copy_from_slice(&score.to_le_bytes());
    }

    fn set_backward(&mut self, id: NodeId, backward: Option<NodeId>) {
        write_u32(self.record_mut(id), BACKWARD_AT, backward.unwrap_or(0));
    }

    fn set_level(&mut self, id: NodeId, i: usize, level: Level) {
        debug_assert!(i < self.node(id).height());
        let at = LEVELS_AT + i * LEVEL_BYTES;
        let r = self.record_mut(id);
        write_u32(r, at, level.forward().unwrap_or(0));
        write_u32(r, at + SPAN_IN_LEVEL, level.span);
    }

    /// Adds `delta` (which may be negative) to the span of level `i`.
    fn add_span(&mut self, id: NodeId, i: usize, delta: i64) {
        let mut l = self.node(id).level(i);
        l.span = u32::try_from(i64::from(l.span) + delta).expect("span in range");
        self.set_level(id, i, l);
    }

    #[inline(always)]
    fn elem(&self, id: NodeId) -> Elem<'_> {
        Elem {
            score: self.node(id).score(),
            list: self,
            id,
        }
    }

    /// `zslCompareWithNode` for a real node: how `(score, member)` sorts
    /// against it. `<`/`>` rather than `total_cmp`, so -0.0 == 0.0 as in C.
    #[inline(always)]
    fn compare(score: f64, member: &[u8], n: Elem<'_>) -> Ordering {
        if score < n.score {
            Ordering::Less
        } else if score > n.score {
            Ordering::Greater
        } else {
            // Slice order is memcmp then length: "ab" < "abc" < "b".
            member.cmp(n.member())
        }
    }

    /// `zslRandomLevel`: keep adding a level while a 31-bit draw (like
    /// `random()`) is below P * RAND_MAX, up to the maximum.
    fn random_level(&mut self) -> usize {
        draw_level(&mut self.rng)
    }

    /// The generator of the levels, as it stands (the B+tree layout takes it
    /// over when a set converts, so later members draw the same levels).
    pub(crate) fn level_rng(&self) -> &ChaCha8Rng {
        &self.rng
    }

    /// Write a new unlinked node (no links, no backward link) into a freed
    /// record of its size, at the end of the shared buffer, or in a buffer of
    /// its own when it is big.
    fn alloc(&mut self, score: f64, member: &[u8], level: usize) -> NodeId {
        let words = record_words(level, member.len());
        // Tall nodes apart from the rest: every descent passes them.
        let id = self.arena.alloc_in(usize::from(level > 1), words);
        let len = u32::try_from(member.len()).expect("members fit in u32");
        let r = self.record_mut(id);
        let r = &mut r[..words * WORD];
        r.fill(0);
        r[SCORE_AT..SCORE_AT + 8].copy_from_slice(&score.to_le_bytes());
        write_u32(r, CHAIN_AT, NIL);
        let mut at = LEVELS_AT + level * LEVEL_BYTES;
        let meta_len = if len >= LEN_ESCAPE {
            write_u32(r, at, len);
            at += 4;
            LEN_ESCAPE
        } else {
            len
        };
        write_u32(r, META_AT, (meta_len << 5) | (level as u32 - 1));
        r[at..at + member.len()].copy_from_slice(member);
        id
    }

    /// Free an unlinked node's record and hand back its member.
    fn release(&mut self, id: NodeId) -> Vec<u8> {
        let node = self.node(id);
        let member = node.member().to_vec();
        let words = record_words(node.height(), member.len());
        self.arena.free(id, words);
        member
    }

    /// The top-down walk shared by every operation. On each level, from the
    /// highest in use down to 0, follow forward links while `advance(rank
    /// of the next node, next node)` holds, and record where it stopped.
    /// `advance` must hold for a prefix of the list and then fail.
    ///
    /// Each step reads the next node's score and, if it advances, that same
    /// node's link on level `i`, from one record (usually one cache line: a
    /// record of a short member is 32 to 48 bytes).
    #[inline(always)]
    fn descend(&self, advance: impl FnMut(usize, Elem<'_>) -> bool) -> Path {
        self.descend_from(Path::at_header(), self.level, advance)
    }

    /// [`SkipList::descend`] for a read that needs only where the walk ends:
    /// the last node `advance` held for (the header if none) and its rank,
    /// without the path of every level (as `zslNthInRange` and
    /// `zslGetElementByRank` keep only the node and the rank). Writing the
    /// two 32-entry path arrays cost a lookup as much as a few steps.
    #[inline(always)]
    fn seek(&self, advance: impl FnMut(usize, Elem<'_>) -> bool) -> (NodeId, usize) {
        self.walk_levels(HEADER, 0, self.level, advance, |_, _, _| {})
    }

    /// Two [`SkipList::seek`]s at once, for the two ends of a range: `below`
    /// holds up to the range's first element, `within` up to its last, so
    /// the second walk is never behind the first. On a level, each round
    /// reads the next record of both walks before comparing for either: the
    /// walks do not depend on each other, so their loads overlap instead of
    /// following each other (in a big set most are cache misses; in cache,
    /// the two chains of dependent loads still run side by side). Whichever
    /// walk stops first leaves the other to finish the level alone.
    #[inline(always)]
    fn seek_pair(
        &self,
        mut below: impl FnMut(Elem<'_>) -> bool,
        mut within: impl FnMut(Elem<'_>) -> bool,
    ) -> ((NodeId, usize), (NodeId, usize)) {
        let read = self.arena.reader();
        let (mut xa, mut ra, mut xb, mut rb) = (HEADER, 0, HEADER, 0);
        let elem = |id, score: [u8; 8]| Elem {
            score: f64::from_le_bytes(score),
            list: self,
            id,
        };
        for i in (0..self.level).rev() {
            let at = LEVELS_AT + i * LEVEL_BYTES;
            let mut la = Level::from_bytes(read.word(xa, at));
            let mut lb = Level::from_bytes(read.word(xb, at));
            let (mut a_walks, mut b_walks) = (true, true);
            while a_walks && b_walks {
                let (Some(na), Some(nb)) = (la.forward(), lb.forward()) else {
                    break;
                };
                let (da, db) = (
                    read.two_words(na, SCORE_AT, at),
                    read.two_words(nb, SCORE_AT, at),
                );
                a_walks = below(elem(na, da.0));
                b_walks = within(elem(nb, db.0));
                if a_walks {
                    ra += la.span();
                    xa = na;
                    la = Level::from_bytes(da.1);
                }
                if b_walks {
                    rb += lb.span();
                    xb = nb;
                    lb = Level::from_bytes(db.1);
                }
            }
            if a_walks {
                self.walk_on(&read, at, (&mut xa, &mut ra, &mut la), &mut below);
            }
            if b_walks {
                self.walk_on(&read, at, (&mut xb, &mut rb, &mut lb), &mut within);
            }
        }
        ((xa, ra), (xb, rb))
    }

    /// One walk's steps on the level whose links are at `at`, alone: from
    /// node `x` of rank `rank` along `link` while `advance` holds (the end
    /// of a level in the paired walks, once the other walk has stopped).
    #[inline(always)]
    fn walk_on(
        &self,
        read: &Reader<'_, WORD>,
        at: usize,
        (x, rank, link): (&mut NodeId, &mut usize, &mut Level),
        advance: &mut impl FnMut(Elem<'_>) -> bool,
    ) {
        while let Some(next) = link.forward() {
            let (score, next_link) = read.two_words(next, SCORE_AT, at);
            let candidate = Elem {
                score: f64::from_le_bytes(score),
                list: self,
                id: next,
            };
            if !advance(candidate) {
                break;
            }
            *rank += link.span();
            *x = next;
            *link = Level::from_bytes(next_link);
        }
    }

    /// The walk itself, from node `x` of rank `rank` down levels `from - 1`
    /// to 0: on each, follow forward links while `advance` holds, then tell
    /// `stopped(level, node, rank)` where it stopped. Returns the last stop.
    /// It reads the records through the arena's [`super::arena::Reader`]
    /// (no bounds check per field), as this loop is most of a read's time.
    #[inline(always)]
    fn walk_levels(
        &self,
        mut x: NodeId,
        mut rank: usize,
        from: usize,
        mut advance: impl FnMut(usize, Elem<'_>) -> bool,
        mut stopped: impl FnMut(usize, NodeId, usize),
    ) -> (NodeId, usize) {
        let read = self.arena.reader();
        for i in (0..from).rev() {
            let at = LEVELS_AT + i * LEVEL_BYTES;
            let mut link = Level::from_bytes(read.word(x, at));
            while let Some(next) = link.forward() {
                // The next node's score and its own link on this level, read
                // together: the link is used only if the walk moves there.
                let (score, next_link) = read.two_words(next, SCORE_AT, at);
                let candidate = Elem {
                    score: f64::from_le_bytes(score),
                    list: self,
                    id: next,
                };
                if !advance(rank + link.span(), candidate) {
                    break;
                }
                rank += link.span();
                x = next;
                link = Level::from_bytes(next_link);
            }
            stopped(i, x, rank);
        }
        (x, rank)
    }

    /// Two descents at once, for a node that moves (a new score that takes
    /// it elsewhere): `to_node` finds the path to the node `moving` (to unlink
    /// it), `to_place` the path to its new place in the list as it will be
    /// without it (to link it there). Redis runs them one after the other
    /// (`zslUpdateScore`'s search, then `zslInsertNode`'s). They do not
    /// depend on each other, and in a big set a step of either is usually a
    /// cache miss: each round here reads the next record of both walks
    /// before comparing for either, so the two misses overlap instead of
    /// following each other.
    ///
    /// The `to_place` walk never stops on `moving`: a link to it is read
    /// through it (its own link on that level, the two spans added), and
    /// its ranks are those of the list after the unlink.
    #[inline(always)]
    fn descend_pair(
        &self,
        moving: NodeId,
        mut to_node: impl FnMut(Elem<'_>) -> bool,
        mut to_place: impl FnMut(Elem<'_>) -> bool,
    ) -> (Path, Path) {
        let read = self.arena.reader();
        let (mut node_path, mut place_path) = (Path::at_header(), Path::at_header());
        let (mut xa, mut ra, mut xb, mut rb) = (HEADER, 0, HEADER, 0);
        for i in (0..self.level).rev() {
            let at = LEVELS_AT + i * LEVEL_BYTES;
            let mut la = Level::from_bytes(read.word(xa, at));
            let mut lb = Level::from_bytes(read.word(xb, at));
            let elem = |id, score| Elem {
                score: f64::from_le_bytes(score),
                list: self,
                id,
            };
            // One step of the place walk at `n`, whose score and link are
            // read: through `moving`, on to `n`, or stop (false).
            let mut step_b = |n, (score, link), lb: &mut Level, xb: &mut NodeId, rb: &mut usize| {
                if n == moving {
                    let through = Level::from_bytes(link);
                    lb.forward = through.forward;
                    lb.span += through.span;
                } else if to_place(elem(n, score)) {
                    *rb += lb.span();
                    *xb = n;
                    *lb = Level::from_bytes(link);
                } else {
                    return false;
                }
                true
            };
            let (mut a_walks, mut b_walks) = (true, true);
            // Both records are read before either comparison.
            while a_walks && b_walks {
                let (Some(na), Some(nb)) = (la.forward(), lb.forward()) else {
                    break;
                };
                let (da, db) = (
                    read.two_words(na, SCORE_AT, at),
                    read.two_words(nb, SCORE_AT, at),
                );
                if to_node(elem(na, da.0)) {
                    ra += la.span();
                    xa = na;
                    la = Level::from_bytes(da.1);
                } else {
                    a_walks = false;
                }
                b_walks = step_b(nb, db, &mut lb, &mut xb, &mut rb);
            }
            // Whichever walk has not stopped finishes the level alone.
            if a_walks {
                self.walk_on(&read, at, (&mut xa, &mut ra, &mut la), &mut to_node);
            }
            while let Some(nb) = lb.forward().filter(|_| b_walks) {
                let d = read.two_words(nb, SCORE_AT, at);
                if !step_b(nb, d, &mut lb, &mut xb, &mut rb) {
                    break;
                }
            }
            (node_path.update[i], node_path.rank[i]) = (xa, ra);
            (place_path.update[i], place_path.rank[i]) = (xb, rb);
        }
        // The place walk counted `moving` wherever it went past it.
        let moving_rank = node_path.rank[0] + 1;
        for r in place_path.rank.iter_mut().take(self.level) {
            if *r > moving_rank {
                *r -= 1;
            }
        }
        (node_path, place_path)
    }

    /// [`SkipList::descend`] below level `from` (at most the levels in
    /// use): `path` already holds where the walk stopped on the levels from
    /// `from` up, and the walk goes on from the node it stopped at on level
    /// `from` (the header if `from` is the top).
    ///
    /// The walk is a chain of dependent loads, one record per step, each
    /// usually a cache miss in a big set. (Prefetching the record one level
    /// down at every step, in case the comparison failed, overlapped some of
    /// those misses but cost more than it saved: ZCOUNT and ZRANGE BYSCORE on
    /// a set in cache took 1.7 times as long, a random ZADD ~10 % less.)
    #[inline(always)]
    fn descend_from(
        &self,
        mut path: Path,
        from: usize,
        advance: impl FnMut(usize, Elem<'_>) -> bool,
    ) -> Path {
        debug_assert!(from <= self.level);
        let (x, rank) = if from < self.level {
            (path.update[from], path.rank[from])
        } else {
            (HEADER, 0)
        };
        self.walk_levels(x, rank, from, advance, |i, x, rank| {
            path.update[i] = x;
            path.rank[i] = rank;
        });
        path
    }

    /// Locate `(score, member)`: its node and the path to just before it.
    fn find(&self, score: f64, member: &[u8]) -> Option<(NodeId, Path)> {
        let path = self.descend(|_, n| Self::compare(score, member, n).is_gt());
        let id = self.node(path.update[0]).next()?;
        Self::compare(score, member, self.elem(id))
            .is_eq()
            .then_some((id, path))
    }

    /// Node at 0-based `rank` (walk while the running span stays <= rank+1).
    /// The first and the last node are reached directly, as Redis's ZRANGE
    /// starts from `header->level[0].forward` (or `tail`) for rank 0.
    fn id_by_rank(&self, rank: usize) -> Option<NodeId> {
        if rank >= self.len {
            return None;
        }
        if rank == 0 {
            return self.node(HEADER).next();
        }
        if rank + 1 == self.len {
            return self.tail;
        }
        let (x, at) = self.seek(|next_rank, _| next_rank <= rank + 1);
        debug_assert_eq!(at, rank + 1);
        Some(x)
    }

    /// `zslInsertNode`: link an allocated node (its level already chosen)
    /// into place, fixing spans, the backward link and the tail.
    fn link(&mut self, id: NodeId) {
        self.link_from(id, Path::at_header(), self.level);
    }

    /// [`SkipList::link`] with the search for the place already done on the
    /// levels from `from` up (see [`SkipList::descend_from`]).
    fn link_from(&mut self, id: NodeId, path: Path, from: usize) {
        let (score, level) = (self.node(id).score(), self.node(id).height());
        let member = self.member(id);
        let Path {
            mut update,
            mut rank,
        } = self.descend_from(path, from, |_, n| Self::compare(score, member, n).is_gt());

        if level > self.level {
            // New levels start at the header, whose link to "nothing"
            // covers the whole list.
            let len = self.len;
            for i in self.level..level {
                update[i] = HEADER;
                rank[i] = 0;
                self.set_level(HEADER, i, Level::new(None, len));
            }
            self.level = level;
        }

        for i in 0..level {
            // update[i] is rank[0] - rank[i] nodes before the insert point;
            // its old link is split in two around the new node.
            let before = rank[0] - rank[i];
            let old = self.node(update[i]).level(i);
            self.set_level(id, i, Level::new(old.forward(), old.span() - before));
            self.set_level(update[i], i, Level::new(Some(id), before + 1));
        }
        // Higher links jump over the new node: one more step each.
        for (i, &u) in update.iter().enumerate().take(self.level).skip(level) {
            self.add_span(u, i, 1);
        }

        let prev = (update[0] != HEADER).then_some(update[0]);
        self.set_backward(id, prev);
        match self.node(id).next() {
            Some(next) => self.set_backward(next, Some(id)),
            None => self.tail = Some(id),
        }
        self.len += 1;
    }

    /// `zslUnlinkNode`: take node `id` out of every level, given the nodes
    /// just before it on each level. The slot is not freed.
    fn unlink(&mut self, id: NodeId, update: &[NodeId; ZSKIPLIST_MAXLEVEL]) {
        let height = self.node(id).height();
        for (i, &u) in update.iter().enumerate().take(self.level) {
            let gone = (i < height).then(|| self.node(id).level(i));
            let mut link = self.node(u).level(i);
            match gone {
                // u pointed at the node: take over its link (and span).
                // (Spans are u32 and `g.span >= 1` unless it ends the level,
                // so add before subtracting.)
                Some(g) if link.forward() == Some(id) => {
                    link.span = link.span + g.span - 1;
                    link.forward = g.forward;
                }
                // u jumps over the node: the jump is one step shorter.
                _ => link.span -= 1,
            }
            self.set_level(u, i, link);
        }

        let (prev, next) = {
            let n = self.node(id);
            (n.backward(), n.next())
        };
        match next {
            Some(next) => self.set_backward(next, prev),
            None => self.tail = prev,
        }
        // Drop levels nobody uses any more.
        while self.level > 1 && self.node(HEADER).level(self.level - 1).forward.is_none() {
            let top = self.level - 1;
            self.set_level(HEADER, top, EMPTY_LEVEL);
            self.level -= 1;
        }
        self.len -= 1;
    }

    /// Delete consecutive nodes after `path.update[0]` while `keep_going(i,
    /// node)` holds (i counts deleted nodes). The update path stays valid
    /// because every deleted node comes after it.
    fn delete_run(
        &mut self,
        path: &Path,
        keep_going: impl FnMut(usize, Elem<'_>) -> bool,
    ) -> Vec<(NodeKey, Vec<u8>)> {
        let mut removed = Vec::new();
        self.delete_run_each(path, keep_going, |list, id| {
            let key = NonZeroU32::new(id).expect("not the header");
            removed.push((key, list.member_at(id).to_vec()))
        });
        removed
    }

    /// The run [`SkipList::delete_run`] removes, each node shown to
    /// `removed(list, id)` after it is unlinked and before its record is
    /// freed (as `zslDeleteRangeByRank` deletes the dict entry before
    /// `zslFreeNode`; the dict's chain runs through the record, so it must
    /// let go of it first): no copy of the members. Answers how many went.
    fn delete_run_each(
        &mut self,
        path: &Path,
        mut keep_going: impl FnMut(usize, Elem<'_>) -> bool,
        mut removed: impl FnMut(&mut SkipList, Slot),
    ) -> usize {
        let mut count = 0;
        let mut cur = self.node(path.update[0]).next();
        while let Some(id) = cur {
            if !keep_going(count, self.elem(id)) {
                break;
            }
            cur = self.node(id).next();
            self.unlink(id, &path.update);
            removed(self, id);
            let node = self.node(id);
            let words = record_words(node.height(), node.member().len());
            self.arena.free(id, words);
            count += 1;
        }
        count
    }

    /// `zslIsInRange`/`zslIsInLexRange` on scores: a cheap early "no" from
    /// the range itself and the first and last elements.
    fn may_intersect(
        &self,
        gte_min: impl Fn(f64) -> bool,
        lte_max: impl Fn(f64) -> bool,
        range_empty: bool,
    ) -> bool {
        let (Some(first), Some(last)) = (self.node(HEADER).next(), self.tail) else {
            return false;
        };
        !range_empty && gte_min(self.node(last).score()) && lte_max(self.node(first).score())
    }

    fn lex_may_intersect(&self, range: &LexRange) -> bool {
        let (Some(first), Some(last)) = (self.node(HEADER).next(), self.tail) else {
            return false;
        };
        !range.is_empty() && range.gte_min(self.member(last)) && range.lte_max(self.member(first))
    }

    /// Rank of the first node with `gte_min`, if it also has `lte_max`.
    fn first_matching(
        &self,
        gte_min: impl Fn(Elem<'_>) -> bool,
        lte_max: impl Fn(Elem<'_>) -> bool,
    ) -> Option<usize> {
        // Skip everything below the range; the next node is the candidate.
        let (x, rank) = self.seek(|_, n| !gte_min(n));
        let id = self.node(x).next()?;
        lte_max(self.elem(id)).then_some(rank)
    }

    /// Rank of the last node with `lte_max`, if it also has `gte_min`.
    fn last_matching(
        &self,
        lte_max: impl Fn(Elem<'_>) -> bool,
        gte_min: impl Fn(Elem<'_>) -> bool,
    ) -> Option<usize> {
        // Walk through everything not above the range and stop on the last.
        let (id, rank) = self.seek(|_, n| lte_max(n));
        (id != HEADER && gte_min(self.elem(id))).then(|| rank - 1)
    }

    /// Ranks of the first node with `gte_min` and of the last with `lte_max`,
    /// if the first also has `lte_max` ([`SkipList::first_matching`] and
    /// [`SkipList::last_matching`] in one paired walk). When the first
    /// matches both, so does the last: it is at or after the first.
    fn span_matching(
        &self,
        gte_min: impl Fn(Elem<'_>) -> bool,
        lte_max: impl Fn(Elem<'_>) -> bool,
    ) -> Option<(usize, usize)> {
        let ((x, first), (_, after_last)) = self.seek_pair(|n| !gte_min(n), &lte_max);
        let id = self.node(x).next()?;
        lte_max(self.elem(id)).then(|| (first, after_last - 1))
    }

    /// Node handles, head to tail.
    pub(crate) fn keys(&self) -> impl Iterator<Item = NodeKey> + '_ {
        self.ids()
            .map(|id| NonZeroU32::new(id).expect("not the header"))
    }

    /// Element ids, head to tail.
    fn ids(&self) -> impl Iterator<Item = NodeId> + '_ {
        std::iter::successors(self.node(HEADER).next(), |&id| self.node(id).next())
    }

    /// Check every structural invariant; panics with a message if one fails.
    #[cfg(test)]
    pub fn check_invariants(&self) {
        let ids: Vec<NodeId> = self.ids().collect();
        assert_eq!(ids.len(), self.len, "level-0 chain length");
        assert_eq!(self.tail, ids.last().copied(), "tail");
        for (k, &id) in ids.iter().enumerate() {
            let want = if k == 0 { None } else { Some(ids[k - 1]) };
            assert_eq!(self.node(id).backward(), want, "backward link of rank {k}");
            if k > 0 {
                let (a, b) = (self.elem(ids[k - 1]), self.elem(id));
                assert!(
                    Self::compare(a.score, a.member(), b).is_lt(),
                    "order at {k}"
                );
            }
        }
        let top = self.node_levels().into_iter().max().unwrap_or(1);
        assert_eq!(self.level, top, "list level is the tallest node's");
        for i in 0..ZSKIPLIST_MAXLEVEL {
            self.check_level(i, &ids);
        }
    }

    /// Walk level `i`: spans must match rank differences and sum to len.
    #[cfg(test)]
    fn check_level(&self, i: usize, ids: &[NodeId]) {
        let rank_of = |id: NodeId| ids.iter().position(|&x| x == id).unwrap() + 1;
        let (mut x, mut rank, mut sum) = (HEADER, 0, 0);
        loop {
            let link = self.node(x).level(i);
            sum += link.span();
            match link.forward() {
                Some(next) => {
                    assert!(i < self.level, "link above list level");
                    assert_eq!(link.span(), rank_of(next) - rank, "span at level {i}");
                    (x, rank) = (next, rank_of(next));
                }
                None => break,
            }
        }
        let want = if i < self.level { self.len } else { 0 };
        assert_eq!(sum, want, "spans on level {i} sum to len");
    }
}

/// Walks the list in either direction; see [`SkipList::iter_from_rank`] and
/// [`SkipList::rev_iter_from_rank`].
#[derive(Clone, Debug)]
pub struct Iter<'a> {
    list: &'a SkipList,
    cur: Option<NodeId>,
    reverse: bool,
    remaining: usize,
}

impl<'a> Iterator for Iter<'a> {
    type Item = (f64, &'a [u8]);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let id = self.cur?;
        let node = self.list.node(id);
        self.cur = if self.reverse {
            node.backward()
        } else {
            node.next()
        };
        self.remaining -= 1;
        Some((node.score(), node.member()))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl ExactSizeIterator for Iter<'_> {}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    /// Sorted (score, member) pairs: the obviously-correct model.
    type Model = Vec<(f64, Vec<u8>)>;

    fn model_cmp(a: &(f64, Vec<u8>), b: &(f64, Vec<u8>)) -> Ordering {
        a.0.partial_cmp(&b.0).unwrap().then_with(|| a.1.cmp(&b.1))
    }

    fn model_insert(model: &mut Model, score: f64, member: &[u8]) {
        let item = (score, member.to_vec());
        let at = model.partition_point(|x| model_cmp(x, &item).is_lt());
        model.insert(at, item);
    }

    fn model_pos(model: &Model, member: &[u8]) -> Option<usize> {
        model.iter().position(|(_, m)| m == member)
    }

    fn contents(sl: &SkipList) -> Model {
        sl.iter().map(|(s, m)| (s, m.to_vec())).collect()
    }

    fn assert_same(sl: &SkipList, model: &Model) {
        sl.check_invariants();
        assert_eq!(&contents(sl), model);
        let rev: Model = match sl.len() {
            0 => Vec::new(),
            n => sl
                .rev_iter_from_rank(n - 1)
                .map(|(s, m)| (s, m.to_vec()))
                .collect(),
        };
        assert!(rev.iter().eq(model.iter().rev()));
    }

    const SCORES: [f64; 12] = [
        f64::NEG_INFINITY,
        -2.5,
        -1.0,
        -0.0,
        0.0,
        1.0,
        1.5,
        2.0,
        3.0,
        7.0,
        100.0,
        f64::INFINITY,
    ];

    fn random_score(rng: &mut ChaCha8Rng) -> f64 {
        SCORES[rng.gen_range(0..SCORES.len())]
    }

    /// Short members over a tiny alphabet, so prefixes, ties, empty and
    /// non-UTF-8 members all happen often.
    fn random_member(rng: &mut ChaCha8Rng) -> Vec<u8> {
        const ALPHABET: [u8; 5] = [b'a', b'b', b'c', 0x00, 0xff];
        let len = rng.gen_range(0..5);
        (0..len)
            .map(|_| ALPHABET[rng.gen_range(0..ALPHABET.len())])
            .collect()
    }

    fn random_score_range(rng: &mut ChaCha8Rng) -> ScoreRange {
        ScoreRange {
            min: random_score(rng),
            max: random_score(rng),
            minex: rng.gen(),
            maxex: rng.gen(),
        }
    }

    fn random_lex_bound(rng: &mut ChaCha8Rng) -> LexBound {
        match rng.gen_range(0..10) {
            0 => LexBound::NegInf,
            1 => LexBound::PosInf,
            2..=5 => LexBound::Inclusive(random_member(rng)),
            _ => LexBound::Exclusive(random_member(rng)),
        }
    }

    /// Expected (first, last) ranks of the model elements matching `pred`.
    fn model_bounds(
        model: &Model,
        pred: impl Fn(&(f64, Vec<u8>)) -> bool,
    ) -> (Option<usize>, Option<usize>) {
        (model.iter().position(&pred), model.iter().rposition(&pred))
    }

    fn check_score_range(sl: &SkipList, model: &Model, r: &ScoreRange) {
        let (first, last) = model_bounds(model, |(s, _)| r.contains(*s));
        assert_eq!(sl.first_in_score_range(r), first, "first in {r:?}");
        assert_eq!(sl.last_in_score_range(r), last, "last in {r:?}");
        assert_eq!(sl.score_range_span(r), first.zip(last), "span of {r:?}");
    }

    fn check_lex_range(sl: &SkipList, model: &Model, r: &LexRange) {
        let (first, last) = model_bounds(model, |(_, m)| r.contains(m));
        assert_eq!(sl.first_in_lex_range(r), first, "first in {r:?}");
        assert_eq!(sl.last_in_lex_range(r), last, "last in {r:?}");
        assert_eq!(sl.lex_range_span(r), first.zip(last), "span of {r:?}");
    }

    fn check_rank_lookups(sl: &SkipList, model: &Model, rng: &mut ChaCha8Rng) {
        let k = rng.gen_range(0..=model.len());
        match model.get(k) {
            Some((s, m)) => {
                assert_eq!(sl.rank(*s, m), Some(k));
                assert_eq!(sl.get_by_rank(k), Some((*s, m.as_slice())));
                assert!(sl
                    .iter_from_rank(k)
                    .eq(model[k..].iter().map(|(s, m)| (*s, m.as_slice()))));
                let back = model[..=k].iter().rev().map(|(s, m)| (*s, m.as_slice()));
                assert!(sl.rev_iter_from_rank(k).eq(back));
            }
            None => {
                assert_eq!(sl.get_by_rank(k), None);
                assert_eq!(sl.iter_from_rank(k).count(), 0);
                assert_eq!(sl.rev_iter_from_rank(k).count(), 0);
            }
        }
        // A member at the wrong score, or a missing member, has no rank.
        let m = random_member(rng);
        let s = random_score(rng);
        let want = model.iter().position(|(ms, mm)| *ms == s && *mm == m);
        assert_eq!(sl.rank(s, &m), want);
    }

    /// One random operation on both the skiplist and the model (mixed scores).
    fn score_step(sl: &mut SkipList, model: &mut Model, rng: &mut ChaCha8Rng) {
        match rng.gen_range(0..100) {
            0..=44 => {
                let m = random_member(rng);
                if model_pos(model, &m).is_none() {
                    let s = random_score(rng);
                    sl.insert(s, m.clone());
                    model_insert(model, s, &m);
                }
            }
            45..=59 => {
                let m = random_member(rng);
                let pos = model_pos(model, &m);
                let s = pos.map_or_else(|| random_score(rng), |p| model[p].0);
                assert_eq!(sl.delete(s, &m), pos.is_some());
                if let Some(p) = pos {
                    model.remove(p);
                }
            }
            60..=74 => {
                let m = random_member(rng);
                if let Some(p) = model_pos(model, &m) {
                    let (old, new) = (model[p].0, random_score(rng));
                    assert!(sl.update_score(old, &m, new));
                    model.remove(p);
                    model_insert(model, new, &m);
                } else {
                    assert!(!sl.update_score(1.0, &m, 2.0));
                }
            }
            75..=95 => {
                check_rank_lookups(sl, model, rng);
                check_score_range(sl, model, &random_score_range(rng));
            }
            96..=97 => {
                let r = random_score_range(rng);
                let gone: Vec<Vec<u8>> = model
                    .iter()
                    .filter(|(s, _)| r.contains(*s))
                    .map(|(_, m)| m.clone())
                    .collect();
                model.retain(|(s, _)| !r.contains(*s));
                assert_eq!(sl.delete_range_by_score(&r), gone);
            }
            _ => {
                // Short runs, sometimes reversed or past the tail.
                let start = rng.gen_range(0..model.len() + 2);
                let end = start + rng.gen_range(0..8) - 2;
                let gone: Vec<Vec<u8>> = if start <= end && start < model.len() {
                    let end = end.min(model.len() - 1);
                    model.drain(start..=end).map(|(_, m)| m).collect()
                } else {
                    Vec::new()
                };
                assert_eq!(sl.delete_range_by_rank(start, end), gone);
            }
        }
    }

    #[test]
    fn random_ops_match_sorted_vec_model() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut sl = SkipList::with_seed(42);
        let mut model = Model::new();
        for op in 0..4000 {
            score_step(&mut sl, &mut model, &mut rng);
            if op % 50 == 0 {
                assert_same(&sl, &model);
            }
        }
        assert_same(&sl, &model);
    }

    /// One random operation with every score equal, so lex ranges apply.
    fn lex_step(sl: &mut SkipList, model: &mut Model, rng: &mut ChaCha8Rng) {
        let r = LexRange {
            min: random_lex_bound(rng),
            max: random_lex_bound(rng),
        };
        match rng.gen_range(0..100) {
            0..=59 => {
                let m = random_member(rng);
                if model_pos(model, &m).is_none() {
                    sl.insert(0.0, m.clone());
                    model_insert(model, 0.0, &m);
                }
            }
            60..=96 => check_lex_range(sl, model, &r),
            _ => {
                let gone: Vec<Vec<u8>> = model
                    .iter()
                    .filter(|(_, m)| r.contains(m))
                    .map(|(_, m)| m.clone())
                    .collect();
                model.retain(|(_, m)| !r.contains(m));
                assert_eq!(sl.delete_range_by_lex(&r), gone);
            }
        }
    }

    #[test]
    fn random_lex_ops_match_model() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let mut sl = SkipList::with_seed(3);
        let mut model = Model::new();
        for op in 0..3000 {
            lex_step(&mut sl, &mut model, &mut rng);
            if op % 50 == 0 {
                assert_same(&sl, &model);
            }
        }
        assert_same(&sl, &model);
    }

    #[test]
    fn spans_sum_to_len_on_every_level() {
        let mut sl = SkipList::new();
        for i in 0..2000u32 {
            sl.insert(f64::from(i % 97), i.to_be_bytes());
        }
        for i in (0..2000u32).step_by(3) {
            assert!(sl.delete(f64::from(i % 97), &i.to_be_bytes()));
        }
        sl.check_invariants();
        assert!(sl.level() > 3, "2000 nodes should reach a few levels");
        // Some nodes are tall enough to keep levels outside the node.
        assert!(sl.node_levels().iter().any(|&l| l > 4));
        // The header's span on every level in use counts the nodes it skips
        // to reach that level's first node; following spans adds up to len.
        for i in 0..sl.level() {
            let (mut x, mut sum) = (HEADER, 0);
            loop {
                let link = sl.node(x).level(i);
                sum += link.span();
                match link.forward() {
                    Some(next) => x = next,
                    None => break,
                }
            }
            assert_eq!(sum, sl.len(), "level {i}");
        }
        assert_eq!(sl.header_spans().len(), sl.level());
    }

    #[test]
    fn ties_order_by_member_bytes() {
        let mut sl = SkipList::new();
        for m in ["zed", "amy", "Bob"] {
            sl.insert(100.0, m.as_bytes());
        }
        sl.insert(90.0, b"kim");
        let order: Vec<&[u8]> = sl.iter().map(|(_, m)| m).collect();
        assert_eq!(order, [&b"kim"[..], b"Bob", b"amy", b"zed"]);
        assert_eq!(sl.rank(100.0, b"amy"), Some(2));
        let rev: Vec<&[u8]> = sl.rev_iter_from_rank(3).map(|(_, m)| m).collect();
        assert_eq!(rev, [&b"zed"[..], b"amy", b"Bob", b"kim"]);
    }

    #[test]
    fn prefix_sorts_first_and_negative_zero_ties() {
        let mut sl = SkipList::new();
        sl.insert(0.0, b"ab");
        sl.insert(-0.0, b"a");
        sl.insert(0.0, b"abc");
        let order: Vec<&[u8]> = sl.iter().map(|(_, m)| m).collect();
        assert_eq!(order, [&b"a"[..], b"ab", b"abc"]);
        // -0.0 and 0.0 are the same score to the skiplist, as in C.
        assert_eq!(sl.rank(0.0, b"a"), Some(0));
    }

    #[test]
    fn update_score_in_place_keeps_node_and_level() {
        let mut sl = SkipList::with_seed(1);
        for (s, m) in [(1.0, "a"), (2.0, "b"), (3.0, "c")] {
            sl.insert(s, m.as_bytes());
        }
        let levels = sl.node_levels();
        assert!(sl.update_score(2.0, b"b", 2.5));
        assert_eq!(sl.get_by_rank(1), Some((2.5, &b"b"[..])));
        assert!(sl.update_score(2.5, b"b", 10.0));
        assert_eq!(sl.rank(10.0, b"b"), Some(2));
        // The moved node keeps its level: the multiset of levels is unchanged.
        let (mut before, mut after) = (levels, sl.node_levels());
        before.sort_unstable();
        after.sort_unstable();
        assert_eq!(before, after);
        sl.check_invariants();
    }

    #[test]
    fn rank_from_the_node_agrees_with_the_search() {
        let mut sl = SkipList::with_seed(3);
        let keys: Vec<NodeKey> = (0..3000u32)
            .map(|i| sl.insert(f64::from(i % 101), i.to_be_bytes()))
            .collect();
        for &k in &keys {
            let (s, m) = (sl.score_of(k), sl.member_of(k).to_vec());
            assert_eq!(Some(sl.rank_of(k)), sl.rank(s, &m));
        }
        assert_eq!(sl.rank_of(NonZeroU32::new(sl.tail.unwrap()).unwrap()), 2999);
    }

    /// Moves of every size, including ones onto a tie with a neighbour (the
    /// member bytes decide) and past the ends, keep the list whole: the
    /// search for the new place runs beside the search for the node and
    /// reads through the node where it meets it.
    #[test]
    fn node_score_updates_near_and_far_keep_the_invariants() {
        let mut rng = ChaCha8Rng::seed_from_u64(21);
        let mut sl = SkipList::with_seed(8);
        let mut model = Model::new();
        let mut keys = Vec::new();
        for i in 0..600u32 {
            let (s, m) = (f64::from(i / 2), i.to_be_bytes());
            keys.push(sl.insert(s, m));
            model_insert(&mut model, s, &m);
        }
        for step in 0..3000 {
            let k = keys[rng.gen_range(0..keys.len())];
            let m = sl.member_of(k).to_vec();
            let old = sl.score_of(k);
            let new = match rng.gen_range(0..4) {
                0 => old + 1.0,
                1 => old - 0.5,
                2 => old + f64::from(rng.gen_range(-3i32..=3)),
                _ => f64::from(rng.gen_range(-10i32..320)),
            };
            sl.update_node_score(k, new);
            let p = model_pos(&model, &m).unwrap();
            model.remove(p);
            model_insert(&mut model, new, &m);
            assert_eq!(sl.score_of(k), new);
            if step % 100 == 0 {
                assert_same(&sl, &model);
            }
        }
        assert_same(&sl, &model);
    }

    /// The same in lists of one to six members, where the moving node is
    /// often the tallest (unlinking it drops levels the place's search
    /// walked) or the neighbour of its new place on every level.
    #[test]
    fn node_score_updates_in_tiny_lists_keep_the_invariants() {
        let mut rng = ChaCha8Rng::seed_from_u64(22);
        for len in 1..=6u32 {
            for seed in 0..20 {
                let mut sl = SkipList::with_seed(seed);
                let mut model = Model::new();
                let mut keys = Vec::new();
                for i in 0..len {
                    let (s, m) = (f64::from(i), i.to_be_bytes());
                    keys.push(sl.insert(s, m));
                    model_insert(&mut model, s, &m);
                }
                for _ in 0..50 {
                    let k = keys[rng.gen_range(0..keys.len())];
                    let m = sl.member_of(k).to_vec();
                    let new = f64::from(rng.gen_range(-2i32..=8)) / 2.0;
                    sl.update_node_score(k, new);
                    let p = model_pos(&model, &m).unwrap();
                    model.remove(p);
                    model_insert(&mut model, new, &m);
                    assert_same(&sl, &model);
                    for &k in &keys {
                        let (s, m) = (sl.score_of(k), sl.member_of(k).to_vec());
                        assert_eq!(Some(sl.rank_of(k)), sl.rank(s, &m));
                    }
                }
            }
        }
    }

    #[test]
    fn count_is_last_minus_first_plus_one() {
        let mut sl = SkipList::new();
        for i in 0..100u8 {
            sl.insert(f64::from(i), vec![i]);
        }
        let r = ScoreRange {
            min: 10.0,
            max: 20.0,
            minex: true,
            maxex: false,
        };
        let (first, last) = (sl.first_in_score_range(&r), sl.last_in_score_range(&r));
        assert_eq!((first, last), (Some(11), Some(20)));
        assert_eq!(last.unwrap() - first.unwrap() + 1, 10);
        let everything = ScoreRange::inclusive(f64::NEG_INFINITY, f64::INFINITY);
        assert_eq!(sl.last_in_score_range(&everything), Some(99));
        assert_eq!(
            sl.first_in_score_range(&ScoreRange::inclusive(5.0, 4.0)),
            None
        );
    }

    #[test]
    fn free_records_are_reused() {
        let mut sl = SkipList::new();
        for i in 0..100u8 {
            sl.insert(f64::from(i), vec![i]);
        }
        let used = sl.arena.shared_len();
        assert_eq!(sl.delete_range_by_rank(0, 49).len(), 50);
        // One byte more per member: the same number of words, so a new node
        // takes a freed record of its height while one is left.
        for i in 0..50u8 {
            sl.insert(-f64::from(i), vec![i, i]);
        }
        let fresh = sl.arena.shared_len() - used;
        assert!(fresh < 10 * record_words(1, 2) * WORD, "{fresh} new bytes");
        assert!(sl.heap_bytes() >= sl.arena.shared_len());
        sl.check_invariants();
    }

    #[test]
    fn a_big_member_has_a_buffer_of_its_own_freed_with_it() {
        let mut sl = SkipList::new();
        let big = vec![7u8; 20_000];
        sl.insert(1.0, b"a");
        let key = sl.insert(2.0, &big);
        sl.insert(3.0, b"b");
        assert_ne!(key.get() & (1 << 31), 0, "a buffer of its own");
        assert_eq!(sl.member_of(key), &big[..]);
        assert_eq!(sl.score_of(key), 2.0);
        assert_eq!(sl.get_by_rank(1), Some((2.0, &big[..])));
        let with_big = sl.heap_bytes();
        assert!(sl.delete(2.0, &big));
        assert!(sl.heap_bytes() + 19_000 <= with_big);
        let again = sl.insert(0.5, vec![9u8; 30_000]);
        assert_eq!(again, key, "the freed buffer's number is reused");
        assert_eq!(sl.rank(0.5, &[9u8; 30_000]), Some(0));
        sl.check_invariants();
    }

    #[test]
    fn handles_stay_valid_across_score_updates() {
        let mut sl = SkipList::with_seed(5);
        let keys: Vec<NodeKey> = (0..200u32)
            .map(|i| sl.insert(f64::from(i), i.to_be_bytes()))
            .collect();
        for (i, &k) in keys.iter().enumerate().step_by(7) {
            let m = (i as u32).to_be_bytes();
            assert!(sl.update_score(i as f64, &m, -(i as f64)));
            assert_eq!(sl.member_of(k), &m);
            assert_eq!(sl.score_of(k), -(i as f64));
        }
        sl.check_invariants();
    }

    #[test]
    fn random_level_is_geometric_and_seeded() {
        let mut a = SkipList::with_seed(9);
        let mut b = SkipList::with_seed(9);
        let la: Vec<usize> = (0..10_000).map(|_| a.random_level()).collect();
        let lb: Vec<usize> = (0..10_000).map(|_| b.random_level()).collect();
        assert_eq!(la, lb);
        let ones = la.iter().filter(|&&l| l == 1).count();
        // P(level == 1) = 3/4.
        assert!((7200..7800).contains(&ones), "{ones}");
        assert!(la.iter().all(|&l| (1..=ZSKIPLIST_MAXLEVEL).contains(&l)));
    }
}
