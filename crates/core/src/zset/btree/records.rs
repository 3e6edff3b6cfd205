//! The member table of the B+tree layout: one packed record per member, the
//! only place its bytes and score live.
//!
//! A record is, byte-packed (little-endian, no alignment):
//!
//! | bytes | what |
//! |-------|------|
//! | 0..8  | score (`f64`) |
//! | 8..12 | next record in the same hash bucket ([`NIL`] at the end; the dict's link, see [`Chains`]) |
//! | 12..14 | meta: bits 0..5 the skiplist height Redis would have drawn (minus one, kept only so MEMORY USAGE can add up Redis's node sizes), bits 5..16 the member's length, or [`LEN_ESCAPE`] when a `u32` length follows |
//! | 14.. | the member's bytes |
//!
//! so an 8-byte member costs 22 bytes, where the skiplist layout's record
//! costs 36 (its dict chain link included) and Redis's `zskiplistNode` 48 (plus
//! a dict entry).
//! Records are laid end to end in the zsets' record arena
//! (`crate::zset::arena`, the skiplist's too), addressed by a [`Handle`]:
//! the offset in 2-byte units in its one shared buffer, which doubles up to
//! 256 KiB, so a small set stays small, then grows 256 KiB at a time; a record
//! over 16 KiB has a buffer of its own, freed with it; freed records wait on
//! a free list per size for the next record of that size. The handles cap a
//! set at 4 GiB of records (2^31 units), the skiplist's ids at 8 GiB.

use crate::dict::{siphash12, Chains, Slot};
use crate::zset::arena::Pages;

/// A record's place: its offset in units in the arena's shared buffer (or,
/// top bit set, the number of a big record's own buffer).
pub type Handle = u32;

/// "No record" (end of a bucket chain, the dict's [`crate::dict::NIL`]). No
/// record has it: it would be the 2^31st big record with a buffer of its own.
pub const NIL: Handle = crate::dict::NIL;

const UNIT: usize = 2;

const SCORE_AT: usize = 0;
const NEXT_AT: usize = 8;
const META_AT: usize = 12;
const MEMBER_AT: usize = 14;
/// A member length that does not fit the meta's 11 bits.
pub const LEN_ESCAPE: usize = (1 << 11) - 1;

/// Bytes of a record holding a `len`-byte member.
pub fn record_bytes(len: usize) -> usize {
    MEMBER_AT + if len >= LEN_ESCAPE { 4 } else { 0 } + len
}

fn record_units(len: usize) -> usize {
    record_bytes(len).div_ceil(UNIT)
}

/// The arena of member records.
#[derive(Clone, Debug, Default)]
pub struct Records {
    pages: Pages<UNIT, Vec<u8>>,
}

impl Records {
    pub fn new() -> Records {
        Records::default()
    }

    #[inline(always)]
    fn bytes(&self, h: Handle) -> &[u8] {
        self.pages.bytes(h)
    }

    fn bytes_mut(&mut self, h: Handle) -> &mut [u8] {
        self.pages.bytes_mut(h)
    }

    #[inline(always)]
    pub fn score(&self, h: Handle) -> f64 {
        let r = self.bytes(h);
        f64::from_le_bytes(r[SCORE_AT..SCORE_AT + 8].try_into().expect("8 bytes"))
    }

    pub fn set_score(&mut self, h: Handle, score: f64) {
        self.bytes_mut(h)[SCORE_AT..SCORE_AT + 8].copy_from_slice(&score.to_le_bytes());
    }

    fn meta(r: &[u8]) -> usize {
        u16::from_le_bytes(r[META_AT..META_AT + 2].try_into().expect("2 bytes")) as usize
    }

    /// The skiplist height Redis would have given this member's node.
    pub fn height(&self, h: Handle) -> usize {
        (Self::meta(self.bytes(h)) & 31) + 1
    }

    #[inline(always)]
    pub fn member(&self, h: Handle) -> &[u8] {
        let r = self.bytes(h);
        let len = Self::meta(r) >> 5;
        if len == LEN_ESCAPE {
            let len = u32::from_le_bytes(r[MEMBER_AT..MEMBER_AT + 4].try_into().expect("4 bytes"));
            &r[MEMBER_AT + 4..MEMBER_AT + 4 + len as usize]
        } else {
            &r[MEMBER_AT..MEMBER_AT + len]
        }
    }

    /// A new record (its chain link [`NIL`]).
    pub fn alloc(&mut self, score: f64, member: &[u8], height: usize) -> Handle {
        debug_assert!((1..=32).contains(&height));
        let units = record_units(member.len());
        let h = self.pages.alloc(units);
        let r = &mut self.bytes_mut(h)[..units * UNIT];
        r[SCORE_AT..SCORE_AT + 8].copy_from_slice(&score.to_le_bytes());
        r[NEXT_AT..NEXT_AT + 4].copy_from_slice(&NIL.to_le_bytes());
        let mut at = MEMBER_AT;
        let meta_len = if member.len() >= LEN_ESCAPE {
            let len = u32::try_from(member.len()).expect("members fit in u32");
            r[at..at + 4].copy_from_slice(&len.to_le_bytes());
            at += 4;
            LEN_ESCAPE
        } else {
            member.len()
        };
        let meta = ((meta_len << 5) | (height - 1)) as u16;
        r[META_AT..META_AT + 2].copy_from_slice(&meta.to_le_bytes());
        r[at..at + member.len()].copy_from_slice(member);
        h
    }

    /// Gives a record back (its handle must not be used again).
    pub fn free(&mut self, h: Handle) {
        let units = record_units(self.member(h).len());
        self.pages.free(h, units);
    }

    /// Bytes allocated: pages by capacity, the free lists' vectors.
    pub fn heap_bytes(&self) -> usize {
        self.pages.heap_bytes()
    }
}

/// The member table's dict runs its chains through the records' `next`
/// field, and rehashes a record by its member's hash (nothing is cached).
impl Chains for Records {
    #[inline(always)]
    fn next(&self, at: Slot) -> Slot {
        let r = self.bytes(at);
        u32::from_le_bytes(r[NEXT_AT..NEXT_AT + 4].try_into().expect("4 bytes"))
    }

    #[inline(always)]
    fn set_next(&mut self, at: Slot, next: Slot) -> Slot {
        let link = &mut self.bytes_mut(at)[NEXT_AT..NEXT_AT + 4];
        let old = u32::from_le_bytes(link.try_into().expect("4 bytes"));
        link.copy_from_slice(&next.to_le_bytes());
        old
    }

    fn hash(&self, at: Slot, seed: &[u8; 16]) -> u64 {
        siphash12(self.member(at), seed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_read_back_and_are_reused() {
        let mut r = Records::new();
        let a = r.alloc(1.5, b"abcdefgh", 3);
        let big = vec![7u8; 40_000];
        let b = r.alloc(-2.0, &big, 1);
        let c = r.alloc(0.0, &vec![1u8; 3000], 32);
        assert_eq!(
            (r.score(a), r.member(a), r.height(a)),
            (1.5, &b"abcdefgh"[..], 3)
        );
        assert_eq!((r.score(b), r.member(b)), (-2.0, &big[..]));
        assert_eq!((r.member(c).len(), r.height(c)), (3000, 32));
        assert_eq!(r.next(a), NIL);
        r.set_next(a, c);
        r.set_score(a, 9.0);
        assert_eq!((r.next(a), r.score(a)), (c, 9.0));
        r.free(a);
        assert_eq!(r.alloc(2.0, b"hgfedcba", 1), a, "same size: reused");
        r.free(b);
        assert_eq!(r.alloc(2.0, &big[..30_000], 1), b, "the big page is reused");
        assert_eq!(record_bytes(8), 22);
    }
}
