//! One field of a hashtable-encoded hash as Redis 8.6 allocates it (`entry.c`),
//! for MEMORY USAGE.
//!
//! Redis keeps a field and its value in one allocation, the `Entry`:
//! `[ExpireMeta (16, if the field ever had a TTL) | value pointer (8, if the value
//! is not embedded) | field sds | embedded value sds]`. The value is embedded (as
//! an 8-bit-header sds) when the whole allocation stays within 128 bytes;
//! otherwise the value is a separate sds and the field gets at least an 8-bit
//! header (a 5-bit header has no room for the flag bits). The hash's metadata
//! adds up `entryMemUsage` of every entry: the field's and the value's
//! `sdsAllocSize`, the pointer and the ExpireMeta. These are exact sizes, not
//! jemalloc classes, except for a separately allocated value (`sdsnewlen` uses
//! the whole size class).
//!
//! Updates follow `entryUpdate`: adding or removing the ExpireMeta, or switching
//! between embedded and pointer, builds a new entry; a new embedded value reuses
//! the old allocation while it fits and fills at least three quarters of it.
//! Clearing a TTL with HPERSIST keeps the ExpireMeta (marked unused), as Redis
//! does.

use crate::memory::sds_header_len;
use crate::sds::Sds;

/// `EMBED_VALUE_MAX_ALLOC_SIZE`.
const EMBED_MAX: usize = 128;
/// `sizeof(ExpireMeta)`.
pub const EXPIRE_META_SIZE: usize = 16;
/// A value pointer.
const VALUE_PTR_SIZE: usize = 8;
/// `sizeof(struct sdshdr8)`.
const SDS8_HEADER: usize = 3;

/// How an entry is laid out, and the value's allocation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Header bytes of the field's sds (1 to 9). The layout is kept in every
    /// field's entry: small fields keep it to 8 bytes.
    field_header: u8,
    /// The value lives inside the entry.
    embedded: bool,
    /// `sdsAllocSize` of the value (its placement size when embedded; a
    /// value is at most 512 MB, `proto-max-bulk-len`'s ceiling).
    value_alloc: u32,
    /// The entry carries an ExpireMeta.
    meta: bool,
}

/// `sdsReqSize(len, SDS_TYPE_8)`: an embedded value.
fn embedded_value_size(len: usize) -> usize {
    SDS8_HEADER + len + 1
}

impl Layout {
    /// `setEntryWriteInfo` + `entryWriteNew`: a fresh entry for a field of
    /// `field_len` bytes and `value`, with or without an ExpireMeta.
    pub fn new(field_len: usize, value: &[u8], meta: bool) -> Layout {
        let expiry = if meta { EXPIRE_META_SIZE } else { 0 };
        let mut field_header = sds_header_len(field_len);
        if field_header == 1 && meta {
            field_header = SDS8_HEADER;
        }
        let value_size = embedded_value_size(value.len());
        if field_header + field_len + 1 + expiry + value_size <= EMBED_MAX {
            return Layout {
                field_header: field_header as u8,
                embedded: true,
                value_alloc: value_size as u32,
                meta,
            };
        }
        Layout {
            field_header: field_header.max(SDS8_HEADER) as u8,
            embedded: false,
            value_alloc: u32::try_from(Sds::alloc_size_for(value.len())).unwrap_or(u32::MAX),
            meta,
        }
    }

    /// `entryMemUsage`.
    pub fn mem_usage(&self, field_len: usize) -> usize {
        usize::from(self.field_header)
            + field_len
            + 1
            + self.value_alloc as usize
            + if self.embedded { 0 } else { VALUE_PTR_SIZE }
            + if self.meta { EXPIRE_META_SIZE } else { 0 }
    }

    pub fn has_meta(&self) -> bool {
        self.meta
    }

    /// `entryUpdate`: a new value (`Some`) and/or a changed ExpireMeta.
    pub fn update(
        &self,
        field_len: usize,
        new_value: Option<&[u8]>,
        old_value: &[u8],
        meta: bool,
    ) -> Layout {
        let meta_changes = self.meta != meta;
        let Some(value) = new_value else {
            if !meta_changes {
                return *self;
            }
            return Layout::new(field_len, old_value, meta);
        };
        let fresh = Layout::new(field_len, value, meta);
        if meta_changes || fresh.embedded != self.embedded {
            return fresh;
        }
        if !fresh.embedded {
            // Pointer to pointer: the value is replaced in place.
            return Layout {
                value_alloc: fresh.value_alloc,
                ..*self
            };
        }
        // Embedded to embedded: keep the old room while the new value fits it well.
        let needed = fresh.value_alloc;
        let old = self.value_alloc;
        if needed <= old && needed >= old * 3 / 4 {
            *self
        } else {
            fresh
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_pairs_embed_and_long_ones_point() {
        // "f" + "v": 1+1+1 field, 3+1+1 value.
        let l = Layout::new(1, b"v", false);
        assert_eq!(l.mem_usage(1), 3 + 5);
        // With a TTL the field needs an 8-bit header and the meta is added.
        let l = Layout::new(1, b"v", true);
        assert_eq!(l.mem_usage(1), 5 + 5 + 16);
        // 100-byte value: 3 + 104 = 107 <= 128, embedded.
        assert!(Layout::new(1, &[b'x'; 100], false).embedded);
        // 130-byte value: pointer; sdsnewlen(130) = 3 + 130 + 1 = 134 -> 160.
        let l = Layout::new(1, &[b'x'; 130], false);
        assert!(!l.embedded);
        assert_eq!(l.mem_usage(1), 5 + 160 + 8);
    }

    #[test]
    fn updates_reuse_room_within_three_quarters() {
        let l = Layout::new(1, &[b'x'; 40], false);
        assert_eq!(l.value_alloc, 44);
        // 33 + 4 = 37 >= 44 * 3 / 4 = 33: same room.
        assert_eq!(l.update(1, Some(&[b'y'; 33]), b"", false).value_alloc, 44);
        // 28 + 4 = 32 < 33: a new entry.
        assert_eq!(l.update(1, Some(&[b'y'; 28]), b"", false).value_alloc, 32);
        let with_meta = l.update(1, None, &[b'x'; 40], true);
        assert!(with_meta.meta);
    }
}
