//! The dense encoding: 16,384 registers of 6 bits packed little-endian, 12,288
//! bytes after the header.
//!
//! Register `i` starts at bit `6 i`: its low bits are the high bits of byte
//! `6i / 8` and its high bits, if any, the low bits of the next byte. The last
//! register would touch the byte after the array, which in Redis is the SDS's
//! NUL terminator: reading it yields 0 and writing it changes nothing, so here an
//! access past the end reads 0 and is skipped on write.
//!
//! Every 3 bytes hold 4 whole registers, so the two bulk conversions between the
//! packed array and one byte per register (the merge of PFCOUNT/PFMERGE, and
//! PFMERGE's write-back) work on 3-byte groups. Each has two implementations
//! with identical results, as in Redis 8.x (`hllMergeDense`/`hllDenseCompress`
//! and their AVX2 variants):
//!
//! * a portable scalar loop over the groups ([`merge_into_scalar`],
//!   [`compress_scalar`]);
//! * on x86_64 with AVX2 (detected at run time), 32 registers per step
//!   ([`avx2`]): one unaligned 32-byte load holds 24 packed bytes, a byte shuffle
//!   spreads each 3-byte group over a 32-bit lane, and masks and shifts put one
//!   register in each byte (the reverse for compress).
//!
//! [`merge_into`] and [`compress`] pick the vector path when the caller allows
//! it (PFDEBUG SIMD ON, the default) and the CPU has AVX2; Redis's NEON path for
//! aarch64 has no counterpart here (the scalar loop runs there). The core also
//! counts a many-key PFCOUNT's histogram with AVX2 ([`raw_histogram`]; Redis's
//! `hllRawRegHisto` is scalar only), under the same switch, so PFDEBUG SIMD OFF
//! runs every loop scalar.
//!
//! How it differs from the C code: the kernels follow Redis's layout of the work
//! (the merge's load starts 4 bytes before each block, so the first 8 and last
//! 24 registers are merged one by one; compress stores two 16-byte halves and
//! leaves the last 32 registers to the scalar loop); the scalar loops here work
//! on whole 3-byte groups where Redis reads each register with its macro.

use super::{REGISTERS, REGISTER_MAX};

/// The packed registers' size, 16,384 × 6 bits.
pub const BYTES: usize = REGISTERS * 6 / 8;

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

/// The four registers packed in one 3-byte group.
#[inline(always)]
fn unpack(g: &[u8]) -> [u8; 4] {
    [
        g[0] & 63,
        (g[0] >> 6 | g[1] << 2) & 63,
        (g[1] >> 4 | g[2] << 4) & 63,
        g[2] >> 2,
    ]
}

/// Four registers (each taken modulo 64) packed into one 3-byte group.
#[inline(always)]
fn pack(r: &[u8], g: &mut [u8]) {
    let [a, b, c, d] = [r[0] & 63, r[1] & 63, r[2] & 63, r[3] & 63];
    g[0] = a | b << 6;
    g[1] = b >> 2 | c << 4;
    g[2] = c >> 4 | d << 2;
}

/// `hllDenseRegHisto`: how many registers hold each value.
pub fn histogram(registers: &[u8], histo: &mut [u32; 64]) {
    // One table per position in the group: consecutive registers with the same
    // value then increment different counters, which keeps the loop from
    // waiting on its own stores.
    let mut part = [[0u32; 64]; 4];
    for g in registers[..BYTES].chunks_exact(3) {
        for (table, r) in part.iter_mut().zip(unpack(g)) {
            table[usize::from(r)] += 1;
        }
    }
    for table in &part {
        for (h, &n) in histo.iter_mut().zip(table) {
            *h += n;
        }
    }
}

/// `hllRawRegHisto`: the histogram of one byte per register (values below 64),
/// with AVX2 if `simd` allows it, the CPU has it and the registers are low
/// enough for the vector count to be the faster (see [`avx2::raw_histogram`]).
pub fn raw_histogram(raw: &[u8; REGISTERS], histo: &mut [u32; 64], simd: bool) {
    #[cfg(target_arch = "x86_64")]
    if simd && simd_available() {
        // SAFETY: AVX2 is present (checked just above).
        if unsafe { avx2::raw_histogram(raw, histo) } {
            return;
        }
    }
    let _ = simd;
    raw_histogram_scalar(raw, histo);
}

/// The portable histogram: every byte counted, in four tables.
pub fn raw_histogram_scalar(raw: &[u8; REGISTERS], histo: &mut [u32; 64]) {
    let mut part = [[0u32; 64]; 4];
    for word in raw.chunks_exact(8) {
        // Redis's shortcut: a word of empty registers counts 8 at once.
        if word == [0u8; 8] {
            part[0][0] += 8;
            continue;
        }
        for (i, &r) in word.iter().enumerate() {
            part[i & 3][usize::from(r & 63)] += 1;
        }
    }
    for table in &part {
        for (h, &n) in histo.iter_mut().zip(table) {
            *h += n;
        }
    }
}

/// Whether [`merge_into`] and [`compress`] may take the AVX2 path on this CPU.
pub fn simd_available() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// What PFDEBUG SIMD reports with the flag on, as Redis 8.6.3 would on this
/// host: AVX2 on x86_64 (run-time check), NEON on aarch64 (always there; the
/// core has no NEON kernel and runs the scalar loop), nothing elsewhere.
pub fn simd_reported() -> bool {
    cfg!(target_arch = "aarch64") || simd_available()
}

/// `hllMergeDense`: `raw[i] = max(raw[i], register i)`, with AVX2 if `simd`
/// allows it and the CPU has it.
pub fn merge_into(raw: &mut [u8; REGISTERS], registers: &[u8], simd: bool) {
    let registers: &[u8; BYTES] = registers[..BYTES].try_into().expect("dense registers");
    #[cfg(target_arch = "x86_64")]
    if simd && simd_available() {
        // SAFETY: AVX2 is present (checked just above).
        unsafe { avx2::merge_into(raw, registers) };
        return;
    }
    let _ = simd;
    merge_into_scalar(raw, registers);
}

/// The portable merge: one 3-byte group (4 registers) at a time.
pub fn merge_into_scalar(raw: &mut [u8; REGISTERS], registers: &[u8; BYTES]) {
    merge_groups(raw, registers);
}

fn merge_groups(raw: &mut [u8], registers: &[u8]) {
    for (slots, g) in raw.chunks_exact_mut(4).zip(registers.chunks_exact(3)) {
        for (slot, r) in slots.iter_mut().zip(unpack(g)) {
            *slot = (*slot).max(r);
        }
    }
}

/// `hllDenseCompress`: writes one byte per register (each taken modulo 64; the
/// merge never produces more than 63) into the packed array, with AVX2 if
/// `simd` allows it and the CPU has it.
pub fn compress(registers: &mut [u8], raw: &[u8; REGISTERS], simd: bool) {
    let registers: &mut [u8; BYTES] = (&mut registers[..BYTES])
        .try_into()
        .expect("dense registers");
    #[cfg(target_arch = "x86_64")]
    if simd && simd_available() {
        // SAFETY: AVX2 is present (checked just above).
        unsafe { avx2::compress(registers, raw) };
        return;
    }
    let _ = simd;
    compress_scalar(registers, raw);
}

/// The portable compress: one 3-byte group at a time.
pub fn compress_scalar(registers: &mut [u8; BYTES], raw: &[u8; REGISTERS]) {
    compress_groups(registers, raw);
}

fn compress_groups(registers: &mut [u8], raw: &[u8]) {
    for (g, r) in registers.chunks_exact_mut(3).zip(raw.chunks_exact(4)) {
        pack(r, g);
    }
}

/// The AVX2 kernels: 32 registers (24 packed bytes) per step.
#[cfg(target_arch = "x86_64")]
pub mod avx2 {
    use std::arch::x86_64::*;

    use super::{compress_groups, merge_groups, BYTES};
    use crate::hll::REGISTERS;

    /// Steps of 32 registers; the registers before and after them go through
    /// the scalar loop, since a full step there would touch bytes outside the
    /// packed array.
    const STEPS: usize = REGISTERS / 32 - 1;
    /// Registers the merge does one by one before its first step.
    const HEAD: usize = 8;

    /// The low 3 bytes of each 32-bit lane gathered into the first 12 bytes of
    /// its 128-bit lane, the last 4 zero (compress's shuffle).
    #[target_feature(enable = "avx2")]
    unsafe fn gather() -> __m256i {
        _mm256_setr_epi8(
            0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1, //
            0, 1, 2, 4, 5, 6, 8, 9, 10, 12, 13, 14, -1, -1, -1, -1,
        )
    }

    /// The highest register value for which [`raw_histogram`] counts by
    /// comparison; above it the scalar count is the cheaper.
    const HISTOGRAM_MAX: u8 = 24;

    /// [`super::raw_histogram_scalar`]'s result (registers taken modulo 64),
    /// counted one value at a time: each pass compares all 16,384 bytes with one
    /// value and adds the matches up in byte counters (folded into 64-bit sums
    /// before they can overflow). One pass per value up to the highest register,
    /// so it is done only when that is at most [`HISTOGRAM_MAX`] (the registers of
    /// sketches up to some millions of elements); false, with `histo` untouched,
    /// otherwise.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub unsafe fn raw_histogram(raw: &[u8; REGISTERS], histo: &mut [u32; 64]) -> bool {
        const VECTORS: usize = REGISTERS / 32;
        let src = raw.as_ptr().cast::<__m256i>();
        let low6 = _mm256_set1_epi8(63);
        let load = |i: usize| _mm256_and_si256(_mm256_loadu_si256(src.add(i)), low6);
        let mut top = _mm256_setzero_si256();
        for i in 0..VECTORS {
            top = _mm256_max_epu8(top, load(i));
        }
        let mut lanes = [0u8; 32];
        _mm256_storeu_si256(lanes.as_mut_ptr().cast(), top);
        let max = lanes.iter().copied().max().unwrap_or(0);
        if max > HISTOGRAM_MAX {
            return false;
        }
        let zero = _mm256_setzero_si256();
        let mut counted = 0u32;
        for v in 1..=max {
            let want = _mm256_set1_epi8(v as i8);
            let mut sums = zero;
            // 255 steps at most per byte counter before it is folded.
            for block in (0..VECTORS).step_by(255) {
                let mut acc = zero;
                for i in block..(block + 255).min(VECTORS) {
                    // A match is 0xff, i.e. -1: subtracting it counts one.
                    acc = _mm256_sub_epi8(acc, _mm256_cmpeq_epi8(load(i), want));
                }
                sums = _mm256_add_epi64(sums, _mm256_sad_epu8(acc, zero));
            }
            let mut four = [0u64; 4];
            _mm256_storeu_si256(four.as_mut_ptr().cast(), sums);
            let n = four.iter().sum::<u64>() as u32;
            histo[usize::from(v)] += n;
            counted += n;
        }
        histo[0] += REGISTERS as u32 - counted;
        true
    }

    /// [`super::merge_into_scalar`]'s result, 32 registers per step.
    ///
    /// Each step loads 32 bytes starting 4 bytes before its 24-byte block, so
    /// that the block's first 12 bytes sit at 4..16 of the low 128-bit lane and
    /// the next 12 at 0..12 of the high lane (a byte shuffle cannot cross the
    /// lanes). The first 8 registers (6 bytes) have no 4 bytes before them and
    /// are merged by the scalar loop, as are the last 24, where a load would
    /// pass the array's end.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub unsafe fn merge_into(raw: &mut [u8; REGISTERS], registers: &[u8; BYTES]) {
        let spread = _mm256_setr_epi8(
            4, 5, 6, -1, 7, 8, 9, -1, 10, 11, 12, -1, 13, 14, 15, -1, //
            0, 1, 2, -1, 3, 4, 5, -1, 6, 7, 8, -1, 9, 10, 11, -1,
        );
        // Two 16-bit multiplies do the four shifts (each 16-bit half of a
        // lane gets its own multiplier). After the shuffle a lane is
        // [B0, B1, B2, 0]: v = the 24 bits, registers a = v 0..6, b = 6..12,
        // c = 12..18, d = 18..24. Moved up a byte, [0, B0, B1, B2], its low
        // half has a at bits 8..14 and its high half c at bits 4..10:
        // mulhrs (x·m / 2^15, rounded) by 2^7 and 2^11 brings each to the
        // bottom of its half, exactly, since the bits below them are zero.
        // As loaded, the low half has b at bits 6..12 and the high half d at
        // 2..8: mullo by 4 and 64 lifts each to bits 8..14. Together: bytes
        // a, b, c, d. (mulhrs rather than mulhi, and the mullo multipliers
        // through black_box once: LLVM rewrites a mulhi or a mullo by known
        // powers of two into shifts, with a widening to 32 bits for mulhi,
        // and that measured slower than the shift-and-mask loop.)
        let a_c_mask = _mm256_set1_epi32(0x03f0_3f00);
        let b_d_mask = _mm256_set1_epi32(0x00fc_0fc0);
        let a_c_shift = _mm256_set1_epi32(0x0800_0080);
        let b_d_shift = std::hint::black_box(_mm256_set1_epi32(0x0040_0004));
        merge_groups(&mut raw[..HEAD], &registers[..HEAD / 4 * 3]);
        let src = registers.as_ptr().add(HEAD / 4 * 3 - 4);
        let dst = raw.as_mut_ptr().add(HEAD);
        for step in 0..STEPS {
            // SAFETY (bounds): the highest byte read is 2 + 24·510 + 31 =
            // 12,273 < BYTES; the highest written is 8 + 32·510 + 31 < REGISTERS.
            let x = _mm256_loadu_si256(src.add(step * 24).cast());
            let x = _mm256_shuffle_epi8(x, spread);
            let a_c = _mm256_and_si256(_mm256_slli_epi32(x, 8), a_c_mask);
            let b_d = _mm256_and_si256(x, b_d_mask);
            let y = _mm256_or_si256(
                _mm256_mulhrs_epi16(a_c, a_c_shift),
                _mm256_mullo_epi16(b_d, b_d_shift),
            );
            let t = dst.add(step * 32).cast::<__m256i>();
            _mm256_storeu_si256(t, _mm256_max_epu8(_mm256_loadu_si256(t), y));
        }
        let done = HEAD + STEPS * 32;
        merge_groups(&mut raw[done..], &registers[done / 4 * 3..]);
    }

    /// [`super::compress_scalar`]'s result, 32 registers per step.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub unsafe fn compress(registers: &mut [u8; BYTES], raw: &[u8; REGISTERS]) {
        let gather = gather();
        let m = _mm256_set1_epi8(0x3f);
        // Two multiply-adds place the registers: maddubs makes each 16-bit
        // half r0 + 64·r1 (12 bits), madd each lane half0 + 4096·half1, the
        // 24 bits r0 | r1 << 6 | r2 << 12 | r3 << 18.
        let pairs = _mm256_set1_epi16(0x4001);
        let halves = _mm256_set1_epi32(0x1000_0001);
        let src = raw.as_ptr();
        let dst = registers.as_mut_ptr();
        for step in 0..STEPS {
            let x = _mm256_loadu_si256(src.add(step * 32).cast());
            let y = _mm256_madd_epi16(_mm256_maddubs_epi16(_mm256_and_si256(x, m), pairs), halves);
            let y = _mm256_shuffle_epi8(y, gather);
            // Each 16-byte store carries 12 packed bytes and 4 zeros; the next
            // store (or the scalar tail) overwrites the zeros. SAFETY (bounds):
            // the highest byte written is 24·STEPS + 12 + 15 = 12,267 < BYTES.
            let t = dst.add(step * 24);
            _mm_storeu_si128(t.cast(), _mm256_castsi256_si128(y));
            _mm_storeu_si128(t.add(12).cast(), _mm256_extracti128_si256(y, 1));
        }
        compress_groups(&mut registers[STEPS * 24..], &raw[STEPS * 32..]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    fn packed(values: &[u8]) -> Vec<u8> {
        let mut regs = vec![0u8; BYTES];
        for (i, &v) in values.iter().enumerate() {
            set(&mut regs, i, v);
        }
        regs
    }

    #[test]
    fn registers_do_not_disturb_their_neighbours() {
        let value = |i: usize| ((i * 37 + 11) % 64) as u8;
        let values: Vec<u8> = (0..REGISTERS).map(value).collect();
        let mut regs = packed(&values);
        for i in 0..REGISTERS {
            assert_eq!(get(&regs, i), value(i), "register {i}");
        }
        let mut histo = [0u32; 64];
        histogram(&regs, &mut histo);
        for simd in [false, true] {
            let mut raw = [0u8; REGISTERS];
            merge_into(&mut raw, &regs, simd);
            assert_eq!(raw[..], values[..]);
        }
        assert_eq!(histo.iter().sum::<u32>(), REGISTERS as u32);
        set(&mut regs, 5, 0);
        assert_eq!(get(&regs, 4), value(4));
        assert_eq!(get(&regs, 6), value(6));
    }

    /// Random sketches of every register range (all 6-bit values, small values
    /// only, mostly zero): the scalar and the AVX2 merge give the same bytes, and
    /// both equal the register-by-register maximum; compress of either packs
    /// back the same array `set` writes.
    #[test]
    fn scalar_and_simd_paths_agree_on_random_sketches() {
        let mut rng = ChaCha8Rng::seed_from_u64(0x5eed);
        for round in 0..60 {
            let top = [64u8, 8, 2, 25, 26][round % 5];
            let mut values = || -> Vec<u8> {
                (0..REGISTERS)
                    .map(|_| {
                        if round % 7 == 6 && rng.gen_bool(0.9) {
                            0
                        } else {
                            rng.gen_range(0..top)
                        }
                    })
                    .collect()
            };
            let (a, b) = (values(), values());
            let regs: &[u8; BYTES] = &packed(&b).try_into().unwrap();
            let start: [u8; REGISTERS] = a.clone().try_into().unwrap();
            let mut scalar = start;
            merge_into_scalar(&mut scalar, regs);
            let expected: Vec<u8> = a.iter().zip(&b).map(|(x, y)| *x.max(y)).collect();
            assert_eq!(scalar[..], expected[..], "round {round}");
            let mut dispatched = start;
            merge_into(&mut dispatched, regs, true);
            assert_eq!(dispatched, scalar, "round {round}");

            let mut packed_scalar = [0xa5u8; BYTES];
            compress_scalar(&mut packed_scalar, &scalar);
            assert_eq!(packed_scalar[..], packed(&expected)[..], "round {round}");
            let mut packed_simd = [0x5au8; BYTES];
            compress(&mut packed_simd, &scalar, true);
            assert_eq!(packed_simd, packed_scalar, "round {round}");

            #[cfg(target_arch = "x86_64")]
            if simd_available() {
                let mut simd = start;
                // SAFETY: AVX2 checked.
                unsafe { avx2::merge_into(&mut simd, regs) };
                assert_eq!(simd, scalar, "round {round}");
                let mut out = [0u8; BYTES];
                unsafe { avx2::compress(&mut out, &scalar) };
                assert_eq!(out, packed_scalar, "round {round}");
            }

            let mut h1 = [0u32; 64];
            histogram(regs, &mut h1);
            let raw_b: [u8; REGISTERS] = b.clone().try_into().unwrap();
            let mut h2 = [0u32; 64];
            raw_histogram_scalar(&raw_b, &mut h2);
            let mut h4 = [0u32; 64];
            raw_histogram(&raw_b, &mut h4, true);
            assert_eq!(h4, h2, "round {round}");
            #[cfg(target_arch = "x86_64")]
            if simd_available() {
                let mut h5 = [0u32; 64];
                // SAFETY: AVX2 checked. Registers under 25 take the vector count.
                let vector = unsafe { avx2::raw_histogram(&raw_b, &mut h5) };
                assert_eq!(vector, top <= 25, "round {round}");
                if vector {
                    assert_eq!(h5, h2, "round {round}");
                }
            }
            let mut h3 = [0u32; 64];
            for &v in &b {
                h3[usize::from(v)] += 1;
            }
            assert_eq!((h1, h2), (h3, h3), "round {round}");
        }
    }
}
