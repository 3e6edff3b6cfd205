//! One Lua state with Redis's dialect loaded: the state of EVAL scripts
//! (`lctx.lua` in src/eval.c) or the state of FUNCTION libraries (the Lua
//! engine's state in src/function_lua.c).
//!
//! The sandbox itself is Lua (`prelude.lua`); this module creates the state,
//! hands the prelude its primitives (written in Rust: `redis.sha1hex`,
//! `redis.acl_check_cmd`, `redis.register_function`, the `cjson`, `cmsgpack`,
//! `struct` and `bit` libraries, rand48, error plumbing), installs the
//! 100,000-instruction hook that watches for busy scripts, and runs a script
//! with `redis.call` / `redis.pcall` bound to the command executor of that run.
//!
//! How it differs from Redis's C: errors raised by Rust functions travel through
//! Lua as userdata ([`Raised`]) and are turned back into Redis's `{err=...}`
//! table or plain message wherever a script or the error handler sees them.

use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

use mlua::{Function, Lua, LuaOptions, LuaString, MultiValue, StdLib, Table, Value};

use super::busy::SharedWatch;
use super::convert;
use super::rand48::Rand48;
use super::{libs, ScriptFlags};
use crate::reply::Reply;

const PRELUDE: &str = include_str!("prelude.lua");

/// The Redis release whose behaviour the scripts see (`redis.REDIS_VERSION`).
const REDIS_VERSION: &str = "8.6.3";
const REDIS_VERSION_NUM: i64 = 0x0008_0603;

/// Executes one `redis.call` for a running script: the reply, or the text of
/// Redis's refusal (unknown command, arity, not allowed from scripts, ...), with
/// its `-CODE ` when it has one.
pub type CommandFn<'a> = dyn FnMut(&[Vec<u8>], bool) -> Result<Reply, String> + 'a;

/// Which of Redis's two Lua states this is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Eval,
    Function,
}

/// A function a library registered while it loaded.
pub struct Registered {
    pub name: String,
    pub description: Option<String>,
    pub flags: ScriptFlags,
    pub callback: Function,
}

/// The command executor of the run in progress, as `redis.call` reaches it.
///
/// `redis.call` and `redis.pcall` are permanent Rust functions (so a script
/// may keep them in a local, and a run creates no closures); they find the
/// run's executor here. The pointer is set by [`Vm::call`] for the duration of
/// the run only ([`RunGuard`] clears it, even on a panic), and the Lua state
/// runs on the thread that set it.
struct CommandPtr(*mut CommandFn<'static>);

// SAFETY: the pointer is only dereferenced while `Vm::call` (on the thread
// running the Lua state) holds the executor it points to.
unsafe impl Send for CommandPtr {}

/// State the Rust primitives share with the run in progress.
#[derive(Default)]
struct Shared {
    /// The RESP version of the running script's client (`redis.setresp`).
    resp: AtomicU8,
    /// The functions registered so far by the library being loaded.
    registering: Mutex<Option<Vec<Registered>>>,
    /// The running script's executor (see [`CommandPtr`]).
    command: Mutex<Option<CommandPtr>>,
    /// Runs and loads since the last garbage-collection step.
    since_gc: std::sync::atomic::AtomicU32,
}

/// Clears the run's executor when the run ends.
struct RunGuard<'a>(&'a Shared);

impl Drop for RunGuard<'_> {
    fn drop(&mut self) {
        *lock(&self.0.command) = None;
    }
}

/// Calls the running script's executor with `argv`, or raises if no script
/// runs (a `redis.call` kept past its run).
fn with_command(
    shared: &Shared,
    argv: &[Vec<u8>],
    resp3: bool,
) -> Result<Result<Reply, String>, mlua::Error> {
    let guard = lock(&shared.command);
    let Some(ptr) = guard.as_ref().map(|p| p.0) else {
        return Err(raise(
            "ERR redis.call can only be called while a script runs",
            false,
        ));
    };
    drop(guard);
    // SAFETY: see `CommandPtr`; no other reference to the executor is live
    // while the script runs Lua code.
    let command = unsafe { &mut *ptr };
    Ok(command(argv, resp3))
}

/// A Lua state with the sandbox loaded.
pub struct Vm {
    lua: Lua,
    mode: Mode,
    env: Table,
    visible: Table,
    bind: Function,
    run: Function,
    load_library: Function,
    gc_tick: Function,
    shared: Arc<Shared>,
}

/// The result of running a script: `Ok` with its return value or `Err` with the
/// error table (already through Redis's error handler).
pub type Outcome = Result<Value, Value>;

impl Vm {
    pub fn new(mode: Mode, rand: Arc<Mutex<Rand48>>, watch: SharedWatch) -> Vm {
        Vm::build(mode, rand, watch).expect("the scripting prelude loads")
    }

    fn build(mode: Mode, rand: Arc<Mutex<Rand48>>, watch: SharedWatch) -> mlua::Result<Vm> {
        let libs = StdLib::TABLE | StdLib::STRING | StdLib::MATH | StdLib::OS | StdLib::DEBUG;
        // SAFETY: the debug library is needed by the error handler; the prelude
        // keeps it in a local and scripts never see it.
        let lua = unsafe { Lua::unsafe_new_with(libs, LuaOptions::new()) };
        let shared = Arc::new(Shared {
            resp: AtomicU8::new(2),
            ..Shared::default()
        });
        let prim = lua.create_table()?;
        prim.set(
            "mode",
            match mode {
                Mode::Eval => "eval",
                Mode::Function => "function",
            },
        )?;
        prim.set("version", REDIS_VERSION)?;
        prim.set("version_num", REDIS_VERSION_NUM)?;
        prim.set("sha1hex", lua.create_function(sha1hex)?)?;
        prim.set(
            "error_text",
            lua.create_function(|lua, s: LuaString| {
                lua.create_string(convert::error_text(&s.as_bytes()))
            })?,
        )?;
        prim.set(
            "error_value",
            lua.create_function(|lua, v: Value| error_value(lua, v))?,
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
                Err(raise_plain(&text.to_string_lossy()))
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
        let r = rand;
        prim.set(
            "srand48",
            lua.create_function(move |_, seed: i64| {
                if let Ok(mut g) = r.lock() {
                    g.seed(seed as i32);
                }
                Ok(())
            })?,
        )?;
        let w = watch.clone();
        prim.set(
            "aborting",
            lua.create_function(move |_, ()| Ok(lock(&w).aborting()))?,
        )?;
        let sh = shared.clone();
        prim.set(
            "setresp",
            lua.create_function(move |_, n: u8| {
                sh.resp.store(n, Ordering::Relaxed);
                Ok(())
            })?,
        )?;
        prim.set("acl_check_cmd", lua.create_function(acl_check_cmd)?)?;
        let sh = shared.clone();
        prim.set(
            "call",
            lua.create_function(
                move |lua, argv: MultiValue| match redis_call(lua, &sh, argv)? {
                    Ok(value) => Ok(value),
                    Err(raised) => Err(mlua::Error::external(raised)),
                },
            )?,
        )?;
        let sh = shared.clone();
        prim.set(
            "pcall",
            lua.create_function(
                move |lua, argv: MultiValue| match redis_call(lua, &sh, argv)? {
                    Ok(value) => Ok(value),
                    Err(raised) => Ok(Value::Table(raised.table(lua)?)),
                },
            )?,
        )?;
        let sh = shared.clone();
        prim.set(
            "register_function",
            lua.create_function(move |lua, args: MultiValue| register_function(lua, &sh, args))?,
        )?;
        prim.set(
            "set_readonly",
            lua.create_function(|lua, f: Function| {
                lua.set_app_data(libs::Readonly(f));
                Ok(())
            })?,
        )?;
        libs::install(&lua, &prim)?;
        let api: Table = prelude(&lua)?.call(prim)?;
        // Every 100,000 instructions, as Redis's `luaMaskCountHook`. A global
        // hook: a coroutine the script creates inherits it (mlua's per-thread
        // hook finds no callback for a Lua-made coroutine and removes itself,
        // so an endless loop inside a coroutine could never be stopped).
        let hook_watch = watch;
        lua.set_global_hook(
            mlua::HookTriggers::new().every_nth_instruction(100_000),
            move |_, _| match super::busy::on_hook(&hook_watch) {
                Ok(()) => Ok(mlua::VmState::Continue),
                Err(text) => Err(raise(text, false)),
            },
        )?;
        // The prelude's temporaries go now, so a fresh state starts lean.
        lua.gc_collect()?;
        lua.gc_collect()?;
        Ok(Vm {
            env: api.get("env")?,
            visible: api.get("visible")?,
            bind: api.get("bind")?,
            run: api.get("run")?,
            load_library: api.get("load_library")?,
            gc_tick: api.get("gc_tick")?,
            lua,
            mode,
            shared,
        })
    }

    /// Compiles a chunk bound to the sandbox's globals. The error is Lua's
    /// message (`user_script:1: ...`). Like Redis's patched parser, a
    /// precompiled (binary) chunk is parsed as text and fails.
    pub fn compile(&self, code: &[u8], chunkname: &str) -> Result<Function, String> {
        if code.first() == Some(&0x1b) {
            let short = chunkname.trim_start_matches('@');
            return Err(format!("{short}:1: unexpected symbol near 'char(27)'"));
        }
        let function = self
            .lua
            .load(code)
            .set_name(chunkname)
            .set_mode(mlua::chunk::ChunkMode::Text)
            .into_function()
            .map_err(|e| match e {
                mlua::Error::SyntaxError { message, .. } => message,
                other => other.to_string(),
            })?;
        self.bind
            .call(function)
            .map_err(|e| convert::one_line(&e.to_string()))
    }

    /// Runs a library's code so that it registers its functions (FUNCTION
    /// LOAD). The error is Redis's message after `Error registering functions: `.
    pub fn load_library(&self, chunk: Function) -> Result<Vec<Registered>, String> {
        *lock(&self.shared.registering) = Some(Vec::new());
        let outcome: mlua::Result<(bool, Option<String>)> = self.load_library.call(chunk);
        let registered = lock(&self.shared.registering).take().unwrap_or_default();
        match outcome {
            Ok((true, _)) => Ok(registered),
            Ok((false, e)) => Err(e.unwrap_or_else(|| "ERR unknown error".into())),
            Err(e) => Err(format!("ERR {}", innermost(&e))),
        }
    }

    /// Runs a script (EVAL) or a function's callback (FCALL, with `keys` and
    /// `args` as its two arguments), `command` executing its `redis.call`s.
    pub fn call(
        &self,
        function: &Function,
        keys: &[Vec<u8>],
        args: &[Vec<u8>],
        command: &mut CommandFn,
    ) -> mlua::Result<Outcome> {
        self.shared.resp.store(2, Ordering::Relaxed);
        let keys = self.string_array(keys)?;
        let args = self.string_array(args)?;
        if self.mode == Mode::Eval {
            self.visible.raw_set("KEYS", keys.clone())?;
            self.visible.raw_set("ARGV", args.clone())?;
        }
        // SAFETY: the executor outlives the run; `RunGuard` forgets it before
        // this function returns (see `CommandPtr`).
        let ptr: *mut CommandFn<'_> = command;
        let ptr: *mut CommandFn<'static> = unsafe { std::mem::transmute(ptr) };
        *lock(&self.shared.command) = Some(CommandPtr(ptr));
        let guard = RunGuard(&self.shared);
        let result: mlua::Result<(bool, Value)> = match self.mode {
            Mode::Eval => self.run.call(function.clone()),
            Mode::Function => self.run.call((function.clone(), keys, args)),
        };
        drop(guard);
        self.tick();
        let (ok, value) = result?;
        Ok(if ok { Ok(value) } else { Err(value) })
    }

    /// Redis's `luaGC`: a garbage-collection step every 50 runs or loads.
    pub fn tick(&self) {
        if self.shared.since_gc.fetch_add(1, Ordering::Relaxed) + 1 >= 50 {
            self.shared.since_gc.store(0, Ordering::Relaxed);
            let _ = self.gc_tick.call::<()>(());
        }
    }

    /// Whether the running script switched to RESP3 (`redis.setresp(3)`).
    pub fn resp3(&self) -> bool {
        self.shared.resp.load(Ordering::Relaxed) == 3
    }

    fn string_array(&self, items: &[Vec<u8>]) -> mlua::Result<Table> {
        let t = self.lua.create_table()?;
        for (i, item) in items.iter().enumerate() {
            t.raw_set(i + 1, self.lua.create_string(item)?)?;
        }
        Ok(t)
    }

    /// Bytes the Lua state holds (`used_memory_lua`, `used_memory_vm_functions`).
    pub fn used_memory(&self) -> usize {
        self.lua.used_memory()
    }

    pub fn lua(&self) -> &Lua {
        &self.lua
    }

    /// The environment scripts are bound to (for tests).
    pub fn env(&self) -> &Table {
        &self.env
    }
}

/// The prelude compiled, without its debug information when it can be
/// stripped (see [`strip_chunk`]).
fn prelude(lua: &Lua) -> mlua::Result<Function> {
    let text = lua
        .load(PRELUDE)
        .set_name("@redislab_prelude")
        .into_function()?;
    let dump: Function = lua.globals().get::<Table>("string")?.get("dump")?;
    let chunk: LuaString = dump.call(text.clone())?;
    match strip_chunk(&chunk.as_bytes()) {
        Some(stripped) => lua
            .load(stripped)
            .set_name("@redislab_prelude")
            .set_mode(mlua::chunk::ChunkMode::Binary)
            .into_function(),
        None => Ok(text),
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// An error raised into Lua by a Rust function: the `{err=...}` table Redis
/// raises, carried through mlua as an external error and turned back into the
/// table by the error handler and by `pcall`.
#[derive(Debug, Clone)]
pub struct Raised {
    pub text: Vec<u8>,
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
        f.write_str(&String::from_utf8_lossy(&self.text))
    }
}

impl std::error::Error for Raised {}

/// `luaPushError` + `lua_error`: raises `{err = text}`.
pub fn raise(text: &str, ignore_stats: bool) -> mlua::Error {
    mlua::Error::external(Raised {
        text: text.into(),
        ignore_stats,
        plain: false,
    })
}

/// `luaL_error`: raises a plain message (the caller adds the position).
pub fn raise_plain(text: &str) -> mlua::Error {
    mlua::Error::external(Raised {
        text: text.into(),
        ignore_stats: false,
        plain: true,
    })
}

/// The message at the bottom of an mlua error (without the tracebacks mlua
/// adds when an error crosses a Rust function).
fn innermost(e: &mlua::Error) -> String {
    match e {
        mlua::Error::CallbackError { cause, .. } | mlua::Error::WithContext { cause, .. } => {
            innermost(cause)
        }
        // mlua appends a traceback to errors of Lua code it calls.
        mlua::Error::RuntimeError(m) | mlua::Error::MemoryError(m) => {
            match m.find("\nstack traceback:") {
                Some(at) => m[..at].to_string(),
                None => m.clone(),
            }
        }
        mlua::Error::SyntaxError { message, .. } => message.clone(),
        mlua::Error::ExternalError(inner) => match inner.downcast_ref::<Raised>() {
            Some(r) => String::from_utf8_lossy(&r.text).into_owned(),
            None => inner.to_string(),
        },
        other => other.to_string(),
    }
}

/// The value a script sees for an error that crossed a Rust function.
fn error_value(lua: &Lua, v: Value) -> mlua::Result<Value> {
    match &v {
        Value::Error(e) => match e.downcast_ref::<Raised>() {
            Some(r) => r.value(lua),
            None => Ok(Value::String(lua.create_string(innermost(e))?)),
        },
        other => Ok(other.clone()),
    }
}

fn sha1hex(lua: &Lua, args: MultiValue) -> mlua::Result<String> {
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
    Ok(super::sha1_hex(&bytes))
}

/// `luaArgsToRedisArgv`: the arguments of a `redis.*` call as a command line.
fn lua_args(argv: &MultiValue) -> Result<Vec<Vec<u8>>, Raised> {
    let refuse = |text: &str| Raised {
        text: text.into(),
        ignore_stats: false,
        plain: false,
    };
    if argv.is_empty() {
        return Err(refuse(
            "ERR Please specify at least one argument for this redis lib call",
        ));
    }
    let mut args = Vec::with_capacity(argv.len());
    for v in argv.iter() {
        match convert::lua_to_arg(v) {
            Some(a) => args.push(a),
            None => {
                return Err(refuse(
                    "ERR Lua redis lib command arguments must be strings or integers",
                ))
            }
        }
    }
    Ok(args)
}

/// One `redis.call`/`redis.pcall`: the converted reply, or the error to raise
/// (call) or return (pcall).
fn redis_call(lua: &Lua, shared: &Shared, argv: MultiValue) -> mlua::Result<Result<Value, Raised>> {
    let args = match lua_args(&argv) {
        Ok(a) => a,
        Err(r) => return Ok(Err(r)),
    };
    drop(argv);
    let resp3 = shared.resp.load(Ordering::Relaxed) == 3;
    let text = match with_command(shared, &args, resp3)? {
        Ok(Reply::Error(text)) => convert::error_text(&convert::dashed(&text)),
        Ok(reply) => return Ok(Ok(convert::reply_to_lua(lua, &reply, resp3)?)),
        Err(refusal) => convert::error_text(refusal.as_bytes()),
    };
    Ok(Err(Raised {
        text,
        ignore_stats: true,
        plain: false,
    }))
}

/// `redis.acl_check_cmd`: the core has no ACL users, so every known command
/// with a valid arity is permitted.
fn acl_check_cmd(_: &Lua, argv: MultiValue) -> mlua::Result<bool> {
    let args = lua_args(&argv).map_err(mlua::Error::external)?;
    match crate::server::table::resolve(&args) {
        crate::server::table::Found::Command(spec, _) if spec.arity_ok(args.len()) => Ok(true),
        crate::server::table::Found::Command(..) => Err(raise(
            "ERR Wrong number of args for redis.acl_check_cmd()",
            false,
        )),
        _ => Err(raise(
            "ERR Invalid command passed to redis.acl_check_cmd()",
            false,
        )),
    }
}

/// `luaGetStringSds`: a string, or a number as Lua prints it.
fn lua_string(lua: &Lua, v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.to_string_lossy()),
        Value::Integer(_) | Value::Number(_) => lua
            .coerce_string(v.clone())
            .ok()
            .flatten()
            .map(|s| s.to_string_lossy()),
        _ => None,
    }
}

/// `redis.register_function(name, callback)` or
/// `redis.register_function{function_name=..., callback=..., flags=..., description=...}`.
fn register_function(lua: &Lua, shared: &Shared, args: MultiValue) -> mlua::Result<()> {
    let fail = |text: &str| Err(raise(&format!("ERR {text}"), false));
    if lock(&shared.registering).is_none() {
        return fail("redis.register_function can only be called on FUNCTION LOAD command");
    }
    if args.is_empty() || args.len() > 2 {
        return fail("wrong number of arguments to redis.register_function");
    }
    let mut name = None;
    let mut description = None;
    let mut callback = None;
    let mut flags = ScriptFlags::default();
    if args.len() == 2 {
        name = lua_string(lua, &args[0]);
        if name.is_none() {
            return fail("first argument to redis.register_function must be a string");
        }
        let Value::Function(f) = &args[1] else {
            return fail("second argument to redis.register_function must be a function");
        };
        callback = Some(f.clone());
    } else {
        let Value::Table(t) = &args[0] else {
            return fail("calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments).");
        };
        for pair in t.pairs::<Value, Value>() {
            let (k, v) = pair?;
            let Some(key) = lua_string(lua, &k) else {
                return fail("named argument key given to redis.register_function is not a string");
            };
            match key.to_ascii_lowercase().as_str() {
                "function_name" => match lua_string(lua, &v) {
                    Some(n) => name = Some(n),
                    None => return fail(
                        "function_name argument given to redis.register_function must be a string",
                    ),
                },
                "description" => match lua_string(lua, &v) {
                    Some(d) => description = Some(d),
                    None => return fail(
                        "description argument given to redis.register_function must be a string",
                    ),
                },
                "callback" => {
                    match v {
                        Value::Function(f) => callback = Some(f),
                        _ => return fail(
                            "callback argument given to redis.register_function must be a function",
                        ),
                    }
                }
                "flags" => {
                    let Value::Table(list) = v else {
                        return fail("flags argument to redis.register_function must be a table representing function flags");
                    };
                    for i in 1.. {
                        let item: Value = list.raw_get(i)?;
                        if item == Value::Nil {
                            break;
                        }
                        let ok = lua_string(lua, &item)
                            .is_some_and(|f| flags.set(&f.to_ascii_lowercase()));
                        if !ok {
                            return fail("unknown flag given");
                        }
                    }
                }
                _ => return fail("unknown argument given to redis.register_function"),
            }
        }
        if name.is_none() {
            return fail("redis.register_function must get a function name argument");
        }
        if callback.is_none() {
            return fail("redis.register_function must get a callback argument");
        }
    }
    let (Some(name), Some(callback)) = (name, callback) else {
        return fail("wrong number of arguments to redis.register_function");
    };
    if !super::functions::valid_name(&name) {
        return fail("Library names can only contain letters, numbers, or underscores(_) and must be at least one character long");
    }
    let mut guard = lock(&shared.registering);
    let list = guard.get_or_insert_with(Vec::new);
    if list.iter().any(|r| r.name == name) {
        drop(guard);
        return fail("Function already exists in the library");
    }
    list.push(Registered {
        name,
        description,
        flags,
        callback,
    });
    Ok(())
}

/// Removes the debug information (line numbers, local and upvalue names) from
/// a Lua 5.1 binary chunk (x86-64 layout: 4-byte ints, 8-byte sizes), keeping
/// the top function's source name. The prelude is loaded this way: nothing
/// reads its line numbers, and they were a good part of a fresh state's size.
/// `None` if the chunk is not in the expected format.
fn strip_chunk(chunk: &[u8]) -> Option<Vec<u8>> {
    const HEADER: &[u8] = b"\x1bLua\x51\x00\x01\x04\x08\x04\x08\x00";
    struct R<'a> {
        d: &'a [u8],
        at: usize,
        out: Vec<u8>,
    }
    impl R<'_> {
        fn copy(&mut self, n: usize) -> Option<&[u8]> {
            let s = self.d.get(self.at..self.at + n)?;
            self.at += n;
            self.out.extend_from_slice(s);
            Some(s)
        }
        fn int(&mut self) -> Option<usize> {
            let b = self.copy(4)?;
            usize::try_from(i32::from_le_bytes(b.try_into().ok()?)).ok()
        }
        fn skip_int(&mut self) -> Option<usize> {
            let b = self.d.get(self.at..self.at + 4)?;
            self.at += 4;
            usize::try_from(i32::from_le_bytes(b.try_into().ok()?)).ok()
        }
        fn string(&mut self) -> Option<()> {
            let b = self.copy(8)?;
            let n = usize::try_from(u64::from_le_bytes(b.try_into().ok()?)).ok()?;
            self.copy(n).map(|_| ())
        }
        fn skip_string(&mut self) -> Option<()> {
            let b = self.d.get(self.at..self.at + 8)?;
            let n = usize::try_from(u64::from_le_bytes(b.try_into().ok()?)).ok()?;
            self.at += 8 + n;
            (self.at <= self.d.len()).then_some(())
        }
        fn function(&mut self) -> Option<()> {
            self.string()?; // source (empty for nested functions)
            self.copy(4 + 4 + 4)?; // lines, nups, params, vararg, stack
            let code = self.int()?;
            self.copy(code.checked_mul(4)?)?;
            let constants = self.int()?;
            for _ in 0..constants {
                match self.copy(1)?[0] {
                    0 => {}
                    1 => {
                        self.copy(1)?;
                    }
                    3 => {
                        self.copy(8)?;
                    }
                    4 => self.string()?,
                    _ => return None,
                }
            }
            let protos = self.int()?;
            for _ in 0..protos {
                self.function()?;
            }
            // Debug information: written as empty.
            let lines = self.skip_int()?;
            self.at += lines.checked_mul(4)?;
            let locals = self.skip_int()?;
            for _ in 0..locals {
                self.skip_string()?;
                self.at += 8;
            }
            let upvalues = self.skip_int()?;
            for _ in 0..upvalues {
                self.skip_string()?;
            }
            self.out.extend_from_slice(&[0; 12]);
            (self.at <= self.d.len()).then_some(())
        }
    }
    if !chunk.starts_with(HEADER) {
        return None;
    }
    let mut r = R {
        d: chunk,
        at: 0,
        out: Vec::with_capacity(chunk.len()),
    };
    r.copy(HEADER.len())?;
    r.function()?;
    (r.at == chunk.len()).then_some(r.out)
}
