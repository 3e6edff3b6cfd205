//! How Redis reads and prints integers: `string2ll` and `ll2string` (src/util.c).
//!
//! Strict: optional `-`, no `+`, no leading zeros, no spaces, no `-0`, at most
//! 20 bytes, must fit in an `i64`.

/// `LONG_STR_SIZE` (src/util.h): `string2ll` rejects inputs this long or longer.
const LONG_STR_SIZE: usize = 21;

/// Formats an integer reply or score, as `ll2string` (src/util.c) does.
pub fn format_i64(v: i64) -> String {
    v.to_string()
}

/// "00" to "99": the two digits of every number below 100, so that digits
/// are written two at a time (one division by 100 for two digits, as
/// Redis's `ull2string` does with the same table).
const DIGIT_PAIRS: [u8; 200] = {
    let mut pairs = [0u8; 200];
    let mut i = 0;
    while i < 100 {
        pairs[2 * i] = b'0' + (i / 10) as u8;
        pairs[2 * i + 1] = b'0' + (i % 10) as u8;
        i += 1;
    }
    pairs
};

/// The decimal digits of `n` written so that they end at the end of `buf`
/// (which must have room for them: 20 bytes always do); the index where
/// they start.
pub fn digits_back(mut n: u64, buf: &mut [u8]) -> usize {
    let mut at = buf.len();
    while n >= 100 {
        let pair = (n % 100) as usize * 2;
        n /= 100;
        at -= 2;
        buf[at..at + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    }
    if n >= 10 {
        let pair = n as usize * 2;
        at -= 2;
        buf[at..at + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    } else {
        at -= 1;
        buf[at] = b'0' + n as u8;
    }
    at
}

/// `ll2string` of `v` ending at the end of `buf` (21 bytes always have
/// room): its digits, the sign before them; the index where it starts.
pub fn signed_digits_back(v: i64, buf: &mut [u8]) -> usize {
    let mut at = digits_back(v.unsigned_abs(), buf);
    if v < 0 {
        at -= 1;
        buf[at] = b'-';
    }
    at
}

/// `ll2string` of `v` into `buf`: the text, on the stack.
pub fn i64_text(v: i64, buf: &mut [u8; 21]) -> &[u8] {
    let at = signed_digits_back(v, buf);
    &buf[at..]
}

/// `sdigits10`: the length of `ll2string(v)`, without printing it.
pub fn digits10(v: i64) -> usize {
    let sign = usize::from(v < 0);
    let mut n = v.unsigned_abs();
    let mut digits = 1;
    while n >= 10 {
        n /= 10;
        digits += 1;
    }
    sign + digits
}

/// Parses a strict decimal integer.
///
/// Mirrors `string2ll` (src/util.c), used by `getLongLongFromObject`; `None`
/// means Redis answers [`super::ERR_NOT_INTEGER`].
pub fn parse_i64(s: &[u8]) -> Option<i64> {
    if s.is_empty() || s.len() >= LONG_STR_SIZE {
        return None;
    }
    if s == b"0" {
        return Some(0);
    }
    let (negative, digits) = match s.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, s),
    };
    // The first digit must be 1-9: no "+1", no "01", no "-0".
    if !matches!(digits.first(), Some(b'1'..=b'9')) {
        return None;
    }
    let mut v: u64 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
    }
    if negative {
        if v > 1 << 63 {
            return None;
        }
        // 2^63 wraps to i64::MIN, which is exactly its negation.
        Some((v as i64).wrapping_neg())
    } else {
        i64::try_from(v).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_i64_is_plain() {
        assert_eq!(format_i64(0), "0");
        assert_eq!(format_i64(-42), "-42");
        assert_eq!(format_i64(i64::MIN), "-9223372036854775808");
    }

    #[test]
    fn the_digits_of_an_i64_are_the_printed_digits_without_the_sign() {
        let mut buf = [0u8; 20];
        for v in [0, 7, -42, 1_000_000, i64::MAX, i64::MIN] {
            let want = format_i64(v);
            let at = digits_back(v.unsigned_abs(), &mut buf);
            assert_eq!(&buf[at..], want.trim_start_matches('-').as_bytes());
            let mut signed = [0u8; 21];
            let at = signed_digits_back(v, &mut signed);
            assert_eq!(&signed[at..], want.as_bytes());
            assert_eq!(i64_text(v, &mut signed), want.as_bytes());
        }
    }

    /// Two digits at a time give the printed number at every length, odd
    /// and even, around every power of ten, up to `u64::MAX`.
    #[test]
    fn digits_back_writes_the_printed_number() {
        let mut cases: Vec<u64> = (0..=1_000).collect();
        let mut p = 10u64;
        while let Some(next) = p.checked_mul(10) {
            cases.extend([p - 1, p, p + 1, 7 * p + 3]);
            p = next;
        }
        cases.extend([p - 1, p, u64::MAX]);
        for n in cases {
            let mut buf = [b'x'; 24];
            let at = digits_back(n, &mut buf);
            assert_eq!(&buf[at..], n.to_string().as_bytes(), "{n}");
            assert!(
                buf[..at].iter().all(|&b| b == b'x'),
                "{n}: wrote before its digits"
            );
        }
    }

    #[test]
    fn digits10_is_the_printed_length() {
        for v in [
            0,
            9,
            10,
            -1,
            -10,
            99_999,
            i64::MAX,
            i64::MIN,
            1_000_000_000_000,
        ] {
            assert_eq!(digits10(v), format_i64(v).len(), "{v}");
        }
    }

    #[test]
    fn integers() {
        let pi = |s: &str| parse_i64(s.as_bytes());
        assert_eq!(pi("0"), Some(0));
        assert_eq!(pi("1"), Some(1));
        assert_eq!(pi("-1"), Some(-1));
        assert_eq!(pi("9223372036854775807"), Some(i64::MAX));
        assert_eq!(pi("-9223372036854775808"), Some(i64::MIN));
        for s in [
            "",
            "-",
            "+1",
            "-0",
            "00",
            "01",
            "-01",
            " 1",
            "1 ",
            "1.0",
            "1e3",
            "9223372036854775808",
            "-9223372036854775809",
            "18446744073709551616",
            "99999999999999999999",
            "000000000000000000001",
            "0x10",
        ] {
            assert_eq!(pi(s), None, "{s:?}");
        }
        assert_eq!(parse_i64(b"1\0"), None);
    }
}
