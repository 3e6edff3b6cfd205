//! Redis Functions (src/functions.c, src/function_lua.c): libraries of Lua
//! functions loaded with FUNCTION LOAD and called with FCALL.
//!
//! A library's code starts with `#!lua name=<library>`; running it (with only
//! `redis.register_function`, `redis.log` and the version fields in reach, for
//! at most 500 ms) registers its functions, each with an optional description
//! and flags. Library names are case-sensitive; function names are looked up
//! without regard to case and must be unique across libraries. FUNCTION
//! DELETE, FLUSH, LIST, STATS, DUMP and RESTORE work on this registry; the
//! payload of DUMP/RESTORE is Redis's ([`super::rdb`]).
//!
//! Differences: libraries and their functions are listed in name order (Redis
//! lists them in the order of its hash tables, which is random per process);
//! a library that registers two functions whose names differ only in case
//! keeps the first for FCALL (Redis keeps both in the library and later
//! asserts on DELETE).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use mlua::{Function, RegistryKey};

use super::busy::{SharedWatch, LOAD_TIMEOUT};
use super::rand48::Rand48;
use super::rdb;
use super::vm::{Mode, Vm};
use super::ScriptFlags;
use crate::reply::Reply;

/// One registered function.
pub struct FunctionInfo {
    pub name: String,
    pub description: Option<String>,
    pub flags: ScriptFlags,
    /// In the Lua registry (any number of functions may be loaded).
    pub(crate) callback: RegistryKey,
}

/// One library: its name, its whole code (shebang included) and functions.
pub struct Library {
    pub name: String,
    pub code: Vec<u8>,
    pub functions: BTreeMap<String, FunctionInfo>,
}

/// The libraries and the Lua state their functions live in.
pub struct Functions {
    pub(crate) vm: Vm,
    reg: Registry,
    watch: SharedWatch,
}

/// Libraries by name, and where each function name leads (Redis's
/// `functionsLibCtx`).
#[derive(Default)]
struct Registry {
    libraries: BTreeMap<String, Library>,
    /// Lower-cased function name → library name.
    index: HashMap<String, String>,
}

impl Registry {
    fn link(&mut self, lib: Library) {
        for f in lib.functions.values() {
            self.index
                .entry(f.name.to_ascii_lowercase())
                .or_insert_with(|| lib.name.clone());
        }
        self.libraries.insert(lib.name.clone(), lib);
    }

    fn unlink(&mut self, name: &str) -> Option<Library> {
        let lib = self.libraries.remove(name)?;
        for f in lib.functions.values() {
            let key = f.name.to_ascii_lowercase();
            if self.index.get(&key).is_some_and(|l| l == name) {
                self.index.remove(&key);
            }
        }
        Some(lib)
    }

    fn relink(&mut self, libs: Vec<Library>) {
        for lib in libs {
            self.link(lib);
        }
    }

    fn clash(&self, lib: &Library) -> Option<String> {
        lib.functions
            .values()
            .find(|f| self.index.contains_key(&f.name.to_ascii_lowercase()))
            .map(|f| f.name.clone())
    }
}

/// What FUNCTION RESTORE does with the libraries already there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RestorePolicy {
    Flush,
    Append,
    Replace,
}

/// `functionsVerifyName`: letters, digits and underscores, at least one.
pub fn valid_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

const BAD_NAME: &str = "Library names can only contain letters, numbers, or underscores(_) and must be at least one character long";

/// `functionExtractLibMetaData`: (engine, library name, code after the
/// shebang line, which keeps its line feed).
fn metadata(payload: &[u8]) -> Result<(String, String, &[u8]), String> {
    if !payload.starts_with(b"#!") {
        return Err("Missing library metadata".into());
    }
    let Some(end) = payload.iter().position(|&b| b == b'\n') else {
        return Err("Invalid library metadata".into());
    };
    let parts = match super::split_args(&payload[..end]) {
        Some(p) if !p.is_empty() => p,
        _ => return Err("Invalid library metadata".into()),
    };
    let engine = String::from_utf8_lossy(&parts[0][2.min(parts[0].len())..]).into_owned();
    let mut name = None;
    for part in &parts[1..] {
        if part.len() >= 5 && part[..5].eq_ignore_ascii_case(b"name=") {
            if name.is_some() {
                return Err(
                    "Invalid metadata value, name argument was given multiple times".into(),
                );
            }
            name = Some(String::from_utf8_lossy(&part[5..]).into_owned());
            continue;
        }
        return Err(format!(
            "Invalid metadata value given: {}",
            String::from_utf8_lossy(part)
        ));
    }
    let Some(name) = name else {
        return Err("Library name was not given".into());
    };
    Ok((engine, name, &payload[end..]))
}

/// `functionsCreateWithLibraryCtx`: compiles and runs a library's code, then
/// links it into `reg` (replacing a library of the same name if `replace`).
/// The error is the message to send after `ERR `.
fn create(
    vm: &Vm,
    watch: &SharedWatch,
    reg: &mut Registry,
    payload: &[u8],
    replace: bool,
    timeout: Option<Duration>,
) -> Result<String, String> {
    let (engine, name, code) = metadata(payload)?;
    if !valid_name(&name) {
        return Err(BAD_NAME.into());
    }
    if !engine.eq_ignore_ascii_case("lua") {
        return Err(format!("Engine '{engine}' not found"));
    }
    if reg.libraries.contains_key(&name) && !replace {
        return Err(format!("Library '{name}' already exists"));
    }
    let old = reg.unlink(&name);
    let outcome =
        compile(vm, watch, &name, code, payload, timeout).and_then(|lib| match reg.clash(&lib) {
            Some(f) => Err(format!("Function {f} already exists")),
            None => Ok(lib),
        });
    match outcome {
        Ok(lib) => {
            reg.link(lib);
            Ok(name)
        }
        Err(e) => {
            if let Some(old) = old {
                reg.link(old);
            }
            Err(e)
        }
    }
}

/// `luaEngineCreate`: the library's functions, registered by its code.
fn compile(
    vm: &Vm,
    watch: &SharedWatch,
    name: &str,
    code: &[u8],
    payload: &[u8],
    timeout: Option<Duration>,
) -> Result<Library, String> {
    let chunk = vm
        .compile(code, "@user_function")
        .map_err(|e| format!("Error compiling function: {e}"))?;
    let lock = || watch.lock().unwrap_or_else(|p| p.into_inner());
    lock().begin_load(timeout);
    let registered = vm.load_library(chunk);
    lock().end();
    vm.tick();
    let registered = registered.map_err(|e| format!("Error registering functions: {e}"))?;
    if registered.is_empty() {
        return Err("No functions registered".into());
    }
    let mut functions = BTreeMap::new();
    for r in registered {
        let callback = vm
            .lua()
            .create_registry_value(r.callback)
            .map_err(|e| format!("Error registering functions: ERR {e}"))?;
        functions.insert(
            r.name.clone(),
            FunctionInfo {
                name: r.name,
                description: r.description,
                flags: r.flags,
                callback,
            },
        );
    }
    Ok(Library {
        name: name.to_string(),
        code: payload.to_vec(),
        functions,
    })
}

impl Functions {
    pub fn new(rand: Arc<Mutex<Rand48>>, watch: SharedWatch) -> Functions {
        Functions {
            vm: Vm::new(Mode::Function, rand, watch.clone()),
            reg: Registry::default(),
            watch,
        }
    }

    pub fn libraries(&self) -> impl Iterator<Item = &Library> {
        self.reg.libraries.values()
    }

    pub fn library_count(&self) -> usize {
        self.reg.libraries.len()
    }

    /// Functions across all libraries (FUNCTION STATS's `functions_count`).
    pub fn function_count(&self) -> usize {
        self.reg.libraries.values().map(|l| l.functions.len()).sum()
    }

    /// Functions FCALL can reach (INFO's `number_of_functions`).
    pub fn callable_count(&self) -> usize {
        self.reg.index.len()
    }

    /// Bytes held for the libraries besides the Lua state.
    pub fn overhead(&self) -> usize {
        self.reg
            .libraries
            .values()
            .map(|l| 64 + l.name.len() + l.code.len() + l.functions.len() * 96)
            .sum::<usize>()
            + 184
    }

    /// A function's callback, to call it.
    pub(crate) fn callback(&self, f: &FunctionInfo) -> Option<Function> {
        self.vm.lua().registry_value(&f.callback).ok()
    }

    /// The function FCALL names (any case).
    pub fn find(&self, name: &[u8]) -> Option<&FunctionInfo> {
        let lower = String::from_utf8_lossy(name).to_ascii_lowercase();
        let lib = self.reg.index.get(&lower)?;
        self.reg
            .libraries
            .get(lib)?
            .functions
            .values()
            .find(|f| f.name.to_ascii_lowercase() == lower)
    }

    /// FUNCTION LOAD [REPLACE]: the library's name, or the error message (to
    /// be sent after `ERR `).
    pub fn load(&mut self, payload: &[u8], replace: bool) -> Result<String, String> {
        create(
            &self.vm,
            &self.watch,
            &mut self.reg,
            payload,
            replace,
            Some(LOAD_TIMEOUT),
        )
    }

    /// FUNCTION DELETE.
    pub fn delete(&mut self, name: &[u8]) -> bool {
        let name = String::from_utf8_lossy(name);
        self.reg.unlink(&name).is_some()
    }

    /// FUNCTION LIST [LIBRARYNAME pattern] [WITHCODE].
    pub fn list(&self, pattern: Option<&[u8]>, with_code: bool) -> Reply {
        let mut out = Vec::new();
        for lib in self.reg.libraries.values() {
            if let Some(p) = pattern {
                if !crate::glob::glob_match_nocase(p, lib.name.as_bytes()) {
                    continue;
                }
            }
            let functions = lib
                .functions
                .values()
                .map(|f| {
                    Reply::Map(vec![
                        (Reply::bulk("name"), Reply::bulk(&f.name)),
                        (
                            Reply::bulk("description"),
                            match &f.description {
                                Some(d) => Reply::bulk(d),
                                None => Reply::Nil,
                            },
                        ),
                        (
                            Reply::bulk("flags"),
                            Reply::Set(
                                f.flags
                                    .names()
                                    .into_iter()
                                    .map(|n| Reply::Status(n.into()))
                                    .collect(),
                            ),
                        ),
                    ])
                })
                .collect();
            let mut fields = vec![
                (Reply::bulk("library_name"), Reply::bulk(&lib.name)),
                (Reply::bulk("engine"), Reply::bulk("LUA")),
                (Reply::bulk("functions"), Reply::Array(functions)),
            ];
            if with_code {
                fields.push((
                    Reply::bulk("library_code"),
                    Reply::bulk_vec(lib.code.clone()),
                ));
            }
            out.push(Reply::Map(fields));
        }
        Reply::Array(out)
    }

    /// FUNCTION DUMP: every library's code in Redis's payload format
    /// (`compress`: `rdbcompression`).
    pub fn dump(&self, compress: bool) -> Vec<u8> {
        let mut out = Vec::new();
        for lib in self.reg.libraries.values() {
            out.push(rdb::OPCODE_FUNCTION2);
            rdb::save_string(&mut out, &lib.code, compress);
        }
        rdb::seal_payload(&mut out);
        out
    }

    /// FUNCTION RESTORE: the libraries of a DUMP payload, added by `policy`.
    /// The error is the message to send after `ERR `.
    pub fn restore(&mut self, payload: &[u8], policy: RestorePolicy) -> Result<(), String> {
        if !rdb::verify_payload(payload) {
            return Err("DUMP payload version or checksum are wrong".into());
        }
        // The payload's libraries are created in a scratch registry (in the
        // same Lua state), then joined.
        let mut scratch = Registry::default();
        let mut r = rdb::Reader::new(payload);
        while r.remaining() > 10 {
            let Ok(kind) = r.byte() else {
                return Err("can not read data type".into());
            };
            if kind == rdb::OPCODE_FUNCTION_PRE_GA {
                return Err("Pre-GA function format not supported".into());
            }
            if kind != rdb::OPCODE_FUNCTION2 {
                return Err("given type is not a function".into());
            }
            let Ok(code) = r.string() else {
                return Err("Failed loading library payload".into());
            };
            create(&self.vm, &self.watch, &mut scratch, &code, false, None)?;
        }
        if policy == RestorePolicy::Flush {
            self.reg = scratch;
            return Ok(());
        }
        // `libraryJoin`: a library of the same name is refused (or replaced),
        // then no function may clash.
        let mut replaced = Vec::new();
        for name in scratch.libraries.keys() {
            if self.reg.libraries.contains_key(name) {
                if policy != RestorePolicy::Replace {
                    self.reg.relink(replaced);
                    return Err(format!("Library {name} already exists"));
                }
                if let Some(old) = self.reg.unlink(name) {
                    replaced.push(old);
                }
            }
        }
        for lib in scratch.libraries.values() {
            if let Some(f) = self.reg.clash(lib) {
                self.reg.relink(replaced);
                return Err(format!("Function {f} already exists"));
            }
        }
        for lib in std::mem::take(&mut scratch.libraries).into_values() {
            self.reg.link(lib);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn functions() -> Functions {
        Functions::new(
            Default::default(),
            super::super::busy::ScriptWatch::shared(),
        )
    }

    #[test]
    fn metadata_errors_read_like_redis() {
        let mut f = functions();
        let load = |f: &mut Functions, code: &str| f.load(code.as_bytes(), false);
        assert_eq!(
            load(&mut f, "nope").unwrap_err(),
            "Missing library metadata"
        );
        assert_eq!(
            load(&mut f, "#!lua name=a").unwrap_err(),
            "Invalid library metadata"
        );
        assert_eq!(
            load(&mut f, "#!lua\n").unwrap_err(),
            "Library name was not given"
        );
        assert_eq!(
            load(&mut f, "#!lua name=a x=y\n").unwrap_err(),
            "Invalid metadata value given: x=y"
        );
        assert_eq!(
            load(&mut f, "#!lua name=a name=b\n").unwrap_err(),
            "Invalid metadata value, name argument was given multiple times"
        );
        assert_eq!(
            load(&mut f, "#!luax name=a\n").unwrap_err(),
            "Engine 'luax' not found"
        );
        assert_eq!(load(&mut f, "#!lua name=a-b\n").unwrap_err(), BAD_NAME);
        assert_eq!(
            load(&mut f, "#!lua name=a\nreturn 1").unwrap_err(),
            "No functions registered"
        );
        assert_eq!(
            load(&mut f, "#!lua name=a\nreturn +").unwrap_err(),
            "Error compiling function: user_function:2: unexpected symbol near '+'"
        );
        assert_eq!(
            load(&mut f, "#!lua name=a\nlocal x = math.floor(1)").unwrap_err(),
            "Error registering functions: ERR user_function:2: Script attempted to access nonexistent global variable 'math'"
        );
        assert_eq!(
            load(&mut f, "#!lua name=a\nredis.call('ping')").unwrap_err(),
            "Error registering functions: ERR user_function:2: Script attempted to access nonexistent global variable 'call'"
        );
        assert_eq!(
            load(&mut f, "#!lua name=a\nredis.register_function()").unwrap_err(),
            "Error registering functions: ERR wrong number of arguments to redis.register_function"
        );
    }

    #[test]
    fn load_replace_delete_and_clashes() {
        let mut f = functions();
        let lib = |name: &str, func: &str| {
            format!("#!lua name={name}\nredis.register_function('{func}', function() return 1 end)")
        };
        assert_eq!(f.load(lib("l1", "f1").as_bytes(), false), Ok("l1".into()));
        assert_eq!(
            f.load(lib("l1", "f2").as_bytes(), false),
            Err("Library 'l1' already exists".into())
        );
        assert_eq!(
            f.load(lib("l2", "F1").as_bytes(), false),
            Err("Function F1 already exists".into())
        );
        assert_eq!(f.load(lib("l1", "f2").as_bytes(), true), Ok("l1".into()));
        assert!(f.find(b"f1").is_none());
        assert!(f.find(b"F2").is_some());
        // A failed replace keeps the old library.
        assert!(f.load(b"#!lua name=l1\nreturn 1", true).is_err());
        assert!(f.find(b"f2").is_some());
        assert!(f.delete(b"l1"));
        assert!(!f.delete(b"l1"));
        assert_eq!(f.library_count(), 0);
    }

    #[test]
    fn dump_and_restore_round_trip() {
        let mut f = functions();
        let code = "#!lua name=lib\nredis.register_function('f', function() return 1 end)";
        f.load(code.as_bytes(), false).unwrap();
        let payload = f.dump(true);
        assert_eq!(
            f.restore(&payload, RestorePolicy::Append),
            Err("Library lib already exists".into())
        );
        assert_eq!(f.restore(&payload, RestorePolicy::Replace), Ok(()));
        f.restore(&payload, RestorePolicy::Flush).unwrap();
        assert_eq!(f.library_count(), 1);
        let mut bad = payload.clone();
        bad[3] ^= 1;
        assert_eq!(
            f.restore(&bad, RestorePolicy::Flush),
            Err("DUMP payload version or checksum are wrong".into())
        );
        let mut empty = functions();
        empty.restore(&payload, RestorePolicy::Append).unwrap();
        assert!(empty.find(b"f").is_some());
    }
}
