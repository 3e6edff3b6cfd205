//! `cmsgpack`: MessagePack encoding and decoding with lua-cmsgpack 0.4.0's
//! rules, as Redis ships it.
//!
//! Encoding: a number that is a whole 64-bit value is the smallest integer
//! form, else a float when it survives the trip through 32 bits, else a
//! double; a string is a raw of the smallest header; a table whose keys are
//! exactly 1..n is an array, any other table a map; tables nested 16 deep are
//! written as nil (so a table containing itself encodes a bounded copy);
//! other types are nil. Decoding creates tables as it goes (holes where an
//! array holds nil); `unpack` decodes every value, `unpack_one` one and
//! `unpack_limit` up to a count, those two answering the offset of the next
//! value first (-1 at the end). Errors are the library's messages.

use mlua::{Lua, MultiValue, Table, Value};

use super::{arg_error, check_bytes, check_integer, error, number, opt_integer};

const MAX_NESTING: usize = 16;

fn header(out: &mut Vec<u8>, small: u8, len: usize, codes: [u8; 3], fix_max: usize) {
    if len <= fix_max {
        out.push(small | len as u8);
    } else if codes[0] != 0 && len <= 0xff {
        out.push(codes[0]);
        out.push(len as u8);
    } else if len <= 0xffff {
        out.push(codes[1]);
        out.extend_from_slice(&(len as u16).to_be_bytes());
    } else {
        out.push(codes[2]);
        out.extend_from_slice(&(len as u32).to_be_bytes());
    }
}

fn encode_int(out: &mut Vec<u8>, n: i64) {
    if n >= 0 {
        if n <= 127 {
            out.push(n as u8);
        } else if n <= 0xff {
            out.extend_from_slice(&[0xcc, n as u8]);
        } else if n <= 0xffff {
            out.push(0xcd);
            out.extend_from_slice(&(n as u16).to_be_bytes());
        } else if n <= 0xffff_ffff {
            out.push(0xce);
            out.extend_from_slice(&(n as u32).to_be_bytes());
        } else {
            out.push(0xcf);
            out.extend_from_slice(&(n as u64).to_be_bytes());
        }
    } else if n >= -32 {
        out.push(n as i8 as u8);
    } else if n >= -128 {
        out.extend_from_slice(&[0xd0, n as i8 as u8]);
    } else if n >= -32768 {
        out.push(0xd1);
        out.extend_from_slice(&(n as i16).to_be_bytes());
    } else if n >= -2_147_483_648 {
        out.push(0xd2);
        out.extend_from_slice(&(n as i32).to_be_bytes());
    } else {
        out.push(0xd3);
        out.extend_from_slice(&n.to_be_bytes());
    }
}

fn encode_number(out: &mut Vec<u8>, d: f64) {
    let as_int = super::super::convert::c_cast_i64(d);
    if !d.is_infinite() && as_int as f64 == d {
        encode_int(out, as_int);
    } else if (d as f32) as f64 == d {
        out.push(0xca);
        out.extend_from_slice(&(d as f32).to_be_bytes());
    } else {
        out.push(0xcb);
        out.extend_from_slice(&d.to_be_bytes());
    }
}

/// `table_is_an_array`: keys exactly 1..n.
fn is_array(t: &Table) -> mlua::Result<bool> {
    let (mut count, mut max) = (0i64, 0i64);
    for pair in t.pairs::<Value, Value>() {
        let (k, _) = pair?;
        let n = match number(&k) {
            Some(n) if n > 0.0 && (n as i32) as f64 == n => n as i64,
            _ => return Ok(false),
        };
        max = max.max(n);
        count += 1;
    }
    Ok(max == count)
}

fn encode(v: &Value, level: usize, out: &mut Vec<u8>) -> mlua::Result<()> {
    match v {
        Value::String(s) => {
            let b = s.as_bytes();
            header(out, 0xa0, b.len(), [0xd9, 0xda, 0xdb], 31);
            out.extend_from_slice(&b);
        }
        Value::Boolean(b) => out.push(if *b { 0xc3 } else { 0xc2 }),
        Value::Integer(_) | Value::Number(_) => encode_number(out, number(v).unwrap_or(0.0)),
        Value::Table(t) if level < MAX_NESTING => {
            if is_array(t)? {
                let len = t.raw_len();
                header(out, 0x90, len, [0, 0xdc, 0xdd], 15);
                for i in 1..=len {
                    let item: Value = t.get(i)?;
                    encode(&item, level + 1, out)?;
                }
            } else {
                // Count first, then encode (holding every pair at once would
                // exhaust mlua's reference slots on a big table).
                let mut count = 0;
                for pair in t.pairs::<Value, Value>() {
                    pair?;
                    count += 1;
                }
                header(out, 0x80, count, [0, 0xde, 0xdf], 15);
                for pair in t.pairs::<Value, Value>() {
                    let (k, item) = pair?;
                    encode(&k, level + 1, out)?;
                    encode(&item, level + 1, out)?;
                }
            }
        }
        _ => out.push(0xc0),
    }
    Ok(())
}

fn pack(lua: &Lua, args: MultiValue) -> mlua::Result<mlua::LuaString> {
    if args.is_empty() {
        return Err(arg_error(lua, 0, "MessagePack pack needs input."));
    }
    let mut out = Vec::new();
    for v in args.iter() {
        encode(v, 0, &mut out)?;
    }
    lua.create_string(&out)
}

// ----- decoding -----

enum Fail {
    /// Not enough bytes (`MP_CUR_ERROR_EOF`).
    Eof,
    /// Nested past [`super::MAX_NESTING`]: the stack error Redis's version
    /// raises (deeper) for an array or a map.
    TooDeep(&'static str),
    /// A type byte the library does not know (`MP_CUR_ERROR_BADFMT`).
    BadFormat,
    Lua(mlua::Error),
}

impl From<mlua::Error> for Fail {
    fn from(e: mlua::Error) -> Fail {
        Fail::Lua(e)
    }
}

struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
    depth: usize,
}

impl<'a> Cursor<'a> {
    fn left(&self) -> usize {
        self.data.len() - self.pos
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], Fail> {
        if self.left() < n {
            return Err(Fail::Eof);
        }
        let s = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn be(&mut self, n: usize) -> Result<u64, Fail> {
        Ok(self
            .take(n)?
            .iter()
            .fold(0u64, |acc, &b| (acc << 8) | b as u64))
    }
}

fn decode(lua: &Lua, c: &mut Cursor) -> Result<Value, Fail> {
    if c.left() < 1 {
        return Err(Fail::Eof);
    }
    let code = c.data[c.pos];
    let int = |n: i64| Value::Number(n as f64);
    let v = match code {
        0xcc..=0xcf => {
            let width = 1 << (code - 0xcc);
            if c.left() < 1 + width {
                return Err(Fail::Eof);
            }
            c.pos += 1;
            int(c.be(width)? as i64)
        }
        0xd0..=0xd3 => {
            let width = 1usize << (code - 0xd0);
            if c.left() < 1 + width {
                return Err(Fail::Eof);
            }
            c.pos += 1;
            let raw = c.be(width)?;
            let shift = 64 - 8 * width as u32;
            int(((raw << shift) as i64) >> shift)
        }
        0xc0 => {
            c.pos += 1;
            Value::Nil
        }
        0xc2 | 0xc3 => {
            c.pos += 1;
            Value::Boolean(code == 0xc3)
        }
        0xca => {
            if c.left() < 5 {
                return Err(Fail::Eof);
            }
            c.pos += 1;
            Value::Number(f32::from_bits(c.be(4)? as u32) as f64)
        }
        0xcb => {
            if c.left() < 9 {
                return Err(Fail::Eof);
            }
            c.pos += 1;
            Value::Number(f64::from_bits(c.be(8)?))
        }
        0xd9..=0xdb => {
            let width = 1usize << (code - 0xd9);
            if c.left() < 1 + width {
                return Err(Fail::Eof);
            }
            let len = {
                let b = &c.data[c.pos + 1..c.pos + 1 + width];
                b.iter().fold(0usize, |acc, &x| (acc << 8) | x as usize)
            };
            if code != 0xdb && c.left() < 1 + width + len {
                return Err(Fail::Eof);
            }
            c.pos += 1 + width;
            Value::String(lua.create_string(c.take(len)?)?)
        }
        0xdc..=0xdf => {
            let width = if code == 0xdc || code == 0xde { 2 } else { 4 };
            if c.left() < 1 + width {
                return Err(Fail::Eof);
            }
            c.pos += 1;
            let len = c.be(width)? as usize;
            if code <= 0xdd {
                array(lua, c, len)?
            } else {
                map(lua, c, len)?
            }
        }
        _ if code & 0x80 == 0 => {
            c.pos += 1;
            int(code as i64)
        }
        _ if code & 0xe0 == 0xe0 => {
            c.pos += 1;
            int(code as i8 as i64)
        }
        _ if code & 0xe0 == 0xa0 => {
            let len = (code & 0x1f) as usize;
            if c.left() < 1 + len {
                return Err(Fail::Eof);
            }
            c.pos += 1;
            Value::String(lua.create_string(c.take(len)?)?)
        }
        _ if code & 0xf0 == 0x90 => {
            c.pos += 1;
            array(lua, c, (code & 0xf) as usize)?
        }
        _ if code & 0xf0 == 0x80 => {
            c.pos += 1;
            map(lua, c, (code & 0xf) as usize)?
        }
        _ => return Err(Fail::BadFormat),
    };
    Ok(v)
}

fn array(lua: &Lua, c: &mut Cursor, len: usize) -> Result<Value, Fail> {
    c.depth += 1;
    if c.depth > super::MAX_NESTING {
        return Err(Fail::TooDeep("in function mp_decode_to_lua_array"));
    }
    let t = lua.create_table()?;
    for i in 1..=len {
        let v = decode(lua, c)?;
        t.raw_set(i, v)?;
    }
    c.depth -= 1;
    Ok(Value::Table(t))
}

fn map(lua: &Lua, c: &mut Cursor, len: usize) -> Result<Value, Fail> {
    c.depth += 1;
    if c.depth > super::MAX_NESTING {
        return Err(Fail::TooDeep(
            "too many return values at once; use unpack_one or unpack_limit instead.",
        ));
    }
    let t = lua.create_table()?;
    for _ in 0..len {
        let k = decode(lua, c)?;
        let v = decode(lua, c)?;
        match &k {
            Value::Nil => {
                return Err(Fail::Lua(super::super::vm::raise_plain(
                    "table index is nil",
                )))
            }
            Value::Number(n) if n.is_nan() => {
                return Err(Fail::Lua(super::super::vm::raise_plain(
                    "table index is NaN",
                )))
            }
            _ => {}
        }
        t.raw_set(k, v)?;
    }
    c.depth -= 1;
    Ok(Value::Table(t))
}

/// `mp_unpack_full`: `limit == 0 && offset == 0` decodes everything and
/// answers the values only.
fn unpack(lua: &Lua, data: &[u8], limit: i64, offset: i64) -> mlua::Result<MultiValue> {
    if offset < 0 || limit < 0 {
        return Err(error(
            lua,
            &format!(
                "Invalid request to unpack with offset of {} and limit of {}.",
                offset as i32,
                data.len() as i32
            ),
        ));
    }
    if offset as u64 > data.len() as u64 {
        return Err(error(
            lua,
            &format!(
                "Start offset {} greater than input length {}.",
                offset as i32,
                data.len() as i32
            ),
        ));
    }
    let all = limit == 0 && offset == 0;
    let limit = if all { i32::MAX as i64 } else { limit };
    let mut c = Cursor {
        data,
        pos: offset as usize,
        depth: 0,
    };
    let mut values = Vec::new();
    while c.left() > 0 && (values.len() as i64) < limit {
        // Lua's C stack holds at most 8000 values (the argument included).
        if values.len() + 2 > 8000 {
            return Err(error(
                lua,
                "stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)",
            ));
        }
        match decode(lua, &mut c) {
            Ok(v) => values.push(v),
            Err(Fail::Eof) => return Err(error(lua, "Missing bytes in input.")),
            Err(Fail::BadFormat) => return Err(error(lua, "Bad data format in input.")),
            Err(Fail::TooDeep(what)) => {
                return Err(error(lua, &format!("stack overflow ({what})")))
            }
            Err(Fail::Lua(e)) => return Err(e),
        }
    }
    if !all {
        let next = if c.left() == 0 { -1 } else { c.pos as i64 };
        values.insert(0, Value::Number(next as f64));
    }
    Ok(MultiValue::from_iter(values))
}

/// The `cmsgpack` table.
pub fn module(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.set("pack", lua.create_function(pack)?)?;
    t.set(
        "unpack",
        lua.create_function(|lua, args: MultiValue| {
            let data = check_bytes(lua, &args, 0)?;
            unpack(lua, &data, 0, 0)
        })?,
    )?;
    t.set(
        "unpack_one",
        lua.create_function(|lua, args: MultiValue| {
            let offset = opt_integer(lua, &args, 1, 0)?;
            let data = check_bytes(lua, &args, 0)?;
            unpack(lua, &data, 1, offset)
        })?,
    )?;
    t.set(
        "unpack_limit",
        lua.create_function(|lua, args: MultiValue| {
            let limit = check_integer(lua, &args, 1)?;
            let offset = opt_integer(lua, &args, 2, 0)?;
            let data = check_bytes(lua, &args, 0)?;
            unpack(lua, &data, limit, offset)
        })?,
    )?;
    t.set("_NAME", "cmsgpack")?;
    t.set("_VERSION", "lua-cmsgpack 0.4.0")?;
    t.set("_COPYRIGHT", "Copyright (C) 2012, Salvatore Sanfilippo")?;
    t.set("_DESCRIPTION", "MessagePack C implementation for Lua")?;
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    #[test]
    fn numbers_take_their_smallest_form() {
        let mut out = Vec::new();
        encode_number(&mut out, 0.1);
        assert_eq!(hex(&out), "cb3fb999999999999a");
        out.clear();
        encode_number(&mut out, -1099511627776.0);
        assert_eq!(hex(&out), "d3ffffff0000000000");
        out.clear();
        encode_number(&mut out, 1.5);
        assert_eq!(hex(&out), "ca3fc00000");
        out.clear();
        for n in [0.0, 127.0, 128.0, -32.0, -33.0, 65536.0] {
            encode_number(&mut out, n);
        }
        assert_eq!(hex(&out), "007fcc80e0d0dfce00010000");
    }
}
