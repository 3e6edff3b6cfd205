//! How Redis reads a double: `string2d` (src/util.c) over fast_float and glibc
//! `strtod`, and the laxer rule of sorted-set score ranges.
//!
//! `getDoubleFromObject` (ZADD and ZINCRBY scores, weights) calls `string2d`:
//!
//! * empty input, or input starting with a C `isspace` byte, is rejected;
//! * `fast_float_strtod` (deps/fast_float, built with
//!   `FASTFLOAT_ALLOWS_LEADING_PLUS`) parses `[+-]digits[.digits][e[+-]digits]`,
//!   `inf`, `infinity` and `nan` (any case, optional `-` then optional `+`);
//! * only when fast_float stops short of the end is libc `strtod` tried; in
//!   practice that adds hexadecimal floats such as `0x10` or `-0x1.8p1`;
//! * overflow (`1e400`), underflow to zero (`1e-400`), NaN, trailing bytes
//!   (including a NUL) and any fast_float error are rejected. Subnormals such
//!   as `4.9e-324` are accepted.
//!
//! # Score ranges: `zslParseRange` (src/t_zset.c)
//!
//! `ZRANGEBYSCORE`, `ZCOUNT`, `ZRANGE ... BYSCORE` and friends parse their bounds
//! with `fast_float_strtod` alone and only check that it stopped at the end of
//! the C string and did not produce NaN. So unlike ZADD they *accept* `1e400`
//! (as `inf`), `1e-400` (as `0`) and even the empty string (as `0`), and they
//! reject hexadecimal. A NUL byte ends the bound: `1\0junk` reads as `1`.

/// Parses a ZADD / ZINCRBY score (or any `getDoubleFromObject` argument).
///
/// Mirrors `string2d` (src/util.c): `fast_float_strtod`
/// (deps/fast_float/fast_float_strtod.cpp) first, libc `strtod` if that did not
/// consume everything. `None` means Redis answers [`super::ERR_NOT_FLOAT`].
pub fn parse_double_arg(s: &[u8]) -> Option<f64> {
    let first = *s.first()?;
    if is_c_space(first) {
        return None;
    }
    // fast_float_strtod sees a C string: it stops at the first NUL.
    let ff = fast_float_strtod(c_str(s));
    // A fast_float failure sets errno = EINVAL, which string2d checks even
    // after a successful strtod fallback, so it is final.
    if ff.status != FastFloatStatus::Ok {
        return None;
    }
    let value = if ff.consumed == s.len() {
        ff.value
    } else {
        // strtod's decimal, inf and nan grammar stops where fast_float's does,
        // so the fallback only ever adds hexadecimal floats.
        strtod_hex_full(s)?
    };
    if value.is_nan() {
        return None;
    }
    Some(value)
}

/// Parses a score range bound: `1.5`, `(1.5`, `-inf`, `+inf`, `(inf`, ...
///
/// Mirrors `zslParseRange` (src/t_zset.c). Returns the value and whether it is
/// exclusive; `None` means Redis answers [`super::ERR_MIN_MAX_NOT_FLOAT`].
pub fn parse_score_bound(s: &[u8]) -> Option<(f64, bool)> {
    // Redis works on the C string: `(` is tested on its first byte and
    // fast_float must stop exactly at its terminating NUL.
    let s = c_str(s);
    let (body, exclusive) = match s.split_first() {
        Some((b'(', rest)) => (rest, true),
        _ => (s, false),
    };
    // No errno check here: overflow gives ±inf, underflow ±0, and an empty
    // body is a "failed" parse that stops at the NUL and leaves 0.
    let ff = fast_float_strtod(body);
    if ff.consumed != body.len() || ff.value.is_nan() {
        return None;
    }
    Some((ff.value, exclusive))
}

/// `fast_float_strtod(s, &end)` on `s` read as a C string (up to its first
/// NUL): the value and how many bytes it consumed (0 when nothing parsed, with
/// the value 0). For SORT's scores and DEBUG SLEEP's seconds (the list branch
/// adds these callers).
pub fn strtod_prefix(s: &[u8]) -> (f64, usize) {
    let ff = fast_float_strtod(c_str(s));
    (ff.value, ff.consumed)
}

/// `s` as C sees it: the bytes before the first NUL.
pub fn c_str(s: &[u8]) -> &[u8] {
    match s.iter().position(|&b| b == 0) {
        Some(end) => &s[..end],
        None => s,
    }
}

/// C `isspace` in the "C" locale.
fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FastFloatStatus {
    Ok,
    /// `std::errc::invalid_argument`: nothing parsed, `consumed` is 0.
    Invalid,
    /// `std::errc::result_out_of_range`: the value is ±inf or ±0.
    OutOfRange,
}

/// What `fast_float_strtod` returns: the value, how far `endptr` got, and
/// whether it set errno.
#[derive(Clone, Copy, Debug)]
struct FastFloat {
    value: f64,
    consumed: usize,
    status: FastFloatStatus,
}

/// `fast_float::from_chars` in `general` format with `FASTFLOAT_ALLOWS_LEADING_PLUS`.
///
/// It parses the longest prefix it can; the value itself is correctly rounded,
/// so Rust's own (also correctly rounded) parser computes it.
fn fast_float_strtod(s: &[u8]) -> FastFloat {
    let invalid = FastFloat {
        value: 0.0,
        consumed: 0,
        status: FastFloatStatus::Invalid,
    };
    if s.is_empty() {
        return invalid;
    }
    match small_integer(s) {
        Some(value) => FastFloat {
            value,
            consumed: s.len(),
            status: FastFloatStatus::Ok,
        },
        None => general_strtod(s),
    }
}

/// [`fast_float_strtod`] for any input (not empty).
fn general_strtod(s: &[u8]) -> FastFloat {
    let invalid = FastFloat {
        value: 0.0,
        consumed: 0,
        status: FastFloatStatus::Invalid,
    };
    let Some(scan) = scan_decimal(s) else {
        return parse_inf_nan(s).unwrap_or(invalid);
    };
    let text = std::str::from_utf8(&s[..scan.end]).expect("scanned bytes are ASCII");
    let Ok(value) = text.parse::<f64>() else {
        return invalid;
    };
    let out_of_range = value.is_infinite() || (value == 0.0 && scan.nonzero_digit);
    FastFloat {
        value,
        consumed: scan.end,
        status: if out_of_range {
            FastFloatStatus::OutOfRange
        } else {
            FastFloatStatus::Ok
        },
    }
}

/// The value of `s` when it is a whole number of at most 15 digits with an
/// optional `-` (the usual score or bound: "400000", "-3"), which is exact
/// as an `f64` (below 2^53), so the general parse would give the same bits;
/// `None` for anything else. Half a ZCOUNT's bound parsing went to the
/// general path's UTF-8 check and `str::parse`.
fn small_integer(s: &[u8]) -> Option<f64> {
    let (negative, digits) = match s.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, s),
    };
    if digits.is_empty() || digits.len() > 15 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let n = digits
        .iter()
        .fold(0u64, |n, &d| n * 10 + u64::from(d - b'0'));
    // -0 stays -0.0, as strtod gives.
    let value = n as f64;
    Some(if negative { -value } else { value })
}

struct DecimalScan {
    /// Length of the matched prefix.
    end: usize,
    /// Whether the significand has a digit other than 0 (fast_float's
    /// `pns.mantissa != 0`, used to tell underflow from a real zero).
    nonzero_digit: bool,
}

/// fast_float's `parse_number_string`: `[+-]? digits* (. digits*)? (e[+-]?digits)?`
/// with at least one significand digit. An incomplete exponent is left unread.
fn scan_decimal(s: &[u8]) -> Option<DecimalScan> {
    let digits_from = |p: usize| p + s[p..].iter().take_while(|c| c.is_ascii_digit()).count();
    let mut p = 0;
    if matches!(s[0], b'-' | b'+') {
        p = 1;
        match s.get(p) {
            Some(c) if c.is_ascii_digit() || *c == b'.' => {}
            _ => return None,
        }
    }
    let int_end = digits_from(p);
    let mut digit_count = int_end - p;
    let mut nonzero_digit = s[p..int_end].iter().any(|&c| c != b'0');
    p = int_end;
    if s.get(p) == Some(&b'.') {
        let frac_end = digits_from(p + 1);
        digit_count += frac_end - (p + 1);
        nonzero_digit |= s[p + 1..frac_end].iter().any(|&c| c != b'0');
        p = frac_end;
    }
    if digit_count == 0 {
        return None;
    }
    if matches!(s.get(p), Some(b'e' | b'E')) {
        let mut q = p + 1;
        if matches!(s.get(q), Some(b'+' | b'-')) {
            q += 1;
        }
        if s.get(q).is_some_and(u8::is_ascii_digit) {
            p = digits_from(q);
        }
    }
    Some(DecimalScan {
        end: p,
        nonzero_digit,
    })
}

/// fast_float's `parse_infnan`: optional `-`, then (leading-plus build) optional
/// `+`, then `nan`, `nan(chars)`, `inf` or `infinity`, in any case.
fn parse_inf_nan(s: &[u8]) -> Option<FastFloat> {
    let negative = s.first() == Some(&b'-');
    let mut p = usize::from(negative);
    if s.get(p) == Some(&b'+') {
        p += 1;
    }
    let rest = &s[p..];
    let sign = if negative { -1.0 } else { 1.0 };
    let (value, consumed) = if rest.len() >= 3 && rest[..3].eq_ignore_ascii_case(b"nan") {
        let mut end = p + 3;
        if s.get(end) == Some(&b'(') {
            let inner = s[end + 1..]
                .iter()
                .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
                .count();
            if s.get(end + 1 + inner) == Some(&b')') {
                end += inner + 2;
            }
        }
        (f64::NAN.copysign(sign), end)
    } else if rest.len() >= 3 && rest[..3].eq_ignore_ascii_case(b"inf") {
        let long = rest.len() >= 8 && rest[3..8].eq_ignore_ascii_case(b"inity");
        (sign * f64::INFINITY, p + if long { 8 } else { 3 })
    } else {
        return None;
    };
    Some(FastFloat {
        value,
        consumed,
        status: FastFloatStatus::Ok,
    })
}

/// glibc `strtod` on a hexadecimal float that must use every byte:
/// `[+-]? 0[xX] hexdigits [. hexdigits] ([pP] [+-]? digits)?`, correctly
/// rounded. Returns `None` if bytes are left over, or on `ERANGE` with a
/// result of ±HUGE_VAL or zero (the cases string2d rejects).
fn strtod_hex_full(s: &[u8]) -> Option<f64> {
    let (negative, mut p) = match s.first()? {
        b'-' => (true, 1),
        b'+' => (false, 1),
        _ => (false, 0),
    };
    if !matches!(s.get(p..p + 2), Some([b'0', b'x' | b'X'])) {
        return None;
    }
    p += 2;

    // Keep up to 64 significant bits; the rest only matter as "non-zero".
    let mut mantissa: u64 = 0;
    let mut sticky = false;
    let mut exp2: i64 = 0;
    let mut any_digit = false;
    let mut seen_dot = false;
    while let Some(&c) = s.get(p) {
        if c == b'.' && !seen_dot {
            seen_dot = true;
        } else if let Some(d) = char::from(c).to_digit(16) {
            any_digit = true;
            if mantissa < 1 << 60 {
                mantissa = mantissa * 16 + u64::from(d);
                if seen_dot {
                    exp2 -= 4;
                }
            } else {
                sticky |= d != 0;
                if !seen_dot {
                    exp2 += 4;
                }
            }
        } else {
            break;
        }
        p += 1;
    }
    if !any_digit {
        return None; // strtod would stop after the "0"
    }
    if matches!(s.get(p), Some(b'p' | b'P')) {
        let mut q = p + 1;
        let exp_negative = s.get(q) == Some(&b'-');
        if matches!(s.get(q), Some(b'+' | b'-')) {
            q += 1;
        }
        if s.get(q).is_some_and(u8::is_ascii_digit) {
            let mut e: i64 = 0;
            while let Some(c) = s.get(q).filter(|c| c.is_ascii_digit()) {
                e = (e * 10 + i64::from(c - b'0')).min(1 << 40);
                q += 1;
            }
            exp2 += if exp_negative { -e } else { e };
            p = q;
        }
    }
    if p != s.len() {
        return None;
    }
    let magnitude = compose_binary(mantissa, sticky, exp2)?;
    Some(if negative { -magnitude } else { magnitude })
}

/// Rounds `(mantissa + sticky) * 2^exp2` to the nearest double, ties to even.
/// `None` on overflow or on a non-zero value that rounds to zero (ERANGE).
fn compose_binary(mantissa: u64, sticky: bool, exp2: i64) -> Option<f64> {
    if mantissa == 0 {
        return Some(0.0);
    }
    let lz = mantissa.leading_zeros();
    let m = u128::from(mantissa << lz); // top bit is bit 63
    let exp = exp2 - i64::from(lz) + 63; // value = 1.xxx * 2^exp
    if exp > 1023 {
        return None;
    }
    // Bits to keep: 53 for normal numbers, fewer for subnormals.
    let keep = if exp >= -1022 { 53 } else { exp + 1075 };
    let drop = 64 - keep;
    if drop >= 65 {
        return None; // below half the smallest subnormal
    }
    let mut q = m >> drop;
    let rem = m & ((1u128 << drop) - 1);
    let half = 1u128 << (drop - 1);
    if rem > half || (rem == half && (sticky || q & 1 == 1)) {
        q += 1;
    }
    let bits = if exp >= -1022 {
        let (q, exp) = if q == 1 << 53 {
            (q >> 1, exp + 1)
        } else {
            (q, exp)
        };
        if exp > 1023 {
            return None;
        }
        (((exp + 1023) as u64) << 52) | (q as u64 & 0x000F_FFFF_FFFF_FFFF)
    } else {
        // A carry into bit 52 yields the smallest normal, which is still right.
        q as u64
    };
    if bits == 0 {
        return None;
    }
    Some(f64::from_bits(bits))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pd(s: &str) -> Option<f64> {
        parse_double_arg(s.as_bytes())
    }

    #[test]
    fn double_args_accepted() {
        assert_eq!(pd("1"), Some(1.0));
        assert_eq!(pd("+1"), Some(1.0));
        assert_eq!(pd("-1.5"), Some(-1.5));
        assert_eq!(pd(".5"), Some(0.5));
        assert_eq!(pd("-.5"), Some(-0.5));
        assert_eq!(pd("+.5"), Some(0.5));
        assert_eq!(pd("5."), Some(5.0));
        assert_eq!(pd("007"), Some(7.0));
        assert_eq!(pd("1e3"), Some(1000.0));
        assert_eq!(pd("1E+3"), Some(1000.0));
        assert_eq!(pd("1e-3"), Some(0.001));
        assert_eq!(pd("0e999999"), Some(0.0));
        assert_eq!(pd("1.7976931348623157e308"), Some(f64::MAX));
        assert_eq!(pd("4.9e-324"), Some(5e-324)); // subnormal: fine
        let neg_zero = pd("-0").unwrap();
        assert!(neg_zero == 0.0 && neg_zero.is_sign_negative());
    }

    #[test]
    fn double_args_infinities() {
        for s in [
            "inf",
            "+inf",
            "INF",
            "Inf",
            "infinity",
            "+Infinity",
            "INFINITY",
        ] {
            assert_eq!(pd(s), Some(f64::INFINITY), "{s}");
        }
        for s in ["-inf", "-infinity", "-INF", "-+inf"] {
            assert_eq!(pd(s), Some(f64::NEG_INFINITY), "{s}");
        }
        for s in ["+-inf", "infinit", "infinityx", "in", "++inf", "inf "] {
            assert_eq!(pd(s), None, "{s}");
        }
    }

    #[test]
    fn double_args_rejected() {
        for s in [
            "",
            " 1",
            "1 ",
            "\t1",
            "\n1",
            "1\n",
            "abc",
            "1a",
            "1e",
            "1e+",
            "1.5e-",
            "--1",
            "+-1",
            "+",
            "-",
            ".",
            "-.",
            "+.",
            "e5",
            "1..2",
            "1,5",
            "nan",
            "NaN",
            "-nan",
            "nan(123)",
            "1e400",
            "-1e400",
            "1e309",
            "1e-400",
            "-1e-400",
            "0x",
            "0x.",
            "0xg",
            "0x1p",
            "0x1p+",
            " 0x10",
            "+-0x10",
            "0x1p99999",
            "0x1p-99999",
        ] {
            assert_eq!(pd(s), None, "{s:?}");
        }
        assert_eq!(parse_double_arg(b"1\0"), None);
        assert_eq!(parse_double_arg(b"1\x002"), None);
        assert_eq!(parse_double_arg(b"\0"), None);
    }

    #[test]
    fn double_args_hexadecimal_via_strtod() {
        assert_eq!(pd("0x10"), Some(16.0));
        assert_eq!(pd("0X10"), Some(16.0));
        assert_eq!(pd("-0x10"), Some(-16.0));
        assert_eq!(pd("+0x10"), Some(16.0));
        assert_eq!(pd("0x1p3"), Some(8.0));
        assert_eq!(pd("0x1P-2"), Some(0.25));
        assert_eq!(pd("0x1.8p1"), Some(3.0));
        assert_eq!(pd("0x.8"), Some(0.5));
        assert_eq!(pd("0xA."), Some(10.0));
        assert_eq!(pd("0xff"), Some(255.0));
        assert_eq!(pd("0x1p-1074"), Some(5e-324));
        assert_eq!(pd("0x1.fffffffffffffp1023"), Some(f64::MAX));
        assert_eq!(pd("0x1.fffffffffffff8p1023"), None); // rounds to inf
        assert_eq!(pd("0x20000000000001"), Some(9007199254740992.0)); // tie, even
        assert_eq!(pd("0x20000000000003"), Some(9007199254740996.0)); // tie, even
        assert_eq!(
            pd("0x200000000000010000000001"),
            Some(9007199254740994.0 * 1099511627776.0)
        );
        assert_eq!(pd("0x1p-1075"), None); // tie to even is zero: ERANGE
        assert_eq!(pd("0x1.0000001p-1075"), Some(5e-324));
        let z = pd("-0x0p99999").unwrap();
        assert!(z == 0.0 && z.is_sign_negative());
    }

    #[test]
    fn prefixes_stop_where_fast_float_stops() {
        assert_eq!(strtod_prefix(b"1.5xyz"), (1.5, 3));
        assert_eq!(strtod_prefix(b"abc"), (0.0, 0));
        assert_eq!(strtod_prefix(b"2\x003"), (2.0, 1));
        assert_eq!(c_str(b"ab\x00cd"), b"ab");
    }

    #[test]
    fn small_integers_parse_as_the_general_path_does() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let mut cases: Vec<String> = [
            "0",
            "-0",
            "7",
            "-7",
            "400000",
            "0000123",
            "-000",
            "999999999999999",
            "-999999999999999",
            "9007199254740993",
            "1234567890123456",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        for _ in 0..10_000 {
            let digits = rng.gen_range(1..=17);
            let n: u64 = rng.gen_range(0..10u64.pow(digits));
            let sign = if rng.gen_bool(0.5) { "-" } else { "" };
            cases.push(format!("{sign}{n}"));
        }
        for case in &cases {
            let (fast, general) = (
                fast_float_strtod(case.as_bytes()),
                general_strtod(case.as_bytes()),
            );
            assert_eq!(fast.value.to_bits(), general.value.to_bits(), "{case}");
            assert_eq!(fast.consumed, general.consumed, "{case}");
        }
        // Longer than 15 digits, or not all digits: the general path.
        assert_eq!(small_integer(b"1234567890123456"), None);
        assert_eq!(small_integer(b"+5"), None);
        assert_eq!(small_integer(b"-"), None);
        assert_eq!(small_integer(b"5e3"), None);
    }

    #[test]
    fn score_bounds() {
        let sb = |s: &str| parse_score_bound(s.as_bytes());
        assert_eq!(sb("1.5"), Some((1.5, false)));
        assert_eq!(sb("(1.5"), Some((1.5, true)));
        assert_eq!(sb("-inf"), Some((f64::NEG_INFINITY, false)));
        assert_eq!(sb("+inf"), Some((f64::INFINITY, false)));
        assert_eq!(sb("(+inf"), Some((f64::INFINITY, true)));
        assert_eq!(sb("(-inf"), Some((f64::NEG_INFINITY, true)));
        assert_eq!(sb("inf"), Some((f64::INFINITY, false)));
        assert_eq!(sb("+1"), Some((1.0, false)));
        assert_eq!(sb("1e400"), Some((f64::INFINITY, false)));
        assert_eq!(sb("-1e400"), Some((f64::NEG_INFINITY, false)));
        assert_eq!(sb("1e-400"), Some((0.0, false)));
        assert_eq!(sb(""), Some((0.0, false)));
        assert_eq!(sb("("), Some((0.0, true)));
        assert_eq!(parse_score_bound(b"1\0junk"), Some((1.0, false)));
        assert_eq!(parse_score_bound(b"\0junk"), Some((0.0, false)));
        for s in [
            "nan", "(nan", "-nan", "((1", "0x10", " 1", "1 ", "abc", "[1", "1e", "+",
        ] {
            assert_eq!(sb(s), None, "{s:?}");
        }
    }
}
