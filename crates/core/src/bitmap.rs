//! Bit operations on a string's bytes (src/bitops.c), without the command layer.
//!
//! A bitmap is an ordinary string value: bit 0 is the most significant bit of the
//! first byte, and every byte past the end of the string reads as zero. What this
//! module keeps from Redis:
//!
//! * **Ranges** ([`count_ones`], [`first_bit`]) are inclusive bit ranges; the
//!   command layer turns BITCOUNT/BITPOS's BYTE or BIT arguments into them with
//!   Redis's clamping. Counting and searching go a 64-bit word at a time, so a
//!   512 MB bitmap is scanned in tens of milliseconds, as in Redis.
//! * **BITOP** ([`bitop`]): the result is as long as the longest source, shorter
//!   sources are zero-padded; DIFF, DIFF1 and ANDOR (Redis 8.2) combine the first
//!   source with the OR of the others, ONE keeps the bits set in exactly one source.
//! * **Bitfields** ([`get_unsigned`], [`set_unsigned`], [`check_unsigned`],
//!   [`check_signed`]): integers of 1 to 64 bits at any bit offset, big-endian in
//!   bit order, and Redis's overflow rules (WRAP, SAT, FAIL), including how WRAP
//!   folds a signed result back into range.

/// A BITOP operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BitOp {
    And,
    Or,
    Xor,
    Not,
    /// `X & !(A1 | ... | An)`.
    Diff,
    /// `!X & (A1 | ... | An)`.
    Diff1,
    /// `X & (A1 | ... | An)`.
    AndOr,
    /// Bits set in exactly one source.
    One,
}

impl BitOp {
    /// The operation named by BITOP's first argument (case-insensitive).
    pub fn parse(name: &[u8]) -> Option<BitOp> {
        let name = name.split(|&b| b == 0).next().unwrap_or(name);
        let ops = [
            ("and", BitOp::And),
            ("or", BitOp::Or),
            ("xor", BitOp::Xor),
            ("not", BitOp::Not),
            ("diff", BitOp::Diff),
            ("diff1", BitOp::Diff1),
            ("andor", BitOp::AndOr),
            ("one", BitOp::One),
        ];
        ops.iter()
            .find(|(n, _)| name.eq_ignore_ascii_case(n.as_bytes()))
            .map(|&(_, op)| op)
    }
}

/// `dst[j] = f(dst[j], src[j])` over their common length: a plain loop over two
/// slices, which the compiler turns into vector instructions (Redis's
/// bitopCommand unrolls words by hand for the same effect).
fn combine(dst: &mut [u8], src: &[u8], f: impl Fn(u8, u8) -> u8) {
    for (a, b) in dst.iter_mut().zip(src) {
        *a = f(*a, *b);
    }
}

/// BITOP's result over `sources` (`None`: a missing key, an empty string).
///
/// AND, OR and XOR write the first two sources' result in one pass (no
/// zeroed buffer, no copy of the first: BITOP AND of two 16 KB strings spent
/// more time filling and copying than combining); each further source is
/// folded in over its own length (a byte past a source's end reads as zero:
/// AND clears the rest, OR and XOR leave it), slice against slice rather
/// than byte by byte through the padding. The other operations start from
/// the first source zero-padded to the longest one.
pub fn bitop(op: BitOp, sources: &[&[u8]]) -> Vec<u8> {
    let maxlen = sources.iter().map(|s| s.len()).max().unwrap_or(0);
    let (first, rest) = sources.split_first().expect("at least one source");
    match op {
        BitOp::And => fold(first, rest, maxlen, true, |a, b| a & b),
        BitOp::Or => fold(first, rest, maxlen, false, |a, b| a | b),
        BitOp::Xor => fold(first, rest, maxlen, false, |a, b| a ^ b),
        BitOp::Not => {
            let mut out = padded(first, maxlen);
            out.iter_mut().for_each(|b| *b = !*b);
            out
        }
        BitOp::Diff | BitOp::Diff1 | BitOp::AndOr => {
            let mut out = padded(first, maxlen);
            let mut others = vec![0u8; maxlen];
            for s in rest {
                combine(&mut others, s, |a, b| a | b);
            }
            match op {
                BitOp::Diff => combine(&mut out, &others, |x, o| x & !o),
                BitOp::Diff1 => combine(&mut out, &others, |x, o| !x & o),
                _ => combine(&mut out, &others, |x, o| x & o),
            }
            out
        }
        BitOp::One => {
            // `out` holds the bits seen once so far, `many` those seen more.
            let mut out = padded(first, maxlen);
            let mut many = vec![0u8; maxlen];
            for s in rest {
                for ((once, more), b) in out.iter_mut().zip(many.iter_mut()).zip(s.iter()) {
                    *more |= *once & b;
                    *once ^= b;
                }
            }
            combine(&mut out, &many, |once, more| once & !more);
            out
        }
    }
}

/// `bytes` zero-padded to `len`.
fn padded(bytes: &[u8], len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len.max(bytes.len()));
    out.extend_from_slice(bytes);
    out.resize(len.max(bytes.len()), 0);
    out
}

/// AND, OR or XOR (`f`; `and` says which zeroes past a source's end) of
/// `first` and `rest`, `maxlen` bytes.
fn fold(
    first: &[u8],
    rest: &[&[u8]],
    maxlen: usize,
    and: bool,
    f: impl Fn(u8, u8) -> u8 + Copy,
) -> Vec<u8> {
    let Some((second, more)) = rest.split_first() else {
        return padded(first, maxlen);
    };
    let mut out = Vec::with_capacity(maxlen);
    let common = first.len().min(second.len());
    out.extend(
        first[..common]
            .iter()
            .zip(&second[..common])
            .map(|(a, b)| f(*a, *b)),
    );
    if !and {
        // x | 0 = x ^ 0 = x: the longer one's own bytes.
        let longer = if first.len() > common { first } else { second };
        out.extend_from_slice(&longer[common..]);
    }
    out.resize(maxlen, 0);
    for s in more {
        combine(&mut out, s, f);
        if and {
            out[s.len()..].fill(0);
        }
    }
    out
}

/// Ones in whole bytes, a word at a time.
fn popcount(bytes: &[u8]) -> u64 {
    let mut chunks = bytes.chunks_exact(8);
    let mut n: u64 = chunks
        .by_ref()
        .map(|c| u64::from(u64::from_ne_bytes(c.try_into().unwrap()).count_ones()))
        .sum();
    n += chunks
        .remainder()
        .iter()
        .map(|b| u64::from(b.count_ones()))
        .sum::<u64>();
    n
}

/// Mask of the bits of a byte from bit `from` to bit `to` (0 = most significant).
fn byte_mask(from: u64, to: u64) -> u8 {
    let high = 0xffu8 >> from;
    let low = 0xffu8 << (7 - to);
    high & low
}

/// Ones in the inclusive bit range `start..=end`, which lies within `s`.
pub fn count_ones(s: &[u8], start: u64, end: u64) -> u64 {
    let (first, last) = ((start / 8) as usize, (end / 8) as usize);
    if first == last {
        return u64::from((s[first] & byte_mask(start % 8, end % 8)).count_ones());
    }
    let head = u64::from((s[first] & byte_mask(start % 8, 7)).count_ones());
    let tail = u64::from((s[last] & byte_mask(0, end % 8)).count_ones());
    head + popcount(&s[first + 1..last]) + tail
}

/// The first bit equal to `bit` in the inclusive bit range `start..=end` within
/// `s`, if any.
pub fn first_bit(s: &[u8], bit: bool, start: u64, end: u64) -> Option<u64> {
    let skip = if bit { 0u8 } else { 0xff };
    let found_in = |b: u8, from: u64, to: u64| -> Option<u64> {
        let m = byte_mask(from, to);
        let hits = if bit { b & m } else { !b & m };
        (hits != 0).then(|| u64::from(hits.leading_zeros()))
    };
    let (first, last) = ((start / 8) as usize, (end / 8) as usize);
    if first == last {
        return found_in(s[first], start % 8, end % 8).map(|p| first as u64 * 8 + p);
    }
    if let Some(p) = found_in(s[first], start % 8, 7) {
        return Some(first as u64 * 8 + p);
    }
    let mut i = first + 1;
    let word_skip = u64::from_ne_bytes([skip; 8]);
    while i + 8 <= last && u64::from_ne_bytes(s[i..i + 8].try_into().unwrap()) == word_skip {
        i += 8;
    }
    while i < last {
        if s[i] != skip {
            let p = found_in(s[i], 0, 7).expect("byte differs from the skip value");
            return Some(i as u64 * 8 + p);
        }
        i += 1;
    }
    found_in(s[last], 0, end % 8).map(|p| last as u64 * 8 + p)
}

/// The bit at `offset`, zero past the end.
pub fn get_bit(s: &[u8], offset: u64) -> bool {
    let byte = (offset >> 3) as usize;
    byte < s.len() && s[byte] & (0x80 >> (offset & 7)) != 0
}

/// Sets the bit at `offset`, which lies within `s`.
pub fn set_bit(s: &mut [u8], offset: u64, on: bool) {
    let byte = (offset >> 3) as usize;
    let mask = 0x80 >> (offset & 7);
    if on {
        s[byte] |= mask;
    } else {
        s[byte] &= !mask;
    }
}

/// `getUnsignedBitfield`: `bits` bits from `offset`, zero past the end.
pub fn get_unsigned(s: &[u8], offset: u64, bits: u32) -> u64 {
    (0..u64::from(bits)).fold(0, |v, j| (v << 1) | u64::from(get_bit(s, offset + j)))
}

/// `getSignedBitfield`: the same bits, sign-extended.
pub fn get_signed(s: &[u8], offset: u64, bits: u32) -> i64 {
    let v = get_unsigned(s, offset, bits);
    if bits < 64 && v & (1 << (bits - 1)) != 0 {
        (v | (u64::MAX << bits)) as i64
    } else {
        v as i64
    }
}

/// `setUnsignedBitfield`: the low `bits` bits of `value` at `offset` (within `s`).
pub fn set_unsigned(s: &mut [u8], offset: u64, bits: u32, value: u64) {
    for j in 0..u64::from(bits) {
        let on = value & (1 << (u64::from(bits) - 1 - j)) != 0;
        set_bit(s, offset + j, on);
    }
}

/// What BITFIELD does when a result does not fit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overflow {
    Wrap,
    Sat,
    Fail,
}

/// `checkUnsignedBitfieldOverflow`: `None` if `value + incr` fits in `bits`
/// bits, else the value to store instead (WRAP or SAT; FAIL gets `Some` too, and
/// the caller does not store).
pub fn check_unsigned(value: u64, incr: i64, bits: u32, mode: Overflow) -> Option<u64> {
    let max = if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    };
    let maxincr = max.wrapping_sub(value) as i64;
    let minincr = value.wrapping_neg() as i64;
    let wrap = || value.wrapping_add(incr as u64) & !(u64::MAX << bits);
    if value > max || (incr > 0 && incr > maxincr) {
        Some(match mode {
            Overflow::Wrap => wrap(),
            _ => max,
        })
    } else if incr < 0 && incr < minincr {
        Some(match mode {
            Overflow::Wrap => wrap(),
            _ => 0,
        })
    } else {
        None
    }
}

/// `checkSignedBitfieldOverflow`, with the same contract as [`check_unsigned`].
pub fn check_signed(value: i64, incr: i64, bits: u32, mode: Overflow) -> Option<i64> {
    let max = if bits == 64 {
        i64::MAX
    } else {
        (1i64 << (bits - 1)) - 1
    };
    let min = -max - 1;
    let maxincr = (max as u64).wrapping_sub(value as u64) as i64;
    let minincr = min.wrapping_sub(value);
    let wrap = || {
        let c = (value as u64).wrapping_add(incr as u64);
        if bits < 64 {
            let mask = u64::MAX << bits;
            if c & (1 << (bits - 1)) != 0 {
                (c | mask) as i64
            } else {
                (c & !mask) as i64
            }
        } else {
            c as i64
        }
    };
    if value > max || (bits != 64 && incr > maxincr) || (value >= 0 && incr > 0 && incr > maxincr) {
        Some(match mode {
            Overflow::Wrap => wrap(),
            _ => max,
        })
    } else if value < min
        || (bits != 64 && incr < minincr)
        || (value < 0 && incr < 0 && incr < minincr)
    {
        Some(match mode {
            Overflow::Wrap => wrap(),
            _ => min,
        })
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_count_and_search_bits() {
        let s = [0b1111_0000u8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0b0000_0001];
        assert_eq!(count_ones(&s, 0, 87), 5);
        assert_eq!(count_ones(&s, 2, 3), 2);
        assert_eq!(count_ones(&s, 4, 86), 0);
        assert_eq!(first_bit(&s, true, 4, 87), Some(87));
        assert_eq!(first_bit(&s, false, 0, 87), Some(4));
        assert_eq!(first_bit(&s, true, 4, 86), None);
        assert_eq!(first_bit(&[0xff; 20], false, 0, 159), None);
    }

    /// The byte-by-byte definition: every source zero-padded to the longest.
    fn bitop_bytewise(op: BitOp, sources: &[&[u8]]) -> Vec<u8> {
        let maxlen = sources.iter().map(|s| s.len()).max().unwrap_or(0);
        let at = |s: &[u8], j: usize| s.get(j).copied().unwrap_or(0);
        (0..maxlen)
            .map(|j| {
                let x = at(sources[0], j);
                let mut others = sources[1..].iter().map(|s| at(s, j));
                match op {
                    BitOp::And => others.fold(x, |a, b| a & b),
                    BitOp::Or => others.fold(x, |a, b| a | b),
                    BitOp::Xor => others.fold(x, |a, b| a ^ b),
                    BitOp::Not => !x,
                    BitOp::Diff => x & !others.fold(0, |a, b| a | b),
                    BitOp::Diff1 => !x & others.fold(0, |a, b| a | b),
                    BitOp::AndOr => x & others.fold(0, |a, b| a | b),
                    BitOp::One => {
                        let (mut once, mut many) = (x, 0u8);
                        for b in others.by_ref() {
                            many |= once & b;
                            once ^= b;
                        }
                        once & !many
                    }
                }
            })
            .collect()
    }

    #[test]
    fn bitop_over_slices_equals_the_bytewise_definition() {
        // Sources of mixed lengths (shorter and longer than the first, empty),
        // long enough for the vector loops and their remainders.
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..200 {
            let n = 1 + (next() % 4) as usize;
            let srcs: Vec<Vec<u8>> = (0..n)
                .map(|_| (0..next() % 100).map(|_| next() as u8).collect())
                .collect();
            let refs: Vec<&[u8]> = srcs.iter().map(Vec::as_slice).collect();
            for op in [
                BitOp::And,
                BitOp::Or,
                BitOp::Xor,
                BitOp::Diff,
                BitOp::Diff1,
                BitOp::AndOr,
                BitOp::One,
            ] {
                assert_eq!(
                    bitop(op, &refs),
                    bitop_bytewise(op, &refs),
                    "{op:?} {srcs:?}"
                );
            }
            assert_eq!(
                bitop(BitOp::Not, &refs[..1]),
                bitop_bytewise(BitOp::Not, &refs[..1])
            );
        }
    }

    #[test]
    fn bitop_pads_and_combines() {
        let a: &[u8] = &[0b1100];
        let b: &[u8] = &[0b1010, 0xff];
        assert_eq!(bitop(BitOp::And, &[a, b]), [0b1000, 0]);
        assert_eq!(bitop(BitOp::Or, &[a, b]), [0b1110, 0xff]);
        assert_eq!(bitop(BitOp::Diff, &[a, b]), [0b0100, 0]);
        assert_eq!(bitop(BitOp::Diff1, &[a, b]), [0b0010, 0xff]);
        assert_eq!(bitop(BitOp::AndOr, &[a, b]), [0b1000, 0]);
        let c: &[u8] = &[0b1001];
        assert_eq!(bitop(BitOp::One, &[a, b, c]), [0b0111 & !0b1000, 0xff]);
        assert_eq!(bitop(BitOp::Not, &[a]), [!0b1100]);
    }

    #[test]
    fn the_articles_u7_overflow_cases() {
        assert_eq!(check_unsigned(120, 10, 7, Overflow::Wrap), Some(2));
        assert_eq!(check_unsigned(120, 10, 7, Overflow::Sat), Some(127));
        assert!(check_unsigned(120, 10, 7, Overflow::Fail).is_some());
        assert_eq!(check_unsigned(120, 7, 7, Overflow::Fail), None);
        assert_eq!(check_signed(127, 1, 8, Overflow::Wrap), Some(-128));
        assert_eq!(check_signed(-128, -1, 8, Overflow::Sat), Some(-128));
        assert_eq!(
            check_signed(i64::MAX, 1, 64, Overflow::Wrap),
            Some(i64::MIN)
        );
    }

    #[test]
    fn bitfields_round_trip() {
        let mut s = vec![0u8; 10];
        set_unsigned(&mut s, 7, 5, 23);
        assert_eq!(s[..2], [0b0000_0001, 0b0111_0000]);
        assert_eq!(get_unsigned(&s, 7, 5), 23);
        set_unsigned(&mut s, 3, 64, (-5i64) as u64);
        assert_eq!(get_signed(&s, 3, 64), -5);
        set_unsigned(&mut s, 20, 4, 0b1010);
        assert_eq!(get_signed(&s, 20, 4), -6);
    }
}
