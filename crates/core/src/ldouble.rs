//! Redis's `long double`: the x87 80-bit extended format behind INCRBYFLOAT.
//!
//! On x86_64, Redis's `long double` has a 64-bit significand, so INCRBYFLOAT keeps
//! about 19 significant digits where a `double` keeps 15-17. This module keeps the
//! three steps Redis takes, with the same results bit for bit:
//!
//! * **reading** (`string2ld`, src/util.c): glibc `strtold` on the whole argument.
//!   Rejected: empty input, 5,120 bytes or more, a leading C space, trailing bytes
//!   (a NUL included), NaN, and a range error that gave ±inf or zero (a subnormal
//!   result is kept). Accepted: `+`/`-`, `1.`, `.5`, exponents, `inf`/`infinity`
//!   in any case, and hexadecimal floats (`0x1.8p1`, `0x10`);
//! * **adding**: IEEE round-to-nearest-even in 64-bit precision, done in software
//!   by `rustc_apfloat` (the Rust port of LLVM's APFloat, `X87DoubleExtended`);
//! * **writing** (`ld2string` with `LD_STR_HUMAN`): `printf("%.17Lf")`, i.e. the
//!   exact binary value rounded to 17 decimals (ties to even, as glibc), then
//!   trailing zeros and a bare `.` removed, and `-0` turned into `0`.
//!
//! The decimal expansion is exact, which is what glibc prints: so 1000 × 19999.99
//! shows its error in the 18th digit, 19999989.999999999829015.
//!
//! Both conversions have a short path that allocates nothing, for the numbers
//! counters hold: a decimal of up to 19 significant digits scaled by at most
//! 10^±27 is one exact division or multiplication ([`parse_short_decimal`]),
//! and a value below about 2^70 prints from a `u128` ([`fixed_17_small`]).
//! Everything else takes APFloat's decimal parser and a big integer. Each short
//! path is tested against the general one; INCRBYFLOAT went from 8 allocations
//! and 773 ns a call to 1 and 404 ns (HINCRBYFLOAT 10 → 1, 819 → 413 ns).

use num_bigint::BigUint;
use rustc_apfloat::ieee::X87DoubleExtended;
use rustc_apfloat::{Float, Round};

/// `MAX_LONG_DOUBLE_CHARS` (src/util.h): `string2ld` rejects inputs this long.
const MAX_LONG_DOUBLE_CHARS: usize = 5 * 1024;

/// One x87 extended-precision value.
#[derive(Clone, Copy, Debug)]
pub struct LongDouble(X87DoubleExtended);

impl PartialEq for LongDouble {
    fn eq(&self, other: &LongDouble) -> bool {
        self.0 == other.0
    }
}

impl PartialOrd for LongDouble {
    fn partial_cmp(&self, other: &LongDouble) -> Option<std::cmp::Ordering> {
        self.0.partial_cmp(&other.0)
    }
}

impl std::ops::Neg for LongDouble {
    type Output = LongDouble;
    fn neg(self) -> LongDouble {
        LongDouble(-self.0)
    }
}

/// `a + b` with round-to-nearest-even, as the FPU does it.
impl std::ops::Add for LongDouble {
    type Output = LongDouble;
    fn add(self, other: LongDouble) -> LongDouble {
        LongDouble(self.0.add_r(other.0, Round::NearestTiesToEven).value)
    }
}

impl std::ops::Sub for LongDouble {
    type Output = LongDouble;
    fn sub(self, other: LongDouble) -> LongDouble {
        self + -other
    }
}

impl LongDouble {
    pub const ZERO: LongDouble = LongDouble(X87DoubleExtended::ZERO);

    /// `(long double)v`: exact for every `i64`.
    pub fn from_i64(v: i64) -> LongDouble {
        LongDouble(X87DoubleExtended::from_i128(i128::from(v)).value)
    }

    /// The largest finite value (`LDBL_MAX`).
    pub fn max_value() -> LongDouble {
        LongDouble(X87DoubleExtended::largest())
    }

    pub fn is_nan(self) -> bool {
        self.0.is_nan()
    }

    pub fn is_infinite(self) -> bool {
        self.0.is_infinite()
    }

    pub fn is_finite(self) -> bool {
        self.0.is_finite()
    }

    /// Sign, significand (with its explicit integer bit) and binary exponent of a
    /// finite value: |v| = significand × 2^exponent.
    fn parts(self) -> (bool, u64, i32) {
        let bits = self.0.to_bits();
        let negative = (bits >> 79) & 1 == 1;
        let biased = ((bits >> 64) & 0x7fff) as i32;
        let significand = bits as u64;
        (negative, significand, biased.max(1) - 16383 - 63)
    }

    /// Parses like `string2ld`; `None` is Redis's "not a valid float".
    pub fn parse(s: &[u8]) -> Option<LongDouble> {
        if s.is_empty() || s.len() >= MAX_LONG_DOUBLE_CHARS || is_c_space(s[0]) {
            return None;
        }
        if let Some(v) = parse_short_decimal(s) {
            return Some(v);
        }
        parse_general(s)
    }

    /// Formats like `ld2string(..., LD_STR_HUMAN)`: `%.17Lf`, trailing zeros
    /// trimmed. Callers have already rejected NaN and infinities.
    ///
    /// One allocation, the result: the digits of a value below about 2^70
    /// are worked out in a `u128` on the stack ([`fixed_17_small`]), others
    /// (up to 4,933 integer digits) in a big integer.
    pub fn to_human(self) -> String {
        if self.0.is_nan() {
            return "nan".into();
        }
        if self.0.is_infinite() {
            return if self.0.is_negative() { "-inf" } else { "inf" }.into();
        }
        let (negative, significand, exponent) = self.parts();
        let mut small = [b'0'; 40];
        let big;
        let digits: &[u8] = match fixed_17_small(significand, exponent) {
            Some(n) => {
                let at = digits_18(n, &mut small);
                &small[at..]
            }
            None => {
                big = fixed_17(significand, exponent);
                big.as_bytes()
            }
        };
        let (int_part, frac_part) = digits.split_at(digits.len() - 17);
        let frac_len = frac_part
            .iter()
            .rposition(|&d| d != b'0')
            .map_or(0, |i| i + 1);
        let is_zero = frac_len == 0 && int_part.iter().all(|&d| d == b'0');
        let sign = negative && !is_zero;
        let mut text = String::with_capacity(usize::from(sign) + int_part.len() + 1 + frac_len);
        if sign {
            text.push('-');
        }
        // Digits only: ASCII.
        text.push_str(std::str::from_utf8(int_part).unwrap_or_default());
        if frac_len > 0 {
            text.push('.');
            text.push_str(std::str::from_utf8(&frac_part[..frac_len]).unwrap_or_default());
        }
        text
    }
}

/// [`LongDouble::parse`] of anything [`parse_short_decimal`] leaves: long
/// or far-scaled decimals, hexadecimal floats, infinities, and the invalid.
fn parse_general(s: &[u8]) -> Option<LongDouble> {
    let (negative, body) = split_sign(s);
    let lower = std::str::from_utf8(body).ok()?.to_ascii_lowercase();
    let value = if lower == "inf" || lower == "infinity" {
        X87DoubleExtended::INFINITY
    } else if let Some(hex) = lower.strip_prefix("0x") {
        let (mantissa, exponent) = match hex.split_once('p') {
            Some((m, e)) => (m, Some(e)),
            None => (hex, None),
        };
        if !valid_mantissa(mantissa, |c| c.is_ascii_hexdigit()) {
            return None;
        }
        if let Some(e) = exponent {
            if !valid_exponent(e) {
                return None;
            }
        }
        let canonical = format!("0x{mantissa}p{}", exponent.unwrap_or("0"));
        let v = X87DoubleExtended::from_str_r(&canonical, Round::NearestTiesToEven)
            .ok()?
            .value;
        range_checked(
            v,
            mantissa.bytes().any(|c| c.is_ascii_hexdigit() && c != b'0'),
        )?
    } else {
        let (mantissa, exponent) = match lower.split_once('e') {
            Some((m, e)) => (m, Some(e)),
            None => (lower.as_str(), None),
        };
        if !valid_mantissa(mantissa, |c| c.is_ascii_digit()) {
            return None;
        }
        if let Some(e) = exponent {
            if !valid_exponent(e) {
                return None;
            }
        }
        let v = X87DoubleExtended::from_str_r(&lower, Round::NearestTiesToEven)
            .ok()?
            .value;
        range_checked(v, mantissa.bytes().any(|c| matches!(c, b'1'..=b'9')))?
    };
    Some(LongDouble(if negative { -value } else { value }))
}

/// [`LongDouble::parse`] of a plain decimal (`[+-]digits[.digits][e[+-]digits]`)
/// of at most 19 significant digits whose power of ten is within ±27: the
/// digits are then an exact 64-bit integer `m`, and `10^e` is exact in the
/// x87 format too (5^27 needs 63 bits), so `m × 10^e` or `m ÷ 10^-e` is one
/// correctly rounded operation, the value `strtold` gives (Clinger's fast
/// path). `None` for every other input, which the general parser reads
/// (it allocates: a lower-cased copy and APFloat's decimal conversion).
fn parse_short_decimal(s: &[u8]) -> Option<LongDouble> {
    let (negative, body) = split_sign(s);
    let (mantissa, exponent) = match body.iter().position(|&c| c == b'e' || c == b'E') {
        Some(at) => (&body[..at], Some(&body[at + 1..])),
        None => (body, None),
    };
    let mut m: u64 = 0;
    let (mut significant, mut digits, mut frac_digits, mut dots) = (0u32, 0u32, 0i64, 0u32);
    for &c in mantissa {
        match c {
            b'.' => dots += 1,
            b'0'..=b'9' => {
                digits += 1;
                frac_digits += i64::from(dots);
                if significant > 0 || c != b'0' {
                    significant += 1;
                    if significant > 19 {
                        return None;
                    }
                    m = m * 10 + u64::from(c - b'0');
                }
            }
            _ => return None,
        }
    }
    if dots > 1 || digits == 0 {
        return None;
    }
    let e = match exponent {
        None => 0,
        Some(e) => {
            let (minus, e_digits) = split_sign(e);
            // Longer exponents (or none) are the general parser's.
            if e_digits.is_empty() || e_digits.len() > 4 || !e_digits.iter().all(u8::is_ascii_digit)
            {
                return None;
            }
            let v = e_digits
                .iter()
                .fold(0i64, |v, &d| v * 10 + i64::from(d - b'0'));
            if minus {
                -v
            } else {
                v
            }
        }
    };
    let power = e - frac_digits;
    if !(-27..=27).contains(&power) {
        return None;
    }
    let ten = X87DoubleExtended::from_u128(10u128.pow(power.unsigned_abs() as u32)).value;
    let m = X87DoubleExtended::from_u128(u128::from(m)).value;
    let v = if power >= 0 {
        m.mul_r(ten, Round::NearestTiesToEven).value
    } else {
        m.div_r(ten, Round::NearestTiesToEven).value
    };
    Some(LongDouble(if negative { -v } else { v }))
}

/// A leading `-` (true) or `+` taken off `s`.
fn split_sign(s: &[u8]) -> (bool, &[u8]) {
    match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    }
}

/// The decimal digits of `n` (below 2^127) at the end of `buf`, at least 18
/// of them (zero-padded, as [`fixed_17`] pads): where they start.
fn digits_18(n: u128, buf: &mut [u8; 40]) -> usize {
    const TEN_19: u128 = 10_000_000_000_000_000_000;
    buf.fill(b'0');
    // Two u64 halves of 19 digits, so one 128-bit division in all.
    let (high, low) = ((n / TEN_19) as u64, (n % TEN_19) as u64);
    let mut at = crate::num::digits_back(low, &mut buf[..]);
    if high > 0 {
        // The low half's leading zeros are the '0's already there.
        at = crate::num::digits_back(high, &mut buf[..40 - 19]);
    }
    at.min(40 - 18)
}

/// [`fixed_17`] in a `u128` when `significand × 10^17 × 2^exponent` fits one
/// (the product of the first two is below 2^121): the rounded integer, or
/// `None` for the big integer's cases.
fn fixed_17_small(significand: u64, exponent: i32) -> Option<u128> {
    let scaled = u128::from(significand) * 10u128.pow(17);
    if exponent >= 0 {
        return (exponent <= 6).then(|| scaled << exponent);
    }
    let shift = exponent.unsigned_abs();
    if shift >= 128 {
        // Below half of the unit in the last place: rounds to 0.
        return Some(0);
    }
    let quotient = scaled >> shift;
    let remainder = scaled & ((1u128 << shift) - 1);
    let half = 1u128 << (shift - 1);
    let odd = quotient & 1 == 1;
    Some(if remainder > half || (remainder == half && odd) {
        quotient + 1
    } else {
        quotient
    })
}

/// `significand × 2^exponent × 10^17`, rounded to an integer with ties to even,
/// as decimal digits with at least 18 of them (so an integer part exists).
fn fixed_17(significand: u64, exponent: i32) -> String {
    let scaled = BigUint::from(significand) * BigUint::from(10u32).pow(17);
    let rounded = if exponent >= 0 {
        scaled << exponent as usize
    } else {
        let shift = (-exponent) as u64;
        let quotient = &scaled >> shift;
        let remainder = &scaled - (&quotient << shift);
        let half = BigUint::from(1u32) << (shift - 1);
        let odd = quotient.bit(0);
        if remainder > half || (remainder == half && odd) {
            quotient + 1u32
        } else {
            quotient
        }
    };
    let digits = rounded.to_str_radix(10);
    if digits.len() < 18 {
        format!("{digits:0>18}")
    } else {
        digits
    }
}

/// Digits with at most one `.`, and at least one digit.
fn valid_mantissa(m: &str, is_digit: impl Fn(char) -> bool) -> bool {
    let mut dots = 0;
    let mut digits = 0;
    for c in m.chars() {
        if c == '.' {
            dots += 1;
        } else if is_digit(c) {
            digits += 1;
        } else {
            return false;
        }
    }
    dots <= 1 && digits > 0
}

/// `[+-]digits`, at least one digit.
fn valid_exponent(e: &str) -> bool {
    let digits = e.strip_prefix(['+', '-']).unwrap_or(e);
    !digits.is_empty() && digits.bytes().all(|c| c.is_ascii_digit())
}

/// `strtold` reports ERANGE with ±HUGE_VAL on overflow and 0 on underflow; Redis
/// rejects those. `nonzero` says whether the digits were not all zeros.
fn range_checked(v: X87DoubleExtended, nonzero: bool) -> Option<X87DoubleExtended> {
    if v.is_infinite() || (v.is_zero() && nonzero) {
        None
    } else {
        Some(v)
    }
}

fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// `[+-]digits[.digits][(e|E)[+-]digits]` of random lengths, leading and
    /// trailing zeros included.
    fn random_decimal(rng: &mut ChaCha8Rng) -> String {
        let mut text = String::from(["", "+", "-"][rng.gen_range(0..3)]);
        let digit = |rng: &mut ChaCha8Rng| char::from(b'0' + rng.gen_range(0..10u8));
        for _ in 0..rng.gen_range(0..=12) {
            text.push(digit(rng));
        }
        if rng.gen_bool(0.7) {
            text.push('.');
            for _ in 0..rng.gen_range(0..=12) {
                text.push(digit(rng));
            }
        }
        if rng.gen_bool(0.4) {
            text.push(if rng.gen_bool(0.5) { 'e' } else { 'E' });
            text.push_str(["", "+", "-"][rng.gen_range(0..3)]);
            for _ in 0..rng.gen_range(1..=2) {
                text.push(digit(rng));
            }
        }
        text
    }

    /// The fast decimal path gives exactly the general parser's value (its
    /// APFloat decimal conversion is correctly rounded, as glibc's strtold),
    /// and turns down what the general parser rejects.
    #[test]
    fn the_short_decimal_path_agrees_with_the_general_parser() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut taken = 0;
        for _ in 0..20_000 {
            let text = random_decimal(&mut rng);
            let Some(fast) = parse_short_decimal(text.as_bytes()) else {
                continue;
            };
            taken += 1;
            let general = parse_general(text.as_bytes()).map(|v| v.0.to_bits());
            assert_eq!(Some(fast.0.to_bits()), general, "{text:?}");
        }
        assert!(taken > 10_000, "only {taken} took the fast path");
        for text in [
            "0.1",
            "19999.99",
            "1e16",
            "1.5",
            "-0",
            "9999999999999999999e-27",
            "1e27",
        ] {
            let fast = parse_short_decimal(text.as_bytes()).map(|v| v.0.to_bits());
            assert_eq!(
                fast,
                parse_general(text.as_bytes()).map(|v| v.0.to_bits()),
                "{text}"
            );
            assert!(fast.is_some(), "{text}");
        }
        for text in [
            "1e28",
            "10000000000000000000",
            "1e",
            "1.2.3",
            "+-1",
            "0x10",
            "inf",
            "1 ",
        ] {
            assert!(parse_short_decimal(text.as_bytes()).is_none(), "{text}");
        }
    }

    /// The stack path of `to_human` prints the big integer's digits, ties to
    /// even included (an odd significand at 2^-18 is an exact tie).
    #[test]
    fn the_u128_digits_agree_with_the_big_integer() {
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let mut cases: Vec<(u64, i32)> = (1..200).map(|m| (m, -18)).collect();
        cases.extend((0..20_000).map(|_| {
            let significand = rng.gen::<u64>() >> rng.gen_range(0..64);
            (significand, rng.gen_range(-140..=6))
        }));
        cases.extend([(u64::MAX, 6), (u64::MAX, -127), (u64::MAX, -128), (1, -200)]);
        for (significand, exponent) in cases {
            let mut buf = [b'0'; 40];
            let n = fixed_17_small(significand, exponent).expect("in the u128 range");
            let at = digits_18(n, &mut buf);
            let big = fixed_17(significand, exponent);
            assert_eq!(&buf[at..], big.as_bytes(), "{significand} × 2^{exponent}");
        }
        assert_eq!(fixed_17_small(1, 7), None);
    }

    fn ld(s: &str) -> LongDouble {
        LongDouble::parse(s.as_bytes()).unwrap_or_else(|| panic!("{s} should parse"))
    }

    fn sum(start: &str, step: &str, times: usize) -> String {
        let mut v = ld(start);
        for _ in 0..times {
            v = v + ld(step);
        }
        v.to_human()
    }

    #[test]
    fn the_articles_sums() {
        assert_eq!(sum("0", "0.1", 10), "1");
        assert_eq!(sum("1e16", "1.5", 1), "10000000000000001.5");
        assert_eq!(sum("1e20", "1", 1), "100000000000000000000");
        assert_eq!(sum("0", "19999.99", 1000), "19999989.999999999829015");
    }

    #[test]
    fn printing_keeps_17_decimals_and_trims() {
        assert_eq!(ld("10.5").to_human(), "10.5");
        assert_eq!(ld("3.0").to_human(), "3");
        assert_eq!(ld("-0").to_human(), "0");
        assert_eq!(ld("-0.000000000000000001").to_human(), "0");
        assert_eq!(ld("0.1").to_human(), "0.1");
        assert_eq!(ld("1e-17").to_human(), "0.00000000000000001");
        assert_eq!(ld("6e-18").to_human(), "0.00000000000000001");
        assert_eq!(ld("1.1").to_human(), "1.1");
        assert_eq!(ld("-2.5").to_human(), "-2.5");
        assert_eq!(ld("1e25").to_human(), "10000000000000000000000000");
        assert_eq!(ld("0x10").to_human(), "16");
        assert_eq!(ld("0x1.8p1").to_human(), "3");
    }

    #[test]
    fn parsing_follows_strtold_and_string2ld() {
        for bad in [
            "", " 1", "1 ", "abc", "1e", "1e+", ".", "0x", "0xg", "nan", "-nan", "1e99999",
            "1e-99999", "1\0", "--1", "+-1", "0x1p", "1.2.3",
        ] {
            assert!(LongDouble::parse(bad.as_bytes()).is_none(), "{bad:?}");
        }
        for good in [
            "1",
            "+1",
            "-1",
            "1.",
            ".5",
            "1e5",
            "1E+5",
            "inf",
            "-Infinity",
            "INF",
            "0x1P-3",
            "1e-4940",
            "0e99999",
            "00012",
        ] {
            assert!(LongDouble::parse(good.as_bytes()).is_some(), "{good:?}");
        }
        assert!(ld("inf").is_infinite());
        assert!(ld("1e4000").is_finite());
    }

    /// Hostile input stays cheap: the longest accepted argument, huge exponents.
    #[test]
    fn hostile_numbers_parse_quickly() {
        let started = std::time::Instant::now();
        // 5,119 digits overflow (as in Redis); 4,000 do not.
        let long = "1".repeat(MAX_LONG_DOUBLE_CHARS - 1);
        assert!(LongDouble::parse(long.as_bytes()).is_none());
        assert!(LongDouble::parse("9".repeat(4000).as_bytes()).is_some());
        let long_frac = format!("0.{}", "7".repeat(MAX_LONG_DOUBLE_CHARS - 3));
        assert!(LongDouble::parse(long_frac.as_bytes()).is_some());
        for s in [
            "1e99999999999999999999999",
            "1e-99999999999999999999999",
            "0x1p99999999999999999999",
            "0x1p-99999999999999999999",
            "0e99999999999999999999999",
        ] {
            let _ = LongDouble::parse(s.as_bytes());
        }
        let big = ld("1e4932");
        assert!(big.to_human().len() > 4900);
        assert!(started.elapsed() < std::time::Duration::from_secs(2));
    }
}
