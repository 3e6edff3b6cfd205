//! Redis's quicklist (src/quicklist.c): a chain of listpack nodes, with the
//! fill factor that decides when a node is full, and the splits and merges that
//! keep nodes near that size.
//!
//! The rules reproduced, because they decide how many nodes a list has (and so
//! what MEMORY USAGE says):
//!
//! * **Fill** (`list-max-listpack-size`, taken when the quicklist is created and
//!   clamped to -5..=32767): a negative fill limits a node's listpack to 4, 8,
//!   16, 32 or 64 KB; a positive one to that many entries, and 8 KB anyway
//!   (`quicklistNodeExceedsLimit`). A push goes into the end node if
//!   `quicklistNodeAllowInsert` estimates it fits (its size + the element's
//!   length + 8), else into a new node. Pushes never merge nodes.
//! * **Plain nodes**: an element larger than the node limit (8 KB for positive
//!   fills), or than the threshold `DEBUG QUICKLIST-PACKED-THRESHOLD` set, gets
//!   a node of its own holding just its bytes.
//! * **Inserts** in the middle (`_quicklistInsert`): into the node if it has
//!   room; at a node's edge, into the neighbour if that has room, else a new
//!   node; otherwise the node is split at the insert point and the neighbours
//!   are merged where their combined size fits (`_quicklistMergeNodes`).
//! * **Replacing** an element (`quicklistReplaceEntry`): in place unless a node
//!   is plain or the new element is large, which splits the node around a new
//!   plain node.
//! * **Deletes** (pops, LREM, LTRIM, ranges) only shrink nodes and drop empty
//!   ones; they never merge.
//!
//! Sizes (`quicklistAllocSize`): the 48-byte `quicklist` struct, 40 bytes per
//! `quicklistNode`, and each node's listpack counted by `lpBytes` (a plain
//! node by its element's length), all as Redis 8.6 accounts them.
//!
//! How this differs from the C code: nodes live in a deque and are addressed by
//! position; `list-compress-depth` is accepted and kept but nodes are never
//! LZF-compressed (so with a compress depth above 0 the core's MEMORY USAGE is
//! that of an uncompressed list); bookmarks (used only by defrag) do not exist.

use std::cell::Cell;
use std::collections::VecDeque;

use super::listpack::{is_integer_entry, Listpack, EMPTY_BYTES};

/// `sizeof(quicklist)` on x86_64 (head, tail, count, len, alloc_size, the
/// fill/compress/bookmark bit fields), a jemalloc size class of its own.
pub const QUICKLIST_STRUCT_SIZE: usize = 48;
/// `sizeof(quicklistNode)` (prev, next, entry, sz, the count/flags bit fields)
/// rounded to its jemalloc class.
pub const NODE_STRUCT_SIZE: usize = 40;

/// The node sizes a negative fill selects (`optimization_level`).
const OPTIMIZATION_LEVEL: [usize; 5] = [4096, 8192, 16384, 32768, 65536];
/// A node limited by entry count still stays under this many bytes.
const SIZE_SAFETY_LIMIT: usize = 8192;
/// What `quicklistNodeAllowInsert` adds for an entry's encoding overhead.
const SIZE_ESTIMATE_OVERHEAD: usize = 8;
/// `FILL_MAX`: the largest fill the 16-bit field holds.
const FILL_MAX: i64 = (1 << 15) - 1;
/// `COMPRESS_MAX`.
const COMPRESS_MAX: i64 = (1 << 16) - 1;
/// C's `SIZE_MAX` and `UINT_MAX` as `quicklistNodeLimit` returns them for "no
/// limit of this kind".
const NO_SIZE_LIMIT: u64 = u64::MAX;
const NO_COUNT_LIMIT: u64 = u32::MAX as u64;

thread_local! {
    /// `packed_threshold` (DEBUG QUICKLIST-PACKED-THRESHOLD; 0: the fill
    /// decides). Redis has one per process; the core keeps one per thread, which
    /// is the same for a server (one thread runs all its commands) and keeps
    /// servers in parallel tests apart.
    static PACKED_THRESHOLD: Cell<usize> = const { Cell::new(0) };
}

/// `quicklistSetPackedThreshold`: refuses values at or slightly below 4 GB.
pub fn set_packed_threshold(bytes: u64) -> bool {
    if bytes > (1u64 << 32) - (1 << 20) {
        return false;
    }
    PACKED_THRESHOLD.with(|t| t.set(bytes as usize));
    true
}

pub fn packed_threshold() -> usize {
    PACKED_THRESHOLD.with(Cell::get)
}

/// `quicklistNodeNegFillLimit`.
fn neg_fill_limit(fill: i64) -> usize {
    let offset = (-(fill as i128) - 1).clamp(0, OPTIMIZATION_LEVEL.len() as i128 - 1);
    OPTIMIZATION_LEVEL[offset as usize]
}

/// `quicklistNodeLimit`: the size limit and the count limit of `fill`, with
/// [`NO_SIZE_LIMIT`] / [`NO_COUNT_LIMIT`] for the kind that does not apply.
pub fn node_limit(fill: i64) -> (u64, u64) {
    if fill >= 0 {
        let count = if fill == 0 { 1 } else { fill as u32 as u64 };
        (NO_SIZE_LIMIT, count)
    } else {
        (neg_fill_limit(fill) as u64, NO_COUNT_LIMIT)
    }
}

/// `quicklistNodeExceedsLimit`: would a node of `new_sz` bytes and `new_count`
/// entries be over `fill`'s limit?
pub fn exceeds_limit(fill: i64, new_sz: usize, new_count: u64) -> bool {
    let (sz_limit, count_limit) = node_limit(fill);
    if sz_limit != NO_SIZE_LIMIT {
        new_sz as u64 > sz_limit
    } else {
        new_sz > SIZE_SAFETY_LIMIT || new_count > count_limit
    }
}

/// One node: a listpack, or a single large element on its own.
#[derive(Clone, Debug, PartialEq)]
pub enum Node {
    Packed(Listpack),
    Plain(Box<[u8]>),
}

impl Node {
    pub fn count(&self) -> usize {
        match self {
            Node::Packed(lp) => lp.len(),
            Node::Plain(_) => 1,
        }
    }

    /// `node->sz`: the listpack's bytes, or the plain element's length.
    pub fn sz(&self) -> usize {
        match self {
            Node::Packed(lp) => lp.bytes(),
            Node::Plain(v) => v.len(),
        }
    }

    pub fn is_plain(&self) -> bool {
        matches!(self, Node::Plain(_))
    }

    fn get(&self, offset: usize) -> &[u8] {
        match self {
            Node::Packed(lp) => lp.get(offset).expect("offset within the node"),
            Node::Plain(v) => v,
        }
    }

    fn packed_mut(&mut self) -> &mut Listpack {
        match self {
            Node::Packed(lp) => lp,
            Node::Plain(_) => unreachable!("a plain node has no listpack"),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Quicklist {
    nodes: VecDeque<Node>,
    count: usize,
    fill: i64,
    compress: i64,
}

impl Quicklist {
    /// `quicklistNew(fill, compress)`, with the same clamping.
    pub fn new(fill: i64, compress: i64) -> Quicklist {
        Quicklist {
            nodes: VecDeque::new(),
            count: 0,
            fill: fill.clamp(-5, FILL_MAX),
            compress: compress.clamp(0, COMPRESS_MAX),
        }
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Number of nodes (`ql->len`).
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    pub fn nodes(&self) -> impl Iterator<Item = &Node> {
        self.nodes.iter()
    }

    pub fn fill(&self) -> i64 {
        self.fill
    }

    pub fn compress_depth(&self) -> i64 {
        self.compress
    }

    /// `quicklistAllocSize`.
    pub fn alloc_size(&self) -> usize {
        QUICKLIST_STRUCT_SIZE
            + self
                .nodes
                .iter()
                .map(|n| NODE_STRUCT_SIZE + n.sz())
                .sum::<usize>()
    }

    /// `isLargeElement`.
    fn is_large(&self, sz: usize) -> bool {
        let threshold = packed_threshold();
        if threshold != 0 {
            sz >= threshold
        } else if self.fill >= 0 {
            sz > SIZE_SAFETY_LIMIT
        } else {
            sz > neg_fill_limit(self.fill)
        }
    }

    /// `_quicklistNodeAllowInsert` for the node at `at`, if any.
    fn allow_insert(&self, at: Option<usize>, sz: usize) -> bool {
        let Some(node) = at.and_then(|i| self.nodes.get(i)) else {
            return false;
        };
        if node.is_plain() || self.is_large(sz) {
            return false;
        }
        let new_sz = node.sz() + sz + SIZE_ESTIMATE_OVERHEAD;
        !exceeds_limit(self.fill, new_sz, node.count() as u64 + 1)
    }

    /// `_quicklistNodeAllowMerge` for the nodes at `a` and `b`.
    fn allow_merge(&self, a: usize, b: usize) -> bool {
        let (Some(na), Some(nb)) = (self.nodes.get(a), self.nodes.get(b)) else {
            return false;
        };
        if na.is_plain() || nb.is_plain() {
            return false;
        }
        // One header and end byte go away (`- 7`).
        let merge_sz = na.sz() + nb.sz() - EMPTY_BYTES;
        !exceeds_limit(self.fill, merge_sz, (na.count() + nb.count()) as u64)
    }

    // ----- pushes and pops -----

    /// `quicklistPushHead`.
    pub fn push_head(&mut self, value: &[u8]) {
        self.count += 1;
        if self.is_large(value.len()) {
            self.nodes.push_front(Node::Plain(value.into()));
        } else if self.allow_insert(Some(0), value.len()) {
            self.nodes[0].packed_mut().push_front(value);
        } else {
            self.nodes.push_front(Node::Packed(Listpack::single(value)));
        }
    }

    /// `quicklistPushTail`.
    pub fn push_tail(&mut self, value: &[u8]) {
        self.count += 1;
        let last = self.nodes.len().checked_sub(1);
        if self.is_large(value.len()) {
            self.nodes.push_back(Node::Plain(value.into()));
        } else if self.allow_insert(last, value.len()) {
            self.nodes[last.unwrap()].packed_mut().push_back(value);
        } else {
            self.nodes.push_back(Node::Packed(Listpack::single(value)));
        }
    }

    /// `quicklistAppendListpack`: a whole listpack becomes the last node (how a
    /// listpack-encoded list turns into a quicklist).
    pub fn append_listpack(&mut self, lp: Listpack) {
        self.count += lp.len();
        self.nodes.push_back(Node::Packed(lp));
    }

    /// `quicklistAppendListpack` / `quicklistAppendPlainNode` for a node as an
    /// RDB file holds it.
    pub fn append_node(&mut self, node: Node) {
        if node.count() > 0 {
            self.count += node.count();
            self.nodes.push_back(node);
        }
    }

    /// Pops from the head or the tail. The flag says whether Redis hands the
    /// element back as an integer object (an integer entry of a listpack node).
    pub fn pop(&mut self, tail: bool) -> Option<(Vec<u8>, bool)> {
        let at = if tail {
            self.nodes.len().checked_sub(1)?
        } else {
            0
        };
        let node = self.nodes.get_mut(at)?;
        self.count -= 1;
        let popped = match node {
            Node::Plain(_) => {
                let Some(Node::Plain(v)) = self.nodes.remove(at) else {
                    unreachable!()
                };
                return Some((v.into_vec(), false));
            }
            Node::Packed(lp) => {
                let v = if tail { lp.pop_back() } else { lp.pop_front() }?;
                let int = is_integer_entry(&v);
                (v, int)
            }
        };
        if self.nodes[at].count() == 0 {
            self.nodes.remove(at);
        }
        Some(popped)
    }

    // ----- reading -----

    /// The node and offset holding element `index` (< len), found from the
    /// nearer end as `quicklistInitIteratorAtIdx` does.
    pub fn locate(&self, index: usize) -> Option<(usize, usize)> {
        if index >= self.count {
            return None;
        }
        if index <= (self.count - 1) / 2 {
            let mut accum = 0;
            for (i, n) in self.nodes.iter().enumerate() {
                if accum + n.count() > index {
                    return Some((i, index - accum));
                }
                accum += n.count();
            }
        } else {
            let from_tail = self.count - 1 - index;
            let mut accum = 0;
            for (i, n) in self.nodes.iter().enumerate().rev() {
                if accum + n.count() > from_tail {
                    return Some((i, n.count() - 1 - (from_tail - accum)));
                }
                accum += n.count();
            }
        }
        None
    }

    pub fn get(&self, index: usize) -> Option<&[u8]> {
        let (node, offset) = self.locate(index)?;
        Some(self.nodes[node].get(offset))
    }

    /// The elements from `index` on, towards the tail (or the head if `reverse`).
    pub fn iter_from(&self, index: usize, reverse: bool) -> Iter<'_> {
        let pos = self.locate(index);
        Iter {
            ql: self,
            pos,
            reverse,
        }
    }

    // ----- node surgery -----

    /// `_quicklistSplitNode`: with `after`, the node keeps `[0, offset]` and the
    /// returned listpack holds the rest; without, the returned one holds
    /// `[0, offset)` and the node keeps the rest. The caller inserts it.
    fn split_node(&mut self, at: usize, offset: usize, after: bool) -> Listpack {
        let lp = self.nodes[at].packed_mut();
        if after {
            lp.split_off(offset + 1)
        } else {
            let tail = lp.split_off(offset);
            std::mem::replace(lp, tail)
        }
    }

    /// `_quicklistListpackMerge` of the adjacent nodes `a` and `a + 1`: one
    /// node at `a` afterwards.
    fn merge_pair(&mut self, a: usize) {
        let Some(Node::Packed(right)) = self.nodes.remove(a + 1) else {
            unreachable!("only packed nodes merge")
        };
        self.nodes[a].packed_mut().append(right);
    }

    /// `_quicklistMergeNodes` around `center`: (prev-prev, prev), (next,
    /// next-next), (prev, center), then (center, next). Returns where the
    /// center ended up.
    fn merge_around(&mut self, mut center: usize) -> usize {
        if center >= 2 && self.allow_merge(center - 1, center - 2) {
            self.merge_pair(center - 2);
            center -= 1;
        }
        if self.allow_merge(center + 1, center + 2) {
            self.merge_pair(center + 1);
        }
        let target = if center >= 1 && self.allow_merge(center, center - 1) {
            self.merge_pair(center - 1);
            center - 1
        } else {
            center
        };
        if self.allow_merge(target, target + 1) {
            self.merge_pair(target);
        }
        target
    }

    /// `__quicklistDelNode` (the count goes with it).
    fn delete_node(&mut self, at: usize) {
        if let Some(node) = self.nodes.remove(at) {
            self.count -= node.count();
        }
    }

    /// `_quicklistInsert`: `value` before or after the element at `offset` of
    /// node `at`.
    pub fn insert(&mut self, at: usize, offset: usize, value: &[u8], after: bool) {
        let sz = value.len();
        let node_count = self.nodes[at].count();
        let full = !self.allow_insert(Some(at), sz);
        let (mut at_tail, mut at_head, mut avail_next, mut avail_prev) =
            (false, false, false, false);
        if after && offset == node_count - 1 {
            at_tail = true;
            avail_next = self.allow_insert(Some(at + 1), sz);
        }
        if !after && offset == 0 {
            at_head = true;
            avail_prev = at > 0 && self.allow_insert(Some(at - 1), sz);
        }
        self.count += 1;

        if self.is_large(sz) {
            let plain = Node::Plain(value.into());
            if self.nodes[at].is_plain() || (at_tail && after) || (at_head && !after) {
                self.nodes.insert(if after { at + 1 } else { at }, plain);
            } else {
                let split = Node::Packed(self.split_node(at, offset, after));
                if after {
                    self.nodes.insert(at + 1, plain);
                    self.nodes.insert(at + 2, split);
                } else {
                    self.nodes.insert(at, plain);
                    self.nodes.insert(at, split);
                }
            }
            return;
        }

        if !full {
            let lp = self.nodes[at].packed_mut();
            lp.insert(if after { offset + 1 } else { offset }, value);
        } else if at_tail && avail_next && after {
            self.nodes[at + 1].packed_mut().push_front(value);
        } else if at_head && avail_prev && !after {
            self.nodes[at - 1].packed_mut().push_back(value);
        } else if (at_tail && !avail_next && after) || (at_head && !avail_prev && !after) {
            let node = Node::Packed(Listpack::single(value));
            self.nodes.insert(if after { at + 1 } else { at }, node);
        } else {
            // Full, in the middle: split at the insert point.
            let mut split = self.split_node(at, offset, after);
            let center = if after {
                split.push_front(value);
                self.nodes.insert(at + 1, Node::Packed(split));
                at
            } else {
                split.push_back(value);
                self.nodes.insert(at, Node::Packed(split));
                at + 1
            };
            self.merge_around(center);
        }
    }

    /// `quicklistReplaceAtIndex` / `quicklistReplaceEntry`. False if `index` is
    /// out of range.
    pub fn replace(&mut self, index: usize, value: &[u8]) -> bool {
        let Some((at, offset)) = self.locate(index) else {
            return false;
        };
        let large = self.is_large(value.len());
        match &mut self.nodes[at] {
            Node::Packed(lp) if !large => lp.replace(offset, value),
            Node::Plain(v) if large => *v = value.into(),
            Node::Plain(_) => {
                // A small element takes the plain node's place: inserted after
                // it (into the next node if that has room), then the node goes.
                self.insert(at, 0, value, true);
                self.delete_node(at);
            }
            Node::Packed(_) => {
                // A large element in a listpack node: the node is split after
                // the element, a plain node goes in between, and the element
                // leaves the node's tail.
                let node_count = self.nodes[at].count();
                let split = (offset != node_count - 1).then(|| self.split_node(at, offset, true));
                self.nodes.insert(at + 1, Node::Plain(value.into()));
                if let Some(split) = split {
                    self.nodes.insert(at + 2, Node::Packed(split));
                }
                self.count += 1;
                if self.nodes[at].count() == 1 {
                    self.delete_node(at);
                } else {
                    self.nodes[at].packed_mut().pop_back();
                    self.count -= 1;
                    self.merge_around(at + 1);
                }
            }
        }
        true
    }

    /// `quicklistDelRange` from element `start` (< len) on, `n` elements at
    /// most. Whole nodes go at once; nothing merges.
    pub fn delete_range(&mut self, start: usize, n: usize) {
        if n == 0 {
            return;
        }
        let Some((mut at, mut offset)) = self.locate(start) else {
            return;
        };
        let mut extent = n.min(self.count - start);
        while extent > 0 {
            let node_count = self.nodes[at].count();
            let del = extent.min(node_count - offset);
            if (offset == 0 && extent >= node_count) || self.nodes[at].is_plain() {
                self.delete_node(at);
            } else {
                self.nodes[at].packed_mut().delete_range(offset, del);
                self.count -= del;
                if self.nodes[at].count() == 0 {
                    self.nodes.remove(at);
                } else {
                    at += 1;
                }
            }
            extent -= del;
            offset = 0;
        }
    }

    /// Deletes the elements at `positions` (ascending list indexes), one by one
    /// as LREM's iterator does (`quicklistDelEntry`): nodes shrink, empty ones
    /// go.
    pub fn remove_positions(&mut self, positions: &[usize]) {
        let mut at = 0;
        let mut first = 0; // list index of the node's first element
        let mut p = 0;
        while p < positions.len() && at < self.nodes.len() {
            let count = self.nodes[at].count();
            let end = positions[p..].partition_point(|&i| i < first + count) + p;
            if end > p {
                let local: Vec<usize> = positions[p..end].iter().map(|&i| i - first).collect();
                self.count -= local.len();
                match &mut self.nodes[at] {
                    Node::Plain(_) => {
                        self.nodes.remove(at);
                    }
                    Node::Packed(lp) => {
                        lp.remove_positions(&local);
                        if lp.is_empty() {
                            self.nodes.remove(at);
                        } else {
                            at += 1;
                        }
                    }
                }
                p = end;
            } else {
                at += 1;
            }
            first += count;
        }
    }

    /// The single packed node's listpack, if this quicklist is one packed node
    /// (the only shape `listTypeTryConvertQuicklist` turns back).
    pub fn single_packed(&self) -> Option<&Listpack> {
        match (self.nodes.len(), self.nodes.front()) {
            (1, Some(Node::Packed(lp))) => Some(lp),
            _ => None,
        }
    }

    /// Takes the listpack out of a one-node quicklist.
    pub fn into_single_listpack(mut self) -> Listpack {
        match self.nodes.pop_front() {
            Some(Node::Packed(lp)) if self.nodes.is_empty() => lp,
            _ => panic!("into_single_listpack on a quicklist that is not one packed node"),
        }
    }
}

/// Walks a quicklist from a position towards the tail or the head.
pub struct Iter<'a> {
    ql: &'a Quicklist,
    pos: Option<(usize, usize)>,
    reverse: bool,
}

impl<'a> Iterator for Iter<'a> {
    type Item = &'a [u8];

    fn next(&mut self) -> Option<&'a [u8]> {
        let (at, offset) = self.pos?;
        let node = &self.ql.nodes[at];
        let item = node.get(offset);
        self.pos = if self.reverse {
            if offset > 0 {
                Some((at, offset - 1))
            } else if at > 0 {
                Some((at - 1, self.ql.nodes[at - 1].count() - 1))
            } else {
                None
            }
        } else if offset + 1 < node.count() {
            Some((at, offset + 1))
        } else if at + 1 < self.ql.nodes.len() {
            Some((at + 1, 0))
        } else {
            None
        };
        Some(item)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(ql: &Quicklist) -> Vec<(bool, usize)> {
        ql.nodes().map(|n| (n.is_plain(), n.count())).collect()
    }

    fn contents(ql: &Quicklist) -> Vec<Vec<u8>> {
        ql.iter_from(0, false).map(|v| v.to_vec()).collect()
    }

    #[test]
    fn limits_follow_the_fill_factor() {
        assert_eq!(node_limit(-2), (8192, u32::MAX as u64));
        assert_eq!(node_limit(-9), (65536, u32::MAX as u64));
        assert_eq!(node_limit(0), (u64::MAX, 1));
        assert!(exceeds_limit(-2, 8193, 1));
        assert!(!exceeds_limit(-2, 8192, 100_000));
        assert!(exceeds_limit(5, 100, 6));
        assert!(exceeds_limit(5, 8193, 2));
        assert!(!exceeds_limit(5, 8192, 5));
        assert_eq!(Quicklist::new(100_000, 0).fill(), 32767);
        assert_eq!(Quicklist::new(-100, 0).fill(), -5);
    }

    #[test]
    fn pushes_fill_a_node_then_start_another() {
        // fill 3: three entries per node.
        let mut ql = Quicklist::new(3, 0);
        for i in 0..7 {
            ql.push_tail(format!("{i}").as_bytes());
        }
        assert_eq!(shape(&ql), vec![(false, 3), (false, 3), (false, 1)]);
        ql.push_head(b"h");
        assert_eq!(
            shape(&ql),
            vec![(false, 1), (false, 3), (false, 3), (false, 1)]
        );
        // 48 + 4 nodes * 40 + listpacks: 7 + 2 bytes per small entry.
        assert_eq!(ql.alloc_size(), 48 + 160 + (7 + 3) + (7 + 6) * 2 + (7 + 2));
    }

    #[test]
    fn a_size_fill_counts_bytes_with_the_estimate() {
        let mut ql = Quicklist::new(-1, 0); // 4096 bytes per node
        let v = vec![b'a'; 1000]; // entry of 1000 + 2 + 2 bytes
        for _ in 0..5 {
            ql.push_tail(&v);
        }
        // 7 + 3 * 1004 = 3019; + 1000 + 8 = 4027 fits; 4023 + 1008 does not.
        assert_eq!(shape(&ql), vec![(false, 4), (false, 1)]);
        // Larger than the node limit: a plain node.
        ql.push_tail(&vec![b'b'; 4097]);
        assert_eq!(shape(&ql).last(), Some(&(true, 1)));
        assert_eq!(ql.nodes().last().unwrap().sz(), 4097);
    }

    #[test]
    fn an_insert_into_a_full_node_splits_and_merges() {
        let mut ql = Quicklist::new(4, 0);
        for i in 0..12 {
            ql.push_tail(format!("{i}").as_bytes());
        }
        assert_eq!(shape(&ql), vec![(false, 4), (false, 4), (false, 4)]);
        // Into the middle of the full middle node: split after offset 1.
        ql.insert(1, 1, b"x", true);
        assert_eq!(
            shape(&ql),
            vec![(false, 4), (false, 2), (false, 3), (false, 4)]
        );
        assert_eq!(
            contents(&ql)[4..8].to_vec(),
            vec![b"4".to_vec(), b"5".to_vec(), b"x".to_vec(), b"6".to_vec()]
        );
        ql.delete_range(0, 3);
        assert_eq!(
            shape(&ql),
            vec![(false, 1), (false, 2), (false, 3), (false, 4)]
        );
        // A full middle node again; the split halves merge with neighbours.
        ql.insert(2, 1, b"y", false);
        // node 2 (3 entries) is not full: inserted in place.
        assert_eq!(
            shape(&ql),
            vec![(false, 1), (false, 2), (false, 4), (false, 4)]
        );
        ql.insert(3, 2, b"z", false);
        // Split [0,2) | [2,4): [a b z] before, merged with nothing (4+3 > 4).
        assert_eq!(
            shape(&ql),
            vec![(false, 1), (false, 2), (false, 4), (false, 3), (false, 2)]
        );
        // prev-prev (1) + prev (2) merge once a split happens next to them.
        ql.insert(2, 1, b"w", true);
        assert_eq!(ql.len(), contents(&ql).len());
        assert!(ql.nodes().all(|n| n.count() <= 4));
    }

    #[test]
    fn inserting_at_a_full_edge_uses_the_neighbour_or_a_new_node() {
        let mut ql = Quicklist::new(2, 0);
        for v in [b"a", b"b", b"c"] {
            ql.push_tail(v);
        }
        assert_eq!(shape(&ql), vec![(false, 2), (false, 1)]);
        // After "b", the tail of a full node: next has room.
        ql.insert(0, 1, b"x", true);
        assert_eq!(shape(&ql), vec![(false, 2), (false, 2)]);
        // Before "a", head of a full node, no previous: new node.
        ql.insert(0, 0, b"y", false);
        assert_eq!(shape(&ql), vec![(false, 1), (false, 2), (false, 2)]);
        assert_eq!(
            contents(&ql),
            [b"y", b"a", b"b", b"x", b"c"].map(|v| v.to_vec())
        );
    }

    #[test]
    fn replacing_with_a_large_element_splits_around_a_plain_node() {
        let mut ql = Quicklist::new(-2, 0);
        for i in 0..5 {
            ql.push_tail(format!("e{i}").as_bytes());
        }
        let big = vec![b'B'; 9000];
        assert!(ql.replace(2, &big));
        assert_eq!(shape(&ql), vec![(false, 2), (true, 1), (false, 2)]);
        // Back to a small one: it goes into the next node, the plain one goes.
        assert!(ql.replace(2, b"s"));
        assert_eq!(shape(&ql), vec![(false, 2), (false, 3)]);
        assert_eq!(contents(&ql)[2], b"s");
        // The last element of a node replaced by a large one: no split.
        assert!(ql.replace(1, &big));
        assert_eq!(shape(&ql), vec![(false, 1), (true, 1), (false, 3)]);
        assert!(!ql.replace(5, b"x"));
    }

    #[test]
    fn deletes_shrink_and_drop_nodes_without_merging() {
        let mut ql = Quicklist::new(3, 0);
        for i in 0..9 {
            ql.push_tail(format!("{i}").as_bytes());
        }
        ql.delete_range(2, 5);
        assert_eq!(shape(&ql), vec![(false, 2), (false, 2)]);
        assert_eq!(contents(&ql), [b"0", b"1", b"7", b"8"].map(|v| v.to_vec()));
        ql.remove_positions(&[0, 1, 3]);
        assert_eq!(shape(&ql), vec![(false, 1)]);
        assert_eq!(ql.pop(true), Some((b"7".to_vec(), true)));
        assert!(ql.is_empty() && ql.node_count() == 0);
    }

    #[test]
    fn locate_and_iterate_from_either_end() {
        let mut ql = Quicklist::new(2, 0);
        for i in 0..5 {
            ql.push_tail(format!("{i}").as_bytes());
        }
        assert_eq!(ql.locate(0), Some((0, 0)));
        assert_eq!(ql.locate(3), Some((1, 1)));
        assert_eq!(ql.locate(4), Some((2, 0)));
        assert_eq!(ql.locate(5), None);
        let back: Vec<&[u8]> = ql.iter_from(3, true).collect();
        assert_eq!(back, vec![&b"3"[..], b"2", b"1", b"0"]);
    }
}
