//! `cjson`: JSON encoding and decoding with lua-cjson 2.1.0's rules, as Redis
//! ships it (plus Redis's `decode_array_with_array_mt`).
//!
//! Encoding: a table whose keys are all positive integers is an array (up to
//! its largest key, holes as `null`) unless it is "excessively sparse"
//! (`encode_sparse_array`: by default an error past index 10 when under half
//! full); an empty table is `{}`; a table with the `__is_cjson_array`
//! metatable field is always an array. Numbers print with `%.14g`
//! (`encode_number_precision`); NaN and infinities are refused unless
//! `encode_invalid_numbers` allows them; `/` is escaped as `\/`. Decoding:
//! JSON `null` is `cjson.null` (a NULL light userdata); numbers go through
//! `strtod` (so with the default `decode_invalid_numbers` also hex, `inf`,
//! `nan`); a NUL byte ends the text. Each `cjson.new()` module has its own
//! configuration; the errors are lua-cjson's messages.

use std::sync::{Arc, Mutex};

use mlua::{LightUserData, Lua, MultiValue, Table, Value};

use super::{arg_error, c_strtod, check_bytes, error, format_g, lua_type_name, number, Readonly};

#[derive(Clone, Debug)]
struct Config {
    sparse_convert: i64,
    sparse_ratio: i64,
    sparse_safe: i64,
    encode_max_depth: i64,
    decode_max_depth: i64,
    /// 0: refuse, 1: allow (`nan`, `inf`), 2: write `null`.
    encode_invalid_numbers: i64,
    decode_invalid_numbers: i64,
    keep_buffer: i64,
    precision: i64,
    array_mt: i64,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            sparse_convert: 0,
            sparse_ratio: 2,
            sparse_safe: 10,
            encode_max_depth: 1000,
            decode_max_depth: 1000,
            encode_invalid_numbers: 0,
            decode_invalid_numbers: 1,
            keep_buffer: 1,
            precision: 14,
            array_mt: 0,
        }
    }
}

type Shared = Arc<Mutex<Config>>;

fn cfg(c: &Shared) -> std::sync::MutexGuard<'_, Config> {
    c.lock().unwrap_or_else(|p| p.into_inner())
}

/// `json_arg_init`: at most `n` arguments.
fn arg_init(lua: &Lua, args: &MultiValue, n: usize) -> mlua::Result<()> {
    if args.len() > n {
        return Err(arg_error(lua, n as i64 + 1, "found too many arguments"));
    }
    Ok(())
}

fn is_nil(args: &MultiValue, i: usize) -> bool {
    matches!(args.get(i), None | Some(Value::Nil))
}

/// `json_integer_option`: sets the value if given; answers the setting.
fn integer_option(
    lua: &Lua,
    args: &MultiValue,
    i: usize,
    setting: &mut i64,
    min: i64,
    max: i64,
) -> mlua::Result<Value> {
    if !is_nil(args, i) {
        let value = super::check_integer(lua, args, i)? as i32 as i64;
        if !(min..=max).contains(&value) {
            return Err(arg_error(
                lua,
                1,
                &format!("expected integer between {min} and {max}"),
            ));
        }
        *setting = value;
    }
    Ok(Value::Number(*setting as f64))
}

/// `json_enum_option` (booleans allowed, `true` meaning option 1).
fn enum_option(
    lua: &Lua,
    args: &MultiValue,
    i: usize,
    setting: &mut i64,
    options: &[&str],
) -> mlua::Result<Value> {
    match args.get(i) {
        None | Some(Value::Nil) => {}
        Some(Value::Boolean(b)) => *setting = *b as i64,
        Some(v) => {
            let Some(word) = super::to_bytes(v) else {
                return Err(super::type_error(lua, args, i, "string"));
            };
            match options.iter().position(|o| o.as_bytes() == word.as_slice()) {
                Some(p) => *setting = p as i64,
                None => {
                    return Err(arg_error(
                        lua,
                        i as i64 + 1,
                        &format!("invalid option '{}'", String::from_utf8_lossy(&word)),
                    ))
                }
            }
        }
    }
    if *setting == 0 || *setting == 1 {
        Ok(Value::Boolean(*setting == 1))
    } else {
        Ok(Value::String(
            lua.create_string(options[*setting as usize])?,
        ))
    }
}

const ON_OFF: &[&str] = &["off", "on"];

/// The `cjson` table (also what `cjson.new()` returns).
pub fn module(lua: &Lua) -> mlua::Result<Table> {
    let c: Shared = Arc::new(Mutex::new(Config::default()));
    let t = lua.create_table()?;
    let k = c.clone();
    t.set(
        "encode",
        lua.create_function(move |lua, args: MultiValue| {
            if args.len() != 1 {
                return Err(arg_error(lua, 1, "expected 1 argument"));
            }
            let config = cfg(&k).clone();
            let mut out = Vec::new();
            encode_value(lua, &config, &args[0], 0, &mut out)?;
            lua.create_string(&out)
        })?,
    )?;
    let k = c.clone();
    t.set(
        "decode",
        lua.create_function(move |lua, args: MultiValue| {
            if args.len() != 1 {
                return Err(arg_error(lua, 1, "expected 1 argument"));
            }
            let text = check_bytes(lua, &args, 0)?;
            let config = cfg(&k).clone();
            decode(lua, &config, &text)
        })?,
    )?;
    let k = c.clone();
    t.set(
        "decode_array_with_array_mt",
        lua.create_function(move |lua, args: MultiValue| {
            arg_init(lua, &args, 1)?;
            enum_option(lua, &args, 0, &mut cfg(&k).array_mt, ON_OFF)
        })?,
    )?;
    let k = c.clone();
    t.set(
        "encode_sparse_array",
        lua.create_function(move |lua, args: MultiValue| {
            arg_init(lua, &args, 3)?;
            let mut g = cfg(&k);
            let a = enum_option(lua, &args, 0, &mut g.sparse_convert, ON_OFF)?;
            let b = integer_option(lua, &args, 1, &mut g.sparse_ratio, 0, i32::MAX as i64)?;
            let c = integer_option(lua, &args, 2, &mut g.sparse_safe, 0, i32::MAX as i64)?;
            Ok((a, b, c))
        })?,
    )?;
    let k = c.clone();
    t.set(
        "encode_max_depth",
        lua.create_function(move |lua, args: MultiValue| {
            arg_init(lua, &args, 1)?;
            integer_option(
                lua,
                &args,
                0,
                &mut cfg(&k).encode_max_depth,
                1,
                i32::MAX as i64,
            )
        })?,
    )?;
    let k = c.clone();
    t.set(
        "decode_max_depth",
        lua.create_function(move |lua, args: MultiValue| {
            arg_init(lua, &args, 1)?;
            integer_option(
                lua,
                &args,
                0,
                &mut cfg(&k).decode_max_depth,
                1,
                i32::MAX as i64,
            )
        })?,
    )?;
    let k = c.clone();
    t.set(
        "encode_number_precision",
        lua.create_function(move |lua, args: MultiValue| {
            arg_init(lua, &args, 1)?;
            integer_option(lua, &args, 0, &mut cfg(&k).precision, 1, 14)
        })?,
    )?;
    let k = c.clone();
    t.set(
        "encode_keep_buffer",
        lua.create_function(move |lua, args: MultiValue| {
            arg_init(lua, &args, 1)?;
            enum_option(lua, &args, 0, &mut cfg(&k).keep_buffer, ON_OFF)
        })?,
    )?;
    let k = c.clone();
    t.set(
        "encode_invalid_numbers",
        lua.create_function(move |lua, args: MultiValue| {
            arg_init(lua, &args, 1)?;
            enum_option(
                lua,
                &args,
                0,
                &mut cfg(&k).encode_invalid_numbers,
                &["off", "on", "null"],
            )
        })?,
    )?;
    let k = c;
    t.set(
        "decode_invalid_numbers",
        lua.create_function(move |lua, args: MultiValue| {
            arg_init(lua, &args, 1)?;
            enum_option(lua, &args, 0, &mut cfg(&k).decode_invalid_numbers, ON_OFF)
        })?,
    )?;
    t.set("new", lua.create_function(|lua, ()| module(lua))?)?;
    t.set(
        "null",
        Value::LightUserData(LightUserData(std::ptr::null_mut())),
    )?;
    t.set("_NAME", "cjson")?;
    t.set("_VERSION", "2.1.0")?;
    Ok(t)
}

// ----- encoding -----

fn encode_error(lua: &Lua, what: &Value, reason: &str) -> mlua::Error {
    error(
        lua,
        &format!("Cannot serialise {}: {reason}", lua_type_name(what)),
    )
}

fn append_string(out: &mut Vec<u8>, s: &[u8]) {
    out.push(b'"');
    for &b in s {
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'/' => out.extend_from_slice(b"\\/"),
            8 => out.extend_from_slice(b"\\b"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\n' => out.extend_from_slice(b"\\n"),
            12 => out.extend_from_slice(b"\\f"),
            b'\r' => out.extend_from_slice(b"\\r"),
            0..=0x1f | 0x7f => out.extend_from_slice(format!("\\u{b:04x}").as_bytes()),
            _ => out.push(b),
        }
    }
    out.push(b'"');
}

fn append_number(
    lua: &Lua,
    c: &Config,
    what: &Value,
    d: f64,
    out: &mut Vec<u8>,
) -> mlua::Result<()> {
    let invalid = d.is_nan() || d.is_infinite();
    match c.encode_invalid_numbers {
        0 if invalid => return Err(encode_error(lua, what, "must not be NaN or Inf")),
        1 if d.is_nan() => {
            out.extend_from_slice(b"nan");
            return Ok(());
        }
        2 if invalid => {
            out.extend_from_slice(b"null");
            return Ok(());
        }
        _ => {}
    }
    out.extend_from_slice(format_g(d, c.precision as u32).as_bytes());
    Ok(())
}

/// `lua_array_length`: the array's size, or `None` for an object.
fn array_length(lua: &Lua, c: &Config, t: &Table) -> mlua::Result<Option<i64>> {
    let mut max = 0i64;
    let mut items = 0i64;
    for pair in t.pairs::<Value, Value>() {
        let (k, _) = pair?;
        match number(&k) {
            Some(k) if k != 0.0 && k.floor() == k && k >= 1.0 => {
                let k = k as i64 as i32 as i64;
                if k > max {
                    max = k;
                }
                items += 1;
            }
            _ => return Ok(None),
        }
    }
    if c.sparse_ratio > 0 && max > items * c.sparse_ratio && max > c.sparse_safe {
        if c.sparse_convert == 0 {
            return Err(encode_error(
                lua,
                &Value::Table(t.clone()),
                "excessively sparse array",
            ));
        }
        return Ok(None);
    }
    Ok(Some(max))
}

fn encode_value(
    lua: &Lua,
    c: &Config,
    v: &Value,
    depth: i64,
    out: &mut Vec<u8>,
) -> mlua::Result<()> {
    match v {
        Value::String(s) => append_string(out, &s.as_bytes()),
        Value::Integer(_) | Value::Number(_) => {
            append_number(lua, c, v, number(v).unwrap_or(0.0), out)?
        }
        Value::Boolean(true) => out.extend_from_slice(b"true"),
        Value::Boolean(false) => out.extend_from_slice(b"false"),
        Value::Nil => out.extend_from_slice(b"null"),
        Value::LightUserData(p) if p.0.is_null() => out.extend_from_slice(b"null"),
        Value::Table(t) => {
            let depth = depth + 1;
            if depth > c.encode_max_depth.min(super::MAX_NESTING as i64) {
                return Err(error(
                    lua,
                    &format!("Cannot serialise, excessive nesting ({depth})"),
                ));
            }
            let as_array = match t.metatable() {
                Some(mt) => !matches!(
                    mt.get::<Value>("__is_cjson_array")?,
                    Value::Nil | Value::Boolean(false)
                ),
                None => false,
            };
            let len = if as_array {
                Some(t.raw_len() as i64)
            } else {
                array_length(lua, c, t)?.filter(|&n| n > 0)
            };
            match len {
                Some(n) => {
                    out.push(b'[');
                    for i in 1..=n {
                        if i > 1 {
                            out.push(b',');
                        }
                        let item: Value = t.raw_get(i)?;
                        encode_value(lua, c, &item, depth, out)?;
                    }
                    out.push(b']');
                }
                None => {
                    out.push(b'{');
                    let mut first = true;
                    for pair in t.pairs::<Value, Value>() {
                        let (k, item) = pair?;
                        if !first {
                            out.push(b',');
                        }
                        first = false;
                        match &k {
                            Value::Integer(_) | Value::Number(_) => {
                                out.push(b'"');
                                append_number(lua, c, &k, number(&k).unwrap_or(0.0), out)?;
                                out.extend_from_slice(b"\":");
                            }
                            Value::String(s) => {
                                append_string(out, &s.as_bytes());
                                out.push(b':');
                            }
                            other => {
                                return Err(encode_error(
                                    lua,
                                    other,
                                    "table key must be a number or string",
                                ))
                            }
                        }
                        encode_value(lua, c, &item, depth, out)?;
                    }
                    out.push(b'}');
                }
            }
        }
        other => return Err(encode_error(lua, other, "type not supported")),
    }
    Ok(())
}

// ----- decoding -----

#[derive(Debug)]
enum Token {
    ObjBegin,
    ObjEnd,
    ArrBegin,
    ArrEnd,
    Str(Vec<u8>),
    Num(f64),
    Bool(bool),
    Null,
    Colon,
    Comma,
    End,
    Error(&'static str),
}

impl Token {
    fn name(&self) -> &'static str {
        match self {
            Token::ObjBegin => "T_OBJ_BEGIN",
            Token::ObjEnd => "T_OBJ_END",
            Token::ArrBegin => "T_ARR_BEGIN",
            Token::ArrEnd => "T_ARR_END",
            Token::Str(_) => "T_STRING",
            Token::Num(_) => "T_NUMBER",
            Token::Bool(_) => "T_BOOLEAN",
            Token::Null => "T_NULL",
            Token::Colon => "T_COLON",
            Token::Comma => "T_COMMA",
            Token::End => "T_END",
            Token::Error(e) => e,
        }
    }
}

struct Parser<'a> {
    data: &'a [u8],
    pos: usize,
    depth: i64,
    config: &'a Config,
}

impl Parser<'_> {
    fn at(&self, i: usize) -> u8 {
        self.data.get(i).copied().unwrap_or(0)
    }

    /// The next token and where it starts (0-based).
    fn next(&mut self) -> (Token, usize) {
        while matches!(self.at(self.pos), b' ' | b'\t' | b'\n' | b'\r') {
            self.pos += 1;
        }
        let start = self.pos;
        let ch = self.at(self.pos);
        let single = match ch {
            b'{' => Some(Token::ObjBegin),
            b'}' => Some(Token::ObjEnd),
            b'[' => Some(Token::ArrBegin),
            b']' => Some(Token::ArrEnd),
            b',' => Some(Token::Comma),
            b':' => Some(Token::Colon),
            _ => None,
        };
        if let Some(t) = single {
            self.pos += 1;
            return (t, start);
        }
        if ch == 0 {
            return (Token::End, start);
        }
        let rest = &self.data[self.pos..];
        let token = if ch == b'"' {
            self.string()
        } else if ch == b'-' || ch.is_ascii_digit() {
            if self.config.decode_invalid_numbers == 0 && self.invalid_number() {
                Token::Error("invalid number")
            } else {
                self.number()
            }
        } else if rest.starts_with(b"true") {
            self.pos += 4;
            Token::Bool(true)
        } else if rest.starts_with(b"false") {
            self.pos += 5;
            Token::Bool(false)
        } else if rest.starts_with(b"null") {
            self.pos += 4;
            Token::Null
        } else if matches!(ch, b'i' | b'I' | b'n' | b'N' | b'+')
            && self.config.decode_invalid_numbers != 0
            && self.invalid_number()
        {
            self.number()
        } else {
            Token::Error("invalid token")
        };
        let at = if matches!(token, Token::Error(_)) {
            self.pos
        } else {
            start
        };
        (token, at)
    }

    /// `json_is_invalid_number`: a number strict JSON refuses.
    fn invalid_number(&self) -> bool {
        let mut p = self.pos;
        if self.at(p) == b'+' {
            return true;
        }
        if self.at(p) == b'-' {
            p += 1;
        }
        let c = self.at(p);
        if c == b'0' {
            let c2 = self.at(p + 1);
            return (c2 | 0x20) == b'x' || c2.is_ascii_digit();
        }
        if c <= b'9' {
            return false;
        }
        let word: Vec<u8> = (0..3)
            .map(|i| self.at(p + i).to_ascii_lowercase())
            .collect();
        word == b"inf" || word == b"nan"
    }

    fn number(&mut self) -> Token {
        let (value, used) = c_strtod(&self.data[self.pos..]);
        if used == 0 {
            return Token::Error("invalid number");
        }
        self.pos += used;
        Token::Num(value)
    }

    fn string(&mut self) -> Token {
        self.pos += 1;
        let mut out = Vec::new();
        loop {
            let ch = self.at(self.pos);
            if ch == b'"' {
                break;
            }
            if ch == 0 {
                return Token::Error("unexpected end of string");
            }
            if ch == b'\\' {
                let esc = self.at(self.pos + 1);
                let translated = match esc {
                    b'"' => b'"',
                    b'\\' => b'\\',
                    b'/' => b'/',
                    b'b' => 8,
                    b't' => b'\t',
                    b'n' => b'\n',
                    b'f' => 12,
                    b'r' => b'\r',
                    b'u' => {
                        if self.unicode_escape(&mut out) {
                            continue;
                        }
                        return Token::Error("invalid unicode escape code");
                    }
                    _ => return Token::Error("invalid escape code"),
                };
                out.push(translated);
                self.pos += 2;
                continue;
            }
            out.push(ch);
            self.pos += 1;
        }
        self.pos += 1;
        Token::Str(out)
    }

    fn hex4(&self, at: usize) -> Option<u32> {
        let mut v = 0u32;
        for i in 0..4 {
            let d = (self.at(at + i) as char).to_digit(16)?;
            v = (v << 4) | d;
        }
        Some(v)
    }

    /// `\uXXXX` (and a surrogate pair) as UTF-8; false on a bad escape.
    fn unicode_escape(&mut self, out: &mut Vec<u8>) -> bool {
        let Some(mut cp) = self.hex4(self.pos + 2) else {
            return false;
        };
        let mut len = 6;
        if cp & 0xF800 == 0xD800 {
            if cp & 0x400 != 0 {
                return false;
            }
            if self.at(self.pos + 6) != b'\\' || self.at(self.pos + 7) != b'u' {
                return false;
            }
            let Some(low) = self.hex4(self.pos + 8) else {
                return false;
            };
            if low & 0xFC00 != 0xDC00 {
                return false;
            }
            cp = (((cp & 0x3FF) << 10) | (low & 0x3FF)) + 0x10000;
            len = 12;
        }
        match cp {
            0..=0x7F => out.push(cp as u8),
            0x80..=0x7FF => {
                out.extend_from_slice(&[(cp >> 6) as u8 | 0xC0, (cp & 0x3F) as u8 | 0x80])
            }
            0x800..=0xFFFF => out.extend_from_slice(&[
                (cp >> 12) as u8 | 0xE0,
                ((cp >> 6) & 0x3F) as u8 | 0x80,
                (cp & 0x3F) as u8 | 0x80,
            ]),
            _ => out.extend_from_slice(&[
                (cp >> 18) as u8 | 0xF0,
                ((cp >> 12) & 0x3F) as u8 | 0x80,
                ((cp >> 6) & 0x3F) as u8 | 0x80,
                (cp & 0x3F) as u8 | 0x80,
            ]),
        }
        self.pos += len;
        true
    }
}

fn parse_error(lua: &Lua, expected: &str, token: &Token, at: usize) -> mlua::Error {
    error(
        lua,
        &format!(
            "Expected {expected} but found {} at character {}",
            token.name(),
            at + 1
        ),
    )
}

fn descend(lua: &Lua, p: &mut Parser) -> mlua::Result<()> {
    p.depth += 1;
    if p.depth > p.config.decode_max_depth.min(super::MAX_NESTING as i64) {
        return Err(error(
            lua,
            &format!(
                "Found too many nested data structures ({}) at character {}",
                p.depth, p.pos
            ),
        ));
    }
    Ok(())
}

fn value(lua: &Lua, p: &mut Parser, token: (Token, usize)) -> mlua::Result<Value> {
    Ok(match token.0 {
        Token::Str(s) => Value::String(lua.create_string(&s)?),
        Token::Num(n) => Value::Number(n),
        Token::Bool(b) => Value::Boolean(b),
        Token::Null => Value::LightUserData(LightUserData(std::ptr::null_mut())),
        Token::ObjBegin => Value::Table(object(lua, p)?),
        Token::ArrBegin => Value::Table(array(lua, p)?),
        other => return Err(parse_error(lua, "value", &other, token.1)),
    })
}

fn object(lua: &Lua, p: &mut Parser) -> mlua::Result<Table> {
    descend(lua, p)?;
    let t = lua.create_table()?;
    let mut token = p.next();
    if matches!(token.0, Token::ObjEnd) {
        p.depth -= 1;
        return Ok(t);
    }
    loop {
        let Token::Str(key) = token.0 else {
            return Err(parse_error(lua, "object key string", &token.0, token.1));
        };
        let colon = p.next();
        if !matches!(colon.0, Token::Colon) {
            return Err(parse_error(lua, "colon", &colon.0, colon.1));
        }
        let next = p.next();
        let v = value(lua, p, next)?;
        t.raw_set(lua.create_string(&key)?, v)?;
        let after = p.next();
        match after.0 {
            Token::ObjEnd => {
                p.depth -= 1;
                return Ok(t);
            }
            Token::Comma => {}
            other => return Err(parse_error(lua, "comma or object end", &other, after.1)),
        }
        token = p.next();
    }
}

fn array(lua: &Lua, p: &mut Parser) -> mlua::Result<Table> {
    descend(lua, p)?;
    let t = lua.create_table()?;
    if p.config.array_mt != 0 {
        let mt = lua.create_table()?;
        mt.raw_set("__is_cjson_array", true)?;
        let readonly = lua.app_data_ref::<Readonly>().map(|r| r.0.clone());
        let mt = match readonly {
            Some(ro) => ro.call::<Table>(mt)?,
            None => mt,
        };
        t.set_metatable(Some(mt))?;
    }
    let mut token = p.next();
    if matches!(token.0, Token::ArrEnd) {
        p.depth -= 1;
        return Ok(t);
    }
    for i in 1.. {
        let v = value(lua, p, token)?;
        t.raw_set(i, v)?;
        let after = p.next();
        match after.0 {
            Token::ArrEnd => {
                p.depth -= 1;
                return Ok(t);
            }
            Token::Comma => {}
            other => return Err(parse_error(lua, "comma or array end", &other, after.1)),
        }
        token = p.next();
    }
    Ok(t)
}

fn decode(lua: &Lua, config: &Config, text: &[u8]) -> mlua::Result<Value> {
    if text.len() >= 2 && (text[0] == 0 || text[1] == 0) {
        return Err(error(lua, "JSON parser does not support UTF-16 or UTF-32"));
    }
    let mut p = Parser {
        data: text,
        pos: 0,
        depth: 0,
        config,
    };
    let first = p.next();
    let v = value(lua, &mut p, first)?;
    let end = p.next();
    if !matches!(end.0, Token::End) {
        return Err(parse_error(lua, "the end", &end.0, end.1));
    }
    Ok(v)
}
