//! The byte buffer the sorted sets' record arena keeps its records in
//! (`redislab_core::zset::arena`): a growable run of zeroed bytes whose
//! allocation has an alignment of its own, [`RECORD_ALIGN`], so that
//! [`crate::huge::HugePages`] knows its blocks from every other allocation
//! of the process by their layout alone and maps only these on huge pages.
//!
//! A size rule alone ("blocks of odd multiples of 2 MiB") was tried first:
//! any `Vec` of elements of an odd number of 8-byte words reaches such a size
//! once as it doubles (the keyspace's entry slab at 262,144 slots of 120
//! bytes is 15 × 2 MiB), and would have been mapped too.

/// The alignment that marks a record buffer's allocation, and the unit it
/// grows by.
pub const RECORD_ALIGN: usize = 256;

#[derive(Clone, Copy)]
#[repr(C, align(256))]
struct Block([u8; RECORD_ALIGN]);

const ZERO: Block = Block([0; RECORD_ALIGN]);

/// A growable byte buffer allocated in [`RECORD_ALIGN`]-byte blocks with that
/// alignment. New bytes read as zero.
#[derive(Clone, Default)]
pub struct RecordBuf {
    blocks: Vec<Block>,
    /// Bytes in use (at most the blocks' bytes).
    len: usize,
}

impl std::fmt::Debug for RecordBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordBuf")
            .field("len", &self.len)
            .field("capacity", &self.capacity())
            .finish()
    }
}

impl RecordBuf {
    pub fn new() -> RecordBuf {
        RecordBuf::default()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes allocated.
    pub fn capacity(&self) -> usize {
        self.blocks.capacity() * RECORD_ALIGN
    }

    /// Makes the capacity at least `bytes`, rounded up to whole blocks, and no
    /// more (one allocation of exactly that size).
    pub fn reserve_total(&mut self, bytes: usize) {
        let want = bytes.div_ceil(RECORD_ALIGN);
        if want > self.blocks.capacity() {
            self.blocks.reserve_exact(want - self.blocks.len());
        }
    }

    /// Grows the buffer to `len` bytes, the new ones zero (a shorter `len`
    /// only forgets the bytes past it).
    pub fn resize(&mut self, len: usize) {
        let blocks = len.div_ceil(RECORD_ALIGN);
        if blocks > self.blocks.len() {
            self.blocks.resize(blocks, ZERO);
        }
        if len < self.len {
            // Bytes forgotten now must read as zero if the buffer grows back.
            let old = self.len;
            self.as_mut_full()[len..old].fill(0);
        }
        self.len = len;
    }

    #[inline(always)]
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: the blocks are `len` initialized bytes or more, contiguous,
        // and a `Block` is plain bytes with no padding.
        unsafe { std::slice::from_raw_parts(self.blocks.as_ptr().cast::<u8>(), self.len) }
    }

    #[inline(always)]
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as in `as_slice`, borrowed mutably through `self`.
        unsafe { std::slice::from_raw_parts_mut(self.blocks.as_mut_ptr().cast::<u8>(), self.len) }
    }

    /// Every byte of the blocks in use.
    fn as_mut_full(&mut self) -> &mut [u8] {
        let bytes = self.blocks.len() * RECORD_ALIGN;
        // SAFETY: as in `as_slice`, for all the blocks' bytes.
        unsafe { std::slice::from_raw_parts_mut(self.blocks.as_mut_ptr().cast::<u8>(), bytes) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_zeroed_in_aligned_blocks_and_keeps_its_bytes() {
        let mut b = RecordBuf::new();
        assert!(b.is_empty());
        assert_eq!(b.as_slice(), &[] as &[u8]);
        b.reserve_total(300);
        assert_eq!(b.capacity(), 512, "whole blocks");
        b.resize(10);
        assert_eq!(b.as_slice(), &[0; 10]);
        b.as_mut_slice()[3] = 7;
        b.reserve_total(5000);
        b.resize(4000);
        assert_eq!(b.as_ptr_for_test() % RECORD_ALIGN, 0);
        assert_eq!(b.as_slice()[3], 7, "kept while it grew");
        assert!(b.as_slice()[4..].iter().all(|&x| x == 0));
        b.as_mut_slice()[3999] = 1;
        b.resize(3000);
        b.resize(4000);
        assert_eq!(b.as_slice()[3999], 0, "forgotten bytes read as zero again");
        let c = b.clone();
        assert_eq!(c.as_slice(), b.as_slice());
        assert_eq!(format!("{c:?}"), "RecordBuf { len: 4000, capacity: 4096 }");
    }

    impl RecordBuf {
        fn as_ptr_for_test(&self) -> usize {
            self.blocks.as_ptr() as usize
        }
    }
}
