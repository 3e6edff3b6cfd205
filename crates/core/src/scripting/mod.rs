//! Lua scripting as Redis 8.6.3 has it: EVAL's Lua 5.1 dialect on an embedded Lua.
//!
//! What is modelled, and why:
//!
//! * **One Lua state per server**, scripts compiled once and kept by the SHA1 of
//!   their body (`SCRIPT LOAD`, `EVALSHA`), EVAL-created scripts evicted beyond
//!   500 like Redis's LRU; `SCRIPT FLUSH` starts a fresh state.
//! * **Atomicity**: a script runs inside one [`crate::Server::execute`], and its
//!   `redis.call`s execute on the same server, so nothing interleaves, exactly as
//!   on Redis's main thread. Blocking commands do not block inside a script (a
//!   BZPOPMIN on an empty key answers at once, which Lua sees as `false`).
//! * **Redis's dialect** (see `prelude.lua`): `KEYS`/`ARGV`, `redis.call` and
//!   `redis.pcall`, the reply conversions of [`convert`], `redis.error_reply`,
//!   `redis.status_reply`, `redis.sha1hex`, `redis.log` (checked, then dropped),
//!   `redis.setresp(2)`, `redis.set_repl`, Redis's `pcall` (which returns an error
//!   table's message), and `math.random` on Redis's rand48 ([`rand48`]).
//! * **The sandbox**: globals are read-only ("Attempt to modify a readonly
//!   table"), unknown globals raise "Script attempted to access nonexistent
//!   global variable", library tables are read-only too; `os` has only `clock`;
//!   `io`, `package`/`require`, `print`, `dofile`, `loadfile`, `debug`,
//!   `setfenv`/`getfenv`/`newproxy` are absent, as on Redis.
//! * **Errors** worded as Redis words them, including the
//!   `script: <sha>, on @user_script:<line>.` suffix of a failed run.
//!
//! * **A script that runs too long** ([`busy`]): past `busy-reply-threshold` the
//!   Lua hook lets the transport answer other clients `-BUSY`, and SCRIPT KILL
//!   or SHUTDOWN NOSAVE stop it.
//!
//! Left out: the `cjson`, `cmsgpack`, `struct` and `bit` libraries; RESP3
//! (`redis.setresp(3)` raises an error); `redis.acl_check_cmd`; `SCRIPT DEBUG`;
//! the frozen clock of a running script (keys here expire against the wall clock
//! even mid-script).
//! Stock Lua has no read-only tables, so the protection is by proxy tables:
//! `rawget(_G, name)` and `pairs` over a library table see the empty proxies.

pub mod busy;
pub mod convert;
pub mod rand48;

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use mlua::{Function, Lua, LuaOptions, LuaString, MultiValue, StdLib, Table, Value};

use crate::reply::Reply;
use rand48::Rand48;

const PRELUDE: &str = include_str!("prelude.lua");

/// Scripts created by EVAL beyond this many evict the least recently used one.
pub const EVAL_SCRIPTS_KEPT: usize = 500;

/// The Redis release whose behaviour the scripts see (`redis.REDIS_VERSION`).
const REDIS_VERSION: &str = "8.6.3";
const REDIS_VERSION_NUM: i64 = 0x0008_0603;

/// Executes one `redis.call` for a running script: the reply, or the text of
/// Redis's refusal (unknown command, arity, not allowed from scripts, ...).
pub type CommandFn<'a> = dyn FnMut(&[Vec<u8>]) -> Result<Reply, String> + 'a;

/// Flags a script declares in a `#!lua flags=...` shebang.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ScriptFlags {
    /// No shebang: the pre-7.0 behaviour (flags are not checked).
    pub compat: bool,
    pub no_writes: bool,
}

struct Script {
    function: Function,
    flags: ScriptFlags,
    /// Created by EVAL (evictable), not by SCRIPT LOAD.
    from_eval: bool,
}

/// The Lua state and the script cache.
pub struct Engine {
    lua: Lua,
    env: Table,
    visible: Table,
    redis: Table,
    bind: Function,
    run: Function,
    scripts: HashMap<String, Script>,
    /// SHAs of EVAL-created scripts, least recently used first.
    lru: VecDeque<String>,
    rand: Arc<Mutex<Rand48>>,
    watch: busy::SharedWatch,
}

impl Engine {
    pub fn new() -> Engine {
        Engine::watched(busy::ScriptWatch::shared())
    }

    /// An engine whose scripts report to `watch` (the server's busy-script
    /// bookkeeping).
    pub fn watched(watch: busy::SharedWatch) -> Engine {
        Engine::with_rand(Arc::new(Mutex::new(Rand48::default())), watch)
    }

    fn with_rand(rand: Arc<Mutex<Rand48>>, watch: busy::SharedWatch) -> Engine {
        Engine::build(rand, watch).expect("the scripting prelude loads")
    }

    fn build(rand: Arc<Mutex<Rand48>>, watch: busy::SharedWatch) -> mlua::Result<Engine> {
        let libs = StdLib::TABLE | StdLib::STRING | StdLib::MATH | StdLib::OS | StdLib::DEBUG;
        // SAFETY: the debug library is needed by the error handler; the prelude
        // keeps it in a local and scripts never see it.
        let lua = unsafe { Lua::unsafe_new_with(libs, LuaOptions::new()) };
        let prim = lua.create_table()?;
        prim.set("version", REDIS_VERSION)?;
        prim.set("version_num", REDIS_VERSION_NUM)?;
        prim.set(
            "sha1hex",
            lua.create_function(|lua, args: MultiValue| {
                if args.len() != 1 {
                    return Err(raise("ERR wrong number of arguments", false));
                }
                let v = args.into_iter().next().unwrap_or(Value::Nil);
                let bytes = match &v {
                    Value::String(s) => s.as_bytes().to_vec(),
                    Value::Integer(_) | Value::Number(_) => lua
                        .coerce_string(v.clone())?
                        .map(|s| s.as_bytes().to_vec())
                        .unwrap_or_default(),
                    _ => Vec::new(),
                };
                Ok(sha1_hex(&bytes))
            })?,
        )?;
        prim.set(
            "error_text",
            lua.create_function(|_, s: LuaString| Ok(convert::error_text(&s.to_string_lossy())))?,
        )?;
        prim.set(
            "error_value",
            lua.create_function(|lua, v: Value| match &v {
                Value::Error(e) => match e.downcast_ref::<Raised>() {
                    Some(r) => r.value(lua),
                    None => Ok(Value::String(lua.create_string(e.to_string())?)),
                },
                other => Ok(other.clone()),
            })?,
        )?;
        prim.set(
            "raise",
            lua.create_function(|_, text: LuaString| -> mlua::Result<()> {
                Err(raise(&text.to_string_lossy(), false))
            })?,
        )?;
        prim.set(
            "raise_string",
            lua.create_function(|_, text: LuaString| -> mlua::Result<()> {
                Err(mlua::Error::external(Raised {
                    text: text.to_string_lossy(),
                    ignore_stats: false,
                    plain: true,
                }))
            })?,
        )?;
        prim.set(
            "c_function",
            lua.create_function(|lua, f: Function| {
                lua.create_function(move |_, args: MultiValue| f.call::<MultiValue>(args))
            })?,
        )?;
        let r = rand.clone();
        prim.set(
            "lrand48",
            lua.create_function(move |_, ()| Ok(r.lock().map(|mut g| g.draw()).unwrap_or(0)))?,
        )?;
        let r = rand.clone();
        prim.set(
            "srand48",
            lua.create_function(move |_, seed: i64| {
                if let Ok(mut g) = r.lock() {
                    g.seed(seed as i32);
                }
                Ok(())
            })?,
        )?;
        let api: Table = lua.load(PRELUDE).set_name("@redislab_prelude").call(prim)?;
        // Every 100,000 instructions, as Redis's `luaMaskCountHook`.
        let hook_watch = watch.clone();
        lua.set_hook(
            mlua::HookTriggers::new().every_nth_instruction(100_000),
            move |_, _| {
                let verdict = match hook_watch.lock() {
                    Ok(mut w) => w.check(),
                    Err(_) => Ok(()),
                };
                match verdict {
                    Ok(()) => Ok(mlua::VmState::Continue),
                    Err(text) => Err(raise(text, false)),
                }
            },
        )?;
        Ok(Engine {
            env: api.get("env")?,
            visible: api.get("visible")?,
            redis: api.get("redis")?,
            bind: api.get("bind")?,
            run: api.get("run")?,
            lua,
            scripts: HashMap::new(),
            lru: VecDeque::new(),
            rand,
            watch,
        })
    }

    /// SCRIPT FLUSH: every script forgotten, a fresh Lua state. (The random
    /// generator is C state in Redis and survives.)
    pub fn flush(&mut self) {
        *self = Engine::with_rand(self.rand.clone(), self.watch.clone());
    }

    pub fn exists(&self, sha: &[u8]) -> bool {
        sha.len() == 40
            && self
                .scripts
                .contains_key(&String::from_utf8_lossy(sha).to_ascii_lowercase())
    }

    /// Compiles `body` unless a script with its SHA is known; returns the SHA.
    /// Errors are the whole reply Redis would send.
    pub fn create(&mut self, body: &[u8], from_eval: bool) -> Result<String, Reply> {
        let sha = sha1_hex(body);
        if self.scripts.contains_key(&sha) {
            return Ok(sha);
        }
        let (flags, shebang_len) =
            parse_shebang(body).map_err(|e| Reply::error(format!("ERR {e}")))?;
        let code = &body[shebang_len..];
        let function = self
            .lua
            .load(code)
            .set_name("@user_script")
            .into_function()
            .map_err(|e| {
                let msg = match e {
                    mlua::Error::SyntaxError { message, .. } => message,
                    other => other.to_string(),
                };
                Reply::error(convert::one_line(&format!(
                    "ERR Error compiling script (new function): {msg}"
                )))
            })?;
        let function: Function = self
            .bind
            .call(function)
            .map_err(|e| Reply::error(format!("ERR {e}")))?;
        if from_eval {
            while self.lru.len() >= EVAL_SCRIPTS_KEPT {
                if let Some(old) = self.lru.pop_front() {
                    self.scripts.remove(&old);
                }
            }
            self.lru.push_back(sha.clone());
        }
        self.scripts.insert(
            sha.clone(),
            Script {
                function,
                flags,
                from_eval,
            },
        );
        Ok(sha)
    }

    /// The flags of a known script (`sha` lower case).
    pub fn flags(&self, sha: &str) -> Option<ScriptFlags> {
        self.scripts.get(sha).map(|s| s.flags)
    }

    /// Runs a known script. `command` executes one `redis.call` and returns the
    /// reply, or the error text of a call the script is not allowed to make.
    pub fn run(
        &mut self,
        sha: &str,
        keys: &[Vec<u8>],
        args: &[Vec<u8>],
        mut command: impl FnMut(&[Vec<u8>]) -> Result<Reply, String>,
    ) -> Reply {
        let Some(script) = self.scripts.get(sha) else {
            return Reply::error("NOSCRIPT No matching script. Please use EVAL.");
        };
        let function = script.function.clone();
        if script.from_eval {
            if let Some(pos) = self.lru.iter().position(|s| s == sha) {
                let s = self.lru.remove(pos).expect("position is valid");
                self.lru.push_back(s);
            }
        }
        let outcome = self.call(function, keys, args, &mut command);
        match outcome {
            Ok((true, value)) => convert::lua_to_reply(&value),
            Ok((false, err)) => failure_reply(&self.lua, sha, &err),
            Err(e) => Reply::error(convert::one_line(&format!(
                "ERR Error running script {sha}, {e}"
            ))),
        }
    }

    fn call(
        &self,
        function: Function,
        keys: &[Vec<u8>],
        args: &[Vec<u8>],
        command: &mut CommandFn,
    ) -> mlua::Result<(bool, Value)> {
        self.visible.raw_set("KEYS", self.string_array(keys)?)?;
        self.visible.raw_set("ARGV", self.string_array(args)?)?;
        let command = std::cell::RefCell::new(command);
        let result = self.lua.scope(|scope| {
            let call = scope.create_function(|lua, argv: MultiValue| {
                let mut command = command
                    .try_borrow_mut()
                    .map_err(|_| mlua::Error::RecursiveMutCallback)?;
                match redis_call(lua, argv, &mut **command)? {
                    Ok(value) => Ok(value),
                    Err(raised) => Err(mlua::Error::external(raised)),
                }
            })?;
            let pcall = scope.create_function(|lua, argv: MultiValue| {
                let mut command = command
                    .try_borrow_mut()
                    .map_err(|_| mlua::Error::RecursiveMutCallback)?;
                match redis_call(lua, argv, &mut **command)? {
                    Ok(value) => Ok(value),
                    Err(raised) => Ok(Value::Table(raised.table(lua)?)),
                }
            })?;
            self.redis.raw_set("call", call)?;
            self.redis.raw_set("pcall", pcall)?;
            let (ok, value): (bool, Value) = self.run.call(function)?;
            Ok((ok, value))
        });
        self.redis.raw_set("call", Value::Nil)?;
        self.redis.raw_set("pcall", Value::Nil)?;
        result
    }

    fn string_array(&self, items: &[Vec<u8>]) -> mlua::Result<Table> {
        let t = self.lua.create_table_with_capacity(items.len(), 0)?;
        for (i, item) in items.iter().enumerate() {
            t.raw_set(i + 1, self.lua.create_string(item)?)?;
        }
        Ok(t)
    }

    /// The environment scripts are bound to (for tests).
    pub fn env(&self) -> &Table {
        &self.env
    }
}

impl Default for Engine {
    fn default() -> Engine {
        Engine::new()
    }
}

/// An error raised into Lua by a Rust function: the `{err=...}` table Redis
/// raises, carried through mlua as an external error and turned back into the
/// table by the error handler and by `pcall`.
#[derive(Debug, Clone)]
pub struct Raised {
    pub text: String,
    /// Redis marks errors of commands (already counted in the error stats).
    pub ignore_stats: bool,
    /// A plain message (luaL_error), not an `{err=...}` table.
    pub plain: bool,
}

impl Raised {
    /// The Lua error value Redis would have raised.
    fn value(&self, lua: &Lua) -> mlua::Result<Value> {
        if self.plain {
            Ok(Value::String(lua.create_string(&self.text)?))
        } else {
            Ok(Value::Table(self.table(lua)?))
        }
    }

    fn table(&self, lua: &Lua) -> mlua::Result<Table> {
        let t = convert::error_table(lua, &self.text)?;
        if self.ignore_stats {
            t.raw_set("ignore_error_stats_update", true)?;
        }
        Ok(t)
    }
}

impl std::fmt::Display for Raised {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

impl std::error::Error for Raised {}

fn raise(text: &str, ignore_stats: bool) -> mlua::Error {
    mlua::Error::external(Raised {
        text: text.into(),
        ignore_stats,
        plain: false,
    })
}

/// One `redis.call`/`redis.pcall`: the converted reply, or the error to raise
/// (call) or return (pcall).
fn redis_call(
    lua: &Lua,
    argv: MultiValue,
    command: &mut CommandFn,
) -> mlua::Result<Result<Value, Raised>> {
    let refuse = |text: &str| {
        Ok(Err(Raised {
            text: text.into(),
            ignore_stats: false,
            plain: false,
        }))
    };
    if argv.is_empty() {
        return refuse("ERR Please specify at least one argument for this redis lib call");
    }
    let mut args = Vec::with_capacity(argv.len());
    for v in argv.iter() {
        match convert::lua_to_arg(v) {
            Some(a) => args.push(a),
            None => {
                return refuse("ERR Lua redis lib command arguments must be strings or integers")
            }
        }
    }
    let (text, ignore_stats) = match command(&args) {
        Ok(Reply::Error(text)) => (convert::error_text(&format!("-{text}")), true),
        Ok(reply) => return Ok(Ok(convert::reply_to_lua(lua, &reply)?)),
        Err(refusal) => (convert::error_text(&refusal), true),
    };
    Ok(Err(Raised {
        text,
        ignore_stats,
        plain: false,
    }))
}

/// The reply for a script that raised an error (`luaCallFunction`).
fn failure_reply(lua: &Lua, sha: &str, err: &Value) -> Reply {
    let Value::Table(t) = err else {
        return Reply::error(format!("ERR Error running script {sha}, execution failure"));
    };
    let text_of = |name: &str| -> Option<String> {
        let v: Value = t.raw_get(name).ok()?;
        match v {
            Value::String(s) => Some(s.to_string_lossy()),
            Value::Integer(_) | Value::Number(_) => {
                lua.coerce_string(v).ok()?.map(|s| s.to_string_lossy())
            }
            _ => None,
        }
    };
    let mut text = text_of("err").unwrap_or_else(|| "ERR unknown error".into());
    if let (Some(source), Some(line)) = (text_of("source"), text_of("line")) {
        text.push_str(&format!(" script: {sha}, on {source}:{line}."));
    }
    Reply::Error(convert::one_line(&text))
}

/// Lower-case hex SHA1, as `sha1hex` (src/eval.c).
pub fn sha1_hex(bytes: &[u8]) -> String {
    sha1_smol::Sha1::from(bytes).digest().to_string()
}

/// `evalExtractShebangFlags`: the flags of a `#!lua` first line and its length
/// (the line feed stays, so line numbers do not move).
pub fn parse_shebang(body: &[u8]) -> Result<(ScriptFlags, usize), String> {
    if !body.starts_with(b"#!") {
        return Ok((
            ScriptFlags {
                compat: true,
                no_writes: false,
            },
            0,
        ));
    }
    let Some(end) = body.iter().position(|&b| b == b'\n') else {
        return Err("Invalid script shebang".into());
    };
    let line = String::from_utf8_lossy(&body[..end]);
    let parts: Vec<&str> = line.split_ascii_whitespace().collect();
    let Some(engine) = parts.first() else {
        return Err("Invalid engine in script shebang".into());
    };
    if *engine != "#!lua" {
        return Err(format!("Unexpected engine in script shebang: {engine}"));
    }
    let mut flags = ScriptFlags::default();
    for part in &parts[1..] {
        let Some(list) = part.strip_prefix("flags=") else {
            return Err(format!("Unknown lua shebang option: {part}"));
        };
        for flag in list.split(',') {
            match flag {
                "no-writes" => flags.no_writes = true,
                "allow-oom" | "allow-stale" | "no-cluster" | "allow-cross-slot-keys" => {}
                other => return Err(format!("Unexpected flag in script shebang: {other}")),
            }
        }
    }
    Ok((flags, end))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha1_of_the_empty_script() {
        assert_eq!(sha1_hex(b""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
        assert_eq!(
            sha1_hex(b"return 1"),
            "e0e1f9fabfc9d4800c877a703b823ac0578ff8db"
        );
    }

    #[test]
    fn shebangs() {
        assert!(parse_shebang(b"return 1").unwrap().0.compat);
        let (f, len) = parse_shebang(b"#!lua flags=no-writes\nreturn 1").unwrap();
        assert!(f.no_writes && !f.compat);
        assert_eq!(len, 21);
        assert_eq!(
            parse_shebang(b"#!lua").unwrap_err(),
            "Invalid script shebang"
        );
        assert_eq!(
            parse_shebang(b"#!py\n").unwrap_err(),
            "Unexpected engine in script shebang: #!py"
        );
        assert_eq!(
            parse_shebang(b"#!lua flags=x\n").unwrap_err(),
            "Unexpected flag in script shebang: x"
        );
    }
}
