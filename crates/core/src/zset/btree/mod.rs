//! The core's second sorted-set layout: a counted B+tree over a compact
//! member table (`CONFIG SET zset-layout btree`; Redis has only the skiplist).
//!
//! Redis keeps a skiplist-encoded set as one `zskiplistNode` per member (the
//! score, a backward pointer, 16 bytes per level -- forward pointer and span
//! -- and the member's sds embedded after the levels) plus a dictEntry in the
//! zset's dict pointing at that node (or, alone in its bucket, the node's
//! sds pointer in the bucket itself). Per 8-byte member at 1M members that is
//! about 48 B of node, 6 B of dict entries and 8 B of buckets.
//!
//! This layout keeps each member once, in a 22-byte record ([`records`]:
//! score, the hash chain's next link, a length, the bytes), and builds the
//! two views Redis needs out of 4-byte handles of that record:
//!
//! * **the dict** is Redis's dict, bucket for bucket: [`crate::dict::Tables`],
//!   the same code as every other dict (same hash, seed, sizes, rehashing,
//!   scan cursor and random draw), over the records instead of a slab of
//!   entries: the chain link lives in the record ([`records`] implements
//!   [`crate::dict::Chains`]), so an entry costs only its share of the
//!   buckets, and a rehash hashes the member's bytes again, as Redis does;
//! * **the order** ([`tree`]) is a B+tree of handles whose inner nodes count
//!   their subtrees: rank is the sum of the counts left of the path, as in
//!   the skiplist it is the sum of the spans. Where the skiplist spends 8
//!   bytes per level per node (1.33 levels on average) on links and spans,
//!   a leaf spends 4 bytes per member (at the ~70% fill random inserts
//!   leave), and the inner nodes a fortieth of that.
//!
//! | per 8-byte member, 1M members | Redis 8.6.3 | core, skiplist layout | core, btree layout |
//! |---|---|---|---|
//! | member, score | in the 48-B node | in the ~39-B record | 22-B record |
//! | order | levels in the node | levels in the record | ~6 B of leaves, ~0.3 B of inner nodes |
//! | dict | ~6 B entries + 8 B buckets | a 4-B link in the record + 4.2 B buckets | a 4-B link in the record + 4.2 B buckets |
//!
//! Measured by `labs/05o-btree` (counting allocator, in process, 8-byte
//! members, random scores): 32.6 B per member at 1M members in this layout,
//! 44.0 B in the skiplist layout, and Redis's `used_memory` grows 67.4 B. The price: a comparison reads a
//! record through its handle (the skiplist's descent reads the score in the
//! node it is on; a leaf's binary search reads six records it does not
//! hold), and every record access goes through the page table.
//!
//! # What stays Redis's
//!
//! Every reply. The set still says `skiplist` to OBJECT ENCODING (the name is
//! Redis's encoding, which clients and tests read; the layout is a private
//! choice of the core, shown by `CONFIG GET zset-layout`), DUMP writes the
//! same skiplist RDB encoding (it is the sorted order from the highest), and
//! MEMORY USAGE reports what Redis's allocations would be: for that the
//! record keeps the skiplist level Redis would have drawn for the member (5
//! bits), drawn from the same generator in the same order as the skiplist
//! layout draws it, so both layouts report the same bytes.
//!
//! The layout applies like Redis's thresholds: when a set is next converted
//! from a listpack or created already big (a listpack-sized set is held the
//! same way in both layouts), never to an existing set at once.

pub mod records;
pub mod tree;

#[cfg(test)]
mod tests;

use super::skiplist::{draw_level, DEFAULT_SEED};
use crate::dict::Tables;
use crate::short_eq::same_bytes;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
pub use records::Handle;
use records::Records;
use tree::Tree;

/// The dict's test for the record of `member`.
fn holds(member: &[u8]) -> impl Fn(&Records, Handle) -> bool + '_ {
    move |recs, h| same_bytes(recs.member(h), member)
}

/// The B+tree layout of one sorted set: records, dict and tree.
#[derive(Clone, Debug)]
pub struct Btree {
    recs: Records,
    table: Tables,
    tree: Tree,
    /// The skiplist levels' generator (see the module doc: MEMORY USAGE).
    levels: ChaCha8Rng,
}

impl Default for Btree {
    fn default() -> Btree {
        Btree::new()
    }
}

impl Btree {
    pub fn new() -> Btree {
        Btree::with_levels(ChaCha8Rng::seed_from_u64(DEFAULT_SEED))
    }

    /// An empty set drawing levels from `levels` (a converting skiplist's).
    pub fn with_levels(levels: ChaCha8Rng) -> Btree {
        Btree {
            recs: Records::new(),
            table: Tables::default(),
            tree: Tree::new(),
            levels,
        }
    }

    pub fn len(&self) -> usize {
        self.tree.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tree.is_empty()
    }

    pub fn hash_of(&self, member: &[u8]) -> u64 {
        self.table.hash_of(member)
    }

    /// The score of `member` (no rehash step).
    pub fn peek(&self, hash: u64, member: &[u8]) -> Option<f64> {
        let h = self.table.peek(&self.recs, hash, holds(member))?;
        Some(self.recs.score(h))
    }

    /// A lookup for its rehash step (`dictFind`), as the skiplist layout's
    /// dict takes one.
    pub fn step_lookup(&mut self, hash: u64, member: &[u8]) {
        self.table.lookup(&mut self.recs, hash, holds(member));
    }

    /// A member known to be absent, with its hash: a record with a new
    /// level, the tree, then the dict (`zslInsert`, then `dictAdd`).
    pub fn insert_new(&mut self, hash: u64, score: f64, member: &[u8]) {
        let height = draw_level(&mut self.levels);
        let h = self.recs.alloc(score, member, height);
        self.tree.insert(&self.recs, h);
        self.table.insert_absent(&mut self.recs, hash, h);
    }

    /// Building a set whole: the same, through `dictAdd`.
    pub fn insert_both(&mut self, score: f64, member: &[u8]) {
        let height = draw_level(&mut self.levels);
        self.insert_with_height(score, member, height);
    }

    fn insert_with_height(&mut self, score: f64, member: &[u8], height: usize) {
        let h = self.recs.alloc(score, member, height);
        self.tree.insert(&self.recs, h);
        let hash = self.table.hash_of(member);
        self.table.add(&mut self.recs, hash, holds(member), |_| h);
    }

    /// A set converting from a listpack held as a skiplist: the elements in
    /// order with their levels, a dict presized for `cap`, and the levels'
    /// generator taken over.
    pub fn from_skiplist(list: &super::SkipList, cap: usize) -> Btree {
        let mut b = Btree::with_levels(list.level_rng().clone());
        b.table.expand(cap);
        for ((score, member), (height, _)) in list.iter().zip(list.node_shapes()) {
            b.insert_with_height(score, member, height);
        }
        b
    }

    /// A new score for a member that is there: out of the tree, the score
    /// rewritten in the record, back in (the record and its level stay).
    /// `hash` is the member's hash ([`Btree::hash_of`]).
    pub fn update_score(&mut self, hash: u64, member: &[u8], new: f64) {
        let Some(h) = self.table.peek(&self.recs, hash, holds(member)) else {
            return;
        };
        self.tree.remove(&self.recs, h);
        self.recs.set_score(h, new);
        self.tree.insert(&self.recs, h);
    }

    /// `zsetRemoveFromSkiplist`: the dict entry, then the tree, then the record.
    pub fn remove(&mut self, member: &[u8]) -> bool {
        let hash = self.table.hash_of(member);
        let Some(h) = self.table.remove(&mut self.recs, hash, holds(member)) else {
            return false;
        };
        self.tree.remove(&self.recs, h);
        self.recs.free(h);
        true
    }

    /// Removes ascending ranks `start..=end` (clamped, non-empty), as Redis's
    /// range deletions do: the dict does not shrink until the end.
    pub fn remove_rank_range(&mut self, start: usize, end: usize) -> usize {
        let gone: Vec<Handle> = self
            .tree
            .handles_from(start)
            .take(end + 1 - start)
            .collect();
        self.table.pause_auto_resize();
        for &h in &gone {
            let hash = self.table.hash_of(self.recs.member(h));
            self.table.remove(&mut self.recs, hash, |_, x| x == h);
            self.tree.remove(&self.recs, h);
            self.recs.free(h);
        }
        self.table.resume_auto_resize();
        if !self.is_empty() {
            self.table.shrink_if_needed();
        }
        gone.len()
    }

    pub fn score_of(&self, h: Handle) -> f64 {
        self.recs.score(h)
    }

    pub fn member_of(&self, h: Handle) -> &[u8] {
        self.recs.member(h)
    }

    /// 0-based rank of `(score, member)`.
    pub fn rank(&self, score: f64, member: &[u8]) -> Option<usize> {
        self.tree.rank(&self.recs, score, member)
    }

    pub fn get_by_rank(&self, rank: usize) -> Option<(f64, &[u8])> {
        let h = self.tree.get(rank)?;
        Some((self.recs.score(h), self.recs.member(h)))
    }

    /// How many elements from the lowest satisfy `pred` (a prefix).
    pub fn count_while(&self, pred: impl Fn(f64, &[u8]) -> bool) -> usize {
        self.tree
            .count_while(&self.recs, |s, h| pred(s, self.recs.member(h)))
    }

    /// [`Btree::count_while`] for a predicate on the score alone (a score
    /// range): no member is read, and above the leaves no record either.
    pub fn count_while_score(&self, pred: impl Fn(f64) -> bool) -> usize {
        self.tree.count_while(&self.recs, |s, _| pred(s))
    }

    /// Elements from `rank` up (or, `reverse`, down to rank 0).
    pub fn iter_from(&self, rank: usize, reverse: bool) -> Iter<'_> {
        let handles = if reverse {
            self.tree.handles_back_from(rank)
        } else {
            self.tree.handles_from(rank)
        };
        Iter {
            recs: &self.recs,
            handles,
        }
    }

    /// One random member, Redis's fair dict draw.
    pub fn fair_random(&mut self, rng: &mut impl rand::RngCore) -> Option<(Vec<u8>, f64)> {
        let h = self.table.fair_random(&mut self.recs, rng)?;
        Some((self.recs.member(h).to_vec(), self.recs.score(h)))
    }

    /// One `dictScan` step.
    pub fn scan(&self, cursor: u64, mut emit: impl FnMut(&[u8], f64)) -> u64 {
        self.table.scan(&self.recs, cursor, |h| {
            emit(self.recs.member(h), self.recs.score(h))
        })
    }

    /// Members in dict order.
    pub fn dict_members(&self) -> impl Iterator<Item = &[u8]> + '_ {
        self.table.slots(&self.recs).map(|h| self.recs.member(h))
    }

    pub fn bucket_count(&self) -> usize {
        self.table.bucket_count()
    }

    /// `dictExpand` of the dict.
    pub fn expand(&mut self, cap: usize) {
        self.table.expand(cap);
    }

    /// `(skiplist level, member length)` of every element, lowest first: what
    /// Redis's node allocations would be.
    pub fn node_shapes(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.tree
            .handles_from(0)
            .map(|h| (self.recs.height(h), self.recs.member(h).len()))
    }

    /// Bytes on the heap: records, buckets, tree nodes.
    pub fn heap_bytes(&self) -> usize {
        self.recs.heap_bytes() + self.table.heap_bytes() + self.tree.heap_bytes()
    }

    /// Inner levels of the tree above its leaves.
    pub fn tree_height(&self) -> usize {
        self.tree.height()
    }

    #[cfg(test)]
    pub fn check(&self) {
        self.tree.check(&self.recs);
        assert_eq!(self.table.len(), self.tree.len(), "dict and tree agree");
    }
}

/// Elements in order, `(score, member)` like the skiplist's iterator.
#[derive(Clone, Debug)]
pub struct Iter<'a> {
    recs: &'a Records,
    handles: tree::Handles<'a>,
}

impl<'a> Iterator for Iter<'a> {
    type Item = (f64, &'a [u8]);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let h = self.handles.next()?;
        Some((self.recs.score(h), self.recs.member(h)))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.handles.size_hint()
    }
}

impl ExactSizeIterator for Iter<'_> {}
