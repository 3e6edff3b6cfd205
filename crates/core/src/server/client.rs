//! One client of the server: Redis's `client` struct, for the parts the core
//! models.
//!
//! A client carries everything that belongs to one connection rather than to the
//! data: the database it selected, the protocol it speaks (RESP2, or RESP3 after
//! `HELLO 3`), its MULTI queue and WATCHed keys, its pub/sub subscriptions, the
//! name and library it announced, its reply mode (CLIENT REPLY), and output
//! waiting to be sent that no command of its own produced (published messages,
//! MONITOR lines). The server owns every client (as Redis's `server.clients`), so
//! a command of one client can reach another: PUBLISH delivers to subscribers,
//! CLIENT KILL closes a connection, a write invalidates other clients' WATCHes.
//!
//! Left out: authentication users and ACLs (every client is the default user),
//! client-side caching (CLIENT TRACKING), replica and master links.

use std::collections::BTreeSet;
use std::time::Instant;

use crate::reply::{Protocol, Reply};

/// A client's id: CLIENT ID, unique for the server's lifetime.
pub type ClientId = u64;

/// Where a client comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientKind {
    /// A connection through a transport (the listener): it may block, and gets
    /// pushed messages.
    Connection,
    /// A caller in the same process (tests, in-process labs): blocking commands
    /// answer at once, as they do inside MULTI.
    InProcess,
}

/// How a transport describes a new connection.
#[derive(Clone, Debug)]
pub struct ConnectInfo {
    pub kind: ClientKind,
    /// `ip:port` of the peer, and of our side, as CLIENT LIST shows them.
    pub addr: String,
    pub laddr: String,
}

impl ConnectInfo {
    pub fn in_process() -> ConnectInfo {
        ConnectInfo {
            kind: ClientKind::InProcess,
            addr: "127.0.0.1:0".into(),
            laddr: "127.0.0.1:0".into(),
        }
    }
}

/// CLIENT REPLY ON | OFF | SKIP.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ReplyMode {
    #[default]
    On,
    Off,
    /// Skip the reply of the next command only.
    SkipNext,
    /// Set while the command after SKIP runs.
    Skipping,
}

impl ReplyMode {
    /// Whether the reply of the command that just ran is sent, moving SKIP on:
    /// CLIENT REPLY SKIP itself is not answered, and neither is the next command.
    pub fn take_turn(&mut self) -> bool {
        match *self {
            ReplyMode::On => true,
            ReplyMode::Off => false,
            ReplyMode::SkipNext => {
                *self = ReplyMode::Skipping;
                false
            }
            ReplyMode::Skipping => {
                *self = ReplyMode::On;
                false
            }
        }
    }
}

/// The id of the client scripts run their `redis.call`s as (Redis's Lua client).
pub const SCRIPT_CLIENT_ID: ClientId = u64::MAX;

/// A MULTI in progress.
#[derive(Debug, Default)]
pub struct MultiState {
    pub queued: Vec<Vec<Vec<u8>>>,
    /// A command could not be queued: EXEC answers EXECABORT.
    pub dirty: bool,
    /// Every queued command is read-only (EXEC of such a transaction counts as a
    /// read in the stats and never needs the write path).
    pub has_writes: bool,
    /// A queued command may grow memory (DENYOOM): over `maxmemory`, EXEC is
    /// refused as that command would be (`mstate.cmd_flags`).
    pub has_denyoom: bool,
}

/// A key this client WATCHes: its database and name (what happened to it since
/// is in that database's [`crate::watch::Watches`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Watched {
    pub db: usize,
    pub key: Vec<u8>,
}

pub struct Client {
    pub id: ClientId,
    pub kind: ClientKind,
    pub addr: String,
    pub laddr: String,
    /// The selected database (SELECT).
    pub db: usize,
    pub protocol: Protocol,
    pub name: Option<String>,
    pub lib_name: Option<String>,
    pub lib_ver: Option<String>,
    pub created: Instant,
    /// When the client's last command ran (or was refused or queued).
    pub last_interaction: super::clock::Micros,
    /// Full name of the last command (`client|list`), for CLIENT LIST's `cmd=`.
    pub last_command: &'static str,
    pub multi: Option<MultiState>,
    pub watched: Vec<Watched>,
    pub channels: BTreeSet<Vec<u8>>,
    pub patterns: BTreeSet<Vec<u8>>,
    /// SSUBSCRIBE's shard channels.
    pub shard_channels: BTreeSet<Vec<u8>>,
    pub reply_mode: ReplyMode,
    pub no_evict: bool,
    pub no_touch: bool,
    pub monitor: bool,
    /// Waiting in a blocking command (BLPOP, BZPOPMIN, ...).
    pub blocked: bool,
    /// QUIT or CLIENT KILL: close once the pending output is written.
    pub close_requested: bool,
    /// Output no command of this client produced (published messages, MONITOR
    /// lines), already encoded in its protocol, waiting for the transport.
    pub pending: Vec<u8>,
    /// How many frames `pending` holds.
    pub pending_messages: usize,
    /// Messages this client received from its own running command (a PUBLISH to
    /// a channel it listens to, a keyspace notification): Redis sends them after
    /// the command's reply (`server.pending_push_messages`).
    pub deferred: Vec<u8>,
}

impl Client {
    pub fn new(id: ClientId, info: ConnectInfo) -> Client {
        let now = Instant::now();
        Client {
            id,
            kind: info.kind,
            addr: info.addr,
            laddr: info.laddr,
            db: 0,
            protocol: Protocol::Resp2,
            name: None,
            lib_name: None,
            lib_ver: None,
            created: now,
            last_interaction: super::clock::now(),
            last_command: "NULL",
            multi: None,
            watched: Vec::new(),
            channels: BTreeSet::new(),
            patterns: BTreeSet::new(),
            shard_channels: BTreeSet::new(),
            reply_mode: ReplyMode::On,
            no_evict: false,
            no_touch: false,
            monitor: false,
            blocked: false,
            close_requested: false,
            pending: Vec::new(),
            pending_messages: 0,
            deferred: Vec::new(),
        }
    }

    /// Number of channel and pattern subscriptions (what (P)(UN)SUBSCRIBE's
    /// frames count; shard channels are counted apart).
    pub fn subscriptions(&self) -> usize {
        self.channels.len() + self.patterns.len()
    }

    /// Redis's CLIENT_PUBSUB: in subscribed mode (RESP2 then allows only the
    /// subscription commands, PING, QUIT and RESET).
    pub fn in_pubsub_mode(&self) -> bool {
        self.subscriptions() + self.shard_channels.len() > 0
    }

    pub fn can_block(&self) -> bool {
        self.kind == ClientKind::Connection
    }

    /// Queues a frame outside of any reply (a published message, a MONITOR line).
    pub fn push(&mut self, frame: &Reply) {
        frame.encode(&mut self.pending, self.protocol);
        self.pending_messages += 1;
    }

    /// Takes the output waiting for the transport (messages its own commands
    /// produced last).
    pub fn take_pending(&mut self) -> Vec<u8> {
        self.pending_messages = 0;
        let mut out = std::mem::take(&mut self.pending);
        out.append(&mut self.deferred);
        out
    }
}
