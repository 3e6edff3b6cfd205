//! The options SET, GETEX and MSETEX share (`parseExtendedStringArgumentsOrReply`
//! in src/t_string.c), and their expiry argument (`getExpireMillisecondsOrReply`).
//!
//! Redis reads the options left to right and accepts one only if it is allowed
//! for the command and compatible with what came before: anything else, a
//! repeated conflicting option or a missing value included, is `ERR syntax
//! error`. Only one of NX, XX, IFEQ, IFNE, IFDEQ and IFDNE may appear (one of
//! them may be repeated); EX, PX, EXAT, PXAT, KEEPTTL and PERSIST exclude each
//! other. Option names are compared as C strings, so `NX\0junk` is `NX`.

use super::Args;
use crate::keyspace::now_ms;
use crate::reply::{errors, Reply};

pub const NX: u32 = 1 << 0;
pub const XX: u32 = 1 << 1;
pub const EX: u32 = 1 << 2;
pub const PX: u32 = 1 << 3;
pub const KEEPTTL: u32 = 1 << 4;
pub const GET: u32 = 1 << 5;
pub const EXAT: u32 = 1 << 6;
pub const PXAT: u32 = 1 << 7;
pub const PERSIST: u32 = 1 << 8;
pub const IFEQ: u32 = 1 << 9;
pub const IFNE: u32 = 1 << 10;
pub const IFDEQ: u32 = 1 << 11;
pub const IFDNE: u32 = 1 << 12;

const CONDITIONS: u32 = NX | XX | IFEQ | IFNE | IFDEQ | IFDNE;
const EXPIRES: u32 = EX | PX | EXAT | PXAT;

/// Which command the options belong to; each accepts a different subset.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Get,
    Set,
    MsetEx,
}

/// The parsed options.
#[derive(Default)]
pub struct ExtArgs<'a> {
    pub flags: u32,
    /// The EX/PX/EXAT/PXAT argument.
    pub expire: Option<&'a [u8]>,
    /// The IFEQ/IFNE/IFDEQ/IFDNE argument.
    pub match_value: Option<&'a [u8]>,
}

impl ExtArgs<'_> {
    pub fn has(&self, flag: u32) -> bool {
        self.flags & flag != 0
    }

    /// Milliseconds are the unit of PX and PXAT.
    pub fn unit_is_ms(&self) -> bool {
        self.has(PX | PXAT)
    }
}

/// Parses options from `start` to the end of `a`.
pub fn parse<'a>(a: &Args<'a>, start: usize, kind: Kind) -> Result<ExtArgs<'a>, Reply> {
    let mut out = ExtArgs::default();
    let set_like = matches!(kind, Kind::Set | Kind::MsetEx);
    let mut j = start;
    while j < a.len() {
        let has_next = j + 1 < a.len();
        let f = out.flags;
        let cond_ok = |own: u32| f & (CONDITIONS & !own) == 0;
        if a.is(j, "nx") && f & XX == 0 && set_like {
            out.flags |= NX;
        } else if a.is(j, "xx") && f & NX == 0 && set_like {
            out.flags |= XX;
        } else if a.is(j, "get") && kind == Kind::Set {
            out.flags |= GET;
        } else if a.is(j, "keepttl") && f & (PERSIST | EXPIRES) == 0 && set_like {
            out.flags |= KEEPTTL;
        } else if a.is(j, "persist") && kind == Kind::Get && f & (EXPIRES | KEEPTTL) == 0 {
            out.flags |= PERSIST;
        } else if let Some(flag) = expire_flag(a, j) {
            if f & (KEEPTTL | PERSIST | (EXPIRES & !flag)) != 0 || !has_next {
                return Err(Reply::error(errors::SYNTAX));
            }
            out.flags |= flag;
            out.expire = Some(a.bytes(j + 1));
            j += 1;
        } else if let Some(flag) = condition_flag(a, j) {
            if !has_next || !cond_ok(flag) || kind != Kind::Set {
                return Err(Reply::error(errors::SYNTAX));
            }
            out.flags |= flag;
            out.match_value = Some(a.bytes(j + 1));
            j += 1;
        } else {
            return Err(Reply::error(errors::SYNTAX));
        }
        j += 1;
    }
    Ok(out)
}

fn expire_flag(a: &Args<'_>, j: usize) -> Option<u32> {
    [("ex", EX), ("px", PX), ("exat", EXAT), ("pxat", PXAT)]
        .into_iter()
        .find(|(w, _)| a.is(j, w))
        .map(|(_, f)| f)
}

fn condition_flag(a: &Args<'_>, j: usize) -> Option<u32> {
    [
        ("ifeq", IFEQ),
        ("ifne", IFNE),
        ("ifdeq", IFDEQ),
        ("ifdne", IFDNE),
    ]
    .into_iter()
    .find(|(w, _)| a.is(j, w))
    .map(|(_, f)| f)
}

/// `addReplyErrorExpireTime`.
pub fn invalid_expire(command: &str) -> Reply {
    Reply::error(format!("ERR invalid expire time in '{command}' command"))
}

/// `getExpireMillisecondsOrReply`: the absolute deadline in Unix milliseconds.
pub fn deadline_ms(ext: &ExtArgs<'_>, command: &str) -> Result<Option<i64>, Reply> {
    let Some(raw) = ext.expire else {
        return Ok(None);
    };
    let n = crate::num::parse_i64(raw).ok_or_else(|| Reply::error(errors::NOT_INTEGER))?;
    let seconds = !ext.unit_is_ms();
    if n <= 0 || (seconds && n > i64::MAX / 1000) {
        return Err(invalid_expire(command));
    }
    let mut ms = if seconds { n * 1000 } else { n };
    if ext.has(EX | PX) {
        ms = ms
            .checked_add(now_ms())
            .ok_or_else(|| invalid_expire(command))?;
    }
    Ok(Some(ms))
}
