//! Writing a value in RDB form (`rdbSaveObjectType`, `rdbSaveObject` and the
//! string/length primitives under them), byte for byte as Redis 8.6 writes the
//! same encoding.
//!
//! How this differs from the C code: the listpack and intset blobs are built
//! from the core's structures (which keep elements, not Redis's bytes) by
//! [`crate::lpcodec`], which produces Redis's bytes for them; a hashtable's
//! members come out in the core's dict order, which is Redis's own order for the
//! same table and seed, but Redis's seed is random per process, so those bodies
//! only agree up to order.

use super::{kind, lzf, CONTAINER_PACKED, CONTAINER_PLAIN, ENCVAL, ENC_INT16, ENC_INT32};
use super::{ENC_INT8, ENC_LZF};
use crate::keyspace::Value;
use crate::list::quicklist::Node;
use crate::list::List;
use crate::lpcodec::{self, Writer};
use crate::set::SetParts;
use crate::strings::StringValue;
use crate::zset::Encoding;

/// `rdbSaveLen`.
pub fn save_len(out: &mut Vec<u8>, len: u64) {
    if len < 1 << 6 {
        out.push(len as u8);
    } else if len < 1 << 14 {
        out.extend([0x40 | (len >> 8) as u8, len as u8]);
    } else if len <= u64::from(u32::MAX) {
        out.push(0x80);
        out.extend_from_slice(&(len as u32).to_be_bytes());
    } else {
        out.push(0x81);
        out.extend_from_slice(&len.to_be_bytes());
    }
}

/// `rdbEncodeInteger`: the 8/16/32-bit forms, if `v` fits one.
fn encode_integer(out: &mut Vec<u8>, v: i64) -> bool {
    let tag = |enc: u8| (ENCVAL << 6) | enc;
    if let Ok(b) = i8::try_from(v) {
        out.extend([tag(ENC_INT8), b as u8]);
    } else if let Ok(h) = i16::try_from(v) {
        out.push(tag(ENC_INT16));
        out.extend_from_slice(&h.to_le_bytes());
    } else if let Ok(w) = i32::try_from(v) {
        out.push(tag(ENC_INT32));
        out.extend_from_slice(&w.to_le_bytes());
    } else {
        return false;
    }
    true
}

/// `rdbSaveRawString`: integer form for up to 11 characters that `string2ll`
/// reads, LZF past 20 bytes when compressing saves at least 4, else verbatim.
pub fn save_raw_string(out: &mut Vec<u8>, s: &[u8], compress: bool) {
    if s.len() <= 11 {
        if let Some(v) = crate::num::parse_i64(s) {
            if encode_integer(out, v) {
                return;
            }
        }
    }
    if compress && s.len() > 20 {
        if let Some(c) = lzf::compress(s, s.len() - 4) {
            out.push((ENCVAL << 6) | ENC_LZF);
            save_len(out, c.len() as u64);
            save_len(out, s.len() as u64);
            out.extend_from_slice(&c);
            return;
        }
    }
    save_len(out, s.len() as u64);
    out.extend_from_slice(s);
}

/// `rdbSaveLongLongAsStringObject`.
fn save_long_long(out: &mut Vec<u8>, v: i64) {
    if !encode_integer(out, v) {
        let digits = v.to_string();
        save_len(out, digits.len() as u64);
        out.extend_from_slice(digits.as_bytes());
    }
}

/// `rdbSaveMillisecondTime`.
pub fn save_ms(out: &mut Vec<u8>, ms: u64) {
    out.extend_from_slice(&ms.to_le_bytes());
}

/// The `RDB_TYPE_*` Redis writes for this value's encoding.
pub fn object_type(value: &Value) -> u8 {
    match value {
        Value::String(_) => kind::STRING,
        Value::List(_) => kind::LIST_QUICKLIST_2,
        Value::Set(s) => match s.parts() {
            SetParts::Intset(_) => kind::SET_INTSET,
            SetParts::Listpack(_) => kind::SET_LISTPACK,
            SetParts::Table(_) => kind::SET,
        },
        Value::Zset(z) => match z.encoding() {
            Encoding::Listpack => kind::ZSET_LISTPACK,
            Encoding::Skiplist => kind::ZSET_2,
        },
        Value::Hash(h) => match h.encoding_name() {
            "listpack" => kind::HASH_LISTPACK,
            "listpackex" => kind::HASH_LISTPACK_EX,
            _ if h.min_expire().is_some() => kind::HASH_METADATA,
            _ => kind::HASH,
        },
    }
}

/// `rdbSaveObjectType`.
pub fn save_object_type(out: &mut Vec<u8>, value: &Value) {
    out.push(object_type(value));
}

/// A list node's listpack bytes.
fn listpack_bytes(lp: &crate::list::listpack::Listpack) -> Vec<u8> {
    lpcodec::encode(lp.iter())
}

/// A zset listpack: member, then the score as `zzlInsertAt` stores it (an
/// integer when `double2ll` takes it, else `d2string`'s text).
pub fn zset_listpack<'a>(pairs: impl Iterator<Item = (&'a [u8], f64)>) -> Vec<u8> {
    let mut w = Writer::new();
    for (member, score) in pairs {
        w.push(member);
        match crate::num::double_to_i64_exact(score) {
            Some(i) => w.push_int(i),
            None => w.push(crate::num::format_double(score).as_bytes()),
        }
    }
    w.finish()
}

/// `rdbSaveObject`: the value's body.
pub fn save_object(out: &mut Vec<u8>, value: &Value, compress: bool) {
    match value {
        Value::String(StringValue::Int(n)) => save_long_long(out, *n),
        Value::String(v) => save_raw_string(out, &v.bytes(), compress),
        Value::List(l) => match &**l {
            List::Listpack(lp) => {
                save_len(out, 1);
                save_len(out, CONTAINER_PACKED);
                save_raw_string(out, &listpack_bytes(lp), compress);
            }
            List::Quicklist(ql) => {
                save_len(out, ql.node_count() as u64);
                for node in ql.nodes() {
                    match node {
                        Node::Packed(lp) => {
                            save_len(out, CONTAINER_PACKED);
                            save_raw_string(out, &listpack_bytes(lp), compress);
                        }
                        Node::Plain(v) => {
                            save_len(out, CONTAINER_PLAIN);
                            save_raw_string(out, v, compress);
                        }
                    }
                }
            }
        },
        Value::Set(s) => match s.parts() {
            SetParts::Intset(values) => save_raw_string(out, &values.blob(), compress),
            SetParts::Listpack(members) => {
                save_raw_string(out, &lpcodec::encode(members.iter()), compress)
            }
            SetParts::Table(members) => {
                save_len(out, members.len() as u64);
                for m in members {
                    save_raw_string(out, m, compress);
                }
            }
        },
        Value::Zset(z) => match z.encoding() {
            Encoding::Listpack => save_raw_string(out, &zset_listpack(z.iter()), compress),
            Encoding::Skiplist => {
                save_len(out, z.len() as u64);
                let items: Vec<(&[u8], f64)> = z.iter().collect();
                for (member, score) in items.into_iter().rev() {
                    save_raw_string(out, member, compress);
                    out.extend_from_slice(&score.to_le_bytes());
                }
            }
        },
        Value::Hash(h) => {
            let entries = h.entries();
            match h.encoding_name() {
                "listpack" => {
                    let mut w = Writer::new();
                    for (f, v, _) in &entries {
                        w.push(f);
                        w.push(v);
                    }
                    save_raw_string(out, &w.finish(), compress);
                }
                "listpackex" => {
                    // `hashTypeGetMinExpire(o, 0)`: the registered time, or 0.
                    save_ms(out, h.subexpire_time().unwrap_or(0));
                    let mut w = Writer::new();
                    for (f, v, ttl) in &entries {
                        w.push(f);
                        w.push(v);
                        w.push_int(ttl.unwrap_or(0) as i64);
                    }
                    save_raw_string(out, &w.finish(), compress);
                }
                _ => {
                    let min = h.min_expire();
                    if let Some(min) = min {
                        save_ms(out, min);
                    }
                    save_len(out, entries.len() as u64);
                    for (f, v, ttl) in &entries {
                        if let Some(min) = min {
                            // 0: no TTL; else relative to the minimum, plus 1.
                            save_len(out, ttl.map_or(0, |t| t - min + 1));
                        }
                        save_raw_string(out, f, compress);
                        save_raw_string(out, v, compress);
                    }
                }
            }
        }
    }
}

/// `rdbSavedObjectLen`: the body's size (DEBUG OBJECT's `serializedlength`).
/// Redis does not count the 8-byte minimum TTL of a hash with field TTLs in
/// the size `rdbSaveObject` returns, so neither does this.
pub fn saved_len(value: &Value, compress: bool) -> usize {
    let mut out = Vec::new();
    save_object(&mut out, value, compress);
    match object_type(value) {
        kind::HASH_LISTPACK_EX | kind::HASH_METADATA => out.len() - 8,
        _ => out.len(),
    }
}
