//! SDS, Redis's string buffer (src/sds.c), as far as its size is concerned.
//!
//! The bytes live in a `Vec`, but the buffer also carries what Redis would have
//! allocated, because that is what MEMORY USAGE reports and what APPEND and
//! SETRANGE make grow:
//!
//! * a new SDS (`sdsnewlen`) asks for header + length + NUL, gets jemalloc's size
//!   class, and uses the whole class as capacity; the header is the smallest type
//!   that holds the length (1, 3, 5, 9 or 17 bytes), an empty string gets type 8,
//!   and a header too small for the usable capacity is widened
//!   (`adjustTypeIfNeeded`). A type-5 string (under 32 bytes) has no capacity
//!   field: its size is counted as header + length + NUL;
//! * growing (`_sdsMakeRoomFor`, greedy) only when the free space is too small:
//!   the new length is doubled below 1 MB (`SDS_MAX_PREALLOC`), or 1 MB is added
//!   from 1 MB on; type 5 is never chosen for a growing string;
//! * `sdsAllocSize` is header + capacity + NUL, i.e. the allocation.

use crate::memory::{jemalloc_usable, sds_header_len};

/// `SDS_MAX_PREALLOC`.
pub const MAX_PREALLOC: usize = 1024 * 1024;

/// The largest length each header type can record, by header size.
fn type_max(header: usize) -> usize {
    match header {
        3 => 255,
        5 => 65_535,
        9 => u32::MAX as usize,
        _ => usize::MAX,
    }
}

/// `adjustTypeIfNeeded`: the header that can record a usable size of `bufsize`.
fn fit_header(header: usize, bufsize: usize) -> usize {
    let usable = bufsize - header - 1;
    if header != 1 && usable > type_max(header) {
        sds_header_len(usable)
    } else {
        header
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sds {
    bytes: Vec<u8>,
    /// Header bytes (the SDS type).
    header: usize,
    /// `sdsalloc`: usable bytes for the string (type 5: its length).
    capacity: usize,
}

impl Sds {
    /// `sdsnewlen(bytes, len)`.
    pub fn new(bytes: &[u8]) -> Sds {
        Sds::from_vec(bytes.to_vec())
    }

    /// `sdsnewlen` over bytes the caller built (no second copy of a big buffer).
    pub fn from_vec(bytes: Vec<u8>) -> Sds {
        let len = bytes.len();
        let mut header = sds_header_len(len);
        if len == 0 {
            header = 3;
        }
        if header == 1 {
            return Sds {
                bytes,
                header,
                capacity: len,
            };
        }
        let bufsize = jemalloc_usable(header + len + 1);
        let header = fit_header(header, bufsize);
        Sds {
            bytes,
            header,
            capacity: bufsize - header - 1,
        }
    }

    /// [`Sds::alloc_size`] of `Sds::new` of `len` bytes, without building it.
    pub fn alloc_size_for(len: usize) -> usize {
        let header = if len == 0 { 3 } else { sds_header_len(len) };
        if header == 1 {
            return 1 + len + 1;
        }
        // A fitted header and the capacity after it fill the whole buffer.
        jemalloc_usable(header + len + 1)
    }

    /// An SDS with explicit capacity, for a buffer Redis sized differently (a big
    /// argument that arrived in the query buffer).
    pub fn with_alloc(bytes: &[u8], bufsize: usize) -> Sds {
        let header = fit_header(sds_header_len(bytes.len()).max(3), bufsize);
        Sds {
            bytes: bytes.to_vec(),
            header,
            capacity: bufsize - header - 1,
        }
    }

    /// `sdsRemoveFreeSpace(s, 0)`, i.e. `sdsResize` to the length: a header type
    /// that is the same, or smaller but wider than type 8, is kept and the buffer
    /// reallocated (not at all if jemalloc's class would not change); otherwise a
    /// new buffer with the smallest header.
    pub fn remove_free_space(&mut self) {
        let len = self.bytes.len();
        if self.capacity == len {
            return;
        }
        let wanted = sds_header_len(len);
        let keep_header = wanted == self.header || (wanted < self.header && wanted > 3);
        if keep_header {
            let bufsize = jemalloc_usable(self.header + len + 1);
            if bufsize != self.alloc_size() {
                self.header = fit_header(self.header, bufsize);
                self.capacity = bufsize - self.header - 1;
            }
        } else if wanted == 1 {
            self.header = 1;
            self.capacity = len;
        } else {
            let bufsize = jemalloc_usable(wanted + len + 1);
            self.header = fit_header(wanted, bufsize);
            self.capacity = bufsize - self.header - 1;
        }
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// `sdsavail`.
    pub fn avail(&self) -> usize {
        if self.header == 1 {
            0
        } else {
            self.capacity - self.bytes.len()
        }
    }

    /// `sdsAllocSize`.
    pub fn alloc_size(&self) -> usize {
        self.header + self.capacity + 1
    }

    /// `sdsalloc`: the usable capacity (a type-5 string reports its length).
    pub fn alloc(&self) -> usize {
        self.capacity
    }

    /// The bytes, to change in place without changing the length.
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        &mut self.bytes
    }

    /// The bytes as a vector, for an in-place edit that moves the length within
    /// the capacity (what `memmove` plus `sdsIncrLen` do in Redis). The caller keeps
    /// the length at most [`Sds::alloc`].
    pub fn vec_mut(&mut self) -> &mut Vec<u8> {
        &mut self.bytes
    }

    /// `sdsResize(s, size, would_regrow)`: the capacity becomes `size` rounded up
    /// to jemalloc's class. The header is kept and the buffer reallocated when the
    /// type needed is the same, or smaller but wider than type 8; otherwise a new
    /// buffer with the smallest type (never type 5 if `would_regrow`).
    pub fn resize(&mut self, size: usize, would_regrow: bool) {
        if self.capacity == size {
            return;
        }
        self.bytes.truncate(size);
        let mut wanted = sds_header_len(size);
        if would_regrow && wanted == 1 {
            wanted = 3;
        }
        let keep_header = wanted == self.header || (wanted < self.header && wanted > 3);
        if keep_header {
            let bufsize = jemalloc_usable(self.header + size + 1);
            if bufsize != self.alloc_size() {
                self.header = fit_header(self.header, bufsize);
                self.capacity = bufsize - self.header - 1;
            }
        } else if wanted == 1 {
            self.header = 1;
            self.capacity = self.bytes.len();
        } else {
            let bufsize = jemalloc_usable(wanted + size + 1);
            self.header = fit_header(wanted, bufsize);
            self.capacity = bufsize - self.header - 1;
        }
    }

    /// `sdsMakeRoomFor(s, addlen)`, the greedy version.
    fn make_room_for(&mut self, addlen: usize) {
        if self.avail() >= addlen {
            return;
        }
        let required = self.bytes.len() + addlen;
        let wanted = if required < MAX_PREALLOC {
            required * 2
        } else {
            required + MAX_PREALLOC
        };
        let header = sds_header_len(wanted).max(3);
        let bufsize = jemalloc_usable(header + wanted + 1);
        self.header = fit_header(header, bufsize);
        self.capacity = bufsize - self.header - 1;
    }

    /// `sdscatlen`.
    pub fn append(&mut self, tail: &[u8]) {
        self.make_room_for(tail.len());
        self.bytes.extend_from_slice(tail);
    }

    /// The bytes, for commands that edit them in place (SETBIT, BITFIELD).
    pub fn as_bytes_mut(&mut self) -> &mut [u8] {
        &mut self.bytes
    }

    /// `sdsgrowzero`: zero-pads to `len` bytes, growing greedily; never shrinks.
    pub fn grow_zero(&mut self, len: usize) {
        if len > self.bytes.len() {
            self.make_room_for(len - self.bytes.len());
            self.bytes.resize(len, 0);
        }
    }

    /// `sdsgrowzero` then a copy at `offset` (SETRANGE).
    pub fn write_at(&mut self, offset: usize, data: &[u8]) {
        let end = offset + data.len();
        if end > self.bytes.len() {
            self.make_room_for(end - self.bytes.len());
            self.bytes.resize(end, 0);
        }
        self.bytes[offset..end].copy_from_slice(data);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The size computed without building the string is the built one's.
    #[test]
    fn alloc_size_for_is_the_built_strings() {
        for len in (0..300).chain([4_095, 4_096, 65_535, 65_536, 100_000]) {
            let bytes = vec![b'x'; len];
            assert_eq!(
                Sds::alloc_size_for(len),
                Sds::new(&bytes).alloc_size(),
                "{len}"
            );
        }
    }

    #[test]
    fn a_new_sds_takes_its_size_class() {
        let s = Sds::new(&[b'x'; 100]);
        // 3 + 100 + 1 = 104 -> 112.
        assert_eq!(s.alloc_size(), 112);
        assert_eq!(s.avail(), 8);
        let small = Sds::new(b"abc");
        assert_eq!(small.alloc_size(), 5);
        assert_eq!(small.avail(), 0);
        assert_eq!(Sds::new(&[0; 100_000]).alloc_size(), 114_688);
    }

    #[test]
    fn growth_doubles_below_one_megabyte_then_adds_one() {
        let mut s = Sds::new(&[b'x'; 100]);
        s.append(&[b'y'; 100]);
        // 200 * 2 = 400, type 16: 5 + 400 + 1 -> 448.
        assert_eq!(s.alloc_size(), 448);
        let mut far = Sds::new(b"");
        far.write_at(10_000_000, b"x");
        // 10,000,001 + 1 MB, type 32 header 9 -> jemalloc class 12,582,912.
        assert_eq!(far.len(), 10_000_001);
        assert_eq!(far.alloc_size(), 12_582_912);
        // SETRANGE on a missing key allocates the exact length instead.
        assert_eq!(Sds::new(&vec![0; 10_000_001]).alloc_size(), 10_485_760);
    }

    #[test]
    fn thousand_appends_of_100_bytes() {
        let mut s = Sds::new(&[b'a'; 100]);
        for _ in 1..1000 {
            s.append(&[b'a'; 100]);
        }
        assert_eq!(s.len(), 100_000);
        assert_eq!(s.alloc_size(), 196_608);
    }
}
