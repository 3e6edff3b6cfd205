//! Lua scripting as Redis 8.6.3 has it: EVAL scripts and FUNCTION libraries on
//! an embedded Lua 5.1 (mlua, vendored).
//!
//! What is modelled, and why:
//!
//! * **Two Lua states per server**, as in Redis: one for EVAL scripts
//!   ([`eval`]: compiled once, kept by the SHA1 of their body, EVAL-created
//!   ones evicted beyond 500 in LRU order, `SCRIPT FLUSH` starts a fresh
//!   state), one for libraries ([`functions`]: `#!lua name=<lib>` code that
//!   registers functions with `redis.register_function`, FCALL runs them,
//!   `FUNCTION FLUSH` starts a fresh state). Each is a [`vm::Vm`].
//! * **Atomicity**: a script runs inside one command, and its `redis.call`s
//!   execute on the same server through the one command path ([`run`]), so
//!   nothing interleaves, exactly as on Redis's main thread. Blocking commands
//!   do not block inside a script.
//! * **Redis's dialect** (`prelude.lua`): `KEYS`/`ARGV` (EVAL) or the two
//!   arguments of a function, `redis.call`/`redis.pcall`, the reply conversions
//!   of [`convert`] in RESP2 and RESP3 (`redis.setresp`), `redis.error_reply`,
//!   `redis.status_reply`, `redis.sha1hex`, `redis.log` (checked, then dropped),
//!   `redis.set_repl`/`redis.replicate_commands` (accepted), `redis.breakpoint`
//!   and `redis.debug` (no debugger: false and nothing), `redis.acl_check_cmd`
//!   (no ACL users: every valid command is allowed), Redis's `pcall` (which
//!   returns an error table's message), `math.random` on Redis's rand48
//!   ([`rand48`]), and the `cjson`, `cmsgpack`, `struct` and `bit` libraries
//!   ([`libs`]).
//! * **The sandbox**: globals are read-only ("Attempt to modify a readonly
//!   table"), unknown globals raise "Script attempted to access nonexistent
//!   global variable", library tables and the basic types' metatables are
//!   read-only too; `os` has only `clock`; `io`, `package`/`require`, `print`,
//!   `dofile`, `loadfile`, `debug`, `setfenv`/`getfenv`/`newproxy` are absent;
//!   precompiled chunks do not load. A library's code sees only
//!   `redis.register_function`, `redis.log` and the version fields.
//! * **Script flags** (`#!lua flags=...` and `register_function`'s `flags`):
//!   `no-writes`, `allow-oom`, `allow-stale`, `no-cluster`,
//!   `allow-cross-slot-keys`, checked as `scriptPrepareForRun`/`scriptCall` do.
//! * **Errors** worded as Redis words them, including the
//!   `script: <sha or function>, on @user_script:<line>.` suffix of a failed
//!   run, and counted in the error statistics as Redis counts them.
//! * **The frozen clock** ([`clock`]): inside a script, key expiry and TIME
//!   use the time the script's command started, as inside any command.
//! * **A script that runs too long** ([`busy`]): past `busy-reply-threshold`
//!   the Lua hook lets the transport answer other clients `-BUSY`; SCRIPT KILL,
//!   FUNCTION KILL or SHUTDOWN NOSAVE stop it.
//!
//! Left out, or different: `SCRIPT DEBUG YES|SYNC` (the Lua debugger);
//! replication effects of `redis.set_repl`; ACL users (`acl_check_cmd` allows
//! every valid command); cluster checks (the core is never a cluster node);
//! verbatim formats other than `txt`; Redis's `processCommand` checks that use
//! a script's flags before the script is looked at (the core's command path has
//! no OOM or NOREPLICAS rejection, so a shebang script over `maxmemory` gets
//! `scriptPrepareForRun`'s wording instead); nesting: a reply nested deeper than
//! 1000 levels, and cjson/cmsgpack documents deeper than 1000, stop with
//! Redis's errors where Redis (bounded by Lua's 8000-slot C stack) goes to about
//! 8000 (Rust recursion that deep would overflow a 2 MB thread stack); a fresh
//! Lua state holds about 77 KB where Redis's holds 32 KB. Stock Lua has no
//! read-only tables, so the protection is by proxy tables: `pairs`, `next`,
//! `ipairs` and `rawget` see through them, `#` and `rawequal` do not.

pub mod busy;
pub mod clock;
pub mod convert;
pub mod eval;
pub mod functions;
pub mod libs;
pub mod rand48;
pub mod rdb;
pub mod run;
pub mod vm;

use std::sync::{Arc, Mutex};

use rand48::Rand48;

pub use eval::EVAL_SCRIPTS_KEPT;
pub use vm::{CommandFn, Raised};

/// The flags of a script (`#!lua flags=...`) or a function
/// (`register_function{flags=...}`), Redis's `SCRIPT_FLAG_*`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ScriptFlags {
    /// No shebang: the pre-7.0 behaviour (flags are not checked).
    pub compat: bool,
    pub no_writes: bool,
    pub allow_oom: bool,
    pub allow_stale: bool,
    pub no_cluster: bool,
    pub allow_cross_slot: bool,
}

/// Flag names in Redis's order (`scripts_flags_def`).
pub const FLAG_NAMES: &[&str] = &[
    "no-writes",
    "allow-oom",
    "allow-stale",
    "no-cluster",
    "allow-cross-slot-keys",
];

impl ScriptFlags {
    /// The flags of a script without a shebang.
    pub fn compat() -> ScriptFlags {
        ScriptFlags {
            compat: true,
            ..ScriptFlags::default()
        }
    }

    /// Sets the flag named `name`; false for an unknown name.
    pub fn set(&mut self, name: &str) -> bool {
        let slot = match name {
            "no-writes" => &mut self.no_writes,
            "allow-oom" => &mut self.allow_oom,
            "allow-stale" => &mut self.allow_stale,
            "no-cluster" => &mut self.no_cluster,
            "allow-cross-slot-keys" => &mut self.allow_cross_slot,
            _ => return false,
        };
        *slot = true;
        true
    }

    /// The names of the flags that are set, in Redis's order.
    pub fn names(&self) -> Vec<&'static str> {
        let on = [
            self.no_writes,
            self.allow_oom,
            self.allow_stale,
            self.no_cluster,
            self.allow_cross_slot,
        ];
        FLAG_NAMES
            .iter()
            .zip(on)
            .filter(|(_, set)| *set)
            .map(|(n, _)| *n)
            .collect()
    }
}

/// Every scripting state of a server: the two Lua states and what they hold.
pub struct Engine {
    pub(crate) eval: eval::Scripts,
    pub(crate) functions: functions::Functions,
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
        // The random generator is C state in Redis, shared by both engines and
        // kept across SCRIPT FLUSH.
        let rand = Arc::new(Mutex::new(Rand48::default()));
        Engine {
            eval: eval::Scripts::new(rand.clone(), watch.clone()),
            functions: functions::Functions::new(rand.clone(), watch.clone()),
            rand,
            watch,
        }
    }

    /// SCRIPT FLUSH: every script forgotten, a fresh Lua state.
    pub fn flush_scripts(&mut self) {
        self.eval = eval::Scripts::new(self.rand.clone(), self.watch.clone());
    }

    /// FUNCTION FLUSH: every library forgotten, a fresh Lua state.
    pub fn flush_functions(&mut self) {
        self.functions = functions::Functions::new(self.rand.clone(), self.watch.clone());
    }

    pub fn scripts(&self) -> &eval::Scripts {
        &self.eval
    }

    pub fn functions(&self) -> &functions::Functions {
        &self.functions
    }
}

impl Default for Engine {
    fn default() -> Engine {
        Engine::new()
    }
}

/// Lower-case hex SHA1, as `sha1hex` (src/eval.c).
pub fn sha1_hex(bytes: &[u8]) -> String {
    sha1_smol::Sha1::from(bytes).digest().to_string()
}

/// `sdssplitargs`: words separated by spaces, `"..."` with C escapes
/// (`\n \r \t \b \a \xHH`), `'...'` with `\'`; a closing quote must be
/// followed by a space or the end. `None` for unbalanced quotes.
pub fn split_args(line: &[u8]) -> Option<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    let mut i = 0;
    let n = line.len();
    let is_space = |b: u8| matches!(b, b' ' | b'\n' | b'\r' | b'\t' | 0x0b | 0x0c);
    loop {
        while i < n && is_space(line[i]) {
            i += 1;
        }
        if i >= n {
            return Some(out);
        }
        let mut word = Vec::new();
        let (mut in_dq, mut in_sq) = (false, false);
        loop {
            if in_dq {
                if i >= n {
                    return None;
                }
                let c = line[i];
                if c == b'\\'
                    && i + 3 < n
                    && line[i + 1] == b'x'
                    && line[i + 2].is_ascii_hexdigit()
                    && line[i + 3].is_ascii_hexdigit()
                {
                    let hex = std::str::from_utf8(&line[i + 2..i + 4]).ok()?;
                    word.push(u8::from_str_radix(hex, 16).ok()?);
                    i += 3;
                } else if c == b'\\' && i + 1 < n {
                    i += 1;
                    word.push(match line[i] {
                        b'n' => b'\n',
                        b'r' => b'\r',
                        b't' => b'\t',
                        b'b' => 8,
                        b'a' => 7,
                        other => other,
                    });
                } else if c == b'"' {
                    if i + 1 < n && !is_space(line[i + 1]) {
                        return None;
                    }
                    i += 1;
                    break;
                } else {
                    word.push(c);
                }
            } else if in_sq {
                if i >= n {
                    return None;
                }
                let c = line[i];
                if c == b'\\' && i + 1 < n && line[i + 1] == b'\'' {
                    i += 1;
                    word.push(b'\'');
                } else if c == b'\'' {
                    if i + 1 < n && !is_space(line[i + 1]) {
                        return None;
                    }
                    i += 1;
                    break;
                } else {
                    word.push(c);
                }
            } else {
                if i >= n {
                    break;
                }
                match line[i] {
                    c if is_space(c) => break,
                    b'"' => in_dq = true,
                    b'\'' => in_sq = true,
                    c => word.push(c),
                }
            }
            i += 1;
        }
        out.push(word);
    }
}

/// `evalExtractShebangFlags`: the flags of a `#!lua` first line and its length
/// (the line feed stays, so line numbers do not move).
pub fn parse_shebang(body: &[u8]) -> Result<(ScriptFlags, usize), String> {
    if !body.starts_with(b"#!") {
        return Ok((ScriptFlags::compat(), 0));
    }
    let Some(end) = body.iter().position(|&b| b == b'\n') else {
        return Err("Invalid script shebang".into());
    };
    let parts = match split_args(&body[..end]) {
        Some(p) if !p.is_empty() => p,
        _ => return Err("Invalid engine in script shebang".into()),
    };
    if parts[0] != b"#!lua" {
        return Err(format!(
            "Unexpected engine in script shebang: {}",
            String::from_utf8_lossy(&parts[0])
        ));
    }
    let mut flags = ScriptFlags::default();
    for part in &parts[1..] {
        let Some(list) = part.strip_prefix(b"flags=") else {
            return Err(format!(
                "Unknown lua shebang option: {}",
                String::from_utf8_lossy(part)
            ));
        };
        if list.is_empty() {
            continue;
        }
        for flag in list.split(|&b| b == b',') {
            let name = String::from_utf8_lossy(flag);
            if !flags.set(&name) {
                return Err(format!("Unexpected flag in script shebang: {name}"));
            }
        }
    }
    Ok((flags, end))
}

/// DEBUG SET-DISABLE-DENY-SCRIPTS: lets scripts call commands flagged
/// `noscript` (Redis's test suite uses it to call DEBUG from scripts). For the
/// DEBUG command, wherever it is implemented.
pub fn set_deny_scripts_disabled(s: &mut crate::Server, disabled: bool) {
    s.lock_watch().deny_scripts_disabled = disabled;
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
        let (f, _) = parse_shebang(b"#!lua flags=\nreturn 1").unwrap();
        assert_eq!(f, ScriptFlags::default());
        let (f, _) = parse_shebang(b"#!lua flags=allow-oom,allow-stale\n").unwrap();
        assert_eq!(f.names(), vec!["allow-oom", "allow-stale"]);
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
        assert_eq!(
            parse_shebang(b"#!lua badger=data\n").unwrap_err(),
            "Unknown lua shebang option: badger=data"
        );
        assert_eq!(
            parse_shebang(b"#!lua \"x\n").unwrap_err(),
            "Invalid engine in script shebang"
        );
    }

    #[test]
    fn split_args_like_sdssplitargs() {
        let words = |s: &str| {
            split_args(s.as_bytes()).map(|v| {
                v.into_iter()
                    .map(|w| String::from_utf8(w).unwrap())
                    .collect::<Vec<_>>()
            })
        };
        assert_eq!(words(" a  b "), Some(vec!["a".into(), "b".into()]));
        assert_eq!(
            words(r#""x\x41\n" 'it\'s'"#),
            Some(vec!["xA\n".into(), "it's".into()])
        );
        assert_eq!(words(r#""a"b"#), None);
        assert_eq!(words(r#""open"#), None);
        assert_eq!(words(""), Some(vec![]));
    }
}
