//! Redis's zset dict over the member records: the same hash table as
//! [`crate::dict::Dict`] (SipHash-1-2 with the same seed, power-of-two
//! tables, head-of-chain inserts, two tables and incremental rehashing one
//! step per lookup/insert/delete, the same grow and shrink rules, `dictScan`'s
//! reverse-binary cursor and the biased "fair" random draw), so ZSCAN,
//! ZRANDMEMBER, SORT and MEMORY USAGE see exactly what they see with the
//! skiplist layout, and what Redis's dict would give.
//!
//! The difference is where an entry lives: `Dict` keeps a 16-byte entry per
//! key in a slab (cached hash, next slot, node handle); here the chain link is
//! a field of the member's record itself ([`Records::next`]), so an entry
//! costs nothing beyond the bucket array (4 bytes per bucket), and a rehash
//! hashes the member's bytes again, as Redis does, instead of reading a
//! cached hash. `crate::zset::btree`'s tests run this table and `Dict` side
//! by side through the same operations and compare scans and random draws.

use super::records::{Handle, Records, NIL};
use crate::dict::{siphash12, DEFAULT_SEED};
use rand::RngCore;

const INITIAL_SIZE: usize = 4;
const MIN_FILL: usize = 8;
const FAIR_SAMPLE: usize = 15;

fn random31(rng: &mut impl RngCore) -> usize {
    (rng.next_u32() >> 1) as usize
}

fn random_ulong(rng: &mut impl RngCore) -> usize {
    rng.next_u64() as usize
}

fn reverse_increment(v: usize) -> usize {
    v.reverse_bits().wrapping_add(1).reverse_bits()
}

#[derive(Clone, Debug, Default)]
struct Buckets {
    heads: Vec<Handle>,
    used: usize,
}

impl Buckets {
    fn with_size(size: usize) -> Buckets {
        Buckets {
            heads: vec![NIL; size],
            used: 0,
        }
    }

    fn size(&self) -> usize {
        self.heads.len()
    }

    fn mask(&self) -> usize {
        self.size().saturating_sub(1)
    }
}

struct Found {
    table: usize,
    bucket: usize,
    at: Handle,
    prev: Handle,
}

/// The hash table. Its methods take the records the chains run through.
#[derive(Clone, Debug)]
pub struct Table {
    seed: [u8; 16],
    tables: [Buckets; 2],
    rehash_idx: Option<usize>,
    pause_auto_resize: u32,
}

impl Default for Table {
    fn default() -> Table {
        Table::new()
    }
}

impl Table {
    pub fn new() -> Table {
        Table {
            seed: DEFAULT_SEED,
            tables: [Buckets::default(), Buckets::default()],
            rehash_idx: None,
            pause_auto_resize: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.tables[0].used + self.tables[1].used
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn bucket_count(&self) -> usize {
        self.tables[0].size() + self.tables[1].size()
    }

    fn table_sizes(&self) -> [usize; 2] {
        [self.tables[0].size(), self.tables[1].size()]
    }

    fn is_rehashing(&self) -> bool {
        self.rehash_idx.is_some()
    }

    pub fn hash_of(&self, member: &[u8]) -> u64 {
        siphash12(member, &self.seed)
    }

    /// Bytes of both bucket arrays.
    pub fn heap_bytes(&self) -> usize {
        self.tables
            .iter()
            .map(|t| t.heads.capacity() * std::mem::size_of::<Handle>())
            .sum()
    }

    fn bucket_of(&self, table: usize, hash: u64) -> usize {
        hash as usize & self.tables[table].mask()
    }

    fn chain<'a>(&self, recs: &'a Records, head: Handle) -> impl Iterator<Item = Handle> + 'a {
        let first = (head != NIL).then_some(head);
        std::iter::successors(first, move |&h| {
            let next = recs.next(h);
            (next != NIL).then_some(next)
        })
    }

    fn find(&self, recs: &Records, hash: u64, is: impl Fn(Handle) -> bool) -> Option<Found> {
        let tables = if self.is_rehashing() { 2 } else { 1 };
        for table in 0..tables {
            if table == 0 && self.rehash_idx.is_some_and(|i| self.bucket_of(0, hash) < i) {
                continue;
            }
            if self.tables[table].size() == 0 {
                continue;
            }
            let bucket = self.bucket_of(table, hash);
            let mut prev = NIL;
            for at in self.chain(recs, self.tables[table].heads[bucket]) {
                if is(at) {
                    return Some(Found {
                        table,
                        bucket,
                        at,
                        prev,
                    });
                }
                prev = at;
            }
        }
        None
    }

    /// The record of `member`, without a rehash step.
    pub fn peek(&self, recs: &Records, hash: u64, member: &[u8]) -> Option<Handle> {
        self.find(recs, hash, |h| recs.member(h) == member)
            .map(|f| f.at)
    }

    /// `dictFind`: one rehash step, then the search.
    pub fn lookup(&mut self, recs: &mut Records, hash: u64, member: &[u8]) -> Option<Handle> {
        if self.is_empty() {
            return None;
        }
        self.rehash_step_at(recs, hash);
        self.peek(recs, hash, member)
    }

    /// A member known to be absent (`dictInsertKeyAtLink` after a failed find).
    pub fn insert_absent(&mut self, recs: &mut Records, hash: u64, h: Handle) {
        let was_empty = self.is_empty();
        if !was_empty {
            self.rehash_step_at(recs, hash);
        }
        let sizes = self.table_sizes();
        self.expand_if_needed(recs);
        if was_empty || sizes != self.table_sizes() {
            self.rehash_step_at(recs, hash);
        }
        self.link_new(recs, hash, h);
    }

    /// `dictAdd`: false (linking nothing) when the member is already there.
    pub fn add(&mut self, recs: &mut Records, hash: u64, h: Handle) -> bool {
        self.rehash_step_at(recs, hash);
        if self.pause_auto_resize == 0 {
            self.expand_if_needed(recs);
        }
        let member = recs.member(h);
        if self
            .find(recs, hash, |x| recs.member(x) == member)
            .is_some()
        {
            return false;
        }
        self.link_new(recs, hash, h);
        true
    }

    /// `dictDelete` of the record `is` accepts: unlinks it (the record stays).
    pub fn remove_by(
        &mut self,
        recs: &mut Records,
        hash: u64,
        is: impl Fn(&Records, Handle) -> bool,
    ) -> Option<Handle> {
        if self.is_empty() {
            return None;
        }
        self.rehash_step_at(recs, hash);
        let found = self.find(recs, hash, |h| is(recs, h))?;
        let next = recs.next(found.at);
        if found.prev == NIL {
            self.tables[found.table].heads[found.bucket] = next;
        } else {
            recs.set_next(found.prev, next);
        }
        self.tables[found.table].used -= 1;
        if self.pause_auto_resize == 0 {
            self.shrink_if_needed(recs);
        }
        Some(found.at)
    }

    fn link_new(&mut self, recs: &mut Records, hash: u64, h: Handle) {
        let table = if self.is_rehashing() { 1 } else { 0 };
        let bucket = self.bucket_of(table, hash);
        recs.set_next(h, self.tables[table].heads[bucket]);
        self.tables[table].heads[bucket] = h;
        self.tables[table].used += 1;
    }

    /// Every record in bucket order (table 0, then table 1).
    pub fn keys<'a>(&'a self, recs: &'a Records) -> impl Iterator<Item = Handle> + 'a {
        self.tables
            .iter()
            .flat_map(|t| t.heads.iter().copied())
            .flat_map(move |head| self.chain(recs, head))
    }

    pub fn pause_auto_resize(&mut self) {
        self.pause_auto_resize += 1;
    }

    pub fn resume_auto_resize(&mut self) {
        self.pause_auto_resize = self.pause_auto_resize.saturating_sub(1);
    }

    /// `dictExpand`.
    pub fn expand(&mut self, size: usize) -> bool {
        if self.is_rehashing() || self.tables[0].used > size || self.tables[0].size() >= size {
            return false;
        }
        self.resize(size)
    }

    fn shrink(&mut self, size: usize) -> bool {
        if self.is_rehashing() || self.tables[0].used > size || self.tables[0].size() <= size {
            return false;
        }
        self.resize(size)
    }

    fn expand_if_needed(&mut self, _recs: &Records) {
        if self.is_rehashing() {
            return;
        }
        let t0 = &self.tables[0];
        if t0.size() == 0 {
            self.expand(INITIAL_SIZE);
        } else if t0.used >= t0.size() {
            self.expand(t0.used + 1);
        }
    }

    /// `dictShrinkIfNeeded`.
    pub fn shrink_if_needed(&mut self, _recs: &Records) {
        if self.is_rehashing() {
            return;
        }
        let t0 = &self.tables[0];
        if t0.size() > INITIAL_SIZE && t0.used * MIN_FILL <= t0.size() {
            self.shrink(t0.used);
        }
    }

    fn resize(&mut self, size: usize) -> bool {
        let Some(new_size) = size.max(INITIAL_SIZE).checked_next_power_of_two() else {
            return false;
        };
        if new_size == self.tables[0].size() {
            return false;
        }
        let table = Buckets::with_size(new_size);
        if self.tables[0].used == 0 {
            self.tables[0] = table;
        } else {
            self.tables[1] = table;
            self.rehash_idx = Some(0);
        }
        true
    }

    fn rehash_step_at(&mut self, recs: &mut Records, hash: u64) {
        let Some(idx) = self.rehash_idx else {
            return;
        };
        let bucket = self.bucket_of(0, hash);
        if bucket >= idx && self.tables[0].heads[bucket] != NIL {
            self.move_bucket(recs, bucket);
            self.finish_rehash_if_done();
        } else {
            self.rehash(recs, 1);
        }
    }

    fn rehash(&mut self, recs: &mut Records, n: usize) -> bool {
        let Some(mut idx) = self.rehash_idx else {
            return false;
        };
        let mut empty_visits = n * 10;
        for _ in 0..n {
            if self.tables[0].used == 0 {
                break;
            }
            while self.tables[0].heads[idx] == NIL {
                idx += 1;
                self.rehash_idx = Some(idx);
                empty_visits -= 1;
                if empty_visits == 0 {
                    return true;
                }
            }
            self.move_bucket(recs, idx);
            idx += 1;
            self.rehash_idx = Some(idx);
        }
        !self.finish_rehash_if_done()
    }

    fn move_bucket(&mut self, recs: &mut Records, bucket: usize) {
        let mut at = std::mem::replace(&mut self.tables[0].heads[bucket], NIL);
        while at != NIL {
            let to = self.bucket_of(1, self.hash_of(recs.member(at)));
            let next = recs.next(at);
            recs.set_next(at, self.tables[1].heads[to]);
            self.tables[1].heads[to] = at;
            self.tables[0].used -= 1;
            self.tables[1].used += 1;
            at = next;
        }
    }

    fn finish_rehash_if_done(&mut self) -> bool {
        if self.tables[0].used != 0 {
            return false;
        }
        self.tables[0] = std::mem::take(&mut self.tables[1]);
        self.rehash_idx = None;
        true
    }

    /// `dictScan`, emitting records.
    pub fn scan(&self, recs: &Records, cursor: u64, mut emit: impl FnMut(Handle)) -> u64 {
        if self.is_empty() {
            return 0;
        }
        let mut v = cursor as usize;
        let mut bucket = |table: usize, index: usize| {
            for h in self.chain(recs, self.tables[table].heads[index]) {
                emit(h);
            }
        };
        if !self.is_rehashing() {
            let m0 = self.tables[0].mask();
            bucket(0, v & m0);
            v |= !m0;
            v = reverse_increment(v);
        } else {
            let (small, big) = if self.tables[0].size() > self.tables[1].size() {
                (1, 0)
            } else {
                (0, 1)
            };
            let m0 = self.tables[small].mask();
            let m1 = self.tables[big].mask();
            bucket(small, v & m0);
            loop {
                bucket(big, v & m1);
                v |= !m1;
                v = reverse_increment(v);
                if v & (m0 ^ m1) == 0 {
                    break;
                }
            }
        }
        v as u64
    }

    /// `dictGetFairRandomKey`.
    pub fn fair_random(&mut self, recs: &mut Records, rng: &mut impl RngCore) -> Option<Handle> {
        let sample = self.some_keys(recs, FAIR_SAMPLE, rng);
        if sample.is_empty() {
            self.random_key(recs, rng)
        } else {
            Some(sample[random31(rng) % sample.len()])
        }
    }

    /// `dictGetRandomKey`.
    fn random_key(&mut self, recs: &mut Records, rng: &mut impl RngCore) -> Option<Handle> {
        if self.is_empty() {
            return None;
        }
        if self.is_rehashing() {
            self.rehash(recs, 1);
        }
        let head = match self.rehash_idx {
            Some(idx) => {
                let s0 = self.tables[0].size();
                let span = (self.bucket_count() - idx) as u64;
                loop {
                    let h = idx + (rng.next_u64() % span) as usize;
                    let head = if h >= s0 {
                        self.tables[1].heads[h - s0]
                    } else {
                        self.tables[0].heads[h]
                    };
                    if head != NIL {
                        break head;
                    }
                }
            }
            None => loop {
                let head = self.tables[0].heads[random_ulong(rng) & self.tables[0].mask()];
                if head != NIL {
                    break head;
                }
            },
        };
        let len = self.chain(recs, head).count();
        self.chain(recs, head).nth(random31(rng) % len)
    }

    /// `dictGetSomeKeys`.
    fn some_keys(
        &mut self,
        recs: &mut Records,
        count: usize,
        rng: &mut impl RngCore,
    ) -> Vec<Handle> {
        let count = count.min(self.len());
        for _ in 0..count {
            if !self.is_rehashing() {
                break;
            }
            self.rehash(recs, 1);
        }
        let tables = if self.is_rehashing() { 2 } else { 1 };
        let mut max_mask = self.tables[0].mask();
        if tables == 2 {
            max_mask = max_mask.max(self.tables[1].mask());
        }
        let mut sample = Vec::with_capacity(count);
        let mut seen = 0;
        let mut max_steps = count * 10;
        let mut empty_run = 0;
        let mut i = random_ulong(rng) & max_mask;
        while seen < count && max_steps > 0 {
            max_steps -= 1;
            for table in 0..tables {
                let rehash_idx = self.rehash_idx.unwrap_or(0);
                if tables == 2 && table == 0 && i < rehash_idx {
                    if i >= self.tables[1].size() {
                        i = rehash_idx;
                    } else {
                        continue;
                    }
                }
                if i >= self.tables[table].size() {
                    continue;
                }
                let head = self.tables[table].heads[i];
                if head == NIL {
                    empty_run += 1;
                    if empty_run >= 5 && empty_run > count {
                        i = random_ulong(rng) & max_mask;
                        empty_run = 0;
                    }
                    continue;
                }
                empty_run = 0;
                for h in self.chain(recs, head) {
                    if seen < count {
                        sample.push(h);
                    } else {
                        let r = (rng.next_u64() % (seen as u64 + 1)) as usize;
                        if r < count {
                            sample[r] = h;
                        }
                    }
                    seen += 1;
                }
                if seen >= count {
                    return sample;
                }
            }
            i = (i + 1) & max_mask;
        }
        sample
    }
}
