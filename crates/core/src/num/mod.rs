//! Numbers as Redis 8.6.3 reads and writes them.
//!
//! Every sorted-set score, counter and offset goes in through a string, and many
//! come back out as one, so a faithful re-implementation has to agree with Redis
//! on both directions, byte for byte. The parts:
//!
//! * [`grisu`]: writing doubles (`d2string`: the integer shortcut, then
//!   fpconv's Grisu2 and its layout rules);
//! * [`strtod`]: reading doubles (`string2d`: fast_float, then glibc `strtod` for
//!   hexadecimal floats; the laxer `zslParseRange` rule for score bounds);
//! * [`integers`]: `string2ll` / `ll2string`;
//! * here: the error texts those parsers imply, and lexicographic range bounds.
//!
//! Callers use the re-exports (`crate::num::parse_i64`, ...), not the parts.
//!
//! # Lexicographic ranges: `zslParseLexRangeItem` (src/t_zset.c)
//!
//! `-` and `+` are the open ends, `[x` and `(x` are inclusive and exclusive.

mod grisu;
mod integers;
mod strtod;

pub use grisu::{double_to_i64_exact, dtoa as fpconv_dtoa, format_double, DoubleText};
pub use integers::{digits10, digits_back, format_i64, i64_text, parse_i64, signed_digits_back};
pub use strtod::{c_str, parse_double_arg, parse_score_bound, strtod_prefix};

/// `getDoubleFromObjectOrReply` with no custom message (ZADD, ZINCRBY scores).
pub const ERR_NOT_FLOAT: &str = "ERR value is not a valid float";
/// `getLongLongFromObjectOrReply` with no custom message.
pub const ERR_NOT_INTEGER: &str = "ERR value is not an integer or out of range";
/// A score range bound that `zslParseRange` rejected.
pub const ERR_MIN_MAX_NOT_FLOAT: &str = "ERR min or max is not a float";
/// A lexicographic range bound that `zslParseLexRangeItem` rejected.
pub const ERR_NOT_LEX_RANGE_ITEM: &str = "ERR min or max not valid string range item";
/// ZADD / ZINCRBY when the new score would be NaN (e.g. `inf` plus `-inf`).
pub const ERR_NAN_SCORE: &str = "ERR resulting score is not a number (NaN)";
/// ZUNIONSTORE / ZINTERSTORE / ZDIFF... `WEIGHTS` that `string2d` rejected.
pub const ERR_WEIGHT_NOT_FLOAT: &str = "ERR weight value is not a float";

/// One bound of a lexicographic range (ZRANGEBYLEX, ZLEXCOUNT, ...).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LexBoundSpec {
    /// `-`: before every member.
    NegInf,
    /// `+`: after every member.
    PosInf,
    /// `[member`
    Inclusive(Vec<u8>),
    /// `(member`
    Exclusive(Vec<u8>),
}

/// Parses a lexicographic range bound.
///
/// Mirrors `zslParseLexRangeItem` (src/t_zset.c); `None` means Redis answers
/// [`ERR_NOT_LEX_RANGE_ITEM`].
pub fn parse_lex_bound(s: &[u8]) -> Option<LexBoundSpec> {
    // Redis tests `c[1] != '\0'`, so a NUL right after `+` or `-` also passes.
    let alone = s.len() == 1 || s.get(1) == Some(&0);
    match s.first()? {
        b'+' if alone => Some(LexBoundSpec::PosInf),
        b'-' if alone => Some(LexBoundSpec::NegInf),
        b'(' => Some(LexBoundSpec::Exclusive(s[1..].to_vec())),
        b'[' => Some(LexBoundSpec::Inclusive(s[1..].to_vec())),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lex_bounds() {
        use LexBoundSpec::*;
        let lb = |s: &[u8]| parse_lex_bound(s);
        assert_eq!(lb(b"-"), Some(NegInf));
        assert_eq!(lb(b"+"), Some(PosInf));
        assert_eq!(lb(b"[a"), Some(Inclusive(b"a".to_vec())));
        assert_eq!(lb(b"(a"), Some(Exclusive(b"a".to_vec())));
        assert_eq!(lb(b"["), Some(Inclusive(Vec::new())));
        assert_eq!(lb(b"("), Some(Exclusive(Vec::new())));
        assert_eq!(lb(b"[a\0b"), Some(Inclusive(b"a\0b".to_vec())));
        assert_eq!(lb(b"+\0x"), Some(PosInf));
        for s in [&b""[..], b"a", b"+a", b"-a", b"++", b"--", b" [a", b"]a"] {
            assert_eq!(lb(s), None, "{s:?}");
        }
    }
}
