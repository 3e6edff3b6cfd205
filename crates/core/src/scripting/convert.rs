//! Values crossing between Redis and Lua, converted the way src/script_lua.c
//! does (`redisProtocolToLuaType_*` and `luaReplyToRedisReply`).
//!
//! A script's client speaks RESP2 unless the script called `redis.setresp(3)`:
//!
//! | Redis reply → Lua      | RESP2             | RESP3                          |
//! |------------------------|-------------------|--------------------------------|
//! | integer                | number            | number                         |
//! | bulk                   | string            | string                         |
//! | null bulk / null array | false             | nil                            |
//! | array                  | table             | table                          |
//! | status                 | `{ok=...}`        | `{ok=...}`                     |
//! | error                  | `{err=...}`       | `{err=...}`                    |
//! | map                    | flat table        | `{map={k=v}}`                  |
//! | set                    | table             | `{set={k=true}}`               |
//! | double                 | string            | `{double=n}`                   |
//! | boolean                | 1 / 0             | true / false                   |
//! | big number             | string            | `{big_number=s}`               |
//! | verbatim               | string            | `{verbatim_string={format=, string=}}` |
//!
//! And back: a number is an integer (C's truncating cast), a string a bulk,
//! `true` is 1 and `false` a null (`#t`/`#f` once the script is in RESP3),
//! a table is an error (`err`), status (`ok`), double, big number, verbatim
//! string, map, set, or else an array up to its first nil. The caller's own
//! protocol then decides the bytes (a map is a flat array for a RESP2 client).
//!
//! The arguments of `redis.call`: strings as they are, numbers as integers when
//! they are whole (`double2ll`), else in `fpconv_dtoa`'s shortest form.

use mlua::{Lua, Table, Value};

use crate::num;
use crate::reply::{ErrorText, Reply};

/// Deeper than this, a returned table is answered with Redis's stack error
/// instead of recursing further (a table can contain itself).
const MAX_DEPTH: usize = 1000;

/// A command reply as the Lua value `redis.call` returns.
pub fn reply_to_lua(lua: &Lua, reply: &Reply, resp3: bool) -> mlua::Result<Value> {
    let table_with = |field: &str, value: Value| -> mlua::Result<Value> {
        let t = lua.create_table()?;
        t.raw_set(field, value)?;
        Ok(Value::Table(t))
    };
    Ok(match reply {
        Reply::Integer(n) => Value::Number(*n as f64),
        Reply::Bulk(b) => Value::String(lua.create_string(b)?),
        Reply::Nil | Reply::NilArray if resp3 => Value::Nil,
        Reply::Nil | Reply::NilArray => Value::Boolean(false),
        Reply::Status(s) => table_with("ok", Value::String(lua.create_string(s.as_bytes())?))?,
        Reply::Error(text) => {
            let t = error_table(lua, &error_text(&dashed(text)))?;
            t.raw_set("ignore_error_stats_update", true)?;
            Value::Table(t)
        }
        Reply::Array(items) | Reply::Push(items) => array(lua, items, resp3)?,
        Reply::Set(items) if resp3 => {
            let set = lua.create_table()?;
            for item in items {
                set.raw_set(reply_to_lua(lua, item, resp3)?, true)?;
            }
            table_with("set", Value::Table(set))?
        }
        Reply::Set(items) => array(lua, items, resp3)?,
        Reply::Map(pairs) if resp3 => {
            let map = lua.create_table()?;
            for (k, v) in pairs {
                map.raw_set(reply_to_lua(lua, k, resp3)?, reply_to_lua(lua, v, resp3)?)?;
            }
            table_with("map", Value::Table(map))?
        }
        // Under RESP3 each pair is an array of two (Redis writes the pair's
        // header for RESP3 clients only).
        Reply::Pairs(pairs) if resp3 => {
            let t = lua.create_table_with_capacity(pairs.len(), 0)?;
            for (i, (k, v)) in pairs.iter().enumerate() {
                let pair = lua.create_table_with_capacity(2, 0)?;
                pair.raw_set(1, reply_to_lua(lua, k, resp3)?)?;
                pair.raw_set(2, reply_to_lua(lua, v, resp3)?)?;
                t.raw_set(i + 1, pair)?;
            }
            Value::Table(t)
        }
        // Under RESP2 maps and pairs arrive flat, as RESP2 has them.
        Reply::Map(pairs) | Reply::Pairs(pairs) => {
            let t = lua.create_table_with_capacity(2 * pairs.len(), 0)?;
            for (i, (k, v)) in pairs.iter().enumerate() {
                t.raw_set(2 * i + 1, reply_to_lua(lua, k, resp3)?)?;
                t.raw_set(2 * i + 2, reply_to_lua(lua, v, resp3)?)?;
            }
            Value::Table(t)
        }
        Reply::Double(d) if resp3 => table_with("double", Value::Number(*d))?,
        Reply::Double(d) => Value::String(lua.create_string(num::format_double(*d))?),
        Reply::Bool(b) if resp3 => Value::Boolean(*b),
        Reply::Bool(b) => Value::Number(*b as i64 as f64),
        Reply::BigNumber(text) if resp3 => {
            table_with("big_number", Value::String(lua.create_string(text)?))?
        }
        Reply::Verbatim(text) if resp3 => {
            let v = lua.create_table()?;
            v.raw_set("string", lua.create_string(text)?)?;
            v.raw_set("format", "txt")?;
            table_with("verbatim_string", Value::Table(v))?
        }
        Reply::BigNumber(text) | Reply::Verbatim(text) => Value::String(lua.create_string(text)?),
        Reply::Attributed(_, reply) => reply_to_lua(lua, reply, resp3)?,
        Reply::Members(m) => reply_to_lua(lua, &m.to_reply(), resp3)?,
    })
}

fn array(lua: &Lua, items: &[Reply], resp3: bool) -> mlua::Result<Value> {
    let t = lua.create_table()?;
    for (i, item) in items.iter().enumerate() {
        t.raw_set(i + 1, reply_to_lua(lua, item, resp3)?)?;
    }
    Ok(Value::Table(t))
}

/// `{err = text}`, the shape of every error in Redis's Lua.
pub fn error_table(lua: &Lua, text: &[u8]) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.raw_set("err", lua.create_string(text)?)?;
    Ok(t)
}

/// `luaPushErrorBuff`: "-CODE message" keeps its code, a message without a space
/// gets `ERR`; line breaks at either end of the message are trimmed. Bytes in,
/// bytes out: Redis passes any bytes through.
pub fn error_text(raw: &[u8]) -> Vec<u8> {
    let (code, msg): (&[u8], &[u8]) = match raw.strip_prefix(b"-") {
        Some(rest) => match rest.iter().position(|&b| b == b' ') {
            Some(space) => (&rest[..space], &rest[space + 1..]),
            None => (b"ERR", rest),
        },
        None => (b"ERR", raw),
    };
    let is_break = |b: &u8| matches!(*b, b'\r' | b'\n');
    let start = msg.iter().position(|b| !is_break(b)).unwrap_or(msg.len());
    let end = msg
        .iter()
        .rposition(|b| !is_break(b))
        .map_or(start, |i| i + 1);
    let mut text = code.to_vec();
    text.push(b' ');
    text.extend_from_slice(&msg[start..end]);
    text
}

/// `-` and an error reply's text: what `luaPushErrorBuff` is given for a
/// command's error.
pub fn dashed(text: &ErrorText) -> Vec<u8> {
    let mut raw = b"-".to_vec();
    raw.extend_from_slice(text.as_bytes());
    raw
}

/// One argument of `redis.call`, or `None` for a value Redis refuses.
pub fn lua_to_arg(value: &Value) -> Option<Vec<u8>> {
    match value {
        Value::String(s) => Some(s.as_bytes().to_vec()),
        Value::Integer(n) => Some(format_lua_number(*n as f64).into_bytes()),
        Value::Number(d) => Some(format_lua_number(*d).into_bytes()),
        _ => None,
    }
}

/// A Lua number as `luaArgsToRedisArgv` writes it: `double2ll`, else
/// `fpconv_dtoa` (whose NaN keeps its sign bit: `0/0` is `-nan` on x86).
pub fn format_lua_number(d: f64) -> String {
    if let Some(n) = num::double_to_i64_exact(d) {
        return n.to_string();
    }
    let sign = if d.is_sign_negative() { "-" } else { "" };
    if d.is_nan() {
        return format!("{sign}nan");
    }
    if d.is_infinite() {
        return format!("{sign}inf");
    }
    num::format_double(d)
}

/// C's `(long long)` cast of a double as x86-64 performs it: out of range and NaN
/// give the "integer indefinite" value, `i64::MIN`.
pub fn c_cast_i64(d: f64) -> i64 {
    if d.is_nan() || !(-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&d) {
        i64::MIN
    } else {
        d as i64
    }
}

/// The error replies inside a script's reply, for the error statistics: Redis
/// counts each error reply it writes, except those marked as already counted
/// (`ignore_error_stats_update`: the error of a command the script called),
/// which instead count the script's command as failed.
#[derive(Debug, Default, PartialEq)]
pub struct Tally {
    /// Errors to count in `errorstats` (their codes' replies).
    pub counted: Vec<Reply>,
    /// Errors already counted when their command failed.
    pub already_counted: u64,
}

/// The reply for a script's return value (`luaReplyToRedisReply`); `resp3`:
/// the script's client speaks RESP3.
pub fn lua_to_reply(value: &Value, resp3: bool) -> (Reply, Tally) {
    let mut tally = Tally::default();
    let reply = to_reply(value, resp3, 0, &mut tally);
    (reply, tally)
}

fn to_reply(value: &Value, resp3: bool, depth: usize, tally: &mut Tally) -> Reply {
    if depth > MAX_DEPTH {
        let e = Reply::error("ERR reached lua stack limit");
        tally.counted.push(e.clone());
        return e;
    }
    match value {
        Value::String(s) => Reply::bulk_vec(s.as_bytes().to_vec()),
        Value::Boolean(b) if resp3 => Reply::Bool(*b),
        Value::Boolean(true) => Reply::Integer(1),
        Value::Integer(n) => Reply::Integer(*n),
        Value::Number(d) => Reply::Integer(c_cast_i64(*d)),
        Value::Table(t) => table_to_reply(t, resp3, depth, tally),
        _ => Reply::Nil,
    }
}

/// Lua 5.1's `tostring` of a number (`%.14g`).
pub fn lua_number_text(d: f64) -> String {
    super::libs::format_g(d, 14)
}

fn table_to_reply(t: &Table, resp3: bool, depth: usize, tally: &mut Tally) -> Reply {
    let field = |name: &str| t.raw_get::<Value>(name).unwrap_or(Value::Nil);
    if let Value::String(msg) = field("err") {
        let reply = Reply::Error(ErrorText::one_line(msg.as_bytes().to_vec()));
        if matches!(field("ignore_error_stats_update"), Value::Boolean(true)) {
            tally.already_counted += 1;
        } else {
            tally.counted.push(reply.clone());
        }
        return reply;
    }
    if let Value::String(s) = field("ok") {
        return Reply::Status(one_line(&s.to_string_lossy()).into());
    }
    match field("double") {
        Value::Number(d) => return Reply::double(d),
        Value::Integer(n) => return Reply::double(n as f64),
        _ => {}
    }
    if let Value::String(s) = field("big_number") {
        return Reply::BigNumber(one_line(&s.to_string_lossy()));
    }
    if let Value::Table(v) = field("verbatim_string") {
        if let (Ok(Value::String(_)), Ok(Value::String(s))) =
            (v.raw_get::<Value>("format"), v.raw_get::<Value>("string"))
        {
            return Reply::Verbatim(s.to_string_lossy());
        }
    }
    if let Value::Table(map) = field("map") {
        let mut items = Vec::new();
        for (k, v) in map.pairs::<Value, Value>().flatten() {
            let k = to_reply(&k, resp3, depth + 1, tally);
            let v = to_reply(&v, resp3, depth + 1, tally);
            items.push((k, v));
        }
        return Reply::Map(items);
    }
    if let Value::Table(set) = field("set") {
        let items = set
            .pairs::<Value, Value>()
            .flatten()
            .map(|(k, _)| to_reply(&k, resp3, depth + 1, tally))
            .collect();
        return Reply::Set(items);
    }
    let mut items = Vec::new();
    for i in 1.. {
        match t.raw_get::<Value>(i) {
            Ok(Value::Nil) | Err(_) => break,
            Ok(v) => items.push(to_reply(&v, resp3, depth + 1, tally)),
        }
    }
    Reply::Array(items)
}

/// Redis never lets a line break into a status or error line.
pub fn one_line(s: &str) -> String {
    s.replace(['\r', '\n'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_texts_get_a_code() {
        assert_eq!(error_text(b"-bad thing"), b"bad thing");
        assert_eq!(error_text(b"-nospace"), b"ERR nospace");
        assert_eq!(error_text(b"plain words"), b"ERR plain words");
        assert_eq!(error_text(b"-ERR x\r\n"), b"ERR x");
        assert_eq!(error_text(b"-ERR \xff\xfe"), b"ERR \xff\xfe");
        assert_eq!(error_text(b"-\r\n"), b"ERR ");
    }

    #[test]
    fn numbers_as_arguments() {
        assert_eq!(format_lua_number(3.0), "3");
        assert_eq!(format_lua_number(-0.0), "0");
        assert_eq!(format_lua_number(0.1), "0.1");
        assert_eq!(format_lua_number(1e20), "1e+20");
        assert_eq!(format_lua_number(f64::NEG_INFINITY), "-inf");
    }

    #[test]
    fn c_cast_saturates_to_min() {
        assert_eq!(c_cast_i64(3.99), 3);
        assert_eq!(c_cast_i64(-3.99), -3);
        assert_eq!(c_cast_i64(1e300), i64::MIN);
        assert_eq!(c_cast_i64(f64::NAN), i64::MIN);
    }

    #[test]
    fn resp3_replies_become_typed_tables_and_back() {
        let lua = Lua::new();
        let reply = Reply::Map(vec![(Reply::bulk("f"), Reply::Double(1.5))]);
        let v = reply_to_lua(&lua, &reply, true).unwrap();
        lua.globals().set("v", v.clone()).unwrap();
        let d: f64 = lua.load("return v.map.f.double").eval().unwrap();
        assert_eq!(d, 1.5);
        assert_eq!(lua_to_reply(&v, true).0, reply);
        // In RESP2 the same reply is a flat array with the double as a string.
        let v2 = reply_to_lua(&lua, &reply, false).unwrap();
        assert_eq!(
            lua_to_reply(&v2, false).0,
            Reply::Array(vec![Reply::bulk("f"), Reply::bulk("1.5")])
        );
        assert_eq!(reply_to_lua(&lua, &Reply::Nil, true).unwrap(), Value::Nil);
        assert_eq!(
            lua_to_reply(&Value::Boolean(false), true).0,
            Reply::Bool(false)
        );
        assert_eq!(lua_to_reply(&Value::Boolean(false), false).0, Reply::Nil);
        let big: Value = lua.load("return {big_number='1\\r\\n2'}").eval().unwrap();
        assert_eq!(lua_to_reply(&big, false).0, Reply::BigNumber("1  2".into()));
    }

    #[test]
    fn errors_are_tallied_for_the_stats() {
        let lua = Lua::new();
        let v: Value = lua
            .load("return {{err='ERR a'}, {err='X b', ignore_error_stats_update=true}, 1}")
            .eval()
            .unwrap();
        let (_, tally) = lua_to_reply(&v, false);
        assert_eq!(tally.counted, vec![Reply::error("ERR a")]);
        assert_eq!(tally.already_counted, 1);
    }
}
