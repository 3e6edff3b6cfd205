//! EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT LOAD / EXISTS / FLUSH.
//!
//! The Lua side lives in [`crate::scripting`]; this module is the command layer:
//! Redis's argument checks in Redis's order, and the gate every `redis.call`
//! passes before it reaches the command table (`scriptCall` in src/script.c):
//! unknown command, wrong arity, commands scripts may not call, and writes from a
//! read-only script, each with Redis's wording.

use super::{flags::*, Args, CommandSpec, Server};
use crate::reply::{errors, Reply};
use crate::scripting::{Engine, ScriptFlags};
use crate::server::client::{Client, ConnectInfo, SCRIPT_CLIENT_ID};
use crate::server::table::{self, Found};

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec::legacy("eval", -3, eval)
        .flags(NOSCRIPT | STALE | SKIP_MONITOR | NO_MANDATORY_KEYS | MOVABLE_KEYS),
    CommandSpec::legacy("evalsha", -3, evalsha)
        .flags(NOSCRIPT | STALE | SKIP_MONITOR | NO_MANDATORY_KEYS | MOVABLE_KEYS),
    CommandSpec::legacy("eval_ro", -3, eval_ro)
        .flags(READONLY | NOSCRIPT | STALE | SKIP_MONITOR | NO_MANDATORY_KEYS | MOVABLE_KEYS),
    CommandSpec::legacy("evalsha_ro", -3, evalsha_ro)
        .flags(READONLY | NOSCRIPT | STALE | SKIP_MONITOR | NO_MANDATORY_KEYS | MOVABLE_KEYS),
    CommandSpec::legacy("script", -2, script).acl(&[]),
];

const NOSCRIPT_ERROR: &str = "NOSCRIPT No matching script. Please use EVAL.";

pub fn eval(s: &mut Server, a: &Args) -> Reply {
    eval_generic(s, a, false, false)
}

pub fn evalsha(s: &mut Server, a: &Args) -> Reply {
    eval_generic(s, a, true, false)
}

pub fn eval_ro(s: &mut Server, a: &Args) -> Reply {
    eval_generic(s, a, false, true)
}

pub fn evalsha_ro(s: &mut Server, a: &Args) -> Reply {
    eval_generic(s, a, true, true)
}

/// `evalGenericCommand` (src/eval.c).
fn eval_generic(s: &mut Server, a: &Args, by_sha: bool, ro: bool) -> Reply {
    if by_sha && a.bytes(1).len() != 40 {
        return Reply::error(NOSCRIPT_ERROR);
    }
    let numkeys = match a.int(2) {
        Ok(n) => n,
        Err(e) => return e,
    };
    if numkeys > a.len() as i64 - 3 {
        return Reply::error("ERR Number of keys can't be greater than number of args");
    }
    if numkeys < 0 {
        return Reply::error("ERR Number of keys can't be negative");
    }
    let mut engine = s
        .scripting
        .take()
        .unwrap_or_else(|| Box::new(Engine::watched(s.script_watch.clone())));
    let reply = run_script(s, &mut engine, a, numkeys as usize, by_sha, ro);
    s.scripting = Some(engine);
    reply
}

fn run_script(
    s: &mut Server,
    engine: &mut Engine,
    a: &Args,
    numkeys: usize,
    by_sha: bool,
    ro: bool,
) -> Reply {
    let sha = if by_sha {
        let sha = String::from_utf8_lossy(a.bytes(1)).to_ascii_lowercase();
        if !engine.exists(sha.as_bytes()) {
            return Reply::error(NOSCRIPT_ERROR);
        }
        sha
    } else {
        match engine.create(a.bytes(1), true) {
            Ok(sha) => sha,
            Err(reply) => return reply,
        }
    };
    let flags = engine.flags(&sha).unwrap_or_default();
    if ro && !flags.compat && !flags.no_writes {
        return Reply::error("ERR Can not execute a script with write flag using *_ro command.");
    }
    let read_only = ro || is_no_writes(flags);
    let argv = a.all();
    let keys = &argv[3..3 + numkeys];
    let args = &argv[3 + numkeys..];
    // The script's commands run as Redis's Lua client: its own database
    // selection (a SELECT inside the script does not change the caller's).
    let caller_db = s.current_db();
    let mut client = Client::new(SCRIPT_CLIENT_ID, ConnectInfo::in_process());
    client.db = caller_db;
    let threshold = s.config.busy_reply_threshold;
    let caller = s.running_client();
    s.lock_watch().begin(caller, threshold);
    let reply = engine.run(&sha, keys, args, |call| {
        script_call(s, &mut client, call, read_only)
    });
    s.lock_watch().end();
    s.switch_db(caller_db);
    reply
}

fn is_no_writes(flags: ScriptFlags) -> bool {
    !flags.compat && flags.no_writes
}

/// One `redis.call` from a script: Redis's checks (`scriptCall` in
/// src/script.c), then the command itself on the script's own client. A refusal
/// is the error text without its code, as `scriptCall` words it.
fn script_call(
    s: &mut Server,
    client: &mut Client,
    argv: &[Vec<u8>],
    read_only: bool,
) -> Result<Reply, String> {
    let Found::Command(spec, fullname) = table::resolve(argv) else {
        return Err("Unknown Redis command called from script".into());
    };
    if !spec.arity_ok(argv.len()) {
        return Err("Wrong number of args calling Redis command from script".into());
    }
    if spec.has(NOSCRIPT) {
        return Err("This Redis command is not allowed from script".into());
    }
    if read_only && spec.has(WRITE) {
        return Err("Write commands are not allowed from read-only scripts.".into());
    }
    if spec.has(WRITE) {
        s.lock_watch().note_write();
    }
    Ok(s.call_nested(client, spec, fullname, argv))
}

/// SCRIPT LOAD | EXISTS | FLUSH | KILL | HELP.
pub fn script(s: &mut Server, a: &Args) -> Reply {
    let sub = String::from_utf8_lossy(a.bytes(1)).to_ascii_lowercase();
    // Subcommand arities, as Redis checks them before the command runs.
    let arity = match sub.as_str() {
        "load" | "debug" => 3,
        "exists" => -3,
        "flush" => -2,
        "kill" | "help" => 2,
        _ => {
            let name = String::from_utf8_lossy(a.bytes(1));
            return Reply::error(format!(
                "ERR unknown subcommand '{}'. Try SCRIPT HELP.",
                truncate_chars(&name, 128)
            ));
        }
    };
    let argc = a.len() as i32;
    if (arity > 0 && argc != arity) || argc < -arity {
        return Reply::error(errors::arity(&format!("script|{sub}")));
    }
    let watch = s.script_watch.clone();
    let engine = s
        .scripting
        .get_or_insert_with(|| Box::new(Engine::watched(watch)));
    match sub.as_str() {
        "load" => match engine.create(a.bytes(2), false) {
            Ok(sha) => Reply::bulk(sha),
            Err(reply) => reply,
        },
        "exists" => Reply::Array(
            (2..a.len())
                .map(|i| Reply::Integer(engine.exists(a.bytes(i)) as i64))
                .collect(),
        ),
        "flush" => {
            let ok = a.len() == 2 || (a.len() == 3 && (a.is(2, "sync") || a.is(2, "async")));
            if !ok {
                return Reply::error("ERR SCRIPT FLUSH only support SYNC|ASYNC option");
            }
            engine.flush();
            Reply::ok()
        }
        "kill" => Reply::error("NOTBUSY No scripts in execution right now."),
        "debug" => Reply::error("ERR SCRIPT DEBUG is not modelled by the core"),
        _ => Reply::Array(HELP.iter().map(|l| Reply::Status((*l).into())).collect()),
    }
}

fn truncate_chars(s: &str, max: usize) -> String {
    s.chars().take(max).collect()
}

const HELP: &[&str] = &[
    "SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "DEBUG (YES|SYNC|NO)",
    "    Set the debug mode for subsequent scripts executed.",
    "EXISTS <sha1> [<sha1> ...]",
    "    Return information about the existence of the scripts in the script cache.",
    "FLUSH [ASYNC|SYNC]",
    "    Flush the Lua scripts cache. Very dangerous on replicas.",
    "    When called without the optional mode argument, the behavior is determined by the",
    "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
    "    * ASYNC: Asynchronously flush the scripts cache.",
    "    * SYNC: Synchronously flush the scripts cache.",
    "KILL",
    "    Kill the currently executing Lua script.",
    "LOAD <script>",
    "    Load a script into the scripts cache without executing it.",
    "HELP",
    "    Print this help.",
];

#[cfg(test)]
mod tests {
    use crate::{Reply, Server};

    fn eval(s: &mut Server, script: &str, rest: &[&str]) -> Reply {
        let mut argv = vec!["EVAL", script];
        argv.extend_from_slice(rest);
        s.cmd(&argv)
    }

    #[test]
    fn conversions_both_ways() {
        let mut s = Server::new();
        assert_eq!(eval(&mut s, "return 3.99", &["0"]), Reply::Integer(3));
        assert_eq!(eval(&mut s, "return false", &["0"]), Reply::Nil);
        assert_eq!(eval(&mut s, "return true", &["0"]), Reply::Integer(1));
        assert_eq!(
            eval(&mut s, "return {1,'a',nil,2}", &["0"]),
            Reply::Array(vec![Reply::Integer(1), Reply::bulk("a")])
        );
        assert_eq!(
            eval(&mut s, "return {KEYS[1], ARGV[1]}", &["1", "k", "v"]),
            Reply::Array(vec![Reply::bulk("k"), Reply::bulk("v")])
        );
        assert_eq!(
            eval(&mut s, "return redis.call('ping')", &["0"]),
            Reply::Status("PONG".into())
        );
        assert_eq!(
            eval(&mut s, "return type(redis.call('zscore','q','x'))", &["0"]),
            Reply::bulk("boolean")
        );
    }

    #[test]
    fn the_articles_pop_due_script() {
        let mut s = Server::new();
        let pop =
            "local jobs = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, 1)\n\
                   if #jobs == 0 then return false end\n\
                   redis.call('ZREM', KEYS[1], jobs[1])\n\
                   return jobs[1]\n";
        s.cmd(&["ZADD", "q", "100", "a", "200", "b"]);
        assert_eq!(eval(&mut s, pop, &["1", "q", "150"]), Reply::bulk("a"));
        assert_eq!(eval(&mut s, pop, &["1", "q", "150"]), Reply::Nil);
        assert_eq!(s.cmd(&["ZCARD", "q"]), Reply::Integer(1));
    }

    #[test]
    fn errors_read_like_redis() {
        let mut s = Server::new();
        assert_eq!(
            eval(&mut s, "return redis.call('nope')", &["0"]),
            Reply::error(
                "ERR Unknown Redis command called from script script: \
                 f01f0776df71cc5b400c2268135aa7f30dce2e53, on @user_script:1."
            )
        );
        assert_eq!(
            eval(&mut s, "x = 1", &["0"]),
            Reply::error(
                "ERR user_script:1: Attempt to modify a readonly table script: \
                 34bce5f775de97f557a34088509c8bfe1ea17e52, on @user_script:1."
            )
        );
        assert_eq!(
            eval(&mut s, "return y", &["0"]),
            Reply::error(
                "ERR user_script:1: Script attempted to access nonexistent global variable 'y' \
                 script: e278681ed961e2fb52881313e5c90fdd93749940, on @user_script:1."
            )
        );
        assert_eq!(
            eval(&mut s, "return 1 +", &["0"]),
            Reply::error("ERR Error compiling script (new function): user_script:1: unexpected symbol near '<eof>'")
        );
        assert_eq!(
            s.cmd(&["EVALSHA", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "0"]),
            Reply::error("NOSCRIPT No matching script. Please use EVAL.")
        );
        assert_eq!(
            eval(&mut s, "return 1", &["2", "a"]),
            Reply::error("ERR Number of keys can't be greater than number of args")
        );
    }

    #[test]
    fn script_load_exists_flush() {
        let mut s = Server::new();
        let sha = "e0e1f9fabfc9d4800c877a703b823ac0578ff8db";
        assert_eq!(s.cmd(&["SCRIPT", "LOAD", "return 1"]), Reply::bulk(sha));
        assert_eq!(
            s.cmd(&["SCRIPT", "EXISTS", sha, &sha.to_uppercase(), "x"]),
            Reply::Array(vec![
                Reply::Integer(1),
                Reply::Integer(1),
                Reply::Integer(0)
            ])
        );
        assert_eq!(
            s.cmd(&["EVALSHA", &sha.to_uppercase(), "0"]),
            Reply::Integer(1)
        );
        assert_eq!(s.cmd(&["SCRIPT", "FLUSH"]), Reply::ok());
        assert_eq!(
            s.cmd(&["SCRIPT", "EXISTS", sha]),
            Reply::Array(vec![Reply::Integer(0)])
        );
    }

    #[test]
    fn blocking_pop_inside_a_script_does_not_block() {
        let mut s = Server::new();
        let c = s.connect(crate::server::ConnectInfo {
            kind: crate::server::ClientKind::Connection,
            addr: "127.0.0.1:1".into(),
            laddr: "127.0.0.1:2".into(),
        });
        let mut out = Vec::new();
        let outcome = s.call_into(
            c,
            &[
                b"EVAL".to_vec(),
                b"return redis.call('bzpopmin','q','0')".to_vec(),
                b"0".to_vec(),
            ],
            &mut out,
        );
        assert_eq!(outcome, crate::server::Outcome::Done);
        assert_eq!(out, b"$-1\r\n");
    }

    #[test]
    fn read_only_scripts_refuse_writes() {
        let mut s = Server::new();
        assert_eq!(
            s.cmd(&["EVAL_RO", "return redis.call('zadd','z',1,'a')", "0"]),
            Reply::error(
                "ERR Write commands are not allowed from read-only scripts. script: \
                 47e60c5d004872fef1eca6e7259c7bb73b47d1c2, on @user_script:1."
            )
        );
    }
}
