//! SCAN, SSCAN, HSCAN and ZSCAN (`scanGenericCommand`, db.c): walking a
//! collection a few buckets at a time, with no state on the server.
//!
//! **The lesson of SCAN.** The only state is the cursor the client sends back,
//! and yet a key present from the first call to the last is returned at least
//! once, even if the table grew, shrank or was halfway through a rehash in
//! between. That works because the cursor is a bucket index counted with its
//! bits reversed ([`crate::dict::Dict::scan`]): it advances the high bits first,
//! so the buckets already visited in a small table are exactly the expansions
//! already visited in a table twice the size, and a rehash in progress is
//! walked in both tables at once. What the guarantee does not promise is
//! uniqueness (after a shrink, a bucket can gather keys already returned) or
//! anything about keys added or deleted during the walk. Cursor 0 starts and
//! ends a walk; any other value is only meaningful to the server that made it
//! (the core's cursors are not Redis's: the hash seeds differ).
//!
//! **COUNT** bounds the work of one call, not the size of the reply: Redis
//! keeps calling `dictScan` until it has *sampled* COUNT entries (before
//! filtering) or visited ten buckets per COUNT, then filters by MATCH (glob),
//! drops keys past their deadline (deleting them, as a lookup would) and, for
//! SCAN, keeps only the TYPE asked for (an unknown type name matches nothing,
//! as in Redis 8.6, which does not reject it yet). A small set, hash or sorted
//! set (intset or listpack encoded) has no dict: the whole collection comes
//! back in one reply with cursor 0, whatever COUNT says.
//!
//! Replies: `[cursor, [elements]]` in both protocols; HSCAN lists field and
//! value (only fields with NOVALUES), ZSCAN member and score, the score
//! printed as the listpack stores it (shortest form) or, for a skiplist set,
//! with `%.17Lg`.

use super::{flags::*, Args, CmdResult, CommandSpec, Server};
use crate::glob::glob_match;
use crate::keyspace::Value;
use crate::reply::{errors, Reply};

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec::new("scan", -2, scan).flags(READONLY).doc(
        "2.8.0",
        "Walks the key names of the selected database a few at a time from a cursor.",
        "cursor [MATCH pattern] [COUNT count] [TYPE type]",
    ),
    CommandSpec::new("sscan", -3, sscan)
        .flags(READONLY)
        .keys(1, 1, 1)
        .group(super::Group::Set)
        .doc(
            "2.8.0",
            "Walks the members of a set a few at a time from a cursor.",
            "key cursor [MATCH pattern] [COUNT count]",
        ),
    CommandSpec::new("hscan", -3, hscan)
        .flags(READONLY)
        .keys(1, 1, 1)
        .group(super::Group::Hash)
        .doc(
            "2.8.0",
            "Walks the fields (and values) of a hash a few at a time from a cursor.",
            "key cursor [MATCH pattern] [COUNT count] [NOVALUES]",
        ),
    CommandSpec::new("zscan", -3, zscan)
        .flags(READONLY)
        .keys(1, 1, 1)
        .group(super::Group::SortedSet)
        .doc(
            "2.8.0",
            "Walks the members and scores of a sorted set a few at a time from a cursor.",
            "key cursor [MATCH pattern] [COUNT count]",
        ),
];

/// What is being scanned: the keyspace, or a value of a given type.
#[derive(Clone, Copy, PartialEq)]
enum Target {
    Keyspace,
    Set,
    Hash,
    Zset,
}

struct Options<'a> {
    count: u64,
    /// `None` for no pattern or `*` (which matches everything).
    pattern: Option<&'a [u8]>,
    /// SCAN's TYPE: `Some(None)` for a name no type has.
    type_name: Option<Option<&'static str>>,
    no_values: bool,
}

impl Options<'_> {
    fn matches(&self, element: &[u8]) -> bool {
        self.pattern.is_none_or(|p| glob_match(p, element))
    }
}

/// `parseScanCursorOrReply` (`string2ull`): a non-negative 64-bit integer in
/// Redis's strict form, or what C's `strtoull` accepts over the whole argument
/// (leading blanks, a sign, leading zeros; a negative number wraps).
fn parse_cursor(arg: &[u8]) -> Result<u64, Reply> {
    let invalid = || Reply::error("ERR invalid cursor");
    let text = arg.split(|&b| b == 0).next().unwrap_or_default();
    if let Some(v) = crate::num::parse_i64(text) {
        return u64::try_from(v).map_err(|_| invalid());
    }
    let mut i = text
        .iter()
        .take_while(|b| matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r'))
        .count();
    let negative = match text.get(i) {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let digits = &text[i..];
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return Err(invalid());
    }
    let mut v: u64 = 0;
    for &d in digits {
        v = v
            .checked_mul(10)
            .and_then(|v| v.checked_add(u64::from(d - b'0')))
            .ok_or_else(invalid)?;
    }
    Ok(if negative { v.wrapping_neg() } else { v })
}

/// `getObjectTypeByName` for the types the core has (`list` and `stream` are
/// known to Redis but match nothing here either).
fn type_by_name(name: &[u8]) -> Option<&'static str> {
    let name = name.split(|&b| b == 0).next().unwrap_or_default();
    ["string", "list", "set", "zset", "hash", "stream"]
        .into_iter()
        .find(|t| t.as_bytes().eq_ignore_ascii_case(name))
}

/// The options after the cursor, parsed in Redis's order and with its errors.
fn parse_options<'a>(a: &Args<'a>, first: usize, target: Target) -> Result<Options<'a>, Reply> {
    let mut opts = Options {
        count: 10,
        pattern: None,
        type_name: None,
        no_values: false,
    };
    let mut i = first;
    while i < a.len() {
        let left = a.len() - i;
        if a.is(i, "count") && left >= 2 {
            let count = a.int(i + 1)?;
            if count < 1 {
                return Err(Reply::error(errors::SYNTAX));
            }
            opts.count = count as u64;
            i += 2;
        } else if a.is(i, "match") && left >= 2 {
            let pattern = a.bytes(i + 1);
            opts.pattern = (pattern != b"*").then_some(pattern);
            i += 2;
        } else if a.is(i, "type") && target == Target::Keyspace && left >= 2 {
            opts.type_name = Some(type_by_name(a.bytes(i + 1)));
            i += 2;
        } else if a.is(i, "novalues") {
            if target != Target::Hash {
                return Err(Reply::error(
                    "ERR NOVALUES option can only be used in HSCAN",
                ));
            }
            opts.no_values = true;
            i += 1;
        } else {
            return Err(Reply::error(errors::SYNTAX));
        }
    }
    Ok(opts)
}

fn reply(cursor: u64, elements: Vec<Vec<u8>>) -> Reply {
    Reply::Array(vec![
        Reply::bulk(cursor.to_string()),
        Reply::Array(elements.into_iter().map(Reply::bulk_vec).collect()),
    ])
}

/// The scan loop of `scanGenericCommand`: `dictScan` steps until the walk
/// ends, COUNT entries were sampled, or COUNT * 10 more steps were taken.
fn walk(cursor: u64, count: u64, mut step: impl FnMut(u64, &mut u64) -> u64) -> u64 {
    let mut max_iterations = count.saturating_mul(10);
    let mut sampled = 0;
    let mut cursor = step(cursor, &mut sampled);
    while cursor != 0 && max_iterations != 0 && sampled < count {
        max_iterations -= 1;
        cursor = step(cursor, &mut sampled);
    }
    cursor
}

fn scan(s: &mut Server, a: &Args) -> CmdResult {
    let cursor = parse_cursor(a.bytes(1))?;
    let opts = parse_options(a, 2, Target::Keyspace)?;
    let mut found: Vec<(Vec<u8>, &'static str)> = Vec::new();
    let ks = &s.keyspace;
    let next = walk(cursor, opts.count, |c, sampled| {
        ks.scan_step(c, |key, value| {
            *sampled += 1;
            if opts.matches(key) {
                found.push((key.to_vec(), value.type_name()));
            }
        })
    });
    let mut keys = Vec::with_capacity(found.len());
    for (key, type_name) in found {
        // Expired keys go, as `expireIfNeeded` in the scan callback does.
        if s.keyspace.remove_if_expired(&key) {
            continue;
        }
        match opts.type_name {
            Some(wanted) if wanted != Some(type_name) => continue,
            _ => keys.push(key),
        }
    }
    Ok(reply(next, keys))
}

/// The value a key-scanning command walks: missing keys answer an empty scan
/// (before the options are even read), another type WRONGTYPE.
fn value_scan(s: &mut Server, a: &Args, target: Target) -> CmdResult {
    let cursor = parse_cursor(a.bytes(2))?;
    let Some(value) = s.keyspace.get(a.bytes(1)) else {
        return Ok(reply(0, Vec::new()));
    };
    let right_type = matches!(
        (target, value),
        (Target::Set, Value::Set(_))
            | (Target::Hash, Value::Hash(_))
            | (Target::Zset, Value::Zset(_))
    );
    if !right_type {
        return Err(Reply::error(errors::WRONGTYPE));
    }
    let opts = parse_options(a, 3, target)?;
    let mut out: Vec<Vec<u8>> = Vec::new();
    let next = match value {
        Value::Set(set) => {
            let mut emit = |m: &[u8]| {
                if opts.matches(m) {
                    out.push(m.to_vec());
                }
            };
            match set.scan_table(cursor, |_| {}) {
                Some(_) => walk(cursor, opts.count, |c, sampled| {
                    set.scan_table(c, |m| {
                        *sampled += 1;
                        emit(m);
                    })
                    .unwrap_or(0)
                }),
                None => {
                    set.members().iter().for_each(|m| emit(m));
                    0
                }
            }
        }
        Value::Hash(hash) => {
            let mut emit = |f: &[u8], v: &[u8]| {
                if opts.matches(f) {
                    out.push(f.to_vec());
                    if !opts.no_values {
                        out.push(v.to_vec());
                    }
                }
            };
            // Fields past their TTL are not shown (as `hashTypeScan` skips them).
            let now = crate::keyspace::now_ms().max(0) as u64;
            match hash.scan_table(cursor, now, |_, _| {}) {
                Some(_) => walk(cursor, opts.count, |c, sampled| {
                    hash.scan_table(c, now, |f, v| {
                        *sampled += 1;
                        emit(f, v);
                    })
                    .unwrap_or(0)
                }),
                None => {
                    hash.live_pairs(now)
                        .into_iter()
                        .for_each(|(f, v)| emit(f, v));
                    0
                }
            }
        }
        Value::Zset(zset) => {
            let mut emit = |m: &[u8], score: String| {
                if opts.matches(m) {
                    out.push(m.to_vec());
                    out.push(score.into_bytes());
                }
            };
            match zset.scan_table(cursor, |_, _| {}) {
                Some(_) => walk(cursor, opts.count, |c, sampled| {
                    zset.scan_table(c, |m, score| {
                        *sampled += 1;
                        emit(m, format_17g(score));
                    })
                    .unwrap_or(0)
                }),
                None => {
                    zset.iter()
                        .for_each(|(m, score)| emit(m, crate::num::format_double(score)));
                    0
                }
            }
        }
        // Refused above with WRONGTYPE; answered the same way here rather
        // than trusting that check never changes.
        Value::String(_) | Value::List(_) => return Err(Reply::error(errors::WRONGTYPE)),
    };
    Ok(reply(next, out))
}

fn sscan(s: &mut Server, a: &Args) -> CmdResult {
    value_scan(s, a, Target::Set)
}

fn hscan(s: &mut Server, a: &Args) -> CmdResult {
    value_scan(s, a, Target::Hash)
}

fn zscan(s: &mut Server, a: &Args) -> CmdResult {
    value_scan(s, a, Target::Zset)
}

/// `ld2string(score, LD_STR_AUTO)`: C's `%.17Lg` of the score (a double read
/// as a long double, so the digits are those of `%.17g`): 17 significant
/// digits, trailing zeros dropped, exponent form below 1e-4 or from 1e17.
fn format_17g(v: f64) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf" } else { "-inf" }.into();
    }
    if v == 0.0 {
        return if v.is_sign_negative() { "-0" } else { "0" }.into();
    }
    // 17 significant digits, correctly rounded, as d.dddddddddddddddde±x.
    let sci = format!("{:.16e}", v);
    let (mantissa, exp) = sci.split_once('e').expect("exponent");
    let exp: i32 = exp.parse().expect("exponent digits");
    let negative = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let sign = if negative { "-" } else { "" };
    if !(-4..17).contains(&exp) {
        let mut m = format!("{}.{}", &digits[..1], &digits[1..]);
        trim_fraction(&mut m);
        let esign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{m}e{esign}{:02}", exp.abs());
    }
    let mut out = if exp >= 0 {
        let int_len = exp as usize + 1;
        format!("{}.{}", &digits[..int_len], &digits[int_len..])
    } else {
        format!("0.{}{}", "0".repeat((-exp - 1) as usize), digits)
    };
    trim_fraction(&mut out);
    format!("{sign}{out}")
}

/// `%g` without `#`: no trailing zeros after the point, and no bare point.
fn trim_fraction(s: &mut String) {
    if s.contains('.') {
        while s.ends_with('0') {
            s.pop();
        }
        if s.ends_with('.') {
            s.pop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Server;

    #[test]
    fn percent_17g_matches_c() {
        // Printed by glibc's printf("%.17Lg", (long double)x).
        for (x, want) in [
            (1.0, "1"),
            (1.1, "1.1000000000000001"),
            (0.5, "0.5"),
            (-2.5, "-2.5"),
            (100.0, "100"),
            (1e16, "10000000000000000"),
            (1e17, "1e+17"),
            (123456789012345678.0, "1.2345678901234568e+17"),
            (0.0001, "0.0001"),
            (0.00001, "1.0000000000000001e-05"),
            (1.0 / 3.0, "0.33333333333333331"),
            (-0.0, "-0"),
            (f64::INFINITY, "inf"),
            (f64::NEG_INFINITY, "-inf"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (5e-324, "4.9406564584124654e-324"),
            // 2^-25 has 18 significant digits: a tie, rounded to even.
            (2f64.powi(-25), "2.9802322387695312e-08"),
            (0.1, "0.10000000000000001"),
            (123.456, "123.456"),
            (1e21, "1e+21"),
            (9.999999999999999e16, "99999999999999984"),
        ] {
            assert_eq!(format_17g(x), want, "{x:e}");
        }
    }

    #[test]
    fn cursors_parse_like_string2ull() {
        for (arg, want) in [
            ("0", Some(0)),
            ("17", Some(17)),
            ("18446744073709551615", Some(u64::MAX)),
            (" 5", Some(5)),
            ("+5", Some(5)),
            ("007", Some(7)),
            ("-0", Some(0)),
            ("-18446744073709551615", Some(1)),
            ("-1", None),
            ("18446744073709551616", None),
            ("5 ", None),
            ("", None),
            (" ", None),
            ("+", None),
            ("x", None),
            ("1e3", None),
        ] {
            assert_eq!(parse_cursor(arg.as_bytes()).ok(), want, "{arg:?}");
        }
    }

    fn elements(r: &Reply) -> (Vec<u8>, Vec<Vec<u8>>) {
        let Reply::Array(parts) = r else {
            panic!("{r:?}")
        };
        let (Reply::Bulk(c), Reply::Array(items)) = (&parts[0], &parts[1]) else {
            panic!("{r:?}")
        };
        let items = items
            .iter()
            .map(|i| match i {
                Reply::Bulk(b) => b.to_vec(),
                other => panic!("{other:?}"),
            })
            .collect();
        (c.to_vec(), items)
    }

    #[test]
    fn a_full_scan_returns_every_key_once_without_changes() {
        let mut s = Server::new();
        for i in 0..1000 {
            s.cmd(&["SET", &format!("key:{i}"), "v"]);
        }
        s.cmd(&["HSET", "h", "f", "v"]);
        let mut cursor = b"0".to_vec();
        let mut all = Vec::new();
        let mut calls = 0;
        loop {
            let r = s.run(&[
                b"SCAN".to_vec(),
                cursor.clone(),
                b"COUNT".to_vec(),
                b"7".to_vec(),
            ]);
            let (next, keys) = elements(&r);
            all.extend(keys);
            calls += 1;
            if next == b"0" {
                break;
            }
            cursor = next;
        }
        assert!(calls > 100);
        all.sort();
        let before = all.len();
        all.dedup();
        assert_eq!(before, all.len(), "no rehash, no duplicates");
        assert_eq!(all.len(), 1001);
        // TYPE and MATCH filter what was sampled.
        let mut hashes = Vec::new();
        let mut matched = 0;
        let mut cursor = b"0".to_vec();
        loop {
            let r = s.run(&[
                b"SCAN".to_vec(),
                cursor.clone(),
                b"TYPE".to_vec(),
                b"HASH".to_vec(),
            ]);
            let (next, keys) = elements(&r);
            hashes.extend(keys);
            let r = s.run(&[
                b"SCAN".to_vec(),
                cursor.clone(),
                b"MATCH".to_vec(),
                b"key:1??".to_vec(),
            ]);
            matched += elements(&r).1.len();
            if next == b"0" {
                break;
            }
            cursor = next;
        }
        assert_eq!(hashes, vec![b"h".to_vec()]);
        assert_eq!(matched, 100);
    }

    #[test]
    fn small_collections_come_back_whole_with_cursor_0() {
        let mut s = Server::new();
        s.cmd(&["SADD", "ints", "3", "1", "2"]);
        s.cmd(&["HSET", "h", "b", "1", "a", "2"]);
        s.cmd(&["ZADD", "z", "1.5", "x", "-0", "y", "1.1", "w"]);
        let r = s.cmd(&["SSCAN", "ints", "0", "COUNT", "1"]);
        assert_eq!(
            elements(&r),
            (
                b"0".to_vec(),
                vec![b"1".to_vec(), b"2".to_vec(), b"3".to_vec()]
            )
        );
        let r = s.cmd(&["HSCAN", "h", "0", "NOVALUES"]);
        assert_eq!(elements(&r).1, vec![b"b".to_vec(), b"a".to_vec()]);
        let r = s.cmd(&["ZSCAN", "z", "0", "MATCH", "[xy]"]);
        assert_eq!(
            elements(&r).1,
            vec![b"y".to_vec(), b"0".to_vec(), b"x".to_vec(), b"1.5".to_vec()]
        );
        // Big ones are walked; a skiplist's scores print with %.17g.
        let mut argv = vec!["ZADD".to_string(), "big".into()];
        for i in 0..200 {
            argv.push(format!("{i}.1"));
            argv.push(format!("m{i}"));
        }
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        s.cmd(&argv);
        let r = s.cmd(&["ZSCAN", "big", "0", "MATCH", "m1", "COUNT", "1000"]);
        assert_eq!(
            elements(&r),
            (
                b"0".to_vec(),
                vec![b"m1".to_vec(), b"1.1000000000000001".to_vec()]
            )
        );
    }

    #[test]
    fn errors_come_in_redis_order() {
        let mut s = Server::new();
        s.cmd(&["SET", "str", "v"]);
        let err = |t: &str| Reply::error(t);
        assert_eq!(s.cmd(&["SCAN", "x"]), err("ERR invalid cursor"));
        assert_eq!(s.cmd(&["SCAN", "0", "COUNT", "0"]), err("ERR syntax error"));
        assert_eq!(
            s.cmd(&["SCAN", "0", "COUNT", "x"]),
            err("ERR value is not an integer or out of range")
        );
        assert_eq!(s.cmd(&["SCAN", "0", "COUNT"]), err("ERR syntax error"));
        assert_eq!(
            s.cmd(&["SCAN", "0", "NOVALUES"]),
            err("ERR NOVALUES option can only be used in HSCAN")
        );
        assert_eq!(
            s.cmd(&["SSCAN", "s", "0", "TYPE", "set"]),
            elements_reply_empty()
        );
        s.cmd(&["SADD", "s", "a"]);
        assert_eq!(
            s.cmd(&["SSCAN", "s", "0", "TYPE", "set"]),
            err("ERR syntax error")
        );
        assert_eq!(
            s.cmd(&["SSCAN", "str", "0", "NOVALUES"]),
            err("WRONGTYPE Operation against a key holding the wrong kind of value")
        );
        assert_eq!(s.cmd(&["HSCAN", "nokey", "x"]), err("ERR invalid cursor"));
        assert_eq!(
            s.cmd(&["HSCAN", "nokey", "0", "junk"]),
            elements_reply_empty()
        );
        assert_eq!(
            s.cmd(&["SCAN", "0", "TYPE", "nosuchtype"]),
            Reply::Array(vec![Reply::bulk("0"), Reply::Array(vec![])])
        );
    }

    fn elements_reply_empty() -> Reply {
        Reply::Array(vec![Reply::bulk("0"), Reply::Array(vec![])])
    }
}
