//! The C libraries Redis links into its Lua: `cjson` (lua-cjson 2.1.0),
//! `cmsgpack` (lua-cmsgpack 0.4.0), `struct` (Roberto Ierusalimschy's struct
//! library) and `bit` (Lua BitOp 1.0.2), written here in Rust from their
//! documented behaviour and Redis's tests: the same encodings, the same
//! configuration functions, the same error messages (with `luaL_error`'s
//! position prefix and `luaL_argerror`'s `bad argument #n to 'name'` form).
//!
//! Each library is a plain table of Rust functions; the prelude wraps it in a
//! read-only view, as Redis protects every table reachable from the globals.
//! Number formatting and parsing use the C library (`%.14g`, `strtod`) as the
//! originals do.

use mlua::{Function, Lua, MultiValue, Table, Value};

use super::vm::raise_plain;

pub mod base;
pub mod bit;
pub mod cjson;
pub mod cmsgpack;
pub mod lstruct;

/// How deep the libraries' encoders and decoders recurse at most. Redis's C
/// libraries are bounded by Lua's 8000-slot C stack (cjson nests 7998 arrays
/// or 4000 objects when its max depth is raised that far; cmsgpack decodes
/// 4000 levels); the Rust recursion here stops at 1000 levels, cjson's default
/// maximum, so that a hostile document cannot exhaust a 2 MB thread stack. The
/// errors are the libraries' own, at a shallower depth.
pub const MAX_NESTING: usize = 1000;

/// The prelude's `readonly` function (kept as app data so `cjson.decode` can
/// give arrays a read-only metatable).
pub struct Readonly(pub Function);

/// Puts the library tables in the prelude's primitives.
pub fn install(lua: &Lua, prim: &Table) -> mlua::Result<()> {
    prim.set("cjson", cjson::module(lua)?)?;
    prim.set("cmsgpack", cmsgpack::module(lua)?)?;
    prim.set("struct", lstruct::module(lua)?)?;
    prim.set("bit", bit::module(lua)?)?;
    // SAFETY: `base::unpack` follows the lua_CFunction contract.
    prim.set("unpack", unsafe { lua.create_c_function(base::unpack)? })?;
    Ok(())
}

extern "C" {
    fn snprintf(
        buf: *mut std::os::raw::c_char,
        n: usize,
        fmt: *const std::os::raw::c_char,
        ...
    ) -> std::os::raw::c_int;
    fn strtod(s: *const std::os::raw::c_char, end: *mut *mut std::os::raw::c_char) -> f64;
}

/// C's `%.<precision>g` (Lua's number format is `%.14g`).
pub fn format_g(d: f64, precision: u32) -> String {
    let fmt = format!("%.{}g\0", precision.clamp(1, 17));
    let mut buf = [0u8; 64];
    // SAFETY: the buffer's size is passed; the format takes one double.
    let n = unsafe {
        snprintf(
            buf.as_mut_ptr() as *mut _,
            buf.len(),
            fmt.as_ptr() as *const _,
            d,
        )
    };
    let n = (n.max(0) as usize).min(buf.len() - 1);
    String::from_utf8_lossy(&buf[..n]).into_owned()
}

/// C's `strtod` on the start of `bytes`: the value and how many bytes it used
/// (0 when there is no number there). Accepts what glibc accepts (hex, `inf`,
/// `nan`, a leading `+`).
pub fn c_strtod(bytes: &[u8]) -> (f64, usize) {
    // strtod reads a C string; copy only as far as a number can reach (the
    // characters lua-cjson's fpconv counts: digits, `+-.`, letters a-y).
    let end = bytes
        .iter()
        .position(|&b| {
            let lower = b | 0x20;
            !(b.is_ascii_digit() || b"+-.".contains(&b) || (b'a'..=b'y').contains(&lower))
        })
        .unwrap_or(bytes.len());
    let mut owned = bytes[..end].to_vec();
    owned.push(0);
    let mut stop: *mut std::os::raw::c_char = std::ptr::null_mut();
    // SAFETY: `owned` is NUL-terminated and outlives the call.
    let value = unsafe { strtod(owned.as_ptr() as *const _, &mut stop) };
    let used = (stop as usize).saturating_sub(owned.as_ptr() as usize);
    (value, used.min(end))
}

/// A Lua number (integer or not) as a double.
pub fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Integer(n) => Some(*n as f64),
        Value::Number(d) => Some(*d),
        _ => None,
    }
}

/// `lua_tonumber`: a number, or a string that reads as one.
pub fn to_number(lua: &Lua, v: &Value) -> Option<f64> {
    match v {
        Value::Integer(_) | Value::Number(_) => number(v),
        Value::String(_) => lua.coerce_number(v.clone()).ok().flatten(),
        _ => None,
    }
}

/// `lua_tolstring` for `luaL_checklstring`: strings, and numbers as Lua
/// prints them.
pub fn to_bytes(v: &Value) -> Option<Vec<u8>> {
    match v {
        Value::String(s) => Some(s.as_bytes().to_vec()),
        Value::Integer(_) | Value::Number(_) => number(v).map(|d| format_g(d, 14).into_bytes()),
        _ => None,
    }
}

/// `luaL_typename`: the type of argument `i` (0-based), `no value` past the end.
pub fn type_name(args: &MultiValue, i: usize) -> &'static str {
    match args.get(i) {
        None => "no value",
        Some(v) => lua_type_name(v),
    }
}

/// `lua_typename` of a value as Lua 5.1 names it.
pub fn lua_type_name(v: &Value) -> &'static str {
    match v {
        Value::Nil => "nil",
        Value::Boolean(_) => "boolean",
        Value::LightUserData(_) => "userdata",
        Value::Integer(_) | Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Table(_) => "table",
        Value::Function(_) => "function",
        Value::Thread(_) => "thread",
        _ => "userdata",
    }
}

/// `luaL_where(L, 1)`: `chunk:line: ` of the Lua code that called the running
/// Rust function, or nothing when a C function called it.
pub fn where_(lua: &Lua) -> String {
    lua.inspect_stack(1, |d| {
        let line = d.current_line();
        let src = d.source().short_src.map(|s| s.into_owned());
        match (src, line) {
            (Some(src), Some(line)) if line > 0 => format!("{src}:{line}: "),
            _ => String::new(),
        }
    })
    .unwrap_or_default()
}

/// `luaL_error`: a plain message with the caller's position.
pub fn error(lua: &Lua, msg: &str) -> mlua::Error {
    raise_plain(&format!("{}{msg}", where_(lua)))
}

/// `luaL_argerror`: `bad argument #n to 'name' (msg)` (`n` 1-based).
pub fn arg_error(lua: &Lua, narg: i64, msg: &str) -> mlua::Error {
    let (name, method) = lua
        .inspect_stack(0, |d| {
            let names = d.names();
            (
                names.name.map(|n| n.into_owned()),
                names.name_what == Some("method"),
            )
        })
        .unwrap_or((None, false));
    let mut narg = narg;
    if method {
        narg -= 1;
        if narg == 0 {
            return error(
                lua,
                &format!(
                    "calling '{}' on bad self ({msg})",
                    name.as_deref().unwrap_or("?")
                ),
            );
        }
    }
    error(
        lua,
        &format!(
            "bad argument #{narg} to '{}' ({msg})",
            name.as_deref().unwrap_or("?")
        ),
    )
}

/// `luaL_typerror`: `<expected> expected, got <type>`.
pub fn type_error(lua: &Lua, args: &MultiValue, i: usize, expected: &str) -> mlua::Error {
    arg_error(
        lua,
        i as i64 + 1,
        &format!("{expected} expected, got {}", type_name(args, i)),
    )
}

/// `luaL_checknumber` for argument `i` (0-based).
pub fn check_number(lua: &Lua, args: &MultiValue, i: usize) -> mlua::Result<f64> {
    match args.get(i).and_then(|v| to_number(lua, v)) {
        Some(n) => Ok(n),
        None => Err(type_error(lua, args, i, "number")),
    }
}

/// `luaL_checkinteger` (`lua_Integer` is `ptrdiff_t`: C's cast of the double).
pub fn check_integer(lua: &Lua, args: &MultiValue, i: usize) -> mlua::Result<i64> {
    check_number(lua, args, i).map(super::convert::c_cast_i64)
}

/// `luaL_optinteger`: absent or nil gives `default`.
pub fn opt_integer(lua: &Lua, args: &MultiValue, i: usize, default: i64) -> mlua::Result<i64> {
    match args.get(i) {
        None | Some(Value::Nil) => Ok(default),
        Some(_) => check_integer(lua, args, i),
    }
}

/// `luaL_checklstring` for argument `i` (0-based).
pub fn check_bytes(lua: &Lua, args: &MultiValue, i: usize) -> mlua::Result<Vec<u8>> {
    match args.get(i).and_then(to_bytes) {
        Some(b) => Ok(b),
        None => Err(type_error(lua, args, i, "string")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_number_formatting_and_parsing() {
        assert_eq!(format_g(0.1, 14), "0.1");
        assert_eq!(format_g(1e20, 14), "1e+20");
        assert_eq!(format_g(-0.0, 14), "-0");
        assert_eq!(format_g(1023.2, 14), "1023.2");
        assert_eq!(format_g(f64::INFINITY, 14), "inf");
        assert_eq!(c_strtod(b"-5e3]"), (-5000.0, 4));
        assert_eq!(c_strtod(b"0x10,"), (16.0, 4));
        assert_eq!(c_strtod(b"x"), (0.0, 0));
        assert_eq!(c_strtod(b"1.5\0 9"), (1.5, 3));
    }
}
