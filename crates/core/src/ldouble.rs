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
//! The decimal expansion is exact (a big integer), which is what glibc prints: so
//! 1000 × 19999.99 shows its error in the 18th digit, 19999989.999999999829015.

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
        let text = std::str::from_utf8(s).ok()?;
        let (negative, body) = match text.as_bytes()[0] {
            b'-' => (true, &text[1..]),
            b'+' => (false, &text[1..]),
            _ => (false, text),
        };
        let lower = body.to_ascii_lowercase();
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

    /// Formats like `ld2string(..., LD_STR_HUMAN)`: `%.17Lf`, trailing zeros
    /// trimmed. Callers have already rejected NaN and infinities.
    pub fn to_human(self) -> String {
        if self.0.is_nan() {
            return "nan".into();
        }
        if self.0.is_infinite() {
            return if self.0.is_negative() { "-inf" } else { "inf" }.into();
        }
        let (negative, significand, exponent) = self.parts();
        let digits = fixed_17(significand, exponent);
        let mut text = String::with_capacity(digits.len() + 2);
        if negative {
            text.push('-');
        }
        let (int_part, frac_part) = digits.split_at(digits.len() - 17);
        text.push_str(int_part);
        text.push('.');
        text.push_str(frac_part);
        let trimmed = text.trim_end_matches('0');
        let trimmed = trimmed.strip_suffix('.').unwrap_or(trimmed);
        if trimmed == "-0" {
            "0".into()
        } else {
            trimmed.into()
        }
    }
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
