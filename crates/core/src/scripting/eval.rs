//! EVAL's scripts (src/eval.c): the Lua state they run in and the cache that
//! maps the SHA1 of a body to its compiled function.
//!
//! A script created by EVAL is evictable: beyond [`EVAL_SCRIPTS_KEPT`] of them
//! the least recently used one is forgotten (EVAL and EVALSHA refresh a
//! script's place), and `evicted_scripts` counts it. Scripts loaded with
//! SCRIPT LOAD stay until SCRIPT FLUSH. The body's shebang line is parsed for
//! its flags and cut off before compiling, its line feed kept so that line
//! numbers do not move.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use mlua::{Function, RegistryKey};

use super::busy::SharedWatch;
use super::rand48::Rand48;
use super::vm::{Mode, Vm};
use super::{convert, parse_shebang, sha1_hex, ScriptFlags};
use crate::reply::Reply;

/// Scripts created by EVAL beyond this many evict the least recently used one.
pub const EVAL_SCRIPTS_KEPT: usize = 500;

pub(crate) struct Script {
    /// In the Lua registry: mlua's own handles are limited to a few thousand
    /// live at once on Lua 5.1, and the cache holds any number of scripts.
    pub function: RegistryKey,
    pub flags: ScriptFlags,
    /// Created by EVAL (evictable), not by SCRIPT LOAD.
    from_eval: bool,
    body_len: usize,
}

/// EVAL's Lua state and its script cache.
pub struct Scripts {
    pub(crate) vm: Vm,
    scripts: HashMap<String, Script>,
    /// SHAs of EVAL-created scripts, least recently used first.
    lru: VecDeque<String>,
    /// Bytes of the cached bodies (`used_memory_scripts_eval`).
    bodies: usize,
    /// Scripts evicted since this state was created.
    pub(crate) evicted: u64,
}

impl Scripts {
    pub fn new(rand: Arc<Mutex<Rand48>>, watch: SharedWatch) -> Scripts {
        Scripts {
            vm: Vm::new(Mode::Eval, rand, watch),
            scripts: HashMap::new(),
            lru: VecDeque::new(),
            bodies: 0,
            evicted: 0,
        }
    }

    /// Whether a script with this SHA (any case) is cached.
    pub fn exists(&self, sha: &[u8]) -> bool {
        sha.len() == 40
            && self
                .scripts
                .contains_key(&String::from_utf8_lossy(sha).to_ascii_lowercase())
    }

    pub fn len(&self) -> usize {
        self.scripts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.scripts.is_empty()
    }

    /// Bytes held for the cached scripts besides the Lua state.
    pub fn overhead(&self) -> usize {
        self.bodies + self.scripts.len() * (40 + 64)
    }

    /// The flags of the script a command names (EVAL's body, EVALSHA's SHA)
    /// without creating it (`evalGetCommandFlags`).
    pub fn peek_flags(&self, body_or_sha: &[u8], by_sha: bool) -> Option<ScriptFlags> {
        let sha = if by_sha {
            String::from_utf8_lossy(body_or_sha).to_ascii_lowercase()
        } else {
            sha1_hex(body_or_sha)
        };
        match self.scripts.get(&sha) {
            Some(s) => Some(s.flags),
            None if by_sha => None,
            None => parse_shebang(body_or_sha).ok().map(|(f, _)| f),
        }
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
        let compiled = self.vm.compile(&body[shebang_len..], "@user_script");
        self.vm.tick();
        let function = compiled.map_err(|msg| {
            Reply::error(convert::one_line(&format!(
                "ERR Error compiling script (new function): {msg}"
            )))
        })?;
        let function = self
            .vm
            .lua()
            .create_registry_value(function)
            .map_err(|e| Reply::error(convert::one_line(&format!("ERR {e}"))))?;
        if from_eval {
            while self.lru.len() >= EVAL_SCRIPTS_KEPT {
                let Some(old) = self.lru.pop_front() else {
                    break;
                };
                if let Some(s) = self.scripts.remove(&old) {
                    self.bodies -= s.body_len;
                }
                self.evicted += 1;
            }
            self.lru.push_back(sha.clone());
        }
        self.bodies += body.len();
        self.scripts.insert(
            sha.clone(),
            Script {
                function,
                flags,
                from_eval,
                body_len: body.len(),
            },
        );
        Ok(sha)
    }

    /// The script for `sha` (lower case), refreshed in the LRU order.
    pub(crate) fn touch(&mut self, sha: &str) -> Option<(Function, ScriptFlags)> {
        let script = self.scripts.get(sha)?;
        let function = self
            .vm
            .lua()
            .registry_value::<Function>(&script.function)
            .ok()?;
        let found = (function, script.flags);
        if script.from_eval {
            if let Some(pos) = self.lru.iter().position(|s| s == sha) {
                if let Some(s) = self.lru.remove(pos) {
                    self.lru.push_back(s);
                }
            }
        }
        Some(found)
    }
}
