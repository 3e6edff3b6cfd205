//! DEBUG (debug.c): the subcommands Redis's own tests and teachers use.
//!
//! DEBUG is one command in Redis's table (not a container): its subcommands are
//! parsed inside, and a subcommand it does not know, or one with the wrong
//! number of arguments, gets `unknown subcommand or wrong number of arguments
//! for '<sub>'. Try DEBUG HELP.`. The core answers the same way for the ones it
//! does not model (crash helpers, replication and AOF hooks, allocator dumps).
//!
//! Modelled: SLEEP (the whole server sleeps, as Redis's main thread does),
//! SET-ACTIVE-EXPIRE (turns the active expire cycle off and on), PROTOCOL (one
//! reply of each RESP3 type, to see how a client shows it), ERROR, LOG,
//! CHANGE-REPL-ID (nothing to change: OK), HELP.

use super::{flags::*, Args, CmdResult, CommandSpec, Server};
use crate::reply::{Protocol, Reply};
use crate::server::client::Client;

pub const COMMANDS: &[CommandSpec] = &[CommandSpec::client("debug", -2, debug)
    .flags(ADMIN | NOSCRIPT | LOADING | STALE | PROTECTED)
    .doc(
        "1.0.0",
        "A container of debugging subcommands.",
        "subcommand [argument ...]",
    )];

fn syntax_error(a: &Args) -> Reply {
    let sub = String::from_utf8_lossy(a.bytes(1));
    let sub: String = sub.chars().take(128).collect();
    Reply::error(format!(
        "ERR unknown subcommand or wrong number of arguments for '{sub}'. Try DEBUG HELP."
    ))
}

pub fn debug(s: &mut Server, c: &mut Client, a: &Args) -> CmdResult {
    let n = a.len();
    match () {
        _ if a.is(1, "help") && n == 2 => Ok(help()),
        _ if a.is(1, "sleep") && n == 3 => {
            // `fast_float_strtod` with no error check: junk sleeps 0 s.
            let secs = std::str::from_utf8(a.bytes(2))
                .ok()
                .and_then(|t| t.trim().parse::<f64>().ok())
                .filter(|v| v.is_finite() && *v > 0.0)
                .unwrap_or(0.0);
            std::thread::sleep(std::time::Duration::from_micros((secs * 1e6) as u64));
            Ok(Reply::ok())
        }
        _ if a.is(1, "set-active-expire") && n == 3 => {
            s.config.active_expire = atoi(a.bytes(2)) != 0;
            Ok(Reply::ok())
        }
        _ if a.is(1, "protocol") && n == 3 => protocol(c, a),
        _ if a.is(1, "error") && n == 3 => {
            let text = String::from_utf8_lossy(a.bytes(2)).replace(['\r', '\n'], " ");
            Err(Reply::Error(text))
        }
        _ if a.is(1, "log") && n == 3 => {
            eprintln!("DEBUG LOG: {}", String::from_utf8_lossy(a.bytes(2)));
            Ok(Reply::ok())
        }
        _ if a.is(1, "change-repl-id") && n == 2 => Ok(Reply::ok()),
        _ => Err(syntax_error(a)),
    }
}

/// C's `atoi`: leading blanks, a sign, digits; anything else stops it (0 if
/// nothing was read).
fn atoi(bytes: &[u8]) -> i64 {
    let text = String::from_utf8_lossy(bytes);
    let t = text.trim_start();
    let (sign, digits) = match t.strip_prefix('-') {
        Some(rest) => (-1, rest),
        None => (1, t.strip_prefix('+').unwrap_or(t)),
    };
    let end = digits
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(digits.len());
    digits[..end].parse::<i64>().map_or(0, |v| sign * v)
}

/// DEBUG PROTOCOL <type>: one reply of each kind, as Redis sends it.
fn protocol(c: &mut Client, a: &Args) -> CmdResult {
    let name = String::from_utf8_lossy(a.bytes(2)).to_ascii_lowercase();
    let ints = |n: i64| (0..n).map(Reply::Integer).collect::<Vec<_>>();
    Ok(match name.as_str() {
        "string" => Reply::bulk("Hello World"),
        "integer" => Reply::Integer(12345),
        // Redis sends this literal, not π.
        #[allow(clippy::approx_constant)]
        "double" => Reply::Double(3.141),
        "bignum" => Reply::BigNumber("1234567999999999999999999999999999999".into()),
        "null" => Reply::Nil,
        "array" => Reply::Array(ints(3)),
        "set" => Reply::Set(ints(3)),
        "map" => Reply::Map(
            (0..3)
                .map(|j| (Reply::Integer(j), Reply::Bool(j == 1)))
                .collect(),
        ),
        "attrib" => Reply::Attributed(
            vec![(
                Reply::bulk("key-popularity"),
                Reply::Array(vec![Reply::bulk("key:123"), Reply::Integer(90)]),
            )],
            Box::new(Reply::bulk("Some real reply following the attribute")),
        ),
        "push" => {
            if c.protocol == Protocol::Resp2 {
                return Err(Reply::error("ERR RESP2 is not supported by this command"));
            }
            // Out of band first, then a normal reply for clients that skip pushes.
            c.push(&Reply::Push(vec![
                Reply::bulk("server-cpu-usage"),
                Reply::Integer(42),
            ]));
            Reply::bulk("Some real reply following the push reply")
        }
        "true" => Reply::Bool(true),
        "false" => Reply::Bool(false),
        "verbatim" => Reply::Verbatim("This is a verbatim\nstring".into()),
        _ => {
            return Err(Reply::error(
                "ERR Wrong protocol type name. Please use one of the following: string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|true|false",
            ))
        }
    })
}

fn help() -> Reply {
    let lines = [
        "DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "CHANGE-REPL-ID",
        "    Change the replication IDs of the instance (nothing to change on the core).",
        "ERROR <string>",
        "    Return a Redis protocol error with <string> as message.",
        "LOG <message>",
        "    Write <message> to the server log.",
        "PROTOCOL <type>",
        "    Reply with a test value of the specified type. <type> can be: string,",
        "    integer, double, bignum, null, array, set, map, attrib, push, verbatim,",
        "    true, false.",
        "SET-ACTIVE-EXPIRE <0|1>",
        "    Setting it to 0 disables expiring keys in background when they are not",
        "    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
        "    default.",
        "SLEEP <seconds>",
        "    Stop the server for <seconds>. Decimals allowed.",
        "HELP",
        "    Print this help.",
    ];
    Reply::Array(lines.iter().map(|l| Reply::Status((*l).into())).collect())
}

#[cfg(test)]
mod tests {
    use crate::reply::Protocol;
    use crate::{Reply, Server};

    #[test]
    fn protocol_replies_in_both_protocols() {
        let mut s = Server::new();
        let r = s.cmd(&["DEBUG", "PROTOCOL", "attrib"]);
        let mut two = Vec::new();
        r.encode(&mut two, Protocol::Resp2);
        assert_eq!(two, b"$39\r\nSome real reply following the attribute\r\n");
        let mut three = Vec::new();
        r.encode(&mut three, Protocol::Resp3);
        assert_eq!(
            String::from_utf8(three).unwrap(),
            "|1\r\n$14\r\nkey-popularity\r\n*2\r\n$7\r\nkey:123\r\n:90\r\n$39\r\nSome real reply following the attribute\r\n"
        );
        assert_eq!(
            s.cmd(&["DEBUG", "PROTOCOL", "push"]),
            Reply::error("ERR RESP2 is not supported by this command")
        );
        assert_eq!(
            s.cmd(&["DEBUG", "NOPE"]),
            Reply::error(
                "ERR unknown subcommand or wrong number of arguments for 'NOPE'. Try DEBUG HELP."
            )
        );
    }

    #[test]
    fn set_active_expire_turns_the_cycle_off() {
        let mut s = Server::new();
        assert_eq!(s.cmd(&["DEBUG", "SET-ACTIVE-EXPIRE", "0"]), Reply::ok());
        assert!(!s.config.active_expire);
        s.cmd(&["SET", "k", "v", "PX", "1"]);
        std::thread::sleep(std::time::Duration::from_millis(5));
        s.active_expire_cycle();
        assert_eq!(s.db(0).len(), 1);
        s.cmd(&["DEBUG", "SET-ACTIVE-EXPIRE", "1"]);
        s.active_expire_cycle();
        assert_eq!(s.db(0).len(), 0);
    }
}
