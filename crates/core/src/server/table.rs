//! The command table: what every command is, in one place.
//!
//! Redis keeps one `redisCommand` per command (generated from its
//! `src/commands/*.json`): name, arity, flags, key positions, documentation, and
//! the subcommands of container commands such as CONFIG or CLIENT. Every decision
//! `processCommand` takes before running a command reads that entry: is it known,
//! is the argument count right, may it run in subscribed mode, is it queued by
//! MULTI, does it write (so WATCH must notice), may a script call it. The core
//! does the same with [`CommandSpec`]: each family module registers its rows, and
//! [`lookup`] finds them once per call (by name, ignoring ASCII case, without
//! allocating, FNV-hashed: the names are a fixed set). The index numbers every
//! row and subcommand with a statistics slot and its full name
//! ([`CommandSpec::slot`], [`CommandSpec::fullname`]), as Redis keeps a
//! command's counters in its `redisCommand`: counting a call costs no hash.
//! COMMAND INFO/DOCS/LIST/COUNT/GETKEYS are generated from here.
//!
//! How this differs from Redis's table: key positions are the legacy
//! `(first, last, step)` triple plus a "movable keys" flag (Redis 7 also has
//! key-specs with begin-search/find-keys rules; the triple answers COMMAND
//! GETKEYS for every command the core has, with per-command code for the movable
//! ones). Documentation is one summary line and one syntax line per command (the
//! syntax is parsed into COMMAND DOCS arguments by [`crate::server::docs`]).

use std::collections::HashMap;
use std::sync::OnceLock;

use super::client::Client;
use super::Server;
use crate::commands::Args;
use crate::reply::{ErrorText, Reply};

/// What a command returns: its reply, or the error reply it stopped with (so
/// handlers can use `?`).
pub type CmdResult = Result<Reply, Reply>;

/// A command that needs only the server (the keyspace, config, ...).
pub type ServerFn = fn(&mut Server, &Args) -> CmdResult;
/// A command that reads or changes its own client (SELECT, MULTI, SUBSCRIBE,
/// CLIENT SETNAME, HELLO, ...).
pub type ClientFn = fn(&mut Server, &mut Client, &Args) -> CmdResult;
/// A handler still written in the older style (errors as `Ok`-less replies);
/// being converted family by family.
pub type LegacyFn = fn(&mut Server, &Args) -> Reply;

#[derive(Clone, Copy)]
pub enum Handler {
    Server(ServerFn),
    Client(ClientFn),
    Legacy(LegacyFn),
    /// A container command (CONFIG, CLIENT, OBJECT, ...): the work is done by the
    /// subcommand's own row.
    Container,
}

/// Command flags, as Redis's `CMD_*` (the names COMMAND INFO prints).
pub mod flags {
    pub const WRITE: u32 = 1 << 0;
    pub const READONLY: u32 = 1 << 1;
    pub const DENYOOM: u32 = 1 << 2;
    pub const ADMIN: u32 = 1 << 3;
    pub const PUBSUB: u32 = 1 << 4;
    pub const NOSCRIPT: u32 = 1 << 5;
    pub const BLOCKING: u32 = 1 << 6;
    pub const LOADING: u32 = 1 << 7;
    pub const STALE: u32 = 1 << 8;
    pub const SKIP_MONITOR: u32 = 1 << 9;
    pub const SKIP_SLOWLOG: u32 = 1 << 10;
    pub const FAST: u32 = 1 << 11;
    pub const NO_AUTH: u32 = 1 << 12;
    pub const MAY_REPLICATE: u32 = 1 << 13;
    pub const NO_MANDATORY_KEYS: u32 = 1 << 14;
    pub const NO_MULTI: u32 = 1 << 15;
    pub const MOVABLE_KEYS: u32 = 1 << 16;
    pub const ALLOW_BUSY: u32 = 1 << 17;
    pub const NO_ASYNC_LOADING: u32 = 1 << 18;
    /// DEBUG, MODULE: refused unless `enable-debug-command` allows them.
    pub const PROTECTED: u32 = 1 << 19;
    /// Allowed on a RESP2 connection in subscribed mode (not a Redis flag: Redis
    /// lists those commands by handler in `processCommand`).
    pub const OK_SUBSCRIBED: u32 = 1 << 24;
    /// MULTI/EXEC/DISCARD/WATCH/QUIT/RESET: run at once even inside MULTI (Redis
    /// also lists these by handler).
    pub const TX_CONTROL: u32 = 1 << 25;

    /// `(bit, name)` in the order Redis's COMMAND INFO lists flags.
    pub const NAMES: &[(u32, &str)] = &[
        (WRITE, "write"),
        (READONLY, "readonly"),
        (DENYOOM, "denyoom"),
        (ADMIN, "admin"),
        (PUBSUB, "pubsub"),
        (NOSCRIPT, "noscript"),
        (BLOCKING, "blocking"),
        (LOADING, "loading"),
        (STALE, "stale"),
        (SKIP_MONITOR, "skip_monitor"),
        (SKIP_SLOWLOG, "skip_slowlog"),
        (FAST, "fast"),
        (NO_AUTH, "no_auth"),
        // MAY_REPLICATE is not listed: Redis hides it on purpose.
        (NO_MANDATORY_KEYS, "no_mandatory_keys"),
        (NO_ASYNC_LOADING, "no_async_loading"),
        (NO_MULTI, "no_multi"),
        (MOVABLE_KEYS, "movablekeys"),
        (ALLOW_BUSY, "allow_busy"),
    ];
}

/// The command groups of COMMAND DOCS (and the ACL category each implies).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Group {
    Generic,
    String,
    List,
    Set,
    SortedSet,
    Hash,
    PubSub,
    Transactions,
    Connection,
    Server,
    Scripting,
    HyperLogLog,
    Cluster,
    Geo,
    Bitmap,
}

impl Group {
    /// The name COMMAND DOCS prints.
    pub fn name(self) -> &'static str {
        match self {
            Group::Generic => "generic",
            Group::String => "string",
            Group::List => "list",
            Group::Set => "set",
            Group::SortedSet => "sorted-set",
            Group::Hash => "hash",
            Group::PubSub => "pubsub",
            Group::Transactions => "transactions",
            Group::Connection => "connection",
            Group::Server => "server",
            Group::Scripting => "scripting",
            Group::HyperLogLog => "hyperloglog",
            Group::Cluster => "cluster",
            Group::Geo => "geo",
            Group::Bitmap => "bitmap",
        }
    }

    /// The ACL categories a command of this group names explicitly unless its
    /// row says otherwise (`@keyspace` for generic commands, as in Redis's
    /// command files; server, pub/sub and cluster commands name none).
    pub fn acl_categories(self) -> &'static [&'static str] {
        match self {
            Group::Generic => &["@keyspace"],
            Group::String => &["@string"],
            Group::List => &["@list"],
            Group::Set => &["@set"],
            Group::SortedSet => &["@sortedset"],
            Group::Hash => &["@hash"],
            Group::Transactions => &["@transaction"],
            Group::Connection => &["@connection"],
            Group::Scripting => &["@scripting"],
            Group::HyperLogLog => &["@hyperloglog"],
            Group::Geo => &["@geo"],
            Group::Bitmap => &["@bitmap"],
            Group::Server | Group::PubSub | Group::Cluster => &[],
        }
    }
}

/// Redis's ACL categories in the order of its `ACLCommandCategories` table (the
/// order COMMAND INFO prints a command's categories in).
const ACL_ORDER: &[&str] = &[
    "@keyspace",
    "@read",
    "@write",
    "@set",
    "@sortedset",
    "@list",
    "@hash",
    "@string",
    "@bitmap",
    "@hyperloglog",
    "@geo",
    "@stream",
    "@pubsub",
    "@admin",
    "@fast",
    "@slow",
    "@blocking",
    "@dangerous",
    "@connection",
    "@transaction",
    "@scripting",
];

/// Where the keys are: `argv[first..=last]` every `step` (a negative `last`
/// counts from the end), Redis's legacy key triple. `first == 0`: no keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Keys {
    pub first: i32,
    pub last: i32,
    pub step: i32,
}

pub const NO_KEYS: Keys = Keys {
    first: 0,
    last: 0,
    step: 0,
};

/// One command (or one subcommand of a container command).
#[derive(Clone, Copy)]
pub struct CommandSpec {
    /// Lower case; a subcommand's own name (`get` for `config|get`).
    pub name: &'static str,
    /// Redis's rule: positive means exactly this many arguments (the name
    /// included), negative means at least `-arity`.
    pub arity: i32,
    pub handler: Handler,
    pub flags: u32,
    pub keys: Keys,
    pub group: Group,
    pub since: &'static str,
    pub summary: &'static str,
    /// The arguments after the name, in the docs' syntax (`key [NX | XX] score
    /// member [score member ...]`).
    pub syntax: &'static str,
    pub subcommands: &'static [CommandSpec],
    /// The ACL categories the row names explicitly (Redis's `acl_categories`);
    /// `None`: its group's. The implicit ones (`@write`, `@read`, `@fast`/`@slow`,
    /// `@admin @dangerous`, `@pubsub`, `@blocking`) follow from the flags.
    pub acl: Option<&'static [&'static str]>,
    /// The row's place in the server's per-command statistics (INFO
    /// commandstats), given by the index [`lookup`] reads: a row reached
    /// through the table counts its calls without hashing its name.
    /// [`NO_SLOT`] in a family's own rows.
    pub slot: u16,
    /// The full name (`config|get` for a subcommand), set by the index.
    pub fullname: &'static str,
}

/// The [`CommandSpec::slot`] of a row the index has not numbered.
pub const NO_SLOT: u16 = u16::MAX;

impl CommandSpec {
    /// A command whose errors are `Err` replies.
    pub const fn new(name: &'static str, arity: i32, handler: ServerFn) -> CommandSpec {
        CommandSpec::with_handler(name, arity, Handler::Server(handler))
    }

    /// A command that works on its own client.
    pub const fn client(name: &'static str, arity: i32, handler: ClientFn) -> CommandSpec {
        CommandSpec::with_handler(name, arity, Handler::Client(handler))
    }

    /// A command in the older style (being converted).
    pub const fn legacy(name: &'static str, arity: i32, handler: LegacyFn) -> CommandSpec {
        CommandSpec::with_handler(name, arity, Handler::Legacy(handler))
    }

    /// A container command (CONFIG, CLIENT, ...) and its subcommands.
    pub const fn container(name: &'static str, subcommands: &'static [CommandSpec]) -> CommandSpec {
        let mut spec = CommandSpec::with_handler(name, -2, Handler::Container);
        spec.subcommands = subcommands;
        spec.acl = Some(&[]);
        spec
    }

    const fn with_handler(name: &'static str, arity: i32, handler: Handler) -> CommandSpec {
        CommandSpec {
            name,
            arity,
            handler,
            flags: 0,
            keys: NO_KEYS,
            group: Group::Generic,
            since: "1.0.0",
            summary: "",
            syntax: "",
            subcommands: &[],
            acl: None,
            slot: NO_SLOT,
            fullname: name,
        }
    }

    /// The ACL categories this row names explicitly (instead of its group's).
    pub const fn acl(mut self, categories: &'static [&'static str]) -> CommandSpec {
        self.acl = Some(categories);
        self
    }

    /// The subcommands of a command that also runs on its own (COMMAND).
    pub const fn subs(mut self, subcommands: &'static [CommandSpec]) -> CommandSpec {
        self.subcommands = subcommands;
        self
    }

    /// Every ACL category of the row, as COMMAND INFO lists them: the explicit
    /// ones (the row's, else those of `group`, the group it is documented under),
    /// then Redis's implicit ones (`setImplicitACLCategories`).
    pub fn acl_categories(&self, group: Group) -> Vec<&'static str> {
        let mut cats: Vec<&'static str> = self.acl.unwrap_or(group.acl_categories()).to_vec();
        let mut add = |c: &'static str| {
            if !cats.contains(&c) {
                cats.push(c);
            }
        };
        if self.has(flags::WRITE) {
            add("@write");
        }
        if self.has(flags::READONLY)
            && !self
                .acl
                .unwrap_or(group.acl_categories())
                .contains(&"@scripting")
        {
            add("@read");
        }
        if self.has(flags::ADMIN) {
            add("@admin");
            add("@dangerous");
        }
        if self.has(flags::PUBSUB) {
            add("@pubsub");
        }
        if self.has(flags::FAST) {
            add("@fast");
        }
        if self.has(flags::BLOCKING) {
            add("@blocking");
        }
        if !self.has(flags::FAST) {
            add("@slow");
        }
        // COMMAND INFO lists them in the order of Redis's category table.
        cats.sort_by_key(|c| ACL_ORDER.iter().position(|o| o == c).unwrap_or(usize::MAX));
        cats
    }

    pub const fn flags(mut self, flags: u32) -> CommandSpec {
        self.flags = flags;
        self
    }

    /// Keys at `first..=last` every `step`.
    pub const fn keys(mut self, first: i32, last: i32, step: i32) -> CommandSpec {
        self.keys = Keys { first, last, step };
        self
    }

    pub const fn group(mut self, group: Group) -> CommandSpec {
        self.group = group;
        self
    }

    /// The release that added it, one line on what it does, and its syntax.
    pub const fn doc(
        mut self,
        since: &'static str,
        summary: &'static str,
        syntax: &'static str,
    ) -> CommandSpec {
        self.since = since;
        self.summary = summary;
        self.syntax = syntax;
        self
    }

    pub fn has(&self, flag: u32) -> bool {
        self.flags & flag != 0
    }

    /// A command with subcommands (CONFIG, CLIENT, and COMMAND, which also
    /// answers on its own).
    pub fn is_container(&self) -> bool {
        !self.subcommands.is_empty()
    }

    /// Whether `argc` arguments satisfy the arity.
    pub fn arity_ok(&self, argc: usize) -> bool {
        let argc = argc as i64;
        let arity = self.arity as i64;
        if arity > 0 {
            argc == arity
        } else {
            argc >= -arity
        }
    }

    /// Looks up a subcommand by name, ignoring case.
    pub fn subcommand(&self, name: &[u8]) -> Option<&'static CommandSpec> {
        self.subcommands
            .iter()
            .find(|c| c.name.as_bytes().eq_ignore_ascii_case(name))
    }
}

/// A family's rows, with the group they belong to (so each row need not say it).
pub struct Family {
    pub group: Group,
    pub commands: &'static [CommandSpec],
}

/// The command table as [`lookup`] reads it: every command by lower-case
/// name (copies of the families' rows, numbered with their statistics slot;
/// a container's subcommands are numbered copies too), and the full name of
/// each slot.
struct Index {
    /// Keyed by the name's bytes, so that a lookup needs no UTF-8 check.
    by_name: HashMap<&'static [u8], CommandSpec, BuildFnv>,
    slot_names: Vec<&'static str>,
    slot_by_name: HashMap<&'static str, u16, BuildFnv>,
}

fn index() -> &'static Index {
    static INDEX: OnceLock<Index> = OnceLock::new();
    INDEX.get_or_init(|| {
        let mut rows: Vec<CommandSpec> = Vec::new();
        for family in crate::commands::FAMILIES {
            for spec in family.commands {
                let mut spec = *spec;
                // A family's group applies unless the row names its own.
                if spec.group == Group::Generic {
                    spec.group = family.group;
                }
                rows.push(spec);
            }
        }
        #[cfg(test)]
        rows.push(tests::PANICS);
        // Slots in name order, so that a run numbers them the same way.
        rows.sort_by_key(|c| c.name);
        let mut by_name = HashMap::with_hasher(BuildFnv);
        let mut slot_names = Vec::new();
        let mut number = |spec: &mut CommandSpec, fullname: &'static str| {
            spec.slot = u16::try_from(slot_names.len()).expect("fewer than 65535 commands");
            spec.fullname = fullname;
            slot_names.push(fullname);
        };
        for mut spec in rows {
            let name = spec.name;
            number(&mut spec, name);
            if !spec.subcommands.is_empty() {
                let mut subs = spec.subcommands.to_vec();
                for sub in &mut subs {
                    let full: &'static str =
                        Box::leak(format!("{}|{}", spec.name, sub.name).into_boxed_str());
                    number(sub, full);
                }
                spec.subcommands = Box::leak(subs.into_boxed_slice());
            }
            let old = by_name.insert(spec.name.as_bytes(), spec);
            assert!(old.is_none(), "command {} registered twice", spec.name);
        }
        let slot_by_name = slot_names
            .iter()
            .enumerate()
            .map(|(i, n)| (*n, i as u16))
            .collect();
        Index {
            by_name,
            slot_names,
            slot_by_name,
        }
    })
}

/// FNV-1a for the index's keys: command names are a fixed set of short
/// strings, so the table needs no keyed hash (SipHash cost more than the
/// rest of a lookup).
#[derive(Clone, Copy, Default)]
struct BuildFnv;

struct Fnv(u64);

impl std::hash::BuildHasher for BuildFnv {
    type Hasher = Fnv;
    fn build_hasher(&self) -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl std::hash::Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x0100_0000_01b3);
        }
    }
    /// A slice's length prefix in one step, not eight (the default writes
    /// its bytes).
    fn write_usize(&mut self, n: usize) {
        self.0 = (self.0 ^ n as u64).wrapping_mul(0x0100_0000_01b3);
    }
}

/// The command named `name` (any ASCII case).
pub fn lookup(name: &[u8]) -> Option<&'static CommandSpec> {
    // Command names are short: lower-case into a stack buffer, no allocation.
    let mut buf = [0u8; 32];
    if name.len() > buf.len() {
        return None;
    }
    for (b, c) in buf.iter_mut().zip(name) {
        *b = c.to_ascii_lowercase();
    }
    index().by_name.get(&buf[..name.len()])
}

/// Every command, sorted by name.
pub fn all() -> Vec<&'static CommandSpec> {
    let mut v: Vec<&'static CommandSpec> = index().by_name.values().collect();
    v.sort_by_key(|c| c.name);
    v
}

/// How many statistics slots the table numbered.
pub fn slots() -> usize {
    index().slot_names.len()
}

/// The full name of statistics slot `slot`.
pub fn slot_name(slot: u16) -> Option<&'static str> {
    index().slot_names.get(slot as usize).copied()
}

/// The statistics slot of a full command name (`get`, `config|get`).
pub fn slot_of(fullname: &str) -> Option<u16> {
    index().slot_by_name.get(fullname).copied()
}

/// What looking `argv` up found.
pub enum Found {
    /// A command or a subcommand, with its full name (`config|get`).
    Command(&'static CommandSpec, &'static str),
    /// No such command.
    Unknown,
    /// A container command with an unknown subcommand.
    UnknownSubcommand(&'static CommandSpec),
}

/// `lookupCommand`: the command, or the subcommand of a container command.
pub fn resolve(argv: &[Vec<u8>]) -> Found {
    let Some(spec) = argv.first().and_then(|n| lookup(n)) else {
        return Found::Unknown;
    };
    if !spec.is_container() || argv.len() < 2 {
        return Found::Command(spec, spec.name);
    }
    match spec.subcommand(&argv[1]) {
        Some(sub) => Found::Command(sub, sub.fullname),
        None => Found::UnknownSubcommand(spec),
    }
}

/// `addReplySubcommandSyntaxError`: a container command whose own code finds
/// no subcommand of that name (or arity) answers with its bytes as `%.128s`
/// prints them.
pub fn subcommand_syntax_error(container: &str, sub: &[u8]) -> Reply {
    Reply::Error(ErrorText::naming(
        "ERR unknown subcommand or wrong number of arguments for '",
        super::c_prefix(sub, 128),
        &format!("'. Try {container} HELP."),
    ))
}

/// The reply of a container command called with a subcommand it lacks.
pub fn unknown_subcommand_error(container: &CommandSpec, sub: &[u8]) -> Reply {
    Reply::Error(ErrorText::naming(
        "ERR unknown subcommand '",
        super::c_prefix(sub, 128),
        &format!("'. Try {} HELP.", container.name.to_ascii_uppercase()),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A command that panics, to prove the server survives one (unit tests only).
    pub(super) const PANICS: CommandSpec = CommandSpec::new("test-panic", -1, |_, a| {
        let v: Vec<u8> = Vec::new();
        Ok(Reply::bulk([v[a.len() + 7]]))
    });

    /// Every row and subcommand the lookup finds has its own statistics slot
    /// and full name, and the slot leads back to that name.
    #[test]
    fn every_row_is_numbered_once() {
        let mut seen = std::collections::HashSet::new();
        for spec in all() {
            let rows = std::iter::once((spec, spec.name.to_string())).chain(
                spec.subcommands
                    .iter()
                    .map(|sub| (sub, format!("{}|{}", spec.name, sub.name))),
            );
            for (row, full) in rows {
                assert_ne!(row.slot, NO_SLOT, "{full}");
                assert_eq!(row.fullname, full);
                assert_eq!(slot_name(row.slot), Some(row.fullname));
                assert_eq!(slot_of(&full), Some(row.slot));
                assert!(seen.insert(row.slot), "{full}: slot {} twice", row.slot);
            }
        }
        assert_eq!(seen.len(), slots());
        let Found::Command(sub, full) = resolve(&[b"CoNfIg".to_vec(), b"GeT".to_vec()]) else {
            panic!("config get not found");
        };
        assert_eq!(
            (sub.name, full, sub.fullname),
            ("get", "config|get", "config|get")
        );
        assert!(lookup(b"SET").is_some_and(|c| c.name == "set"));
        assert!(lookup(b"nosuchcommand").is_none());
        assert!(lookup(&[b'a'; 40]).is_none());
    }

    #[test]
    fn a_panicking_command_answers_an_error_and_the_server_goes_on() {
        let mut s = Server::new();
        s.cmd(&["SET", "k", "v"]);
        let reply = s.cmd(&["TEST-PANIC", "x"]);
        let Reply::Error(text) = reply else {
            panic!("{reply:?}")
        };
        assert!(
            text.starts_with("ERR internal error in 'test-panic'"),
            "{text}"
        );
        assert_eq!(s.stats.panics, 1);
        assert_eq!(s.cmd(&["GET", "k"]), Reply::bulk("v"));
        // Inside MULTI too: the transaction's other commands run.
        s.cmd(&["MULTI"]);
        s.cmd(&["TEST-PANIC"]);
        s.cmd(&["INCR", "n"]);
        let Reply::Array(replies) = s.cmd(&["EXEC"]) else {
            panic!("EXEC")
        };
        assert!(replies[0].is_error());
        assert_eq!(replies[1], Reply::Integer(1));
    }

    #[test]
    fn every_command_is_found_in_any_case_and_names_are_unique() {
        let all = all();
        assert!(all.len() > 50);
        for spec in &all {
            assert!(lookup(spec.name.as_bytes()).is_some());
            assert!(lookup(spec.name.to_ascii_uppercase().as_bytes()).is_some());
            assert!(spec.arity != 0, "{} has arity 0", spec.name);
        }
        assert!(lookup(b"no-such-command").is_none());
        assert!(lookup(&[b'x'; 100]).is_none());
    }

    #[test]
    fn writes_and_reads_are_flagged() {
        for spec in all() {
            if spec.is_container() {
                continue;
            }
            assert!(
                !(spec.has(flags::WRITE) && spec.has(flags::READONLY)),
                "{} is both write and readonly",
                spec.name
            );
        }
    }
}
