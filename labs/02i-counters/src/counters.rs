//! The article's counters helper, in Rust: one place that knows the key prefix and
//! which server features exist. On a server with INCREX (Redis 8.8, and the core)
//! each call is one command; on one without it, the same semantics run as a Lua
//! script, so callers never change. The lock is released with DELEX … IFEQ
//! ([`Counters::release`]); the classic compare-and-delete script that DELEX
//! replaces is here too ([`Counters::release_by_script`]), as its own call, so a
//! row says which one ran.

use redislab_harness::backend::error_text;
use redislab_harness::Kv;

/// How the helper reaches the server for bounded counters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Path {
    Increx,
    Script,
}

/// Fixed window: count a hit unless the limit is reached; set the TTL only when
/// the key has none (INCREX … ENX).
pub const HIT_SCRIPT: &str = r#"
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if current + 1 > tonumber(ARGV[1]) then return 0 end
redis.call('INCR', KEYS[1])
if redis.call('TTL', KEYS[1]) == -1 then redis.call('EXPIRE', KEYS[1], ARGV[2]) end
return 1
"#;

/// Take one unit of stock unless that would go below zero (INCREX … LBOUND 0).
const RESERVE_SCRIPT: &str = r#"
local current = tonumber(redis.call('GET', KEYS[1]) or '0')
if current - 1 < 0 then return 0 end
redis.call('DECR', KEYS[1])
return -1
"#;

/// The lock release before DELEX: delete the key only if it still holds our token.
const RELEASE_SCRIPT: &str = r#"
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"#;

pub struct Counters<'a> {
    kv: &'a mut Kv,
    pub path: Path,
    /// What the server said when asked for INCREX, if it refused.
    pub probe: String,
}

impl<'a> Counters<'a> {
    /// Picks INCREX if the server knows it (asked once, on a throw-away key), else
    /// the script path. `force_script` shows the fallback on a server that has both.
    pub fn new(kv: &'a mut Kv, force_script: bool) -> Counters<'a> {
        let probe_key = kv.key("probe:increx");
        let reply = kv.cmd(&["INCREX", &probe_key, "BYINT", "0"]);
        let _ = kv.cmd(&["DEL", &probe_key]);
        let (path, probe) = match reply {
            Ok(_) if !force_script => (Path::Increx, "INCREX available".to_string()),
            Ok(_) => (Path::Script, "INCREX available, script forced".to_string()),
            Err(e) => (Path::Script, e),
        };
        Counters { kv, path, probe }
    }

    pub fn key(&self, name: &str) -> String {
        self.kv.key(name)
    }

    /// Rate limit with a fixed window: true lets the request through.
    pub fn hit(&mut self, name: &str, limit: u32, window_seconds: u32) -> Result<bool, String> {
        let key = self.kv.key(name);
        let (limit, window) = (limit.to_string(), window_seconds.to_string());
        let applied = match self.path {
            Path::Increx => self.applied(&[
                "INCREX", &key, "BYINT", "1", "UBOUND", &limit, "EX", &window, "ENX",
            ])?,
            Path::Script => self.int(&["EVAL", HIT_SCRIPT, "1", &key, &limit, &window])?,
        };
        Ok(applied == 1)
    }

    /// Takes one unit of stock: false once sold out.
    pub fn reserve(&mut self, sku: &str) -> Result<bool, String> {
        let key = self.kv.key(&format!("stock:{sku}"));
        let applied = match self.path {
            Path::Increx => self.applied(&["INCREX", &key, "BYINT", "-1", "LBOUND", "0"])?,
            Path::Script => self.int(&["EVAL", RESERVE_SCRIPT, "1", &key])?,
        };
        Ok(applied == -1)
    }

    /// Releases a lock only if `token` still owns it (DELEX … IFEQ, Redis 8.4+).
    /// `Ok(Err(e))` when the server refuses the command: `e` is its own error.
    pub fn release(&mut self, lock: &str, token: &str) -> Result<Result<bool, String>, String> {
        let key = self.kv.key(lock);
        let reply = redis::cmd("DELEX")
            .arg(&key)
            .arg("IFEQ")
            .arg(token)
            .query::<redis::Value>(self.kv.conn());
        match reply {
            Ok(redis::Value::Int(n)) => Ok(Ok(n == 1)),
            Ok(other) => Err(format!("expected an integer from DELEX, got {other:?}")),
            // An error reply is the server's answer (no DELEX); anything else fails.
            Err(e) if e.code().is_some() => Ok(Err(error_text(&e))),
            Err(e) => Err(error_text(&e)),
        }
    }

    /// The same release the classic way, on any server with Lua: a compare-and-delete
    /// script (GET = token → DEL).
    pub fn release_by_script(&mut self, lock: &str, token: &str) -> Result<bool, String> {
        let key = self.kv.key(lock);
        Ok(self.int(&["EVAL", RELEASE_SCRIPT, "1", &key, token])? == 1)
    }

    /// The applied increment from INCREX's [value, applied] reply.
    fn applied(&mut self, args: &[&str]) -> Result<i64, String> {
        match self.kv.cmd(args)? {
            redis::Value::Array(items) if items.len() == 2 => match &items[1] {
                redis::Value::Int(n) => Ok(*n),
                other => Err(format!("unexpected INCREX increment {other:?}")),
            },
            other => Err(format!("unexpected INCREX reply {other:?}")),
        }
    }

    fn int(&mut self, args: &[&str]) -> Result<i64, String> {
        match self.kv.cmd(args)? {
            redis::Value::Int(n) => Ok(n),
            other => Err(format!("expected an integer, got {other:?}")),
        }
    }

    pub fn kv(&mut self) -> &mut Kv {
        self.kv
    }
}
