//! Counters on strings: INCR, DECR, INCRBY, DECRBY, INCRBYFLOAT (Redis 8.6.3) and
//! INCREX (Redis 8.8).
//!
//! Integer counters read the value strictly (`string2ll`: no spaces, no `+`, no
//! leading zeros, within `i64`), refuse to overflow, store the result as an int,
//! and keep the key's TTL. INCRBYFLOAT reads and adds in x87 80-bit precision and
//! stores the `%.17Lf`-style text ([`crate::ldouble`]), as an embstr or raw string
//! (never an int); it keeps the TTL too.
//!
//! INCREX is not in 8.6.3 (which answers `unknown command`). It follows Redis
//! 8.8's documentation: `INCREX key [BYFLOAT f | BYINT n] [LBOUND l] [UBOUND u]
//! [SATURATE] [EX s | PX ms | EXAT ts | PXAT ms-ts | PERSIST] [ENX]`, default
//! BYINT 1, replying `[new value, applied increment]` (integers for BYINT, bulk
//! strings for BYFLOAT in RESP2). A result outside the bounds (or the type's
//! range) is skipped with `[current, 0]`, leaving key and TTL untouched, unless
//! SATURATE clamps it to the bound. The expiry applies only when the increment
//! does; ENX sets it only on a key without a TTL. The documentation does not
//! give the wording of its own errors, so the core uses Redis's usual ones
//! (`syntax error`, `value is not an integer or out of range`, ...) and says
//! `ERR LBOUND can't be greater than UBOUND` for crossed bounds.

use super::string_args::invalid_expire;
use super::string_value::{lookup, store, store_int};
use super::{Args, CmdResult, CommandSpec, Server};
use crate::keyspace::{now_ms, Value};
use crate::ldouble::LongDouble;
use crate::num::parse_i64;
use crate::reply::{errors, Reply};
use crate::server::notify;
use crate::strings::{ArgObject, StringValue};

use super::flags::*;

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec::new("incr", 2, incr)
        .flags(WRITE | DENYOOM | FAST)
        .keys(1, 1, 1)
        .doc("1.0.0", "Adds one to the integer stored at a key.", "key"),
    CommandSpec::new("decr", 2, decr)
        .flags(WRITE | DENYOOM | FAST)
        .keys(1, 1, 1)
        .doc(
            "1.0.0",
            "Subtracts one from the integer stored at a key.",
            "key",
        ),
    CommandSpec::new("incrby", 3, incrby)
        .flags(WRITE | DENYOOM | FAST)
        .keys(1, 1, 1)
        .doc(
            "1.0.0",
            "Adds an integer to the integer stored at a key.",
            "key increment",
        ),
    CommandSpec::new("decrby", 3, decrby)
        .flags(WRITE | DENYOOM | FAST)
        .keys(1, 1, 1)
        .doc(
            "1.0.0",
            "Subtracts an integer from the integer stored at a key.",
            "key decrement",
        ),
    CommandSpec::new("incrbyfloat", 3, incrbyfloat)
        .flags(WRITE | DENYOOM | FAST)
        .keys(1, 1, 1)
        .doc(
            "2.6.0",
            "Adds a floating-point number to the number stored at a key.",
            "key increment",
        ),
    // Not in 8.6.3: no flags or keys from its COMMAND INFO to copy. As the
    // other counters, it writes one key.
    CommandSpec::new("increx", -2, increx)
        .flags(WRITE | DENYOOM | FAST)
        .keys(1, 1, 1)
        .doc(
            "8.8.0",
            "Adds to a counter within bounds, and sets its expiry when it changes.",
            "key [BYFLOAT increment | BYINT increment] [LBOUND lower] [UBOUND upper] \
             [SATURATE] [EX seconds | PX milliseconds | EXAT unix-time-seconds | \
             PXAT unix-time-milliseconds | PERSIST] [ENX]",
        ),
];

const NAN_OR_INF: &str = "ERR increment would produce NaN or Infinity";

/// `getLongLongFromObject` on a stored value (a missing key reads as 0).
fn current_int(v: Option<&StringValue>) -> Result<i64, Reply> {
    match v {
        None => Ok(0),
        Some(StringValue::Int(n)) => Ok(*n),
        Some(other) => parse_i64(&other.bytes()).ok_or_else(|| Reply::error(errors::NOT_INTEGER)),
    }
}

/// `getLongDoubleFromObject` on a stored value.
fn current_float(v: Option<&StringValue>) -> Result<LongDouble, Reply> {
    match v {
        None => Ok(LongDouble::ZERO),
        Some(StringValue::Int(n)) => Ok(LongDouble::from_i64(*n)),
        Some(other) => {
            LongDouble::parse(&other.bytes()).ok_or_else(|| Reply::error(errors::NOT_FLOAT))
        }
    }
}

/// What INCR's first lookup found at the key.
enum Counter {
    Missing,
    /// Another value: a string to parse, or another type.
    NotAnInt,
    /// An int, changed in place to this sum (`None`: it would overflow).
    Changed(Option<i64>),
}

/// `incrDecrCommand`: two lookups for a new key, as Redis's
/// `lookupKeyWrite` and `dbAdd`, one for an int already there.
fn incr_decr(s: &mut Server, key: &[u8], by: i64) -> CmdResult {
    // A counter that already is an int changes in place, with one lookup.
    let found = s.keyspace.modify(key, |v| match v {
        Some(Value::String(StringValue::Int(n))) => match n.checked_add(by) {
            Some(value) => {
                *n = value;
                (Counter::Changed(Some(value)), true)
            }
            None => (Counter::Changed(None), false),
        },
        Some(_) => (Counter::NotAnInt, false),
        None => (Counter::Missing, false),
    });
    let value = match found {
        Counter::Changed(sum) => {
            let value = sum.ok_or_else(overflow)?;
            s.notify_here(notify::STRING, "incrby", key);
            return Ok(Reply::Integer(value));
        }
        // A new key: its value is stored with no second search for it.
        Counter::Missing => by,
        Counter::NotAnInt => {
            let current = current_int(lookup(s, key)?)?;
            current.checked_add(by).ok_or_else(overflow)?
        }
    };
    store(s, key, ArgObject::int(value), true);
    s.notify_here(notify::STRING, "incrby", key);
    Ok(Reply::Integer(value))
}

fn overflow() -> Reply {
    Reply::error("ERR increment or decrement would overflow")
}

fn incr(s: &mut Server, a: &Args) -> CmdResult {
    incr_decr(s, a.bytes(1), 1)
}

fn decr(s: &mut Server, a: &Args) -> CmdResult {
    incr_decr(s, a.bytes(1), -1)
}

fn incrby(s: &mut Server, a: &Args) -> CmdResult {
    let by = a.int(2)?;
    incr_decr(s, a.bytes(1), by)
}

fn decrby(s: &mut Server, a: &Args) -> CmdResult {
    match a.int(2)? {
        i64::MIN => Err(Reply::error("ERR decrement would overflow")),
        by => incr_decr(s, a.bytes(1), -by),
    }
}

/// The reply is a bulk string in both protocols (`addReplyBulk`), not a double.
fn incrbyfloat(s: &mut Server, a: &Args) -> CmdResult {
    let key = a.bytes(1);
    let current = current_float(lookup(s, key)?)?;
    let by = float_arg(a.bytes(2))?;
    let value = current + by;
    if !value.is_finite() {
        return Err(Reply::error(NAN_OR_INF));
    }
    let text = value.to_human();
    store(s, key, ArgObject::from_computed(text.as_bytes()), true);
    s.notify_here(notify::STRING, "incrbyfloat", key);
    Ok(Reply::bulk(text))
}

/// INCREX's expiry option.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Expiry {
    None,
    /// An absolute deadline in Unix ms, and whether it was absolute (EXAT/PXAT).
    At(i64),
    Persist,
}

/// INCREX's parsed arguments, still as text where the mode decides the type.
struct IncrEx<'a> {
    by: Option<(bool, &'a [u8])>,
    lower: Option<&'a [u8]>,
    upper: Option<&'a [u8]>,
    saturate: bool,
    expiry: Expiry,
    enx: bool,
}

fn parse_increx<'a>(a: &Args<'a>) -> Result<IncrEx<'a>, Reply> {
    let syntax = || Reply::error(errors::SYNTAX);
    let mut out = IncrEx {
        by: None,
        lower: None,
        upper: None,
        saturate: false,
        expiry: Expiry::None,
        enx: false,
    };
    let mut expire: Option<(&str, &[u8])> = None;
    let mut persist = false;
    let mut j = 2;
    while j < a.len() {
        let next = (j + 1 < a.len()).then(|| a.bytes(j + 1));
        if a.is(j, "byint") || a.is(j, "byfloat") {
            if out.by.is_some() {
                return Err(syntax());
            }
            out.by = Some((a.is(j, "byfloat"), next.ok_or_else(syntax)?));
            j += 1;
        } else if a.is(j, "lbound") {
            out.lower = Some(next.ok_or_else(syntax)?);
            j += 1;
        } else if a.is(j, "ubound") {
            out.upper = Some(next.ok_or_else(syntax)?);
            j += 1;
        } else if a.is(j, "saturate") {
            out.saturate = true;
        } else if a.is(j, "enx") {
            out.enx = true;
        } else if a.is(j, "persist") {
            if expire.is_some() {
                return Err(syntax());
            }
            persist = true;
        } else if let Some(unit) = ["ex", "px", "exat", "pxat"]
            .into_iter()
            .find(|w| a.is(j, w))
        {
            if persist || expire.is_some_and(|(u, _)| u != unit) {
                return Err(syntax());
            }
            expire = Some((unit, next.ok_or_else(syntax)?));
            j += 1;
        } else {
            return Err(syntax());
        }
        j += 1;
    }
    if out.enx && (persist || expire.is_none()) {
        return Err(syntax());
    }
    out.expiry = match expire {
        Some((unit, raw)) => Expiry::At(deadline(unit, raw)?),
        None if persist => Expiry::Persist,
        None => Expiry::None,
    };
    Ok(out)
}

/// The deadline of EX/PX/EXAT/PXAT, with SET's checks.
fn deadline(unit: &str, raw: &[u8]) -> Result<i64, Reply> {
    let n = parse_i64(raw).ok_or_else(|| Reply::error(errors::NOT_INTEGER))?;
    let seconds = unit == "ex" || unit == "exat";
    if n <= 0 || (seconds && n > i64::MAX / 1000) {
        return Err(invalid_expire("increx"));
    }
    let ms = if seconds { n * 1000 } else { n };
    if unit == "ex" || unit == "px" {
        ms.checked_add(now_ms())
            .ok_or_else(|| invalid_expire("increx"))
    } else {
        Ok(ms)
    }
}

fn crossed_bounds() -> Reply {
    Reply::error("ERR LBOUND can't be greater than UBOUND")
}

fn increx(s: &mut Server, a: &Args) -> CmdResult {
    let opts = parse_increx(a)?;
    let key = a.bytes(1);
    let (reply, applied) = match opts.by {
        Some((true, by)) => increx_float(s, key, by, &opts),
        Some((false, by)) => increx_int(s, key, Some(by), &opts),
        None => increx_int(s, key, None, &opts),
    }?;
    if applied {
        apply_expiry(s, key, opts.expiry, opts.enx);
    } else {
        s.set_dirty(0);
    }
    Ok(reply)
}

/// Sets or clears the TTL after an applied increment.
fn apply_expiry(s: &mut Server, key: &[u8], expiry: Expiry, enx: bool) {
    match expiry {
        Expiry::None => {}
        Expiry::Persist => {
            s.keyspace.set_expiry(key, None);
        }
        Expiry::At(at) => {
            let has_ttl = matches!(s.keyspace.expiry(key), Some(Some(_)));
            if !(enx && has_ttl) {
                s.keyspace.set_expiry(key, Some(at));
            }
        }
    }
}

fn int_arg(raw: &[u8]) -> Result<i64, Reply> {
    parse_i64(raw).ok_or_else(|| Reply::error(errors::NOT_INTEGER))
}

fn float_arg(raw: &[u8]) -> Result<LongDouble, Reply> {
    LongDouble::parse(raw).ok_or_else(|| Reply::error(errors::NOT_FLOAT))
}

/// The reply and whether the increment was applied.
type Outcome = Result<(Reply, bool), Reply>;

fn increx_int(s: &mut Server, key: &[u8], by: Option<&[u8]>, o: &IncrEx) -> Outcome {
    let by = by.map_or(Ok(1), int_arg)?;
    let lower = o.lower.map_or(Ok(i64::MIN), int_arg)?;
    let upper = o.upper.map_or(Ok(i64::MAX), int_arg)?;
    if lower > upper {
        return Err(crossed_bounds());
    }
    let current = current_int(lookup(s, key)?)?;
    let wanted = i128::from(current) + i128::from(by);
    let (lo, hi) = (i128::from(lower), i128::from(upper));
    let new = if (lo..=hi).contains(&wanted) {
        wanted as i64
    } else if o.saturate {
        wanted.clamp(lo, hi) as i64
    } else {
        let reply = Reply::Array(vec![Reply::Integer(current), Reply::Integer(0)]);
        return Ok((reply, false));
    };
    let applied = (i128::from(new) - i128::from(current)).clamp(i64::MIN.into(), i64::MAX.into());
    store_int(s, key, new);
    let reply = Reply::Array(vec![Reply::Integer(new), Reply::Integer(applied as i64)]);
    Ok((reply, true))
}

fn increx_float(s: &mut Server, key: &[u8], by: &[u8], o: &IncrEx) -> Outcome {
    let by = float_arg(by)?;
    let lower = o.lower.map_or(Ok(-LongDouble::max_value()), float_arg)?;
    let upper = o.upper.map_or(Ok(LongDouble::max_value()), float_arg)?;
    if lower > upper {
        return Err(crossed_bounds());
    }
    let current = current_float(lookup(s, key)?)?;
    let wanted = current + by;
    if !wanted.is_finite() {
        return Err(Reply::error(NAN_OR_INF));
    }
    let new = if wanted >= lower && wanted <= upper {
        wanted
    } else if o.saturate {
        if wanted < lower {
            lower
        } else {
            upper
        }
    } else {
        let reply = Reply::Array(vec![Reply::bulk(current.to_human()), Reply::bulk("0")]);
        return Ok((reply, false));
    };
    let applied = new - current;
    let text = new.to_human();
    store(s, key, ArgObject::from_computed(text.as_bytes()), true);
    let reply = Reply::Array(vec![Reply::bulk(text), Reply::bulk(applied.to_human())]);
    Ok((reply, true))
}

#[cfg(test)]
mod tests {
    use crate::{Reply, Server};

    fn pair(a: i64, b: i64) -> Reply {
        Reply::Array(vec![Reply::Integer(a), Reply::Integer(b)])
    }

    #[test]
    fn integer_errors_read_like_redis() {
        let mut s = Server::new();
        s.cmd(&["SET", "abc", "abc"]);
        let not_int = Reply::error("ERR value is not an integer or out of range");
        assert_eq!(s.cmd(&["INCR", "abc"]), not_int);
        s.cmd(&["SET", "max", "9223372036854775807"]);
        assert_eq!(
            s.cmd(&["INCR", "max"]),
            Reply::error("ERR increment or decrement would overflow")
        );
        s.cmd(&["SET", "f", "1.5"]);
        assert_eq!(s.cmd(&["INCRBY", "f", "1"]), not_int);
        assert_eq!(
            s.cmd(&["DECRBY", "x", "-9223372036854775808"]),
            Reply::error("ERR decrement would overflow")
        );
        assert_eq!(s.cmd(&["INCRBY", "x", " 1"]), not_int);
        assert_eq!(s.cmd(&["DECR", "n"]), Reply::Integer(-1));
    }

    /// INCR of an int changes it in place with one lookup: WATCH notices a
    /// successful one, not an overflowing one, and the TTL stays.
    #[test]
    fn incr_in_place_tells_watch_only_when_it_changes() {
        use crate::server::ConnectInfo;
        let argv = |w: &[&str]| w.iter().map(|x| x.as_bytes().to_vec()).collect::<Vec<_>>();
        let mut s = Server::new();
        let c = s.connect(ConnectInfo::in_process());
        s.cmd(&["SET", "max", "9223372036854775807"]);
        s.call(c, &argv(&["WATCH", "max"]));
        assert!(s.cmd(&["INCR", "max"]).is_error());
        s.call(c, &argv(&["MULTI"]));
        s.call(c, &argv(&["PING"]));
        assert_eq!(
            s.call(c, &argv(&["EXEC"])),
            Reply::Array(vec![Reply::Status("PONG".into())])
        );
        s.cmd(&["SET", "n", "41", "EX", "100"]);
        s.call(c, &argv(&["WATCH", "n"]));
        assert_eq!(s.cmd(&["INCR", "n"]), Reply::Integer(42));
        s.call(c, &argv(&["MULTI"]));
        s.call(c, &argv(&["PING"]));
        assert_eq!(s.call(c, &argv(&["EXEC"])), Reply::NilArray);
        assert_eq!(s.cmd(&["GET", "n"]), Reply::bulk("42"));
        assert!(matches!(s.cmd(&["TTL", "n"]), Reply::Integer(t) if t > 90));
        assert_eq!(s.cmd(&["OBJECT", "ENCODING", "n"]), Reply::bulk("int"));
    }

    #[test]
    fn incrbyfloat_the_articles_cases() {
        let mut s = Server::new();
        for _ in 0..10 {
            s.cmd(&["INCRBYFLOAT", "a", "0.1"]);
        }
        assert_eq!(s.cmd(&["GET", "a"]), Reply::bulk("1"));
        s.cmd(&["SET", "b", "1e16"]);
        assert_eq!(
            s.cmd(&["INCRBYFLOAT", "b", "1.5"]),
            Reply::bulk("10000000000000001.5")
        );
        s.cmd(&["SET", "c", "1e20"]);
        assert_eq!(
            s.cmd(&["INCRBYFLOAT", "c", "1"]),
            Reply::bulk("100000000000000000000")
        );
        for _ in 0..1000 {
            s.cmd(&["INCRBYFLOAT", "m", "19999.99"]);
        }
        assert_eq!(
            s.cmd(&["GET", "m"]),
            Reply::bulk("19999989.999999999829015")
        );
        assert_eq!(s.cmd(&["OBJECT", "ENCODING", "a"]), Reply::bulk("embstr"));
        assert_eq!(
            s.cmd(&["INCRBYFLOAT", "a", "inf"]),
            Reply::error("ERR increment would produce NaN or Infinity")
        );
        assert_eq!(
            s.cmd(&["INCRBYFLOAT", "a", "x"]),
            Reply::error("ERR value is not a valid float")
        );
    }

    #[test]
    fn increx_the_articles_series() {
        let mut s = Server::new();
        let limiter = [
            "INCREX", "rl:u1", "BYINT", "1", "UBOUND", "5", "EX", "60", "ENX",
        ];
        for i in 1..=5 {
            assert_eq!(s.cmd(&limiter), pair(i, 1));
        }
        assert_eq!(s.cmd(&limiter), pair(5, 0));
        assert_eq!(s.cmd(&["TTL", "rl:u1"]), Reply::Integer(60));
        s.cmd(&["EXPIRE", "rl:u1", "30"]);
        s.cmd(&["SET", "rl:u2", "0", "EX", "30"]);
        s.cmd(&["INCREX", "rl:u2", "BYINT", "1", "EX", "60", "ENX"]);
        assert_eq!(s.cmd(&["TTL", "rl:u2"]), Reply::Integer(30));
        s.cmd(&["INCREX", "rl:u2", "BYINT", "1", "EX", "60"]);
        assert_eq!(s.cmd(&["TTL", "rl:u2"]), Reply::Integer(60));

        s.cmd(&["SET", "c", "99"]);
        assert_eq!(
            s.cmd(&["INCREX", "c", "BYINT", "5", "UBOUND", "100"]),
            pair(99, 0)
        );
        assert_eq!(
            s.cmd(&["INCREX", "c", "BYINT", "5", "UBOUND", "100", "SATURATE"]),
            pair(100, 1)
        );
        s.cmd(&["SET", "stock", "2"]);
        let take = ["INCREX", "stock", "BYINT", "-1", "LBOUND", "0"];
        assert_eq!(s.cmd(&take), pair(1, -1));
        assert_eq!(s.cmd(&take), pair(0, -1));
        assert_eq!(s.cmd(&take), pair(0, 0));
        s.cmd(&["INCREX", "fresh"]);
        assert_eq!(s.cmd(&["TTL", "fresh"]), Reply::Integer(-1));
        assert_eq!(s.cmd(&["GET", "fresh"]), Reply::bulk("1"));
    }

    #[test]
    fn increx_floats_bounds_and_errors() {
        let mut s = Server::new();
        assert_eq!(
            s.cmd(&["INCREX", "f", "BYFLOAT", "1.5"]),
            Reply::Array(vec![Reply::bulk("1.5"), Reply::bulk("1.5")])
        );
        assert_eq!(
            s.cmd(&["INCREX", "f", "BYFLOAT", "1", "UBOUND", "2", "SATURATE"]),
            Reply::Array(vec![Reply::bulk("2"), Reply::bulk("0.5")])
        );
        assert_eq!(
            s.cmd(&["INCREX", "f", "BYFLOAT", "1", "UBOUND", "2"]),
            Reply::Array(vec![Reply::bulk("2"), Reply::bulk("0")])
        );
        // A rejected increment on a missing key does not create it.
        assert_eq!(
            s.cmd(&["INCREX", "none", "BYINT", "5", "UBOUND", "1", "EX", "10"]),
            pair(0, 0)
        );
        assert_eq!(s.cmd(&["EXISTS", "none"]), Reply::Integer(0));
        let syntax = Reply::error("ERR syntax error");
        assert_eq!(s.cmd(&["INCREX", "k", "ENX"]), syntax);
        assert_eq!(s.cmd(&["INCREX", "k", "PERSIST", "EX", "1"]), syntax);
        assert_eq!(s.cmd(&["INCREX", "k", "BYINT"]), syntax);
        s.cmd(&["SET", "f", "1.5"]);
        assert_eq!(
            s.cmd(&["INCREX", "f", "BYINT", "1"]),
            Reply::error("ERR value is not an integer or out of range")
        );
        s.cmd(&["SET", "p", "1", "EX", "100"]);
        s.cmd(&["INCREX", "p", "PERSIST"]);
        assert_eq!(s.cmd(&["TTL", "p"]), Reply::Integer(-1));
    }
}
