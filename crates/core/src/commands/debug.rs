//! DEBUG (debug.c), only as far as Redis's own test suite needs it to test the
//! keyspace: `DEBUG SET-ACTIVE-EXPIRE 0|1` turns the active expire cycle off
//! and on, so a test can watch lazy expiry alone. Every other subcommand
//! answers Redis's "unknown subcommand or wrong number of arguments" error.
//!
//! Difference from Redis: Redis refuses DEBUG unless started with
//! `enable-debug-command` (its test servers are); the core always accepts this
//! one harmless subcommand.

use super::{flags::*, Args, CmdResult, CommandSpec, Server};
use crate::reply::Reply;

pub const COMMANDS: &[CommandSpec] = &[CommandSpec::new("debug", -2, debug)
    .flags(ADMIN | NOSCRIPT | LOADING | STALE)
    .doc(
        "1.0.0",
        "Developer switches; the core has SET-ACTIVE-EXPIRE only.",
        "",
    )];

/// C's `atoi`: leading blanks, a sign, the digits that follow; 0 otherwise.
fn atoi(bytes: &[u8]) -> i64 {
    let mut i = bytes
        .iter()
        .take_while(|b| matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r'))
        .count();
    let negative = match bytes.get(i) {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let mut v: i64 = 0;
    for &b in bytes[i..].iter().take_while(|b| b.is_ascii_digit()) {
        v = v.wrapping_mul(10).wrapping_add(i64::from(b - b'0'));
    }
    if negative {
        v.wrapping_neg()
    } else {
        v
    }
}

fn debug(s: &mut Server, a: &Args) -> CmdResult {
    if a.is(1, "set-active-expire") && a.len() == 3 {
        s.config.active_expire = atoi(a.bytes(2)) != 0;
        return Ok(Reply::ok());
    }
    let sub = String::from_utf8_lossy(a.bytes(1).split(|&b| b == 0).next().unwrap_or_default())
        .into_owned();
    Err(Reply::error(format!(
        "ERR unknown subcommand or wrong number of arguments for '{}'. Try DEBUG HELP.",
        crate::server::truncate(&sub, 128)
    )))
}

#[cfg(test)]
mod tests {
    use crate::{Reply, Server};

    #[test]
    fn set_active_expire_switches_the_cycle() {
        let mut s = Server::new();
        assert_eq!(s.cmd(&["DEBUG", "SET-ACTIVE-EXPIRE", "0"]), Reply::ok());
        assert!(!s.config.active_expire);
        assert_eq!(s.cmd(&["debug", "set-active-expire", " 1x"]), Reply::ok());
        assert!(s.config.active_expire);
        assert_eq!(
            s.cmd(&["DEBUG", "RELOAD"]),
            Reply::error(
                "ERR unknown subcommand or wrong number of arguments for 'RELOAD'. Try DEBUG HELP."
            )
        );
        assert_eq!(
            s.cmd(&["DEBUG", "SET-ACTIVE-EXPIRE"]),
            Reply::error("ERR unknown subcommand or wrong number of arguments for 'SET-ACTIVE-EXPIRE'. Try DEBUG HELP.")
        );
    }
}
