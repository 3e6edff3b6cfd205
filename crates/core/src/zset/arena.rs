//! The record arena both sorted-set layouts keep their records in: the
//! skiplist's nodes ([`super::skiplist`]) and the B+tree layout's member
//! records ([`super::btree::records`]). Redis has no such thing: each
//! `zskiplistNode` is its own `zmalloc`; here a record is a run of bytes in
//! one buffer, read in place, and addressed by a `u32` id.
//!
//! * Records are laid end to end in one **shared buffer**; a record's id is
//!   its offset there in units of `UNIT` bytes (the skiplist's records are
//!   4-byte aligned, the B+tree's 2-byte), below 2^31. One buffer, not pages,
//!   because a skiplist descent is a chain of dependent reads: with pages,
//!   every step read the next node's page address before its score (three
//!   dependent loads a step where Redis has two); with one buffer its address
//!   stays in a register. Measured in process on a 1M-member set
//!   (`zset_cost`, best of five builds each): ZCOUNT 562 → 451 ns, ZREVRANK
//!   403 → 312, ZINCRBY 1,650 → 1,490.
//! * The buffer ([`RecordBuf`], whose allocation's alignment marks it as a
//!   record buffer) doubles from 256 bytes up to [`HUGE_STEP`] (2 MiB), so a
//!   small set stays small, then grows one huge page at a time: under
//!   `redislab_alloc::huge` (the server's allocator) such a block sits on huge
//!   pages and grows by moving its page tables, not its bytes; glibc grows big
//!   blocks with `mremap` too. The bytes left over after the last record stay
//!   under 2 MiB, as with pages. The B+tree layout keeps its (smaller)
//!   records in a plain `Vec<u8>` grown 256 KiB at a time ([`SharedBytes`]).
//! * A record over [`OWN_PAGE_BYTES`] has a buffer of its own, exactly its
//!   size, freed with it; its id is that buffer's number with the top bit
//!   set (the number is reused by the next big record).
//! * A freed record waits on a free list per size (in units) for the next
//!   record of that size; the arena never moves a record.
//! * New room for a record of a *class* ([`Pages::alloc_in`]; the skiplist's
//!   classes are "one level" and "taller") comes from a region of the shared
//!   buffer holding only that class, an eighth of the buffer's length at a
//!   time (64 units to 64 KiB). Redis's allocator does this by accident: a
//!   taller node is a bigger allocation, in another jemalloc size class, so
//!   the tall nodes every descent passes sit together on their own pages.
//!   Laid out in insertion order instead, each shared its cache line with
//!   short nodes a descent rarely reads; apart, both ZCOUNT descents over
//!   1,024 ranges in turn on a 1M-member set took 847/859 -> 688/700 ns
//!   (`examples/descent_cost.rs`).
//!
//! * Reads are checked slices, except in the descent's hot loop, which reads
//!   through a [`Reader`]: two fields of a record with one bounds check (a
//!   check per field cost a ZCOUNT's two descents a third of their time).
//!
//! The arena knows nothing of what a record holds: its owner says how many
//! units a record takes when it allocates and frees it.

use std::collections::HashMap;

use redislab_alloc::records::RecordBuf;

/// A record bigger than this (a member of more than about 16 KB) gets a
/// buffer of its own; smaller ones share the arena's buffer.
pub(crate) const OWN_PAGE_BYTES: usize = 16 * 1024;

/// The skiplist's shared buffer doubles up to this size, then grows by this
/// much.
pub(crate) const HUGE_STEP: usize = 2 << 20;

/// What the shared buffer is kept in: a [`RecordBuf`] (the skiplist's, on
/// huge pages under the server's allocator, grown a huge page at a time) or
/// a plain `Vec<u8>` (the B+tree layout's, grown 256 KiB at a time: its
/// 22-byte records fill 2 MiB steps slowly, a 100,000-member set kept a
/// quarter more heap; glibc grows such blocks with `mremap`).
pub(crate) trait SharedBytes: Clone + std::fmt::Debug + Default {
    /// The buffer doubles up to this size, then grows by this much.
    const STEP: usize;
    fn bytes(&self) -> &[u8];
    fn bytes_mut(&mut self) -> &mut [u8];
    fn capacity(&self) -> usize;
    /// Capacity for `bytes` in all, exactly.
    fn reserve_total(&mut self, bytes: usize);
    /// Grows to `len`, the new bytes zero.
    fn grow_to(&mut self, len: usize);
}

impl SharedBytes for RecordBuf {
    const STEP: usize = HUGE_STEP;
    #[inline(always)]
    fn bytes(&self) -> &[u8] {
        self.as_slice()
    }
    #[inline(always)]
    fn bytes_mut(&mut self) -> &mut [u8] {
        self.as_mut_slice()
    }
    fn capacity(&self) -> usize {
        RecordBuf::capacity(self)
    }
    fn reserve_total(&mut self, bytes: usize) {
        RecordBuf::reserve_total(self, bytes)
    }
    fn grow_to(&mut self, len: usize) {
        self.resize(len)
    }
}

impl SharedBytes for Vec<u8> {
    const STEP: usize = 256 << 10;
    #[inline(always)]
    fn bytes(&self) -> &[u8] {
        self
    }
    #[inline(always)]
    fn bytes_mut(&mut self) -> &mut [u8] {
        self
    }
    fn capacity(&self) -> usize {
        Vec::capacity(self)
    }
    fn reserve_total(&mut self, bytes: usize) {
        self.reserve_exact(bytes.saturating_sub(self.len()))
    }
    fn grow_to(&mut self, len: usize) {
        self.resize(len, 0)
    }
}

/// Sizes (in units) whose free lists are indexed directly.
const SMALL_UNITS: usize = 64;

/// The top bit of an id: a record with a buffer of its own.
const OWN: u32 = 1 << 31;

/// Reads two 8-byte fields of a record at once, with one bounds check for
/// both, where slices would check each (and a big record's own buffer, rare,
/// on the checked path). A skiplist descent step is this read and a
/// comparison, so the checks were a large part of its instructions: with a
/// check per field, ZCOUNT's two descents on a 1M-member set took 68 and 110
/// ns; with one per step, 56 and 88 (`examples/descent_cost.rs`; with no
/// check at all, 45 and 76, which is not worth an unchecked read). Measured
/// again later that day on a busier machine: 76/121 → 66/100 ns.
///
/// `unsafe` only to skip the checks the one comparison has already made; an
/// id that names no record (a bug in the owner) reads zeros, never memory
/// outside the buffer.
#[derive(Clone, Copy)]
pub(crate) struct Reader<'a, const UNIT: usize> {
    shared: &'a [u8],
    own: &'a [Vec<u8>],
}

impl<const UNIT: usize> Reader<'_, UNIT> {
    /// The 8 bytes at byte `a` and the 8 at byte `b` of record `id`, where
    /// `a <= b`.
    #[inline(always)]
    pub(crate) fn two_words(&self, id: u32, a: usize, b: usize) -> ([u8; 8], [u8; 8]) {
        debug_assert!(a <= b);
        // An id with the top bit (a big record) is at least 2^31 units in,
        // past the end of any shared buffer, so one comparison sends both a
        // big record and a wrong id to the checked path.
        let start = id as usize * UNIT;
        if start + b + 8 <= self.shared.len() {
            let at = self.shared.as_ptr();
            // SAFETY: both 8-byte reads end at or before `start + b + 8 <=
            // shared.len()` (as a <= b); [u8; 8] has alignment 1.
            unsafe {
                (
                    at.add(start + a).cast::<[u8; 8]>().read(),
                    at.add(start + b).cast::<[u8; 8]>().read(),
                )
            }
        } else {
            self.checked_two_words(id, a, b)
        }
    }

    /// The 8 bytes at byte `at` of record `id`.
    #[inline(always)]
    pub(crate) fn word(&self, id: u32, at: usize) -> [u8; 8] {
        self.two_words(id, at, at).0
    }

    #[cold]
    fn checked_two_words(&self, id: u32, a: usize, b: usize) -> ([u8; 8], [u8; 8]) {
        let record: &[u8] = if id & OWN == 0 {
            &[]
        } else {
            self.own.get((id & !OWN) as usize).map_or(&[], |r| r)
        };
        let word = |at: usize| {
            record
                .get(at..at + 8)
                .map_or([0; 8], |w| w.try_into().unwrap_or([0; 8]))
        };
        (word(a), word(b))
    }
}

/// Records of `UNIT`-byte units in one shared buffer, big ones in their own.
/// See the module documentation.
#[derive(Clone, Debug)]
pub(crate) struct Pages<const UNIT: usize, B: SharedBytes = RecordBuf> {
    shared: B,
    /// Records over [`OWN_PAGE_BYTES`], each in its own buffer (empty once
    /// freed, until the number is reused).
    own: Vec<Vec<u8>>,
    /// Freed records by size in units, reused by the next record of that
    /// size: indexed directly below [`SMALL_UNITS`] (every record of a short
    /// member; one hash per insert and per delete cost ZREMRANGEBYRANK of 900
    /// members a sixth of its time), in a map above.
    free_small: Vec<Vec<u32>>,
    free: HashMap<usize, Vec<u32>>,
    /// Numbers of `own` buffers freed.
    free_own: Vec<usize>,
    /// The open region of each class ([`Pages::alloc_in`]): the next unit
    /// and the end, in units of the shared buffer.
    regions: [(u32, u32); CLASSES],
}

/// Record classes kept in regions of their own ([`Pages::alloc_in`]).
pub(crate) const CLASSES: usize = 2;

impl<const UNIT: usize, B: SharedBytes> Default for Pages<UNIT, B> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const UNIT: usize, B: SharedBytes> Pages<UNIT, B> {
    /// An empty arena (nothing allocated).
    pub(crate) fn new() -> Self {
        Pages {
            shared: B::default(),
            own: Vec::new(),
            free_small: Vec::new(),
            free: HashMap::new(),
            free_own: Vec::new(),
            regions: [(0, 0); CLASSES],
        }
    }

    /// The bytes from record `id` to the end of its buffer.
    #[inline(always)]
    pub(crate) fn bytes(&self, id: u32) -> &[u8] {
        if id & OWN == 0 {
            &self.shared.bytes()[id as usize * UNIT..]
        } else {
            &self.own[(id & !OWN) as usize]
        }
    }

    /// A reader for a hot loop (see [`Reader`]).
    #[inline(always)]
    pub(crate) fn reader(&self) -> Reader<'_, UNIT> {
        Reader {
            shared: self.shared.bytes(),
            own: &self.own,
        }
    }

    #[inline(always)]
    pub(crate) fn bytes_mut(&mut self, id: u32) -> &mut [u8] {
        if id & OWN == 0 {
            &mut self.shared.bytes_mut()[id as usize * UNIT..]
        } else {
            &mut self.own[(id & !OWN) as usize]
        }
    }

    /// Room for a record of `units` units: a freed record of that size, else
    /// new room. Its bytes are whatever was there (zeros when new).
    pub(crate) fn alloc(&mut self, units: usize) -> u32 {
        self.reuse(units).unwrap_or_else(|| self.carve(units))
    }

    /// A freed record of `units` units, if one waits.
    fn reuse(&mut self, units: usize) -> Option<u32> {
        if units < SMALL_UNITS {
            self.free_small.get_mut(units).and_then(Vec::pop)
        } else {
            self.free.get_mut(&units).and_then(Vec::pop)
        }
    }

    /// [`Pages::alloc`] for a record of class `class`: new room comes from
    /// a region of the shared buffer that holds only records of that class,
    /// so that records read together (a skiplist's tall nodes, which every
    /// descent passes) share cache lines and pages with each other instead
    /// of with records read rarely.
    pub(crate) fn alloc_in(&mut self, class: usize, units: usize) -> u32 {
        if let Some(id) = self.reuse(units) {
            return id;
        }
        if units * UNIT > OWN_PAGE_BYTES {
            return self.carve(units);
        }
        let (next, end) = self.regions[class];
        if (end - next) as usize >= units {
            self.regions[class].0 = next + units as u32;
            return next;
        }
        // A new region: an eighth of what the buffer holds, between 64
        // units and 64 KiB (so a small set stays small, and a big one
        // wastes at most the rest of one region per class).
        let len_units = self.shared.bytes().len() / UNIT;
        let region = (len_units / 8).clamp(64.max(units), (64 << 10) / UNIT);
        let start = self.carve_shared(region);
        self.regions[class] = (start + units as u32, start + region as u32);
        start
    }

    /// Room for `units` units that no freed record provides.
    fn carve(&mut self, units: usize) -> u32 {
        let bytes = units * UNIT;
        if bytes > OWN_PAGE_BYTES {
            let buf = vec![0u8; bytes];
            let number = match self.free_own.pop() {
                Some(n) => {
                    self.own[n] = buf;
                    n
                }
                None => {
                    self.own.push(buf);
                    self.own.len() - 1
                }
            };
            return OWN | u32::try_from(number).expect("fewer than 2^31 big records");
        }
        self.carve_shared(units)
    }

    /// `units` units at the end of the shared buffer, which grows for them.
    fn carve_shared(&mut self, units: usize) -> u32 {
        let bytes = units * UNIT;
        let at = self.shared.bytes().len();
        let end = at + bytes;
        assert!(end / UNIT < OWN as usize, "zset record arena full");
        if end > self.shared.capacity() {
            let cap = next_capacity(self.shared.capacity(), end, B::STEP);
            self.shared.reserve_total(cap);
        }
        self.shared.grow_to(end);
        (at / UNIT) as u32
    }

    /// Gives back the record `id` of `units` units (the id must not be used
    /// again until [`Pages::alloc`] hands it out anew).
    pub(crate) fn free(&mut self, id: u32, units: usize) {
        if id & OWN != 0 {
            let number = (id & !OWN) as usize;
            self.own[number] = Vec::new();
            self.free_own.push(number);
        } else if units < SMALL_UNITS {
            if self.free_small.len() <= units {
                self.free_small.resize_with(units + 1, Vec::new);
            }
            self.free_small[units].push(id);
        } else {
            self.free.entry(units).or_default().push(id);
        }
    }

    /// Bytes allocated: the buffers (by capacity) and the free lists (their
    /// vectors' capacity; the map's own table is not counted).
    pub(crate) fn heap_bytes(&self) -> usize {
        let buffers = self.shared.capacity()
            + self.own.capacity() * std::mem::size_of::<Vec<u8>>()
            + self.own.iter().map(Vec::capacity).sum::<usize>();
        let lists = self.free_small.iter().chain(self.free.values());
        let free: usize = lists
            .map(|v| v.capacity() * std::mem::size_of::<u32>())
            .sum::<usize>()
            + self.free_small.capacity() * std::mem::size_of::<Vec<u32>>();
        buffers + free + self.free_own.capacity() * std::mem::size_of::<usize>()
    }

    /// Bytes in use of the shared buffer (tests).
    #[cfg(test)]
    pub(crate) fn shared_len(&self) -> usize {
        self.shared.bytes().len()
    }

    /// Capacity of the shared buffer (tests).
    #[cfg(test)]
    pub(crate) fn shared_capacity(&self) -> usize {
        self.shared.capacity()
    }
}

/// The shared buffer's next capacity, for at least `need` bytes: doubling
/// from 256 bytes up to `step`, then whole multiples of it.
fn next_capacity(cap: usize, need: usize, step: usize) -> usize {
    let mut cap = cap.max(256);
    while cap < need {
        cap = if cap < step {
            (cap * 2).min(step)
        } else {
            cap + step
        };
    }
    cap
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Records of one class come from regions of their own: interleaved
    /// with the other class's, they still lie end to end; regions grow with
    /// the buffer and stay within the shared buffer; a freed record of
    /// either class is reused by size; a big one still gets its own buffer.
    #[test]
    fn classes_take_regions_of_their_own() {
        let mut a: Pages<4> = Pages::new();
        let (mut short, mut tall) = (Vec::new(), Vec::new());
        for _ in 0..5_000 {
            short.push(a.alloc_in(0, 9));
            short.push(a.alloc_in(0, 9));
            tall.push(a.alloc_in(1, 11));
        }
        // Within a region, end to end; a new region at most once per 64.
        let breaks =
            |ids: &[u32], units: u32| ids.windows(2).filter(|w| w[1] != w[0] + units).count();
        assert!(
            breaks(&short, 9) < short.len() / 64,
            "{}",
            breaks(&short, 9)
        );
        assert!(breaks(&tall, 11) < tall.len() / 64, "{}", breaks(&tall, 11));
        let mut all: Vec<(u32, u32)> = short.iter().map(|&i| (i, 9)).collect();
        all.extend(tall.iter().map(|&i| (i, 11)));
        all.sort_unstable();
        for w in all.windows(2) {
            assert!(w[0].0 + w[0].1 <= w[1].0, "records overlap: {w:?}");
        }
        let (last, units) = all[all.len() - 1];
        assert!((last + units) as usize * 4 <= a.shared_len());
        // Regions are at most 64 KiB: what a class leaves unused is bounded.
        assert!(a.shared_len() <= (short.len() * 9 + tall.len() * 11) * 4 + 2 * (64 << 10));
        a.free(tall[7], 11);
        assert_eq!(a.alloc_in(1, 11), tall[7], "a freed record of its size");
        let big = a.alloc_in(1, OWN_PAGE_BYTES / 4 + 1);
        assert_eq!(big & OWN, OWN, "a big record has its own buffer");
    }

    /// Both shapes the zsets use: 4-byte words (skiplist), 2-byte units (B+tree).
    fn reuse_and_own_buffers<const UNIT: usize>() {
        let mut a: Pages<UNIT> = Pages::new();
        let x = a.alloc(10);
        let y = a.alloc(10);
        assert_eq!((x, y), (0, 10), "end to end");
        a.bytes_mut(y)[..3].copy_from_slice(b"abc");
        assert_eq!(&a.bytes(y)[..3], b"abc");
        assert_eq!(a.shared_len(), 20 * UNIT);
        a.free(x, 10);
        assert_eq!(a.alloc(11), 20, "another size: new room");
        assert_eq!(a.alloc(10), x, "same size: the freed record");
        let units = OWN_PAGE_BYTES / UNIT + 1;
        let big = a.alloc(units);
        assert_eq!(big, OWN, "a buffer of its own");
        assert_eq!(a.bytes(big).len(), units * UNIT);
        a.free(big, units);
        assert_eq!(a.own[0].capacity(), 0, "freed with it");
        assert_eq!(a.alloc(units + 5), big, "its number is reused");
        // The shared buffer starts at 256 bytes and doubles.
        assert_eq!(a.shared_capacity(), 256);
        a.alloc(300 / UNIT);
        assert_eq!(a.shared_capacity(), 512);
        assert_eq!(&a.bytes(y)[..3], b"abc", "kept while it grew");
        // A size past the directly indexed ones: the same rule.
        let wide = a.alloc(SMALL_UNITS + 3);
        a.free(wide, SMALL_UNITS + 3);
        assert_eq!(
            a.alloc(SMALL_UNITS + 2),
            wide + SMALL_UNITS as u32 + 3,
            "new room"
        );
        assert_eq!(a.alloc(SMALL_UNITS + 3), wide, "the freed wide record");
    }

    #[test]
    fn records_reuse_their_size_and_big_ones_own_a_buffer() {
        reuse_and_own_buffers::<4>();
        reuse_and_own_buffers::<2>();
    }

    /// The reader gives a record's bytes as `bytes` does, in the shared
    /// buffer and in a buffer of its own, and zeros (never a panic or a read
    /// outside the buffer) for an id that names no record.
    #[test]
    fn the_reader_reads_what_bytes_holds_and_zeros_past_the_end() {
        let mut a: Pages<4> = Pages::new();
        let small = a.alloc(8);
        let big_units = OWN_PAGE_BYTES / 4 + 1;
        let big = a.alloc(big_units);
        for id in [small, big] {
            let record = a.bytes_mut(id);
            for (i, b) in record[..32].iter_mut().enumerate() {
                *b = i as u8 + 1;
            }
        }
        let read = a.reader();
        for id in [small, big] {
            let (x, y) = read.two_words(id, 0, 24);
            assert_eq!(&x[..], &a.bytes(id)[..8]);
            assert_eq!(&y[..], &a.bytes(id)[24..32]);
        }
        // The last 8 bytes of the shared buffer are in reach; past them, zeros.
        let end_units = (a.shared_len() / 4) as u32;
        assert_eq!(
            read.two_words(end_units - 2, 0, 0).0,
            a.bytes(small)[24..32]
        );
        assert_eq!(read.two_words(end_units - 1, 0, 0), ([0; 8], [0; 8]));
        assert_eq!(read.two_words(u32::MAX >> 1, 0, 8), ([0; 8], [0; 8]));
        assert_eq!(
            read.two_words(OWN | 7, 0, 8),
            ([0; 8], [0; 8]),
            "no such own buffer"
        );
        assert_eq!(
            read.two_words(big, 0, big_units * 4),
            (a.bytes(big)[..8].try_into().unwrap(), [0; 8]),
            "past a big record's end"
        );
    }

    /// Doubling up to one huge page, then a huge page at a time: past it,
    /// always whole huge pages (what `redislab_alloc::huge` maps).
    #[test]
    fn the_shared_buffer_doubles_then_grows_by_a_huge_page() {
        assert_eq!(next_capacity(0, 10, HUGE_STEP), 256);
        assert_eq!(next_capacity(256, 257, HUGE_STEP), 512);
        assert_eq!(
            next_capacity(HUGE_STEP / 2, HUGE_STEP / 2 + 1, HUGE_STEP),
            HUGE_STEP
        );
        assert_eq!(
            next_capacity(HUGE_STEP, HUGE_STEP + 1, HUGE_STEP),
            2 * HUGE_STEP
        );
        assert_eq!(
            next_capacity(3 * HUGE_STEP, 5 * HUGE_STEP + 1, HUGE_STEP),
            6 * HUGE_STEP
        );
        let mut a: Pages<4> = Pages::new();
        for _ in 0..(3 * HUGE_STEP / 4 / 100) {
            a.alloc(100);
        }
        assert_eq!(a.shared_capacity(), 3 * HUGE_STEP);
        // The B+tree's plain buffer: 256 KiB steps.
        let mut b: Pages<2, Vec<u8>> = Pages::new();
        for _ in 0..((768 << 10) / 2 / 100) {
            b.alloc(100);
        }
        assert_eq!(b.shared_capacity(), 768 << 10);
    }
}
