//! The hash type (`t_hash.c`), in Redis 8.6's three encodings, with field TTLs.
//!
//! * **listpack**: field/value pairs in insertion order, while there are at most
//!   `hash-max-listpack-entries` (512) fields and no field or value is longer
//!   than `hash-max-listpack-value` (64 bytes); its size is `lpBytes`. Stored
//!   like Redis's listpack in one buffer, field, value, field, value...
//!   ([`crate::packed::Packed`]: one allocation per hash, each string behind a
//!   1-2 byte length header). Unlike a listpack, a value that reads as an
//!   integer keeps its digits (so HGET answers with a slice of the buffer),
//!   and there is no backward length, header or end byte: 10 pairs of a
//!   2-byte field and an 8-digit value take 120 bytes here, 107 in Redis's
//!   listpack (header and end byte included);
//! * **listpackex** (OBJECT ENCODING `listpackex`): the same listpack with a TTL
//!   after every pair (0 for none), which the first field-expiration command on
//!   a listpack hash makes. Its fields are kept ordered by TTL, the earliest
//!   first and the fields without one at the end; a field whose TTL changes is
//!   taken out and put back before the first field with no TTL or a TTL at least
//!   as late, which is the order HGETALL shows. Its size is 24 bytes
//!   (`listpackEx`) plus `lpBytes`. Here each field is still a record with
//!   its own field and value allocations (not one buffer like the listpack);
//! * **hashtable**: a [`Dict`] of [`entry`] allocations (field and value
//!   together), whose size is the dict, 24 bytes per field, 8 per bucket and
//!   every entry's `entryMemUsage`. The dict is boxed, so the two small
//!   encodings sit inline and a hash (like every key's
//!   [`crate::keyspace::Value`]) stays 48 bytes.
//!
//! The thresholds are read from the config at each write ([`Limits`]). A hash
//! converts before a write that brings more fields than a listpack holds or a
//! string longer than its value limit (`hashTypeTryConversion`, the dict presized
//! for the new fields), after a write that takes it past the entry limit, and
//! never back.
//!
//! **Field expiration.** A field with a TTL past its time is *logically*
//! expired: reads that look a field up (HGET, HEXISTS, HINCRBY, ...) delete it
//! then and there (lazy expiry, `hashTypeGetValue`), walks (HGETALL, HKEYS,
//! HVALS) skip it, HLEN still counts it, and HRANDFIELD deletes every expired
//! field first. The server's active cycle deletes them in the background
//! ([`subexpires`]). A hash with a TTL on some field is registered in its
//! database's [`subexpires::Subexpires`] with the time Redis would record, which
//! it only updates when it moves by 4 seconds or more, and forgets when the last
//! TTL goes (HDEL, HGETDEL) or when the active cycle finds no more; the value
//! keeps that time ([`Hash::subexpire_time`]) so a hash moved to another key is
//! registered again. Times are Unix milliseconds, "expired" is `ttl < now` for a
//! lookup and `ttl <= now` for a deadline being set or the active cycle, as in
//! Redis.
//!
//! The encoding matters for more than memory: a single HRANDFIELD draw picks a
//! uniformly random listpack entry, but on a dict it uses Redis's "fair" random
//! key, which favours fields that follow empty buckets. Lab 05h measures that
//! bias.

pub mod entry;
pub mod subexpires;

use rand::RngCore;
use std::num::NonZeroU64;

use crate::dict::Dict;
use crate::inline_bytes::InlineBytes;
use crate::memory::{listpack_backlen_len, listpack_entry_bytes, listpack_int_len};
use crate::memory::{DICT_BUCKET_SIZE, DICT_ENTRY_SIZE, DICT_SIZE, LISTPACK_END, LISTPACK_HEADER};
use crate::packed::Packed;
use crate::zset::clamp_usize;
use entry::Layout;

/// Redis's `hash-max-listpack-entries` default.
pub const MAX_LISTPACK_ENTRIES: usize = 512;
/// Redis's `hash-max-listpack-value` default.
pub const MAX_LISTPACK_VALUE: usize = 64;
/// `HASH_NEW_EXPIRE_DIFF_THRESHOLD`: a hash's registered time is only updated
/// when it moves by this much.
pub const EXPIRE_DIFF_THRESHOLD: u64 = 4000;
/// `HFE_MAX_ABS_TIME_MSEC`: the latest time a field TTL may have.
pub const MAX_ABS_TIME_MS: i64 = 0x0000_FFFF_FFFF_FFFF >> 2;
/// `sizeof(listpackEx)`: the ExpireMeta and the listpack pointer.
const LISTPACK_EX_SIZE: usize = 24;

/// The listpack thresholds in force for one write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub entries: usize,
    pub value: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            entries: MAX_LISTPACK_ENTRIES,
            value: MAX_LISTPACK_VALUE,
        }
    }
}

impl Limits {
    pub fn from_config(c: &crate::server::config::Config) -> Limits {
        Limits {
            entries: clamp_usize(c.hash_max_listpack_entries),
            value: clamp_usize(c.hash_max_listpack_value),
        }
    }
}

/// What a conversion to a dict takes out of a listpack: (field, value, TTL)
/// triples, whether they came with TTLs, and the registration.
type Drained = (Vec<(Vec<u8>, Vec<u8>, u64)>, bool, Option<u64>);

/// A field of a listpackex hash.
#[derive(Clone, Debug)]
struct LpField {
    field: Vec<u8>,
    value: Vec<u8>,
    /// Unix ms, 0 for none (`HASH_LP_NO_TTL`).
    ttl: u64,
}

/// A field of a hashtable hash (the field itself is the dict's key).
#[derive(Clone, Debug)]
struct Entry {
    /// Up to 22 bytes inside the entry, as Redis embeds a short value in the
    /// field's allocation; a longer value in a box of its own.
    value: InlineBytes,
    layout: Layout,
    /// The TTL, if the field has one (an entry may keep an unused ExpireMeta).
    expire: FieldTtl,
}

/// A field's TTL in Unix ms, or none, in 8 bytes where an `Option<u64>`
/// takes 16: a big hash's entry is then 40 bytes and its slab slot 72, not
/// 80 (8 bytes less per field). A stored TTL is never 0: a time that has
/// come deletes the field instead (and 0 is what Redis's listpackex writes
/// for "no TTL").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct FieldTtl(Option<NonZeroU64>);

impl FieldTtl {
    const NONE: FieldTtl = FieldTtl(None);

    fn from_ms(ttl: Option<u64>) -> FieldTtl {
        // 0 and 1 are both long past: the same answers either way.
        FieldTtl(ttl.map(|ms| NonZeroU64::new(ms).unwrap_or(NonZeroU64::MIN)))
    }

    fn get(self) -> Option<u64> {
        self.0.map(NonZeroU64::get)
    }
}

#[derive(Debug)]
enum Repr {
    /// Pairs in insertion order, as a listpack appends them: field, value,
    /// field, value... in one buffer ([`Packed`]).
    Listpack(Packed),
    ListpackEx {
        fields: Vec<LpField>,
        /// The time this hash is registered with in `subexpires`.
        registered: Option<u64>,
    },
    Table {
        /// Boxed: a dict's two tables and slab would make every hash value
        /// (and every key's [`crate::keyspace::Value`]) as large as itself.
        dict: Box<Dict<Entry>>,
        /// Sum of `entryMemUsage` (`htGetMetadataSize`).
        alloc: usize,
        /// The dict has the field-expiration metadata (`entryHashDictTypeWithHFE`).
        hfe: bool,
        registered: Option<u64>,
    },
}

#[derive(Debug)]
pub struct Hash {
    repr: Repr,
}

impl Default for Hash {
    fn default() -> Hash {
        Hash::new()
    }
}

/// The encoding [`Hash::from_loaded`] builds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Loaded {
    Listpack,
    ListpackEx { verbatim: bool },
    Table { hfe: bool },
}

/// Where [`Hash::lookup`] found a field: the offset of its value in a
/// listpack, an index into a listpack with TTLs, or a dict entry.
#[derive(Clone, Copy)]
enum Place {
    Offset(usize),
    Index(usize),
    Entry(crate::dict::EntryRef),
}

/// What looking a field up found.
#[derive(Debug, PartialEq)]
pub enum Lookup<'a> {
    Found(&'a [u8]),
    Missing,
    /// The field had expired; it is deleted now (unless the lookup only peeked).
    Expired,
}

/// A condition of HEXPIRE and friends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ExpireCond {
    #[default]
    None,
    Nx,
    Xx,
    Gt,
    Lt,
}

/// What setting one field's TTL did (`SetExRes`, the codes HEXPIRE replies).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SetExpire {
    NoField = -2,
    ConditionNotMet = 0,
    Set = 1,
    /// The time had already come: the field is deleted.
    Deleted = 2,
}

/// A TTL change in progress (`HashTypeSetEx`): the registered time before it and
/// the earliest of the TTLs it replaced or set.
#[derive(Clone, Copy, Debug)]
pub struct ExpireBatch {
    cond: ExpireCond,
    min_before: Option<u64>,
    min_fields: Option<u64>,
}

fn min_opt(a: Option<u64>, b: u64) -> Option<u64> {
    Some(a.map_or(b, |a| a.min(b)))
}

/// `EB_EXPIRE_TIME_INVALID` for comparisons: later than any time.
const INVALID: u64 = 0x0000_FFFF_FFFF_FFFF + 1;

/// `listpackExAddInternal`: where a field with `ttl` goes.
fn lp_position(fields: &[LpField], ttl: u64) -> usize {
    if ttl == 0 {
        return fields.len();
    }
    fields
        .iter()
        .position(|f| f.ttl == 0 || f.ttl >= ttl)
        .unwrap_or(fields.len())
}

impl Hash {
    pub fn new() -> Hash {
        Hash {
            repr: Repr::Listpack(Packed::new()),
        }
    }

    /// The name OBJECT ENCODING prints.
    pub fn encoding_name(&self) -> &'static str {
        match self.repr {
            Repr::Listpack(_) => "listpack",
            Repr::ListpackEx { .. } => "listpackex",
            Repr::Table { .. } => "hashtable",
        }
    }

    fn is_listpack_like(&self) -> bool {
        !matches!(self.repr, Repr::Table { .. })
    }

    /// `hashTypeLength(o, 0)`: every field, expired or not.
    pub fn len(&self) -> usize {
        match &self.repr {
            Repr::Listpack(pairs) => pairs.len() / 2,
            Repr::ListpackEx { fields, .. } => fields.len(),
            Repr::Table { dict, .. } => dict.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// `hashTypeLength(o, 1)`: the fields HGETALL will list. Expired fields are
    /// subtracted only while the hash is registered, as in Redis.
    pub fn live_len(&self, now: u64) -> usize {
        match &self.repr {
            Repr::Listpack(pairs) => pairs.len() / 2,
            Repr::ListpackEx { fields, registered } => {
                let expired = if registered.is_some() {
                    fields
                        .iter()
                        .take_while(|f| f.ttl != 0 && f.ttl < now)
                        .count()
                } else {
                    0
                };
                fields.len() - expired
            }
            Repr::Table {
                dict, registered, ..
            } => {
                let expired = if registered.is_some() {
                    dict.iter()
                        .filter(|(_, e)| e.expire.get().is_some_and(|t| t < now))
                        .count()
                } else {
                    0
                };
                dict.len() - expired
            }
        }
    }

    /// The time this hash is registered with for active expiry, if it is.
    pub fn subexpire_time(&self) -> Option<u64> {
        match &self.repr {
            Repr::Listpack(_) => None,
            Repr::ListpackEx { registered, .. } | Repr::Table { registered, .. } => *registered,
        }
    }

    fn set_registered(&mut self, at: Option<u64>) {
        match &mut self.repr {
            Repr::Listpack(_) => {}
            Repr::ListpackEx { registered, .. } | Repr::Table { registered, .. } => {
                *registered = at
            }
        }
    }

    /// `hashTypeGetMinExpire(o, 1)`: the earliest field TTL.
    pub fn min_expire(&self) -> Option<u64> {
        match &self.repr {
            Repr::Listpack(_) => None,
            Repr::ListpackEx { fields, .. } => fields.first().map(|f| f.ttl).filter(|&t| t != 0),
            Repr::Table { dict, hfe, .. } => {
                if !hfe {
                    return None;
                }
                dict.iter().filter_map(|(_, e)| e.expire.get()).min()
            }
        }
    }

    /// `hashTypeIsFieldsWithExpire`.
    pub fn has_field_ttls(&self) -> bool {
        self.min_expire().is_some()
    }

    // ----- conversions ---------------------------------------------------------

    /// `hashTypeTryConversion`, before a write of `args` (fields and values):
    /// more new pairs than a listpack may hold, or any string over the value
    /// limit, turns a listpack into a dict first.
    pub fn prepare_for(&mut self, args: &[&[u8]], limits: &Limits) {
        if !self.is_listpack_like() {
            return;
        }
        let new_fields = args.len() / 2;
        if new_fields > limits.entries {
            self.convert();
            if let Repr::Table { dict, .. } = &mut self.repr {
                dict.expand(new_fields);
            }
        } else if args.iter().any(|a| a.len() > limits.value) {
            self.convert();
        }
    }

    /// `hashTypeConvert(.., OBJ_ENCODING_HT)`: a dict presized to the current
    /// length, filled in listpack order; a listpackex keeps its TTLs and its
    /// registration.
    fn convert(&mut self) {
        let (items, hfe, registered): Drained = match &mut self.repr {
            Repr::Listpack(pairs) => (
                lp_pairs(pairs)
                    .map(|(_, _, f, v)| (f.to_vec(), v.to_vec(), 0))
                    .collect(),
                false,
                None,
            ),
            Repr::ListpackEx { fields, registered } => (
                fields
                    .drain(..)
                    .map(|f| (f.field, f.value, f.ttl))
                    .collect(),
                true,
                *registered,
            ),
            Repr::Table { .. } => return,
        };
        let presize = items.len();
        let (dict, alloc) = table_of(items, presize);
        self.repr = Repr::Table {
            dict: Box::new(dict),
            alloc,
            hfe,
            registered,
        };
    }

    /// `hashTypeConvertListpack(.., OBJ_ENCODING_LISTPACK_EX)`: a TTL of 0 after
    /// every pair.
    fn convert_to_listpack_ex(&mut self) {
        if let Repr::Listpack(pairs) = &mut self.repr {
            let fields = lp_pairs(pairs)
                .map(|(_, _, field, value)| LpField {
                    field: field.to_vec(),
                    value: value.to_vec(),
                    ttl: 0,
                })
                .collect();
            self.repr = Repr::ListpackEx {
                fields,
                registered: None,
            };
        }
    }

    // ----- reads ---------------------------------------------------------------

    /// `hashTypeGetValue`: the value of `field` at `now`. An expired field is
    /// deleted (lazy expiry) unless `peek_only`; the caller deletes a hash left
    /// empty. A dict lookup makes a rehash step.
    ///
    /// One search finds the field, and `now` is only asked for when the field
    /// has a TTL: a hash read without field TTLs reads no clock.
    pub fn lookup(
        &mut self,
        field: &[u8],
        now: impl FnOnce() -> u64,
        peek_only: bool,
    ) -> Lookup<'_> {
        // Where the field is and whether it has expired (a dict lookup makes
        // its rehash step here), then its value read at that place: an index
        // or a dict handle, not a borrow, so that the expired path may still
        // change the hash.
        let (place, expired) = match &mut self.repr {
            Repr::Listpack(pairs) => match lp_find(pairs, field) {
                None => return Lookup::Missing,
                Some((_, value_at, _)) => (Place::Offset(value_at), false),
            },
            Repr::ListpackEx { fields, .. } => {
                let Some(i) = fields.iter().position(|f| f.field == field) else {
                    return Lookup::Missing;
                };
                let ttl = fields[i].ttl;
                (Place::Index(i), ttl != 0 && ttl < now())
            }
            Repr::Table { dict, .. } => {
                let Some(at) = dict.find_entry(field) else {
                    return Lookup::Missing;
                };
                let ttl = dict.value_at(at).expire.get();
                (Place::Entry(at), ttl.is_some_and(|t| t < now()))
            }
        };
        if expired {
            if !peek_only {
                self.remove(field);
            }
            return Lookup::Expired;
        }
        match (&self.repr, place) {
            (Repr::Listpack(pairs), Place::Offset(at)) => Lookup::Found(pairs.at(at)),
            (Repr::ListpackEx { fields, .. }, Place::Index(i)) => Lookup::Found(&fields[i].value),
            (Repr::Table { dict, .. }, Place::Entry(at)) => {
                Lookup::Found(dict.value_at(at).value.as_bytes())
            }
            // Not reached: the place was found in this same representation.
            _ => Lookup::Missing,
        }
    }

    /// A lookup at `now` that changes nothing: an expired field is reported, not
    /// deleted, and a dict makes no rehash step.
    pub fn peek_field(&self, field: &[u8], now: u64) -> Lookup<'_> {
        match self.entries().into_iter().find(|(f, _, _)| *f == field) {
            None => Lookup::Missing,
            Some((_, _, Some(t))) if t < now => Lookup::Expired,
            Some((_, v, _)) => Lookup::Found(v),
        }
    }

    /// The value of `field`, expired or not, without a rehash step (tests and
    /// other families' reads).
    pub fn get(&self, field: &[u8]) -> Option<&[u8]> {
        match &self.repr {
            Repr::Listpack(pairs) => lp_find(pairs, field).map(|(_, _, v)| v),
            Repr::ListpackEx { fields, .. } => fields
                .iter()
                .find(|f| f.field == field)
                .map(|f| f.value.as_slice()),
            Repr::Table { dict, .. } => dict.peek(field).map(|e| e.value.as_bytes()),
        }
    }

    /// The TTL of `field`: `None` if there is no such field, `Some(None)` if it
    /// has none, `Some(Some(ms))` otherwise (expired or not). A dict lookup makes
    /// a rehash step.
    pub fn ttl(&mut self, field: &[u8]) -> Option<Option<u64>> {
        match &mut self.repr {
            Repr::Listpack(pairs) => lp_find(pairs, field).map(|_| None),
            Repr::ListpackEx { fields, .. } => fields
                .iter()
                .find(|f| f.field == field)
                .map(|f| (f.ttl != 0).then_some(f.ttl)),
            Repr::Table { dict, .. } => dict.get(field).map(|e| e.expire.get()),
        }
    }

    /// Every pair, expired or not, in the order Redis walks them (listpack order,
    /// or dict order), with its TTL.
    pub fn entries(&self) -> Vec<(&[u8], &[u8], Option<u64>)> {
        match &self.repr {
            Repr::Listpack(pairs) => lp_pairs(pairs).map(|(_, _, f, v)| (f, v, None)).collect(),
            Repr::ListpackEx { fields, .. } => fields
                .iter()
                .map(|f| {
                    (
                        f.field.as_slice(),
                        f.value.as_slice(),
                        (f.ttl != 0).then_some(f.ttl),
                    )
                })
                .collect(),
            Repr::Table { dict, .. } => dict
                .iter()
                .map(|(f, e)| (f, e.value.as_bytes(), e.expire.get()))
                .collect(),
        }
    }

    /// Every pair, expired or not, in Redis's order.
    pub fn pairs(&self) -> Vec<(&[u8], &[u8])> {
        self.entries().into_iter().map(|(f, v, _)| (f, v)).collect()
    }

    /// HSCAN over a hashtable hash: one `dictScan` step of its dict, emitting
    /// the field/value pairs of the buckets the cursor names, fields whose TTL
    /// passed at `now` left out; the next cursor (0 at the end). `None` for a
    /// listpack, which HSCAN returns whole ([`Hash::live_pairs`]) with cursor 0.
    pub fn scan_table(
        &self,
        cursor: u64,
        now: u64,
        mut emit: impl FnMut(&[u8], &[u8]),
    ) -> Option<u64> {
        match &self.repr {
            Repr::Table { dict, .. } => Some(dict.scan(cursor, |f, e| {
                if e.expire.get().is_none_or(|t| t >= now) {
                    emit(f, &e.value)
                }
            })),
            Repr::Listpack(_) | Repr::ListpackEx { .. } => None,
        }
    }

    /// The pairs a walk (HGETALL) shows at `now`: expired fields skipped.
    pub fn live_pairs(&self, now: u64) -> Vec<(&[u8], &[u8])> {
        self.entries()
            .into_iter()
            .filter(|(_, _, ttl)| !ttl.is_some_and(|t| t < now))
            .map(|(f, v, _)| (f, v))
            .collect()
    }

    /// One random field and its value, the way HRANDFIELD without a count draws:
    /// uniform over a listpack (`lpRandomPair`), Redis's fair-but-biased dict draw
    /// otherwise.
    pub fn random_pair(&mut self, rng: &mut impl RngCore) -> Option<(&[u8], &[u8])> {
        match &mut self.repr {
            Repr::Listpack(pairs) if pairs.is_empty() => None,
            Repr::Listpack(pairs) => {
                let i = crate::sampling::c_rand(rng) as usize % (pairs.len() / 2);
                lp_pairs(pairs).nth(i).map(|(_, _, f, v)| (f, v))
            }
            Repr::ListpackEx { fields, .. } if fields.is_empty() => None,
            Repr::ListpackEx { fields, .. } => {
                let i = crate::sampling::c_rand(rng) as usize % fields.len();
                Some((fields[i].field.as_slice(), fields[i].value.as_slice()))
            }
            Repr::Table { dict, .. } => dict
                .fair_random_entry(rng)
                .map(|(f, e)| (f, e.value.as_bytes())),
        }
    }

    /// Whether the hash is a listpack or a listpackex (HRANDFIELD's sampling).
    pub fn is_listpack(&self) -> bool {
        self.is_listpack_like()
    }

    // ----- writes --------------------------------------------------------------

    /// `hashTypeSet`: sets a field; returns true when the field is new. A field
    /// or value over the value limit converts a listpack first (HINCRBY's path);
    /// a listpack that grows past the entry limit becomes a dict. The field's
    /// TTL is kept with `keep_ttl`, else cleared.
    pub fn set(&mut self, field: &[u8], value: &[u8], keep_ttl: bool, limits: &Limits) -> bool {
        if self.is_listpack_like() && (field.len() > limits.value || value.len() > limits.value) {
            self.convert();
        }
        let created = match &mut self.repr {
            Repr::Listpack(pairs) => match lp_find(pairs, field) {
                Some((_, value_at, _)) => {
                    pairs.replace(value_at, value);
                    false
                }
                None => {
                    pairs.push(field);
                    pairs.push(value);
                    true
                }
            },
            Repr::ListpackEx { fields, .. } => match fields.iter().position(|f| f.field == field) {
                Some(i) => {
                    fields[i].value = value.to_vec();
                    if !keep_ttl && fields[i].ttl != 0 {
                        let mut moved = fields.remove(i);
                        moved.ttl = 0;
                        fields.push(moved);
                    }
                    false
                }
                None => {
                    fields.push(LpField {
                        field: field.to_vec(),
                        value: value.to_vec(),
                        ttl: 0,
                    });
                    true
                }
            },
            Repr::Table { dict, alloc, .. } => {
                let hash = dict.hash_of(field);
                if dict.peek_hashed(hash, field).is_some() {
                    let e = dict.get_mut_hashed(hash, field).expect("present");
                    let before = e.layout.mem_usage(field.len());
                    let keep = keep_ttl && e.expire.get().is_some();
                    if !keep {
                        e.expire = FieldTtl::NONE;
                    }
                    e.layout = e.layout.update(field.len(), Some(value), &e.value, keep);
                    e.value = InlineBytes::from(value);
                    *alloc = *alloc - before + e.layout.mem_usage(field.len());
                    false
                } else {
                    let layout = Layout::new(field.len(), value, false);
                    *alloc += layout.mem_usage(field.len());
                    dict.insert_absent(
                        hash,
                        field.to_vec(),
                        Entry {
                            value: InlineBytes::from(value),
                            layout,
                            expire: FieldTtl::NONE,
                        },
                    );
                    true
                }
            }
        };
        if self.is_listpack_like() && self.len() > limits.entries {
            self.convert();
        }
        created
    }

    /// `hashTypeDelete`: true if the field was there.
    pub fn remove(&mut self, field: &[u8]) -> bool {
        match &mut self.repr {
            Repr::Listpack(pairs) => match lp_find(pairs, field) {
                Some((field_at, _, _)) => {
                    pairs.remove(field_at, 2);
                    true
                }
                None => false,
            },
            Repr::ListpackEx { fields, .. } => match fields.iter().position(|f| f.field == field) {
                Some(i) => {
                    fields.remove(i);
                    true
                }
                None => false,
            },
            Repr::Table { dict, alloc, .. } => match dict.remove(field) {
                Some(e) => {
                    *alloc -= e.layout.mem_usage(field.len());
                    true
                }
                None => false,
            },
        }
    }

    /// HDEL and HGETDEL's rule: once no field has a TTL, the hash leaves the
    /// active-expiry index.
    pub fn forget_registration_if_no_ttls(&mut self, had_ttls: bool) {
        if had_ttls && !self.has_field_ttls() {
            self.set_registered(None);
        }
    }

    // ----- field TTLs ----------------------------------------------------------

    /// `hashTypeSetExInit`: a listpack becomes a listpackex, a dict gets the
    /// expiration metadata.
    pub fn begin_expire(&mut self, cond: ExpireCond) -> ExpireBatch {
        match &mut self.repr {
            Repr::Listpack(_) => self.convert_to_listpack_ex(),
            Repr::Table { hfe, .. } => *hfe = true,
            Repr::ListpackEx { .. } => {}
        }
        ExpireBatch {
            cond,
            min_before: self.subexpire_time(),
            min_fields: None,
        }
    }

    /// `hashTypeSetEx`: sets (`Some`) or clears (`None`) the TTL of `field` under
    /// the batch's condition, at `now`. A time that has already come deletes the
    /// field. (A dict is searched once, with one rehash step, as `dictFindLink`.)
    pub fn set_expire(
        &mut self,
        field: &[u8],
        at: Option<u64>,
        batch: &mut ExpireBatch,
        now: u64,
    ) -> SetExpire {
        let cond = batch.cond;
        let refused = |prev: Option<u64>, at: u64| match prev {
            // A field without a TTL passes LT and NX.
            None => matches!(cond, ExpireCond::Xx | ExpireCond::Gt),
            Some(p) => {
                (cond == ExpireCond::Gt && p >= at)
                    || (cond == ExpireCond::Lt && p <= at)
                    || cond == ExpireCond::Nx
            }
        };
        match &mut self.repr {
            Repr::Listpack(_) => unreachable!("begin_expire converts a listpack"),
            Repr::ListpackEx { fields, .. } => {
                let Some(i) = fields.iter().position(|f| f.field == field) else {
                    return SetExpire::NoField;
                };
                let prev = (fields[i].ttl != 0).then_some(fields[i].ttl);
                let Some(at) = at else {
                    if prev.is_none() {
                        return SetExpire::ConditionNotMet;
                    }
                    let mut moved = fields.remove(i);
                    moved.ttl = 0;
                    fields.push(moved);
                    return SetExpire::Set;
                };
                if refused(prev, at) {
                    return SetExpire::ConditionNotMet;
                }
                if let Some(p) = prev {
                    batch.min_fields = min_opt(batch.min_fields, p);
                }
                if at <= now {
                    fields.remove(i);
                    return SetExpire::Deleted;
                }
                batch.min_fields = min_opt(batch.min_fields, at);
                let mut moved = fields.remove(i);
                moved.ttl = at;
                let pos = lp_position(fields, at);
                fields.insert(pos, moved);
                SetExpire::Set
            }
            Repr::Table { dict, alloc, .. } => {
                let Some(e) = dict.get_mut(field) else {
                    return SetExpire::NoField;
                };
                let prev = e.expire.get();
                let Some(at) = at else {
                    if prev.is_none() {
                        return SetExpire::ConditionNotMet;
                    }
                    // `hfieldPersist`: the ExpireMeta stays, unused.
                    e.expire = FieldTtl::NONE;
                    return SetExpire::Set;
                };
                if refused(prev, at) {
                    return SetExpire::ConditionNotMet;
                }
                if let Some(p) = prev {
                    if p == at {
                        return SetExpire::Set;
                    }
                    batch.min_fields = min_opt(batch.min_fields, p);
                }
                if !e.layout.has_meta() {
                    // A new entry with room for the TTL.
                    let before = e.layout.mem_usage(field.len());
                    e.layout = e.layout.update(field.len(), None, &e.value, true);
                    *alloc = *alloc - before + e.layout.mem_usage(field.len());
                }
                if at <= now {
                    self.remove(field);
                    return SetExpire::Deleted;
                }
                e.expire = FieldTtl::from_ms(Some(at));
                batch.min_fields = min_opt(batch.min_fields, at);
                SetExpire::Set
            }
        }
    }

    /// HPERSIST of one field at `now`: -2 no field (or an expired one), -1 no
    /// TTL, 1 cleared. A listpackex field moves to the end; a dict entry keeps its
    /// (now unused) ExpireMeta (`hfieldPersist`).
    pub fn persist(&mut self, field: &[u8], now: u64) -> i64 {
        match &mut self.repr {
            Repr::Listpack(pairs) => {
                if lp_find(pairs, field).is_some() {
                    -1
                } else {
                    -2
                }
            }
            Repr::ListpackEx { fields, .. } => {
                let Some(i) = fields.iter().position(|f| f.field == field) else {
                    return -2;
                };
                match fields[i].ttl {
                    0 => -1,
                    t if t < now => -2,
                    _ => {
                        let mut moved = fields.remove(i);
                        moved.ttl = 0;
                        fields.push(moved);
                        1
                    }
                }
            }
            Repr::Table { dict, .. } => match dict.get_mut(field) {
                None => -2,
                Some(e) => match e.expire.get() {
                    None => -1,
                    Some(t) if t < now => -2,
                    Some(_) => {
                        e.expire = FieldTtl::NONE;
                        1
                    }
                },
            },
        }
    }

    /// `hashTypeSetExDone`: updates the registered time when the earliest TTL
    /// moved by at least [`EXPIRE_DIFF_THRESHOLD`].
    pub fn end_expire(&mut self, batch: &ExpireBatch) {
        if self.is_empty() {
            return;
        }
        let before = batch.min_before.unwrap_or(INVALID);
        if before < batch.min_fields.unwrap_or(INVALID) {
            return;
        }
        let new = self.min_expire();
        let diff = before.abs_diff(new.unwrap_or(INVALID));
        if diff < EXPIRE_DIFF_THRESHOLD {
            return;
        }
        self.set_registered(new);
    }

    /// Deletes the fields whose TTL is at most `now`, earliest first, at most
    /// `quota` of them (`hashTypeExpire`); the hash is registered again with its
    /// next TTL, or not at all. Returns how many went.
    pub fn expire_fields(&mut self, now: u64, quota: usize) -> usize {
        let due: Vec<Vec<u8>> = match &self.repr {
            Repr::Listpack(_) => Vec::new(),
            Repr::ListpackEx { fields, .. } => fields
                .iter()
                .take_while(|f| f.ttl != 0 && f.ttl <= now)
                .take(quota)
                .map(|f| f.field.clone())
                .collect(),
            Repr::Table { dict, .. } => {
                let mut due: Vec<(u64, &[u8])> = dict
                    .iter()
                    .filter_map(|(f, e)| e.expire.get().filter(|&t| t <= now).map(|t| (t, f)))
                    .collect();
                due.sort();
                due.into_iter()
                    .take(quota)
                    .map(|(_, f)| f.to_vec())
                    .collect()
            }
        };
        for field in &due {
            self.remove(field);
        }
        let next = self.min_expire();
        self.set_registered(next);
        due.len()
    }

    /// `hashTypeExpireIfNeeded` (HRANDFIELD): if the earliest TTL has passed,
    /// every expired field goes; the registration follows when something did.
    pub fn expire_all_due(&mut self, now: u64) -> usize {
        match self.min_expire() {
            Some(t) if t < now => {}
            _ => return 0,
        }
        let registered = self.subexpire_time();
        let n = self.expire_fields(now, usize::MAX);
        if n == 0 {
            self.set_registered(registered);
        }
        n
    }

    /// `hashTypeDup` (COPY): a listpack is copied as it is; a dict is rebuilt,
    /// presized, field by field in iteration order with fresh entries (a field
    /// whose TTL was cleared loses its unused ExpireMeta). The copy carries the
    /// time the original is registered with, for the caller to register it.
    pub fn dup(&self) -> Hash {
        let repr = match &self.repr {
            Repr::Listpack(pairs) => Repr::Listpack(pairs.clone()),
            Repr::ListpackEx { fields, registered } => Repr::ListpackEx {
                fields: fields.clone(),
                registered: *registered,
            },
            Repr::Table {
                dict,
                hfe,
                registered,
                ..
            } => {
                let mut copy = Dict::new();
                copy.expand(dict.len());
                let mut alloc = 0;
                for (field, e) in dict.iter() {
                    let layout = Layout::new(field.len(), &e.value, e.expire.get().is_some());
                    alloc += layout.mem_usage(field.len());
                    copy.add(
                        field.to_vec(),
                        Entry {
                            value: e.value.clone(),
                            layout,
                            expire: e.expire,
                        },
                    );
                }
                Repr::Table {
                    dict: Box::new(copy),
                    alloc,
                    hfe: *hfe,
                    registered: *registered,
                }
            }
        };
        Hash { repr }
    }

    // ----- loading (see crate::rdb) -------------------------------------------

    /// A hash as `rdbLoadObject` leaves it, from (field, value, TTL or 0)
    /// triples in the order given (distinct fields):
    /// * [`Loaded::Listpack`]: the pairs as they are (TTLs ignored);
    /// * [`Loaded::ListpackEx`]: with their TTLs, kept in the order given when
    ///   `verbatim` (a listpackex blob), else each placed as `listpackExAddNew`
    ///   places it (by TTL);
    /// * [`Loaded::Table`]: a dict presized to `presize` (when above 0) filled in
    ///   that order, with the field-expiration metadata if `hfe`.
    ///
    /// A hash with a field TTL is registered with its earliest one, as RESTORE
    /// and loading register it.
    pub fn from_loaded(kind: Loaded, items: Vec<(Vec<u8>, Vec<u8>, u64)>, presize: usize) -> Hash {
        let mut h = match kind {
            Loaded::Listpack => Hash {
                repr: Repr::Listpack(
                    items
                        .iter()
                        .flat_map(|(f, v, _)| [f.as_slice(), v.as_slice()])
                        .collect(),
                ),
            },
            Loaded::ListpackEx { verbatim } => {
                let mut fields: Vec<LpField> = Vec::with_capacity(items.len());
                for (field, value, ttl) in items {
                    let at = if verbatim {
                        fields.len()
                    } else {
                        lp_position(&fields, ttl)
                    };
                    fields.insert(at, LpField { field, value, ttl });
                }
                Hash {
                    repr: Repr::ListpackEx {
                        fields,
                        registered: None,
                    },
                }
            }
            Loaded::Table { hfe } => {
                let (dict, alloc) = table_of(items, presize);
                Hash {
                    repr: Repr::Table {
                        dict: Box::new(dict),
                        alloc,
                        hfe,
                        registered: None,
                    },
                }
            }
        };
        let min = h.min_expire();
        h.set_registered(min);
        h
    }

    /// `hashTypeConvert(.., OBJ_ENCODING_HT)` of a loaded listpack or
    /// listpackex hash (the dict presized to its length, filled in its order).
    pub fn convert_loaded(&mut self) {
        self.convert();
    }

    /// `dictTryExpand` of a loaded hashtable hash: a dict that already holds
    /// fields starts an incremental rehash into the bigger table, as in Redis.
    pub fn expand_loaded(&mut self, size: usize) {
        if let Repr::Table { dict, .. } = &mut self.repr {
            dict.expand(size);
        }
    }

    /// `dictAdd` of one more loaded field to a hashtable hash (a rehash step
    /// if one is in progress); then the hash is registered with its earliest
    /// TTL.
    pub fn add_loaded(&mut self, field: Vec<u8>, value: Vec<u8>, ttl: u64) {
        if let Repr::Table { dict, alloc, .. } = &mut self.repr {
            let layout = Layout::new(field.len(), &value, ttl != 0);
            *alloc += layout.mem_usage(field.len());
            let expire = FieldTtl::from_ms((ttl != 0).then_some(ttl));
            dict.add(
                field,
                Entry {
                    value: InlineBytes::from(value),
                    layout,
                    expire,
                },
            );
        }
        let min = self.min_expire();
        self.set_registered(min);
    }

    // ----- memory --------------------------------------------------------------

    /// `hashTypeAllocSize`: the value's bytes as MEMORY USAGE counts them.
    pub fn alloc_size(&self) -> usize {
        match &self.repr {
            Repr::Listpack(pairs) => {
                LISTPACK_HEADER
                    + pairs.iter().map(listpack_entry_bytes).sum::<usize>()
                    + LISTPACK_END
            }
            Repr::ListpackEx { fields, .. } => {
                LISTPACK_EX_SIZE
                    + LISTPACK_HEADER
                    + fields
                        .iter()
                        .map(|f| {
                            let ttl = listpack_int_len(f.ttl as i64);
                            listpack_entry_bytes(&f.field)
                                + listpack_entry_bytes(&f.value)
                                + ttl
                                + listpack_backlen_len(ttl)
                        })
                        .sum::<usize>()
                    + LISTPACK_END
            }
            Repr::Table { dict, alloc, .. } => {
                DICT_SIZE
                    + dict.len() * DICT_ENTRY_SIZE
                    + dict.bucket_count() * DICT_BUCKET_SIZE
                    + alloc
            }
        }
    }
}

/// A listpack hash's pairs in order: where the field and the value start in
/// the buffer, the field, the value.
fn lp_pairs(p: &Packed) -> impl Iterator<Item = (usize, usize, &[u8], &[u8])> {
    let mut it = p.iter_at();
    std::iter::from_fn(move || {
        let (field_at, field) = it.next()?;
        let (value_at, value) = it.next()?;
        Some((field_at, value_at, field, value))
    })
}

/// `hashTypeGetFromListpack`'s `lpFind`: the pair whose field is `field` (the
/// offsets of its field and value, and the value).
fn lp_find<'a>(p: &'a Packed, field: &[u8]) -> Option<(usize, usize, &'a [u8])> {
    lp_pairs(p)
        .find(|(_, _, f, _)| *f == field)
        .map(|(field_at, value_at, _, v)| (field_at, value_at, v))
}

/// A dict-encoded hash's table from `(field, value, ttl)` triples (a TTL of 0:
/// none), presized for `presize` fields (0: not presized), and the bytes its
/// entries account for in MEMORY USAGE.
fn table_of(items: Vec<(Vec<u8>, Vec<u8>, u64)>, presize: usize) -> (Dict<Entry>, usize) {
    let mut dict = Dict::new();
    if presize > 0 {
        dict.expand(presize);
    }
    let mut alloc = 0;
    for (field, value, ttl) in items {
        let layout = Layout::new(field.len(), &value, ttl != 0);
        alloc += layout.mem_usage(field.len());
        let expire = FieldTtl::from_ms((ttl != 0).then_some(ttl));
        dict.add(
            field,
            Entry {
                value: InlineBytes::from(value),
                layout,
                expire,
            },
        );
    }
    (dict, alloc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    const L: Limits = Limits {
        entries: MAX_LISTPACK_ENTRIES,
        value: MAX_LISTPACK_VALUE,
    };

    #[test]
    fn stays_a_listpack_until_513_fields_or_a_long_value() {
        let mut h = Hash::new();
        for i in 0..512 {
            assert!(h.set(format!("f{i}").as_bytes(), b"v", false, &L));
        }
        assert_eq!(h.encoding_name(), "listpack");
        assert!(!h.set(b"f0", b"w", false, &L));
        h.set(b"f512", b"v", false, &L);
        assert_eq!(h.encoding_name(), "hashtable");
        assert_eq!(h.get(b"f0"), Some(&b"w"[..]));

        let mut small = Hash::new();
        let long = [b'x'; 65];
        small.prepare_for(&[b"f", &long], &L);
        assert_eq!(small.encoding_name(), "hashtable");
    }

    #[test]
    fn a_listpack_hash_is_one_buffer() {
        let mut h = Hash::new();
        for i in 0..10 {
            h.set(
                format!("f{i}").as_bytes(),
                format!("{}", 12_345_670 + i).as_bytes(),
                false,
                &L,
            );
        }
        let Repr::Listpack(p) = &h.repr else {
            panic!("{}", h.encoding_name())
        };
        // One length byte before each string, nothing else.
        assert_eq!(p.bytes(), 10 * (1 + 2) + 10 * (1 + 8));
        // Redis's lpBytes: header, 4 bytes a field, 6 an int32 value, end.
        assert_eq!(h.alloc_size(), 6 + 10 * 4 + 10 * 6 + 1);
        h.set(b"f3", b"x", false, &L);
        assert!(h.remove(b"f0"));
        assert_eq!(h.get(b"f3"), Some(&b"x"[..]));
        assert_eq!(h.get(b"f0"), None);
        assert_eq!(h.pairs()[0], (&b"f1"[..], &b"12345671"[..]));
        assert_eq!(h.len(), 9);
    }

    #[test]
    fn random_pairs_come_from_the_hash() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let mut h = Hash::new();
        assert!(h.random_pair(&mut rng).is_none());
        h.set(b"a", b"1", false, &L);
        h.set(b"b", b"2", false, &L);
        for _ in 0..20 {
            let (f, _) = h.random_pair(&mut rng).unwrap();
            assert!(f == b"a" || f == b"b");
        }
    }

    #[test]
    fn listpackex_keeps_fields_ordered_by_ttl() {
        let mut h = Hash::new();
        for f in ["a", "b", "c", "d"] {
            h.set(f.as_bytes(), b"v", false, &L);
        }
        let now = 1_000;
        let mut batch = h.begin_expire(ExpireCond::None);
        assert_eq!(h.encoding_name(), "listpackex");
        assert_eq!(
            h.set_expire(b"c", Some(5_000), &mut batch, now),
            SetExpire::Set
        );
        assert_eq!(
            h.set_expire(b"b", Some(9_000), &mut batch, now),
            SetExpire::Set
        );
        assert_eq!(
            h.set_expire(b"d", Some(5_000), &mut batch, now),
            SetExpire::Set
        );
        assert_eq!(
            h.set_expire(b"zz", Some(5_000), &mut batch, now),
            SetExpire::NoField
        );
        assert_eq!(
            h.set_expire(b"a", Some(500), &mut batch, now),
            SetExpire::Deleted
        );
        h.end_expire(&batch);
        let order: Vec<&[u8]> = h.pairs().into_iter().map(|(f, _)| f).collect();
        // d (5000) goes before c (5000): in front of the first TTL >= its own.
        assert_eq!(order, [&b"d"[..], b"c", b"b"]);
        assert_eq!(h.subexpire_time(), Some(5_000));
        // HSET without KEEPTTL clears the TTL and moves the field to the end.
        h.set(b"d", b"w", false, &L);
        let order: Vec<&[u8]> = h.pairs().into_iter().map(|(f, _)| f).collect();
        assert_eq!(order, [&b"c"[..], b"b", b"d"]);
        assert_eq!(h.lookup(b"c", || 5_001, false), Lookup::Expired);
        assert_eq!(h.len(), 2);
        assert_eq!(h.expire_fields(10_000, 10), 1);
        assert_eq!(h.subexpire_time(), None);
    }

    /// `lookup` in every encoding: the value of a field without a TTL is
    /// found without reading the clock; a field with one is live up to and
    /// including its deadline, expired after it (and then deleted unless the
    /// lookup only peeks).
    #[test]
    fn lookup_reads_the_clock_only_for_a_field_with_a_ttl() {
        let as_table = Limits {
            entries: 0,
            value: 64,
        };
        for (limits, plain, with_ttl) in [
            (&L, "listpack", "listpackex"),
            (&as_table, "hashtable", "hashtable"),
        ] {
            let mut h = Hash::new();
            h.set(b"f", b"v", false, limits);
            h.set(b"g", b"w", false, limits);
            assert_eq!(h.encoding_name(), plain);
            let reads = std::cell::Cell::new(0);
            let clock = |at: u64| {
                reads.set(reads.get() + 1);
                at
            };
            assert_eq!(h.lookup(b"f", || clock(0), false), Lookup::Found(b"v"));
            assert_eq!(h.lookup(b"x", || clock(0), false), Lookup::Missing);
            assert_eq!(reads.get(), 0, "{plain}: no field has a TTL");

            let mut batch = h.begin_expire(ExpireCond::None);
            h.set_expire(b"g", Some(5_000), &mut batch, 0);
            h.end_expire(&batch);
            assert_eq!(h.encoding_name(), with_ttl);
            assert_eq!(h.lookup(b"f", || clock(9_000), false), Lookup::Found(b"v"));
            assert_eq!(reads.get(), 0, "{with_ttl}: f has no TTL");
            assert_eq!(h.lookup(b"g", || clock(5_000), false), Lookup::Found(b"w"));
            assert_eq!(h.lookup(b"g", || clock(5_001), true), Lookup::Expired);
            assert_eq!(h.len(), 2, "{with_ttl}: a peek deletes nothing");
            assert_eq!(h.lookup(b"g", || clock(5_001), false), Lookup::Expired);
            assert_eq!(h.len(), 1);
            assert_eq!(reads.get(), 3);
        }
    }

    #[test]
    fn a_copy_rebuilds_a_dict_with_fresh_entries() {
        let small = Limits {
            entries: 0,
            value: 64,
        };
        let mut h = Hash::new();
        h.set(b"f", b"v", false, &small);
        h.set(b"g", b"w", false, &small);
        let mut batch = h.begin_expire(ExpireCond::None);
        h.set_expire(b"f", Some(10_000), &mut batch, 0);
        h.set_expire(b"g", Some(20_000), &mut batch, 0);
        h.end_expire(&batch);
        assert_eq!(h.persist(b"g", 0), 1);
        let copy = h.dup();
        assert_eq!(copy.encoding_name(), "hashtable");
        assert_eq!(copy.subexpire_time(), Some(10_000));
        // g's unused ExpireMeta (and its 8-bit field header) is not copied.
        assert_eq!(copy.alloc_size(), h.alloc_size() - 18);
        assert_eq!(copy.len(), 2);
    }

    #[test]
    fn a_dict_entry_grows_an_expire_meta_once() {
        let small = Limits {
            entries: 0,
            value: 64,
        };
        let mut h = Hash::new();
        h.set(b"f", b"v", false, &small);
        assert_eq!(h.encoding_name(), "hashtable");
        let plain = h.alloc_size();
        let mut batch = h.begin_expire(ExpireCond::None);
        h.set_expire(b"f", Some(10_000), &mut batch, 0);
        h.end_expire(&batch);
        // 8-bit field header (+2) and the ExpireMeta (+16).
        assert_eq!(h.alloc_size(), plain + 18);
        assert_eq!(h.persist(b"f", 0), 1);
        assert_eq!(h.alloc_size(), plain + 18);
        h.set(b"f", b"v", false, &small);
        assert_eq!(h.alloc_size(), plain);
    }
}
