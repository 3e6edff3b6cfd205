//! The size of the bucket array of a skiplist-encoded sorted set's dict, as
//! Redis's `dict.c` grows it. MEMORY USAGE counts eight bytes per bucket, so the
//! bucket count shows through in its answer.
//!
//! The rules kept from `dict.c` (Redis 8.6):
//!
//! * Sizes are powers of two, at least 4 (`_dictNextExp`): a request for `n`
//!   buckets gets the next power of two `>= n`.
//! * Presizing: when a set becomes skiplist-encoded, Redis sizes the empty dict
//!   for the number of elements it is about to hold (`zsetTypeCreate` and
//!   `zsetConvertAndExpand`). Expanding an empty dict installs the table at once.
//! * Growth: before inserting, if `used >= size`, the dict expands to hold
//!   `used + 1` (`dictExpandIfNeeded`), which doubles it. The old table is kept
//!   and emptied incrementally, and while both exist both are counted.
//! * Incremental rehashing: every later lookup or insert moves one non-empty old
//!   bucket (`_dictRehashStepIfNeeded`); the old table is freed when it is empty.
//!
//! Which buckets are empty depends on the hash seed, which Redis picks at random
//! on start-up, so this model uses the expected number of non-empty buckets when
//! `u` keys hash into `s` buckets: `s * (1 - (1 - 1/s)^u)`. Only a set within a
//! few steps of the end of a rehash can disagree with the server.
//!
//! It assumes the set only grew: deletions (which can shrink a Redis dict) and
//! read-only lookups (ZSCORE, ZRANK, which also advance a rehash in Redis) are
//! not modelled. A Redis-faithful `Dict` will take its place.

/// `DICT_HT_INITIAL_SIZE`.
const INITIAL_SIZE: usize = 4;

/// `_dictNextExp`, as a size: the next power of two `>= n`, at least 4.
pub fn next_table_size(n: usize) -> usize {
    n.max(INITIAL_SIZE).next_power_of_two()
}

/// Expected number of non-empty buckets after `used` keys are spread over `size`.
fn expected_non_empty(size: usize, used: usize) -> usize {
    let s = size as f64;
    (s * (1.0 - (1.0 - 1.0 / s).powf(used as f64))).round() as usize
}

/// The table sizes of one dict and the progress of its incremental rehash.
#[derive(Clone, Debug, Default)]
pub struct DictGrowth {
    /// Buckets of the main table (0 before the first insert).
    table: usize,
    /// Buckets of the table being rehashed into, or 0.
    rehash_to: usize,
    /// Non-empty old buckets left to move before the rehash completes.
    steps_left: usize,
}

impl DictGrowth {
    /// `dictExpand` on an empty dict, as done when a set becomes a skiplist.
    pub fn presize(cap: usize) -> DictGrowth {
        let table = if cap == 0 { 0 } else { next_table_size(cap) };
        DictGrowth {
            table,
            ..DictGrowth::default()
        }
    }

    /// Buckets Redis counts: both tables while a rehash is in progress.
    pub fn buckets(&self) -> usize {
        self.table + self.rehash_to
    }

    /// One lookup of the dict (`dictFindLink`, `dictFind`, ...): a rehash step.
    pub fn lookup(&mut self, used: usize) {
        if self.rehash_to == 0 || used == 0 {
            return;
        }
        self.steps_left = self.steps_left.saturating_sub(1);
        if self.steps_left == 0 {
            self.table = self.rehash_to;
            self.rehash_to = 0;
        }
    }

    /// `dictSetKeyAtLink` for a new key, with `used` keys already in the dict.
    pub fn insert(&mut self, used: usize) {
        if self.rehash_to != 0 {
            return;
        }
        if self.table == 0 {
            self.table = INITIAL_SIZE;
        } else if used >= self.table {
            self.rehash_to = next_table_size(used + 1);
            self.steps_left = expected_non_empty(self.table, used);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_powers_of_two_from_four() {
        assert_eq!(next_table_size(0), 4);
        assert_eq!(next_table_size(1), 4);
        assert_eq!(next_table_size(5), 8);
        assert_eq!(next_table_size(129), 256);
        assert_eq!(next_table_size(1_000_000), 1 << 20);
    }

    #[test]
    fn growth_doubles_and_counts_both_tables_while_rehashing() {
        let mut d = DictGrowth::presize(129);
        for used in 0..256 {
            d.lookup(used);
            d.insert(used);
        }
        assert_eq!(d.buckets(), 256);
        d.lookup(256);
        d.insert(256);
        assert_eq!(d.buckets(), 256 + 512);
        // 256 keys in 256 buckets leave about 162 non-empty buckets to move.
        for used in 257..257 + 161 {
            d.lookup(used);
            d.insert(used);
        }
        assert_eq!(d.buckets(), 768);
        d.lookup(418);
        assert_eq!(d.buckets(), 512);
    }
}
