//! The set type (src/t_set.c), in the three encodings Redis 8.6 keeps it in.
//!
//! * **intset** while every member reads as a 64-bit integer (`string2ll`) and
//!   there are at most `set-max-intset-entries` (512; never more than 2^30): a
//!   sorted array whose element width (2, 4 or 8 bytes) grows with the largest
//!   magnitude and never shrinks ([`crate::intset`], stored at that width);
//!   its size is 8 bytes of header + width × length;
//! * **listpack** for up to `set-max-listpack-entries` (128) members of at most
//!   `set-max-listpack-value` (64) bytes, in insertion order; its size is
//!   `lpBytes`. The members sit in one buffer ([`crate::packed::Packed`], as
//!   the listpack hash's: a 1-2 byte length before each member's bytes, an
//!   integer kept as its digits, no backward lengths);
//! * **hashtable**: a [`Dict`] of members without values; its size is the dict
//!   struct, a 24-byte entry per member, 8 bytes per bucket, and the SDS
//!   allocation of every member, which Redis keeps as the dict's metadata.
//!   The dict is boxed, so a set value stays 40 bytes.
//!
//! The thresholds are read from the config at each write ([`Limits`]), as Redis
//! reads `server.set_max_*`: a changed threshold converts a set on its next write.
//!
//! Conversions happen where Redis makes them: SADD on a new key picks the
//! encoding from its first member and the number of members given
//! (`setTypeCreate`), and converts an existing small set up front when that
//! number is over a limit (`setTypeMaybeConvert`, presizing the dict); a
//! non-integer member turns an intset into a listpack if it still fits (the
//! member, and the digits of the intset's smallest and largest values, within
//! the value limit), else into a dict; the member past the listpack limits turns
//! a listpack into a dict presized for one more member. Nothing converts back
//! when members are removed; only the sets SINTERSTORE and SPOP build afresh
//! start small again.
//!
//! Random access follows `setTypeRandomElement`: an intset or listpack picks a
//! uniform index (`rand() % size`), a dict makes Redis's biased fair draw.
//! Membership through [`Set::contains`] makes a rehash step on a dict, as
//! `dictFind` does; [`Set::has`] reads without one (for commands that hold
//! several values at once).

use rand::RngCore;

use crate::dict::Dict;
use crate::intset::{width_of, Intset};
use crate::memory::{listpack_entry_bytes, DICT_BUCKET_SIZE, DICT_ENTRY_SIZE, DICT_SIZE};
use crate::num::parse_i64;
use crate::packed::Packed;
use crate::sampling;
use crate::sds::Sds;
use crate::zset::clamp_usize;

/// `set-max-intset-entries`.
pub const MAX_INTSET_ENTRIES: usize = 512;
/// `set-max-listpack-entries`.
pub const MAX_LISTPACK_ENTRIES: usize = 128;
/// `set-max-listpack-value`.
pub const MAX_LISTPACK_VALUE: usize = 64;
/// `sizeof(intset)`: encoding and length.
const INTSET_HEADER: usize = 8;
/// `LP_HDR_SIZE` + the end byte.
const LISTPACK_OVERHEAD: usize = 6 + 1;
/// `intsetMaxEntries`: an intset never holds more than 2^30 members.
const INTSET_HARD_MAX: usize = 1 << 30;

/// The thresholds in force for one write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub intset_entries: usize,
    pub listpack_entries: usize,
    pub listpack_value: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            intset_entries: MAX_INTSET_ENTRIES,
            listpack_entries: MAX_LISTPACK_ENTRIES,
            listpack_value: MAX_LISTPACK_VALUE,
        }
    }
}

impl Limits {
    pub fn from_config(c: &crate::server::config::Config) -> Limits {
        Limits {
            intset_entries: clamp_usize(c.set_max_intset_entries),
            listpack_entries: clamp_usize(c.set_max_listpack_entries),
            listpack_value: clamp_usize(c.set_max_listpack_value),
        }
    }

    /// `intsetMaxEntries`.
    fn intset_max(&self) -> usize {
        self.intset_entries.min(INTSET_HARD_MAX)
    }
}

#[derive(Debug)]
enum Repr {
    /// The integers at one width, as Redis's intset holds them.
    Intset(Intset),
    /// Members in insertion order, in one buffer ([`Packed`]).
    Listpack(Packed),
    Table {
        /// Boxed: the dict's tables and slab would make every set value (and
        /// every key's [`crate::keyspace::Value`]) as large as itself.
        dict: Box<Dict<()>>,
        /// Sum of the members' SDS allocations (`htGetMetadataSize`).
        sds_bytes: usize,
    },
}

#[derive(Debug)]
pub struct Set {
    repr: Repr,
}

/// `sdigits10`: the characters of `v` printed, sign included.
fn digits(v: i64) -> usize {
    let mut n = v.unsigned_abs();
    let mut len = 1 + usize::from(v < 0);
    while n >= 10 {
        n /= 10;
        len += 1;
    }
    len
}

/// `sdsAllocSize` of a member copied into the dict (`sdsnewlen` / `sdsdup`).
fn member_sds(member: &[u8]) -> usize {
    Sds::new(member).alloc_size()
}

impl Set {
    /// `setTypeCreate(first, size_hint)`.
    pub fn create(first: &[u8], size_hint: usize, limits: &Limits) -> Set {
        let repr = if parse_i64(first).is_some() && size_hint <= limits.intset_entries {
            Repr::Intset(Intset::new())
        } else if size_hint <= limits.listpack_entries {
            Repr::Listpack(Packed::new())
        } else {
            let mut dict = Dict::new();
            dict.expand(size_hint);
            Repr::Table {
                dict: Box::new(dict),
                sds_bytes: 0,
            }
        };
        Set { repr }
    }

    /// An empty listpack set (`createSetListpackObject`).
    pub fn listpack() -> Set {
        Set {
            repr: Repr::Listpack(Packed::new()),
        }
    }

    /// An empty intset (`createIntsetObject`).
    pub fn intset() -> Set {
        Set {
            repr: Repr::Intset(Intset::new()),
        }
    }

    /// An empty hashtable set (`createSetObject`), not presized.
    pub fn table() -> Set {
        Set {
            repr: Repr::Table {
                dict: Box::default(),
                sds_bytes: 0,
            },
        }
    }

    /// What OBJECT ENCODING prints.
    pub fn encoding_name(&self) -> &'static str {
        match self.repr {
            Repr::Intset(_) => "intset",
            Repr::Listpack(_) => "listpack",
            Repr::Table { .. } => "hashtable",
        }
    }

    pub fn is_intset(&self) -> bool {
        matches!(self.repr, Repr::Intset(_))
    }

    pub fn is_listpack(&self) -> bool {
        matches!(self.repr, Repr::Listpack(_))
    }

    pub fn len(&self) -> usize {
        match &self.repr {
            Repr::Intset(values) => values.len(),
            Repr::Listpack(items) => items.len(),
            Repr::Table { dict, .. } => dict.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Sizes of the dict's two tables (the second is non-zero while rehashing),
    /// for a hashtable set.
    pub fn table_sizes(&self) -> Option<[usize; 2]> {
        match &self.repr {
            Repr::Table { dict, .. } => Some(dict.table_sizes()),
            _ => None,
        }
    }

    /// `setTypeMaybeConvert`: SADD of `size_hint` members to an existing set.
    pub fn maybe_convert(&mut self, size_hint: usize, limits: &Limits) {
        let over = match self.repr {
            Repr::Listpack(_) => size_hint > limits.listpack_entries,
            Repr::Intset(_) => size_hint > limits.intset_entries,
            Repr::Table { .. } => false,
        };
        if over {
            self.convert_to_table(size_hint);
        }
    }

    /// The members in the order Redis iterates them (as strings).
    pub fn members(&self) -> Vec<Vec<u8>> {
        match &self.repr {
            Repr::Intset(values) => values.iter().map(|v| v.to_string().into_bytes()).collect(),
            Repr::Listpack(items) => items.iter().map(<[u8]>::to_vec).collect(),
            Repr::Table { dict, .. } => dict.iter().map(|(k, _)| k.to_vec()).collect(),
        }
    }

    /// The member at a position of the iteration order.
    fn member_at(&self, i: usize) -> Vec<u8> {
        match &self.repr {
            Repr::Intset(values) => values.get(i).to_string().into_bytes(),
            Repr::Listpack(items) => items.nth(i).expect("an index below len").to_vec(),
            Repr::Table { .. } => unreachable!("a dict is not indexed"),
        }
    }

    /// `setTypeConvertAndExpand(.., OBJ_ENCODING_HT, cap)`: a dict presized for
    /// `cap`, filled in iteration order with `dictAdd`.
    fn convert_to_table(&mut self, cap: usize) {
        let members = self.members();
        let mut dict = Dict::new();
        dict.expand(cap);
        let mut sds_bytes = 0;
        for m in members {
            sds_bytes += member_sds(&m);
            dict.add(m, ());
        }
        self.repr = Repr::Table {
            dict: Box::new(dict),
            sds_bytes,
        };
    }

    /// `setTypeAdd`: true if `member` was not there.
    pub fn add(&mut self, member: &[u8], limits: &Limits) -> bool {
        match &mut self.repr {
            Repr::Table { dict, sds_bytes } => {
                // `dictFindLink` then `dictSetKeyAtLink`, as Dict::insert does.
                let added = dict.insert(member.to_vec(), ()).is_none();
                if added {
                    *sds_bytes += member_sds(member);
                }
                added
            }
            Repr::Listpack(items) => {
                if items.iter().any(|m| m == member) {
                    return false;
                }
                if items.len() < limits.listpack_entries && member.len() <= limits.listpack_value {
                    items.push(member);
                } else {
                    let cap = items.len() + 1;
                    self.convert_to_table(cap);
                    self.table_add(member);
                }
                true
            }
            Repr::Intset(values) => {
                if let Some(v) = parse_i64(member) {
                    if !values.insert(v) {
                        return false;
                    }
                    if values.len() > limits.intset_max() {
                        let cap = values.len();
                        self.convert_to_table(cap);
                    }
                    return true;
                }
                let n = values.len();
                // The longest member an intset's listpack would hold: its smallest
                // or its largest value, printed.
                let widest = match (values.first(), values.last()) {
                    (Some(lo), Some(hi)) => digits(lo).max(digits(hi)),
                    _ => 0,
                };
                if n < limits.listpack_entries
                    && member.len() <= limits.listpack_value
                    && widest <= limits.listpack_value
                {
                    let mut items = Packed::new();
                    for v in values.iter() {
                        items.push(v.to_string().as_bytes());
                    }
                    items.push(member);
                    self.repr = Repr::Listpack(items);
                } else {
                    self.convert_to_table(n + 1);
                    self.table_add(member);
                }
                true
            }
        }
    }

    /// `dictAdd` of a member known to be absent, after a conversion.
    fn table_add(&mut self, member: &[u8]) {
        if let Repr::Table { dict, sds_bytes } = &mut self.repr {
            dict.add(member.to_vec(), ());
            *sds_bytes += member_sds(member);
        }
    }

    /// `setTypeRemove`: true if `member` was there.
    pub fn remove(&mut self, member: &[u8]) -> bool {
        match &mut self.repr {
            Repr::Table { dict, sds_bytes } => {
                let removed = dict.remove(member).is_some();
                if removed {
                    *sds_bytes -= member_sds(member);
                }
                removed
            }
            Repr::Listpack(items) => match items.iter_at().find(|(_, m)| *m == member) {
                Some((at, _)) => {
                    items.remove(at, 1);
                    true
                }
                None => false,
            },
            Repr::Intset(values) => parse_i64(member).is_some_and(|v| values.remove(v)),
        }
    }

    /// `setTypeIsMember` (a dict lookup makes a rehash step, as in Redis).
    pub fn contains(&mut self, member: &[u8]) -> bool {
        match &mut self.repr {
            Repr::Table { dict, .. } => dict.contains_key(member),
            _ => self.has(member),
        }
    }

    /// Membership without touching the dict's rehash.
    pub fn has(&self, member: &[u8]) -> bool {
        match &self.repr {
            Repr::Table { dict, .. } => dict.peek(member).is_some(),
            Repr::Listpack(items) => items.iter().any(|m| m == member),
            Repr::Intset(values) => parse_i64(member).is_some_and(|v| values.contains(v)),
        }
    }

    /// `setTypeRandomElement`: one member of a non-empty set.
    pub fn random_member(&mut self, rng: &mut impl RngCore) -> Option<Vec<u8>> {
        if self.is_empty() {
            return None;
        }
        match &mut self.repr {
            Repr::Table { dict, .. } => dict.fair_random_entry(rng).map(|(m, _)| m.to_vec()),
            _ => {
                let i = sampling::c_rand(rng) as usize % self.len();
                Some(self.member_at(i))
            }
        }
    }

    /// `setTypePopRandom`: removes and returns a random member (a listpack picks
    /// by one selection pass, which is as uniform as an index).
    pub fn pop_random(&mut self, rng: &mut impl RngCore) -> Option<Vec<u8>> {
        let member = match &self.repr {
            Repr::Listpack(items) if !items.is_empty() => {
                let i = sampling::unique_in_order(items.len(), 1, rng)[0];
                items.nth(i).expect("an index below len").to_vec()
            }
            _ => self.random_member(rng)?,
        };
        self.remove(&member);
        Some(member)
    }

    /// `count` independent draws in draw order (`lpRandomEntries` on a listpack,
    /// `setTypeRandomElement` each time otherwise).
    pub fn draws(&mut self, count: usize, rng: &mut impl RngCore) -> Vec<Vec<u8>> {
        if self.is_empty() {
            return Vec::new();
        }
        if let Repr::Listpack(items) = &self.repr {
            if count > 1 {
                let members: Vec<&[u8]> = items.iter().collect();
                return sampling::draws_with_repeats(items.len(), count, rng)
                    .into_iter()
                    .map(|i| members[i].to_vec())
                    .collect();
            }
        }
        (0..count).filter_map(|_| self.random_member(rng)).collect()
    }

    /// For a listpack: `count` distinct members by selection sampling
    /// (`lpNextRandom`), in listpack order, with their positions.
    pub fn listpack_sample(&self, count: usize, rng: &mut impl RngCore) -> Vec<(usize, Vec<u8>)> {
        match &self.repr {
            Repr::Listpack(items) => {
                let members: Vec<&[u8]> = items.iter().collect();
                sampling::unique_in_order(items.len(), count, rng)
                    .into_iter()
                    .map(|i| (i, members[i].to_vec()))
                    .collect()
            }
            _ => Vec::new(),
        }
    }

    /// `setTypeDup` (COPY): an intset or a listpack is copied as it is; a dict is
    /// rebuilt, presized, member by member in iteration order.
    pub fn dup(&self) -> Set {
        let repr = match &self.repr {
            Repr::Intset(values) => Repr::Intset(values.clone()),
            Repr::Listpack(items) => Repr::Listpack(items.clone()),
            Repr::Table { dict, .. } => {
                let mut copy = Dict::new();
                copy.expand(dict.len());
                let mut sds_bytes = 0;
                for (m, _) in dict.iter() {
                    if copy.insert(m.to_vec(), ()).is_none() {
                        sds_bytes += member_sds(m);
                    }
                }
                Repr::Table {
                    dict: Box::new(copy),
                    sds_bytes,
                }
            }
        };
        Set { repr }
    }

    /// `setTypeAllocSize`: the value's bytes as MEMORY USAGE counts them.
    pub fn alloc_size(&self) -> usize {
        match &self.repr {
            Repr::Intset(values) => INTSET_HEADER + values.len() * values.width(),
            Repr::Listpack(items) => {
                LISTPACK_OVERHEAD + items.iter().map(listpack_entry_bytes).sum::<usize>()
            }
            Repr::Table { dict, sds_bytes } => {
                DICT_SIZE
                    + dict.len() * DICT_ENTRY_SIZE
                    + dict.bucket_count() * DICT_BUCKET_SIZE
                    + sds_bytes
            }
        }
    }

    /// The destination SINTERSTORE starts from, given the smallest source:
    /// an intset for an intset, otherwise a listpack.
    pub fn store_target_for(smallest: &Set) -> Set {
        match smallest.repr {
            Repr::Intset(_) => Set::intset(),
            _ => Set::listpack(),
        }
    }

    /// `maybeConvertToIntset`: a set whose members are all integers becomes an
    /// intset again if it is small enough.
    pub fn maybe_to_intset(&mut self, limits: &Limits) {
        if matches!(self.repr, Repr::Intset(_)) || self.len() > limits.intset_max() {
            return;
        }
        let mut values: Vec<i64> = self
            .members()
            .iter()
            .map(|m| parse_i64(m).expect("all members are integers"))
            .collect();
        values.sort_unstable();
        let width = values.iter().map(|&v| width_of(v)).max().unwrap_or(2);
        self.repr = Repr::Intset(Intset::from_sorted(&values, width));
    }
}

// ----- SSCAN and COPY (the keyspace commands' accessors) -----

impl Set {
    /// SSCAN over a hashtable set: one `dictScan` step of its dict, emitting
    /// the members of the buckets the cursor names; the next cursor (0 at the
    /// end). `None` for an intset or a listpack, which SSCAN returns whole, in
    /// [`Set::members`] order, with cursor 0.
    pub fn scan_table(&self, cursor: u64, mut emit: impl FnMut(&[u8])) -> Option<u64> {
        match &self.repr {
            Repr::Table { dict, .. } => Some(dict.scan(cursor, |m, _| emit(m))),
            _ => None,
        }
    }
}

// ----- DUMP / RDB (see crate::rdb) -----

/// What a serialization sees of a set: the encoding and its contents in the
/// order Redis writes them.
pub enum SetParts<'a> {
    /// The intset: sorted values at one width (2, 4 or 8 bytes).
    Intset(&'a Intset),
    /// Members in listpack order.
    Listpack(&'a Packed),
    /// Members in dict iteration order.
    Table(Vec<&'a [u8]>),
}

impl Set {
    pub fn parts(&self) -> SetParts<'_> {
        match &self.repr {
            Repr::Intset(values) => SetParts::Intset(values),
            Repr::Listpack(items) => SetParts::Listpack(items),
            Repr::Table { dict, .. } => SetParts::Table(dict.iter().map(|(k, _)| k).collect()),
        }
    }

    /// An intset with these sorted, distinct values at this width (as a
    /// loaded blob says).
    pub fn from_intset(values: Vec<i64>, width: usize) -> Set {
        Set {
            repr: Repr::Intset(Intset::from_sorted(&values, width)),
        }
    }

    /// A listpack set of these distinct members, in this order.
    pub fn from_listpack(members: Vec<Vec<u8>>) -> Set {
        Set {
            repr: Repr::Listpack(members.iter().map(Vec::as_slice).collect()),
        }
    }

    /// A hashtable set: the dict expanded to `presize` (when above 0), then
    /// the distinct members added in this order.
    pub fn from_members_table(members: Vec<Vec<u8>>, presize: usize) -> Set {
        let mut dict = Dict::new();
        if presize > 0 {
            dict.expand(presize);
        }
        let mut sds_bytes = 0;
        for m in members {
            sds_bytes += member_sds(&m);
            dict.add(m, ());
        }
        Set {
            repr: Repr::Table {
                dict: Box::new(dict),
                sds_bytes,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const L: Limits = Limits {
        intset_entries: MAX_INTSET_ENTRIES,
        listpack_entries: MAX_LISTPACK_ENTRIES,
        listpack_value: MAX_LISTPACK_VALUE,
    };

    #[test]
    fn encodings_follow_the_thresholds() {
        let mut s = Set::create(b"1", 1, &L);
        for i in 0..511 {
            s.add(i.to_string().as_bytes(), &L);
        }
        assert_eq!(s.encoding_name(), "intset");
        assert_eq!(s.alloc_size(), 8 + 511 * 2);
        // A wider value widens every element.
        s.add(b"100000", &L);
        assert_eq!(s.alloc_size(), 8 + 512 * 4);
        s.add(b"100001", &L);
        assert_eq!(s.encoding_name(), "hashtable");

        let mut small = Set::create(b"1", 1, &L);
        small.add(b"1", &L);
        small.add(b"a", &L);
        assert_eq!(small.encoding_name(), "listpack");
        assert_eq!(small.members(), [b"1".to_vec(), b"a".to_vec()]);
        // 6 + (1 + 1) + (2 + 1) + 1.
        assert_eq!(small.alloc_size(), 12);
        small.add(&[b'x'; 65], &L);
        assert_eq!(small.encoding_name(), "hashtable");
        assert!(small.remove(b"a"));
        assert!(!small.contains(b"a"));
    }

    #[test]
    fn a_copy_keeps_encoding_and_size() {
        let mut s = Set::create(b"x", 200, &L);
        for i in 0..200 {
            s.add(format!("m{i}").as_bytes(), &L);
        }
        let copy = s.dup();
        assert_eq!(copy.encoding_name(), "hashtable");
        assert_eq!(copy.len(), 200);
        assert_eq!(copy.alloc_size(), s.alloc_size());
        let mut small = Set::create(b"1", 1, &L);
        small.add(b"7", &L);
        assert_eq!(small.dup().members(), [b"7".to_vec()]);
    }

    #[test]
    fn an_intset_with_long_numbers_skips_the_listpack_under_a_small_value_limit() {
        let narrow = Limits {
            listpack_value: 5,
            ..L
        };
        let mut s = Set::create(b"1", 1, &narrow);
        s.add(b"-123456", &narrow);
        s.add(b"a", &narrow);
        assert_eq!(s.encoding_name(), "hashtable");
        let mut t = Set::create(b"1", 1, &narrow);
        t.add(b"-1234", &narrow);
        t.add(b"a", &narrow);
        assert_eq!(t.encoding_name(), "listpack");
        assert_eq!(digits(-1234), 5);
        assert_eq!(digits(i64::MIN), 20);
    }
}
