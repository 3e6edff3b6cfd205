//! The dense encoding: 16,384 registers of 6 bits packed little-endian, 12,288
//! bytes after the header.
//!
//! Register `i` starts at bit `6 i`: its low bits are the high bits of byte
//! `6i / 8` and its high bits, if any, the low bits of the next byte. The last
//! register would touch the byte after the array, which in Redis is the SDS's
//! NUL terminator: reading it yields 0 and writing it changes nothing, so here an
//! access past the end reads 0 and is skipped on write.

use super::{REGISTERS, REGISTER_MAX};

/// `HLL_DENSE_GET_REGISTER`.
pub fn get(registers: &[u8], index: usize) -> u8 {
    let byte = index * 6 / 8;
    let shift = (index * 6) & 7;
    let b0 = u32::from(registers[byte]);
    let b1 = u32::from(registers.get(byte + 1).copied().unwrap_or(0));
    (((b0 >> shift) | (b1 << (8 - shift))) & u32::from(REGISTER_MAX)) as u8
}

/// `HLL_DENSE_SET_REGISTER`.
pub fn set(registers: &mut [u8], index: usize, value: u8) {
    let byte = index * 6 / 8;
    let shift = (index * 6) & 7;
    let max = u32::from(REGISTER_MAX);
    let v = u32::from(value);
    registers[byte] &= !(max << shift) as u8;
    registers[byte] |= (v << shift) as u8;
    if let Some(next) = registers.get_mut(byte + 1) {
        *next &= !(max >> (8 - shift)) as u8;
        *next |= (v >> (8 - shift)) as u8;
    }
}

/// `hllDenseSet`: raises register `index` to `count`; true if it changed.
pub fn raise(registers: &mut [u8], index: usize, count: u8) -> bool {
    if count > get(registers, index) {
        set(registers, index, count);
        true
    } else {
        false
    }
}

/// The four registers packed in each 3-byte group, in order (what Redis's
/// unrolled loops read).
fn groups(registers: &[u8]) -> impl Iterator<Item = [u8; 4]> + '_ {
    registers[..REGISTERS * 6 / 8].chunks_exact(3).map(|g| {
        [
            g[0] & 63,
            (g[0] >> 6 | g[1] << 2) & 63,
            (g[1] >> 4 | g[2] << 4) & 63,
            g[2] >> 2,
        ]
    })
}

/// `hllDenseRegHisto`: how many registers hold each value.
pub fn histogram(registers: &[u8], histo: &mut [u32; 64]) {
    for group in groups(registers) {
        for r in group {
            histo[usize::from(r)] += 1;
        }
    }
}

/// `hllMergeDense`: `raw[i] = max(raw[i], register i)`.
pub fn merge_into(raw: &mut [u8], registers: &[u8]) {
    for (slots, group) in raw.chunks_exact_mut(4).zip(groups(registers)) {
        for (slot, r) in slots.iter_mut().zip(group) {
            *slot = (*slot).max(r);
        }
    }
}

/// `hllDenseCompress`: writes one byte per register into the packed array.
pub fn compress(registers: &mut [u8], raw: &[u8]) {
    for (i, &v) in raw.iter().enumerate() {
        set(registers, i, v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hll::DENSE_SIZE;
    use crate::hll::HDR_SIZE;

    #[test]
    fn registers_do_not_disturb_their_neighbours() {
        let mut regs = vec![0u8; DENSE_SIZE - HDR_SIZE];
        let value = |i: usize| ((i * 37 + 11) % 64) as u8;
        for i in 0..REGISTERS {
            set(&mut regs, i, value(i));
        }
        for i in 0..REGISTERS {
            assert_eq!(get(&regs, i), value(i), "register {i}");
        }
        let mut histo = [0u32; 64];
        histogram(&regs, &mut histo);
        let mut raw = vec![0u8; REGISTERS];
        merge_into(&mut raw, &regs);
        for (i, &r) in raw.iter().enumerate() {
            assert_eq!(r, value(i));
        }
        assert_eq!(histo.iter().sum::<u32>(), REGISTERS as u32);
        set(&mut regs, 5, 0);
        assert_eq!(get(&regs, 4), value(4));
        assert_eq!(get(&regs, 6), value(6));
    }
}
