//! The page arena both sorted-set layouts keep their records in: the
//! skiplist's nodes ([`super::skiplist`]) and the B+tree layout's member
//! records ([`super::btree::records`]). Redis has no such thing: each
//! `zskiplistNode` is its own `zmalloc`; here a record is a run of bytes in
//! a page, read in place (no `unsafe`), and addressed by a `u32` id.
//!
//! * An id is `(page << SHIFT) | offset`, the offset counted in units of
//!   `UNIT` bytes from the start of the page (the skiplist's records are
//!   4-byte aligned, the B+tree's 2-byte), so a page spans
//!   `UNIT << SHIFT` bytes of records and there are at most `2^(32 - SHIFT)`
//!   pages.
//! * Records are laid end to end in the page being filled; the first page
//!   grows by doubling (from 256 bytes up to a full page), so a small set
//!   stays small; once it is full, each next page is allocated whole.
//! * A record over [`OWN_PAGE_BYTES`] has a page of its own, exactly its
//!   size, freed with it (its page number is reused by the next big record).
//! * A freed record waits on a free list per size (in units) for the next
//!   record of that size; the arena never moves a record.
//!
//! The arena knows nothing of what a record holds: its owner says how many
//! units a record takes when it allocates and frees it.

use std::collections::HashMap;

/// A record bigger than this (a member of more than about 16 KB) gets a page
/// of its own; smaller ones share pages.
pub(crate) const OWN_PAGE_BYTES: usize = 16 * 1024;

/// Records of `UNIT`-byte units in pages addressed by the low `SHIFT` bits of
/// a `u32` id. See the module documentation.
#[derive(Clone, Debug)]
pub(crate) struct Pages<const UNIT: usize, const SHIFT: u32> {
    pages: Vec<Vec<u8>>,
    /// The shared page new records are appended to.
    fill: usize,
    /// Freed records by size in units, reused by the next record of that size.
    free: HashMap<usize, Vec<u32>>,
    /// Pages emptied by freeing their one big record.
    free_pages: Vec<usize>,
}

impl<const UNIT: usize, const SHIFT: u32> Default for Pages<UNIT, SHIFT> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const UNIT: usize, const SHIFT: u32> Pages<UNIT, SHIFT> {
    /// Units in a page: the offset part of an id.
    pub(crate) const PAGE_UNITS: usize = 1 << SHIFT;
    const PAGE_BYTES: usize = Self::PAGE_UNITS * UNIT;
    const MAX_PAGES: usize = 1 << (32 - SHIFT);

    /// An empty arena (one empty shared page, nothing allocated).
    pub(crate) fn new() -> Self {
        Pages {
            pages: vec![Vec::new()],
            fill: 0,
            free: HashMap::new(),
            free_pages: Vec::new(),
        }
    }

    /// The bytes from record `id` to the end of its page.
    #[inline(always)]
    pub(crate) fn bytes(&self, id: u32) -> &[u8] {
        let page = &self.pages[(id >> SHIFT) as usize];
        &page[(id as usize & (Self::PAGE_UNITS - 1)) * UNIT..]
    }

    #[inline(always)]
    pub(crate) fn bytes_mut(&mut self, id: u32) -> &mut [u8] {
        let page = &mut self.pages[(id >> SHIFT) as usize];
        &mut page[(id as usize & (Self::PAGE_UNITS - 1)) * UNIT..]
    }

    /// Room for a record of `units` units: a freed record of that size, else
    /// new room. Its bytes are whatever was there (zeros when new).
    pub(crate) fn alloc(&mut self, units: usize) -> u32 {
        match self.free.get_mut(&units).and_then(Vec::pop) {
            Some(id) => id,
            None => self.carve(units),
        }
    }

    /// Room for `units` units that no freed record provides.
    fn carve(&mut self, units: usize) -> u32 {
        let bytes = units * UNIT;
        let page_id = |page: usize| {
            assert!(page < Self::MAX_PAGES, "zset record arena full");
            (page as u32) << SHIFT
        };
        if bytes > OWN_PAGE_BYTES {
            let buf = vec![0u8; bytes];
            let page = match self.free_pages.pop() {
                Some(p) => {
                    self.pages[p] = buf;
                    p
                }
                None => {
                    self.pages.push(buf);
                    self.pages.len() - 1
                }
            };
            return page_id(page);
        }
        if self.pages[self.fill].len() + bytes > Self::PAGE_BYTES {
            // A set that has filled a page will fill the next: it starts at
            // full size (one allocation, no copies while it doubles, and one
            // huge page where the allocator maps big blocks on them).
            self.pages.push(Vec::with_capacity(Self::PAGE_BYTES));
            self.fill = self.pages.len() - 1;
        }
        let page = &mut self.pages[self.fill];
        let at = page.len();
        if at + bytes > page.capacity() {
            // Double, up to a full page, so a small set stays small.
            let cap = (page.capacity() * 2)
                .max(at + bytes)
                .clamp(256, Self::PAGE_BYTES);
            page.reserve_exact(cap - at);
        }
        page.resize(at + bytes, 0);
        page_id(self.fill) | (at / UNIT) as u32
    }

    /// Gives back the record `id` of `units` units (the id must not be used
    /// again until [`Pages::alloc`] hands it out anew).
    pub(crate) fn free(&mut self, id: u32, units: usize) {
        if units * UNIT > OWN_PAGE_BYTES {
            let page = (id >> SHIFT) as usize;
            self.pages[page] = Vec::new();
            self.free_pages.push(page);
        } else {
            self.free.entry(units).or_default().push(id);
        }
    }

    /// Bytes allocated: every page (by capacity) and the free lists (their
    /// vectors' capacity; the map's own table is not counted).
    pub(crate) fn heap_bytes(&self) -> usize {
        let pages = self.pages.capacity() * std::mem::size_of::<Vec<u8>>()
            + self.pages.iter().map(Vec::capacity).sum::<usize>();
        let free: usize = self
            .free
            .values()
            .map(|v| v.capacity() * std::mem::size_of::<u32>())
            .sum();
        pages + free + self.free_pages.capacity() * std::mem::size_of::<usize>()
    }

    /// Bytes in use of page `page` (tests).
    #[cfg(test)]
    pub(crate) fn page_len(&self, page: usize) -> usize {
        self.pages[page].len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Both shapes the zsets use: 4-byte words (skiplist), 2-byte units (B+tree).
    fn reuse_and_own_pages<const UNIT: usize, const SHIFT: u32>() {
        let mut a: Pages<UNIT, SHIFT> = Pages::new();
        let x = a.alloc(10);
        let y = a.alloc(10);
        assert_eq!((x, y), (0, 10), "end to end in page 0");
        a.bytes_mut(y)[..3].copy_from_slice(b"abc");
        assert_eq!(&a.bytes(y)[..3], b"abc");
        assert_eq!(a.page_len(0), 20 * UNIT);
        a.free(x, 10);
        assert_eq!(a.alloc(11), 20, "another size: new room");
        assert_eq!(a.alloc(10), x, "same size: the freed record");
        let units = OWN_PAGE_BYTES / UNIT + 1;
        let big = a.alloc(units);
        assert_eq!(big as usize & (Pages::<UNIT, SHIFT>::PAGE_UNITS - 1), 0);
        assert_eq!(big >> SHIFT, 1, "a page of its own");
        a.free(big, units);
        assert_eq!(a.pages[1].capacity(), 0, "freed with it");
        assert_eq!(a.alloc(units + 5), big, "its page number is reused");
        // The shared page starts at 256 bytes and doubles.
        assert_eq!(a.pages[0].capacity(), 256);
        a.alloc(300 / UNIT);
        assert_eq!(a.pages[0].capacity(), 512);
    }

    #[test]
    fn records_reuse_their_size_and_big_ones_own_a_page() {
        reuse_and_own_pages::<4, 18>();
        reuse_and_own_pages::<2, 19>();
    }
}
