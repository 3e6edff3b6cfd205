//! The string value, in the three encodings Redis 8.6 keeps it in.
//!
//! * **int**: a value that reads as a 64-bit integer (`string2l`: no `+`, no
//!   leading zero, no `-0`, at most 20 bytes) is stored in the object's pointer
//!   field and costs nothing beyond the key object;
//! * **embstr**: a short value stored inside the key object's own allocation.
//!   Redis 8 embeds the key too, so whether a value fits depends on both: the
//!   argument becomes an embstr object when it has at most 44 bytes
//!   (`OBJ_ENCODING_EMBSTR_SIZE_LIMIT`), and `kvobjSet` keeps it embedded only if
//!   16 (robj) + key + 3 + value + 4 ≤ 64 bytes (a cache line), i.e. key + value
//!   ≤ 41 bytes; otherwise the value moves to its own SDS and the encoding is raw;
//! * **raw**: an [`Sds`] of its own. APPEND and SETRANGE always work on a raw
//!   string (`dbUnshareStringValue` turns int and embstr into an exact-size raw
//!   first) and make it grow with SDS's preallocation.
//!
//! As in Redis, a short embstr costs no allocation of its own: up to 30 of
//! its bytes sit inside the value itself ([`Embedded`]), in the key table's
//! entry (31 to 41 bytes get a box of their own).
//!
//! A value passes through an *argument object* first (what `tryObjectEncoding`
//! made of the client's argument, or what a command computed); that object's
//! encoding also decides whether Redis reuses the key's existing allocation on
//! overwrite, which [`ArgObject::swappable`] reports for the keyspace.

use std::borrow::Cow;

use crate::memory::{jemalloc_usable, key_object_size, sds_size, EXPIRE_SLOT_SIZE, ROBJ_SIZE};
use crate::num::parse_i64;
use crate::sds::Sds;

/// `OBJ_ENCODING_EMBSTR_SIZE_LIMIT`.
pub const EMBSTR_SIZE_LIMIT: usize = 44;
/// `CACHE_LINE_SIZE`, the bound `kvobjSet` uses to embed a value.
pub const CACHE_LINE: usize = 64;
/// `OBJ_SHARED_INTEGERS`: 0..10000 are shared objects.
pub const SHARED_INTEGERS: i64 = 10_000;
/// `PROTO_MBULK_BIG_ARG`: bigger arguments keep the query buffer as their SDS.
pub const MBULK_BIG_ARG: usize = 32 * 1024;
/// `proto-max-bulk-len`'s default, the 512 MB limit of a string.
pub const PROTO_MAX_BULK_LEN: u64 = 512 * 1024 * 1024;

/// A string value as stored under a key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StringValue {
    Int(i64),
    Embstr(Embedded),
    Raw(Sds),
}

/// The most bytes an embstr value holds: `kvobjSet` embeds a value when 16
/// (robj) + key + 3 + value + 4 <= 64, so with the shortest key (0 bytes).
pub const EMBEDDED_MAX: usize = CACHE_LINE - ROBJ_SIZE - 3 - 4;

/// Bytes kept inline by an [`Embedded`]: as many as leave the value types
/// their size (a `keyspace::Value` of 48 bytes).
const INLINE_MAX: usize = 30;

/// An embstr's bytes. Redis keeps them in the key object's own allocation;
/// here up to [`INLINE_MAX`] sit in the value itself, so a short string under
/// a key allocates nothing beyond the key, and longer ones (up to
/// [`EMBEDDED_MAX`]) have a box of their own. Reads as a `&[u8]`.
#[derive(Clone, PartialEq, Eq)]
pub enum Embedded {
    Inline { len: u8, bytes: [u8; INLINE_MAX] },
    Boxed(Box<[u8]>),
}

impl Embedded {
    /// `bytes` as an embstr's, or `None` if they are longer than [`EMBEDDED_MAX`].
    pub fn new(bytes: &[u8]) -> Option<Embedded> {
        if bytes.len() > EMBEDDED_MAX {
            return None;
        }
        Some(if bytes.len() <= INLINE_MAX {
            let mut inline = [0; INLINE_MAX];
            inline[..bytes.len()].copy_from_slice(bytes);
            Embedded::Inline {
                len: bytes.len() as u8,
                bytes: inline,
            }
        } else {
            Embedded::Boxed(bytes.into())
        })
    }

    pub fn as_bytes(&self) -> &[u8] {
        match self {
            Embedded::Inline { len, bytes } => &bytes[..usize::from(*len)],
            Embedded::Boxed(b) => b,
        }
    }
}

impl std::ops::Deref for Embedded {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.as_bytes()
    }
}

impl std::fmt::Debug for Embedded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Embedded({:?})",
            String::from_utf8_lossy(self.as_bytes())
        )
    }
}

/// A string object before it is stored: what `tryObjectEncoding` or a command
/// built.
#[derive(Clone, Debug)]
pub enum ArgObject {
    /// `shared`: one of Redis's shared integers 0..9999.
    Int {
        value: i64,
        shared: bool,
    },
    Embstr(EmbstrBytes),
    Raw(Sds),
}

/// The bytes of an embstr-sized string (at most [`EMBSTR_SIZE_LIMIT`]) on
/// the stack: a SET of a short value builds the stored value straight from
/// the argument, with no vector made and freed in between (that pair was a
/// third of SET's instructions under callgrind).
#[derive(Clone)]
pub struct EmbstrBytes {
    len: u8,
    bytes: [u8; EMBSTR_SIZE_LIMIT],
}

impl EmbstrBytes {
    /// `bytes`, or `None` if they are longer than an embstr.
    pub fn new(bytes: &[u8]) -> Option<EmbstrBytes> {
        let mut out = EmbstrBytes {
            len: u8::try_from(bytes.len()).ok()?,
            bytes: [0; EMBSTR_SIZE_LIMIT],
        };
        out.bytes.get_mut(..bytes.len())?.copy_from_slice(bytes);
        Some(out)
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }
}

impl std::fmt::Debug for EmbstrBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", String::from_utf8_lossy(self.as_bytes()))
    }
}

impl ArgObject {
    /// `tryObjectEncoding(argv[i])` on an argument as the network layer built it.
    pub fn from_argument(bytes: &[u8]) -> ArgObject {
        let len = bytes.len();
        if len <= 20 {
            if let Some(v) = parse_i64(bytes) {
                return ArgObject::int(v);
            }
        }
        if let Some(short) = EmbstrBytes::new(bytes) {
            return ArgObject::Embstr(short);
        }
        if len >= MBULK_BIG_ARG {
            // The query buffer was sized for the bulk and its CRLF
            // (`sdsMakeRoomForNonGreedy(ll + 2)`), then trimmed if more than a
            // tenth is free (`trimStringObjectIfNeeded`).
            let header = crate::memory::sds_header_len(len + 2).max(3);
            let mut sds = Sds::with_alloc(bytes, jemalloc_usable(header + len + 3));
            if sds.avail() > len / 10 {
                sds.remove_free_space();
            }
            return ArgObject::Raw(sds);
        }
        ArgObject::Raw(Sds::new(bytes))
    }

    /// `createStringObjectFromLongLongForValue`.
    pub fn int(value: i64) -> ArgObject {
        ArgObject::Int {
            value,
            shared: (0..SHARED_INTEGERS).contains(&value),
        }
    }

    /// `createStringObject`: embstr up to 44 bytes, else an exact raw SDS.
    pub fn from_computed(bytes: &[u8]) -> ArgObject {
        match EmbstrBytes::new(bytes) {
            Some(short) => ArgObject::Embstr(short),
            None => ArgObject::Raw(Sds::new(bytes)),
        }
    }

    /// Whether `dbSetValue` may keep the key's existing object and swap this one's
    /// content in: only an unshared, non-embstr object qualifies.
    pub fn swappable(&self) -> bool {
        match self {
            ArgObject::Int { shared, .. } => !shared,
            ArgObject::Embstr(_) => false,
            ArgObject::Raw(_) => true,
        }
    }

    /// `kvobjSet`: the value as stored under a key of `key_len` bytes.
    pub fn into_stored(self, key_len: usize) -> StringValue {
        match self {
            ArgObject::Int { value, .. } => StringValue::Int(value),
            ArgObject::Raw(s) => StringValue::Raw(s),
            ArgObject::Embstr(short) => {
                let bytes = short.as_bytes();
                // The rule implies at most EMBEDDED_MAX bytes.
                let fits = ROBJ_SIZE + key_len + 3 + 4 + bytes.len() <= CACHE_LINE;
                let embedded = if fits { Embedded::new(bytes) } else { None };
                match embedded {
                    Some(embedded) => StringValue::Embstr(embedded),
                    None => StringValue::Raw(Sds::new(bytes)),
                }
            }
        }
    }
}

impl StringValue {
    /// The value as a bulk reply (GET, GETEX, MGET): an integer is printed
    /// into the reply itself, as Redis prints it into the client's buffer.
    pub fn reply(&self) -> crate::reply::Reply {
        use crate::reply::{BulkBytes, Reply};
        match self {
            StringValue::Int(v) => Reply::Bulk(BulkBytes::of_i64(*v)),
            StringValue::Embstr(b) => Reply::bulk(b.as_bytes()),
            StringValue::Raw(s) => Reply::bulk(s.as_bytes()),
        }
    }

    /// The bytes a client reads (an int is printed by `ll2string`).
    pub fn bytes(&self) -> Cow<'_, [u8]> {
        match self {
            StringValue::Int(v) => Cow::Owned(v.to_string().into_bytes()),
            StringValue::Embstr(b) => Cow::Borrowed(b.as_bytes()),
            StringValue::Raw(s) => Cow::Borrowed(s.as_bytes()),
        }
    }

    /// STRLEN.
    pub fn len(&self) -> usize {
        match self {
            StringValue::Int(v) => crate::num::digits10(*v),
            StringValue::Embstr(b) => b.len(),
            StringValue::Raw(s) => s.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// What OBJECT ENCODING says.
    pub fn encoding_name(&self) -> &'static str {
        match self {
            StringValue::Int(_) => "int",
            StringValue::Embstr(_) => "embstr",
            StringValue::Raw(_) => "raw",
        }
    }

    /// `dbUnshareStringValue`: the raw copy APPEND and SETRANGE work on, or
    /// `None` if the value already is raw.
    pub fn unshared(&self) -> Option<ArgObject> {
        match self {
            StringValue::Raw(_) => None,
            other => Some(ArgObject::Raw(Sds::new(&other.bytes()))),
        }
    }

    pub fn raw_mut(&mut self) -> Option<&mut Sds> {
        match self {
            StringValue::Raw(s) => Some(s),
            _ => None,
        }
    }

    /// `kvobjAllocSize` for a string under a key of `key_len` bytes; `slot` says
    /// whether the key object carries an expiry slot.
    pub fn alloc_size(&self, key_len: usize, slot: bool) -> usize {
        match self {
            StringValue::Int(_) => key_object_size(key_len, slot),
            StringValue::Embstr(b) => {
                let meta = if slot || key_len >= crate::memory::KEY_LEN_WITH_EXPIRE_SLOT {
                    EXPIRE_SLOT_SIZE
                } else {
                    0
                };
                jemalloc_usable(meta + ROBJ_SIZE + 1 + sds_size(key_len) + 3 + b.len() + 1)
            }
            StringValue::Raw(s) => key_object_size(key_len, slot) + s.alloc_size(),
        }
    }
}

impl StringValue {
    /// What `DEBUG SDSLEN` answers for this value under a key of `key_len` bytes
    /// (`slot`: the key object carries an expiry slot): the key's SDS, the key
    /// object's allocation, and the value's SDS (an embedded one reports the room
    /// left in the object's size class as its free space, and no allocation of
    /// its own). `None` for an int, which Redis answers with `Not an sds encoded
    /// string.`. For the DEBUG command, which lives elsewhere.
    pub fn debug_sdslen(&self, key_len: usize, slot: bool) -> Option<String> {
        let (object, len, avail, alloc) = match self {
            StringValue::Int(_) => return None,
            StringValue::Embstr(b) => {
                let total = self.alloc_size(key_len, slot);
                let meta = if slot || key_len >= crate::memory::KEY_LEN_WITH_EXPIRE_SLOT {
                    EXPIRE_SLOT_SIZE
                } else {
                    0
                };
                let used = meta + ROBJ_SIZE + 1 + sds_size(key_len) + 3 + b.len() + 1;
                (total, b.len(), total - used, 0)
            }
            StringValue::Raw(s) => (
                key_object_size(key_len, slot),
                s.len(),
                s.avail(),
                s.alloc_size(),
            ),
        };
        Some(format!(
            "key_sds_len:{key_len}, key_sds_avail:0, key_zmalloc: {object}, \
             val_sds_len:{len}, val_sds_avail:{avail}, val_zmalloc: {alloc}"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every length an embstr can have reads back as it went in, inline up to
    /// 30 bytes and boxed above; 42 bytes and more are never embedded.
    #[test]
    fn embedded_bytes_read_back_at_every_length() {
        for len in 0..=EMBEDDED_MAX {
            let bytes: Vec<u8> = (0..len as u8).map(|i| b'a' + i % 26).collect();
            let e = Embedded::new(&bytes).expect("fits");
            assert_eq!(e.as_bytes(), &bytes[..], "{len}");
            assert_eq!(
                matches!(e, Embedded::Inline { .. }),
                len <= INLINE_MAX,
                "{len}"
            );
            // As stored under a key short enough to embed it.
            let stored = ArgObject::from_computed(&bytes).into_stored(EMBEDDED_MAX - len);
            assert_eq!(stored.encoding_name(), "embstr", "{len}");
            assert_eq!(&stored.bytes()[..], &bytes[..], "{len}");
        }
        assert!(Embedded::new(&[b'x'; EMBEDDED_MAX + 1]).is_none());
        assert_eq!(EMBEDDED_MAX, 41);
    }

    fn stored(key: &str, value: &[u8]) -> StringValue {
        ArgObject::from_argument(value).into_stored(key.len())
    }

    #[test]
    fn encodings_follow_redis_8_thresholds() {
        assert_eq!(stored("k", b"12345").encoding_name(), "int");
        assert_eq!(stored("k", b"-9223372036854775808").encoding_name(), "int");
        assert_eq!(
            stored("k", b"9223372036854775808").encoding_name(),
            "embstr"
        );
        assert_eq!(stored("k", b"007").encoding_name(), "embstr");
        assert_eq!(stored("k", b"+1").encoding_name(), "embstr");
        // key + value <= 41 bytes stays embedded.
        assert_eq!(stored("k", &[b'x'; 40]).encoding_name(), "embstr");
        assert_eq!(stored("k", &[b'x'; 41]).encoding_name(), "raw");
        assert_eq!(stored("kk", &[b'x'; 39]).encoding_name(), "embstr");
        assert_eq!(stored("k", &[b'x'; 45]).encoding_name(), "raw");
    }

    #[test]
    fn sizes_of_the_articles_cases() {
        // One SET of 100,000 bytes under a short key: 24 + 114,688.
        let v = stored("s:set", &vec![b'x'; 100_000]);
        assert_eq!(v.alloc_size(5, false), 114_712);
        assert_eq!(stored("k", b"1").alloc_size(1, false), 24);
        assert_eq!(stored("k", b"hello").alloc_size(1, false), 32);
    }

    /// string.tcl's "Check MEMORY USAGE for embedded key strings with jemalloc".
    #[test]
    fn debug_sdslen_of_the_tcl_suites_cases() {
        let case = |val: &str, slot: bool| stored("x234", val.as_bytes()).debug_sdslen(4, slot);
        let line = |z: usize, l: usize, a: usize| {
            Some(format!(
                "key_sds_len:4, key_sds_avail:0, key_zmalloc: {z}, val_sds_len:{l}, \
                 val_sds_avail:{a}, val_zmalloc: 0"
            ))
        };
        assert_eq!(case("y2345", false), line(32, 5, 0));
        assert_eq!(case("y23456", false), line(40, 6, 7));
        assert_eq!(case("y234561234567", false), line(40, 13, 0));
        assert_eq!(case("y234561234567", true), line(48, 13, 0));
        assert_eq!(stored("k", b"12").debug_sdslen(1, false), None);
        let raw = stored("k", &[b'r'; 100]);
        assert_eq!(
            raw.debug_sdslen(1, false).unwrap(),
            "key_sds_len:1, key_sds_avail:0, key_zmalloc: 24, val_sds_len:100, \
             val_sds_avail:8, val_zmalloc: 112"
        );
    }
}
