//! Redis's RDB serialization (src/rdb.c): the bytes of DUMP / RESTORE, of
//! DEBUG RELOAD's in-memory RDB image, and of DEBUG OBJECT's `serializedlength`.
//!
//! A value is its type byte then its body ([`write`]); a DUMP payload is that,
//! then the 2-byte RDB version and the CRC64 of everything before it, both
//! little-endian (`createDumpPayload`, [`dump_payload`]). The types the core
//! writes are the ones Redis 8.6 writes for the same encoding:
//!
//! | value                          | type                     | body                                   |
//! |--------------------------------|--------------------------|----------------------------------------|
//! | string (int, embstr, raw, HLL) | `STRING` 0               | RDB string                             |
//! | list (listpack or quicklist)   | `LIST_QUICKLIST_2` 18    | node count, then (container, blob)     |
//! | set intset / listpack          | `SET_INTSET` 11 / `SET_LISTPACK` 20 | the blob                    |
//! | set hashtable                  | `SET` 2                  | count, members in dict order           |
//! | zset listpack / skiplist       | `ZSET_LISTPACK` 17 / `ZSET_2` 5 | blob / count, (member, f64) from the greatest |
//! | hash listpack / listpackex     | `HASH_LISTPACK` 16 / `HASH_LISTPACK_EX` 25 | (min TTL,) blob            |
//! | hash hashtable                 | `HASH` 4 / `HASH_METADATA` 24 | (min TTL,) count, (TTL,) field, value |
//!
//! An RDB string is an integer (8/16/32 bits) when the bytes are one of at most
//! 11 characters, LZF-compressed when longer than 20 bytes and `rdbcompression`
//! is on and it saves 4 bytes, else a length and the bytes.
//!
//! The reader ([`read`]) accepts those types and the older ones Redis still
//! loads for these values (`LIST` 1, `ZSET` 3), and rebuilds each value the
//! way `rdbLoadObject` does with the *current* thresholds (a set listpack over
//! `set-max-listpack-entries` becomes a hashtable, a list is a quicklist with the
//! current fill then converted, ...). Every length and count from the input is
//! checked against the bytes left before anything is allocated, so a corrupt or
//! truncated payload is an error, never a panic (Redis only checks listpacks
//! deeply with `sanitize-dump-payload yes`; the core always decodes them whole).
//! Not read: streams, modules, ziplists and zipmaps (Redis < 7 files): the core
//! has no streams and no module types, so RESTORE answers `Bad data format`.

pub mod crc64;
pub mod digest;
pub mod file;
pub mod lzf;
pub mod read;
pub mod write;

/// `RDB_VERSION` of Redis 8.6.
pub const RDB_VERSION: u16 = 13;

/// `RDB_TYPE_*`.
pub mod kind {
    pub const STRING: u8 = 0;
    pub const LIST: u8 = 1;
    pub const SET: u8 = 2;
    pub const ZSET: u8 = 3;
    pub const HASH: u8 = 4;
    pub const ZSET_2: u8 = 5;
    pub const SET_INTSET: u8 = 11;
    pub const HASH_LISTPACK: u8 = 16;
    pub const ZSET_LISTPACK: u8 = 17;
    pub const LIST_QUICKLIST_2: u8 = 18;
    pub const SET_LISTPACK: u8 = 20;
    pub const HASH_METADATA: u8 = 24;
    pub const HASH_LISTPACK_EX: u8 = 25;
}

/// `RDB_OPCODE_*` of an RDB file.
pub mod opcode {
    pub const IDLE: u8 = 248;
    pub const FREQ: u8 = 249;
    pub const AUX: u8 = 250;
    pub const RESIZEDB: u8 = 251;
    pub const EXPIRETIME_MS: u8 = 252;
    pub const EXPIRETIME: u8 = 253;
    pub const SELECTDB: u8 = 254;
    pub const EOF: u8 = 255;
}

/// `RDB_ENCVAL` (the top two bits of a length byte) and `RDB_ENC_*`.
pub const ENCVAL: u8 = 3;
pub const ENC_INT8: u8 = 0;
pub const ENC_INT16: u8 = 1;
pub const ENC_INT32: u8 = 2;
pub const ENC_LZF: u8 = 3;

/// `QUICKLIST_NODE_CONTAINER_PLAIN` / `_PACKED`.
pub const CONTAINER_PLAIN: u64 = 1;
pub const CONTAINER_PACKED: u64 = 2;

/// `EB_EXPIRE_TIME_MAX`: the latest field TTL a hash may hold.
pub const EB_EXPIRE_TIME_MAX: u64 = (1 << 48) - 1;

/// Why a payload did not load (RESTORE says `Bad data format` for all).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoadError {
    /// Truncated, malformed or inconsistent bytes.
    Corrupt,
    /// A type the core does not load (streams, modules, ziplists).
    Unsupported,
    /// A valid but empty collection (`RDB_LOAD_ERR_EMPTY_KEY`).
    EmptyKey,
}

/// The thresholds a loaded value is rebuilt with, and whether strings are
/// compressed when written.
#[derive(Clone, Copy, Debug)]
pub struct Options {
    pub compress: bool,
    pub list: crate::list::ListConfig,
    pub set: crate::set::Limits,
    pub zset: crate::zset::Limits,
    pub hash: crate::hash::Limits,
}

impl Options {
    pub fn of(c: &crate::server::config::Config) -> Options {
        Options {
            compress: c
                .get("rdbcompression")
                .first()
                .is_none_or(|(_, v)| !v.eq_ignore_ascii_case("no")),
            list: crate::list::ListConfig::of(c),
            set: crate::set::Limits::from_config(c),
            zset: crate::zset::Limits::from_config(c),
            hash: crate::hash::Limits::from_config(c),
        }
    }
}

impl Default for Options {
    fn default() -> Options {
        Options {
            compress: true,
            list: Default::default(),
            set: Default::default(),
            zset: Default::default(),
            hash: Default::default(),
        }
    }
}

/// `createDumpPayload`: the value's type and body, the RDB version, the CRC64.
pub fn dump_payload(value: &crate::keyspace::Value, compress: bool) -> Vec<u8> {
    let mut out = Vec::new();
    write::save_object_type(&mut out, value);
    write::save_object(&mut out, value, compress);
    seal_payload(&mut out);
    out
}

/// The footer of every DUMP payload (values and FUNCTION DUMP): the RDB version
/// (2 bytes, little endian) and the CRC64 of everything before it.
pub fn seal_payload(out: &mut Vec<u8>) {
    out.extend_from_slice(&RDB_VERSION.to_le_bytes());
    let crc = crc64::crc64(0, out);
    out.extend_from_slice(&crc.to_le_bytes());
}

/// `verifyDumpPayload`: at least the 10-byte footer, a version no newer than
/// ours, and the CRC64 right (a CRC of 0 means "not checked").
pub fn verify_payload(p: &[u8]) -> bool {
    if p.len() < 10 {
        return false;
    }
    let footer = &p[p.len() - 10..];
    let version = u16::from_le_bytes([footer[0], footer[1]]);
    if version > RDB_VERSION {
        return false;
    }
    let mut crc = [0u8; 8];
    crc.copy_from_slice(&footer[2..]);
    let crc = u64::from_le_bytes(crc);
    crc == 0 || crc == crc64::crc64(0, &p[..p.len() - 8])
}

/// RESTORE's load of a verified payload: the value stored under a key of
/// `key_len` bytes. As in Redis, the reader runs over the whole payload, footer
/// included (a value cut short may read into it), and bytes left after the
/// value are not looked at.
pub fn load_payload(
    p: &[u8],
    key_len: usize,
    opts: &Options,
) -> Result<crate::keyspace::Value, LoadError> {
    let mut r = read::Reader::new(p);
    let t = r.byte()?;
    let value = read::load_object(&mut r, t, key_len, opts)?;
    Ok(value)
}

#[cfg(test)]
mod tests;
