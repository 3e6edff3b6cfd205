//! The sorted set, as Redis builds it: a dict from member to score, beside a
//! skiplist ordered by (score, member).
//!
//! The dict answers "what is the score of X" in O(1); the skiplist keeps the order,
//! answers ranges by walking its bottom level like a linked list, and answers "what
//! is the rank of X" in O(log N) because every forward link remembers how many
//! elements it jumps over (its span). Members with equal scores are ordered by their
//! bytes (memcmp), which is why `REV` also reverses the order of tied names.
//!
//! Redis keeps small sets (by default at most 128 members, none longer than 64
//! bytes: `zset-max-listpack-entries`, `zset-max-listpack-value`) in a compact
//! listpack instead, and converts to skiplist + dict once a set outgrows it. The
//! thresholds are read at each write, as Redis reads its config ([`Limits`]): a
//! changed threshold converts a set on its next write, never at once, and nothing
//! converts back to a listpack except a computed result (ZUNIONSTORE and friends).
//! This module tracks which encoding Redis would be using, with the same thresholds
//! and conversion points, because it shows through in three places: OBJECT
//! ENCODING, MEMORY USAGE (see [`crate::memory`], which also needs the bucket count
//! of Redis's dict, a [`Dict`]), and scores that a listpack stores
//! as integers (so `-0` reads back as `0`). The elements themselves always live in
//! the skiplist + dict here.
//!
//! # Memory: each member once
//!
//! Redis 8.6 keeps one allocation per member, a `zskiplistNode` (score 8 bytes,
//! backward pointer 8, 16 per level: forward pointer and span) with the member's
//! sds embedded after the levels (1-byte header, the bytes, a NUL), and its dict
//! points at that embedded sds rather than copying it. Here likewise: the
//! skiplist's record (see [`skiplist`]) holds the score, the levels and the
//! member's bytes, and the dict is Redis's dict ([`Tables`]: same sizes,
//! rehashing, scan and random draw) whose chains run through the records
//! themselves, a 4-byte link in each: a bucket holds a node's id, a lookup
//! reads the bucket and then the node (score and member together), and an
//! entry costs nothing beyond its link and its share of the buckets. Per
//! member, at 1M members of 8 to 16 bytes (12 on average, levels 1.33 on
//! average):
//!
//! | part | Redis 8.6.3 (jemalloc) | core |
//! |------|------------------------|------|
//! | node | 16 + 16/level + len + 2, in jemalloc classes: ≈ 55 B | record 20 + 8/level + len, to 4 bytes, packed end to end: ≈ 44 B |
//! | dict entry | a key alone in its bucket sits in the bucket; others take a 16-B entry: ≈ 6 B | the record's 4-byte chain link (counted above) |
//! | buckets | 8 B pointers, 2^20 of them: 8.4 B | 4 B node ids, 2^20: 4.2 B |
//! | total | `used_memory` grows 69.7 B | 48.2 B usable (48.2 B requested), 0 allocations per member |
//!
//! (The Redis split is estimated from its size classes; the total is measured.)
//! The first layout used 190.7 B usable (166.6 B requested) and 2
//! allocations per member: a 64-byte node slot, a boxed member in a side array,
//! and a dict entry with a second copy of the member; the one before this one
//! 62.2 B, with a 16-byte dict entry per member (hash, next, handle) in a slab
//! of its own, one more dependent read per lookup. Measured with
//! `cargo run --release -p redislab-core --example zset_heap` (a counting
//! allocator; Redis's figure from `INFO memory` before and after the same
//! ZADDs, in the same run): ratio core/Redis 0.69 (0.88 with the slab, 2.74
//! at first). MEMORY USAGE is unchanged: it models Redis's allocations
//! ([`crate::memory`]), not these. Chains through the records: on members
//! drawn at random from a 1M-member set (`--example zset_random`, CPU ns per
//! request through `Server::call_into`, slab / records, two interleaved runs)
//! ZSCORE 863, 769 / 728, 664; ZREVRANK 2,271, 2,079 / 1,978, 1,748; ZADD
//! 3,211, 2,978 / 3,163, 2,658. A rehash now hashes each moved member again
//! (Redis does too): 1M single adds 1,394 → 1,512 ns each in `zset_heap`.
//!
//! Speed, from the same example (`Zset` calls in process, best of three passes
//! over 1M members drawn at random), before / after, two interleaved runs on a
//! shared 2-core machine (load average 3 to 4; a figure varies by 20-50%
//! between runs of one binary): 1M single adds 3.66 / 2.69 s and 3.62 / 2.07 s;
//! ZSCORE 888 / 775 and 1033 / 586 ns; ZREVRANK 7496 / 5960 and 7592 / 4297 ns;
//! `ZRANGE 0 9 WITHSCORES` 79 / 98 and 83 / 91 ns. Adds, lookups and ranks are
//! faster (one record instead of a node, a boxed member and a dict copy; a
//! score tie reads the member from the record the descent is on). The short
//! range, all in cache, costs 10-20 ns more: every record access goes through
//! the page table (one more load) and decodes the member's length; rank 0 and
//! the last rank are now reached directly (as Redis's ZRANGE does), which won
//! back part of it.
//!
//! The command path takes the node from the dict, as Redis 8.6 does: ZADD
//! and ZINCRBY of an existing member update that node (no search when its
//! neighbours let it stay; else the search for its links and the search for
//! its new place, side by side), ZRANK/ZREVRANK take the score from the
//! same lookup (and then descend by it, `zslGetRank`, rather than walk from
//! the node as Redis 8.6 does: see `Store::rank_of`),
//! and the dict is searched again only for the rehash step Redis's second
//! `dictFind` takes, while it rehashes. On members drawn at random from the
//! bench's 1M-member key (`cargo run --release -p redislab-core --example
//! zset_random`, CPU ns per request through `Server::call_into`, before /
//! after in one interleaved run on the shared machine): ZINCRBY 4.6-5.2 /
//! 3.9-4.3 µs, ZREVRANK 3.9-4.5 / 3.5-3.9 µs, ZADD unchanged at 6-8 µs (two
//! cache-missing descents, as in Redis; they overlap since, see
//! [`skiplist::SkipList::update_node_score`]); on a 20,000-member set, all in
//! cache: ZADD 1.6-2.1 / 1.3-1.4 µs, ZINCRBY 1.4-1.6 / 0.9-1.1 µs.
//!
//! # Two layouts
//!
//! How the elements of a skiplist-encoded set are held is a choice of the
//! core's own (`CONFIG SET zset-layout skiplist|btree`, [`Layout`]; Redis
//! has no such parameter): the skiplist + dict above (the default, Redis's
//! structure), or the counted B+tree over compact member records of
//! [`btree`] (32.6 B per 8-byte member at 1M members, where this layout takes
//! 44.0 B; lab 05o-btree). The seam is one private enum, `Store`: each of its
//! methods takes the same dict steps in both layouts, so scans, random draws
//! and bucket counts agree, and everything above it (ZADD's flags, the
//! listpack rules, lex walks, pops) is shared. A listpack-encoded set is
//! always held as a skiplist; the layout applies when a set converts or is
//! created past the thresholds, like the thresholds themselves. OBJECT
//! ENCODING says `skiplist` in both layouts: it names Redis's encoding, which
//! clients and Redis's own tests read, not the core's private layout.

mod arena;
pub mod btree;
pub mod skiplist;

use crate::dict::{Slot, Tables};
use crate::short_eq::same_bytes;
use btree::Btree;
use std::num::NonZeroU32;

pub use skiplist::{LexBound, LexRange, NodeKey, ScoreRange, SkipList};

/// The dict's test for "this entry is `member`": the bytes of the node the
/// chain has reached.
fn is(member: &[u8]) -> impl Fn(&SkipList, Slot) -> bool + '_ {
    move |order, at| same_bytes(order.member_at(at), member)
}

/// A dict slot of the skiplist layout as the node handle it is.
fn node_key(at: Slot) -> NodeKey {
    NonZeroU32::new(at).expect("the dict holds nodes, never the header")
}

/// Options of ZADD that change how one (score, member) pair is applied.
#[derive(Clone, Copy, Debug, Default)]
pub struct AddFlags {
    pub nx: bool,
    pub xx: bool,
    pub gt: bool,
    pub lt: bool,
    pub incr: bool,
}

/// What applying one pair did, mirroring Redis's ZADD_OUT_* flags.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum AddOutcome {
    Added(f64),
    Updated(f64),
    /// The score did not change (same value, or INCR by zero); still "processed".
    Unchanged(f64),
    /// Nothing was done because of NX/XX/GT/LT.
    Skipped,
    /// The resulting score would be NaN (e.g. `+inf` plus `-inf`).
    NotANumber,
}

/// Redis's `zset-max-listpack-entries` default.
pub const MAX_LISTPACK_ENTRIES: usize = 128;
/// Redis's `zset-max-listpack-value` default (bytes of one member).
pub const MAX_LISTPACK_VALUE: usize = 64;

/// How the core holds a set Redis would encode as a skiplist (the core's own
/// `zset-layout` parameter; see [`btree`]). Not visible in any reply.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Layout {
    /// Redis's structure: dict + skiplist with spans (the default).
    #[default]
    Skiplist,
    /// Redis's dict over compact member records + a counted B+tree.
    Btree,
}

impl Layout {
    /// The names `CONFIG SET zset-layout` takes, in [`Layout`] order.
    pub const NAMES: [&'static str; 2] = ["skiplist", "btree"];

    pub fn name(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    pub fn from_name(name: &str) -> Option<Layout> {
        match name.to_ascii_lowercase().as_str() {
            "skiplist" => Some(Layout::Skiplist),
            "btree" => Some(Layout::Btree),
            _ => None,
        }
    }
}

/// The listpack thresholds in force for one write (`server.zset_max_listpack_*`),
/// and the layout a set converting or created now takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub entries: usize,
    pub value: usize,
    pub layout: Layout,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            entries: MAX_LISTPACK_ENTRIES,
            value: MAX_LISTPACK_VALUE,
            layout: Layout::Skiplist,
        }
    }
}

impl Limits {
    /// The thresholds CONFIG SET last gave (`zset-max-listpack-*`, alias
    /// `zset-max-ziplist-*`), and `zset-layout`.
    pub fn from_config(c: &crate::server::config::Config) -> Limits {
        Limits {
            entries: clamp_usize(c.zset_max_listpack_entries),
            value: clamp_usize(c.zset_max_listpack_value),
            layout: c.zset_layout,
        }
    }
}

/// A config value (0..=LONG_MAX) as a size.
pub(crate) fn clamp_usize(v: i64) -> usize {
    usize::try_from(v.max(0)).unwrap_or(usize::MAX)
}

/// The encoding Redis would report for this set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    Listpack,
    Skiplist,
}

impl Encoding {
    /// The name OBJECT ENCODING prints.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Listpack => "listpack",
            Encoding::Skiplist => "skiplist",
        }
    }
}

/// Where the elements are: the seam between the two layouts. Every method
/// takes the same dict steps in both (lookups, inserts, deletes, resizes), so
/// the dict's state -- scan order, random draws, bucket count -- is the same.
#[derive(Debug)]
enum Store {
    /// Member → node. While the set is a skiplist this is Redis's own dict,
    /// with its table sizes, rehashing and biased random draw; while it is a
    /// listpack (which Redis scans instead) it is only the core's index,
    /// rebuilt the way Redis fills a new dict when the set converts. Its keys
    /// are handles of the skiplist's nodes, hashed and compared through the
    /// member bytes the node holds; the score is read from the node. A
    /// listpack-encoded set is always held this way.
    Skip {
        /// Redis's dict (its sizes, rehashing, scan and random draw), its
        /// chains run through the nodes' records ([`SkipList`]'s `Chains`).
        table: Tables,
        order: SkipList,
    },
    /// The B+tree layout ([`btree`]).
    Tree(Btree),
}

/// Elements in order, from either layout.
#[derive(Clone, Debug)]
pub enum Items<'a> {
    Skip(skiplist::Iter<'a>),
    Tree(btree::Iter<'a>),
}

impl<'a> Iterator for Items<'a> {
    type Item = (f64, &'a [u8]);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Items::Skip(i) => i.next(),
            Items::Tree(i) => i.next(),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            Items::Skip(i) => i.size_hint(),
            Items::Tree(i) => i.size_hint(),
        }
    }
}

impl Store {
    fn skip() -> Store {
        Store::Skip {
            table: Tables::default(),
            order: SkipList::new(),
        }
    }

    fn len(&self) -> usize {
        match self {
            Store::Skip { table, .. } => table.len(),
            Store::Tree(t) => t.len(),
        }
    }

    fn hash_of(&self, member: &[u8]) -> u64 {
        match self {
            Store::Skip { table, .. } => table.hash_of(member),
            Store::Tree(t) => t.hash_of(member),
        }
    }

    /// The score of `member` (no rehash step).
    fn peek(&self, hash: u64, member: &[u8]) -> Option<f64> {
        self.find(hash, member).map(|(score, _)| score)
    }

    /// The score of `member` and, in the skiplist layout, its node (no
    /// rehash step): what Redis's `dictFind` hands `zsetAdd` and `zsetRank`.
    fn find(&self, hash: u64, member: &[u8]) -> Option<(f64, Option<NodeKey>)> {
        match self {
            Store::Skip { table, order } => {
                let key = node_key(table.peek(order, hash, is(member))?);
                Some((order.score_of(key), Some(key)))
            }
            Store::Tree(t) => t.peek(hash, member).map(|score| (score, None)),
        }
    }

    /// A `dictFind` for its rehash step. The step does not depend on what
    /// the search finds, so outside a rehash (nearly always) the skiplist
    /// layout's dict is not searched again at all.
    fn step_lookup(&mut self, hash: u64, member: &[u8]) {
        match self {
            Store::Skip { table, order } => {
                if table.is_rehashing() {
                    table.lookup(order, hash, is(member));
                }
            }
            Store::Tree(t) => t.step_lookup(hash, member),
        }
    }

    /// A member `peek` just did not find, with its hash in the current dict.
    fn insert_new(&mut self, hash: u64, score: f64, member: &[u8]) {
        match self {
            Store::Skip { table, order } => {
                let key = order.insert(score, member);
                table.insert_absent(order, hash, key.get());
            }
            Store::Tree(t) => t.insert_new(hash, score, member),
        }
    }

    /// The ordered insert, then `dictAdd` (building a set whole).
    fn insert_both(&mut self, score: f64, member: &[u8]) {
        match self {
            Store::Skip { table, order } => {
                let key = order.insert(score, member);
                let hash = table.hash_of(member);
                table.add(order, hash, is(member), |_| key.get());
            }
            Store::Tree(t) => t.insert_both(score, member),
        }
    }

    /// `hash` is the member's hash in the current dict, `node` what
    /// [`Store::find`] answered for it.
    fn update_score(&mut self, hash: u64, node: Option<NodeKey>, member: &[u8], new: f64) {
        match (self, node) {
            (Store::Skip { order, .. }, Some(key)) => order.update_node_score(key, new),
            (Store::Skip { .. }, None) => unreachable!("the skiplist layout finds a node"),
            (Store::Tree(t), _) => t.update_score(hash, member, new),
        }
    }

    /// 0-based rank (from the lowest) and score of `member`: the score from
    /// the dict, then a descent from the top by (score, member), in either
    /// layout (`zslGetRank`). Redis 8.6's `zsetRank` walks instead from the
    /// node the dict found along the top levels to the end of the list
    /// (`zslGetRankByNode`, [`SkipList::rank_of`]), which needs no
    /// comparison; in the core's records the descent measured cheaper:
    /// ZREVRANK of one member over and over 285-300 -> 179-181 ns
    /// (`examples/zset_cost.rs`), of random members of a 1M-member set the
    /// same within noise (`examples/zset_random.rs`). The reply is the same.
    fn rank_of(&self, member: &[u8]) -> Option<(usize, f64)> {
        let score = self.peek(self.hash_of(member), member)?;
        Some((self.rank(score, member)?, score))
    }

    fn remove(&mut self, member: &[u8]) -> bool {
        match self {
            Store::Skip { table, order } => {
                let hash = table.hash_of(member);
                match table.remove(order, hash, is(member)) {
                    Some(at) => order.delete(order.score_of(node_key(at)), member),
                    None => false,
                }
            }
            Store::Tree(t) => t.remove(member),
        }
    }

    fn iter_from(&self, rank: usize, reverse: bool) -> Items<'_> {
        match self {
            Store::Skip { order, .. } if reverse => Items::Skip(order.rev_iter_from_rank(rank)),
            Store::Skip { order, .. } => Items::Skip(order.iter_from_rank(rank)),
            Store::Tree(t) => Items::Tree(t.iter_from(rank, reverse)),
        }
    }

    fn get_by_rank(&self, rank: usize) -> Option<(f64, &[u8])> {
        match self {
            Store::Skip { order, .. } => order.get_by_rank(rank),
            Store::Tree(t) => t.get_by_rank(rank),
        }
    }

    fn rank(&self, score: f64, member: &[u8]) -> Option<usize> {
        match self {
            Store::Skip { order, .. } => order.rank(score, member),
            Store::Tree(t) => t.rank(score, member),
        }
    }

    fn first_in_score_range(&self, r: &ScoreRange) -> Option<usize> {
        match self {
            Store::Skip { order, .. } => order.first_in_score_range(r),
            Store::Tree(t) => first_in(t, t.count_while_score(|s| !r.gte_min(s)), |s, _| {
                r.lte_max(s)
            }),
        }
    }

    fn last_in_score_range(&self, r: &ScoreRange) -> Option<usize> {
        match self {
            Store::Skip { order, .. } => order.last_in_score_range(r),
            Store::Tree(t) => last_in(t, t.count_while_score(|s| r.lte_max(s)), |s, _| {
                r.gte_min(s)
            }),
        }
    }

    /// Ranks of the first and last element in `r`.
    fn score_span(&self, r: &ScoreRange) -> Option<(usize, usize)> {
        match self {
            Store::Skip { order, .. } => order.score_range_span(r),
            Store::Tree(_) => self
                .first_in_score_range(r)
                .and_then(|first| Some((first, self.last_in_score_range(r)?))),
        }
    }

    /// Ranks of the first and last member in `r`.
    fn lex_span(&self, r: &LexRange) -> Option<(usize, usize)> {
        match self {
            Store::Skip { order, .. } => order.lex_range_span(r),
            Store::Tree(_) => self
                .first_in_lex_range(r)
                .and_then(|first| Some((first, self.last_in_lex_range(r)?))),
        }
    }

    fn first_in_lex_range(&self, r: &LexRange) -> Option<usize> {
        match self {
            Store::Skip { order, .. } => order.first_in_lex_range(r),
            Store::Tree(t) if !lex_may_hold(t, r) => None,
            Store::Tree(t) => first_in(t, t.count_while(|_, m| !r.gte_min(m)), |_, m| r.lte_max(m)),
        }
    }

    fn last_in_lex_range(&self, r: &LexRange) -> Option<usize> {
        match self {
            Store::Skip { order, .. } => order.last_in_lex_range(r),
            Store::Tree(t) if !lex_may_hold(t, r) => None,
            Store::Tree(t) => last_in(t, t.count_while(|_, m| r.lte_max(m)), |_, m| r.gte_min(m)),
        }
    }

    /// Removes ascending ranks `start..=end` (clamped); the dict shrinks once,
    /// at the end, as in Redis's range deletions.
    fn remove_rank_range(&mut self, start: usize, end: usize) -> usize {
        match self {
            Store::Skip { table, order } => forget_each(table, |forget| {
                order.delete_rank_range_each(start, end, forget)
            }),
            Store::Tree(t) if start <= end && start < t.len() => {
                let end = end.min(t.len() - 1);
                t.remove_rank_range(start, end)
            }
            Store::Tree(_) => 0,
        }
    }

    fn remove_score_range(&mut self, range: &ScoreRange) -> usize {
        match self {
            Store::Skip { table, order } => {
                forget_each(table, |forget| order.delete_score_range_each(range, forget))
            }
            Store::Tree(_) => match (
                self.first_in_score_range(range),
                self.last_in_score_range(range),
            ) {
                (Some(first), Some(last)) if first <= last => self.remove_rank_range(first, last),
                _ => 0,
            },
        }
    }

    fn bucket_count(&self) -> usize {
        match self {
            Store::Skip { table, .. } => table.bucket_count(),
            Store::Tree(t) => t.bucket_count(),
        }
    }
}

/// `zslIsInLexRange` in the B+tree: the range is not empty, and it does not
/// end before the first member or start after the last.
fn lex_may_hold(t: &Btree, r: &LexRange) -> bool {
    let (Some((_, first)), Some((_, last))) =
        (t.get_by_rank(0), t.get_by_rank(t.len().wrapping_sub(1)))
    else {
        return false;
    };
    !r.is_empty() && r.gte_min(last) && r.lte_max(first)
}

/// In the B+tree: the rank of the first element at or past the range's
/// start, given how many come `below` it, if it also satisfies `lte_max`
/// (`zslNthInRange(range, 0)`).
fn first_in(t: &Btree, below: usize, lte_max: impl Fn(f64, &[u8]) -> bool) -> Option<usize> {
    let (s, m) = t.get_by_rank(below)?;
    lte_max(s, m).then_some(below)
}

/// In the B+tree: the rank of the last element not past the range's end,
/// given how many are `not_above` it, if it also satisfies `gte_min`
/// (`zslNthInRange(range, -1)`).
fn last_in(t: &Btree, not_above: usize, gte_min: impl Fn(f64, &[u8]) -> bool) -> Option<usize> {
    let last = not_above.checked_sub(1)?;
    let (s, m) = t.get_by_rank(last)?;
    gte_min(s, m).then_some(last)
}

/// Drops from the dict the members a skiplist range deletion removes, as the
/// nodes go: `run` removes them, showing each node to the callback it is
/// given after the node is unlinked and before its record (which holds the
/// dict's chain link) is freed (no copy of the members). Like Redis's range
/// deletions, the dict does not shrink while the members go, only once at
/// the end; entries are recognised by node.
fn forget_each(
    table: &mut Tables,
    run: impl FnOnce(&mut dyn FnMut(&mut SkipList, Slot)) -> usize,
) -> usize {
    table.pause_auto_resize();
    let removed = run(&mut |order, at| {
        let hash = table.hash_of(order.member_at(at));
        table.remove(order, hash, |_, x| x == at);
    });
    table.resume_auto_resize();
    if !table.is_empty() {
        table.shrink_if_needed();
    }
    removed
}

#[derive(Debug)]
pub struct Zset {
    store: Store,
    encoding: Encoding,
}

impl Default for Zset {
    fn default() -> Zset {
        Zset::new()
    }
}

impl Zset {
    pub fn new() -> Zset {
        Zset {
            store: Store::skip(),
            encoding: Encoding::Listpack,
        }
    }

    /// An empty set Redis would hold as a skiplist, in `layout`.
    fn empty_skiplist(layout: Layout) -> Zset {
        Zset {
            store: match layout {
                Layout::Skiplist => Store::skip(),
                Layout::Btree => Store::Tree(Btree::new()),
            },
            encoding: Encoding::Skiplist,
        }
    }

    /// A new set the way `zsetTypeCreate` makes one: a listpack unless the command
    /// already brings more elements than a listpack holds or a first member longer
    /// than its value limit (then a skiplist whose dict is presized for the hint).
    pub fn with_hint(size_hint: usize, first_member_len: usize, limits: &Limits) -> Zset {
        let mut z = Zset::new();
        if size_hint > limits.entries || first_member_len > limits.value {
            z.convert(size_hint, limits.layout);
        }
        z
    }

    /// `zsetTypeMaybeConvert`: a command adding more elements at once than a
    /// listpack holds converts a listpack up front.
    pub fn prepare_for(&mut self, size_hint: usize, limits: &Limits) {
        if self.encoding == Encoding::Listpack && size_hint > limits.entries {
            self.convert(size_hint, limits.layout);
        }
    }

    /// `zsetConvertAndExpand` to a skiplist: a new dict presized for `cap`, filled
    /// in listpack order; in the B+tree layout the elements move to a tree.
    fn convert(&mut self, cap: usize, layout: Layout) {
        self.encoding = Encoding::Skiplist;
        let Store::Skip { table, order } = &mut self.store else {
            return;
        };
        match layout {
            Layout::Skiplist => {
                let mut fresh = Tables::default();
                fresh.expand(cap);
                let keys: Vec<NodeKey> = order.keys().collect();
                for key in keys {
                    // Linking a node into the new table rewrites its chain link.
                    let hash = fresh.hash_of(order.member_of(key));
                    let same = |o: &SkipList, at| o.member_at(at) == o.member_of(key);
                    fresh.add(order, hash, same, |_| key.get());
                }
                *table = fresh;
            }
            Layout::Btree => self.store = Store::Tree(Btree::from_skiplist(order, cap)),
        }
    }

    /// `zsetConvert(zobj, OBJ_ENCODING_SKIPLIST)`, which SORT applies to any
    /// sorted set it reads: a listpack becomes a skiplist for good (in the
    /// skiplist layout: SORT has no view of the config's layout).
    pub fn convert_to_skiplist(&mut self) {
        if self.encoding == Encoding::Listpack {
            self.convert(self.len(), Layout::Skiplist);
        }
    }

    /// The members in the order the dict beside the skiplist walks them (how
    /// SORT loads a sorted set it sorts).
    pub fn dict_members(&self) -> Box<dyn Iterator<Item = &[u8]> + '_> {
        match &self.store {
            Store::Skip { table, order } => {
                Box::new(table.slots(order).map(|at| order.member_at(at)))
            }
            Store::Tree(t) => Box::new(t.dict_members()),
        }
    }

    /// Buckets of the dict beside the skiplist (both tables while it rehashes),
    /// or 0 for a listpack, which has no dict in Redis.
    pub fn dict_buckets(&self) -> usize {
        match self.encoding {
            Encoding::Listpack => 0,
            Encoding::Skiplist => self.store.bucket_count(),
        }
    }

    /// A set built whole from a computed result, as ZUNIONSTORE, ZINTERSTORE and
    /// ZDIFFSTORE build theirs: Redis fills a skiplist, then
    /// `zsetConvertToListpackIfNeeded` turns it into a listpack if it has no more
    /// members than a listpack holds and none is longer than the value limit (and
    /// so `-0` scores become `0`).
    pub fn from_result(items: Vec<(Vec<u8>, f64)>, limits: &Limits) -> Zset {
        let fits =
            items.len() <= limits.entries && items.iter().all(|(m, _)| m.len() <= limits.value);
        let mut z = if fits {
            Zset::new()
        } else {
            Zset::empty_skiplist(limits.layout)
        };
        for (member, score) in items {
            let kept = z.stored(score);
            z.store.insert_both(kept, &member);
        }
        z
    }

    /// A set loaded from a DUMP payload or an RDB file (`rdbLoadObject`):
    /// the pairs inserted in the order given into a skiplist whose dict is
    /// presized to `presize` (when above 0), or a listpack holding them in
    /// score order (where `-0` is stored as `0`). The members must be distinct.
    /// A skiplist-encoded set takes `layout`.
    pub fn from_loaded(
        items: Vec<(Vec<u8>, f64)>,
        encoding: Encoding,
        presize: usize,
        layout: Layout,
    ) -> Zset {
        let mut z = match encoding {
            Encoding::Listpack => Zset::new(),
            Encoding::Skiplist => Zset::empty_skiplist(layout),
        };
        if encoding == Encoding::Skiplist && presize > 0 {
            z.expand(presize);
        }
        for (member, score) in items {
            let kept = z.stored(score);
            z.store.insert_both(kept, &member);
        }
        z
    }

    fn expand(&mut self, cap: usize) {
        match &mut self.store {
            Store::Skip { table, .. } => {
                table.expand(cap);
            }
            Store::Tree(t) => t.expand(cap),
        }
    }

    pub fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// The layout holding the elements (a listpack-encoded set is always held
    /// as a skiplist; see [`btree`]).
    pub fn layout(&self) -> Layout {
        match self.store {
            Store::Skip { .. } => Layout::Skiplist,
            Store::Tree(_) => Layout::Btree,
        }
    }

    /// `zsetDup` (COPY): the same encoding and layout; a skiplist's dict is
    /// presized and the elements are inserted from the greatest down (new
    /// nodes draw new levels).
    pub fn dup(&self) -> Zset {
        let mut z = match self.encoding {
            Encoding::Listpack => Zset::new(),
            Encoding::Skiplist => Zset::empty_skiplist(self.layout()),
        };
        if self.encoding == Encoding::Skiplist {
            z.expand(self.len());
        }
        let items: Vec<(f64, &[u8])> = self.store.iter_from(0, false).collect();
        for (score, member) in items.into_iter().rev() {
            z.store.insert_both(score, member);
        }
        z
    }

    /// The value actually kept: a listpack stores integral scores as integers, so
    /// negative zero comes back as zero.
    fn stored(&self, score: f64) -> f64 {
        if self.encoding == Encoding::Listpack && score == 0.0 {
            0.0
        } else {
            score
        }
    }

    pub fn len(&self) -> usize {
        self.store.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The score of `member`. Unlike Redis's lookup this does not advance an
    /// ongoing rehash by a step (reads take `&self` here); only writes do.
    pub fn score(&self, member: &[u8]) -> Option<f64> {
        self.store.peek(self.store.hash_of(member), member)
    }

    /// All elements, lowest score first (ties by member bytes).
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], f64)> {
        self.store.iter_from(0, false).map(|(s, m)| (m, s))
    }

    /// Elements from 0-based `rank` up, `(score, member)`.
    pub fn iter_from_rank(&self, rank: usize) -> Items<'_> {
        self.store.iter_from(rank, false)
    }

    /// Applies one (score, member) pair the way Redis's `zsetAdd` does; a new
    /// member that would take a listpack past `limits` converts it first.
    pub fn add(
        &mut self,
        score: f64,
        member: &[u8],
        flags: AddFlags,
        limits: &Limits,
    ) -> AddOutcome {
        if score.is_nan() {
            return AddOutcome::NotANumber;
        }
        // Redis looks the member up once (one rehash step), then decides.
        // The member is hashed once here for the peek and the step after it.
        let hash = self.store.hash_of(member);
        let Some((current, node)) = self.store.find(hash, member) else {
            if flags.xx {
                self.store.step_lookup(hash, member);
                return AddOutcome::Skipped;
            }
            return self.add_new(score, member, hash, limits);
        };
        self.store.step_lookup(hash, member);
        if flags.nx {
            return AddOutcome::Skipped;
        }
        let new = if flags.incr { score + current } else { score };
        if new.is_nan() {
            return AddOutcome::NotANumber;
        }
        if (flags.lt && new >= current) || (flags.gt && new <= current) {
            return AddOutcome::Skipped;
        }
        if new == current {
            return AddOutcome::Unchanged(new);
        }
        let kept = self.stored(new);
        // The node keeps its handle; the dict's second lookup (where Redis
        // stores the new score through the entry) still takes its rehash step.
        self.store.update_score(hash, node, member, kept);
        self.store.step_lookup(hash, member);
        AddOutcome::Updated(new)
    }

    /// A member that is not in the set yet; a listpack that would outgrow its
    /// limits converts first (`zsetConvertAndExpand` with room for one more).
    /// `hash` is the member's hash in the current dict, which `add` has just
    /// searched without finding it.
    fn add_new(&mut self, score: f64, member: &[u8], mut hash: u64, limits: &Limits) -> AddOutcome {
        if self.encoding == Encoding::Listpack
            && (self.len() + 1 > limits.entries || member.len() > limits.value)
        {
            self.convert(self.len() + 1, limits.layout);
            // A new dict; hash again rather than assume it has the same seed.
            hash = self.store.hash_of(member);
        }
        let kept = self.stored(score);
        self.store.insert_new(hash, kept, member);
        AddOutcome::Added(score)
    }

    pub fn remove(&mut self, member: &[u8]) -> bool {
        self.store.remove(member)
    }

    /// One random member and its score, as ZRANDMEMBER without a count draws it:
    /// a uniform listpack entry (`lpRandomPair`), or Redis's biased fair dict draw.
    pub fn random_member(&mut self, rng: &mut impl rand::RngCore) -> Option<(Vec<u8>, f64)> {
        match self.encoding {
            Encoding::Listpack if self.is_empty() => None,
            Encoding::Listpack => {
                let rank = crate::sampling::c_rand(rng) as usize % self.len();
                self.store.get_by_rank(rank).map(|(s, m)| (m.to_vec(), s))
            }
            Encoding::Skiplist => match &mut self.store {
                Store::Skip { table, order } => {
                    let key = node_key(table.fair_random(order, rng)?);
                    Some((order.member_of(key).to_vec(), order.score_of(key)))
                }
                Store::Tree(t) => t.fair_random(rng),
            },
        }
    }

    /// 0-based rank, counted from the lowest score (or the highest with `reverse`).
    pub fn rank(&self, member: &[u8], reverse: bool) -> Option<usize> {
        self.rank_with_score(member, reverse).map(|(rank, _)| rank)
    }

    /// [`Zset::rank`] and the member's score, from one lookup (ZRANK
    /// WITHSCORE).
    pub fn rank_with_score(&self, member: &[u8], reverse: bool) -> Option<(usize, f64)> {
        let (rank, score) = self.store.rank_of(member)?;
        Some((if reverse { self.len() - 1 - rank } else { rank }, score))
    }

    /// Elements with rank in `start..=end` (already clamped by the caller), in
    /// ascending order, or descending with `reverse` (ranks then count from the top).
    pub fn range_by_rank(&self, start: usize, end: usize, reverse: bool) -> Vec<(&[u8], f64)> {
        self.rank_range(start, end, reverse)
            .map(|(s, m)| (m, s))
            .collect()
    }

    /// [`Zset::range_by_rank`] as it is walked, `(score, member)`, borrowing
    /// the members (a reply is built from it with nothing in between).
    pub fn rank_range(
        &self,
        start: usize,
        end: usize,
        reverse: bool,
    ) -> std::iter::Take<Items<'_>> {
        let n = end + 1 - start;
        let from = if reverse {
            self.len() - 1 - start
        } else {
            start
        };
        self.store.iter_from(from, reverse).take(n)
    }

    /// Ranks (ascending) of the first and last element inside `range`, if any.
    pub fn score_span(&self, range: &ScoreRange) -> Option<(usize, usize)> {
        self.store.score_span(range)
    }

    /// Rank (ascending) of the first element inside `range` (GEOSEARCH's cells).
    pub fn first_in_score_range(&self, range: &ScoreRange) -> Option<usize> {
        self.store.first_in_score_range(range)
    }

    /// Ranks (ascending) of the first and last element inside a lex range.
    pub fn lex_span(&self, range: &LexRange) -> Option<(usize, usize)> {
        self.store.lex_span(range)
    }

    /// Walks ascending ranks `first..=last` (or descending from `last` with `reverse`),
    /// skipping `offset` and returning at most `limit` elements.
    pub fn walk_span(
        &self,
        (first, last): (usize, usize),
        reverse: bool,
        offset: usize,
        limit: Option<usize>,
    ) -> Vec<(&[u8], f64)> {
        let available = (last + 1 - first).saturating_sub(offset);
        let take = limit.map_or(available, |l| l.min(available));
        if take == 0 {
            return Vec::new();
        }
        let from = if reverse {
            last - offset
        } else {
            first + offset
        };
        self.store
            .iter_from(from, reverse)
            .take(take)
            .map(|(s, m)| (m, s))
            .collect()
    }

    /// Rank of the first element of a lex range, found the way the current encoding
    /// finds it. Lex ranges assume every score is equal; when they are not, a
    /// listpack answers by scanning from the head (`zzlFirstInLexRange`), which is
    /// the behaviour reproduced here.
    fn lex_first(&self, range: &LexRange) -> Option<usize> {
        match self.encoding {
            Encoding::Skiplist => self.store.first_in_lex_range(range),
            Encoding::Listpack => {
                if !self.listpack_may_hold(range) {
                    return None;
                }
                let (rank, (_, member)) = self
                    .store
                    .iter_from(0, false)
                    .enumerate()
                    .find(|(_, (_, m))| range.gte_min(m))?;
                range.lte_max(member).then_some(rank)
            }
        }
    }

    /// Rank of the last element of a lex range (`zzlLastInLexRange` scans from the tail).
    fn lex_last(&self, range: &LexRange) -> Option<usize> {
        match self.encoding {
            Encoding::Skiplist => self.store.last_in_lex_range(range),
            Encoding::Listpack => {
                if !self.listpack_may_hold(range) {
                    return None;
                }
                let last = self.len() - 1;
                let (back, (_, member)) = self
                    .store
                    .iter_from(last, true)
                    .enumerate()
                    .find(|(_, (_, m))| range.lte_max(m))?;
                range.gte_min(member).then_some(last - back)
            }
        }
    }

    /// `zzlIsInLexRange`: the range is not empty, the last member is not below the
    /// minimum and the first is not above the maximum.
    fn listpack_may_hold(&self, range: &LexRange) -> bool {
        let (Some((_, first)), Some((_, last))) = (
            self.store.get_by_rank(0),
            self.store.get_by_rank(self.len().wrapping_sub(1)),
        ) else {
            return false;
        };
        !range.is_empty() && range.gte_min(last) && range.lte_max(first)
    }

    /// The elements of a lex range in the order a BYLEX range command returns them:
    /// start at the first (or, reversed, the last) element in range, skip `offset`,
    /// then walk while still inside the range, at most `limit` elements.
    pub fn lex_walk(
        &self,
        range: &LexRange,
        reverse: bool,
        offset: usize,
        limit: Option<usize>,
    ) -> Vec<(&[u8], f64)> {
        let start = if reverse {
            self.lex_last(range)
        } else {
            self.lex_first(range)
        };
        let Some(start) = start else {
            return Vec::new();
        };
        self.store
            .iter_from(start, reverse)
            .skip(offset)
            .take_while(|(_, m)| {
                if reverse {
                    range.gte_min(m)
                } else {
                    range.lte_max(m)
                }
            })
            .take(limit.unwrap_or(usize::MAX))
            .map(|(s, m)| (m, s))
            .collect()
    }

    /// ZLEXCOUNT: a listpack counts forward from the first match while in range; the
    /// skiplist subtracts the ranks of the first and last match.
    pub fn lex_count(&self, range: &LexRange) -> usize {
        match self.encoding {
            Encoding::Listpack => self.lex_walk(range, false, 0, None).len(),
            Encoding::Skiplist => match (self.lex_first(range), self.lex_last(range)) {
                (Some(first), Some(last)) if last >= first => last - first + 1,
                _ => 0,
            },
        }
    }

    /// Removes and returns the lowest (or, with `max`, the highest) element.
    pub fn pop(&mut self, max: bool) -> Option<(Vec<u8>, f64)> {
        let rank = if max { self.len().checked_sub(1)? } else { 0 };
        let (score, member) = self.store.get_by_rank(rank).map(|(s, m)| (s, m.to_vec()))?;
        self.remove(&member);
        Some((member, score))
    }

    /// Removes ranks `start..=end` (ascending, already clamped); returns how many.
    pub fn remove_rank_range(&mut self, start: usize, end: usize) -> usize {
        self.store.remove_rank_range(start, end)
    }

    pub fn remove_score_range(&mut self, range: &ScoreRange) -> usize {
        self.store.remove_score_range(range)
    }

    /// Removes what a forward BYLEX walk would return.
    pub fn remove_lex_range(&mut self, range: &LexRange) -> usize {
        let members: Vec<Vec<u8>> = self
            .lex_walk(range, false, 0, None)
            .into_iter()
            .map(|(m, _)| m.to_vec())
            .collect();
        members.iter().filter(|m| self.remove(m)).count()
    }

    /// The skiplist itself, for labs that show its shape (`None` in the
    /// B+tree layout).
    pub fn skiplist(&self) -> Option<&SkipList> {
        match &self.store {
            Store::Skip { order, .. } => Some(order),
            Store::Tree(_) => None,
        }
    }

    /// The B+tree layout, for labs that measure it (`None` otherwise).
    pub fn btree(&self) -> Option<&Btree> {
        match &self.store {
            Store::Tree(t) => Some(t),
            Store::Skip { .. } => None,
        }
    }

    /// `(level, member length)` of every element, lowest first: the shape of
    /// the nodes Redis would allocate (for MEMORY USAGE), in either layout.
    pub fn node_shapes(&self) -> Box<dyn Iterator<Item = (usize, usize)> + '_> {
        match &self.store {
            Store::Skip { order, .. } => Box::new(order.node_shapes()),
            Store::Tree(t) => Box::new(t.node_shapes()),
        }
    }
}

// ----- ZSCAN and COPY (the keyspace commands' accessors) -----

impl Zset {
    /// ZSCAN over a skiplist-encoded set: one `dictScan` step of its dict,
    /// emitting the members and scores of the buckets the cursor names; the
    /// next cursor (0 at the end). `None` for a listpack, which ZSCAN returns
    /// whole, in [`Zset::iter`] order, with cursor 0.
    pub fn scan_table(&self, cursor: u64, mut emit: impl FnMut(&[u8], f64)) -> Option<u64> {
        match (self.encoding, &self.store) {
            (Encoding::Listpack, _) => None,
            (Encoding::Skiplist, Store::Skip { table, order }) => {
                Some(table.scan(order, cursor, |at| {
                    let key = node_key(at);
                    emit(order.member_of(key), order.score_of(key))
                }))
            }
            (Encoding::Skiplist, Store::Tree(t)) => Some(t.scan(cursor, emit)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn members(items: Vec<(&[u8], f64)>) -> Vec<String> {
        items
            .into_iter()
            .map(|(m, s)| format!("{} {s}", String::from_utf8_lossy(m)))
            .collect()
    }

    #[test]
    fn ties_are_ordered_by_bytes_and_rev_reverses_them() {
        let mut z = Zset::new();
        for (s, m) in [
            (100.0, "zed"),
            (100.0, "amy"),
            (100.0, "Bob"),
            (90.0, "kim"),
        ] {
            assert_eq!(
                z.add(s, m.as_bytes(), AddFlags::default(), &Limits::default()),
                AddOutcome::Added(s)
            );
        }
        assert_eq!(
            members(z.range_by_rank(0, 3, false)),
            ["kim 90", "Bob 100", "amy 100", "zed 100"]
        );
        assert_eq!(
            members(z.range_by_rank(0, 3, true)),
            ["zed 100", "amy 100", "Bob 100", "kim 90"]
        );
        assert_eq!(z.rank(b"zed", true), Some(0));
        assert_eq!(z.rank(b"Bob", true), Some(2));
    }

    const L: Limits = Limits {
        entries: MAX_LISTPACK_ENTRIES,
        value: MAX_LISTPACK_VALUE,
        layout: Layout::Skiplist,
    };

    #[test]
    fn a_copy_has_the_same_members_and_encoding() {
        let skip = Limits {
            entries: 0,
            value: 64,
            layout: Layout::Skiplist,
        };
        let mut z = Zset::with_hint(3, 1, &skip);
        for (s, m) in [(1.0, "a"), (2.0, "b"), (2.0, "c")] {
            z.add(s, m.as_bytes(), AddFlags::default(), &skip);
        }
        let copy = z.dup();
        assert_eq!(copy.encoding(), Encoding::Skiplist);
        assert_eq!(
            members(copy.range_by_rank(0, 2, false)),
            ["a 1", "b 2", "c 2"]
        );
        assert_eq!(copy.score(b"c"), Some(2.0));
    }

    #[test]
    fn flags_follow_zadd_rules() {
        let mut z = Zset::new();
        let gt = AddFlags {
            gt: true,
            ..Default::default()
        };
        let incr = AddFlags {
            incr: true,
            ..Default::default()
        };
        assert_eq!(z.add(5.0, b"a", gt, &L), AddOutcome::Added(5.0));
        assert_eq!(z.add(3.0, b"a", gt, &L), AddOutcome::Skipped);
        assert_eq!(z.add(7.0, b"a", gt, &L), AddOutcome::Updated(7.0));
        assert_eq!(z.add(0.0, b"a", incr, &L), AddOutcome::Unchanged(7.0));
        assert_eq!(
            z.add(f64::INFINITY, b"a", AddFlags::default(), &L),
            AddOutcome::Updated(f64::INFINITY)
        );
        assert_eq!(
            z.add(f64::NEG_INFINITY, b"a", incr, &L),
            AddOutcome::NotANumber
        );
        let xx = AddFlags {
            xx: true,
            ..Default::default()
        };
        assert_eq!(z.add(1.0, b"new", xx, &L), AddOutcome::Skipped);
        assert!(z.remove(b"a"));
        assert!(z.is_empty());
    }

    /// The skiplist layout's dict keeps its chains in the nodes' records:
    /// through growth, rehashing, shrinking, removals of single members and
    /// of whole ranges (where each record is freed and its room reused),
    /// every member stays findable by its dict, the dict holds exactly the
    /// set's members, and a full scan meets each once.
    #[test]
    fn the_dict_through_the_records_follows_every_change() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
        let mut z = Zset::new();
        let mut model = std::collections::BTreeMap::new();
        for round in 0..6_000 {
            let m = format!("m{}", rng.gen_range(0..3_000)).into_bytes();
            match rng.gen_range(0..10) {
                0..=5 => {
                    let score = f64::from(rng.gen_range(0..500));
                    z.add(score, &m, AddFlags::default(), &L);
                    model.insert(m, score);
                }
                6 | 7 => assert_eq!(z.remove(&m), model.remove(&m).is_some()),
                8 if round % 50 == 0 && z.len() > 10 => {
                    let start = rng.gen_range(0..z.len() - 5);
                    let gone = z.remove_rank_range(start, start + 4);
                    let mut ordered: Vec<(f64, Vec<u8>)> =
                        model.iter().map(|(m, &s)| (s, m.clone())).collect();
                    ordered.sort_by(|a, b| a.0.total_cmp(&b.0).then_with(|| a.1.cmp(&b.1)));
                    for (_, m) in &ordered[start..start + gone] {
                        model.remove(m);
                    }
                }
                9 if round % 70 == 0 => {
                    let low = f64::from(rng.gen_range(0..500));
                    let range = ScoreRange::inclusive(low, low + 3.0);
                    z.remove_score_range(&range);
                    model.retain(|_, s| !range.contains(*s));
                }
                _ => assert_eq!(z.score(&m), model.get(&m).copied()),
            }
            assert_eq!(z.len(), model.len());
        }
        assert_eq!(z.encoding(), Encoding::Skiplist);
        for (m, &score) in &model {
            assert_eq!(z.score(m), Some(score), "{}", String::from_utf8_lossy(m));
        }
        let mut seen = std::collections::BTreeSet::new();
        let mut cursor = 0;
        loop {
            cursor = z
                .scan_table(cursor, |m, _| assert!(seen.insert(m.to_vec()), "twice"))
                .expect("a skiplist scans its dict");
            if cursor == 0 {
                break;
            }
        }
        assert_eq!(
            seen.into_iter().collect::<Vec<_>>(),
            model.into_keys().collect::<Vec<_>>()
        );
    }
}
