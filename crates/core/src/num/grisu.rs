//! How Redis prints a double reply: `d2string` (src/util.c) and `fpconv_dtoa`
//! (deps/fpconv), ported with their quirks.
//!
//! A double reply in RESP2 (`ZSCORE`, `ZINCRBY`, `ZRANGE ... WITHSCORES`, ...) is
//! `addReplyDouble` (src/networking.c), which formats with `d2string`:
//!
//! * NaN is `nan`, infinities are `inf` and `-inf`, zero is `0` and negative
//!   zero is `-0`;
//! * a whole number in `[-2^62, 2^62]` is printed as an integer (`double2ll`);
//! * anything else goes to `fpconv_dtoa`, a port of Florian Loitsch's Grisu2.
//!
//! Grisu2 looks for a *short* digit string that still reads back as exactly the
//! same double. That is why `0.1` added ten times (the double
//! 0.99999999999999988898...) prints as `0.9999999999999999`: sixteen nines are
//! enough to single out that double, and `1` would name a different one. It is
//! not `printf("%.17g")` (which would say `0.99999999999999989`), and it is not
//! Rust's `{}` either: Grisu2 is *nearly* always the shortest form, and
//! `emit_digits` has its own layout rules. So this module ports the algorithm
//! and its cached powers of ten instead of leaning on Rust's formatter. (One
//! visible difference: the double nearest `1e23` prints as
//! `99999999999999990000000`, where a shortest printer says `1e+23`.)
//!
//! The layout (`emit_digits`), with the significant digits `D` (n of them) and
//! the value `D * 10^K`:
//!
//! * `K >= 0` and at most 7 trailing zeros: plain integer
//!   (`123456789012345680000`); otherwise exponent form (`1e+21`);
//! * `K < 0` and (`K > -7` or the decimal exponent is below 4 in absolute value):
//!   plain decimal (`0.00001`, `1234.5678901234567`);
//! * otherwise exponent form: `1e-7`, `1.5e+300`, `-1.2345678901234567e+5`.
//!   The exponent always carries its sign and never a leading zero.

/// Formats a double exactly as Redis sends it in a RESP2 bulk string.
///
/// Mirrors `d2string` (src/util.c), which `addReplyDouble`
/// (src/networking.c) uses for both RESP2 and RESP3, including its
/// `double2ll` integer shortcut and `fpconv_dtoa` (deps/fpconv) for the rest.
///
/// Negative zero prints as `-0`, as ZINCRBY on a new member with `-0` shows.
/// A listpack-encoded sorted set stores `-0` as the integer 0, so there ZSCORE
/// says `0`; a skiplist-encoded one keeps `-0` (see [`double_to_i64_exact`]).
pub fn format_double(v: f64) -> String {
    let text = DoubleText::new(v);
    // Only ASCII digits, signs, '.', 'e', "inf" and "nan" are ever written.
    String::from_utf8_lossy(text.as_bytes()).into_owned()
}

/// [`format_double`] on the stack: the text of a double reply, written into a
/// fixed buffer, so a reply with many scores (ZRANGE ... WITHSCORES) formats
/// each one without allocating. Redis does the same with a `char dbuf[MAX_D2STRING_CHARS]`
/// on the stack of `addReplyDouble`.
#[derive(Clone, Copy)]
pub struct DoubleText {
    buf: [u8; DoubleText::CAPACITY],
    /// The text is `buf[start..start + len]`: an integer is written right to
    /// left, ending at the end of the buffer (no copy to its front); the
    /// other forms are pushed from the front.
    start: u8,
    len: u8,
}

impl DoubleText {
    /// The longest text is 26 bytes (a sign, Grisu's at most 18 digits and the
    /// 7 zeros of the plain integer form); the other forms are shorter.
    const CAPACITY: usize = 32;

    /// The text of `v` as `d2string` writes it.
    pub fn new(v: f64) -> DoubleText {
        let mut t = DoubleText {
            buf: [0; DoubleText::CAPACITY],
            start: 0,
            len: 0,
        };
        if v.is_nan() {
            t.push(b"nan");
        } else if v.is_infinite() {
            t.push(if v < 0.0 { b"-inf" } else { b"inf" });
        } else if v == 0.0 {
            t.push(if v.is_sign_negative() { b"-0" } else { b"0" });
        } else {
            match double_to_i64_exact(v) {
                Some(n) => t.push_i64(n),
                None => t.dtoa(v),
            }
        }
        t
    }

    pub fn as_bytes(&self) -> &[u8] {
        let start = usize::from(self.start);
        &self.buf[start..start + usize::from(self.len)]
    }

    fn push(&mut self, bytes: &[u8]) {
        let at = self.len as usize;
        self.buf[at..at + bytes.len()].copy_from_slice(bytes);
        self.len += bytes.len() as u8;
    }

    fn push_byte(&mut self, b: u8) {
        self.buf[self.len as usize] = b;
        self.len += 1;
    }

    fn push_zeros(&mut self, n: usize) {
        for _ in 0..n {
            self.push_byte(b'0');
        }
    }

    /// `ll2string` (at most 20 bytes).
    /// `ll2string` into an empty text: the digits end at the end of the
    /// buffer, the sign before them.
    fn push_i64(&mut self, n: i64) {
        debug_assert_eq!(self.len, 0);
        let at = super::integers::signed_digits_back(n, &mut self.buf);
        self.start = at as u8;
        self.len = (DoubleText::CAPACITY - at) as u8;
    }

    /// `fpconv_dtoa` of a finite, non-zero double.
    fn dtoa(&mut self, d: f64) {
        let neg = d.to_bits() & SIGN_MASK != 0;
        if neg {
            self.push_byte(b'-');
        }
        let mut digits = [0u8; 18];
        let (n, k) = grisu2(d, &mut digits);
        emit_digits(&digits[..n], k, neg, self);
    }
}

/// The integer equal to `d`, if `d` is whole and within `[-2^62, 2^62]`.
///
/// Mirrors `double2ll` (src/util.c). Besides `d2string`, sorted sets use it to
/// decide whether a listpack stores a score as an integer (`zzlInsertAt`),
/// which is why a listpack-encoded `-0` score comes back as `0`.
pub fn double_to_i64_exact(d: f64) -> Option<i64> {
    // (double)(LLONG_MAX / 2) rounds up to exactly 2^62.
    let limit = (i64::MAX / 2) as f64;
    if d < -limit || d > limit {
        return None;
    }
    let n = d as i64;
    if n as f64 == d {
        Some(n)
    } else {
        None
    }
}

// ---------------------------------------------------------------------------
// Grisu2 as in deps/fpconv/fpconv_dtoa.c, including its quirks.
// ---------------------------------------------------------------------------

const FRAC_MASK: u64 = 0x000F_FFFF_FFFF_FFFF;
const EXP_MASK: u64 = 0x7FF0_0000_0000_0000;
const HIDDEN_BIT: u64 = 0x0010_0000_0000_0000;
const SIGN_MASK: u64 = 0x8000_0000_0000_0000;
const EXP_BIAS: i32 = 1023 + 52;

/// A "do it yourself" float: `frac * 2^exp`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Fp {
    frac: u64,
    exp: i32,
}

const TENS: [u64; 20] = [
    10_000_000_000_000_000_000,
    1_000_000_000_000_000_000,
    100_000_000_000_000_000,
    10_000_000_000_000_000,
    1_000_000_000_000_000,
    100_000_000_000_000,
    10_000_000_000_000,
    1_000_000_000_000,
    100_000_000_000,
    10_000_000_000,
    1_000_000_000,
    100_000_000,
    10_000_000,
    1_000_000,
    100_000,
    10_000,
    1_000,
    100,
    10,
    1,
];

const NPOWERS: i32 = 87;
const STEP_POWERS: i32 = 8;
const FIRST_POWER: i32 = -348;
const EXP_MAX: i32 = -32;
const EXP_MIN: i32 = -60;

/// `10^(FIRST_POWER + 8 i)` as a 64-bit significand with its top bit set,
/// rounded to nearest, and a binary exponent (deps/fpconv/fpconv_powers.h).
/// The test `cached_powers_are_exact` recomputes every entry.
#[rustfmt::skip]
static POWERS_TEN: [Fp; NPOWERS as usize] = [
    Fp { frac: 0xfa8fd5a0081c0288, exp: -1220 }, // 10^-348
    Fp { frac: 0xbaaee17fa23ebf76, exp: -1193 }, // 10^-340
    Fp { frac: 0x8b16fb203055ac76, exp: -1166 }, // 10^-332
    Fp { frac: 0xcf42894a5dce35ea, exp: -1140 }, // 10^-324
    Fp { frac: 0x9a6bb0aa55653b2d, exp: -1113 }, // 10^-316
    Fp { frac: 0xe61acf033d1a45df, exp: -1087 }, // 10^-308
    Fp { frac: 0xab70fe17c79ac6ca, exp: -1060 }, // 10^-300
    Fp { frac: 0xff77b1fcbebcdc4f, exp: -1034 }, // 10^-292
    Fp { frac: 0xbe5691ef416bd60c, exp: -1007 }, // 10^-284
    Fp { frac: 0x8dd01fad907ffc3c, exp: -980 },  // 10^-276
    Fp { frac: 0xd3515c2831559a83, exp: -954 },  // 10^-268
    Fp { frac: 0x9d71ac8fada6c9b5, exp: -927 },  // 10^-260
    Fp { frac: 0xea9c227723ee8bcb, exp: -901 },  // 10^-252
    Fp { frac: 0xaecc49914078536d, exp: -874 },  // 10^-244
    Fp { frac: 0x823c12795db6ce57, exp: -847 },  // 10^-236
    Fp { frac: 0xc21094364dfb5637, exp: -821 },  // 10^-228
    Fp { frac: 0x9096ea6f3848984f, exp: -794 },  // 10^-220
    Fp { frac: 0xd77485cb25823ac7, exp: -768 },  // 10^-212
    Fp { frac: 0xa086cfcd97bf97f4, exp: -741 },  // 10^-204
    Fp { frac: 0xef340a98172aace5, exp: -715 },  // 10^-196
    Fp { frac: 0xb23867fb2a35b28e, exp: -688 },  // 10^-188
    Fp { frac: 0x84c8d4dfd2c63f3b, exp: -661 },  // 10^-180
    Fp { frac: 0xc5dd44271ad3cdba, exp: -635 },  // 10^-172
    Fp { frac: 0x936b9fcebb25c996, exp: -608 },  // 10^-164
    Fp { frac: 0xdbac6c247d62a584, exp: -582 },  // 10^-156
    Fp { frac: 0xa3ab66580d5fdaf6, exp: -555 },  // 10^-148
    Fp { frac: 0xf3e2f893dec3f126, exp: -529 },  // 10^-140
    Fp { frac: 0xb5b5ada8aaff80b8, exp: -502 },  // 10^-132
    Fp { frac: 0x87625f056c7c4a8b, exp: -475 },  // 10^-124
    Fp { frac: 0xc9bcff6034c13053, exp: -449 },  // 10^-116
    Fp { frac: 0x964e858c91ba2655, exp: -422 },  // 10^-108
    Fp { frac: 0xdff9772470297ebd, exp: -396 },  // 10^-100
    Fp { frac: 0xa6dfbd9fb8e5b88f, exp: -369 },  // 10^-92
    Fp { frac: 0xf8a95fcf88747d94, exp: -343 },  // 10^-84
    Fp { frac: 0xb94470938fa89bcf, exp: -316 },  // 10^-76
    Fp { frac: 0x8a08f0f8bf0f156b, exp: -289 },  // 10^-68
    Fp { frac: 0xcdb02555653131b6, exp: -263 },  // 10^-60
    Fp { frac: 0x993fe2c6d07b7fac, exp: -236 },  // 10^-52
    Fp { frac: 0xe45c10c42a2b3b06, exp: -210 },  // 10^-44
    Fp { frac: 0xaa242499697392d3, exp: -183 },  // 10^-36
    Fp { frac: 0xfd87b5f28300ca0e, exp: -157 },  // 10^-28
    Fp { frac: 0xbce5086492111aeb, exp: -130 },  // 10^-20
    Fp { frac: 0x8cbccc096f5088cc, exp: -103 },  // 10^-12
    Fp { frac: 0xd1b71758e219652c, exp: -77 },   // 10^-4
    Fp { frac: 0x9c40000000000000, exp: -50 },   // 10^4
    Fp { frac: 0xe8d4a51000000000, exp: -24 },   // 10^12
    Fp { frac: 0xad78ebc5ac620000, exp: 3 },     // 10^20
    Fp { frac: 0x813f3978f8940984, exp: 30 },    // 10^28
    Fp { frac: 0xc097ce7bc90715b3, exp: 56 },    // 10^36
    Fp { frac: 0x8f7e32ce7bea5c70, exp: 83 },    // 10^44
    Fp { frac: 0xd5d238a4abe98068, exp: 109 },   // 10^52
    Fp { frac: 0x9f4f2726179a2245, exp: 136 },   // 10^60
    Fp { frac: 0xed63a231d4c4fb27, exp: 162 },   // 10^68
    Fp { frac: 0xb0de65388cc8ada8, exp: 189 },   // 10^76
    Fp { frac: 0x83c7088e1aab65db, exp: 216 },   // 10^84
    Fp { frac: 0xc45d1df942711d9a, exp: 242 },   // 10^92
    Fp { frac: 0x924d692ca61be758, exp: 269 },   // 10^100
    Fp { frac: 0xda01ee641a708dea, exp: 295 },   // 10^108
    Fp { frac: 0xa26da3999aef774a, exp: 322 },   // 10^116
    Fp { frac: 0xf209787bb47d6b85, exp: 348 },   // 10^124
    Fp { frac: 0xb454e4a179dd1877, exp: 375 },   // 10^132
    Fp { frac: 0x865b86925b9bc5c2, exp: 402 },   // 10^140
    Fp { frac: 0xc83553c5c8965d3d, exp: 428 },   // 10^148
    Fp { frac: 0x952ab45cfa97a0b3, exp: 455 },   // 10^156
    Fp { frac: 0xde469fbd99a05fe3, exp: 481 },   // 10^164
    Fp { frac: 0xa59bc234db398c25, exp: 508 },   // 10^172
    Fp { frac: 0xf6c69a72a3989f5c, exp: 534 },   // 10^180
    Fp { frac: 0xb7dcbf5354e9bece, exp: 561 },   // 10^188
    Fp { frac: 0x88fcf317f22241e2, exp: 588 },   // 10^196
    Fp { frac: 0xcc20ce9bd35c78a5, exp: 614 },   // 10^204
    Fp { frac: 0x98165af37b2153df, exp: 641 },   // 10^212
    Fp { frac: 0xe2a0b5dc971f303a, exp: 667 },   // 10^220
    Fp { frac: 0xa8d9d1535ce3b396, exp: 694 },   // 10^228
    Fp { frac: 0xfb9b7cd9a4a7443c, exp: 720 },   // 10^236
    Fp { frac: 0xbb764c4ca7a44410, exp: 747 },   // 10^244
    Fp { frac: 0x8bab8eefb6409c1a, exp: 774 },   // 10^252
    Fp { frac: 0xd01fef10a657842c, exp: 800 },   // 10^260
    Fp { frac: 0x9b10a4e5e9913129, exp: 827 },   // 10^268
    Fp { frac: 0xe7109bfba19c0c9d, exp: 853 },   // 10^276
    Fp { frac: 0xac2820d9623bf429, exp: 880 },   // 10^284
    Fp { frac: 0x80444b5e7aa7cf85, exp: 907 },   // 10^292
    Fp { frac: 0xbf21e44003acdd2d, exp: 933 },   // 10^300
    Fp { frac: 0x8e679c2f5e44ff8f, exp: 960 },   // 10^308
    Fp { frac: 0xd433179d9c8cb841, exp: 986 },   // 10^316
    Fp { frac: 0x9e19db92b4e31ba9, exp: 1013 },  // 10^324
    Fp { frac: 0xeb96bf6ebadf77d9, exp: 1039 },  // 10^332
    Fp { frac: 0xaf87023b9bf0ee6b, exp: 1066 },  // 10^340
];

/// `find_cachedpow10`: a cached power `c` such that `exp + c.exp + 64` lands
/// in `[-60, -32]`, and the decimal exponent `k` it stands for.
fn find_cached_pow10(exp: i32) -> (Fp, i32) {
    const ONE_LOG_TEN: f64 = 0.30102999566398114;
    // C truncates the double towards zero when storing it in an int.
    let approx = (f64::from(-(exp + NPOWERS)) * ONE_LOG_TEN) as i32;
    let mut idx = (approx - FIRST_POWER) / STEP_POWERS;
    loop {
        let current = exp + POWERS_TEN[idx as usize].exp + 64;
        if current < EXP_MIN {
            idx += 1;
        } else if current > EXP_MAX {
            idx -= 1;
        } else {
            return (POWERS_TEN[idx as usize], FIRST_POWER + idx * STEP_POWERS);
        }
    }
}

fn build_fp(d: f64) -> Fp {
    let bits = d.to_bits();
    let frac = bits & FRAC_MASK;
    let biased = ((bits & EXP_MASK) >> 52) as i32;
    if biased != 0 {
        Fp {
            frac: frac + HIDDEN_BIT,
            exp: biased - EXP_BIAS,
        }
    } else {
        Fp {
            frac,
            exp: -EXP_BIAS + 1,
        }
    }
}

fn normalize(fp: &mut Fp) {
    while fp.frac & HIDDEN_BIT == 0 {
        fp.frac <<= 1;
        fp.exp -= 1;
    }
    let shift = 64 - 52 - 1;
    fp.frac <<= shift;
    fp.exp -= shift;
}

/// The neighbours' midpoints `(lower, upper)`, sharing `upper`'s exponent.
fn normalized_boundaries(fp: Fp) -> (Fp, Fp) {
    let mut upper = Fp {
        frac: (fp.frac << 1) + 1,
        exp: fp.exp - 1,
    };
    while upper.frac & (HIDDEN_BIT << 1) == 0 {
        upper.frac <<= 1;
        upper.exp -= 1;
    }
    let u_shift = 64 - 52 - 2;
    upper.frac <<= u_shift;
    upper.exp -= u_shift;

    let l_shift = if fp.frac == HIDDEN_BIT { 2 } else { 1 };
    let mut lower = Fp {
        frac: (fp.frac << l_shift) - 1,
        exp: fp.exp - l_shift,
    };
    lower.frac <<= lower.exp - upper.exp;
    lower.exp = upper.exp;
    (lower, upper)
}

/// 64x64 -> upper 64 bits, rounded, as `multiply` does it.
fn multiply(a: Fp, b: Fp) -> Fp {
    const LO: u64 = 0xFFFF_FFFF;
    let ah_bl = (a.frac >> 32) * (b.frac & LO);
    let al_bh = (a.frac & LO) * (b.frac >> 32);
    let al_bl = (a.frac & LO) * (b.frac & LO);
    let ah_bh = (a.frac >> 32) * (b.frac >> 32);
    let mut tmp = (ah_bl & LO) + (al_bh & LO) + (al_bl >> 32);
    tmp += 1 << 31; // round up
    Fp {
        frac: ah_bh + (ah_bl >> 32) + (al_bh >> 32) + (tmp >> 32),
        exp: a.exp + b.exp + 64,
    }
}

/// `round_digit`: walk the last digit down towards the exact value while
/// staying inside the safe interval. Unsigned C arithmetic, hence wrapping.
fn round_digit(digits: &mut [u8], delta: u64, mut rem: u64, kappa: u64, frac: u64) {
    while rem < frac
        && delta.wrapping_sub(rem) >= kappa
        && (rem.wrapping_add(kappa) < frac
            || frac.wrapping_sub(rem) > rem.wrapping_add(kappa).wrapping_sub(frac))
    {
        if let Some(last) = digits.last_mut() {
            *last -= 1;
        }
        rem = rem.wrapping_add(kappa);
    }
}

/// `generate_digits`: returns the digit count and adds to `k`.
fn generate_digits(fp: Fp, upper: Fp, lower: Fp, digits: &mut [u8; 18], k: &mut i32) -> usize {
    let wfrac = upper.frac.wrapping_sub(fp.frac);
    let mut delta = upper.frac.wrapping_sub(lower.frac);

    let shift = (-upper.exp) as u32;
    let one_frac = 1u64 << shift;
    let mut part1 = upper.frac >> shift;
    let mut part2 = upper.frac & (one_frac - 1);

    let mut idx = 0;
    let mut kappa = 10;
    // Integer part: divide by 10^9, 10^8, ..., 1.
    for &div in &TENS[10..] {
        let digit = part1 / div;
        if digit != 0 || idx != 0 {
            digits[idx] = b'0' + digit as u8;
            idx += 1;
        }
        part1 -= digit * div;
        kappa -= 1;

        let tmp = (part1 << shift) + part2;
        if tmp <= delta {
            *k += kappa;
            round_digit(&mut digits[..idx], delta, tmp, div << shift, wfrac);
            return idx;
        }
    }

    // Fractional part: one digit per multiplication by ten.
    let mut unit = 18;
    loop {
        part2 = part2.wrapping_mul(10);
        delta = delta.wrapping_mul(10);
        kappa -= 1;

        let digit = part2 >> shift;
        if digit != 0 || idx != 0 {
            digits[idx] = b'0' + digit as u8;
            idx += 1;
        }
        part2 &= one_frac - 1;
        if part2 < delta {
            *k += kappa;
            round_digit(
                &mut digits[..idx],
                delta,
                part2,
                one_frac,
                wfrac.wrapping_mul(TENS[unit]),
            );
            return idx;
        }
        unit -= 1;
    }
}

/// `grisu2`: the digits of `d` and the decimal exponent `k`, value = digits * 10^k.
fn grisu2(d: f64, digits: &mut [u8; 18]) -> (usize, i32) {
    let mut w = build_fp(d);
    let (lower, upper) = normalized_boundaries(w);
    normalize(&mut w);

    let (cached, k) = find_cached_pow10(upper.exp);
    let w = multiply(w, cached);
    let mut upper = multiply(upper, cached);
    let mut lower = multiply(lower, cached);
    lower.frac = lower.frac.wrapping_add(1);
    upper.frac = upper.frac.wrapping_sub(1);

    let mut dec_exp = -k;
    let n = generate_digits(w, upper, lower, digits, &mut dec_exp);
    (n, dec_exp)
}

/// `emit_digits`: lays out `digits * 10^k` (see the module documentation).
fn emit_digits(digits: &[u8], k: i32, neg: bool, out: &mut DoubleText) {
    let ndigits = digits.len() as i32;
    let mut exp = (k + ndigits - 1).abs();

    // Plain integer.
    if k >= 0 && exp < ndigits + 7 {
        out.push(digits);
        out.push_zeros(k as usize);
        return;
    }

    // Plain decimal.
    if k < 0 && (k > -7 || exp < 4) {
        let offset = ndigits - k.abs();
        if offset <= 0 {
            out.push(b"0.");
            out.push_zeros((-offset) as usize);
            out.push(digits);
        } else {
            let offset = offset as usize;
            out.push(&digits[..offset]);
            out.push_byte(b'.');
            out.push(&digits[offset..]);
        }
        return;
    }

    // Scientific notation.
    let ndigits = ndigits.min(18 - i32::from(neg));
    out.push_byte(digits[0]);
    if ndigits > 1 {
        out.push_byte(b'.');
        out.push(&digits[1..ndigits as usize]);
    }
    out.push_byte(b'e');
    out.push_byte(if k + ndigits - 1 < 0 { b'-' } else { b'+' });
    let mut cent = 0;
    if exp > 99 {
        cent = exp / 100;
        out.push_byte(b'0' + cent as u8);
        exp -= cent * 100;
    }
    if exp > 9 {
        let dec = exp / 10;
        out.push_byte(b'0' + dec as u8);
        exp -= dec * 10;
    } else if cent != 0 {
        out.push_byte(b'0');
    }
    out.push_byte(b'0' + (exp % 10) as u8);
}

/// `fpconv_dtoa` (no integer shortcut: `0` is `0`, `-0` is `-0`).
pub fn dtoa(d: f64) -> String {
    let bits = d.to_bits();
    let mut t = DoubleText {
        buf: [0; DoubleText::CAPACITY],
        start: 0,
        len: 0,
    };
    // filter_special
    if d == 0.0 || bits & EXP_MASK == EXP_MASK {
        if bits & SIGN_MASK != 0 {
            t.push_byte(b'-');
        }
        t.push(if d == 0.0 {
            b"0"
        } else if bits & FRAC_MASK != 0 {
            b"nan"
        } else {
            b"inf"
        });
    } else {
        t.dtoa(d);
    }
    String::from_utf8_lossy(t.as_bytes()).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::num::parse_double_arg;

    fn fmt(v: f64) -> String {
        format_double(v)
    }

    #[test]
    fn cached_powers_are_exact() {
        // Recompute 10^k as a 64-bit significand, rounded to nearest, with a
        // tiny little-endian base-2^32 big integer.
        fn mul_small(n: &mut Vec<u32>, m: u32) {
            let mut carry = 0u64;
            for limb in n.iter_mut() {
                let x = u64::from(*limb) * u64::from(m) + carry;
                *limb = x as u32;
                carry = x >> 32;
            }
            if carry != 0 {
                n.push(carry as u32);
            }
        }
        fn div_small(n: &mut Vec<u32>, d: u32) {
            let mut rem = 0u64;
            for limb in n.iter_mut().rev() {
                let x = (rem << 32) | u64::from(*limb);
                *limb = (x / u64::from(d)) as u32;
                rem = x % u64::from(d);
            }
            while n.last() == Some(&0) {
                n.pop();
            }
        }
        fn bits(n: &[u32]) -> i32 {
            match n.last() {
                None => 0,
                Some(&top) => 32 * (n.len() as i32 - 1) + 32 - top.leading_zeros() as i32,
            }
        }
        // floor(n / 2^shift) for shift >= 0, as u128 when it fits.
        fn shr_to_u128(n: &[u32], shift: i32) -> u128 {
            let mut out = 0u128;
            for i in (0..n.len() as i32 * 32).rev() {
                if i < shift {
                    break;
                }
                let bit = (n[(i / 32) as usize] >> (i % 32)) & 1;
                if bit == 1 {
                    out |= 1u128 << (i - shift);
                }
            }
            out
        }
        for (i, entry) in POWERS_TEN.iter().enumerate() {
            let k = FIRST_POWER + STEP_POWERS * i as i32;
            // Scaled so that the quotient has 65 bits: significand plus a
            // rounding bit. For k < 0 compute floor(2^s / 10^-k).
            let (q65, exp) = if k >= 0 {
                let mut n = vec![1u32];
                for _ in 0..k {
                    mul_small(&mut n, 10);
                }
                let shift = bits(&n) - 65;
                if shift >= 0 {
                    (shr_to_u128(&n, shift), shift + 1)
                } else {
                    (shr_to_u128(&n, 0) << -shift, shift + 1)
                }
            } else {
                let s = 65 + (-k as f64 * std::f64::consts::LOG2_10).ceil() as i32;
                let mut n = vec![0u32; (s / 32 + 1) as usize];
                n[(s / 32) as usize] = 1 << (s % 32);
                for _ in 0..-k {
                    div_small(&mut n, 10);
                }
                let shift = bits(&n) - 65;
                (shr_to_u128(&n, shift), shift - s + 1)
            };
            let rounded = (q65 + 1) >> 1;
            assert_eq!(rounded >> 64, 0, "10^{k} rounds up into a new bit");
            assert_eq!(
                (entry.frac, entry.exp),
                (rounded as u64, exp),
                "cached power 10^{k}"
            );
        }
    }

    #[test]
    fn special_values() {
        assert_eq!(fmt(f64::NAN), "nan");
        assert_eq!(fmt(f64::INFINITY), "inf");
        assert_eq!(fmt(f64::NEG_INFINITY), "-inf");
        assert_eq!(fmt(0.0), "0");
        assert_eq!(fmt(-0.0), "-0");
    }

    #[test]
    fn integers_use_the_integer_path() {
        assert_eq!(fmt(1.0), "1");
        assert_eq!(fmt(-1.0), "-1");
        assert_eq!(fmt(100.0), "100");
        assert_eq!(fmt(9007199254740992.0), "9007199254740992"); // 2^53
        assert_eq!(fmt(5.0000000821e17), "500000008210000000");
        assert_eq!(fmt(1.5e17), "150000000000000000");
        assert_eq!(fmt(4611686018427387904.0), "4611686018427387904"); // 2^62
        assert_eq!(fmt(-4611686018427387904.0), "-4611686018427387904");
        assert_eq!(fmt(1e18), "1000000000000000000");
    }

    #[test]
    fn beyond_two_to_the_62_goes_through_grisu() {
        // 2^62 + 1024 is the next double: digits "4611686018427389", K = 3.
        assert_eq!(fmt(4611686018427388928.0), "4611686018427389000");
        assert_eq!(fmt(5e18), "5e+18");
        assert_eq!(fmt(i64::MAX as f64), "9223372036854776000"); // 2^63
        assert_eq!(fmt(1e19), "1e+19");
        assert_eq!(fmt(1.2e19), "1.2e+19");
        assert_eq!(fmt(1e20), "1e+20");
        assert_eq!(fmt(1e21), "1e+21");
        assert_eq!(fmt(123456789012345680000.0), "123456789012345680000");
        // Seven trailing zeros is the most the plain form takes.
        assert_eq!(fmt(1.2345678901234567e22), "12345678901234568000000");
        assert_eq!(fmt(1.2345678901234567e24), "1.2345678901234568e+24");
        assert_eq!(fmt(1.2345678901234567e25), "1.2345678901234566e+25");
        assert_eq!(fmt(1e22), "1e+22");
        // Grisu2 is not always shortest: the double nearest 1e23 is printed
        // with 16 digits where "1e+23" would also read back.
        assert_eq!(fmt(1e23), "99999999999999990000000");
        assert_eq!(fmt(1e300), "1e+300");
        assert_eq!(fmt(-1e300), "-1e+300");
        assert_eq!(fmt(1e100), "1e+100");
        assert_eq!(fmt(1e105), "1e+105");
        assert_eq!(fmt(f64::MAX), "1.7976931348623157e+308");
        assert_eq!(fmt(f64::MIN), "-1.7976931348623157e+308");
    }

    #[test]
    fn fractions() {
        assert_eq!(fmt(1.5), "1.5");
        assert_eq!(fmt(-1.5), "-1.5");
        assert_eq!(fmt(0.1), "0.1");
        assert_eq!(fmt(0.5), "0.5");
        assert_eq!(fmt(2.75), "2.75");
        assert_eq!(fmt(100.5), "100.5");
        assert_eq!(fmt(-100.5), "-100.5");
        assert_eq!(fmt(0.1 + 0.2), "0.30000000000000004");
        let mut sum = 0.0;
        for _ in 0..10 {
            sum += 0.1;
        }
        assert_eq!(fmt(sum), "0.9999999999999999");
        assert_eq!(fmt(1.0 / 3.0), "0.3333333333333333");
        assert_eq!(fmt(2.0 / 3.0), "0.6666666666666666");
        assert_eq!(fmt(1234.5678901234567), "1234.5678901234567");
        assert_eq!(fmt(12345678.9), "12345678.9");
        assert_eq!(fmt(4611686018427387903.5), "4611686018427387904");
    }

    #[test]
    fn small_numbers_and_the_exponent_switch() {
        assert_eq!(fmt(0.001), "0.001");
        assert_eq!(fmt(1e-5), "0.00001");
        assert_eq!(fmt(1e-6), "0.000001");
        // K = -7 and decimal exponent 6: exponent form, unlike 1e-6.
        assert_eq!(fmt(1.5e-6), "1.5e-6");
        assert_eq!(fmt(1.25e-6), "1.25e-6");
        assert_eq!(fmt(2.5e-7), "2.5e-7");
        assert_eq!(fmt(0.000123), "0.000123");
        assert_eq!(fmt(1e-7), "1e-7");
        assert_eq!(fmt(1.5e-7), "1.5e-7");
        assert_eq!(fmt(-1.5e-7), "-1.5e-7");
        assert_eq!(fmt(1.2345e-5), "1.2345e-5");
        assert_eq!(fmt(1.2e-5), "0.000012");
        assert_eq!(fmt(1e-10), "1e-10");
        assert_eq!(fmt(1e-100), "1e-100");
        assert_eq!(fmt(1e-300), "1e-300");
        assert_eq!(fmt(2.2250738585072014e-308), "2.2250738585072014e-308");
        assert_eq!(fmt(5e-324), "5e-324");
        assert_eq!(fmt(-5e-324), "-5e-324");
    }

    #[test]
    fn many_digits_with_a_small_exponent_switch_to_exponent_form() {
        // 17 digits, K = -11, decimal exponent 5: neither K > -7 nor exp < 4.
        assert_eq!(fmt(123456.78901234567), "1.2345678901234567e+5");
        assert_eq!(fmt(-123456.78901234567), "-1.2345678901234567e+5");
        assert_eq!(fmt(1.2345678901234567e-4), "1.2345678901234567e-4");
        // Decimal exponent 3 is still written plainly.
        assert_eq!(fmt(1234.5678901234567), "1234.5678901234567");
        assert_eq!(fmt(0.0012345678901234567), "0.0012345678901234567");
        assert_eq!(fmt(0.0001), "0.0001");
        // Few digits: K > -7 keeps it plain.
        assert_eq!(fmt(123456.789), "123456.789");
    }

    #[test]
    fn the_longest_texts_fit_the_stack_buffer() {
        // What Redis 8.6.3's ZSCORE answers for these scores.
        for (v, text) in [
            (-1.2345678901234567e22, "-12345678901234568000000"),
            (-0.0012345678901234567, "-0.0012345678901234567"),
            (-1.2345678901234567e-300, "-1.2345678901234568e-300"),
            (-f64::MIN_POSITIVE, "-2.2250738585072014e-308"),
            (-4611686018427387904.0, "-4611686018427387904"),
        ] {
            assert_eq!(DoubleText::new(v).as_bytes(), text.as_bytes());
        }
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let d = -f64::from_bits(x >> 1);
            assert!(DoubleText::new(d).as_bytes().len() <= 26);
        }
    }

    #[test]
    fn double_to_i64_exact_bounds() {
        assert_eq!(double_to_i64_exact(4611686018427387904.0), Some(1 << 62));
        assert_eq!(
            double_to_i64_exact(-4611686018427387904.0),
            Some(-(1 << 62))
        );
        assert_eq!(double_to_i64_exact(4611686018427388928.0), None);
        assert_eq!(double_to_i64_exact(1.5), None);
        assert_eq!(double_to_i64_exact(-0.0), Some(0));
    }

    #[test]
    fn formatted_doubles_read_back() {
        // A cheap xorshift over raw bit patterns.
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let d = f64::from_bits(x);
            if !d.is_finite() {
                continue;
            }
            let text = fmt(d);
            assert_eq!(parse_double_arg(text.as_bytes()), Some(d), "{text}");
        }
    }
}
