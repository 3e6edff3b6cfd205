//! Which register an element touches and what it may raise it to.
//!
//! Redis hashes every element with MurmurHash2's 64-bit variant (`MurmurHash64A`),
//! reading the input as little-endian words whatever the host, with the seed
//! `0xadc83b19`. The low 14 bits of the hash pick one of the 16,384 registers; the
//! other 50 bits are scanned from the least significant end and the element's
//! "pattern length" is the position of the first 1 (1 to 51: a sentinel bit above
//! the 50 keeps the count bounded).

use super::{P, Q, REGISTERS};

/// The seed `hllPatLen` passes to the hash.
pub const SEED: u64 = 0xadc8_3b19;

/// MurmurHash64A as Redis runs it (endian-neutral).
pub fn murmur64a(data: &[u8], seed: u64) -> u64 {
    const M: u64 = 0xc6a4_a793_5bd1_e995;
    const R: u32 = 47;
    let mut h = seed ^ (data.len() as u64).wrapping_mul(M);
    let mut words = data.chunks_exact(8);
    for w in &mut words {
        let mut k = u64::from_le_bytes(w.try_into().expect("8 bytes"));
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h ^= k;
        h = h.wrapping_mul(M);
    }
    let tail = words.remainder();
    if !tail.is_empty() {
        for (i, &b) in tail.iter().enumerate() {
            h ^= u64::from(b) << (8 * i);
        }
        h = h.wrapping_mul(M);
    }
    h ^= h >> R;
    h = h.wrapping_mul(M);
    h ^= h >> R;
    h
}

/// `hllPatLen`: the register index and the run length (1..=51) for `element`.
pub fn pattern(element: &[u8]) -> (usize, u8) {
    let hash = murmur64a(element, SEED);
    let index = (hash & (REGISTERS as u64 - 1)) as usize;
    let rest = (hash >> P) | (1u64 << Q);
    (index, rest.trailing_zeros() as u8 + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_run_length_is_bounded_by_the_sentinel() {
        for i in 0..10_000u32 {
            let (index, count) = pattern(&i.to_le_bytes());
            assert!(index < REGISTERS);
            assert!((1..=Q as u8 + 1).contains(&count));
        }
    }

    #[test]
    fn tails_of_every_length_are_hashed() {
        // Each prefix of the same bytes must hash differently.
        let data = b"0123456789abcdef";
        let hashes: std::collections::HashSet<u64> = (0..=data.len())
            .map(|n| murmur64a(&data[..n], SEED))
            .collect();
        assert_eq!(hashes.len(), data.len() + 1);
    }
}
