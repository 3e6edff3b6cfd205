//! `struct`: packing numbers and strings into binary strings and back
//! (`struct.pack(fmt, ...)`, `struct.unpack(fmt, data [, pos])`,
//! `struct.size(fmt)`), with the format language of the library Redis ships:
//! `<` `>` endianness (little by default, as on x86-64), `!n` alignment, `b B h
//! H l L T i[n] I[n]` integers (long and size_t are 8 bytes, int 4), `f d`
//! floats, `x` padding, `c[n]` fixed strings, `s` zero-terminated strings.

use mlua::{Lua, MultiValue, Table, Value};

use super::{arg_error, check_bytes, error, opt_integer, to_bytes, to_number};

/// `b_pack` pushes a nil after its arguments (a mark before its buffer): the
/// first missing argument reads as nil, the next ones as no value.
fn pack_arg(args: &MultiValue, i: usize) -> (Option<&Value>, &'static str) {
    match args.get(i) {
        Some(v) => (Some(v), super::lua_type_name(v)),
        None if i == args.len() => (None, "nil"),
        None => (None, "no value"),
    }
}

fn pack_number(lua: &Lua, args: &MultiValue, i: usize) -> mlua::Result<f64> {
    let (v, got) = pack_arg(args, i);
    match v.and_then(|v| to_number(lua, v)) {
        Some(n) => Ok(n),
        None => Err(arg_error(
            lua,
            i as i64 + 1,
            &format!("number expected, got {got}"),
        )),
    }
}

fn pack_bytes(lua: &Lua, args: &MultiValue, i: usize) -> mlua::Result<Vec<u8>> {
    let (v, got) = pack_arg(args, i);
    match v.and_then(to_bytes) {
        Some(b) => Ok(b),
        None => Err(arg_error(
            lua,
            i as i64 + 1,
            &format!("string expected, got {got}"),
        )),
    }
}

const MAXINTSIZE: usize = 32;
/// The alignment of a double on x86-64 (`MAXALIGN`).
const MAXALIGN: usize = 8;

struct Header {
    little: bool,
    align: usize,
}

struct Format<'a> {
    fmt: &'a [u8],
    at: usize,
}

impl Format<'_> {
    fn next(&mut self) -> Option<u8> {
        let c = *self.fmt.get(self.at)?;
        self.at += 1;
        Some(c)
    }

    /// `getnum`: digits at the current position, or `default`.
    fn num(&mut self, lua: &Lua, default: usize) -> mlua::Result<usize> {
        if !self.fmt.get(self.at).is_some_and(|c| c.is_ascii_digit()) {
            return Ok(default);
        }
        let mut a: i64 = 0;
        while let Some(&c) = self.fmt.get(self.at).filter(|c| c.is_ascii_digit()) {
            let d = (c - b'0') as i64;
            if a > i32::MAX as i64 / 10 || a * 10 > i32::MAX as i64 - d {
                return Err(error(lua, "integral size overflow"));
            }
            a = a * 10 + d;
            self.at += 1;
        }
        Ok(a as usize)
    }

    /// `optsize`: the size of option `opt` (0 for those that take no room).
    fn size(&mut self, lua: &Lua, opt: u8) -> mlua::Result<usize> {
        Ok(match opt {
            b'B' | b'b' => 1,
            b'H' | b'h' => 2,
            b'L' | b'l' | b'T' => 8,
            b'f' => 4,
            b'd' => 8,
            b'x' => 1,
            b'c' => self.num(lua, 1)?,
            b'i' | b'I' => {
                let sz = self.num(lua, 4)?;
                if sz > MAXINTSIZE {
                    return Err(error(
                        lua,
                        &format!("integral size {sz} is larger than limit of {MAXINTSIZE}"),
                    ));
                }
                sz
            }
            _ => 0,
        })
    }
}

fn to_align(len: usize, h: &Header, opt: u8, size: usize) -> usize {
    if size == 0 || opt == b'c' {
        return 0;
    }
    let size = size.min(h.align);
    (size.wrapping_sub(len & size.wrapping_sub(1))) & size.wrapping_sub(1)
}

/// `controloptions`: endianness, alignment, spaces; anything else is refused.
fn control(lua: &Lua, f: &mut Format, opt: u8, h: &mut Header) -> mlua::Result<()> {
    match opt {
        b' ' => {}
        b'>' => h.little = false,
        b'<' => h.little = true,
        b'!' => {
            let a = f.num(lua, MAXALIGN)?;
            if a == 0 || a & (a - 1) != 0 {
                return Err(error(lua, &format!("alignment {a} is not a power of 2")));
            }
            h.align = a;
        }
        other => {
            return Err(arg_error(
                lua,
                1,
                &format!("invalid format option '{}'", other as char),
            ))
        }
    }
    Ok(())
}

fn is_int(opt: u8) -> bool {
    b"bBhHlLTiI".contains(&opt)
}

fn pack(lua: &Lua, args: MultiValue) -> mlua::Result<mlua::LuaString> {
    let fmt = check_bytes(lua, &args, 0)?;
    let mut f = Format { fmt: &fmt, at: 0 };
    let mut h = Header {
        little: true,
        align: 1,
    };
    let mut arg = 1usize;
    let mut out: Vec<u8> = Vec::new();
    while let Some(opt) = f.next() {
        let mut size = f.size(lua, opt)?;
        let pad = to_align(out.len(), &h, opt, size);
        out.resize(out.len() + pad, 0);
        match opt {
            _ if is_int(opt) => {
                let n = pack_number(lua, &args, arg)?;
                arg += 1;
                let mut value = if n < 0.0 {
                    super::super::convert::c_cast_i64(n) as u64
                } else {
                    n as u64
                };
                let mut bytes = vec![0u8; size];
                for i in 0..size {
                    let slot = if h.little { i } else { size - 1 - i };
                    bytes[slot] = (value & 0xff) as u8;
                    value >>= 8;
                }
                out.extend_from_slice(&bytes);
            }
            b'x' => out.push(0),
            b'f' => {
                let v = pack_number(lua, &args, arg)? as f32;
                arg += 1;
                out.extend_from_slice(&if h.little {
                    v.to_le_bytes()
                } else {
                    v.to_be_bytes()
                });
            }
            b'd' => {
                let v = pack_number(lua, &args, arg)?;
                arg += 1;
                out.extend_from_slice(&if h.little {
                    v.to_le_bytes()
                } else {
                    v.to_be_bytes()
                });
            }
            b'c' | b's' => {
                let s = pack_bytes(lua, &args, arg)?;
                arg += 1;
                if size == 0 {
                    size = s.len();
                }
                if s.len() < size {
                    return Err(arg_error(lua, arg as i64 + 1, "string too short"));
                }
                out.extend_from_slice(&s[..size]);
                if opt == b's' {
                    out.push(0);
                }
            }
            _ => control(lua, &mut f, opt, &mut h)?,
        }
    }
    lua.create_string(&out)
}

fn get_integer(bytes: &[u8], little: bool, signed: bool) -> f64 {
    let size = bytes.len();
    let mut l: u64 = 0;
    for i in 0..size {
        let b = if little {
            bytes[size - 1 - i]
        } else {
            bytes[i]
        };
        l = (l << 8) | b as u64;
    }
    if !signed {
        return l as f64;
    }
    let mask = u64::MAX.wrapping_shl((size as u32 * 8).wrapping_sub(1));
    if l & mask != 0 {
        l |= mask;
    }
    l as i64 as f64
}

fn unpack(lua: &Lua, args: MultiValue) -> mlua::Result<MultiValue> {
    let fmt = check_bytes(lua, &args, 0)?;
    let data = check_bytes(lua, &args, 1)?;
    let pos = opt_integer(lua, &args, 2, 1)? as u64 as usize;
    if pos == 0 {
        return Err(arg_error(lua, 3, "offset must be 1 or greater"));
    }
    let mut pos = pos - 1;
    let ld = data.len();
    let mut f = Format { fmt: &fmt, at: 0 };
    let mut h = Header {
        little: true,
        align: 1,
    };
    let mut out: Vec<Value> = Vec::new();
    while let Some(opt) = f.next() {
        let mut size = f.size(lua, opt)?;
        pos = pos.wrapping_add(to_align(pos, &h, opt, size));
        if !(size <= ld && pos <= ld - size) {
            return Err(arg_error(lua, 2, "data string too short"));
        }
        match opt {
            _ if is_int(opt) => {
                let v = get_integer(&data[pos..pos + size], h.little, opt.is_ascii_lowercase());
                out.push(Value::Number(v));
            }
            b'x' => {}
            b'f' => {
                let b: [u8; 4] = data[pos..pos + 4].try_into().unwrap_or([0; 4]);
                let v = if h.little {
                    f32::from_le_bytes(b)
                } else {
                    f32::from_be_bytes(b)
                };
                out.push(Value::Number(v as f64));
            }
            b'd' => {
                let b: [u8; 8] = data[pos..pos + 8].try_into().unwrap_or([0; 8]);
                let v = if h.little {
                    f64::from_le_bytes(b)
                } else {
                    f64::from_be_bytes(b)
                };
                out.push(Value::Number(v));
            }
            b'c' => {
                if size == 0 {
                    let prev = out.last().and_then(super::number);
                    let Some(n) = prev else {
                        return Err(error(lua, "format 'c0' needs a previous size"));
                    };
                    out.pop();
                    size = n as u64 as usize;
                    if !(size <= ld && pos <= ld - size) {
                        return Err(arg_error(lua, 2, "data string too short"));
                    }
                }
                out.push(Value::String(lua.create_string(&data[pos..pos + size])?));
            }
            b's' => {
                let Some(end) = data[pos..].iter().position(|&b| b == 0) else {
                    return Err(error(lua, "unfinished string in data"));
                };
                size = end + 1;
                out.push(Value::String(lua.create_string(&data[pos..pos + end])?));
            }
            _ => control(lua, &mut f, opt, &mut h)?,
        }
        pos = pos.wrapping_add(size);
    }
    out.push(Value::Number((pos as u64).wrapping_add(1) as i64 as f64));
    Ok(MultiValue::from_iter(out))
}

fn size(lua: &Lua, args: MultiValue) -> mlua::Result<i64> {
    let fmt = check_bytes(lua, &args, 0)?;
    let mut f = Format { fmt: &fmt, at: 0 };
    let mut h = Header {
        little: true,
        align: 1,
    };
    let mut pos = 0usize;
    while let Some(opt) = f.next() {
        let size = f.size(lua, opt)?;
        pos += to_align(pos, &h, opt, size);
        if opt == b's' {
            return Err(arg_error(lua, 1, "option 's' has no fixed size"));
        } else if opt == b'c' && size == 0 {
            return Err(arg_error(lua, 1, "option 'c0' has no fixed size"));
        }
        if !opt.is_ascii_alphanumeric() {
            control(lua, &mut f, opt, &mut h)?;
        }
        pos += size;
    }
    Ok(pos as i64)
}

/// The `struct` table.
pub fn module(lua: &Lua) -> mlua::Result<Table> {
    let t = lua.create_table()?;
    t.set("pack", lua.create_function(pack)?)?;
    t.set("unpack", lua.create_function(unpack)?)?;
    t.set("size", lua.create_function(size)?)?;
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_round_trip_with_sign_extension() {
        assert_eq!(get_integer(&[0xff, 0xff], true, true), -1.0);
        assert_eq!(get_integer(&[0xff, 0xff], true, false), 65535.0);
        assert_eq!(get_integer(&[0x01, 0x00], false, false), 256.0);
        let h = Header {
            little: true,
            align: 8,
        };
        assert_eq!(to_align(1, &h, b'i', 4), 3);
        assert_eq!(to_align(1, &h, b'c', 4), 0);
    }
}
