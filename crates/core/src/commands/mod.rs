//! The command layer: `argv` in, [`Reply`] out.
//!
//! [`Server`] owns a keyspace and executes one command at a time, like Redis's main
//! thread. Lookup is by lower-cased name in a table that also carries Redis's arity
//! rule (a positive arity is exact, a negative one is a minimum), so argument-count
//! errors read exactly like Redis's.

/// `tri!(expr)`: the value of an `Ok`, or return the `Err` reply from the command.
/// Defined before the family modules so every one of them can use it.
macro_rules! tri {
    ($e:expr) => {
        match $e {
            Ok(v) => v,
            Err(reply) => return reply,
        }
    };
}

mod args;
mod bitfield;
mod bitmap;
mod cluster;
mod counter;
mod generic;
mod geo;
mod geo_search;
mod hash;
mod hll;
mod introspection;
mod scripting;
mod set;
mod string;
mod string_args;
mod zset;
mod zset_setops;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::keyspace::{ExpireCycleStats, Keyspace};
use crate::reply::{errors, Reply};

pub use args::Args;

type Handler = fn(&mut Server, &Args) -> Reply;

/// How often Redis runs its active expire cycle (`hz 10`).
pub const ACTIVE_EXPIRE_PERIOD: std::time::Duration = std::time::Duration::from_millis(100);
/// The time one cycle may take: 25% of the period (`ACTIVE_EXPIRE_CYCLE_SLOW_TIME_PERC`).
pub const ACTIVE_EXPIRE_BUDGET: std::time::Duration = std::time::Duration::from_millis(25);

/// One entry of a command table: the lower-case name, Redis's arity and the handler.
pub struct CommandSpec {
    pub name: &'static str,
    pub arity: i32,
    pub handler: Handler,
}

/// Shorthand for building the tables.
const fn spec(name: &'static str, arity: i32, handler: Handler) -> CommandSpec {
    CommandSpec {
        name,
        arity,
        handler,
    }
}

/// Every family's table; each family module owns its own list.
const TABLES: &[&[CommandSpec]] = &[
    generic::COMMANDS,
    zset::COMMANDS,
    zset_setops::COMMANDS,
    geo::COMMANDS,
    hash::COMMANDS,
    introspection::COMMANDS,
    string::COMMANDS,
    counter::COMMANDS,
    scripting::COMMANDS,
    cluster::COMMANDS,
    bitmap::COMMANDS,
    bitfield::COMMANDS,
    set::COMMANDS,
    hll::COMMANDS,
];

fn lookup(lower_name: &str) -> Option<&'static CommandSpec> {
    TABLES
        .iter()
        .flat_map(|t| t.iter())
        .find(|c| c.name == lower_name)
}

/// What a blocking command waits for: any of `keys` to receive elements, until
/// `timeout_ms` passes (`None`: forever).
#[derive(Clone, Debug, PartialEq)]
pub struct Blocked {
    pub keys: Vec<Vec<u8>>,
    pub timeout_ms: Option<i64>,
}

/// The outcome of a command for a client that is able to block.
#[derive(Clone, Debug, PartialEq)]
pub enum Execution {
    Done(Reply),
    /// Nothing to serve yet: retry the same command when one of the keys changes,
    /// or answer a null array at the timeout.
    Blocked(Blocked),
}

/// The core's server state: a keyspace plus the command table.
pub struct Server {
    pub keyspace: Keyspace,
    /// Set by a blocking command that found nothing, when the caller can block.
    pending_block: Option<Blocked>,
    /// The generator behind random commands (ZRANDMEMBER, HRANDFIELD, skiplist
    /// levels are separate).
    pub rng: ChaCha8Rng,
    /// The Lua state and script cache, created by the first script command.
    /// Taken out while a script runs (the script's `redis.call`s borrow the rest).
    scripting: Option<Box<crate::scripting::Engine>>,
    /// What `PFDEBUG SIMD` reports (Redis on an AVX2 machine starts enabled; the
    /// core has one code path either way).
    pub(crate) hll_simd: bool,
}

impl Default for Server {
    fn default() -> Server {
        Server::with_seed(0)
    }
}

impl Server {
    pub fn new() -> Server {
        Server::default()
    }

    /// A server whose random draws (ZRANDMEMBER, HRANDFIELD) derive from `seed`.
    /// Every dict hashes with the fixed [`crate::dict::DEFAULT_SEED`], where Redis
    /// picks a random one at start-up, so a run of the core repeats exactly.
    pub fn with_seed(seed: u64) -> Server {
        let rng = ChaCha8Rng::seed_from_u64(seed);
        Server {
            keyspace: Keyspace::new(),
            pending_block: None,
            rng,
            scripting: None,
            hll_simd: true,
        }
    }

    /// Executes one command given as raw byte arguments (`argv[0]` is the name).
    pub fn execute(&mut self, argv: &[Vec<u8>]) -> Reply {
        let Some(name) = argv.first() else {
            return Reply::error("ERR empty command");
        };
        let lower = String::from_utf8_lossy(name).to_ascii_lowercase();
        let Some(spec) = lookup(&lower) else {
            return Reply::error(unknown_command(argv));
        };
        let argc = argv.len() as i32;
        if (spec.arity > 0 && argc != spec.arity) || argc < -spec.arity {
            return Reply::error(errors::arity(spec.name));
        }
        // Anything that may write marks the WATCHed keys it touches as modified.
        let writes = !is_read_only(spec.name);
        if writes {
            self.keyspace.watches.begin_write();
        }
        let reply = (spec.handler)(self, &Args::new(argv));
        if writes {
            self.keyspace.watches.end_write();
        }
        reply
    }

    /// Whether `argv` could be queued inside MULTI: a known command with a valid
    /// number of arguments (Redis rejects the rest at queue time).
    pub fn check_command(&self, argv: &[Vec<u8>]) -> Result<(), Reply> {
        let name = String::from_utf8_lossy(&argv[0]).to_ascii_lowercase();
        let Some(spec) = lookup(&name) else {
            return Err(Reply::error(unknown_command(argv)));
        };
        let argc = argv.len() as i32;
        if (spec.arity > 0 && argc != spec.arity) || argc < -spec.arity {
            return Err(Reply::error(errors::arity(spec.name)));
        }
        Ok(())
    }

    /// Executes one command for a client that can block (the listener's). In-process
    /// callers use [`Server::execute`], where a blocking command with nothing to
    /// serve answers a null array at once, as Redis does inside MULTI.
    pub fn execute_or_block(&mut self, argv: &[Vec<u8>]) -> Execution {
        self.pending_block = None;
        let reply = self.execute(argv);
        match self.pending_block.take() {
            Some(blocked) => Execution::Blocked(blocked),
            None => Execution::Done(reply),
        }
    }

    /// One run of Redis's slow active expire cycle (`activeExpireCycle`): deletes
    /// keys whose TTL passed even if nobody reads them again. Redis runs it 10
    /// times a second with a budget of 25% of that period; a caller that owns the
    /// server (the listener's executor) calls this about every
    /// [`ACTIVE_EXPIRE_PERIOD`].
    pub fn active_expire_cycle(&mut self) -> ExpireCycleStats {
        self.keyspace
            .active_expire_cycle(crate::keyspace::now_ms(), ACTIVE_EXPIRE_BUDGET)
    }

    /// Executes a command for a script's `redis.call`. A script's client cannot
    /// block (Redis's `CLIENT_DENY_BLOCKING`): a blocking command with nothing to
    /// serve has already answered a null array, and must not block the caller of
    /// the script.
    pub(crate) fn execute_in_script(&mut self, argv: &[Vec<u8>]) -> Reply {
        let reply = self.execute(argv);
        self.pending_block = None;
        reply
    }

    /// Called by a blocking command that found nothing to serve.
    pub(crate) fn block(&mut self, keys: Vec<Vec<u8>>, timeout_ms: Option<i64>) {
        self.pending_block = Some(Blocked { keys, timeout_ms });
    }

    /// Convenience for tests and in-process use: string arguments.
    pub fn call(&mut self, argv: &[&str]) -> Reply {
        let owned: Vec<Vec<u8>> = argv.iter().map(|a| a.as_bytes().to_vec()).collect();
        self.execute(&owned)
    }

    /// Names of all commands the core implements, lower case.
    pub fn command_names() -> impl Iterator<Item = &'static str> {
        TABLES.iter().flat_map(|t| t.iter()).map(|c| c.name)
    }
}

/// Commands that never modify a key. Everything else counts as a write for WATCH,
/// so a command added later errs on the side of aborting a transaction rather than
/// letting a lost update through.
const READ_ONLY: &[&str] = &[
    "ping",
    "echo",
    "select",
    "client",
    "command",
    "info",
    "dbsize",
    "exists",
    "type",
    "ttl",
    "pttl",
    "expiretime",
    "pexpiretime",
    "object",
    "memory",
    "get",
    "mget",
    "strlen",
    "getrange",
    "substr",
    "digest",
    "zscore",
    "zmscore",
    "zcard",
    "zcount",
    "zlexcount",
    "zrank",
    "zrevrank",
    "zrange",
    "zrevrange",
    "zrangebyscore",
    "zrevrangebyscore",
    "zrangebylex",
    "zrevrangebylex",
    "zrandmember",
    "zunion",
    "zinter",
    "zdiff",
    "zintercard",
    "hget",
    "hlen",
    "hexists",
    "hgetall",
    "hrandfield",
    "getbit",
    "bitcount",
    "bitpos",
    "bitfield_ro",
    "scard",
    "sismember",
    "smembers",
    "sintercard",
    "sinter",
    "eval_ro",
    "evalsha_ro",
    "script",
    "cluster",
    "geopos",
    "geohash",
    "geodist",
    "geosearch",
    "georadius_ro",
    "georadiusbymember_ro",
];

fn is_read_only(name: &str) -> bool {
    READ_ONLY.contains(&name)
}

/// Redis's wording: the name, then up to ~128 bytes of quoted arguments.
fn unknown_command(argv: &[Vec<u8>]) -> String {
    let name = String::from_utf8_lossy(&argv[0]);
    let mut text = format!("ERR unknown command '{}'", truncate(&name, 128));
    if argv.len() >= 2 {
        let mut listed = String::new();
        for arg in &argv[1..] {
            if listed.len() >= 128 {
                break;
            }
            let room = 128 - listed.len();
            listed.push_str(&format!(
                "'{}' ",
                truncate(&String::from_utf8_lossy(arg), room)
            ));
        }
        text.push_str(&format!(", with args beginning with: {listed}"));
    }
    text.replace(['\r', '\n'], " ")
}

/// Redis's wording for a subcommand of a container command (MEMORY, OBJECT,
/// CLUSTER) that it does not know (`%.128s`).
fn unknown_subcommand(a: &Args, container: &str) -> Reply {
    let sub = String::from_utf8_lossy(a.bytes(1));
    let sub = truncate(&sub, 128);
    Reply::error(format!(
        "ERR unknown subcommand '{sub}'. Try {container} HELP."
    ))
}

fn truncate(s: &str, max_bytes: usize) -> &str {
    let mut end = s.len().min(max_bytes);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_commands_and_arity_read_like_redis() {
        let mut s = Server::new();
        assert_eq!(
            s.call(&["NOPE", "a", "b"]),
            Reply::error("ERR unknown command 'NOPE', with args beginning with: 'a' 'b' ")
        );
        assert_eq!(
            s.call(&["nope"]),
            Reply::error("ERR unknown command 'nope'")
        );
        assert_eq!(
            s.call(&["zscore", "k"]),
            Reply::error("ERR wrong number of arguments for 'zscore' command")
        );
    }
}
