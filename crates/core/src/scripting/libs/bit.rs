//! `bit`: 32-bit bitwise operations on Lua numbers (Lua BitOp's API).
//!
//! A number becomes 32 bits the way BitOp does it: add 2^52 + 2^51 and keep the
//! low word of the double, so any number (negative, fractional, beyond 32
//! bits) wraps as BitOp wraps it; results are signed 32-bit numbers. A value
//! that is not a number raises `bad argument #n to 'f' (number expected, got
//! <type>)`.

use mlua::{Lua, MultiValue, Table};

use super::{arg_error, to_number, type_name};

/// BitOp's `barg`: argument `i` (0-based) as 32 bits.
fn barg(lua: &Lua, args: &MultiValue, i: usize) -> mlua::Result<u32> {
    let n = args.get(i).and_then(|v| to_number(lua, v));
    let b = (n.unwrap_or(0.0) + 6_755_399_441_055_744.0).to_bits() as u32;
    if b == 0 && n.is_none() {
        return Err(arg_error(
            lua,
            i as i64 + 1,
            &format!("number expected, got {}", type_name(args, i)),
        ));
    }
    Ok(b)
}

fn ret(b: u32) -> f64 {
    b as i32 as f64
}

fn fold(lua: &Lua, args: &MultiValue, op: fn(u32, u32) -> u32) -> mlua::Result<f64> {
    let mut b = barg(lua, args, 0)?;
    for i in (1..args.len()).rev() {
        b = op(b, barg(lua, args, i)?);
    }
    Ok(ret(b))
}

fn shift(lua: &Lua, args: &MultiValue, op: fn(u32, u32) -> u32) -> mlua::Result<f64> {
    let b = barg(lua, args, 0)?;
    let n = barg(lua, args, 1)? & 31;
    Ok(ret(op(b, n)))
}

fn tohex(lua: &Lua, args: &MultiValue) -> mlua::Result<String> {
    let mut b = barg(lua, args, 0)?;
    let mut n: i32 = if args.len() < 2 {
        8
    } else {
        barg(lua, args, 1)? as i32
    };
    let mut digits = b"0123456789abcdef";
    if n == i32::MIN {
        n = i32::MIN + 1;
    }
    if n < 0 {
        n = -n;
        digits = b"0123456789ABCDEF";
    }
    let n = n.min(8) as usize;
    let mut buf = vec![0u8; n];
    for slot in buf.iter_mut().rev() {
        *slot = digits[(b & 15) as usize];
        b >>= 4;
    }
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

/// The `bit` table.
pub fn module(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.set(
        "tobit",
        lua.create_function(|lua, a: MultiValue| Ok(ret(barg(lua, &a, 0)?)))?,
    )?;
    t.set(
        "bnot",
        lua.create_function(|lua, a: MultiValue| Ok(ret(!barg(lua, &a, 0)?)))?,
    )?;
    t.set(
        "band",
        lua.create_function(|lua, a: MultiValue| fold(lua, &a, |x, y| x & y))?,
    )?;
    t.set(
        "bor",
        lua.create_function(|lua, a: MultiValue| fold(lua, &a, |x, y| x | y))?,
    )?;
    t.set(
        "bxor",
        lua.create_function(|lua, a: MultiValue| fold(lua, &a, |x, y| x ^ y))?,
    )?;
    t.set(
        "lshift",
        lua.create_function(|lua, a: MultiValue| shift(lua, &a, |b, n| b << n))?,
    )?;
    t.set(
        "rshift",
        lua.create_function(|lua, a: MultiValue| shift(lua, &a, |b, n| b >> n))?,
    )?;
    t.set(
        "arshift",
        lua.create_function(|lua, a: MultiValue| shift(lua, &a, |b, n| ((b as i32) >> n) as u32))?,
    )?;
    t.set(
        "rol",
        lua.create_function(|lua, a: MultiValue| shift(lua, &a, |b, n| b.rotate_left(n)))?,
    )?;
    t.set(
        "ror",
        lua.create_function(|lua, a: MultiValue| shift(lua, &a, |b, n| b.rotate_right(n)))?,
    )?;
    t.set(
        "bswap",
        lua.create_function(|lua, a: MultiValue| Ok(ret(barg(lua, &a, 0)?.swap_bytes())))?,
    )?;
    t.set(
        "tohex",
        lua.create_function(|lua, a: MultiValue| tohex(lua, &a))?,
    )?;
    Ok(t)
}
