//! What `MEMORY USAGE` answers for a sorted set or a hash on Redis 8.6 built with
//! jemalloc (sets count themselves in [`crate::set`]).
//!
//! Redis 8.6 no longer estimates a sorted set by sampling: `kvobjComputeSize`
//! (src/object.c) returns `kvobjAllocSize`, which adds the allocation holding the
//! key object to the sizes the set itself keeps track of (`zsetAllocSize` in
//! src/t_zset.c). The `SAMPLES` option is parsed and checked but does not change
//! the answer for a sorted set. The parts, for x86_64:
//!
//! * **The key object** (`kvobjCreate`): one allocation holding the 16-byte
//!   `robj`, one byte giving the key's sds header size, and the key as an sds
//!   string (header, bytes, NUL). An expiry adds an 8-byte slot in front; keys of
//!   128 bytes or more always get that slot. The main dict stores this object
//!   directly in its bucket, so there is no dict entry to add. This allocation
//!   is counted at jemalloc's usable size.
//! * **A listpack** is counted by its byte length (`lpBytes`), not its
//!   allocation: a 6-byte header, each entry (encoding byte(s), data, and a
//!   backward length of 1 to 5 bytes), and the end byte. Members and scores
//!   alternate. A member that reads as a 64-bit integer is stored as one; a score
//!   that is whole and within ±2^62 is stored as an integer, otherwise as the
//!   text Redis prints for it.
//! * **A skiplist** is `sizeof(zset)` (16) + the usable sizes of the `zskiplist`
//!   struct (40 bytes), of the header node (32 levels), and of every node +
//!   `sizeof(dict)` (56) + 24 bytes per element + 8 bytes per bucket
//!   (`dictMemUsage`, which counts a full `dictEntry` for every key even when
//!   Redis stores the key in the bucket itself). A node is one allocation: score
//!   (8), backward pointer (8), 16 bytes per level (forward pointer and span), then
//!   the member as an embedded sds string.
//!
//! * **A list** (`listTypeAllocSize`) is its listpack's `lpBytes`, or for a
//!   quicklist the quicklist's own accounting: the 48-byte struct, 40 bytes per
//!   node, and each node's listpack bytes (a plain node: its element's length);
//!   see [`crate::list::quicklist`].
//!
//! Node levels are random in Redis (libc `random()` seeded from the clock), so
//! two servers given the same commands can disagree on a skiplist's size; the
//! core counts its own nodes' levels, which follow the same distribution.
//!
//! A hash (`hashTypeAllocSize`) is counted like a sorted set's listpack when it
//! is one (fields and values alternate); a listpackex adds its 24-byte header and
//! a TTL entry per field; a hashtable is `sizeof(dict)` + 24 bytes per field + 8
//! per bucket + the exact `entryMemUsage` of every field (see
//! [`crate::hash::entry`]). All of it is deterministic, so the core's answer for
//! a hash is Redis's (given the same bucket counts, which the core's dict
//! reproduces).

use crate::num::double_to_i64_exact;
use crate::zset::skiplist::ZSKIPLIST_MAXLEVEL;
use crate::zset::{Encoding, Zset};

/// `sizeof(robj)`: type/encoding/lru bits, refcount, flags and the value pointer.
pub const ROBJ_SIZE: usize = 16;
/// `sizeof(zset)`: the dict and skiplist pointers.
pub const ZSET_SIZE: usize = 16;
/// `sizeof(zskiplist)`: header, tail, length, level (padded) and alloc_size.
pub const ZSKIPLIST_SIZE: usize = 40;
/// `sizeof(dict)` in Redis 8.6.
pub const DICT_SIZE: usize = 56;
/// `sizeof(dictEntry)`: next, key and value, counted once per element.
pub const DICT_ENTRY_SIZE: usize = 24;
/// One bucket of a dict table: a pointer.
pub const DICT_BUCKET_SIZE: usize = 8;
/// `sizeof(zskiplistNode)` without levels: score and backward pointer.
pub const NODE_FIXED_SIZE: usize = 16;
/// One `zskiplistLevel`: forward pointer and span.
pub const NODE_LEVEL_SIZE: usize = 16;
/// The expiry slot a key object carries in front of its `robj`.
pub const EXPIRE_SLOT_SIZE: usize = 8;
/// Keys at least this long get an expiry slot up front
/// (`KEY_SIZE_TO_INCLUDE_EXPIRE_THRESHOLD`).
pub const KEY_LEN_WITH_EXPIRE_SLOT: usize = 128;
/// `LP_HDR_SIZE`: total bytes (4) and element count (2).
pub const LISTPACK_HEADER: usize = 6;
/// `LP_EOF`.
pub const LISTPACK_END: usize = 1;

/// The size jemalloc really hands out for a request of `n` bytes
/// (`zmalloc_size`), for Redis's bundled jemalloc 5.3 on x86_64, configured with
/// `--with-lg-quantum=3`: multiples of 8 up to 64, then four classes per doubling
/// (80, 96, 112, 128, 160, 192, 224, 256, 320, ...). The same spacing goes on
/// through the large classes (16 KiB and up, page multiples).
pub fn jemalloc_usable(n: usize) -> usize {
    if n <= 64 {
        return n.max(1).next_multiple_of(8);
    }
    // n is in (2^k, 2^(k+1)]; the classes there are 2^(k-2) apart.
    let k = usize::BITS - 1 - (n - 1).leading_zeros();
    n.next_multiple_of(1 << (k - 2))
}

/// `sdsHdrSize(sdsReqType(len))`: 1, 3, 5, 9 or 17 bytes. A type holds a length
/// up to its maximum minus header minus NUL: 252 for type 8, 65,530 for type 16.
pub fn sds_header_len(len: usize) -> usize {
    match len {
        0..32 => 1,
        32..=252 => 3,
        253..=65530 => 5,
        _ if (len as u64) <= (1u64 << 32) - 10 => 9,
        _ => 17,
    }
}

/// `sdsReqSize`: header, bytes and the terminating NUL.
pub fn sds_size(len: usize) -> usize {
    sds_header_len(len) + len + 1
}

/// The usable size of a key object with an embedded key of `key_len` bytes.
pub fn key_object_size(key_len: usize, has_expire: bool) -> usize {
    let slot = has_expire || key_len >= KEY_LEN_WITH_EXPIRE_SLOT;
    let meta = if slot { EXPIRE_SLOT_SIZE } else { 0 };
    jemalloc_usable(meta + ROBJ_SIZE + 1 + sds_size(key_len))
}

/// `lpStringToInt64`: the integer a listpack stores instead of `s`, if any.
/// Strict: no sign but `-`, no leading zeros, no `-0`, at most 20 bytes.
pub fn listpack_int(s: &[u8]) -> Option<i64> {
    if s.is_empty() || s.len() > 20 {
        return None;
    }
    if s == b"0" {
        return Some(0);
    }
    let digits = s.strip_prefix(b"-").unwrap_or(s);
    if !matches!(digits.first(), Some(b'1'..=b'9')) || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(s).ok()?.parse().ok()
}

/// Encoding + data bytes of an integer entry: 1, 2, 3, 4, 5 or 9.
pub fn listpack_int_len(v: i64) -> usize {
    match v {
        0..=127 => 1,
        -4096..=4095 => 2,
        -32768..=32767 => 3,
        -8_388_608..=8_388_607 => 4,
        -2_147_483_648..=2_147_483_647 => 5,
        _ => 9,
    }
}

/// Encoding + data bytes of a string entry of `len` bytes.
pub fn listpack_str_len(len: usize) -> usize {
    match len {
        0..64 => 1 + len,
        64..4096 => 2 + len,
        _ => 5 + len,
    }
}

/// Bytes of the backward length that follows an entry of `len` bytes.
pub fn listpack_backlen_len(len: usize) -> usize {
    match len {
        0..=127 => 1,
        128..16383 => 2,
        16383..2097151 => 3,
        2097151..268435455 => 4,
        _ => 5,
    }
}

/// Whole bytes of an entry whose encoding + data take `len` bytes.
fn with_backlen(len: usize) -> usize {
    len + listpack_backlen_len(len)
}

/// Bytes of one entry holding the string `s` (stored as an integer if it reads as one).
pub fn listpack_entry_bytes(s: &[u8]) -> usize {
    with_backlen(match listpack_int(s) {
        Some(v) => listpack_int_len(v),
        None => listpack_str_len(s.len()),
    })
}

/// Bytes of the entry holding a score (`zzlInsertAt`).
pub fn listpack_score_bytes(score: f64) -> usize {
    match double_to_i64_exact(score) {
        Some(v) => with_backlen(listpack_int_len(v)),
        None => listpack_entry_bytes(crate::num::format_double(score).as_bytes()),
    }
}

/// `lpBytes` of the listpack holding these (score, member) pairs.
pub fn listpack_bytes<'a>(pairs: impl Iterator<Item = (f64, &'a [u8])>) -> usize {
    let entries: usize = pairs
        .map(|(score, member)| listpack_entry_bytes(member) + listpack_score_bytes(score))
        .sum();
    LISTPACK_HEADER + entries + LISTPACK_END
}

/// Usable size of a skiplist node with `level` levels holding a `member_len`-byte
/// member (`zslCreateNode`). A member under 32 bytes gets a 1-byte sds header.
pub fn skiplist_node_size(level: usize, member_len: usize) -> usize {
    jemalloc_usable(NODE_FIXED_SIZE + level * NODE_LEVEL_SIZE + sds_size(member_len))
}

/// `zslAllocSize`: the struct, the 32-level header node and every node.
pub fn skiplist_alloc_size(z: &Zset) -> usize {
    let header = jemalloc_usable(NODE_FIXED_SIZE + ZSKIPLIST_MAXLEVEL * NODE_LEVEL_SIZE);
    let nodes: usize = z
        .node_shapes()
        .map(|(level, len)| skiplist_node_size(level, len))
        .sum();
    jemalloc_usable(ZSKIPLIST_SIZE) + header + nodes
}

/// `listTypeAllocSize`: the list's value, without the key object.
pub fn list_alloc_size(list: &crate::list::List) -> usize {
    list.alloc_size()
}

/// `sizeof(dict) + dictMemUsage(d)`.
pub fn dict_alloc_size(elements: usize, buckets: usize) -> usize {
    DICT_SIZE + elements * DICT_ENTRY_SIZE + buckets * DICT_BUCKET_SIZE
}

/// `zsetAllocSize`: the set's value, without the key object.
pub fn zset_alloc_size(z: &Zset) -> usize {
    match z.encoding() {
        Encoding::Listpack => listpack_bytes(z.iter().map(|(m, s)| (s, m))),
        Encoding::Skiplist => {
            ZSET_SIZE + skiplist_alloc_size(z) + dict_alloc_size(z.len(), z.dict_buckets())
        }
    }
}

/// `hashTypeAllocSize`: a hash's value, without the key object.
pub fn hash_alloc_size(h: &crate::hash::Hash) -> usize {
    h.alloc_size()
}

/// What `MEMORY USAGE key [SAMPLES samples]` returns for a sorted set stored
/// under `key` without an expiry. `samples` is accepted for the command's
/// sake: Redis 8.6 counts a sorted set exactly, whatever it says.
pub fn zset_memory_usage(key: &[u8], z: &Zset, samples: usize) -> usize {
    let _ = samples;
    key_object_size(key.len(), false) + zset_alloc_size(z)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::zset::{AddFlags, Limits};

    #[test]
    fn jemalloc_classes_with_an_8_byte_quantum() {
        let classes: Vec<usize> = [
            0, 1, 8, 9, 17, 20, 24, 33, 41, 57, 64, 65, 81, 97, 113, 128, 129, 161, 193, 225, 256,
            257, 321, 385, 449, 512, 513, 528,
        ]
        .iter()
        .map(|&n| jemalloc_usable(n))
        .collect();
        assert_eq!(
            classes,
            [
                8, 8, 8, 16, 24, 24, 24, 40, 48, 64, 64, 80, 96, 112, 128, 128, 160, 192, 224, 256,
                256, 320, 384, 448, 512, 512, 640, 640
            ]
        );
        assert_eq!(jemalloc_usable(1025), 1280);
        assert_eq!(jemalloc_usable(14336), 14336);
        assert_eq!(jemalloc_usable(14337), 16384);
        assert_eq!(jemalloc_usable(16385), 20480);
        assert_eq!(jemalloc_usable((1 << 20) + 1), (1 << 20) + (1 << 18));
    }

    #[test]
    fn sds_headers_follow_sds_req_type() {
        assert_eq!(sds_header_len(0), 1);
        assert_eq!(sds_header_len(31), 1);
        assert_eq!(sds_header_len(32), 3);
        assert_eq!(sds_header_len(252), 3);
        assert_eq!(sds_header_len(253), 5);
        assert_eq!(sds_header_len(65530), 5);
        assert_eq!(sds_header_len(65531), 9);
    }

    #[test]
    fn listpack_numbers_use_the_smallest_encoding() {
        assert_eq!(listpack_int(b"0"), Some(0));
        assert_eq!(listpack_int(b"-0"), None);
        assert_eq!(listpack_int(b"007"), None);
        assert_eq!(listpack_int(b"+7"), None);
        assert_eq!(listpack_int(b"12345678"), Some(12_345_678));
        assert_eq!(listpack_int(b"9223372036854775808"), None);
        assert_eq!(listpack_entry_bytes(b"a"), 3);
        assert_eq!(listpack_entry_bytes(b"12345678"), 6);
        assert_eq!(listpack_score_bytes(1.0), 2);
        assert_eq!(listpack_score_bytes(-0.0), 2);
        assert_eq!(listpack_score_bytes(4096.0), 4);
        assert_eq!(listpack_score_bytes(1.5), 5);
        assert_eq!(listpack_entry_bytes(&[b'x'; 64]), 67);
        assert_eq!(listpack_entry_bytes(&[b'x'; 126]), 130);
    }

    #[test]
    fn one_small_member_is_a_36_byte_listpack_key() {
        let mut z = Zset::new();
        z.add(1.0, b"a", AddFlags::default(), &Limits::default());
        // Key object: 16 + 1 + 3 = 20 -> 24; listpack: 6 + 3 + 2 + 1 = 12.
        assert_eq!(zset_memory_usage(b"k", &z, 5), 36);
    }

    #[test]
    fn a_65_byte_member_makes_a_skiplist_of_known_size() {
        let mut z = Zset::with_hint(1, 65, &Limits::default());
        z.add(1.0, &[b'm'; 65], AddFlags::default(), &Limits::default());
        let level = z.node_shapes().next().expect("one member").0;
        assert_eq!(z.dict_buckets(), 4);
        let node = skiplist_node_size(level, 65);
        // 24 (key) + 16 (zset) + 40 + 640 (header) + node + 56 + 24 + 4 * 8.
        assert_eq!(
            zset_memory_usage(b"k2", &z, 0),
            24 + 16 + 40 + 640 + node + 112
        );
        // 16 + 16 per level + 3 + 65 + 1: 101 -> 112 at level 1, 117 -> 128 at
        // level 2; a real server answers 944 three times in four, else 960.
        assert_eq!(skiplist_node_size(1, 65), 112);
        assert_eq!(skiplist_node_size(2, 65), 128);
    }
}
