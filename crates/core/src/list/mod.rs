//! The list type as Redis 7+/8 keeps it (src/t_list.c): one listpack while the
//! list is small, a quicklist of listpacks beyond `list-max-listpack-size`.
//!
//! The encoding changes at the points `listTypeTryConversion` decides:
//!
//! * **Growing** (before LPUSH/RPUSH/LINSERT/LSET/LMOVE add elements): a
//!   listpack becomes a quicklist if its bytes plus the new elements' lengths,
//!   or its length plus their number, would exceed the limit the *current*
//!   `list-max-listpack-size` sets (`quicklistNodeExceedsLimit`). The listpack
//!   becomes the quicklist's first node as it is, whatever its size.
//! * **Shrinking** (after pops, LREM, LTRIM, LSET): a quicklist of one packed
//!   node becomes a listpack again only below *half* the limit (half the bytes,
//!   or half the count), so a list at the boundary does not flip on every
//!   push and pop.
//! * **Built whole** (SORT ... STORE, loading by DEBUG RELOAD): a quicklist of
//!   one packed node within the full limit becomes a listpack.
//!
//! A quicklist keeps the fill it was created with; later CONFIG SETs of
//! `list-max-listpack-size` apply to conversions and to new lists only, as in
//! Redis.
//!
//! How this differs from the C code: the iterator API of t_list.c is replaced
//! by whole operations (remove the matching elements, insert at a pivot, the
//! elements of a range), which touch the nodes in the same way.

pub mod listpack;
pub mod quicklist;

use listpack::Listpack;
use quicklist::{exceeds_limit, node_limit, Quicklist};

/// The list parameters a conversion reads, from the server's config.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListConfig {
    /// `list-max-listpack-size`.
    pub fill: i64,
    /// `list-compress-depth` (kept, not applied: nodes are not compressed).
    pub compress: i64,
}

impl Default for ListConfig {
    fn default() -> ListConfig {
        ListConfig {
            fill: -2,
            compress: 0,
        }
    }
}

impl ListConfig {
    pub fn of(config: &crate::server::config::Config) -> ListConfig {
        ListConfig {
            fill: config.list_max_listpack_size,
            compress: config.list_compress_depth,
        }
    }
}

/// Which end of a list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// LEFT: the head, index 0.
    Head,
    /// RIGHT: the tail, index -1.
    Tail,
}

/// An element popped from a list, and whether Redis would hold it as an
/// integer object (a quicklist pop of an integer entry): such an element does
/// not count its length when LMOVE's destination checks its size.
#[derive(Clone, Debug, PartialEq)]
pub struct Popped {
    pub value: Vec<u8>,
    pub int_object: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub enum List {
    Listpack(Listpack),
    Quicklist(Quicklist),
}

impl Default for List {
    fn default() -> List {
        List::new()
    }
}

impl List {
    /// `createListListpackObject`: a new list starts as an empty listpack.
    pub fn new() -> List {
        List::Listpack(Listpack::new())
    }

    /// `createQuicklistObject`: what SORT ... STORE fills before converting.
    pub fn new_quicklist(cfg: ListConfig) -> List {
        List::Quicklist(Quicklist::new(cfg.fill, cfg.compress))
    }

    /// OBJECT ENCODING's name.
    pub fn encoding_name(&self) -> &'static str {
        match self {
            List::Listpack(_) => "listpack",
            List::Quicklist(_) => "quicklist",
        }
    }

    pub fn len(&self) -> usize {
        match self {
            List::Listpack(lp) => lp.len(),
            List::Quicklist(ql) => ql.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `listTypeAllocSize`: the listpack's bytes, or the quicklist's accounted
    /// size.
    pub fn alloc_size(&self) -> usize {
        match self {
            List::Listpack(lp) => lp.bytes(),
            List::Quicklist(ql) => ql.alloc_size(),
        }
    }

    pub fn quicklist(&self) -> Option<&Quicklist> {
        match self {
            List::Quicklist(ql) => Some(ql),
            List::Listpack(_) => None,
        }
    }

    // ----- conversions -----

    /// `listTypeTryConvertListpack`, before adding `add_len` elements whose
    /// string lengths total `add_bytes`.
    pub fn convert_for_growth(&mut self, cfg: ListConfig, add_bytes: usize, add_len: usize) {
        if !self.grows_out_of_listpack(cfg, add_bytes, add_len) {
            return;
        }
        let List::Listpack(lp) = self else {
            return;
        };
        let lp = std::mem::take(lp);
        let mut ql = Quicklist::new(cfg.fill, cfg.compress);
        if !lp.is_empty() {
            ql.append_listpack(lp);
        }
        *self = List::Quicklist(ql);
    }

    /// Whether [`List::convert_for_growth`] would turn this listpack into a
    /// quicklist.
    pub fn grows_out_of_listpack(&self, cfg: ListConfig, add_bytes: usize, add_len: usize) -> bool {
        let List::Listpack(lp) = self else {
            return false;
        };
        // `lpLength + add_length` is passed as an `unsigned int`.
        let new_count = (lp.len() as u64 + add_len as u64) as u32 as u64;
        exceeds_limit(cfg.fill, lp.bytes().saturating_add(add_bytes), new_count)
    }

    /// `listTypeTryConvertQuicklist`: a quicklist of a single packed node within
    /// the limit (half of it when `shrinking`) becomes a listpack.
    fn convert_quicklist(&mut self, cfg: ListConfig, shrinking: bool) {
        let List::Quicklist(ql) = self else {
            return;
        };
        let Some(lp) = ql.single_packed() else {
            return;
        };
        let (mut sz_limit, mut count_limit) = node_limit(cfg.fill);
        if shrinking {
            sz_limit /= 2;
            count_limit /= 2;
        }
        if lp.bytes() as u64 > sz_limit || ql.len() as u64 > count_limit {
            return;
        }
        let ql = std::mem::replace(ql, Quicklist::new(-2, 0));
        *self = List::Listpack(ql.into_single_listpack());
    }

    /// `listTypeTryConversion(LIST_CONV_SHRINKING)`, after elements went.
    pub fn convert_after_shrink(&mut self, cfg: ListConfig) {
        self.convert_quicklist(cfg, true);
    }

    /// `listTypeTryConversion(LIST_CONV_AUTO)`, for a list built whole.
    pub fn convert_auto(&mut self, cfg: ListConfig) {
        match self {
            List::Quicklist(_) => self.convert_quicklist(cfg, false),
            List::Listpack(_) => self.convert_for_growth(cfg, 0, 0),
        }
    }

    // ----- ends -----

    /// `listTypePush`.
    pub fn push(&mut self, value: &[u8], end: End) {
        match (self, end) {
            (List::Listpack(lp), End::Head) => lp.push_front(value),
            (List::Listpack(lp), End::Tail) => lp.push_back(value),
            (List::Quicklist(ql), End::Head) => ql.push_head(value),
            (List::Quicklist(ql), End::Tail) => ql.push_tail(value),
        }
    }

    /// `listTypePop`.
    pub fn pop(&mut self, end: End) -> Option<Popped> {
        let tail = end == End::Tail;
        match self {
            List::Listpack(lp) => {
                let value = if tail { lp.pop_back() } else { lp.pop_front() }?;
                Some(Popped {
                    value,
                    int_object: false,
                })
            }
            List::Quicklist(ql) => {
                let (value, int_object) = ql.pop(tail)?;
                Some(Popped { value, int_object })
            }
        }
    }

    // ----- reading -----

    /// Resolves a possibly negative index to a position, if it is in range.
    pub fn position(&self, index: i64) -> Option<usize> {
        let len = self.len() as i64;
        let at = if index < 0 { len + index } else { index };
        (0..len).contains(&at).then_some(at as usize)
    }

    /// LINDEX.
    pub fn get(&self, index: i64) -> Option<&[u8]> {
        let at = self.position(index)?;
        match self {
            List::Listpack(lp) => lp.get(at),
            List::Quicklist(ql) => ql.get(at),
        }
    }

    /// The elements from position `at` on, towards the tail, or towards the
    /// head with `reverse`.
    pub fn iter_from(&self, at: usize, reverse: bool) -> Box<dyn Iterator<Item = &[u8]> + '_> {
        match self {
            List::Listpack(lp) if reverse => {
                let skip = lp.len().saturating_sub(at + 1);
                Box::new(lp.iter().rev().skip(skip))
            }
            List::Listpack(lp) => Box::new(lp.iter().skip(at)),
            List::Quicklist(ql) => Box::new(ql.iter_from(at, reverse)),
        }
    }

    pub fn iter(&self) -> Box<dyn Iterator<Item = &[u8]> + '_> {
        self.iter_from(0, false)
    }

    /// The clamped range `start..=end` of LRANGE (negative indexes from the
    /// end), as positions; `None` when it is empty.
    pub fn range_bounds(&self, start: i64, end: i64) -> Option<(usize, usize)> {
        let len = self.len() as i64;
        let mut start = if start < 0 {
            len.saturating_add(start)
        } else {
            start
        };
        let mut end = if end < 0 {
            len.saturating_add(end)
        } else {
            end
        };
        if start < 0 {
            start = 0;
        }
        if start > end || start >= len {
            return None;
        }
        if end >= len {
            end = len - 1;
        }
        Some((start as usize, end as usize))
    }

    // ----- changes in place -----

    /// `listTypeReplaceAtIndex`: false if the index is out of range.
    pub fn set(&mut self, index: i64, value: &[u8]) -> bool {
        let Some(at) = self.position(index) else {
            return false;
        };
        match self {
            List::Listpack(lp) => {
                lp.replace(at, value);
                true
            }
            List::Quicklist(ql) => ql.replace(at, value),
        }
    }

    /// LINSERT: `value` before or after the first element equal to `pivot`,
    /// searched from the head. False if there is no such element.
    pub fn insert_at_pivot(&mut self, pivot: &[u8], value: &[u8], after: bool) -> bool {
        let Some(at) = self.iter().position(|e| e == pivot) else {
            return false;
        };
        match self {
            List::Listpack(lp) => lp.insert(if after { at + 1 } else { at }, value),
            List::Quicklist(ql) => {
                let (node, offset) = ql.locate(at).expect("found above");
                ql.insert(node, offset, value, after);
            }
        }
        true
    }

    /// LREM: removes up to `limit` elements equal to `value` (all of them for
    /// 0), searching from the tail when `from_tail`. Returns how many went.
    pub fn remove_matching(&mut self, value: &[u8], limit: usize, from_tail: bool) -> usize {
        let len = self.len();
        let mut positions: Vec<usize> = Vec::new();
        let wanted = if limit == 0 { usize::MAX } else { limit };
        if from_tail {
            for (i, e) in self.iter_from(len.saturating_sub(1), true).enumerate() {
                if e == value {
                    positions.push(len - 1 - i);
                    if positions.len() == wanted {
                        break;
                    }
                }
            }
            positions.reverse();
        } else {
            for (i, e) in self.iter().enumerate() {
                if e == value {
                    positions.push(i);
                    if positions.len() == wanted {
                        break;
                    }
                }
            }
        }
        match self {
            List::Listpack(lp) => lp.remove_positions(&positions),
            List::Quicklist(ql) => ql.remove_positions(&positions),
        }
        positions.len()
    }

    /// `listTypeDelRange`: up to `n` elements from position `start` on.
    pub fn delete_range(&mut self, start: usize, n: usize) {
        if start >= self.len() {
            return;
        }
        match self {
            List::Listpack(lp) => lp.delete_range(start, n),
            List::Quicklist(ql) => ql.delete_range(start, n),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(fill: i64) -> ListConfig {
        ListConfig { fill, compress: 0 }
    }

    fn push_all(list: &mut List, cfg: ListConfig, values: &[&[u8]]) {
        let bytes = values.iter().map(|v| v.len()).sum();
        list.convert_for_growth(cfg, bytes, values.len());
        for v in values {
            list.push(v, End::Tail);
        }
    }

    #[test]
    fn a_listpack_turns_into_a_quicklist_past_the_count_limit() {
        let c = cfg(4);
        let mut l = List::new();
        push_all(&mut l, c, &[b"a", b"b", b"c", b"d"]);
        assert_eq!(l.encoding_name(), "listpack");
        push_all(&mut l, c, &[b"e"]);
        assert_eq!(l.encoding_name(), "quicklist");
        // The old listpack is the first node as it was; "e" needs a new one.
        let ql = l.quicklist().unwrap();
        assert_eq!(ql.nodes().map(|n| n.count()).collect::<Vec<_>>(), [4, 1]);
    }

    #[test]
    fn the_byte_limit_counts_the_new_elements_lengths() {
        let c = cfg(-1); // 4096 bytes
        let mut l = List::new();
        let v = vec![b'x'; 1000];
        push_all(&mut l, c, &[&v, &v, &v, &v]);
        // 7 + 4 * 1004 = 4023 <= 4096 before the check? The check is made before
        // pushing: 7 + 4000 = 4007 fits.
        assert_eq!(l.encoding_name(), "listpack");
        assert_eq!(l.alloc_size(), 4023);
        push_all(&mut l, c, &[&b"y"[..]; 74]);
        // 4023 + 74 = 4097 > 4096.
        assert_eq!(l.encoding_name(), "quicklist");
    }

    #[test]
    fn shrinking_converts_back_below_half_the_limit() {
        let c = cfg(10);
        let mut l = List::new();
        let values: Vec<Vec<u8>> = (0..11).map(|i| format!("{i}").into_bytes()).collect();
        let refs: Vec<&[u8]> = values.iter().map(|v| &v[..]).collect();
        push_all(&mut l, c, &refs);
        assert_eq!(l.encoding_name(), "quicklist");
        // 11 elements exceed the count at once: the (empty) listpack is
        // dropped and the quicklist fills nodes of 10: [10, 1].
        l.pop(End::Tail);
        l.convert_after_shrink(c);
        // One node of 10: not below half (5).
        assert_eq!(l.encoding_name(), "quicklist");
        l.delete_range(0, 5);
        l.convert_after_shrink(c);
        assert_eq!(l.encoding_name(), "listpack");
        assert_eq!(l.len(), 5);
        // Built whole: the full limit applies.
        let mut s = List::new_quicklist(c);
        for v in &refs[..10] {
            s.push(v, End::Tail);
        }
        s.convert_auto(c);
        assert_eq!(s.encoding_name(), "listpack");
    }

    #[test]
    fn a_plain_node_keeps_the_list_a_quicklist() {
        let c = cfg(-2);
        let mut l = List::new();
        push_all(&mut l, c, &[&vec![b'z'; 9000]]);
        assert_eq!(l.encoding_name(), "quicklist");
        assert!(l.quicklist().unwrap().nodes().next().unwrap().is_plain());
        // 48 + 40 + 9000.
        assert_eq!(l.alloc_size(), 9088);
        push_all(&mut l, c, &[b"a"]);
        l.pop(End::Head);
        l.convert_after_shrink(c);
        assert_eq!(l.encoding_name(), "listpack");
    }

    #[test]
    fn ranges_insert_and_remove() {
        let c = cfg(3);
        let mut l = List::new();
        push_all(&mut l, c, &[b"a", b"b", b"a", b"c", b"a", b"d", b"a"]);
        assert_eq!(l.range_bounds(-100, 100), Some((0, 6)));
        assert_eq!(l.range_bounds(5, 2), None);
        assert_eq!(l.range_bounds(i64::MIN, i64::MAX), Some((0, 6)));
        assert_eq!(l.get(-1), Some(&b"a"[..]));
        assert_eq!(l.get(7), None);
        assert_eq!(l.remove_matching(b"a", 2, true), 2);
        let all: Vec<&[u8]> = l.iter().collect();
        assert_eq!(all, vec![&b"a"[..], b"b", b"a", b"c", b"d"]);
        assert!(l.insert_at_pivot(b"c", b"X", false));
        assert!(!l.insert_at_pivot(b"zz", b"X", false));
        let back: Vec<&[u8]> = l.iter_from(3, true).collect();
        assert_eq!(back, vec![&b"X"[..], b"a", b"b", b"a"]);
    }
}
