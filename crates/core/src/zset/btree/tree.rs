//! A counted B+tree of record handles, ordered by `(score, member)` like the
//! skiplist (`-0` and `0` the same score, ties by memcmp of the members).
//!
//! * **Leaves** hold up to [`LEAF_CAP`] handles (4 bytes each) in order, and
//!   link to the previous and next leaf, so a range walks leaf to leaf in
//!   either direction without going back up.
//! * **Inner nodes** hold up to [`INNER_CAP`] children, and for each child
//!   its element count (the size of its subtree) and its smallest element
//!   (a handle of a live record: the separator a search compares with).
//!   The counts are what the skiplist's spans are: adding the counts of the
//!   children left of the path gives the rank, and a rank finds its leaf by
//!   subtracting counts on the way down; both O(log N) with a base of about
//!   45 instead of 4.
//! * **No copied keys.** A separator is the handle of the child's smallest
//!   element, compared by reading that record, so the tree never holds a
//!   member's bytes. Deleting a subtree's smallest element updates the
//!   separators that named it, on the way back up.
//! * **Splits** happen when a full node takes one more entry: in halves,
//!   except at the two ends of the tree, where the full node stays full and
//!   the new one starts with one entry, so scores that only grow (timestamps)
//!   or only shrink fill the leaves completely instead of halfway.
//! * **Deletes** never merge half-empty neighbours; a node goes once it is
//!   empty, and a root with one child hands the root to it. (Many production
//!   B+trees do the same; a set that shrinks keeps some slack.)
//!
//! Nodes live in two slabs of fixed-size nodes, in chunks of 128 nodes (a
//! chunk grows by doubling, so a small set stays small), addressed by `u32`.

use super::records::{Handle, Records};
use std::cmp::Ordering;

/// Handles per leaf: 256 bytes of handles, a leaf is 268 bytes.
pub const LEAF_CAP: usize = 64;
/// Children per inner node (an inner node is 772 bytes).
pub const INNER_CAP: usize = 64;

type NodeId = u32;
const NONE: NodeId = u32::MAX;

#[derive(Clone, Copy, Debug)]
struct Leaf {
    keys: [Handle; LEAF_CAP],
    len: u16,
    prev: NodeId,
    next: NodeId,
}

const EMPTY_LEAF: Leaf = Leaf {
    keys: [0; LEAF_CAP],
    len: 0,
    prev: NONE,
    next: NONE,
};

#[derive(Clone, Copy, Debug)]
struct Inner {
    mins: [Handle; INNER_CAP],
    /// The score of each `mins` record, kept beside the handle so that a
    /// descent compares scores without reading the records (only a tied
    /// score reads the member). A record's score changes only while it is
    /// out of the tree, so the copy never goes stale.
    min_scores: [f64; INNER_CAP],
    children: [NodeId; INNER_CAP],
    counts: [u32; INNER_CAP],
    len: u16,
}

const EMPTY_INNER: Inner = Inner {
    mins: [0; INNER_CAP],
    min_scores: [0.0; INNER_CAP],
    children: [0; INNER_CAP],
    counts: [0; INNER_CAP],
    len: 0,
};

const CHUNK: usize = 128;

/// Fixed-size nodes in chunks, with a free list.
#[derive(Clone, Debug)]
struct Slab<T> {
    chunks: Vec<Vec<T>>,
    free: Vec<NodeId>,
}

impl<T: Copy> Slab<T> {
    fn new() -> Slab<T> {
        Slab {
            chunks: Vec::new(),
            free: Vec::new(),
        }
    }

    fn alloc(&mut self, v: T) -> NodeId {
        if let Some(id) = self.free.pop() {
            *self.get_mut(id) = v;
            return id;
        }
        if self.chunks.last().is_none_or(|c| c.len() == CHUNK) {
            self.chunks.push(Vec::new());
        }
        let n = self.chunks.len() - 1;
        let c = &mut self.chunks[n];
        if c.len() == c.capacity() {
            let cap = (c.capacity() * 2).clamp(1, CHUNK);
            c.reserve_exact(cap - c.len());
        }
        c.push(v);
        NodeId::try_from(n * CHUNK + c.len() - 1).expect("btree nodes fit in u32")
    }

    #[inline(always)]
    fn get(&self, id: NodeId) -> &T {
        let id = id as usize;
        &self.chunks[id / CHUNK][id % CHUNK]
    }

    #[inline(always)]
    fn get_mut(&mut self, id: NodeId) -> &mut T {
        let id = id as usize;
        &mut self.chunks[id / CHUNK][id % CHUNK]
    }

    fn release(&mut self, id: NodeId) {
        self.free.push(id);
    }

    fn heap_bytes(&self) -> usize {
        self.chunks.capacity() * std::mem::size_of::<Vec<T>>()
            + self
                .chunks
                .iter()
                .map(|c| c.capacity() * std::mem::size_of::<T>())
                .sum::<usize>()
            + self.free.capacity() * std::mem::size_of::<NodeId>()
    }
}

/// How `(score, member)` sorts against the record `h` (`zslCompareWithNode`).
#[inline(always)]
pub fn compare(recs: &Records, score: f64, member: &[u8], h: Handle) -> Ordering {
    let s = recs.score(h);
    if score < s {
        Ordering::Less
    } else if score > s {
        Ordering::Greater
    } else {
        member.cmp(recs.member(h))
    }
}

/// `slice::partition_point` over the indices `0..len`: the first index for
/// which `pred` fails, by binary search (the same probes, so the same answer
/// when `pred` is not a prefix).
fn partition_point(len: usize, pred: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, len);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if pred(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

/// What an insert below a node did: nothing more, or split it, giving the new
/// right sibling, its smallest element and its count.
type Split = Option<(NodeId, Handle, u32)>;

/// What a delete below a node did.
struct Removed {
    /// The node is empty now (its parent drops it).
    empty: bool,
    /// The node's smallest element changed to this one.
    new_min: Option<Handle>,
}

/// The tree. Its methods take the records the handles name.
#[derive(Clone, Debug)]
pub struct Tree {
    leaves: Slab<Leaf>,
    inners: Slab<Inner>,
    root: NodeId,
    /// Inner levels above the leaves (0: the root is a leaf).
    height: usize,
    len: usize,
    first: NodeId,
    last: NodeId,
}

impl Default for Tree {
    fn default() -> Tree {
        Tree::new()
    }
}

impl Tree {
    pub fn new() -> Tree {
        let mut leaves = Slab::new();
        let root = leaves.alloc(EMPTY_LEAF);
        Tree {
            leaves,
            inners: Slab::new(),
            root,
            height: 0,
            len: 0,
            first: root,
            last: root,
        }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn heap_bytes(&self) -> usize {
        self.leaves.heap_bytes() + self.inners.heap_bytes()
    }

    /// Inner levels above the leaves.
    pub fn height(&self) -> usize {
        self.height
    }

    fn node_min(&self, level: usize, id: NodeId) -> Handle {
        if level == 0 {
            self.leaves.get(id).keys[0]
        } else {
            self.inners.get(id).mins[0]
        }
    }

    /// The child of an inner node whose range holds `(score, member)`: the
    /// last one whose smallest element is not above it (the first if none).
    #[inline(always)]
    fn child_for(recs: &Records, n: &Inner, score: f64, member: &[u8]) -> usize {
        // The first separator above `(score, member)`, by binary search on
        // the kept scores; a tie reads the separator's member.
        let (mut lo, mut hi) = (0, n.len as usize);
        while lo < hi {
            let mid = (lo + hi) / 2;
            let s = n.min_scores[mid];
            let at_or_above = if score > s {
                true
            } else if score < s {
                false
            } else {
                member >= recs.member(n.mins[mid])
            };
            if at_or_above {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo.saturating_sub(1)
    }

    /// Separator `i` of `n`: the handle and its record's score.
    fn set_min(recs: &Records, n: &mut Inner, i: usize, h: Handle) {
        n.mins[i] = h;
        n.min_scores[i] = recs.score(h);
    }

    /// Adds the record `h` (its member must not be in the tree yet).
    pub fn insert(&mut self, recs: &Records, h: Handle) {
        let (score, member) = (recs.score(h), recs.member(h));
        let split = self.insert_at(recs, self.root, self.height, (score, member), h, true, true);
        self.len += 1;
        if let Some((right, right_min, right_count)) = split {
            let old = self.root;
            let mut root = EMPTY_INNER;
            Self::set_min(recs, &mut root, 0, self.node_min(self.height, old));
            root.children[0] = old;
            root.counts[0] = u32::try_from(self.len).expect("fits") - right_count;
            Self::set_min(recs, &mut root, 1, right_min);
            root.children[1] = right;
            root.counts[1] = right_count;
            root.len = 2;
            self.root = self.inners.alloc(root);
            self.height += 1;
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn insert_at(
        &mut self,
        recs: &Records,
        node: NodeId,
        level: usize,
        key: (f64, &[u8]),
        h: Handle,
        leftmost: bool,
        rightmost: bool,
    ) -> Split {
        if level == 0 {
            return self.insert_leaf(recs, node, key, h, leftmost, rightmost);
        }
        let (i, len) = {
            let n = self.inners.get(node);
            (Self::child_for(recs, n, key.0, key.1), n.len as usize)
        };
        let child = self.inners.get(node).children[i];
        let split = self.insert_at(
            recs,
            child,
            level - 1,
            key,
            h,
            leftmost && i == 0,
            rightmost && i + 1 == len,
        );
        let child_min = self.node_min(level - 1, child);
        let n = self.inners.get_mut(node);
        n.counts[i] += 1;
        Self::set_min(recs, n, i, child_min);
        let (right, right_min, right_count) = split?;
        n.counts[i] -= right_count;
        let at = i + 1;
        let entry = (right_min, right, right_count);
        if len < INNER_CAP {
            Self::inner_insert(recs, n, at, entry);
            return None;
        }
        let mid = if rightmost && at == INNER_CAP {
            INNER_CAP
        } else {
            INNER_CAP / 2
        };
        let mut r = EMPTY_INNER;
        let moved = INNER_CAP - mid;
        r.mins[..moved].copy_from_slice(&n.mins[mid..]);
        r.min_scores[..moved].copy_from_slice(&n.min_scores[mid..]);
        r.children[..moved].copy_from_slice(&n.children[mid..]);
        r.counts[..moved].copy_from_slice(&n.counts[mid..]);
        r.len = moved as u16;
        n.len = mid as u16;
        if at <= mid && mid < INNER_CAP {
            Self::inner_insert(recs, n, at, entry);
        } else {
            Self::inner_insert(recs, &mut r, at - mid, entry);
        }
        let count: u32 = r.counts[..r.len as usize].iter().sum();
        let min = r.mins[0];
        Some((self.inners.alloc(r), min, count))
    }

    fn inner_insert(
        recs: &Records,
        n: &mut Inner,
        at: usize,
        (min, child, count): (Handle, NodeId, u32),
    ) {
        let len = n.len as usize;
        n.mins.copy_within(at..len, at + 1);
        n.min_scores.copy_within(at..len, at + 1);
        n.children.copy_within(at..len, at + 1);
        n.counts.copy_within(at..len, at + 1);
        Self::set_min(recs, n, at, min);
        n.children[at] = child;
        n.counts[at] = count;
        n.len += 1;
    }

    fn insert_leaf(
        &mut self,
        recs: &Records,
        node: NodeId,
        key: (f64, &[u8]),
        h: Handle,
        leftmost: bool,
        rightmost: bool,
    ) -> Split {
        let leaf = self.leaves.get_mut(node);
        let len = leaf.len as usize;
        let pos = leaf.keys[..len].partition_point(|&k| compare(recs, key.0, key.1, k).is_gt());
        if len < LEAF_CAP {
            leaf.keys.copy_within(pos..len, pos + 1);
            leaf.keys[pos] = h;
            leaf.len += 1;
            return None;
        }
        let mid = if rightmost && pos == LEAF_CAP {
            LEAF_CAP
        } else if leftmost && pos == 0 {
            0
        } else {
            LEAF_CAP / 2
        };
        let mut r = EMPTY_LEAF;
        let moved = LEAF_CAP - mid;
        r.keys[..moved].copy_from_slice(&leaf.keys[mid..]);
        r.len = moved as u16;
        leaf.len = mid as u16;
        let target = if pos <= mid && mid < LEAF_CAP {
            &mut *leaf
        } else {
            &mut r
        };
        let at = if pos <= mid && mid < LEAF_CAP {
            pos
        } else {
            pos - mid
        };
        let tl = target.len as usize;
        target.keys.copy_within(at..tl, at + 1);
        target.keys[at] = h;
        target.len += 1;
        let old_next = leaf.next;
        r.prev = node;
        r.next = old_next;
        let (min, count) = (r.keys[0], u32::from(r.len));
        let right = self.leaves.alloc(r);
        self.leaves.get_mut(node).next = right;
        if old_next == NONE {
            self.last = right;
        } else {
            self.leaves.get_mut(old_next).prev = right;
        }
        Some((right, min, count))
    }

    /// Removes the record `h`; false if it is not in the tree. The record
    /// must still hold the score it was inserted with.
    pub fn remove(&mut self, recs: &Records, h: Handle) -> bool {
        let key = (recs.score(h), recs.member(h));
        let Some(r) = self.remove_at(recs, self.root, self.height, key, h) else {
            return false;
        };
        self.len -= 1;
        if r.empty && self.height > 0 {
            // Every leaf is gone: start again from one empty leaf.
            self.inners.release(self.root);
            let leaf = self.leaves.alloc(EMPTY_LEAF);
            (self.root, self.height, self.first, self.last) = (leaf, 0, leaf, leaf);
        }
        while self.height > 0 && self.inners.get(self.root).len == 1 {
            let old = self.root;
            self.root = self.inners.get(old).children[0];
            self.inners.release(old);
            self.height -= 1;
        }
        true
    }

    fn remove_at(
        &mut self,
        recs: &Records,
        node: NodeId,
        level: usize,
        key: (f64, &[u8]),
        h: Handle,
    ) -> Option<Removed> {
        if level == 0 {
            let leaf = self.leaves.get_mut(node);
            let len = leaf.len as usize;
            let pos = leaf.keys[..len].partition_point(|&k| compare(recs, key.0, key.1, k).is_gt());
            if pos >= len || leaf.keys[pos] != h {
                return None;
            }
            leaf.keys.copy_within(pos + 1..len, pos);
            leaf.len -= 1;
            let left = leaf.len;
            return Some(Removed {
                empty: left == 0,
                new_min: (pos == 0 && left > 0).then(|| leaf.keys[0]),
            });
        }
        let i = Self::child_for(recs, self.inners.get(node), key.0, key.1);
        let child = self.inners.get(node).children[i];
        let r = self.remove_at(recs, child, level - 1, key, h)?;
        if r.empty {
            if level == 1 {
                self.unlink_leaf(child);
            } else {
                self.inners.release(child);
            }
        }
        let n = self.inners.get_mut(node);
        n.counts[i] -= 1;
        if r.empty {
            let len = n.len as usize;
            n.mins.copy_within(i + 1..len, i);
            n.min_scores.copy_within(i + 1..len, i);
            n.children.copy_within(i + 1..len, i);
            n.counts.copy_within(i + 1..len, i);
            n.len -= 1;
            return Some(Removed {
                empty: n.len == 0,
                new_min: (i == 0 && n.len > 0).then(|| n.mins[0]),
            });
        }
        let new_min = r.new_min.inspect(|&m| Self::set_min(recs, n, i, m));
        Some(Removed {
            empty: false,
            new_min: new_min.filter(|_| i == 0),
        })
    }

    fn unlink_leaf(&mut self, id: NodeId) {
        let Leaf { prev, next, .. } = *self.leaves.get(id);
        if prev == NONE {
            self.first = next;
        } else {
            self.leaves.get_mut(prev).next = next;
        }
        if next == NONE {
            self.last = prev;
        } else {
            self.leaves.get_mut(next).prev = prev;
        }
        self.leaves.release(id);
    }

    /// 0-based rank of `(score, member)`, if it is in the tree.
    pub fn rank(&self, recs: &Records, score: f64, member: &[u8]) -> Option<usize> {
        let (mut node, mut rank) = (self.root, 0usize);
        for _ in 0..self.height {
            let n = self.inners.get(node);
            let i = Self::child_for(recs, n, score, member);
            rank += n.counts[..i].iter().map(|&c| c as usize).sum::<usize>();
            node = n.children[i];
        }
        let leaf = self.leaves.get(node);
        let keys = &leaf.keys[..leaf.len as usize];
        let pos = keys.partition_point(|&k| compare(recs, score, member, k).is_gt());
        (pos < keys.len() && compare(recs, score, member, keys[pos]).is_eq()).then_some(rank + pos)
    }

    /// The leaf and position of 0-based `rank` (below `len`).
    fn locate(&self, rank: usize) -> (NodeId, usize) {
        debug_assert!(rank < self.len);
        if rank == 0 {
            return (self.first, 0);
        }
        if rank + 1 == self.len {
            return (self.last, self.leaves.get(self.last).len as usize - 1);
        }
        let (mut node, mut rest) = (self.root, rank);
        for _ in 0..self.height {
            let n = self.inners.get(node);
            let mut i = 0;
            while i + 1 < n.len as usize && rest >= n.counts[i] as usize {
                rest -= n.counts[i] as usize;
                i += 1;
            }
            node = n.children[i];
        }
        (node, rest)
    }

    /// The record at 0-based `rank`.
    pub fn get(&self, rank: usize) -> Option<Handle> {
        (rank < self.len).then(|| {
            let (leaf, at) = self.locate(rank);
            self.leaves.get(leaf).keys[at]
        })
    }

    /// How many elements, from the lowest, satisfy `pred`, which must hold
    /// for a prefix of the order and then fail. (If it is not of that shape
    /// -- a lex range over mixed scores -- the answer is some rank in
    /// `0..=len`, as the skiplist's answer is then some node.)
    pub fn count_while(&self, recs: &Records, pred: impl Fn(f64, Handle) -> bool) -> usize {
        if self.len == 0 {
            return 0;
        }
        let (mut node, mut rank) = (self.root, 0usize);
        for _ in 0..self.height {
            let n = self.inners.get(node);
            let len = n.len as usize;
            // The separators' scores are kept in the node: a score range's
            // search reads no record above the leaves.
            let i = partition_point(len, |i| pred(n.min_scores[i], n.mins[i]));
            if i == 0 {
                return rank;
            }
            rank += n.counts[..i - 1].iter().map(|&c| c as usize).sum::<usize>();
            node = n.children[i - 1];
        }
        let leaf = self.leaves.get(node);
        rank + leaf.keys[..leaf.len as usize].partition_point(|&k| pred(recs.score(k), k))
    }

    /// Handles from 0-based `rank` towards the highest.
    pub fn handles_from(&self, rank: usize) -> Handles<'_> {
        self.walk(rank, false)
    }

    /// Handles from 0-based `rank` back towards rank 0.
    pub fn handles_back_from(&self, rank: usize) -> Handles<'_> {
        self.walk(rank, true)
    }

    fn walk(&self, rank: usize, reverse: bool) -> Handles<'_> {
        if rank >= self.len {
            return Handles {
                tree: self,
                leaf: NONE,
                at: 0,
                remaining: 0,
                reverse,
            };
        }
        let (leaf, at) = self.locate(rank);
        Handles {
            tree: self,
            leaf,
            at,
            remaining: if reverse { rank + 1 } else { self.len - rank },
            reverse,
        }
    }

    /// Checks every structural invariant (tests).
    #[cfg(test)]
    pub fn check(&self, recs: &Records) {
        let count = self.check_node(recs, self.root, self.height);
        assert_eq!(count, self.len, "root count");
        let all: Vec<Handle> = self.handles_from(0).collect();
        assert_eq!(all.len(), self.len);
        for w in all.windows(2) {
            assert!(compare(recs, recs.score(w[0]), recs.member(w[0]), w[1]).is_lt());
        }
        let back: Vec<Handle> = match self.len {
            0 => Vec::new(),
            n => self.handles_back_from(n - 1).collect(),
        };
        assert!(back.iter().rev().eq(all.iter()));
    }

    #[cfg(test)]
    fn check_node(&self, recs: &Records, node: NodeId, level: usize) -> usize {
        if level == 0 {
            let l = self.leaves.get(node);
            assert!(l.len > 0 || self.len == 0, "empty leaf in a non-empty tree");
            return l.len as usize;
        }
        let n = self.inners.get(node);
        assert!(n.len > 0);
        let mut total = 0;
        for i in 0..n.len as usize {
            let c = self.check_node(recs, n.children[i], level - 1);
            assert_eq!(c, n.counts[i] as usize, "count of child {i}");
            assert_eq!(n.mins[i], self.node_min(level - 1, n.children[i]), "min");
            assert_eq!(
                n.min_scores[i].to_bits(),
                recs.score(n.mins[i]).to_bits(),
                "min score"
            );
            total += c;
        }
        total
    }
}

/// A walk over the handles, leaf to leaf.
#[derive(Clone, Debug)]
pub struct Handles<'a> {
    tree: &'a Tree,
    leaf: NodeId,
    at: usize,
    remaining: usize,
    reverse: bool,
}

impl Iterator for Handles<'_> {
    type Item = Handle;

    #[inline]
    fn next(&mut self) -> Option<Handle> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        let leaf = self.tree.leaves.get(self.leaf);
        let h = leaf.keys[self.at];
        if self.remaining > 0 {
            if self.reverse {
                if self.at == 0 {
                    self.leaf = leaf.prev;
                    self.at = self.tree.leaves.get(self.leaf).len as usize - 1;
                } else {
                    self.at -= 1;
                }
            } else if self.at + 1 == leaf.len as usize {
                self.leaf = leaf.next;
                self.at = 0;
            } else {
                self.at += 1;
            }
        }
        Some(h)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl ExactSizeIterator for Handles<'_> {}
