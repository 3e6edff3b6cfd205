//! The set type (src/t_set.c), in the three encodings Redis 8.6 keeps it in.
//!
//! * **intset** while every member reads as a 64-bit integer (`string2ll`) and
//!   there are at most 512 (`set-max-intset-entries`): a sorted array whose
//!   element width (2, 4 or 8 bytes) grows with the largest magnitude and never
//!   shrinks; its size is 8 bytes of header + width × length;
//! * **listpack** for up to 128 members of at most 64 bytes
//!   (`set-max-listpack-entries`, `set-max-listpack-value`), in insertion order;
//!   its size is `lpBytes`;
//! * **hashtable**: a [`Dict`] of members without values; its size is the dict
//!   struct, a 24-byte entry per member, 8 bytes per bucket, and the SDS
//!   allocation of every member, which Redis keeps as the dict's metadata.
//!
//! Conversions happen where Redis makes them: SADD on a new key picks the
//! encoding from its first member and the number of members given
//! (`setTypeCreate`), and converts an existing small set up front when that
//! number is over a limit (`setTypeMaybeConvert`, presizing the dict); a
//! non-integer member turns an intset into a listpack if it still fits, else into
//! a dict; the 129th member or a long one turns a listpack into a dict presized
//! for one more member. Nothing converts back when members are removed.

use crate::dict::Dict;
use crate::memory::{listpack_entry_bytes, DICT_BUCKET_SIZE, DICT_ENTRY_SIZE, DICT_SIZE};
use crate::num::parse_i64;
use crate::sds::Sds;

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

#[derive(Debug)]
enum Repr {
    Intset {
        values: Vec<i64>,
        /// Bytes per element: 2, 4 or 8.
        width: usize,
    },
    Listpack(Vec<Vec<u8>>),
    Table {
        dict: Dict<()>,
        /// Sum of the members' SDS allocations (`htGetMetadataSize`).
        sds_bytes: usize,
    },
}

#[derive(Debug)]
pub struct Set {
    repr: Repr,
}

/// `_intsetValueEncoding`.
fn int_width(v: i64) -> usize {
    if i16::try_from(v).is_ok() {
        2
    } else if i32::try_from(v).is_ok() {
        4
    } else {
        8
    }
}

/// `sdsAllocSize` of a member copied into the dict (`sdsnewlen` / `sdsdup`).
fn member_sds(member: &[u8]) -> usize {
    Sds::new(member).alloc_size()
}

impl Set {
    /// `setTypeCreate(first, size_hint)`.
    pub fn create(first: &[u8], size_hint: usize) -> Set {
        let repr = if parse_i64(first).is_some() && size_hint <= MAX_INTSET_ENTRIES {
            Repr::Intset {
                values: Vec::new(),
                width: 2,
            }
        } else if size_hint <= MAX_LISTPACK_ENTRIES {
            Repr::Listpack(Vec::new())
        } else {
            let mut dict = Dict::new();
            dict.expand(size_hint);
            Repr::Table { dict, sds_bytes: 0 }
        };
        Set { repr }
    }

    /// An empty listpack set (`createSetListpackObject`).
    fn listpack() -> Set {
        Set {
            repr: Repr::Listpack(Vec::new()),
        }
    }

    /// An empty intset (`createIntsetObject`).
    fn intset() -> Set {
        Set {
            repr: Repr::Intset {
                values: Vec::new(),
                width: 2,
            },
        }
    }

    /// What OBJECT ENCODING prints.
    pub fn encoding_name(&self) -> &'static str {
        match self.repr {
            Repr::Intset { .. } => "intset",
            Repr::Listpack(_) => "listpack",
            Repr::Table { .. } => "hashtable",
        }
    }

    pub fn len(&self) -> usize {
        match &self.repr {
            Repr::Intset { values, .. } => values.len(),
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
    pub fn maybe_convert(&mut self, size_hint: usize) {
        let over = match self.repr {
            Repr::Listpack(_) => size_hint > MAX_LISTPACK_ENTRIES,
            Repr::Intset { .. } => size_hint > MAX_INTSET_ENTRIES,
            Repr::Table { .. } => false,
        };
        if over {
            self.convert_to_table(size_hint);
        }
    }

    /// The members in the order Redis iterates them (as strings).
    pub fn members(&self) -> Vec<Vec<u8>> {
        match &self.repr {
            Repr::Intset { values, .. } => {
                values.iter().map(|v| v.to_string().into_bytes()).collect()
            }
            Repr::Listpack(items) => items.clone(),
            Repr::Table { dict, .. } => dict.iter().map(|(k, _)| k.to_vec()).collect(),
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
        self.repr = Repr::Table { dict, sds_bytes };
    }

    /// `setTypeAdd`: true if `member` was not there.
    pub fn add(&mut self, member: &[u8]) -> bool {
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
                if items.len() < MAX_LISTPACK_ENTRIES && member.len() <= MAX_LISTPACK_VALUE {
                    items.push(member.to_vec());
                } else {
                    let cap = items.len() + 1;
                    self.convert_to_table(cap);
                    self.table_add(member);
                }
                true
            }
            Repr::Intset { values, width } => {
                if let Some(v) = parse_i64(member) {
                    let Err(at) = values.binary_search(&v) else {
                        return false;
                    };
                    values.insert(at, v);
                    *width = (*width).max(int_width(v));
                    if values.len() > MAX_INTSET_ENTRIES {
                        let cap = values.len();
                        self.convert_to_table(cap);
                    }
                    return true;
                }
                let n = values.len();
                if n < MAX_LISTPACK_ENTRIES && member.len() <= MAX_LISTPACK_VALUE {
                    let mut items: Vec<Vec<u8>> =
                        values.iter().map(|v| v.to_string().into_bytes()).collect();
                    items.push(member.to_vec());
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
            Repr::Listpack(items) => match items.iter().position(|m| m == member) {
                Some(i) => {
                    items.remove(i);
                    true
                }
                None => false,
            },
            Repr::Intset { values, .. } => match parse_i64(member) {
                Some(v) => match values.binary_search(&v) {
                    Ok(i) => {
                        values.remove(i);
                        true
                    }
                    Err(_) => false,
                },
                None => false,
            },
        }
    }

    /// `setTypeIsMember` (a dict lookup makes a rehash step, as in Redis).
    pub fn contains(&mut self, member: &[u8]) -> bool {
        match &mut self.repr {
            Repr::Table { dict, .. } => dict.contains_key(member),
            Repr::Listpack(items) => items.iter().any(|m| m == member),
            Repr::Intset { values, .. } => {
                parse_i64(member).is_some_and(|v| values.binary_search(&v).is_ok())
            }
        }
    }

    /// `setTypeAllocSize`: the value's bytes as MEMORY USAGE counts them.
    pub fn alloc_size(&self) -> usize {
        match &self.repr {
            Repr::Intset { values, width } => INTSET_HEADER + values.len() * width,
            Repr::Listpack(items) => {
                LISTPACK_OVERHEAD + items.iter().map(|m| listpack_entry_bytes(m)).sum::<usize>()
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
            Repr::Intset { .. } => Set::intset(),
            _ => Set::listpack(),
        }
    }

    /// `maybeConvertToIntset`: a set whose members are all integers becomes an
    /// intset again if it is small enough.
    pub fn maybe_to_intset(&mut self) {
        if matches!(self.repr, Repr::Intset { .. }) || self.len() > MAX_INTSET_ENTRIES {
            return;
        }
        let mut values: Vec<i64> = self
            .members()
            .iter()
            .map(|m| parse_i64(m).expect("all members are integers"))
            .collect();
        values.sort_unstable();
        let width = values.iter().map(|&v| int_width(v)).max().unwrap_or(2);
        self.repr = Repr::Intset { values, width };
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

    /// `setTypeDup` (COPY): an intset or a listpack is copied byte for byte
    /// (an intset keeps its element width); a hashtable is rebuilt, presized to
    /// the set's length and filled in iteration order.
    pub fn dup(&self) -> Set {
        let repr = match &self.repr {
            Repr::Intset { values, width } => Repr::Intset {
                values: values.clone(),
                width: *width,
            },
            Repr::Listpack(items) => Repr::Listpack(items.clone()),
            Repr::Table { dict, .. } => {
                let mut copy = Dict::new();
                copy.expand(dict.len());
                let mut sds_bytes = 0;
                for (m, _) in dict.iter() {
                    sds_bytes += member_sds(m);
                    copy.insert(m.to_vec(), ());
                }
                Repr::Table {
                    dict: copy,
                    sds_bytes,
                }
            }
        };
        Set { repr }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodings_follow_the_thresholds() {
        let mut s = Set::create(b"1", 1);
        for i in 0..511 {
            s.add(i.to_string().as_bytes());
        }
        assert_eq!(s.encoding_name(), "intset");
        assert_eq!(s.alloc_size(), 8 + 511 * 2);
        // A wider value widens every element.
        s.add(b"100000");
        assert_eq!(s.alloc_size(), 8 + 512 * 4);
        s.add(b"100001");
        assert_eq!(s.encoding_name(), "hashtable");

        let mut small = Set::create(b"1", 1);
        small.add(b"1");
        small.add(b"a");
        assert_eq!(small.encoding_name(), "listpack");
        assert_eq!(small.members(), [b"1".to_vec(), b"a".to_vec()]);
        // 6 + (1 + 1) + (2 + 1) + 1.
        assert_eq!(small.alloc_size(), 12);
        small.add(&[b'x'; 65]);
        assert_eq!(small.encoding_name(), "hashtable");
        assert!(small.remove(b"a"));
        assert!(!small.contains(b"a"));
    }
}
