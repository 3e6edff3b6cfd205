//! Reading a value back from RDB form (`rdbLoadObject` and the primitives under
//! it), rebuilding it with the thresholds in force, as Redis does.
//!
//! How this differs from the C code: every length read from the input is
//! checked against the bytes that remain before it is used (a count of
//! elements can be no larger than the bytes left, since each takes one at
//! least), listpacks and intsets are decoded whole and checked (Redis's
//! `sanitize-dump-payload yes` depth, plus duplicate members, sorted intsets and
//! integer TTL entries), and the errors are values, not `rdbReportCorruptRDB`.

use std::collections::HashSet;

use super::{kind, lzf, LoadError, Options, CONTAINER_PACKED, CONTAINER_PLAIN};
use super::{EB_EXPIRE_TIME_MAX, ENCVAL, ENC_INT16, ENC_INT32, ENC_INT8, ENC_LZF};
use crate::hash::{Hash, Loaded};
use crate::keyspace::Value;
use crate::list::listpack::Listpack;
use crate::list::quicklist::{Node, Quicklist};
use crate::list::List;
use crate::lpcodec::{self, LpValue};
use crate::set::Set;
use crate::strings::{ArgObject, StringValue};
use crate::zset::{Encoding, Zset};

/// `DICT_HT_INITIAL_SIZE`: loaders presize a dict only above it.
const DICT_INITIAL: usize = 4;

impl From<lpcodec::Corrupt> for LoadError {
    fn from(_: lpcodec::Corrupt) -> LoadError {
        LoadError::Corrupt
    }
}

/// A cursor over RDB bytes; every read is bounds-checked.
pub struct Reader<'a> {
    data: &'a [u8],
    at: usize,
}

/// What `rdbLoadLenByRef` read: a length, or a special string encoding.
enum Len {
    Plain(u64),
    Encoded(u8),
}

impl<'a> Reader<'a> {
    pub fn new(data: &'a [u8]) -> Reader<'a> {
        Reader { data, at: 0 }
    }

    pub fn remaining(&self) -> usize {
        self.data.len() - self.at
    }

    pub fn take(&mut self, n: usize) -> Result<&'a [u8], LoadError> {
        let end = self.at.checked_add(n).ok_or(LoadError::Corrupt)?;
        let s = self.data.get(self.at..end).ok_or(LoadError::Corrupt)?;
        self.at = end;
        Ok(s)
    }

    pub fn byte(&mut self) -> Result<u8, LoadError> {
        Ok(self.take(1)?[0])
    }

    fn len_or_enc(&mut self) -> Result<Len, LoadError> {
        let b = self.byte()?;
        Ok(match b >> 6 {
            ENCVAL => Len::Encoded(b & 0x3f),
            0 => Len::Plain(u64::from(b & 0x3f)),
            1 => Len::Plain((u64::from(b & 0x3f) << 8) | u64::from(self.byte()?)),
            _ if b == 0x80 => {
                let d = self.take(4)?;
                Len::Plain(u64::from(u32::from_be_bytes([d[0], d[1], d[2], d[3]])))
            }
            _ if b == 0x81 => {
                let mut a = [0u8; 8];
                a.copy_from_slice(self.take(8)?);
                Len::Plain(u64::from_be_bytes(a))
            }
            _ => return Err(LoadError::Corrupt),
        })
    }

    /// `rdbLoadLen`: a plain length (an encoding tag here is corruption).
    pub fn length(&mut self) -> Result<u64, LoadError> {
        match self.len_or_enc()? {
            Len::Plain(n) => Ok(n),
            Len::Encoded(_) => Err(LoadError::Corrupt),
        }
    }

    /// A count of things that each take at least one more byte.
    pub fn count(&mut self) -> Result<usize, LoadError> {
        let n = self.length()?;
        usize::try_from(n)
            .ok()
            .filter(|&n| n <= self.remaining())
            .ok_or(LoadError::Corrupt)
    }

    /// `rdbGenericLoadStringObject`: the bytes of an RDB string in any of its
    /// encodings (integers as their digits).
    pub fn string(&mut self) -> Result<Vec<u8>, LoadError> {
        match self.len_or_enc()? {
            Len::Plain(n) => {
                let n = usize::try_from(n).map_err(|_| LoadError::Corrupt)?;
                Ok(self.take(n)?.to_vec())
            }
            Len::Encoded(ENC_INT8) => Ok((self.byte()? as i8).to_string().into_bytes()),
            Len::Encoded(ENC_INT16) => {
                let d = self.take(2)?;
                Ok(i16::from_le_bytes([d[0], d[1]]).to_string().into_bytes())
            }
            Len::Encoded(ENC_INT32) => {
                let d = self.take(4)?;
                Ok(i32::from_le_bytes([d[0], d[1], d[2], d[3]])
                    .to_string()
                    .into_bytes())
            }
            Len::Encoded(ENC_LZF) => {
                let clen = usize::try_from(self.length()?).map_err(|_| LoadError::Corrupt)?;
                let len = usize::try_from(self.length()?).map_err(|_| LoadError::Corrupt)?;
                let c = self.take(clen)?;
                if len > lzf::max_expansion(clen) {
                    return Err(LoadError::Corrupt);
                }
                lzf::decompress(c, len).ok_or(LoadError::Corrupt)
            }
            Len::Encoded(_) => Err(LoadError::Corrupt),
        }
    }

    /// `rdbLoadMillisecondTime` (RDB 9+: little-endian).
    pub fn ms(&mut self) -> Result<u64, LoadError> {
        let mut a = [0u8; 8];
        a.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(a))
    }

    fn binary_double(&mut self) -> Result<f64, LoadError> {
        let mut a = [0u8; 8];
        a.copy_from_slice(self.take(8)?);
        Ok(f64::from_le_bytes(a))
    }

    /// `rdbLoadDoubleValue` (the old text form of `RDB_TYPE_ZSET`).
    fn text_double(&mut self) -> Result<f64, LoadError> {
        Ok(match self.byte()? {
            253 => f64::NAN,
            254 => f64::INFINITY,
            255 => f64::NEG_INFINITY,
            n => {
                let text = self.take(usize::from(n))?;
                let text = std::str::from_utf8(text).map_err(|_| LoadError::Corrupt)?;
                text.trim().parse::<f64>().map_err(|_| LoadError::Corrupt)?
            }
        })
    }
}

/// `tryObjectEncodingEx(o, 0)` of a loaded string, stored under a key of
/// `key_len` bytes: an integer up to 20 characters, an embstr up to 44 bytes,
/// else an exact raw SDS.
fn string_value(bytes: Vec<u8>, key_len: usize) -> StringValue {
    let obj = if bytes.len() <= 20 && crate::num::parse_i64(&bytes).is_some() {
        ArgObject::int(crate::num::parse_i64(&bytes).unwrap_or_default())
    } else {
        ArgObject::from_computed(&bytes)
    };
    obj.into_stored(key_len)
}

/// `rdbLoadObject` of a value of type `t`.
pub fn load_object(
    r: &mut Reader<'_>,
    t: u8,
    key_len: usize,
    opts: &Options,
) -> Result<Value, LoadError> {
    Ok(match t {
        kind::STRING => Value::String(string_value(r.string()?, key_len)),
        kind::LIST => Value::List(Box::new(load_plain_list(r, opts)?)),
        kind::LIST_QUICKLIST_2 => Value::List(Box::new(load_quicklist(r, opts)?)),
        kind::SET => Value::Set(load_plain_set(r, opts)?),
        kind::SET_INTSET => Value::Set(load_intset(&r.string()?, opts)?),
        kind::SET_LISTPACK => Value::Set(load_set_listpack(&r.string()?, opts)?),
        kind::ZSET | kind::ZSET_2 => Value::Zset(Box::new(load_skiplist(r, t, opts)?)),
        kind::ZSET_LISTPACK => Value::Zset(Box::new(load_zset_listpack(&r.string()?, opts)?)),
        kind::HASH => Value::Hash(load_plain_hash(r, opts, false)?),
        kind::HASH_METADATA => Value::Hash(load_plain_hash(r, opts, true)?),
        kind::HASH_LISTPACK => Value::Hash(load_hash_listpack(&r.string()?, opts, false)?),
        kind::HASH_LISTPACK_EX => {
            // The minimum TTL is only a hint; the fields carry their own.
            r.ms()?;
            Value::Hash(load_hash_listpack(&r.string()?, opts, true)?)
        }
        _ => return Err(LoadError::Unsupported),
    })
}

fn new_quicklist(opts: &Options) -> Quicklist {
    Quicklist::new(opts.list.fill, opts.list.compress)
}

/// `RDB_TYPE_LIST`: elements pushed one by one, then `LIST_CONV_AUTO`.
fn load_plain_list(r: &mut Reader<'_>, opts: &Options) -> Result<List, LoadError> {
    let n = r.count()?;
    if n == 0 {
        return Err(LoadError::EmptyKey);
    }
    let mut ql = new_quicklist(opts);
    for _ in 0..n {
        ql.push_tail(&r.string()?);
    }
    let mut list = List::Quicklist(ql);
    list.convert_auto(opts.list);
    Ok(list)
}

/// `RDB_TYPE_LIST_QUICKLIST_2`: the nodes as saved, empty listpacks skipped,
/// then `LIST_CONV_AUTO`.
fn load_quicklist(r: &mut Reader<'_>, opts: &Options) -> Result<List, LoadError> {
    let n = r.count()?;
    if n == 0 {
        return Err(LoadError::EmptyKey);
    }
    let mut ql = new_quicklist(opts);
    for _ in 0..n {
        let container = r.length()?;
        let data = r.string()?;
        if data.is_empty() {
            return Err(LoadError::Corrupt);
        }
        match container {
            CONTAINER_PLAIN => ql.append_node(Node::Plain(data.into_boxed_slice())),
            CONTAINER_PACKED => {
                let mut lp = Listpack::new();
                for v in lpcodec::decode(&data)? {
                    lp.push_back(&v.into_bytes());
                }
                ql.append_node(Node::Packed(lp));
            }
            _ => return Err(LoadError::Corrupt),
        }
    }
    if ql.is_empty() {
        return Err(LoadError::EmptyKey);
    }
    let mut list = List::Quicklist(ql);
    list.convert_auto(opts.list);
    Ok(list)
}

/// `RDB_TYPE_SET`: an intset while the members are integers and few enough, a
/// listpack while they are short and few, else a hashtable presized for all.
fn load_plain_set(r: &mut Reader<'_>, opts: &Options) -> Result<Set, LoadError> {
    let n = r.count()?;
    if n == 0 {
        return Err(LoadError::EmptyKey);
    }
    let lim = opts.set;
    enum State {
        Intset(Vec<i64>),
        Listpack(Vec<Vec<u8>>),
        Table(Vec<Vec<u8>>),
    }
    let max_intset = lim.intset_entries.min(1 << 30);
    let mut state = if n > max_intset {
        State::Table(Vec::with_capacity(n))
    } else {
        State::Intset(Vec::new())
    };
    let mut seen: HashSet<Vec<u8>> = HashSet::with_capacity(n);
    let mut maxlen = 0usize;
    for _ in 0..n {
        let m = r.string()?;
        maxlen = maxlen.max(m.len());
        if !seen.insert(m.clone()) {
            return Err(LoadError::Corrupt);
        }
        if let State::Intset(values) = &mut state {
            match crate::num::parse_i64(&m) {
                Some(v) => {
                    // Distinct canonical integer strings are distinct integers.
                    values.push(v);
                    continue;
                }
                None => {
                    let mut sorted = std::mem::take(values);
                    sorted.sort_unstable();
                    let members: Vec<Vec<u8>> =
                        sorted.iter().map(|v| v.to_string().into_bytes()).collect();
                    state = if members.len() < lim.listpack_entries && maxlen <= lim.listpack_value
                    {
                        State::Listpack(members)
                    } else {
                        State::Table(members)
                    };
                }
            }
        }
        if let State::Listpack(members) = &mut state {
            if members.len() < lim.listpack_entries && m.len() <= lim.listpack_value {
                members.push(m);
                continue;
            }
            state = State::Table(std::mem::take(members));
        }
        if let State::Table(members) = &mut state {
            members.push(m);
        }
    }
    Ok(match state {
        State::Intset(mut values) => {
            values.sort_unstable();
            let width = values
                .iter()
                .map(|&v| crate::intset::width_of(v))
                .max()
                .unwrap_or(2);
            Set::from_intset(values, width)
        }
        State::Listpack(members) => Set::from_listpack(members),
        State::Table(members) => {
            let presize = if n > DICT_INITIAL || n > max_intset {
                n
            } else {
                0
            };
            Set::from_members_table(members, presize)
        }
    })
}

/// `RDB_TYPE_SET_INTSET`: the blob checked (width, length, strictly sorted),
/// converted to a hashtable past `set-max-intset-entries`.
fn load_intset(blob: &[u8], opts: &Options) -> Result<Set, LoadError> {
    if blob.len() < 8 {
        return Err(LoadError::Corrupt);
    }
    let width = u32::from_le_bytes([blob[0], blob[1], blob[2], blob[3]]) as usize;
    let count = u32::from_le_bytes([blob[4], blob[5], blob[6], blob[7]]) as usize;
    if !matches!(width, 2 | 4 | 8) || count.checked_mul(width) != Some(blob.len() - 8) {
        return Err(LoadError::Corrupt);
    }
    let values: Vec<i64> = blob[8..]
        .chunks_exact(width)
        .map(|c| match width {
            2 => i64::from(i16::from_le_bytes([c[0], c[1]])),
            4 => i64::from(i32::from_le_bytes([c[0], c[1], c[2], c[3]])),
            _ => {
                let mut a = [0u8; 8];
                a.copy_from_slice(c);
                i64::from_le_bytes(a)
            }
        })
        .collect();
    if values.is_empty() {
        return Err(LoadError::EmptyKey);
    }
    if values.windows(2).any(|w| w[0] >= w[1]) {
        return Err(LoadError::Corrupt);
    }
    if values.len() > opts.set.intset_entries {
        let n = values.len();
        let members = values.iter().map(|v| v.to_string().into_bytes()).collect();
        return Ok(Set::from_members_table(members, n));
    }
    Ok(Set::from_intset(values, width))
}

/// The strings of a listpack whose entries must all be distinct.
fn distinct_strings(blob: &[u8]) -> Result<Vec<Vec<u8>>, LoadError> {
    let items: Vec<Vec<u8>> = lpcodec::decode(blob)?
        .into_iter()
        .map(LpValue::into_bytes)
        .collect();
    let mut seen = HashSet::with_capacity(items.len());
    if !items.iter().all(|m| seen.insert(m.as_slice())) {
        return Err(LoadError::Corrupt);
    }
    Ok(items)
}

/// `RDB_TYPE_SET_LISTPACK`: a hashtable past `set-max-listpack-entries`.
fn load_set_listpack(blob: &[u8], opts: &Options) -> Result<Set, LoadError> {
    let members = distinct_strings(blob)?;
    if members.is_empty() {
        return Err(LoadError::EmptyKey);
    }
    if members.len() > opts.set.listpack_entries {
        let n = members.len();
        return Ok(Set::from_members_table(members, n));
    }
    Ok(Set::from_listpack(members))
}

/// `RDB_TYPE_ZSET_2` / `RDB_TYPE_ZSET`: a skiplist (dict presized above 4),
/// converted to a listpack after loading if it fits.
fn load_skiplist(r: &mut Reader<'_>, t: u8, opts: &Options) -> Result<Zset, LoadError> {
    let n = r.count()?;
    if n == 0 {
        return Err(LoadError::EmptyKey);
    }
    let mut items = Vec::with_capacity(n);
    let mut seen = HashSet::with_capacity(n);
    let mut maxlen = 0;
    for _ in 0..n {
        let m = r.string()?;
        let score = if t == kind::ZSET_2 {
            r.binary_double()?
        } else {
            r.text_double()?
        };
        if score.is_nan() || !seen.insert(m.clone()) {
            return Err(LoadError::Corrupt);
        }
        maxlen = maxlen.max(m.len());
        items.push((m, score));
    }
    if n <= opts.zset.entries && maxlen <= opts.zset.value {
        return Ok(Zset::from_loaded(
            items,
            Encoding::Listpack,
            0,
            opts.zset.layout,
        ));
    }
    let presize = if n > DICT_INITIAL { n } else { 0 };
    Ok(Zset::from_loaded(
        items,
        Encoding::Skiplist,
        presize,
        opts.zset.layout,
    ))
}

/// A listpack score entry (`zzlGetScore`).
fn lp_score(v: &LpValue) -> Result<f64, LoadError> {
    let score = match v {
        LpValue::Int(i) => *i as f64,
        LpValue::Str(s) => {
            let (d, used) = crate::num::strtod_prefix(s);
            if used == 0 {
                return Err(LoadError::Corrupt);
            }
            d
        }
    };
    if score.is_nan() {
        return Err(LoadError::Corrupt);
    }
    Ok(score)
}

/// `RDB_TYPE_ZSET_LISTPACK`: member/score pairs; a skiplist past
/// `zset-max-listpack-entries`.
fn load_zset_listpack(blob: &[u8], opts: &Options) -> Result<Zset, LoadError> {
    let entries = lpcodec::decode(blob)?;
    if entries.len() % 2 != 0 {
        return Err(LoadError::Corrupt);
    }
    let mut items = Vec::with_capacity(entries.len() / 2);
    let mut seen = HashSet::with_capacity(entries.len() / 2);
    for pair in entries.chunks_exact(2) {
        let m = pair[0].to_bytes();
        if !seen.insert(m.clone()) {
            return Err(LoadError::Corrupt);
        }
        items.push((m, lp_score(&pair[1])?));
    }
    if items.is_empty() {
        return Err(LoadError::EmptyKey);
    }
    if items.len() > opts.zset.entries {
        let n = items.len();
        return Ok(Zset::from_loaded(
            items,
            Encoding::Skiplist,
            n,
            opts.zset.layout,
        ));
    }
    Ok(Zset::from_loaded(
        items,
        Encoding::Listpack,
        0,
        opts.zset.layout,
    ))
}

/// `RDB_TYPE_HASH_LISTPACK` (pairs) / `RDB_TYPE_HASH_LISTPACK_EX` (triples
/// with an integer TTL, 0 for none): a hashtable past
/// `hash-max-listpack-entries`.
fn load_hash_listpack(blob: &[u8], opts: &Options, ex: bool) -> Result<Hash, LoadError> {
    let entries = lpcodec::decode(blob)?;
    let tuple = if ex { 3 } else { 2 };
    if entries.len() % tuple != 0 {
        return Err(LoadError::Corrupt);
    }
    let mut items = Vec::with_capacity(entries.len() / tuple);
    let mut seen = HashSet::with_capacity(entries.len() / tuple);
    for t in entries.chunks_exact(tuple) {
        let field = t[0].to_bytes();
        if !seen.insert(field.clone()) {
            return Err(LoadError::Corrupt);
        }
        let ttl = if ex {
            match t[2] {
                LpValue::Int(v) if (0..=EB_EXPIRE_TIME_MAX as i64).contains(&v) => v as u64,
                _ => return Err(LoadError::Corrupt),
            }
        } else {
            0
        };
        items.push((field, t[1].to_bytes(), ttl));
    }
    if items.is_empty() {
        return Err(LoadError::EmptyKey);
    }
    let n = items.len();
    let mut h = if ex {
        Hash::from_loaded(Loaded::ListpackEx { verbatim: true }, items, 0)
    } else {
        Hash::from_loaded(Loaded::Listpack, items, 0)
    };
    if n > opts.hash.entries {
        h.convert_loaded();
    }
    Ok(h)
}

/// `RDB_TYPE_HASH` / `RDB_TYPE_HASH_METADATA`: a listpack (listpackex with
/// TTLs) while the fields are few and short, else a hashtable; with TTLs, each
/// field's is stored relative to the minimum (0 for none).
fn load_plain_hash(r: &mut Reader<'_>, opts: &Options, meta: bool) -> Result<Hash, LoadError> {
    let min = if meta { r.ms()? } else { 0 };
    if min > EB_EXPIRE_TIME_MAX + 1 {
        return Err(LoadError::Corrupt);
    }
    let n = r.count()?;
    if n == 0 {
        return Err(LoadError::EmptyKey);
    }
    let lim = opts.hash;
    let mut items = Vec::with_capacity(n);
    let mut seen = HashSet::with_capacity(n);
    // The first field or value too long for a listpack, where Redis converts.
    let mut too_long: Option<usize> = None;
    for i in 0..n {
        let ttl = if meta {
            let rel = r.length()?;
            if rel == 0 {
                0
            } else {
                let at = rel
                    .checked_add(min)
                    .and_then(|t| t.checked_sub(1))
                    .ok_or(LoadError::Corrupt)?;
                if at > EB_EXPIRE_TIME_MAX {
                    return Err(LoadError::Corrupt);
                }
                at
            }
        } else {
            0
        };
        let field = r.string()?;
        let value = r.string()?;
        if !seen.insert(field.clone()) {
            return Err(LoadError::Corrupt);
        }
        if too_long.is_none() && (field.len() > lim.value || value.len() > lim.value) {
            too_long = Some(i);
        }
        items.push((field, value, ttl));
    }
    let presize = if n > DICT_INITIAL { n } else { 0 };
    if n > lim.entries {
        // A hashtable from the start, presized for every field.
        return Ok(Hash::from_loaded(
            Loaded::Table { hfe: meta },
            items,
            presize,
        ));
    }
    let small = if meta {
        Loaded::ListpackEx { verbatim: false }
    } else {
        Loaded::Listpack
    };
    let Some(j) = too_long else {
        return Ok(Hash::from_loaded(small, items, 0));
    };
    // The fields before `j` went to a listpack; at `j` it converts (the dict
    // presized to `j`), then the dict is expanded for all `n` fields, which
    // starts a rehash Redis then advances one step per added field. A plain
    // hash adds field `j` before that expansion, a hash with TTLs after.
    let rest = items.split_off(j);
    let mut h = Hash::from_loaded(small, items, 0);
    h.convert_loaded();
    let mut rest = rest.into_iter();
    if !meta {
        if let Some((f, v, t)) = rest.next() {
            h.add_loaded(f, v, t);
        }
    }
    if presize > 0 {
        h.expand_loaded(presize);
    }
    for (f, v, t) in rest {
        h.add_loaded(f, v, t);
    }
    Ok(h)
}
