//! Values crossing between Redis and Lua, converted the way Redis documents (and
//! src/script_lua.c implements) for RESP2:
//!
//! | Redis reply → Lua       | Lua value → Redis reply                         |
//! |-------------------------|-------------------------------------------------|
//! | integer → number        | number → integer (truncated; C's cast)          |
//! | bulk → string           | string → bulk                                   |
//! | nil bulk → false        | true → 1, false and nil → nil bulk              |
//! | array → table           | table → array, up to the first nil              |
//! | nil array → false       | `{err=...}` → error, `{ok=...}` → status        |
//! | status → `{ok=...}`     | `{double=n}`, `{map=t}`, `{set=t}`, ... as RESP2 |
//! | error → `{err=...}`     |                                                 |
//!
//! And the arguments of `redis.call`: strings as they are, numbers as integers
//! when they are whole (`double2ll`), else in `fpconv_dtoa`'s shortest form.

use mlua::{Lua, Table, Value};

use crate::num;
use crate::reply::Reply;

/// Deeper than this, a returned table is answered with Redis's stack error
/// instead of recursing further (a table can contain itself).
const MAX_DEPTH: usize = 1000;

/// A command reply as the Lua value `redis.call` returns.
pub fn reply_to_lua(lua: &Lua, reply: &Reply) -> mlua::Result<Value> {
    Ok(match reply {
        Reply::Integer(n) => Value::Number(*n as f64),
        Reply::Bulk(b) => Value::String(lua.create_string(b)?),
        Reply::Nil | Reply::NilArray => Value::Boolean(false),
        Reply::Status(s) => {
            let t = lua.create_table()?;
            t.raw_set("ok", lua.create_string(s)?)?;
            Value::Table(t)
        }
        Reply::Error(text) => {
            let t = error_table(lua, &error_text(&format!("-{text}")))?;
            t.raw_set("ignore_error_stats_update", true)?;
            Value::Table(t)
        }
        Reply::Array(items) | Reply::Set(items) | Reply::Push(items) => {
            let t = lua.create_table_with_capacity(items.len(), 0)?;
            for (i, item) in items.iter().enumerate() {
                t.raw_set(i + 1, reply_to_lua(lua, item)?)?;
            }
            Value::Table(t)
        }
        // A script's client speaks RESP2: the other shapes arrive as RESP2 has them.
        Reply::Map(pairs) | Reply::Pairs(pairs) => {
            let t = lua.create_table_with_capacity(2 * pairs.len(), 0)?;
            for (i, (k, v)) in pairs.iter().enumerate() {
                t.raw_set(2 * i + 1, reply_to_lua(lua, k)?)?;
                t.raw_set(2 * i + 2, reply_to_lua(lua, v)?)?;
            }
            Value::Table(t)
        }
        Reply::Double(d) => Value::String(lua.create_string(crate::num::format_double(*d))?),
        Reply::Bool(b) => Value::Number(*b as i64 as f64),
        Reply::BigNumber(text) | Reply::Verbatim(text) => Value::String(lua.create_string(text)?),
        Reply::Attributed(_, reply) => reply_to_lua(lua, reply)?,
    })
}

/// `{err = text}`, the shape of every error in Redis's Lua.
pub fn error_table(lua: &Lua, text: &str) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.raw_set("err", text)?;
    Ok(t)
}

/// `luaPushErrorBuff`: "-CODE message" keeps its code, a message without a space
/// gets `ERR`; line breaks at either end of the message are trimmed.
pub fn error_text(raw: &str) -> String {
    let (code, msg) = match raw.strip_prefix('-') {
        Some(rest) => match rest.split_once(' ') {
            Some((code, msg)) => (code, msg),
            None => ("ERR", rest),
        },
        None => ("ERR", raw),
    };
    format!("{code} {}", msg.trim_matches(['\r', '\n']))
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

/// The reply for a script's return value (`luaReplyToRedisReply`).
pub fn lua_to_reply(value: &Value) -> Reply {
    to_reply(value, 0)
}

fn to_reply(value: &Value, depth: usize) -> Reply {
    if depth > MAX_DEPTH {
        return Reply::error("ERR reached lua stack limit");
    }
    match value {
        Value::String(s) => Reply::Bulk(s.as_bytes().to_vec()),
        Value::Boolean(true) => Reply::Integer(1),
        Value::Integer(n) => Reply::Integer(*n),
        Value::Number(d) => Reply::Integer(c_cast_i64(*d)),
        Value::Table(t) => table_to_reply(t, depth),
        _ => Reply::Nil,
    }
}

fn table_to_reply(t: &Table, depth: usize) -> Reply {
    let field = |name: &str| t.raw_get::<Value>(name).unwrap_or(Value::Nil);
    if let Value::String(s) = field("err") {
        return Reply::Error(one_line(&s.to_string_lossy()));
    }
    if let Value::String(s) = field("ok") {
        return Reply::Status(one_line(&s.to_string_lossy()));
    }
    match field("double") {
        Value::Number(d) => return Reply::double(d),
        Value::Integer(n) => return Reply::double(n as f64),
        _ => {}
    }
    if let Value::String(s) = field("big_number") {
        return Reply::Bulk(one_line(&s.to_string_lossy()).into_bytes());
    }
    if let Value::Table(v) = field("verbatim_string") {
        if let (Ok(Value::String(_)), Ok(Value::String(s))) =
            (v.raw_get::<Value>("format"), v.raw_get::<Value>("string"))
        {
            return Reply::Bulk(s.as_bytes().to_vec());
        }
    }
    if let Value::Table(map) = field("map") {
        let mut items = Vec::new();
        for (k, v) in map.pairs::<Value, Value>().flatten() {
            items.push(to_reply(&k, depth + 1));
            items.push(to_reply(&v, depth + 1));
        }
        return Reply::Array(items);
    }
    if let Value::Table(set) = field("set") {
        let items = set
            .pairs::<Value, Value>()
            .flatten()
            .map(|(k, _)| to_reply(&k, depth + 1))
            .collect();
        return Reply::Array(items);
    }
    let mut items = Vec::new();
    for i in 1.. {
        match t.raw_get::<Value>(i) {
            Ok(Value::Nil) | Err(_) => break,
            Ok(v) => items.push(to_reply(&v, depth + 1)),
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
        assert_eq!(error_text("-bad thing"), "bad thing");
        assert_eq!(error_text("-nospace"), "ERR nospace");
        assert_eq!(error_text("plain words"), "ERR plain words");
        assert_eq!(error_text("-ERR x\r\n"), "ERR x");
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
}
