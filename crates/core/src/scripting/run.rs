//! Running a script or a function against the server (src/script.c):
//! `scriptPrepareForRun` (the checks a script's flags call for before it
//! starts), `scriptCall` (the gate every `redis.call` passes before it reaches
//! the command table), and the bookkeeping around a run: the script's own
//! client (its own database selection and RESP version), the busy watch, the
//! frozen clock, and the reply with its error statistics.
//!
//! Error statistics follow Redis's rules: a `redis.call` that is refused
//! (unknown command, wrong arity, not allowed, read-only script, OOM,
//! NOREPLICAS) counts its error and a rejected call of that command; a command
//! that fails counts itself; the script's own reply then does not count those
//! errors again (`ignore_error_stats_update`) but still counts the script's
//! command as failed, while an error the script makes up (`error_reply`,
//! `error()`, a Lua runtime error) is counted as any error reply.

use mlua::{Function, Value};

use super::busy::{self, RunInfo};
use super::clock::Freeze;
use super::convert::{self, Tally};
use super::vm::Vm;
use super::ScriptFlags;
use crate::commands::{Args, CmdResult};
use crate::reply::{ErrorText, Protocol, Reply};
use crate::server::client::{Client, ConnectInfo, SCRIPT_CLIENT_ID};
use crate::server::table::{self, flags, Found};
use crate::Server;

/// The script a command runs.
pub(crate) struct Target {
    pub function: Function,
    pub flags: ScriptFlags,
    /// The script's SHA, or the function's name.
    pub name: String,
    /// EVAL (as opposed to FCALL).
    pub eval: bool,
    /// Libraries and functions, for FUNCTION STATS while it runs.
    pub libraries: usize,
    pub functions: usize,
}

/// What `scriptCall` checks against, fixed when the script starts.
struct Gate {
    read_only: bool,
    allow_oom: bool,
    /// `server.pre_command_oom_state`: over maxmemory when the script started.
    oom: bool,
    deny_disabled: bool,
    wrote: bool,
}

/// `checkGoodReplicasStatus`: with `min-replicas-to-write` set, writes need
/// that many replicas, and the core has none.
pub(crate) fn good_replicas(s: &Server) -> bool {
    let get = |name: &str| {
        s.config
            .others
            .get(name)
            .and_then(|v| v.trim().parse::<i64>().ok())
            .unwrap_or(0)
    };
    get("min-replicas-to-write") == 0 || get("min-replicas-max-lag") == 0
}

const NOREPLICAS: &str = "NOREPLICAS Not enough good replicas to write.";

/// `scriptPrepareForRun`'s refusals.
fn prepare(s: &Server, flags: ScriptFlags, ro: bool) -> Result<(), Reply> {
    if flags.compat {
        return Ok(());
    }
    if !flags.no_writes {
        if ro {
            return Err(Reply::error(
                "ERR Can not execute a script with write flag using *_ro command.",
            ));
        }
        if !good_replicas(s) {
            return Err(Reply::error(NOREPLICAS));
        }
    }
    if s.over_maxmemory() && !flags.allow_oom && !flags.no_writes {
        return Err(Reply::error(
            "OOM allow-oom flag is not set on the script, can not run it when used memory > 'maxmemory'",
        ));
    }
    Ok(())
}

/// Runs `target` for the command in `a` (`numkeys` keys after argument 2),
/// answering as the command; `fullname` is the command's name in the stats.
pub(crate) fn run(
    s: &mut Server,
    vm: &Vm,
    target: Target,
    a: &Args,
    numkeys: usize,
    ro: bool,
    fullname: &'static str,
) -> CmdResult {
    prepare(s, target.flags, ro)?;
    let argv = a.all();
    let keys = &argv[3..3 + numkeys];
    let args = &argv[3 + numkeys..];
    let mut gate = Gate {
        read_only: ro || (!target.flags.compat && target.flags.no_writes),
        allow_oom: !target.flags.compat && target.flags.allow_oom,
        oom: s.over_maxmemory(),
        deny_disabled: s.lock_watch().deny_scripts_disabled,
        wrote: false,
    };
    // The script's commands run as Redis's Lua client: its own database
    // selection (a SELECT inside the script does not change the caller's).
    let caller_db = s.current_db();
    let mut client = Client::new(SCRIPT_CLIENT_ID, ConnectInfo::in_process());
    client.db = caller_db;
    let threshold = s.config.busy_reply_threshold;
    let caller = s.running_client();
    // From here until `end`, the server is reached only through this pointer:
    // by the script's calls, and by the busy hook between two Lua instructions
    // (see `busy::ServerPtr`).
    let sp: *mut Server = s;
    // SAFETY (every `&mut *sp` below): `sp` comes from the `&mut Server` this
    // function holds, which is not used until the script is over; the script's
    // calls and the hook never overlap (the hook runs between instructions).
    unsafe { &mut *sp }.lock_watch().begin(RunInfo {
        client: caller,
        threshold_ms: threshold,
        eval: target.eval,
        name: target.name.clone(),
        command: argv.to_vec(),
        libraries: target.libraries,
        functions: target.functions,
        server: Some(busy::ServerPtr(sp)),
    });
    let freeze = Freeze::now();
    let outcome = vm.call(&target.function, keys, args, &mut |call, resp3| {
        script_call(unsafe { &mut *sp }, &mut client, &mut gate, call, resp3)
    });
    drop(freeze);
    unsafe { &mut *sp }.lock_watch().end();
    s.switch_db(caller_db);
    let (reply, tally) = match outcome {
        Ok(Ok(value)) => convert::lua_to_reply(&value, vm.resp3()),
        Ok(Err(error)) => failure_reply(&target.name, &error),
        Err(e) => {
            let reply = Reply::error(convert::one_line(&format!(
                "ERR Error running script {}, {e}",
                target.name
            )));
            let tally = Tally {
                counted: vec![reply.clone()],
                already_counted: 0,
            };
            (reply, tally)
        }
    };
    finish(s, fullname, reply, tally)
}

/// The reply of a run, with Redis's error accounting: an error already counted
/// fails the command without counting again; other errors count (the top-level
/// one through the command's own failure).
fn finish(s: &mut Server, fullname: &'static str, reply: Reply, tally: Tally) -> CmdResult {
    if reply.is_error() {
        if tally.counted.is_empty() {
            s.stats.command(fullname).failed += 1;
            return Ok(reply);
        }
        return Err(reply);
    }
    if tally.already_counted > 0 {
        s.stats.command(fullname).failed += tally.already_counted;
    }
    if !tally.counted.is_empty() {
        for e in &tally.counted {
            s.stats.count_error(e);
        }
        s.stats.command(fullname).failed += 1;
    }
    Ok(reply)
}

/// The reply for a script that raised an error (`luaCallFunction`): the error
/// table's message and where it happened.
fn failure_reply(name: &str, err: &Value) -> (Reply, Tally) {
    let mut tally = Tally::default();
    let Value::Table(t) = err else {
        let reply = Reply::error(format!(
            "ERR Error running script {name}, execution failure"
        ));
        tally.counted.push(reply.clone());
        return (reply, tally);
    };
    let field = |k: &str| t.raw_get::<Value>(k).unwrap_or(Value::Nil);
    // Bytes, as Lua strings are: an error's text need not be UTF-8.
    let text_of = |v: Value| match v {
        Value::String(s) => Some(s.as_bytes().to_vec()),
        Value::Integer(n) => Some(n.to_string().into_bytes()),
        Value::Number(d) => Some(convert::lua_number_text(d).into_bytes()),
        _ => None,
    };
    let mut text = text_of(field("err")).unwrap_or_else(|| b"ERR unknown error".to_vec());
    if let (Some(source), Some(line)) = (text_of(field("source")), text_of(field("line"))) {
        text.extend_from_slice(format!(" script: {name}, on ").as_bytes());
        text.extend_from_slice(&source);
        text.push(b':');
        text.extend_from_slice(&line);
        text.push(b'.');
    }
    let reply = Reply::Error(ErrorText::one_line(text));
    if matches!(field("ignore_error_stats_update"), Value::Boolean(true)) {
        tally.already_counted = 1;
    } else {
        tally.counted.push(reply.clone());
    }
    (reply, tally)
}

/// A `redis.call` refused before it runs: the error counts, and so does a
/// rejected call of a known command (`scriptCall`'s `error:` path). `text` is
/// Redis's message, with its `-CODE ` when it has one.
fn refuse(s: &mut Server, fullname: Option<&'static str>, text: &str) -> Result<Reply, String> {
    let counted = match text.strip_prefix('-') {
        Some(t) => Reply::error(t),
        None => Reply::error(format!("ERR {text}")),
    };
    s.stats.count_error(&counted);
    if let Some(name) = fullname {
        s.stats.command(name).rejected += 1;
    }
    Err(text.to_string())
}

/// One `redis.call` from a script: Redis's checks (`scriptCall`), then the
/// command itself on the script's own client.
fn script_call(
    s: &mut Server,
    client: &mut Client,
    gate: &mut Gate,
    argv: &[Vec<u8>],
    resp3: bool,
) -> Result<Reply, String> {
    client.protocol = if resp3 {
        Protocol::Resp3
    } else {
        Protocol::Resp2
    };
    let Found::Command(spec, fullname) = table::resolve(argv) else {
        return refuse(s, None, "Unknown Redis command called from script");
    };
    if !spec.arity_ok(argv.len()) {
        return refuse(
            s,
            Some(fullname),
            "Wrong number of args calling Redis command from script",
        );
    }
    if !gate.deny_disabled && spec.has(flags::NOSCRIPT) {
        return refuse(
            s,
            Some(fullname),
            "This Redis command is not allowed from script",
        );
    }
    let writes = spec.has(flags::WRITE);
    if gate.read_only && (writes || spec.has(flags::MAY_REPLICATE)) {
        return refuse(
            s,
            Some(fullname),
            "Write commands are not allowed from read-only scripts.",
        );
    }
    if writes && !gate.wrote && !good_replicas(s) {
        return refuse(s, Some(fullname), &format!("-{NOREPLICAS}"));
    }
    if !gate.allow_oom && gate.oom && !gate.wrote && spec.has(flags::DENYOOM) {
        return refuse(
            s,
            Some(fullname),
            "-OOM command not allowed when used memory > 'maxmemory'.",
        );
    }
    if writes {
        gate.wrote = true;
        s.lock_watch().note_write();
    }
    Ok(s.call_nested(client, spec, fullname, argv))
}
