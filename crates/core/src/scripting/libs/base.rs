//! Base-library functions the sandbox replaces with Redis's versions, written
//! against Lua's C API so they behave as C functions (a `return unpack(t)` tail
//! call keeps the caller's frame for error positions, and results stay on the
//! Lua stack).
//!
//! `unpack`: stock Lua 5.1.5 computes the number of results in a signed int
//! and overflows on ranges near the int limits (a crash: CVE-2025-46817);
//! Redis's patched version counts them unsigned and refuses more than fit on
//! the stack. This is that rule.

use std::os::raw::c_int;

use mlua::ffi;

/// `unpack(list [, i [, j]])`.
///
/// # Safety
/// Called by Lua as a `lua_CFunction` with a valid state; raises Lua errors
/// by `luaL_error` (a longjmp over no Rust value that needs dropping).
pub unsafe extern "C-unwind" fn unpack(state: *mut ffi::lua_State) -> c_int {
    ffi::luaL_checktype(state, 1, ffi::LUA_TTABLE);
    let i = ffi::luaL_optinteger(state, 2, 1) as c_int;
    let e = if ffi::lua_isnoneornil(state, 3) != 0 {
        ffi::lua_objlen(state, 1) as c_int
    } else {
        ffi::luaL_checkinteger(state, 3) as c_int
    };
    if i > e {
        return 0;
    }
    let n = (e as u32).wrapping_sub(i as u32);
    if n >= i32::MAX as u32 || ffi::lua_checkstack(state, (n + 1) as c_int) == 0 {
        return ffi::luaL_error(state, c"too many results to unpack".as_ptr());
    }
    let mut at = i;
    ffi::lua_rawgeti_(state, 1, at);
    while at < e {
        at += 1;
        ffi::lua_rawgeti_(state, 1, at);
    }
    (n + 1) as c_int
}
