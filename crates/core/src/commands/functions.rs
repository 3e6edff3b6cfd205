//! FUNCTION LOAD / DELETE / FLUSH / LIST / STATS / KILL / DUMP / RESTORE /
//! HELP and FCALL / FCALL_RO (src/functions.c).
//!
//! The registry and the library code's run live in
//! [`crate::scripting::functions`]; this module parses the commands' arguments
//! in Redis's order and words the errors as Redis does. A function runs
//! through the same path as an EVAL script ([`crate::scripting::run`]), with
//! its registered flags (a function is never in the pre-7.0 compatibility
//! mode: without `no-writes` it counts as a writer).

use super::scripting::{engine, help_reply, numkeys, take_engine};
use super::{flags::*, Args, CmdResult, CommandSpec, Group, Server};
use crate::reply::{ErrorText, Reply};
use crate::scripting::busy::stats_reply;
use crate::scripting::functions::RestorePolicy;
use crate::scripting::run::{self, Target};
use crate::scripting::Engine;
use crate::server::client::Client;

const FCALL_SYNTAX: &str = "function numkeys [key [key ...]] [arg [arg ...]]";

pub const COMMANDS: &[CommandSpec] = &[
    CommandSpec::client("fcall", -3, fcall)
        .flags(NOSCRIPT | SKIP_MONITOR | MAY_REPLICATE | NO_MANDATORY_KEYS | STALE | MOVABLE_KEYS)
        .doc(
            "7.0.0",
            "Calls a function of a loaded library.",
            FCALL_SYNTAX,
        ),
    CommandSpec::client("fcall_ro", -3, fcall_ro)
        .flags(NOSCRIPT | SKIP_MONITOR | NO_MANDATORY_KEYS | STALE | READONLY | MOVABLE_KEYS)
        .doc(
            "7.0.0",
            "Calls a function declared with the no-writes flag.",
            FCALL_SYNTAX,
        ),
    CommandSpec::container("function", SUBCOMMANDS).doc(
        "7.0.0",
        "A container for the commands that manage function libraries.",
        "",
    ),
];

const SUBCOMMANDS: &[CommandSpec] = &[
    CommandSpec::new("delete", 3, function_delete)
        .flags(NOSCRIPT | WRITE)
        .group(Group::Scripting)
        .doc(
            "7.0.0",
            "Removes a library and its functions.",
            "library-name",
        ),
    CommandSpec::new("dump", 2, function_dump)
        .flags(NOSCRIPT)
        .group(Group::Scripting)
        .doc(
            "7.0.0",
            "Serializes every library into a payload for FUNCTION RESTORE.",
            "",
        ),
    CommandSpec::new("flush", -2, function_flush)
        .flags(NOSCRIPT | WRITE)
        .group(Group::Scripting)
        .doc("7.0.0", "Removes every library.", "[ASYNC | SYNC]"),
    CommandSpec::new("help", 2, function_help)
        .flags(LOADING | STALE)
        .group(Group::Scripting)
        .doc("7.0.0", "Lists the FUNCTION subcommands.", ""),
    CommandSpec::new("kill", 2, function_kill)
        .flags(NOSCRIPT | ALLOW_BUSY)
        .group(Group::Scripting)
        .doc(
            "7.0.0",
            "Stops the function that is running, if it has not written.",
            "",
        ),
    CommandSpec::new("list", -2, function_list)
        .flags(NOSCRIPT)
        .group(Group::Scripting)
        .doc(
            "7.0.0",
            "Describes the loaded libraries and their functions.",
            "[LIBRARYNAME library-name-pattern] [WITHCODE]",
        ),
    CommandSpec::new("load", -3, function_load)
        .flags(NOSCRIPT | WRITE | DENYOOM)
        .group(Group::Scripting)
        .doc(
            "7.0.0",
            "Loads a library of functions from its code.",
            "[REPLACE] function-code",
        ),
    CommandSpec::new("restore", -3, function_restore)
        .flags(NOSCRIPT | WRITE | DENYOOM)
        .group(Group::Scripting)
        .doc(
            "7.0.0",
            "Loads the libraries of a FUNCTION DUMP payload.",
            "serialized-value [FLUSH | APPEND | REPLACE]",
        ),
    CommandSpec::new("stats", 2, function_stats)
        .flags(NOSCRIPT | ALLOW_BUSY)
        .group(Group::Scripting)
        .doc(
            "7.0.0",
            "Tells which function runs, if any, and counts the libraries.",
            "",
        ),
];

/// `addReplySubcommandSyntaxError`.
fn syntax_error(a: &Args) -> Reply {
    crate::server::table::subcommand_syntax_error("FUNCTION", a.bytes(1))
}

pub fn fcall(s: &mut Server, c: &mut Client, a: &Args) -> CmdResult {
    fcall_generic(s, c, a, false, "fcall")
}

pub fn fcall_ro(s: &mut Server, c: &mut Client, a: &Args) -> CmdResult {
    fcall_generic(s, c, a, true, "fcall_ro")
}

/// `fcallCommandGeneric`.
fn fcall_generic(
    s: &mut Server,
    c: &mut Client,
    a: &Args,
    ro: bool,
    fullname: &'static str,
) -> CmdResult {
    // The function is fed to MONITOR before the commands it runs.
    s.feed_monitors(c, a.all());
    let mut engine = take_engine(s)?;
    let result = call_function(s, &mut engine, a, ro, fullname);
    s.scripting = Some(engine);
    result
}

fn call_function(
    s: &mut Server,
    engine: &mut Engine,
    a: &Args,
    ro: bool,
    fullname: &'static str,
) -> CmdResult {
    let functions = &engine.functions;
    let Some(f) = functions.find(a.bytes(1)) else {
        return Err(Reply::error("ERR Function not found"));
    };
    let numkeys = numkeys(a, "ERR Bad number of keys provided")?;
    let Some(function) = functions.callback(f) else {
        return Err(Reply::error("ERR Function not found"));
    };
    let target = Target {
        function,
        flags: f.flags,
        name: f.name.clone(),
        eval: false,
        libraries: functions.library_count(),
        functions: functions.function_count(),
    };
    run::run(s, &functions.vm, target, a, numkeys, ro, fullname)
}

fn function_load(s: &mut Server, a: &Args) -> CmdResult {
    let mut replace = false;
    let mut at = 2;
    while at < a.len() - 1 {
        if a.is(at, "replace") {
            replace = true;
            at += 1;
            continue;
        }
        return Err(Reply::Error(ErrorText::naming(
            "ERR Unknown option given: ",
            a.bytes(at),
            "",
        )));
    }
    if at >= a.len() {
        return Err(Reply::error("ERR Function code is missing"));
    }
    let name = engine(s)?
        .functions
        .load(a.bytes(at), replace)
        .map_err(|e| Reply::error(crate::scripting::convert::one_line(&format!("ERR {e}"))))?;
    Ok(Reply::bulk(name))
}

fn function_delete(s: &mut Server, a: &Args) -> CmdResult {
    if engine(s)?.functions.delete(a.bytes(2)) {
        Ok(Reply::ok())
    } else {
        Err(Reply::error("ERR Library not found"))
    }
}

fn function_flush(s: &mut Server, a: &Args) -> CmdResult {
    if a.len() > 3 {
        return Err(syntax_error(a));
    }
    let ok = a.len() == 2 || a.is(2, "sync") || a.is(2, "async");
    if !ok {
        return Err(Reply::error(
            "ERR FUNCTION FLUSH only supports SYNC|ASYNC option",
        ));
    }
    engine(s)?.flush_functions();
    Ok(Reply::ok())
}

fn function_list(s: &mut Server, a: &Args) -> CmdResult {
    let mut with_code = false;
    let mut pattern: Option<&[u8]> = None;
    let mut i = 2;
    while i < a.len() {
        if !with_code && a.is(i, "withcode") {
            with_code = true;
            i += 1;
            continue;
        }
        if pattern.is_none() && a.is(i, "libraryname") {
            if i >= a.len() - 1 {
                return Err(Reply::error("ERR library name argument was not given"));
            }
            pattern = Some(a.bytes(i + 1));
            i += 2;
            continue;
        }
        return Err(Reply::Error(ErrorText::naming(
            "ERR Unknown argument ",
            a.bytes(i),
            "",
        )));
    }
    Ok(engine(s)?.functions.list(pattern, with_code))
}

fn function_stats(s: &mut Server, _: &Args) -> CmdResult {
    let functions = &engine(s)?.functions;
    Ok(stats_reply(
        Reply::Nil,
        functions.library_count(),
        functions.function_count(),
    ))
}

fn function_kill(_: &mut Server, _: &Args) -> CmdResult {
    // A function running in this server holds it: from here none is running.
    Err(Reply::error("NOTBUSY No scripts in execution right now."))
}

fn function_dump(s: &mut Server, _: &Args) -> CmdResult {
    let compress = crate::rdb::Options::of(&s.config).compress;
    Ok(Reply::bulk_vec(engine(s)?.functions.dump(compress)))
}

fn function_restore(s: &mut Server, a: &Args) -> CmdResult {
    if a.len() > 4 {
        return Err(syntax_error(a));
    }
    let policy = if a.len() == 4 {
        if a.is(3, "append") {
            RestorePolicy::Append
        } else if a.is(3, "replace") {
            RestorePolicy::Replace
        } else if a.is(3, "flush") {
            RestorePolicy::Flush
        } else {
            return Err(Reply::error(
                "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE.",
            ));
        }
    } else {
        RestorePolicy::Append
    };
    engine(s)?
        .functions
        .restore(a.bytes(2), policy)
        .map_err(|e| Reply::error(crate::scripting::convert::one_line(&format!("ERR {e}"))))?;
    Ok(Reply::ok())
}

fn function_help(_: &mut Server, _: &Args) -> CmdResult {
    Ok(help_reply("FUNCTION", FUNCTION_HELP))
}

const FUNCTION_HELP: &[&str] = &[
    "LOAD [REPLACE] <FUNCTION CODE>",
    "    Create a new library with the given library name and code.",
    "DELETE <LIBRARY NAME>",
    "    Delete the given library.",
    "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
    "    Return general information on all the libraries:",
    "    * Library name",
    "    * The engine used to run the Library",
    "    * Functions list",
    "    * Library code (if WITHCODE is given)",
    "    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
    "STATS",
    "    Return information about the current function running:",
    "    * Function name",
    "    * Command used to run the function",
    "    * Duration in MS that the function is running",
    "    If no function is running, return nil",
    "    In addition, returns a list of available engines.",
    "KILL",
    "    Kill the current running function.",
    "FLUSH [ASYNC|SYNC]",
    "    Delete all the libraries.",
    "    When called without the optional mode argument, the behavior is determined by the",
    "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
    "    * ASYNC: Asynchronously flush the libraries.",
    "    * SYNC: Synchronously flush the libraries.",
    "DUMP",
    "    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
    "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
    "    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
    "    control how to handle existing libraries (default APPEND):",
    "    * FLUSH: delete all existing libraries.",
    "    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
    "    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
    "      libraries with the new libraries (notice that even on this option there is a chance of failure",
    "      in case of functions name collision with another library).",
];

#[cfg(test)]
mod tests {
    use crate::{Reply, Server};

    const LIB: &str = "#!lua name=mylib\n\
        redis.register_function('hello', function(keys, args) return 'hi ' .. (args[1] or '') end)\n\
        redis.register_function{function_name='ro', callback=function(keys) return redis.call('get', keys[1]) end, flags={'no-writes'}, description='reads'}\n\
        redis.register_function('put', function(keys, args) return redis.call('set', keys[1], args[1]) end)";

    #[test]
    fn load_call_list_delete() {
        let mut s = Server::new();
        assert_eq!(s.cmd(&["FUNCTION", "LOAD", LIB]), Reply::bulk("mylib"));
        assert_eq!(
            s.cmd(&["FCALL", "HELLO", "0", "you"]),
            Reply::bulk("hi you")
        );
        assert_eq!(s.cmd(&["FCALL", "put", "1", "k", "v"]), Reply::ok());
        assert_eq!(s.cmd(&["FCALL_RO", "ro", "1", "k"]), Reply::bulk("v"));
        assert_eq!(
            s.cmd(&["FCALL_RO", "put", "1", "k", "v"]),
            Reply::error("ERR Can not execute a script with write flag using *_ro command.")
        );
        assert_eq!(
            s.cmd(&["FCALL", "nope", "0"]),
            Reply::error("ERR Function not found")
        );
        assert_eq!(
            s.cmd(&["FCALL", "hello", "x"]),
            Reply::error("ERR Bad number of keys provided")
        );
        let Reply::Array(libs) = s.cmd(&["FUNCTION", "LIST", "LIBRARYNAME", "MY*"]) else {
            panic!()
        };
        assert_eq!(libs.len(), 1);
        assert_eq!(
            s.cmd(&["FUNCTION", "LIST", "bogus"]),
            Reply::error("ERR Unknown argument bogus")
        );
        assert_eq!(s.cmd(&["FUNCTION", "DELETE", "mylib"]), Reply::ok());
        assert_eq!(
            s.cmd(&["FUNCTION", "DELETE", "mylib"]),
            Reply::error("ERR Library not found")
        );
    }

    #[test]
    fn function_errors_name_the_function() {
        let mut s = Server::new();
        let lib =
            "#!lua name=t\nredis.register_function('e', function(keys, args) return KEYS end)";
        s.cmd(&["FUNCTION", "LOAD", lib]);
        assert_eq!(
            s.cmd(&["FCALL", "e", "0"]),
            Reply::error("ERR user_function:2: Script attempted to access nonexistent global variable 'KEYS' script: e, on @user_function:2.")
        );
        assert_eq!(
            s.cmd(&["FUNCTION", "LOAD", "#!lua name=u\nredis.register_function('f', function() return redis.register_function('g', function() end) end)"]),
            Reply::bulk("u")
        );
        assert_eq!(
            s.cmd(&["FCALL", "f", "0"]),
            Reply::error("ERR user_function:2: attempt to call field 'register_function' (a nil value) script: f, on @user_function:2.")
        );
    }

    #[test]
    fn dump_restore_flush_stats() {
        let mut s = Server::new();
        s.cmd(&["FUNCTION", "LOAD", LIB]);
        let Reply::Bulk(payload_bytes) = s.cmd(&["FUNCTION", "DUMP"]) else {
            panic!()
        };
        let payload = payload_bytes.into_vec();
        assert_eq!(s.cmd(&["FUNCTION", "FLUSH", "ASYNC"]), Reply::ok());
        let restore = |s: &mut Server, policy: &[&str]| {
            let mut argv = vec![b"FUNCTION".to_vec(), b"RESTORE".to_vec(), payload.clone()];
            argv.extend(policy.iter().map(|p| p.as_bytes().to_vec()));
            s.run(&argv)
        };
        assert_eq!(restore(&mut s, &[]), Reply::ok());
        assert_eq!(
            restore(&mut s, &[]),
            Reply::error("ERR Library mylib already exists")
        );
        assert_eq!(restore(&mut s, &["REPLACE"]), Reply::ok());
        assert_eq!(
            restore(&mut s, &["bogus"]),
            Reply::error(
                "ERR Wrong restore policy given, value should be either FLUSH, APPEND or REPLACE."
            )
        );
        assert_eq!(
            s.cmd(&["FUNCTION", "STATS"]),
            crate::scripting::busy::stats_reply(Reply::Nil, 1, 3)
        );
        assert_eq!(
            s.cmd(&["FUNCTION", "FLUSH", "a", "b"]),
            Reply::error("ERR unknown subcommand or wrong number of arguments for 'FLUSH'. Try FUNCTION HELP.")
        );
    }
}
