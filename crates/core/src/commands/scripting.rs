//! EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT LOAD / EXISTS / FLUSH / KILL /
//! DEBUG / HELP (src/eval.c).
//!
//! The Lua side lives in [`crate::scripting`]; this module is the command
//! layer: Redis's argument checks in Redis's order, then the run
//! ([`crate::scripting::run`]), which applies the script's flags and gates
//! every `redis.call`.

use super::{flags::*, Args, CmdResult, CommandSpec, Group, Server};
use crate::reply::Reply;
use crate::scripting::run::{self, Target};
use crate::scripting::Engine;
use crate::server::client::Client;

const EVAL_FLAGS: u32 =
    NOSCRIPT | SKIP_MONITOR | MAY_REPLICATE | NO_MANDATORY_KEYS | STALE | MOVABLE_KEYS;
const EVAL_RO_FLAGS: u32 =
    NOSCRIPT | SKIP_MONITOR | NO_MANDATORY_KEYS | STALE | READONLY | MOVABLE_KEYS;
const EVAL_SYNTAX: &str = "script numkeys [key [key ...]] [arg [arg ...]]";
const EVALSHA_SYNTAX: &str = "sha1 numkeys [key [key ...]] [arg [arg ...]]";

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec::client("eval", -3, eval).flags(EVAL_FLAGS).doc(
        "2.6.0",
        "Runs a Lua script on the server, caching it by its SHA1.",
        EVAL_SYNTAX,
    ),
    CommandSpec::client("evalsha", -3, evalsha)
        .flags(EVAL_FLAGS)
        .doc(
            "2.6.0",
            "Runs a cached Lua script named by its SHA1.",
            EVALSHA_SYNTAX,
        ),
    CommandSpec::client("eval_ro", -3, eval_ro)
        .flags(EVAL_RO_FLAGS)
        .doc(
            "7.0.0",
            "Runs a Lua script that may not call write commands.",
            EVAL_SYNTAX,
        ),
    CommandSpec::client("evalsha_ro", -3, evalsha_ro)
        .flags(EVAL_RO_FLAGS)
        .doc(
            "7.0.0",
            "Runs a cached Lua script, named by its SHA1, that may not call write commands.",
            EVALSHA_SYNTAX,
        ),
    CommandSpec::container("script", SCRIPT_SUBCOMMANDS).doc(
        "2.6.0",
        "A container for the commands that manage the Lua script cache.",
        "",
    ),
];

const SCRIPT_SUBCOMMANDS: &[CommandSpec] = &[
    CommandSpec::new("debug", 3, script_debug)
        .flags(NOSCRIPT)
        .group(Group::Scripting)
        .doc(
            "3.2.0",
            "Turns the Lua debugger on or off for the next scripts (only NO here).",
            "<YES | SYNC | NO>",
        ),
    CommandSpec::new("exists", -3, script_exists)
        .flags(NOSCRIPT)
        .group(Group::Scripting)
        .doc(
            "2.6.0",
            "Tells for each SHA1 whether that script is in the cache.",
            "sha1 [sha1 ...]",
        ),
    CommandSpec::new("flush", -2, script_flush)
        .flags(NOSCRIPT)
        .group(Group::Scripting)
        .doc(
            "2.6.0",
            "Empties the script cache and starts a fresh Lua state.",
            "[ASYNC | SYNC]",
        ),
    CommandSpec::new("help", 2, script_help)
        .flags(LOADING | STALE)
        .group(Group::Scripting)
        .doc("5.0.0", "Lists the SCRIPT subcommands.", ""),
    CommandSpec::new("kill", 2, script_kill)
        .flags(NOSCRIPT | ALLOW_BUSY)
        .group(Group::Scripting)
        .doc(
            "2.6.0",
            "Stops the EVAL script that is running, if it has not written.",
            "",
        ),
    CommandSpec::new("load", 3, script_load)
        .flags(NOSCRIPT | STALE)
        .group(Group::Scripting)
        .doc(
            "2.6.0",
            "Compiles a script into the cache without running it.",
            "script",
        ),
];

const NOSCRIPT_ERROR: &str = "NOSCRIPT No matching script. Please use EVAL.";

pub fn eval(s: &mut Server, c: &mut Client, a: &Args) -> CmdResult {
    eval_generic(s, c, a, false, false, "eval")
}

pub fn evalsha(s: &mut Server, c: &mut Client, a: &Args) -> CmdResult {
    eval_generic(s, c, a, true, false, "evalsha")
}

pub fn eval_ro(s: &mut Server, c: &mut Client, a: &Args) -> CmdResult {
    eval_generic(s, c, a, false, true, "eval_ro")
}

pub fn evalsha_ro(s: &mut Server, c: &mut Client, a: &Args) -> CmdResult {
    eval_generic(s, c, a, true, true, "evalsha_ro")
}

/// The server's scripting state, taken out while a script runs (the script's
/// `redis.call`s borrow the rest of the server).
pub(super) fn take_engine(s: &mut Server) -> Result<Box<Engine>, Reply> {
    if let Some(engine) = s.scripting.take() {
        return Ok(engine);
    }
    if s.lock_watch().running() {
        return Err(Reply::error(
            "ERR This command can not run while a script is running",
        ));
    }
    Ok(Box::new(Engine::watched(s.script_watch.clone())))
}

/// The scripting state for a command that only looks at it.
pub(super) fn engine(s: &mut Server) -> Result<&mut Engine, Reply> {
    if s.scripting.is_none() {
        let engine = take_engine(s)?;
        s.scripting = Some(engine);
    }
    match s.scripting.as_deref_mut() {
        Some(e) => Ok(e),
        None => Err(Reply::error("ERR scripting is not available")),
    }
}

/// `getLongLongFromObject` then Redis's two range checks on numkeys.
pub(super) fn numkeys(a: &Args, not_integer: &str) -> Result<usize, Reply> {
    let n = crate::num::parse_i64(a.bytes(2)).ok_or_else(|| Reply::error(not_integer))?;
    if n > a.len() as i64 - 3 {
        return Err(Reply::error(
            "ERR Number of keys can't be greater than number of args",
        ));
    }
    if n < 0 {
        return Err(Reply::error("ERR Number of keys can't be negative"));
    }
    Ok(n as usize)
}

/// `evalCommand` / `evalShaCommand` and `evalGenericCommand` (src/eval.c).
fn eval_generic(
    s: &mut Server,
    c: &mut Client,
    a: &Args,
    by_sha: bool,
    ro: bool,
    fullname: &'static str,
) -> CmdResult {
    // The script is fed to MONITOR before the commands it runs.
    s.feed_monitors(c, a.all());
    if by_sha && a.bytes(1).len() != 40 {
        return Err(Reply::error(NOSCRIPT_ERROR));
    }
    let numkeys = numkeys(a, crate::reply::errors::NOT_INTEGER)?;
    let mut engine = take_engine(s)?;
    let result = run_script(s, &mut engine, a, numkeys, by_sha, ro, fullname);
    s.scripting = Some(engine);
    result
}

fn run_script(
    s: &mut Server,
    engine: &mut Engine,
    a: &Args,
    numkeys: usize,
    by_sha: bool,
    ro: bool,
    fullname: &'static str,
) -> CmdResult {
    let scripts = &mut engine.eval;
    let sha = if by_sha {
        String::from_utf8_lossy(a.bytes(1)).to_ascii_lowercase()
    } else {
        scripts.create(a.bytes(1), true)?
    };
    let Some((function, flags)) = scripts.touch(&sha) else {
        return Err(Reply::error(NOSCRIPT_ERROR));
    };
    let target = Target {
        function,
        flags,
        name: sha,
        eval: true,
        libraries: engine.functions.library_count(),
        functions: engine.functions.function_count(),
    };
    run::run(s, &engine.eval.vm, target, a, numkeys, ro, fullname)
}

fn script_debug(s: &mut Server, a: &Args) -> CmdResult {
    engine(s)?;
    if a.is(2, "no") {
        Ok(Reply::ok())
    } else if a.is(2, "yes") || a.is(2, "sync") {
        Err(Reply::error(
            "ERR SCRIPT DEBUG YES|SYNC (the Lua debugger) is not modelled by the core",
        ))
    } else {
        Err(Reply::error("ERR Use SCRIPT DEBUG YES/SYNC/NO"))
    }
}

fn script_exists(s: &mut Server, a: &Args) -> CmdResult {
    let scripts = engine(s)?.scripts();
    Ok(Reply::Array(
        (2..a.len())
            .map(|i| Reply::Integer(scripts.exists(a.bytes(i)) as i64))
            .collect(),
    ))
}

fn script_flush(s: &mut Server, a: &Args) -> CmdResult {
    let ok = a.len() == 2 || (a.len() == 3 && (a.is(2, "sync") || a.is(2, "async")));
    if !ok {
        return Err(Reply::error(
            "ERR SCRIPT FLUSH only support SYNC|ASYNC option",
        ));
    }
    engine(s)?.flush_scripts();
    Ok(Reply::ok())
}

fn script_help(_: &mut Server, _: &Args) -> CmdResult {
    Ok(help_reply("SCRIPT", SCRIPT_HELP))
}

fn script_kill(_: &mut Server, _: &Args) -> CmdResult {
    // A script running in this server holds it: from here none is running.
    Err(Reply::error("NOTBUSY No scripts in execution right now."))
}

fn script_load(s: &mut Server, a: &Args) -> CmdResult {
    let sha = engine(s)?.eval.create(a.bytes(2), false)?;
    Ok(Reply::bulk(sha))
}

/// `addReplyHelp`: the usage line, the lines, then HELP's own entry.
pub(super) fn help_reply(name: &str, lines: &[&'static str]) -> Reply {
    let mut out = vec![Reply::Status(
        format!("{name} <subcommand> [<arg> [value] [opt] ...]. Subcommands are:").into(),
    )];
    out.extend(lines.iter().map(|l| Reply::Status((*l).into())));
    out.push(Reply::Status("HELP".into()));
    out.push(Reply::Status("    Print this help.".into()));
    Reply::Array(out)
}

const SCRIPT_HELP: &[&str] = &[
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
];

/// INFO's memory fields of the scripting engines (Redis's order).
pub fn info_memory(s: &Server) -> Vec<(&'static str, String)> {
    let (lua, eval_overhead, scripts, functions_vm, functions_overhead, functions, libraries) =
        match s.scripting.as_deref() {
            Some(e) => (
                e.eval.vm.used_memory(),
                e.eval.overhead(),
                e.eval.len(),
                e.functions.vm.used_memory(),
                e.functions.overhead(),
                e.functions.callable_count(),
                e.functions.library_count(),
            ),
            None => (0, 0, 0, 0, 184, 0, 0),
        };
    let human = |n: usize| super::info::human_bytes(n as u64);
    vec![
        ("used_memory_lua", lua.to_string()),
        ("used_memory_vm_eval", lua.to_string()),
        ("used_memory_lua_human", human(lua)),
        ("used_memory_scripts_eval", eval_overhead.to_string()),
        ("number_of_cached_scripts", scripts.to_string()),
        ("number_of_functions", functions.to_string()),
        ("number_of_libraries", libraries.to_string()),
        ("used_memory_vm_functions", functions_vm.to_string()),
        ("used_memory_vm_total", (lua + functions_vm).to_string()),
        ("used_memory_vm_total_human", human(lua + functions_vm)),
        ("used_memory_functions", functions_overhead.to_string()),
        (
            "used_memory_scripts",
            (eval_overhead + functions_overhead).to_string(),
        ),
        (
            "used_memory_scripts_human",
            human(eval_overhead + functions_overhead),
        ),
    ]
}

/// INFO's `evicted_scripts`.
pub fn evicted_scripts(s: &Server) -> u64 {
    s.scripting.as_deref().map_or(0, |e| e.eval.evicted)
}

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
    fn resp3_inside_a_script() {
        let mut s = Server::new();
        s.cmd(&["ZADD", "z", "1.5", "m"]);
        assert_eq!(
            eval(
                &mut s,
                "redis.setresp(3); return redis.call('zscore','z','m')",
                &["0"]
            ),
            Reply::Double(1.5)
        );
        assert_eq!(
            eval(
                &mut s,
                "redis.setresp(3); return redis.call('zscore','z','x') == nil",
                &["0"]
            ),
            Reply::Bool(true)
        );
        assert_eq!(
            eval(&mut s, "redis.setresp(3); return {map={a=1}}", &["0"]),
            Reply::Map(vec![(Reply::bulk("a"), Reply::Integer(1))])
        );
        let bad = "return redis.setresp(4)";
        assert_eq!(
            eval(&mut s, bad, &["0"]),
            Reply::error(format!(
                "ERR RESP version must be 2 or 3. script: {}, on @user_script:1.",
                crate::scripting::sha1_hex(bad.as_bytes())
            ))
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
        assert_eq!(
            s.cmd(&["SCRIPT", "LOAD"]),
            Reply::error("ERR wrong number of arguments for 'script|load' command")
        );
        assert_eq!(
            s.cmd(&["SCRIPT", "BOGUS"]),
            Reply::error("ERR unknown subcommand 'BOGUS'. Try SCRIPT HELP.")
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
        // PFCOUNT may rewrite its cached cardinality: Redis flags it
        // MAY_REPLICATE, which read-only scripts refuse like a write.
        assert_eq!(
            s.cmd(&["EVAL_RO", "return redis.call('pfcount','h')", "0"]),
            Reply::error(format!(
                "ERR Write commands are not allowed from read-only scripts. script: {}, on @user_script:1.",
                crate::scripting::sha1_hex(b"return redis.call('pfcount','h')")
            ))
        );
        assert_eq!(
            s.cmd(&["EVAL_RO", "return redis.call('zadd','z',1,'a')", "0"]),
            Reply::error(
                "ERR Write commands are not allowed from read-only scripts. script: \
                 47e60c5d004872fef1eca6e7259c7bb73b47d1c2, on @user_script:1."
            )
        );
        assert_eq!(
            s.cmd(&["EVAL", "#!lua flags=no-writes\nreturn redis.call('publish','c','m')", "0"]),
            Reply::error(format!(
                "ERR Write commands are not allowed from read-only scripts. script: {}, on @user_script:2.",
                crate::scripting::sha1_hex(b"#!lua flags=no-writes\nreturn redis.call('publish','c','m')")
            ))
        );
        assert_eq!(
            s.cmd(&["EVAL_RO", "#!lua\nreturn 1", "0"]),
            Reply::error("ERR Can not execute a script with write flag using *_ro command.")
        );
    }

    #[test]
    fn error_statistics_count_each_error_once() {
        let mut s = Server::new();
        s.cmd(&["SET", "str", "x"]);
        s.cmd(&["CONFIG", "RESETSTAT"]);
        // The command's error is counted when INCR fails; the script's reply
        // only fails EVAL.
        assert!(eval(&mut s, "return redis.call('incr','str')", &["0"]).is_error());
        assert_eq!(s.stats.errors.get("ERR"), Some(&1));
        assert_eq!(s.stats.total_error_replies, 1);
        assert_eq!(s.stats.commands["eval"].failed, 1);
        assert_eq!(s.stats.commands["incr"].failed, 1);
        // A refused call counts as a rejected call of that command.
        s.cmd(&["CONFIG", "RESETSTAT"]);
        assert!(eval(&mut s, "return redis.pcall('get')", &["0"]).is_error());
        assert_eq!(s.stats.commands["get"].rejected, 1);
        assert_eq!(s.stats.total_error_replies, 1);
        assert_eq!(s.stats.commands["eval"].failed, 1);
        // An error the script makes up counts as any error.
        s.cmd(&["CONFIG", "RESETSTAT"]);
        assert!(eval(&mut s, "return redis.error_reply('MY_CODE x')", &["0"]).is_error());
        assert_eq!(s.stats.errors.get("MY_CODE"), Some(&1));
        assert_eq!(s.stats.commands["eval"].failed, 1);
        // pcall's error table, not returned: nothing fails but INCR.
        s.cmd(&["CONFIG", "RESETSTAT"]);
        assert_eq!(
            eval(
                &mut s,
                "local t = redis.pcall('incr','str') return 1",
                &["0"]
            ),
            Reply::Integer(1)
        );
        assert_eq!(s.stats.commands["eval"].failed, 0);
        assert_eq!(s.stats.total_error_replies, 1);
    }

    fn over_the_limit() -> usize {
        1 << 40
    }

    /// Over `maxmemory`, a script may still read; its first write is refused
    /// (counted as OOM and a rejected SET), a shebang script needs allow-oom or
    /// no-writes to start at all, and a function without flags does not start.
    #[test]
    fn out_of_memory_rules_follow_the_script_flags() {
        let mut s = Server::new();
        s.set_memory_probe(over_the_limit);
        s.cmd(&["SET", "x", "123"]);
        s.cmd(&[
            "FUNCTION",
            "LOAD",
            "#!lua name=m\nredis.register_function('f', function() return 1 end)",
        ]);
        s.cmd(&["CONFIG", "SET", "maxmemory", "1"]);
        s.cmd(&["CONFIG", "RESETSTAT"]);
        let write = "return redis.call('set','x','y')";
        assert_eq!(
            eval(&mut s, write, &["1", "x"]),
            Reply::error(format!(
                "OOM command not allowed when used memory > 'maxmemory'. script: {}, on @user_script:1.",
                crate::scripting::sha1_hex(write.as_bytes())
            ))
        );
        assert_eq!(s.stats.errors.get("OOM"), Some(&1));
        assert_eq!(s.stats.total_error_replies, 1);
        assert_eq!(s.stats.commands["set"].rejected, 1);
        assert_eq!(s.stats.commands["set"].calls, 0);
        assert_eq!(s.stats.commands["eval"].failed, 1);
        assert_eq!(
            eval(&mut s, "return redis.call('get','x')", &["1", "x"]),
            Reply::bulk("123")
        );
        let oom = Reply::error(
            "OOM allow-oom flag is not set on the script, can not run it when used memory > 'maxmemory'",
        );
        assert_eq!(eval(&mut s, "#!lua flags=\nreturn 1", &["0"]), oom);
        assert_eq!(s.cmd(&["FCALL", "f", "0"]), oom);
        assert_eq!(
            eval(
                &mut s,
                "#!lua flags=allow-oom\nredis.call('set','x','1') return 1",
                &["1", "x"]
            ),
            Reply::Integer(1)
        );
        assert_eq!(
            eval(&mut s, "#!lua flags=no-writes\nreturn 1", &["0"]),
            Reply::Integer(1)
        );
        // pcall hands the refusal back as an error table.
        assert_eq!(
            eval(
                &mut s,
                "return redis.pcall('set','x','y')['err']",
                &["1", "x"]
            ),
            Reply::bulk("OOM command not allowed when used memory > 'maxmemory'.")
        );
        s.cmd(&["CONFIG", "SET", "maxmemory", "0"]);
        assert_eq!(eval(&mut s, "#!lua\nreturn 1", &["0"]), Reply::Integer(1));
    }

    /// EVAL is fed to MONITOR before the commands its script runs (which
    /// show as coming from `lua`).
    #[test]
    fn monitor_sees_the_script_then_its_commands() {
        let mut s = Server::new();
        let conn = |s: &mut Server| {
            s.connect(crate::server::ConnectInfo {
                kind: crate::server::ClientKind::Connection,
                addr: "127.0.0.1:7001".into(),
                laddr: "127.0.0.1:6379".into(),
            })
        };
        let (watcher, caller) = (conn(&mut s), conn(&mut s));
        s.call(watcher, &[b"MONITOR".to_vec()]);
        s.call(
            caller,
            &[
                b"EVAL".to_vec(),
                b"return redis.call('ping')".to_vec(),
                b"0".to_vec(),
            ],
        );
        let out = s.client_mut(watcher).unwrap().take_pending();
        let text = String::from_utf8_lossy(&out);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert!(
            lines[0].ends_with("[0 127.0.0.1:7001] \"EVAL\" \"return redis.call('ping')\" \"0\""),
            "{text}"
        );
        assert!(lines[1].ends_with("[0 lua] \"ping\""), "{text}");
    }

    /// Deeply nested documents made the libraries' recursion overflow a 2 MB
    /// thread stack (the listener's executor thread has one) and abort the
    /// process; they now stop with the libraries' own errors.
    #[test]
    fn hostile_nesting_is_refused_not_a_crash() {
        let run = || {
            let mut s = Server::new();
            let cases = [
                (
                    "return cmsgpack.unpack(string.rep('\\145', 100000) .. '\\1')",
                    "stack overflow (in function mp_decode_to_lua_array)",
                ),
                (
                    "return cmsgpack.unpack(string.rep('\\129\\1', 100000) .. '\\1')",
                    "stack overflow (too many return values at once; use unpack_one or unpack_limit instead.)",
                ),
                (
                    "local j = cjson.new() j.decode_max_depth(100000) return j.decode(string.rep('[', 100000))",
                    "Found too many nested data structures (1001) at character 1001",
                ),
                (
                    "local j = cjson.new() j.encode_max_depth(100000) local t = {} t[1] = t return j.encode(t)",
                    "Cannot serialise, excessive nesting (1001)",
                ),
                (
                    "local t = {} t[1] = t return cjson.encode(t)",
                    "Cannot serialise, excessive nesting (1001)",
                ),
            ];
            for (script, want) in cases {
                let r = eval(&mut s, script, &["0"]);
                let Reply::Error(text) = &r else {
                    panic!("{script}: {r:?}")
                };
                assert!(text.contains(want), "{script}: {text}");
            }
            // A reply nested past the limit ends in Redis's stack error.
            let r = eval(
                &mut s,
                "local a = {} local b = {a} a[1] = b return a",
                &["0"],
            );
            let mut depth = 0;
            let mut at = &r;
            while let Reply::Array(items) = at {
                depth += 1;
                at = &items[0];
            }
            assert_eq!(at, &Reply::error("ERR reached lua stack limit"));
            assert!(depth > 100, "{depth}");
        };
        // The listener's executor thread has 16 MB; 2 MB (std's default) was
        // enough in release builds but not in debug ones.
        std::thread::Builder::new()
            .stack_size(16 << 20)
            .spawn(run)
            .unwrap()
            .join()
            .unwrap();
    }

    /// Stock Lua 5.1.5's unpack overflowed on these ranges and took the
    /// server down (a segfault under the Tcl suite).
    #[test]
    fn unpack_refuses_ranges_past_the_stack_like_redis() {
        let mut s = Server::new();
        for range in ["-2, 2147483647", "0, 2147483647", "-2147483648, -2"] {
            let r = eval(
                &mut s,
                &format!("return {{unpack({{1,2,3}}, {range})}}"),
                &["0"],
            );
            let Reply::Error(text) = r else {
                panic!("{range}: {r:?}")
            };
            assert!(
                text.contains("user_script:1: too many results to unpack"),
                "{text}"
            );
        }
        assert_eq!(
            eval(&mut s, "return {unpack({1,2,3}, -1, -2)}", &["0"]),
            Reply::Array(vec![])
        );
        assert_eq!(
            eval(
                &mut s,
                "local a = {} for i=1,7999 do a[i] = 1 end return select('#', unpack(a))",
                &["0"]
            ),
            Reply::Integer(7999)
        );
    }

    #[test]
    fn the_clock_is_frozen_during_a_script() {
        let mut s = Server::new();
        let r = eval(
            &mut s,
            "redis.call('set','k','v','px',1) \
             local t = os.clock() while os.clock() - t < 0.01 do end \
             return redis.call('exists','k')",
            &["0"],
        );
        assert_eq!(r, Reply::Integer(1));
        std::thread::sleep(std::time::Duration::from_millis(2));
        assert_eq!(s.cmd(&["EXISTS", "k"]), Reply::Integer(0));
    }
}
